package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/memnode/memnode/hooks"
	"github.com/memnode/memnode/internal/localnet"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/claudecode"
)

// importClaudeCode imports the past Claude Code sessions under dir (default
// ~/.claude/projects): each transcript is replayed as the hook calls Claude Code made, through
// the same adapter, privacy gate and handlers as live hooks, with event IDs taken from the
// transcript, so a second import stores nothing new. since (epoch ms, 0: all) skips
// transcripts last written before it.
func importClaudeCode(ctx context.Context, env *cliEnv, dir string, since int64, quiet bool) int {
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return fail(env, "import: find home directory: %v (give the directory)", err)
		}
		dir = filepath.Join(home, ".claude", "projects")
	}
	files, err := claudeTranscripts(dir, since)
	if err != nil {
		return fail(env, "import: %v", err)
	}
	if len(files) == 0 {
		fmt.Fprintf(env.Stdout, "no Claude Code sessions found under %s\n", dir)
		return 0
	}
	if err := startNode(ctx, env); err != nil {
		return fail(env, "import: %v", err)
	}
	d := localnet.NewDialer(env.DataDir, env.Settings.Port, env.Settings.UseTCP())
	home, _ := os.UserHomeDir()
	cfg := hooks.Config{BaseURL: d.BaseURL(), Dialer: &d, TokenDir: env.DataDir, Timeout: time.Minute,
		ExcludedProjects: env.Settings.ExcludedProjects, SkipTools: env.Settings.SkipTools, OptIn: env.Settings.OptIn(),
		HomeDir: home, Version: version}
	p := claudecode.Platform()
	bar := &progress{w: env.Stderr, total: len(files), quiet: quiet, unit: "sessions"}
	sessions, events := 0, 0
	for _, f := range files {
		recs, err := replayFile(f)
		if err != nil {
			bar.done()
			return fail(env, "import: %s: %v", f, err)
		}
		for _, rec := range recs {
			if err := hooks.Replay(ctx, cfg, p, rec); err != nil {
				bar.done()
				return fail(env, "import: %s: %v (imported so far: %d sessions; run the import again to go on, nothing is stored twice)", f, err, sessions)
			}
			events++
		}
		if len(recs) > 0 {
			sessions++
		}
		bar.add(1)
	}
	bar.done()
	fmt.Fprintf(env.Stdout, "imported %d Claude Code sessions (%d hook events) from %s; the node compresses them in the background ('memnode status' shows the queue); importing again stores nothing twice\n",
		sessions, events, dir)
	return 0
}

func replayFile(path string) ([]platform.Recorded, error) {
	f, err := platform.OpenTranscript(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return claudecode.Replay(f)
}

// claudeTranscripts lists the session transcripts under dir (<project dir>/<session>.jsonl;
// subagent transcripts in subfolders are skipped), oldest first.
func claudeTranscripts(dir string, since int64) ([]string, error) {
	type file struct {
		path string
		mod  time.Time
	}
	var found []file
	err := filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // an unreadable folder: the rest still imports
		}
		if de.IsDir() {
			if rel, _ := filepath.Rel(dir, path); rel != "." && filepath.Dir(rel) != "." {
				return filepath.SkipDir // <project>/<session>/subagents/…
			}
			return nil
		}
		if filepath.Ext(path) != ".jsonl" || !de.Type().IsRegular() {
			return nil
		}
		fi, err := de.Info()
		if err != nil {
			return nil
		}
		if since > 0 && fi.ModTime().UnixMilli() < since {
			return nil
		}
		found = append(found, file{path, fi.ModTime()})
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist (give the directory that holds Claude Code's project folders)", dir)
	}
	if err != nil {
		return nil, err
	}
	sort.Slice(found, func(i, j int) bool { return found[i].mod.Before(found[j].mod) })
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = f.path
	}
	return out, nil
}
