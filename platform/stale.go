package platform

import (
	"os"

	"github.com/memnode/memnode/install"
)

// FileLister is an Installer that names the files it edits for a scope (hooks, MCP server,
// plugin), so their memnode paths can be checked after an upgrade.
type FileLister interface {
	Files(install.Options) []string
}

// StaleBinary is a memnode executable an agent's configuration runs that is gone or not
// executable: the binary moved or was upgraded elsewhere. `memnode install <Platform>`
// rewrites the entry.
type StaleBinary struct {
	Platform string // the agent's name ("claude-code")
	File     string // the config file that names it
	Binary   string // the absolute path it runs
}

// Hookup is what one agent's configuration (the files its installer edits, for one scope)
// runs of memnode.
type Hookup struct {
	Platform string
	Hooks    bool          // memnode's hook command runs on the agent's events
	MCP      bool          // memnode's MCP server is registered
	Stale    []StaleBinary // memnode executables named there that are gone
}

// Hookups reads the configuration of every agent of r whose installer is a FileLister, for
// the scope of opts, once, and returns an entry for each agent whose files name memnode at
// all. Files that do not exist are skipped. `memnode status`, `doctor` and the node's
// first lines report from it.
func Hookups(r *Registry, opts install.Options) []Hookup {
	var out []Hookup
	for _, p := range r.All() {
		fl, ok := p.Installer.(FileLister)
		if !ok {
			continue
		}
		h := Hookup{Platform: p.Name}
		named := false
		for _, f := range fl.Files(opts) {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			h.Hooks = h.Hooks || install.RunsHooks(b)
			h.MCP = h.MCP || install.RunsMCPServer(b)
			for _, bin := range install.Binaries(b) {
				named = true
				if !executable(bin) {
					h.Stale = append(h.Stale, StaleBinary{Platform: p.Name, File: f, Binary: bin})
				}
			}
		}
		if named || h.Hooks || h.MCP {
			out = append(out, h)
		}
	}
	return out
}

// StaleBinaries lists the stale memnode executables of hookups.
func StaleBinaries(hookups []Hookup) []StaleBinary {
	var out []StaleBinary
	for _, h := range hookups {
		out = append(out, h.Stale...)
	}
	return out
}

// executable reports whether path is a regular file someone may execute.
func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
