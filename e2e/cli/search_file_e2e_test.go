package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// TestSearchByFile imports observations that read or modified files into a running node and
// finds them by file through the real binary: `search --file` by path in the project, by
// recorded absolute path and by basename, `search FILENAME` as text, and the MCP search
// tool's file argument (all over the node's HTTP API).
func TestSearchByFile(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	requireSearchCommands(t, in)
	at := int64(1764600000000)
	var lines []string
	add := func(r importer.Record) {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	add(importer.Record{Kind: importer.KindHeader, Header: &importer.Header{Format: importer.Format, Version: importer.FormatVersion, ExportedAt: at}})
	obs := []memory.Observation{
		{Title: "Added leeway to the JWT checks", FilesModified: []string{"internal/auth/middleware.go"}},
		{Title: "Read how tokens are validated", FilesRead: []string{"/home/dev/billing/internal/auth/middleware.go"}},
		{Title: "Reworked the CORS headers", FilesModified: []string{"web/cors.go"}},
	}
	for i := range obs {
		o := &obs[i]
		o.CreatedAt = at + int64(i)*1000
		o.ID = store.ImportID(o.CreatedAt, "e2e-file:"+o.Title)
		o.SessionID, o.Project, o.Type, o.Narrative = "s1", "billing", "change", o.Title+"."
		add(importer.Record{Kind: importer.KindObservation, Observation: o})
	}
	file := filepath.Join(t.TempDir(), "files.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := in.MustRun(nil, "import", file); !strings.Contains(out, "3 observations") {
		t.Fatalf("import: %s", out)
	}
	defer in.MustRun(nil, "stop")

	both := []string{"Added leeway to the JWT checks", "Read how tokens are validated"}
	for _, args := range [][]string{
		{"search", "--file", "internal/auth/middleware.go"},
		{"search", "--file", "middleware.go"},
		{"search", "--file", "/home/dev/billing/internal/auth/middleware.go", "--project", "billing", "tokens"},
		{"search", "middleware.go"},
	} {
		out := in.MustRun(nil, args...)
		want := both
		if strings.HasPrefix(args[len(args)-1], "tokens") {
			want = both[1:]
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: %q missing:\n%s", args, w, out)
			}
		}
		if strings.Contains(out, "CORS") || (len(want) == 1 && strings.Contains(out, both[0])) {
			t.Errorf("%v: found a record that did not touch the file:\n%s", args, out)
		}
	}
	if r := in.Run(nil, "search", "--file", "internal/auth/"); r.Code == 0 {
		t.Errorf("search --file DIR/: exit 0: %s", r.Stdout)
	}

	ctx := context.Background()
	cmd := exec.Command(e2ekit.MemnodeBin, "mcp")
	cmd.Env = in.Env()
	cmd.Dir = in.DataDir
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"file": "middleware.go"}})
	if err != nil || res.IsError {
		t.Fatalf("mcp search: %v %+v", err, res)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if got := b.String(); !strings.Contains(got, both[0]) || !strings.Contains(got, both[1]) || strings.Contains(got, "CORS") {
		t.Fatalf("mcp search file=middleware.go:\n%s", got)
	}
}
