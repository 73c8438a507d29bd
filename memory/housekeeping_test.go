package memory

import (
	"go/ast"
	"testing"

	"github.com/memnode/memnode/internal/gosrc"
)

// The agents' housekeeping tools are one list (housekeeping): the configs' defaults, the
// Claude Code adapter and the offline compressor each kept their own copy once, and the
// copies drifted. No other non-test Go file of the module may name one of them in a string.
func TestHousekeepingIsOneList(t *testing.T) {
	// Tool names as data, not as a policy: the scale benchmark's generator makes TodoWrite
	// calls because agents make them; inject says where a record's words came from (a
	// BashOutput record imported from elsewhere is still a command's output).
	allowed := map[string]bool{"memory/policy.go": true, "cmd/memnode-bench/scalegen.go": true, "inject/provenance.go": true}
	gosrc.Walk(t, "..", func(rel string) bool { return allowed[rel] }, func(rel string, f *ast.File) {
		gosrc.Strings(f, func(_ *ast.BasicLit, s string) {
			if Housekeeping(s) {
				t.Errorf("%s names the housekeeping tool %q: ask memory.Housekeeping instead of keeping a list", rel, s)
			}
		})
	})
}
