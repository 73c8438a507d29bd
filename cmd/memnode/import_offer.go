package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/platform"
)

// offerImport says once, after memnode install AGENT, that the agent's past sessions can be
// imported when it has some on disk. It only prints: it never asks (install may run with no
// terminal).
func offerImport(env *cliEnv, p platform.Platform, home string) {
	if p.History == nil {
		return
	}
	marker := filepath.Join(datadir.Dir(env.DataDir).State(), p.Name+"-import-offered")
	if _, err := os.Stat(marker); err == nil {
		return
	}
	files, err := p.History.SessionFiles(p.History.Dir(home, env.Getenv), 0)
	if err != nil || len(files) == 0 {
		return
	}
	fmt.Fprintf(env.Stdout, "%s has %d past sessions on this machine: 'memnode import --from-%s' makes them memory now (as the hooks would have; private parts and secrets stay out)\n", p.Display, len(files), p.Name)
	if err := os.MkdirAll(filepath.Dir(marker), 0o700); err == nil {
		_ = os.WriteFile(marker, nil, 0o600)
	}
}
