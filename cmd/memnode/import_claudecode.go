package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/hooks"
	"github.com/memnode/memnode/internal/datadir"
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
	cwds := map[string]string{} // project folder → the sessions' working dir
	for _, f := range files {
		recs, err := replayFile(f)
		if err != nil {
			bar.done()
			return fail(env, "import: %s: %v", f, err)
		}
		if len(recs) > 0 {
			var first struct {
				Cwd string `json:"cwd"`
			}
			if json.Unmarshal(recs[0].Payload, &first) == nil && first.Cwd != "" {
				cwds[filepath.Dir(f)] = first.Cwd
			}
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
	saved, known, err := importMemoryFiles(ctx, env, dir, cwds, home)
	if err != nil {
		return fail(env, "import: %v", err)
	}
	fmt.Fprintf(env.Stdout, "imported %d Claude Code sessions (%d hook events) from %s; the node compresses them in the background ('memnode status' shows the queue); importing again stores nothing twice\n",
		sessions, events, dir)
	if saved+known > 0 {
		fmt.Fprintf(env.Stdout, "memory files (CLAUDE.md, MEMORY.md): %d entries saved as notes, %d were already there\n", saved, known)
	}
	return 0
}

// importMemoryFiles saves the entries of Claude Code's memory files as notes: each list
// item of the user's CLAUDE.md (the .claude dir above dir) becomes a global note; of each
// project's CLAUDE.md and CLAUDE.local.md (in the sessions' working dir) and its auto
// memory (<project folder>/memory/*.md), a note of that project. A note saved before is
// not saved again (the node answers duplicate).
func importMemoryFiles(ctx context.Context, env *cliEnv, dir string, cwds map[string]string, home string) (saved, known int, err error) {
	type source struct{ path, project string }
	var srcs []source
	user := filepath.Join(filepath.Dir(filepath.Clean(dir)), "CLAUDE.md")
	srcs = append(srcs, source{user, ""})
	folders := make([]string, 0, len(cwds))
	for f := range cwds {
		folders = append(folders, f)
	}
	sort.Strings(folders)
	for _, f := range folders {
		cwd := cwds[f]
		project := hooks.ProjectName(cwd, home)
		mem, _ := filepath.Glob(filepath.Join(f, "memory", "*.md"))
		for _, m := range mem {
			srcs = append(srcs, source{m, project})
		}
		root := hooks.ProjectRoot(cwd, home)
		srcs = append(srcs, source{filepath.Join(root, "CLAUDE.md"), project}, source{filepath.Join(root, "CLAUDE.local.md"), project})
	}
	conn := newNodeConn(env)
	for _, s := range srcs {
		b, err := readSmallFile(s.path, 1<<20)
		if err != nil {
			continue // absent or unreadable: nothing to import from it
		}
		for _, entry := range memoryEntries(string(b)) {
			n := apitype.Note{Text: entry, Project: s.project, Type: "note"}
			if s.project == "" {
				n.Scope = apitype.ScopeGlobal
			}
			res, err := conn.SaveNote(ctx, n)
			switch {
			case err != nil:
				if strings.Contains(err.Error(), "empty") || strings.Contains(err.Error(), "at most") {
					continue // wholly private, or too long: not a note
				}
				return saved, known, fmt.Errorf("save a note from %s: %w", s.path, err)
			case res.Duplicate:
				known++
			default:
				saved++
			}
		}
	}
	return saved, known, nil
}

// memoryEntries are the list items of a memory file ("- use pnpm, never npm"), one note
// each; headings, prose and code blocks are left out.
func memoryEntries(md string) []string {
	var out []string
	inCode := false
	for _, line := range strings.Split(md, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		item, ok := strings.CutPrefix(t, "- ")
		if !ok {
			item, ok = strings.CutPrefix(t, "* ")
		}
		if item = strings.TrimSpace(item); ok && len(item) >= 3 {
			out = append(out, item)
		}
	}
	return out
}

// readSmallFile reads a regular file of at most limit bytes.
func readSmallFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, fmt.Errorf("%s: not a small regular file", path)
	}
	return os.ReadFile(path)
}

// offerClaudeCodeImport says once, after memnode install claude-code, that past sessions
// can be imported when Claude Code has some on disk.
func offerClaudeCodeImport(env *cliEnv, home string) {
	marker := filepath.Join(datadir.Dir(env.DataDir).State(), "claude-code-import-offered")
	if _, err := os.Stat(marker); err == nil {
		return
	}
	files, err := claudeTranscripts(filepath.Join(home, ".claude", "projects"), 0)
	if err != nil || len(files) == 0 {
		return
	}
	fmt.Fprintf(env.Stdout, "Claude Code has %d past sessions on this machine: 'memnode import --from-claude-code' makes them memory now (as the hooks would have; private parts and secrets stay out)\n", len(files))
	if err := os.MkdirAll(filepath.Dir(marker), 0o700); err == nil {
		_ = os.WriteFile(marker, nil, 0o600)
	}
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
