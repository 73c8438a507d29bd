package cli

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const claudeMemSample = "../../testdata/fixtures/claude-mem/claude-mem-13.25.3-sample.db"

// requireSearchCommands skips while the search commands are not in the command table.
func requireSearchCommands(t *testing.T, in *e2ekit.Instance) {
	t.Helper()
	help := in.MustRun(nil, "help")
	for _, c := range []string{"search", "timeline", "get", "forget", "import", "export", "mcp"} {
		if !regexp.MustCompile(`(?m)^  ` + c + ` `).MatchString(help) {
			t.Skipf("command %q is not wired into the command table yet", c)
		}
	}
}

var rowID = regexp.MustCompile(`(?m)^(?:> )?([0-9A-Z]{6,12}) `)

// TestSearchCLIAndExportRoundTrip imports the claude-mem sample into a running node,
// searches it, and checks export → import into a fresh data dir → export is lossless.
func TestSearchCLIAndExportRoundTrip(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	requireSearchCommands(t, in)
	sample, _ := filepath.Abs(claudeMemSample)
	out := in.MustRun(nil, "import", "--from-claude-mem", sample)
	if !strings.Contains(out, "9 observations") || !strings.Contains(out, "4 summaries") || !strings.Contains(out, "4 prompts") {
		t.Fatalf("import: %s", out)
	}
	if again := in.MustRun(nil, "import", "--from-claude-mem", sample); !strings.Contains(again, "0 observations") {
		t.Fatalf("second import stored something: %s", again)
	}

	idx := in.MustRun(nil, "search", "idempotency", "--limit", "3")
	if !strings.Contains(idx, "Idempotency keys for Stripe webhook") || !strings.Contains(idx, "Chose DB unique constraint") {
		t.Fatalf("top 3 for idempotency:\n%s", idx)
	}
	if out := in.MustRun(nil, "search", "--type", "observations", "--obs-type", "bugfix", "--project", "mobile-app", "gradle"); strings.Count(out, "\n") != 1 {
		t.Fatalf("filtered search:\n%s", out)
	}
	for _, q := range []string{`"unterminated`, "AND OR NOT", "--", "😀", "e-mail*"} {
		if r := in.Run(nil, "search", "--", q); r.Code != 0 {
			t.Errorf("search %q: exit %d: %s", q, r.Code, r.Stderr)
		}
	}
	id := rowID.FindStringSubmatch(idx)[1]
	if tl := in.MustRun(nil, "timeline", id, "--before", "1", "--after", "1"); strings.Count(tl, "\n") != 3 || !strings.Contains(tl, "> "+id) {
		t.Fatalf("timeline:\n%s", tl)
	}
	if full := in.MustRun(nil, "get", id); !strings.Contains(full, "narrative:") {
		t.Fatalf("get:\n%s", full)
	}

	export1 := in.MustRun(nil, "export")
	fresh := e2ekit.NewInstance(t)
	file := filepath.Join(t.TempDir(), "export.jsonl")
	in.MustRun(nil, "export", "--out", file)
	fresh.MustRun(nil, "import", file)
	export2 := withoutDevice(fresh.MustRun(nil, "export"), fresh.Origin())
	if body(export1) != body(export2) || strings.Count(export1, "\n") < 21 {
		t.Fatalf("export → import → export changed the records:\n--- first\n%s\n--- second\n%s", export1, export2)
	}

	if out := in.MustRun(nil, "forget", id); !strings.Contains(out, "forgot 1 of 1") {
		t.Fatalf("forget: %s", out)
	}
	if idx := in.MustRun(nil, "search", "idempotency"); strings.Contains(idx, id) {
		t.Fatalf("forgotten record still found:\n%s", idx)
	}
	in.MustRun(nil, "stop")
	fresh.MustRun(nil, "stop")
}

// body drops the header line (it carries the export time).
func body(export string) string {
	_, rest, _ := strings.Cut(export, "\n")
	return rest
}

// TestMCPSubprocess starts `memnode mcp` as an MCP client would and walks
// search → timeline → get_observations on imported data.
func TestMCPSubprocess(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	requireSearchCommands(t, in)
	sample, _ := filepath.Abs(claudeMemSample)
	in.MustRun(nil, "import", "--from-claude-mem", sample) // starts the node
	defer in.MustRun(nil, "stop")

	ctx := context.Background()
	cmd := exec.Command(e2ekit.MemnodeBin, "mcp")
	cmd.Env = in.Env()
	cmd.Dir = in.DataDir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr: %s)", err, stderr.String())
	}
	defer cs.Close()
	call := func(name string, args any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v (stderr: %s)", name, err, stderr.String())
		}
		var b strings.Builder
		for _, ct := range res.Content {
			if tc, ok := ct.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), res.IsError
	}
	idx, isErr := call("search", map[string]any{"query": "idempotency", "limit": 5})
	if isErr || !strings.Contains(idx, "Stripe webhook") || !strings.Contains(idx, "SETNX") {
		t.Fatalf("search: %s", idx)
	}
	id := rowID.FindStringSubmatch(idx)[1]
	tl, isErr := call("timeline", map[string]any{"anchor": id, "depth_before": 3, "depth_after": 3})
	if isErr || !strings.Contains(tl, "> "+id) {
		t.Fatalf("timeline: %s", tl)
	}
	full, isErr := call("get_observations", map[string]any{"ids": []string{id}})
	if isErr || !strings.Contains(full, "facts:") {
		t.Fatalf("get_observations: %s", full)
	}
	if txt, isErr := call("get_observations", map[string]any{"ids": "oops"}); !isErr || !strings.Contains(txt, "ids") {
		t.Fatalf("malformed arguments: isError=%v %s", isErr, txt)
	}
	if txt, isErr := call("search", map[string]any{"limit": -1}); !isErr || !strings.Contains(txt, "limit") {
		t.Fatalf("bad limit: isError=%v %s", isErr, txt)
	}
}

// withoutDevice drops the export line naming a node's own device: every node registers
// itself, so a fresh node's export has one device line more than what it imported.
func withoutDevice(export, origin string) string {
	var keep []string
	for _, l := range strings.Split(export, "\n") {
		if strings.Contains(l, `"kind":"device"`) && strings.Contains(l, `"origin":"`+origin+`"`) {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}
