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

// StaleBinaries lists the stale memnode executables in the configuration of every agent of
// r whose installer is a FileLister, for the scope of opts. `memnode status` (and any other
// health check) reports them; files that do not exist are skipped.
func StaleBinaries(r *Registry, opts install.Options) []StaleBinary {
	var out []StaleBinary
	for _, p := range r.All() {
		fl, ok := p.Installer.(FileLister)
		if !ok {
			continue
		}
		for _, f := range fl.Files(opts) {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, bin := range install.Binaries(b) {
				if !executable(bin) {
					out = append(out, StaleBinary{Platform: p.Name, File: f, Binary: bin})
				}
			}
		}
	}
	return out
}

// executable reports whether path is a regular file someone may execute.
func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
