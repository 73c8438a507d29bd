//go:build !memnode_lean

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/hooks"
	"github.com/memnode/memnode/internal/localnet"
	"github.com/memnode/memnode/platform"
)

// importAgentHistory is `memnode import --from-<agent> [DIR]`: runHistoryImport with a
// progress bar on stderr and its summary on stdout.
func importAgentHistory(ctx context.Context, env *cliEnv, p platform.Platform, dir string, since int64, quiet bool) int {
	bar := &progress{w: env.Stderr, quiet: quiet, unit: "sessions", lines: !isTerminal(env.Stderr)}
	res, err := runHistoryImport(ctx, env, p, dir, since, false, func(done, total int) {
		bar.total = total
		bar.add(done - bar.n)
	}, func(line string) {
		bar.done()
		fmt.Fprintln(env.Stderr, "memnode import: "+line)
	})
	bar.done()
	if err != nil {
		return fail(env, "import: %v", err)
	}
	for _, line := range res.summary(p) {
		fmt.Fprintln(env.Stdout, line)
	}
	if res.unreadable > 0 {
		fmt.Fprintf(env.Stderr, "memnode import: %d of %d session files could not be read (named above); the others were imported\n", res.unreadable, res.files)
		return 1
	}
	return 0
}

// historyImport is what one import of an agent's past sessions did.
type historyImport struct {
	dir                            string
	files, sessions, events        int
	badLines, badFiles, unreadable int
	notesSaved, notesKnown         int
}

// summary says what the import did, a line each.
func (r historyImport) summary(p platform.Platform) []string {
	if r.files == 0 {
		return []string{fmt.Sprintf("no %s sessions found under %s", p.Display, r.dir)}
	}
	out := []string{fmt.Sprintf("imported %d %s sessions (%d hook events) from %s; the node compresses them in the background ('memnode status' shows the queue); importing again stores nothing twice",
		r.sessions, p.Display, r.events, r.dir)}
	if r.notesSaved+r.notesKnown > 0 {
		out = append(out, fmt.Sprintf("memory files: %d entries saved as notes, %d were already there", r.notesSaved, r.notesKnown))
	}
	if r.badLines > 0 {
		out = append(out, fmt.Sprintf("skipped %d malformed lines in %d files (not records of %s's format; the rest of those files was imported)", r.badLines, r.badFiles, p.Display))
	}
	return out
}

// runHistoryImport imports the past sessions of agent p under dir (default: where the agent
// keeps them): each session file is replayed as the hook calls the agent made, through the
// same adapter, privacy gate and handlers as live hooks, with event IDs taken from the
// file, so a second import stores nothing new; then the agent's memory files become notes.
// since (epoch ms, 0: all) skips files last written before it. progress hears the files
// done of all; a file that cannot be read is named to warn and skipped; lines that are not
// records of the agent's format are counted. inNode: this is the node's process (the
// viewer's import), which must not start a node of its own.
func runHistoryImport(ctx context.Context, env *cliEnv, p platform.Platform, dir string, since int64, inNode bool,
	progress func(done, total int), warn func(string)) (historyImport, error) {
	h := p.History
	home, err := os.UserHomeDir()
	if dir == "" {
		if err != nil {
			return historyImport{}, fmt.Errorf("find home directory: %w (give the directory)", err)
		}
		dir = h.Dir(home, env.Getenv)
	}
	res := historyImport{dir: dir}
	src := dir
	if h.Export != nil {
		tmp, err := os.MkdirTemp("", "memnode-import-")
		if err != nil {
			return res, fmt.Errorf("make a folder for the exported sessions: %w", err)
		}
		defer os.RemoveAll(tmp)
		if exported, err := h.Export(ctx, dir, tmp, since); err != nil {
			return res, err
		} else if exported {
			src, since = tmp, 0
		}
	}
	files, err := h.SessionFiles(src, since)
	if err != nil || len(files) == 0 {
		return res, err
	}
	res.files = len(files)
	if !inNode {
		if err := startNode(ctx, env); err != nil {
			return res, err
		}
	}
	d := localnet.NewDialer(env.DataDir, env.Settings.Port, env.Settings.UseTCP())
	cfg := hooks.Config{BaseURL: d.BaseURL(), Dialer: &d, TokenDir: env.DataDir, Timeout: time.Minute,
		ExcludedProjects: env.Settings.ExcludedProjects, SkipTools: env.Settings.SkipTools, OptIn: env.Settings.OptIn(),
		HomeDir: home, Version: version}
	var projects []projectFiles
	seen := map[projectFiles]bool{}
	progress(0, len(files))
	for i, f := range files {
		rep, err := h.Replay(f)
		if err != nil {
			warn(fmt.Sprintf("%s: %v (skipped)", f, err))
			res.unreadable++
			progress(i+1, len(files))
			continue
		}
		if rep.BadLines > 0 {
			res.badLines += rep.BadLines
			res.badFiles++
		}
		if rep.Cwd != "" {
			pf := projectFiles{cwd: rep.Cwd, folder: filepath.Dir(f)}
			if !seen[pf] {
				seen[pf] = true
				projects = append(projects, projectFiles{cwd: rep.Cwd, folder: filepath.Dir(f), session: f})
			}
		}
		for _, rec := range rep.Calls {
			if err := hooks.Replay(ctx, cfg, p, rec); err != nil {
				return res, fmt.Errorf("%s: %w (imported so far: %d sessions; run the import again to go on, nothing is stored twice)", f, err, res.sessions)
			}
			res.events++
		}
		if len(rep.Calls) > 0 {
			res.sessions++
		}
		progress(i+1, len(files))
	}
	res.notesSaved, res.notesKnown, err = importMemoryFiles(ctx, env, h, dir, projects, home)
	return res, err
}

