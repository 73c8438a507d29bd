package platform

import (
	"os"
	"path/filepath"
)

// Detect says how `memnode install` (no argument) tells that an agent is installed: a
// directory or file it keeps in the home directory, or a command in PATH.
type Detect struct {
	// HomePaths are relative to the home directory, slash-separated (".cursor",
	// ".codeium/windsurf").
	HomePaths []string
	// Commands are executables looked up in PATH ("claude").
	Commands []string
}

// Found reports whether the agent looks installed, and why ("~/.cursor", "claude in PATH").
// lookPath is exec.LookPath (tests pass their own).
func (d Detect) Found(home string, lookPath func(string) (string, error)) (string, bool) {
	for _, p := range d.HomePaths {
		if home == "" {
			break
		}
		if _, err := os.Stat(filepath.Join(home, filepath.FromSlash(p))); err == nil {
			return "~/" + p, true
		}
	}
	for _, c := range d.Commands {
		if _, err := lookPath(c); err == nil {
			return c + " in PATH", true
		}
	}
	return "", false
}
