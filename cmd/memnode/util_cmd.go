package main

import (
	"net/url"
	"os"
	"path/filepath"
)

// projectName is the name of the git root of dir, or dir's base name.
// TODO(lead): replace with hooks.ProjectName once exported, to keep one definition.
func projectName(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return filepath.Base(d)
		}
		if filepath.Dir(d) == d {
			return filepath.Base(dir)
		}
	}
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
