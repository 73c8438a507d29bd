package cli

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPClaudeMemNamesOverStdio: a real MCP client talks over stdio to a real `memnode
// mcp` against a real node that imported the claude-mem sample. Calls with claude-mem's
// tool and argument names (important_workflow, type=<observation type> on search and
// timeline, dateStart/dateEnd as epoch ms, orderBy, numeric IDs) return the same hits as
// memnode's own names.
func TestMCPClaudeMemNamesOverStdio(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	sample, err := filepath.Abs(claudeMemSample)
	if err != nil {
		t.Fatal(err)
	}
	in.MustRun(nil, "import", "--from-claude-mem", sample) // starts the node
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(e2ekit.MemnodeBin, "mcp")
	cmd.Env, cmd.Dir = in.Env(), in.DataDir
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callTool := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if res.IsError {
			t.Fatalf("%s %v: tool error %s", name, args, b.String())
		}
		return b.String()
	}

	if txt := callTool("important_workflow", nil); !strings.Contains(txt, "get_observations") {
		t.Errorf("important_workflow: %s", txt)
	}
	own := callTool("search", map[string]any{"query": "VAT OR invoice OR export", "type": "observations", "obs_type": "bugfix",
		"since": "1790845500000", "until": "1790953980000", "order": "oldest"})
	alias := callTool("search", map[string]any{"query": "VAT OR invoice OR export", "type": "bugfix",
		"dateStart": 1790845500000, "dateEnd": 1790953980000, "orderBy": "date_asc"})
	if own != alias {
		t.Errorf("claude-mem names answer differently.\nmemnode:\n%s\nclaude-mem:\n%s", own, alias)
	}
	// Bugfixes 1 (VAT) and 8 (export), oldest first; no other type.
	vat, export := strings.Index(own, "VAT applied twice"), strings.Index(own, "Invoice export timed out")
	if vat < 0 || export < vat || strings.Contains(own, "reverse-charge") || strings.Contains(own, "Android") {
		t.Errorf("search hits:\n%s", own)
	}

	id := regexp.MustCompile(`(?m)^([0-9A-Z]{6,12}) .*Invoice export timed out`).FindStringSubmatch(own)
	if id == nil {
		t.Fatalf("no ID for claude-mem observation 8 in:\n%s", own)
	}
	byID := callTool("get_observations", map[string]any{"ids": []any{id[1]}})
	if byNum := callTool("get_observations", map[string]any{"ids": []any{8}}); byNum != byID || !strings.Contains(byNum, "N+1") {
		t.Errorf("get_observations ids=[8]:\n%s\nwant:\n%s", byNum, byID)
	}
	tlID := callTool("timeline", map[string]any{"anchor": id[1], "depth_before": 2, "depth_after": 2})
	if tlNum := callTool("timeline", map[string]any{"anchor": 8, "depth_before": 2, "depth_after": 2}); tlNum != tlID {
		t.Errorf("timeline anchor=8:\n%s\nwant:\n%s", tlNum, tlID)
	}
	// claude-mem's type=<observation type> filters the timeline too (around the anchor:
	// bugfixes 1 and 8 and the Android one, no summaries, prompts or other types).
	tlOwn := callTool("timeline", map[string]any{"anchor": 4, "depth_before": 20, "depth_after": 20, "type": "observations", "obs_type": "bugfix"})
	tlAlias := callTool("timeline", map[string]any{"anchor": 4, "depth_before": 20, "depth_after": 20, "type": "bugfix"})
	if tlAlias != tlOwn {
		t.Errorf("timeline type=bugfix:\n%s\nwant:\n%s", tlAlias, tlOwn)
	}
	for _, want := range []string{"> ", "VAT applied twice", "Invoice export timed out", "Android build fails"} {
		if !strings.Contains(tlOwn, want) {
			t.Errorf("timeline type=bugfix lacks %q:\n%s", want, tlOwn)
		}
	}
	for _, not := range []string{" session ", " prompt ", "discovery", "decision", "Tax rates"} {
		if strings.Contains(tlOwn, not) {
			t.Errorf("timeline type=bugfix has %q:\n%s", not, tlOwn)
		}
	}
	if out := in.MustRun(nil, "timeline", "4", "--before", "20", "--after", "20", "--obs-type", "bugfix"); strings.Count(out, "bugfix") != 3 || strings.Contains(out, "session") {
		t.Errorf("memnode timeline 4 --obs-type bugfix:\n%s", out)
	}
	// The CLI resolves the same numbers: the map lives in the node's replica.
	if out := in.MustRun(nil, "get", "8"); !strings.Contains(out, "Invoice export timed out") {
		t.Errorf("memnode get 8: %s", out)
	}
}
