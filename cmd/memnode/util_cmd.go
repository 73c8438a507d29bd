package main

import (
	"fmt"
	"net/url"
	"os"

	"github.com/memnode/memnode/hooks"
)

// projectName is the project of dir, named exactly as the hooks name it.
func projectName(dir string) string {
	home, _ := os.UserHomeDir()
	return hooks.ProjectName(dir, home)
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// mib is n bytes in MiB with one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
