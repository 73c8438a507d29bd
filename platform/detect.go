package platform

import (
	"os"
	"path/filepath"
)

// Detect says how `memnode install` (no argument) tells that an agent is installed: a
// directory or file it keeps in the home directory or the XDG config directory, or a
// command in PATH.
type Detect struct {
	// HomePaths are relative to the home directory, slash-separated (".cursor",
	// ".codeium/windsurf").
	HomePaths []string
	// ConfigPaths are relative to the XDG config directory ($XDG_CONFIG_HOME, else
	// ~/.config), slash-separated ("opencode"), for agents that honour XDG_CONFIG_HOME.
	ConfigPaths []string
	// Commands are executables looked up in PATH ("claude").
	Commands []string
}

// Found reports whether the agent looks installed, and why ("~/.cursor", "claude in PATH").
// configHome is $XDG_CONFIG_HOME ("" for home/.config); lookPath is exec.LookPath (tests
// pass their own).
func (d Detect) Found(home, configHome string, lookPath func(string) (string, error)) (string, bool) {
	for _, p := range d.HomePaths {
		if home == "" {
			break
		}
		if exists(filepath.Join(home, filepath.FromSlash(p))) {
			return "~/" + p, true
		}
	}
	for _, p := range d.ConfigPaths {
		switch {
		case configHome != "":
			if path := filepath.Join(configHome, filepath.FromSlash(p)); exists(path) {
				return path, true
			}
		case home != "":
			if exists(filepath.Join(home, ".config", filepath.FromSlash(p))) {
				return "~/.config/" + p, true
			}
		}
	}
	for _, c := range d.Commands {
		if _, err := lookPath(c); err == nil {
			return c + " in PATH", true
		}
	}
	return "", false
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