// projectFiles is a project an import met: its working folder and a folder of its session
// files (with one of them), where an agent may keep project memory (Claude Code's auto
// memory).
type projectFiles struct{ cwd, folder, session string }

// importMemoryFiles saves the entries of the agent's memory files as notes: each list item
// of the user's file (h.UserMemory beside dir) becomes a global note; of each project's
// files (h.ProjectMemory), a note of that project. A note saved before is not saved again
// (the node answers duplicate).
func importMemoryFiles(ctx context.Context, env *cliEnv, h *platform.History, dir string, projects []projectFiles, home string) (saved, known int, err error) {
	type source struct{ path, project string }
	var srcs []source
	seen := map[string]bool{}
	if h.UserMemory != "" {
		user := filepath.Join(filepath.Dir(filepath.Clean(dir)), h.UserMemory)
		srcs, seen[user] = append(srcs, source{user, ""}), true
	}
	sort.Slice(projects, func(i, j int) bool { return projects[i].folder+projects[i].cwd < projects[j].folder+projects[j].cwd })
	for _, pf := range projects {
		project := hooks.ProjectName(pf.cwd, home)
		for _, f := range h.ProjectMemory(hooks.ProjectRoot(pf.cwd, home), pf.session) {
			if !seen[f] {
				seen[f] = true
				srcs = append(srcs, source{f, project})
			}
		}
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

type progress struct {
	w     io.Writer
	unit  string // shown after the counts ("sessions"); "" for records in batches
	total int
	n     int
	quiet bool
	// lines: w is no terminal (a log file, a pipe), so a bar redrawn with \r would pile up
	// in it; a line is written instead each time another tenth is done.
	lines bool
	tenth int // the tenths a line has been written for
	drawn bool
}

func (p *progress) add(k int) {
	p.n += k
	if p.quiet || (p.unit == "" && p.total <= importBatch) {
		return
	}
	pct := 100 * min(p.n, p.total) / p.total
	counts := fmt.Sprintf("%d/%d %s(%d%%)", p.n, p.total, p.unit+strings.Repeat(" ", min(len(p.unit), 1)), pct)
	if p.lines {
		if pct/10 > p.tenth {
			p.tenth = pct / 10
			fmt.Fprintf(p.w, "importing: %s\n", counts)
		}
		return
	}
	const width = 30
	fill := width * min(p.n, p.total) / p.total
	fmt.Fprintf(p.w, "\rimporting [%s%s] %s", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), counts)
	p.drawn = true
}

func (p *progress) done() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}
