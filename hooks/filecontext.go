package hooks

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memnode/memnode/platform"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/privacy"
)

// claude-mem's file-context gates, kept as they are.
const (
	fileGateMinBytes   = 1500 // smaller files are cheaper to read than any history
	fileFetchLimit     = 40   // observations fetched per file
	fileDisplayLimit   = 15   // observations shown per file after dedupe and scoring
	maxFileContextPath = 10   // files considered per Read
)

// handleFileContext tells the agent what memnode already knows about the files a call
// reads: a compact timeline of observation IDs to fetch with get_observations (as the agent
// names it) — before a Read (Claude Code's PreToolUse), or after the read in the answer of
// the hook that recorded it (handleObservation). A file's history is given once per session
// (the node keeps the ledger: every hook is a process of its own), never to a subagent (its
// parent has it, or asked for the subagent's narrow job), and a line about a file that has
// changed since says so. The read is always allowed; on any problem the context is simply
// empty.
func handleFileContext(ctx context.Context, h *hook, in *platform.Input) (platform.Result, error) {
	if len(in.FilePaths) == 0 || subagent(in) {
		return platform.Result{}, nil
	}
	project := h.project(in)
	if h.excluded(in, project) {
		return platform.Result{}, nil
	}
	paths := in.FilePaths
	if len(paths) > maxFileContextPath {
		paths = paths[:maxFileContextPath]
	}
	now := h.cfg.Now()
	var sections []string
	for _, p := range paths {
		abs := p
		if !filepath.IsAbs(abs) {
			if in.Cwd == "" {
				continue
			}
			abs = filepath.Join(in.Cwd, abs)
		}
		abs = filepath.Clean(abs)
		fi, err := os.Stat(abs)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() < fileGateMinBytes {
			continue
		}
		obs, err := h.fileObservations(ctx, abs, project, in.Cwd, in.SessionID)
		if err != nil {
			if errors.Is(err, ErrUnreachable) {
				return platform.Result{}, err // no point asking again for the next path
			}
			h.logf("file-context: %v", err)
			continue
		}
		if len(obs) == 0 {
			continue
		}
		shown := selectFileObservations(obs, abs, fileDisplayLimit)
		sections = append(sections, formatFileTimeline(shown, displayPath(abs, in.Cwd), h.ad.MCPTool("get_observations"), now, fi.ModTime()))
	}
	if len(sections) == 0 {
		return platform.Result{}, nil
	}
	text := "<" + privacy.ContextTag + ">\n" + strings.Join(sections, "\n") + "</" + privacy.ContextTag + ">"
	return platform.Result{AdditionalContext: text}, nil
}

// subagent reports whether the call comes from a subagent: Claude Code (and Qwen Code)
// name its agent in agent_id/agent_type, and keep a subagent's transcript under
// <session>/subagents/.
func subagent(in *platform.Input) bool {
	return in.AgentID != "" || in.AgentType != "" || strings.Contains(filepath.ToSlash(in.TranscriptPath), "/subagents/")
}

// fileObservations asks the node about one file. cwd goes along: observations store a
// project file's path relative to the working dir of the call; the session too: the node
// answers a file's history once per session.
func (h *hook) fileObservations(ctx context.Context, abs, project, cwd, session string) ([]apitype.FileObservation, error) {
	q := url.Values{"path": {abs}, "project": {project}, "limit": {strconv.Itoa(fileFetchLimit)}}
	if cwd != "" {
		q.Set("cwd", cwd)
	}
	if session != "" {
		q.Set("session_id", session)
	}
	body, err := h.call(ctx, http.MethodGet, "/api/observations/by-file?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	var fo apitype.FileObservations
	if err := json.Unmarshal(body, &fo); err != nil {
		return nil, fmt.Errorf("decode observations by file: %w", err)
	}
	return fo.Observations, nil
}

// selectFileObservations keeps one observation per session (the first, i.e. newest, as the
// node sends newest first), scores them and keeps the best limit:
// +2 if the file was modified, +2 if the observation touched ≤ 3 files, else +1 if ≤ 8.
func selectFileObservations(obs []apitype.FileObservation, abs string, limit int) []apitype.FileObservation {
	type scored struct {
		o     apitype.FileObservation
		score int
	}
	seen := map[string]bool{}
	var cand []scored
	for _, o := range obs {
		if seen[o.SessionID] {
			continue
		}
		seen[o.SessionID] = true
		s := 0
		if slices.ContainsFunc(o.FilesModified, func(f string) bool { return samePath(f, abs) }) {
			s += 2
		}
		switch n := distinctFiles(o); {
		case n <= 3:
			s += 2
		case n <= 8:
			s++
		}
		cand = append(cand, scored{o, s})
	}
	slices.SortStableFunc(cand, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	if len(cand) > limit {
		cand = cand[:limit]
	}
	out := make([]apitype.FileObservation, len(cand))
	for i, c := range cand {
		out[i] = c.o
	}
	return out
}

// samePath matches a recorded path (absolute, or relative to the project root) to abs.
func samePath(recorded, abs string) bool {
	if recorded == "" {
		return false
	}
	if filepath.IsAbs(recorded) {
		return filepath.Clean(recorded) == abs
	}
	rel := filepath.Clean(recorded)
	return strings.HasSuffix(abs, string(filepath.Separator)+rel)
}

func distinctFiles(o apitype.FileObservation) int {
	set := map[string]bool{}
	for _, f := range o.FilesRead {
		set[f] = true
	}
	for _, f := range o.FilesModified {
		set[f] = true
	}
	return len(set)
}

func displayPath(abs, cwd string) string {
	if cwd != "" {
		if rel, err := filepath.Rel(cwd, abs); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return abs
}

// formatFileTimeline renders observations in time order, grouped by day, in now's zone,
// each by its short ID; a line older than the file's modification time (mtime) says so:
//
//	### Nov 28, 2026
//	<short id> 09:14 🔴 <title> (file changed since)
func formatFileTimeline(obs []apitype.FileObservation, shown, getTool string, now, mtime time.Time) string {
	obs = slices.Clone(obs)
	slices.SortStableFunc(obs, func(a, b apitype.FileObservation) int { return cmp.Compare(a.CreatedAt, b.CreatedAt) })
	loc := now.Location()
	var b strings.Builder
	fmt.Fprintf(&b, "memnode: %s has %d prior observation(s); for details call %s([IDs]) with IDs from this list.\n", shown, len(obs), getTool)
	day := ""
	for _, o := range obs {
		t := time.UnixMilli(o.CreatedAt).In(loc)
		if d := apitype.FormatDay(t); d != day {
			day = d
			fmt.Fprintf(&b, "### %s\n", d)
		}
		title := strings.Join(strings.Fields(o.Title), " ")
		id := o.Short
		if id == "" {
			id = o.ID
		}
		stale := ""
		if mtime.UnixMilli() > o.CreatedAt {
			stale = " (file changed since)"
		}
		b.WriteString(apitype.DayRow(id, t, o.Type, title) + stale + "\n")
	}
	return b.String()
}
