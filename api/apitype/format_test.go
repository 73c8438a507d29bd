package apitype

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/gosrc"
)

// A record's time is rendered by format.go alone (FormatTime, FormatDay, FormatClock,
// DayRow): the index, the session-start context and the file context once had three time
// formats (UTC, a 24-hour and a 12-hour clock). No other non-test Go file may pass a time
// layout to Format, except the listed ones, which render a moment that is not a record's.
func TestRecordTimesAreFormattedHereOnly(t *testing.T) {
	notRecords := map[string]string{
		"inject/health.go":      "when a paused AI provider is retried",
		"cmd/memnode/status.go": "when a paused AI provider is retried",
		"cmd/memnode/viewer.go": "when a login code expires",
		"cmd/memnode/peers.go":  "when an invite code expires",
		"capture/capture.go":    "when a recording pause ends",
		"team/hold.go":          "a clock stamp too far ahead, in a hold message",
		"team/rqlite.go":        "the cluster's last contact",
		"replica/clockbound.go": "a clock stamp too far ahead, in an error",
		"ai/llm/budget.go":      "the day a token budget counts",
		"cmd/memnode-bench":     "benchmark output",
	}
	isLayout := func(s string) bool {
		for _, p := range []string{"15:04", "3:04", "Jan 2", "2006", "MST", "Mon"} {
			if strings.Contains(s, p) {
				return true
			}
		}
		return false
	}
	skip := func(rel string) bool { return rel == "api/apitype/format.go" || notRecords[rel] != "" }
	gosrc.Walk(t, filepath.Join("..", ".."), skip, func(rel string, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Format" {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && isLayout(s) {
					t.Errorf("%s formats a time as %q: a record's time is apitype's (FormatTime, FormatDay, FormatClock, DayRow); another moment is listed in this test with what it is", rel, s)
				}
			}
			return true
		})
	})
}
