package replica

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/memnode/memnode/store"
	"strings"

	"github.com/memnode/memnode/memory"
)

const obsColumns = `id, session_id, project, type, title, subtitle, narrative, facts, concepts, files_read,
	files_modified, tool_name, prompt_number, discovery_tokens, model, content_hash, created_at, origin, hlc`

func scanObservation(sc interface{ Scan(...any) error }) (memory.Observation, error) {
	var o memory.Observation
	var facts, concepts, fr, fm string
	var hlc int64
	err := sc.Scan(&o.ID, &o.SessionID, &o.Project, &o.Type, &o.Title, &o.Subtitle, &o.Narrative, &facts, &concepts,
		&fr, &fm, &o.ToolName, &o.PromptNumber, &o.DiscoveryTokens, &o.Model, hashColumn{&o.ContentHash}, &o.CreatedAt, &o.Origin, &hlc)
	if err != nil {
		return o, err
	}
	o.HLC = uint64(hlc)
	o.Facts, o.Concepts, o.FilesRead, o.FilesModified = parseList(facts), parseList(concepts), parseList(fr), parseList(fm)
	return o, nil
}

func parseList(s string) []string {
	if s == "" || s == "[]" {
		return nil
	}
	var v []string
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return []string{s}
	}
	return v
}

func (r *Replica) queryObservations(ctx context.Context, q string, args ...any) ([]memory.Observation, error) {
	rows, err := r.reads.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memory.Observation
	for rows.Next() {
		o, err := scanObservation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// RecentObservations returns a project's newest observations that no stored record
// supersedes, newest first.
func (r *Replica) RecentObservations(ctx context.Context, project string, limit int) ([]memory.Observation, error) {
	out, err := r.queryObservations(ctx, "SELECT "+obsColumns+" FROM observations WHERE project = ? AND "+currentObservation("observations.id")+" ORDER BY created_at DESC, id DESC LIMIT ?", project, limit)
	if err != nil {
		return nil, fmt.Errorf("recent observations: %w", err)
	}
	return out, nil
}

// SessionObservations returns a session's observations, oldest first.
func (r *Replica) SessionObservations(ctx context.Context, sessionID string, limit int) ([]memory.Observation, error) {
	out, err := r.queryObservations(ctx, "SELECT "+obsColumns+" FROM observations WHERE session_id = ? ORDER BY created_at, id LIMIT ?", sessionID, limit)
	if err != nil {
		return nil, fmt.Errorf("session observations: %w", err)
	}
	return out, nil
}

// ObservationsByFile returns the newest observations of a project that read or modified one
// of paths, leaving out those a stored record supersedes.
func (r *Replica) ObservationsByFile(ctx context.Context, project string, paths []string, limit int) ([]memory.Observation, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	ph := placeholders(len(paths))
	args := make([]any, 0, len(paths)+2)
	for _, p := range paths {
		args = append(args, p)
	}
	args = append(args, project, limit)
	q := "SELECT " + prefixed("o.", obsColumns) + ` FROM observations o WHERE o.rowid IN
		(SELECT f.obs_rowid FROM file_paths p JOIN observation_files f ON f.path_id = p.id WHERE p.path IN (` + ph + `)) AND o.project = ? AND ` + currentObservation("o.id") + `
		ORDER BY o.created_at DESC LIMIT ?`
	out, err := r.queryObservations(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("observations by file: %w", err)
	}
	return out, nil
}

func prefixed(p, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// GetObservations returns observations by ID, in the order asked; unknown IDs are left out.
func (r *Replica) GetObservations(ctx context.Context, ids []string) ([]memory.Observation, error) {
	out := make([]memory.Observation, 0, len(ids))
	for _, id := range ids {
		row := r.reads.queryRow(ctx, "SELECT "+obsColumns+" FROM observations WHERE id = ?", id)
		o, err := scanObservation(row)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("get observation: %w", err)
		}
		out = append(out, o)
	}
	return out, nil
}

const sumColumns = `id, session_id, project, request, investigated, learned, completed, next_steps, notes,
	discovery_tokens, model, created_at, origin, hlc`

// scanSummary scans a row selected with sumColumns.
func scanSummary(sc interface{ Scan(...any) error }) (memory.Summary, error) {
	var s memory.Summary
	var hlc int64
	err := sc.Scan(&s.ID, &s.SessionID, &s.Project, &s.Request, &s.Investigated, &s.Learned, &s.Completed,
		&s.NextSteps, &s.Notes, &s.DiscoveryTokens, &s.Model, &s.CreatedAt, &s.Origin, &hlc)
	s.HLC = uint64(hlc)
	return s, err
}

// RecentSummaries returns a project's newest session summaries, newest first.
func (r *Replica) RecentSummaries(ctx context.Context, project string, limit int) ([]memory.Summary, error) {
	rows, err := r.reads.query(ctx, "SELECT "+sumColumns+" FROM summaries WHERE project = ? ORDER BY created_at DESC LIMIT ?", project, limit)
	if err != nil {
		return nil, fmt.Errorf("recent summaries: %w", err)
	}
	defer rows.Close()
	var out []memory.Summary
	for rows.Next() {
		s, err := scanSummary(rows)
		if err != nil {
			return nil, fmt.Errorf("recent summaries: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Counts are table sizes, for status.
type Counts struct {
	Sessions     int `json:"sessions"`
	Prompts      int `json:"prompts"`
	Observations int `json:"observations"`
	Summaries    int `json:"summaries"`
	Pending      int `json:"pending"`
	Ops          int `json:"ops"`
	Tombstones   int `json:"tombstones"`
}

// Counts returns table sizes: the maintained counts of migration 0011 (table_counts), read
// in one lookup each, never a count of the tables.
func (r *Replica) Counts(ctx context.Context) (Counts, error) {
	var c Counts
	rows, err := r.reads.query(ctx, "SELECT name, n FROM table_counts")
	if err != nil {
		return c, fmt.Errorf("counts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int
		if err := rows.Scan(&name, &n); err != nil {
			return c, fmt.Errorf("counts: %w", err)
		}
		switch name {
		case "sessions":
			c.Sessions = n
		case "prompts":
			c.Prompts = n
		case "observations":
			c.Observations = n
		case "summaries":
			c.Summaries = n
		case "ops":
			c.Ops = n
		case "tombstones":
			c.Tombstones = n
		}
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("counts: %w", err)
	}
	if c.Pending, err = r.QueueDepth(ctx); err != nil {
		return c, fmt.Errorf("counts: %w", err)
	}
	return c, nil
}

// ProjectStats returns the total discovery tokens and observation count of a project, from
// its maintained counts: one row, whatever the project's size.
func (r *Replica) ProjectStats(ctx context.Context, project string) (observations, discoveryTokens int, err error) {
	observations, discoveryTokens, _, err = r.projectCounts(ctx, project)
	return observations, discoveryTokens, err
}

// projectCounts reads a project's row of project_counts (migration 0011); a project with
// no row has nothing yet.
func (r *Replica) projectCounts(ctx context.Context, project string) (observations, discoveryTokens, sessions int, err error) {
	err = r.reads.queryRow(ctx, "SELECT observations, discovery_tokens, sessions FROM project_counts WHERE project = ?", project).
		Scan(&observations, &discoveryTokens, &sessions)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, 0, nil
	}
	if err != nil {
		return 0, 0, 0, fmt.Errorf("project counts: %w", err)
	}
	return observations, discoveryTokens, sessions, nil
}

// DeviceNames maps every known origin to its device name.
func (r *Replica) DeviceNames(ctx context.Context) (map[string]string, error) {
	rows, err := r.reads.query(ctx, "SELECT origin, name FROM devices")
	if err != nil {
		return nil, fmt.Errorf("device names: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var o, n string
		if err := rows.Scan(&o, &n); err != nil {
			return nil, fmt.Errorf("device names: %w", err)
		}
		out[o] = n
	}
	return out, rows.Err()
}

// Walk reads the replicated state in a stable order — devices, sessions, prompts,
// observations, summaries, tombstones, supersede links (by old, then new ID); each record
// kind by creation time, then ID — and hands every
// record to v. With project set, sessions and records are that project's only (devices and
// tombstones have no project). An error from v ends the walk and is returned as is.
func (r *Replica) Walk(ctx context.Context, project string, v store.Visitor) error {
	defer r.longRead()()
	where, args := "", []any{}
	if project != "" {
		where, args = " WHERE project = ?", []any{project}
	}
	steps := []struct {
		name string
		on   bool
		q    string
		args []any
		scan func(*sql.Rows) error
	}{
		{"devices", v.Device != nil, "SELECT origin, name FROM devices ORDER BY origin", nil, func(rows *sql.Rows) error {
			var d memory.Device
			if err := rows.Scan(&d.Origin, &d.Name); err != nil {
				return err
			}
			return v.Device(d)
		}},
		{"sessions", v.Session != nil, "SELECT id, project, platform, started_at, COALESCE(ended_at, 0), status, origin, hlc FROM sessions" +
			where + " ORDER BY started_at, id", args, func(rows *sql.Rows) error {
			var s memory.Session
			var hlc int64
			if err := rows.Scan(&s.ID, &s.Project, &s.Platform, &s.StartedAt, &s.EndedAt, &s.Status, &s.Origin, &hlc); err != nil {
				return err
			}
			s.HLC = uint64(hlc)
			return v.Session(s)
		}},
		{"prompts", v.Prompt != nil, "SELECT " + promptColumns + " FROM prompts" + where + " ORDER BY created_at, id", args, func(rows *sql.Rows) error {
			p, err := scanPrompt(rows)
			if err != nil {
				return err
			}
			return v.Prompt(p)
		}},
		{"observations", v.Observation != nil, "SELECT " + obsColumns + " FROM observations" + where + " ORDER BY created_at, id", args, func(rows *sql.Rows) error {
			o, err := scanObservation(rows)
			if err != nil {
				return err
			}
			return v.Observation(o)
		}},
		{"summaries", v.Summary != nil, "SELECT " + sumColumns + " FROM summaries" + where + " ORDER BY created_at, id", args, func(rows *sql.Rows) error {
			s, err := scanSummary(rows)
			if err != nil {
				return err
			}
			return v.Summary(s)
		}},
		{"tombstones", v.Tombstone != nil, "SELECT id FROM tombstones ORDER BY id", nil, func(rows *sql.Rows) error {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			return v.Tombstone(id)
		}},
		{"supersedes", v.Supersede != nil, `SELECT s.old_id, s.new_id FROM supersedes s JOIN observations o ON o.id = s.old_id
			JOIN observations n ON n.id = s.new_id` + strings.ReplaceAll(where, "project", "o.project") + ` ORDER BY s.old_id, s.new_id`, args, func(rows *sql.Rows) error {
			var s store.Supersession
			if err := rows.Scan(&s.Old, &s.New); err != nil {
				return err
			}
			return v.Supersede(s)
		}},
	}
	for _, st := range steps {
		if !st.on {
			continue
		}
		if err := r.walkRows(ctx, st.q, st.args, st.scan); err != nil {
			return fmt.Errorf("walk %s: %w", st.name, err)
		}
	}
	return nil
}

func (r *Replica) walkRows(ctx context.Context, q string, args []any, each func(*sql.Rows) error) error {
	rows, err := r.r.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

const promptColumns = `id, session_id, project, prompt_number, text, created_at, origin, hlc`

func scanPrompt(sc interface{ Scan(...any) error }) (memory.Prompt, error) {
	var p memory.Prompt
	var hlc int64
	err := sc.Scan(&p.ID, &p.SessionID, &p.Project, &p.PromptNumber, &p.Text, &p.CreatedAt, &p.Origin, &hlc)
	p.HLC = uint64(hlc)
	return p, err
}

// Lookup finds the observation, summary or prompt whose ID is id; ok is false when none
// has it (never stored, or forgotten).
func (r *Replica) Lookup(ctx context.Context, id string) (rec store.Record, ok bool, err error) {
	o, err := scanObservation(r.reads.queryRow(ctx, "SELECT "+obsColumns+" FROM observations WHERE id = ?", id))
	switch {
	case err == nil:
		rec = store.Record{Kind: store.OpObservation, Observation: &o}
	case !errors.Is(err, sql.ErrNoRows):
		return store.Record{}, false, fmt.Errorf("lookup %s: %w", id, err)
	}
	if rec.Kind == "" {
		s, err := scanSummary(r.reads.queryRow(ctx, "SELECT "+sumColumns+" FROM summaries WHERE id = ?", id))
		switch {
		case err == nil:
			rec = store.Record{Kind: store.OpSummary, Summary: &s}
		case !errors.Is(err, sql.ErrNoRows):
			return store.Record{}, false, fmt.Errorf("lookup %s: %w", id, err)
		}
	}
	if rec.Kind == "" {
		p, err := scanPrompt(r.reads.queryRow(ctx, "SELECT "+promptColumns+" FROM prompts WHERE id = ?", id))
		switch {
		case err == nil:
			rec = store.Record{Kind: store.OpPrompt, Prompt: &p}
		case errors.Is(err, sql.ErrNoRows):
			return store.Record{}, false, nil
		default:
			return store.Record{}, false, fmt.Errorf("lookup %s: %w", id, err)
		}
	}
	origin := ""
	switch {
	case rec.Observation != nil:
		origin = rec.Observation.Origin
	case rec.Summary != nil:
		origin = rec.Summary.Origin
	default:
		origin = rec.Prompt.Origin
	}
	if err := r.reads.queryRow(ctx, "SELECT name FROM devices WHERE origin = ?", origin).Scan(&rec.Device); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return store.Record{}, false, fmt.Errorf("lookup %s: %w", id, err)
	}
	return rec, true, nil
}

// HasSession reports whether a session with id is stored.
func (r *Replica) HasSession(ctx context.Context, id string) (bool, error) {
	var one int
	err := r.reads.queryRow(ctx, "SELECT 1 FROM sessions WHERE id = ?", id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		// A session whose events all still wait in the queue is known too: forgetting it
		// must tombstone it before its records are committed.
		return r.queuedSession(ctx, id)
	}
	if err != nil {
		return false, fmt.Errorf("find session: %w", err)
	}
	return true, nil
}

// queuedSession reports whether the pending queue holds an event of session id.
func (r *Replica) queuedSession(ctx context.Context, id string) (bool, error) {
	var one int
	err := r.q.QueryRowContext(ctx, "SELECT 1 FROM pending WHERE session_id = ? LIMIT 1", id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("find queued session: %w", err)
	}
	return true, nil
}

// FileName is the last component of a stored path (file_paths.name), as migration 0005
// computed it: what follows the last '/'.
func FileName(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}

// SessionPlatforms returns the coding agent that recorded each of the given sessions (the
// sessions it does not hold, or that name none, are left out).
func (r *Replica) SessionPlatforms(ctx context.Context, sessionIDs []string) (map[string]string, error) {
	out := make(map[string]string, len(sessionIDs))
	asked := make(map[string]bool, len(sessionIDs))
	for _, id := range sessionIDs {
		if asked[id] || id == "" {
			continue
		}
		asked[id] = true // each session once, whether or not it names an agent
		var p string
		err := r.reads.queryRow(ctx, "SELECT platform FROM sessions WHERE id = ?", id).Scan(&p)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("session platforms: %w", err)
		}
		if p != "" {
			out[id] = p
		}
	}
	return out, nil
}

// ProjectSessions counts the sessions of a project, from its maintained counts.
func (r *Replica) ProjectSessions(ctx context.Context, project string) (int, error) {
	_, _, sessions, err := r.projectCounts(ctx, project)
	return sessions, err
}
