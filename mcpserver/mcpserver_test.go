package mcpserver_test

import (
	"context"
	"github.com/memnode/memnode/memory"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/mcpserver"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/search"
)

// session runs the server over pipes against a real replica loaded with the claude-mem
// sample, and returns a connected MCP client session.
func session(t *testing.T) *mcp.ClientSession {
	t.Helper()
	return sessionWith(t, func(m mcpserver.Memory) mcpserver.Memory { return m })
}

// sessionWith is session with the server's Memory wrapped by wrap.
func sessionWith(t *testing.T, wrap func(mcpserver.Memory) mcpserver.Memory) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	rep, err := replica.Open(ctx, replica.Config{Path: filepath.Join(t.TempDir(), "memnode.db"), Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rep.Close() })
	cm, err := importer.OpenClaudeMem(ctx, "../testdata/fixtures/claude-mem/claude-mem-13.25.3-sample.db")
	if err != nil {
		t.Fatal(err)
	}
	var recs []importer.Record
	if err := cm.Each(ctx, func(r importer.Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	cm.Close()
	if _, err := rep.Import(ctx, importer.Batch(recs)); err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(mcpserver.Config{Memory: wrap(search.NewService(rep, search.Config{})), DefaultProject: "billing-api"})
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx, sr, sw) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		sw.Close()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

var idRE = regexp.MustCompile(`(?m)^(?:> )?([0-9A-Z]{6,12}) `)

func TestWorkflow(t *testing.T) {
	cs := session(t)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"__IMPORTANT", "search", "timeline", "get_observations", "save_memory", "forget"} {
		if !names[want] {
			t.Errorf("tool %s missing", want)
		}
	}
	if txt, _ := call(t, cs, "__IMPORTANT", map[string]any{}); !strings.Contains(txt, "NEVER fetch full details without filtering first") {
		t.Errorf("workflow text: %s", txt)
	}

	idx, isErr := call(t, cs, "search", map[string]any{"query": "idempotency", "project": "billing-api"})
	if isErr || !strings.Contains(idx, "Stripe webhook") {
		t.Fatalf("search: %s", idx)
	}
	m := idRE.FindStringSubmatch(idx)
	if m == nil {
		t.Fatalf("no ID in the index:\n%s", idx)
	}
	for _, line := range strings.Split(strings.TrimSpace(idx), "\n")[1:] {
		if len(line) > 400 {
			t.Errorf("index row too long for a compact index (%d bytes): %s", len(line), line)
		}
	}
	tl, isErr := call(t, cs, "timeline", map[string]any{"anchor": m[1], "depth_before": 2, "depth_after": 2})
	if isErr || !strings.Contains(tl, "> "+m[1]) {
		t.Fatalf("timeline: %s", tl)
	}
	full, isErr := call(t, cs, "get_observations", map[string]any{"ids": []string{m[1]}})
	if isErr || !strings.Contains(full, "narrative:") || !strings.Contains(full, "facts:") {
		t.Fatalf("get_observations: %s", full)
	}

	saved, isErr := call(t, cs, "save_memory", map[string]any{"text": "Invoices are archived to S3 after 7 years"})
	if isErr || !strings.Contains(saved, "billing-api") {
		t.Fatalf("save_memory: %s", saved)
	}
	id := regexp.MustCompile(`[0-9A-Z]{26}`).FindString(saved)
	if out, isErr := call(t, cs, "forget", map[string]any{"ids": []string{id}}); isErr || !strings.Contains(out, "1 of 1") {
		t.Fatalf("forget: %s", out)
	}
	if out, _ := call(t, cs, "get_observations", map[string]any{"ids": []string{id}}); !strings.Contains(out, "None of these IDs") {
		t.Fatalf("forgotten note still there: %s", out)
	}

	// scope global: the note belongs to every project.
	g, isErr := call(t, cs, "save_memory", map[string]any{"text": "Use pnpm, never npm", "scope": "global"})
	if isErr || !strings.Contains(g, "as a global note") {
		t.Fatalf("save_memory global: %s", g)
	}
	gid := regexp.MustCompile(`[0-9A-Z]{26}`).FindString(g)
	if out, _ := call(t, cs, "get_observations", map[string]any{"ids": []string{gid}}); !strings.Contains(out, memory.GlobalProject) {
		t.Errorf("the global note is not in project %s: %s", memory.GlobalProject, out)
	}
	if out, isErr := call(t, cs, "save_memory", map[string]any{"text": "x", "scope": "team"}); !isErr || !strings.Contains(out, "scope") {
		t.Errorf("an unknown scope: %s", out)
	}
}

func TestMalformedArgumentsAreToolErrors(t *testing.T) {
	cs := session(t)
	cases := []struct {
		tool string
		args any
		want string
	}{
		{"get_observations", map[string]any{"ids": "not-a-list"}, "ids"},
		{"get_observations", map[string]any{}, "ids"},
		{"search", map[string]any{"limit": "ten"}, "limit"},
		{"search", map[string]any{"type": "files"}, "type"},
		{"search", map[string]any{"since": "last tuesday"}, "since"},
		{"timeline", map[string]any{}, "anchor"},
		{"timeline", map[string]any{"anchor": "nope"}, "nope"},
		{"save_memory", map[string]any{"text": ""}, "empty"},
		{"forget", map[string]any{"ids": 12}, "ids"},
	}
	for _, c := range cases {
		txt, isErr := call(t, cs, c.tool, c.args)
		if !isErr || !strings.Contains(txt, c.want) {
			t.Errorf("%s %v: want a tool error mentioning %q, got isError=%v %q", c.tool, c.args, c.want, isErr, txt)
		}
	}
}
