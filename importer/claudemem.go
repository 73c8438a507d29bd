package importer

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/memnode/memnode/internal/sqliteuri"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/privacy"
	"github.com/memnode/memnode/store"
)

// ClaudeMemOrigin is the origin of records imported from claude-mem: every device that
// imports the same claude-mem database produces identical records (IDs, origin, stamps),
// so imports on two devices converge instead of conflicting.
const ClaudeMemOrigin = "claude-mem"

// ErrNotClaudeMem reports a file that is not a claude-mem database.
var ErrNotClaudeMem = errors.New("not a claude-mem database (want ~/.claude-mem/claude-mem.db)")

// ClaudeMem reads a claude-mem SQLite database (read-only).
type ClaudeMem struct {
	db *sql.DB
}

// OpenClaudeMem opens a claude-mem database read-only. It uses the "sqlite3" database/sql
// driver the program links (the replica's, github.com/mattn/go-sqlite3): this package does
// not import it, so that search, which reads the export format here, links no SQLite.
func OpenClaudeMem(ctx context.Context, path string) (*ClaudeMem, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open claude-mem database: %w", err)
	}
	if !slices.Contains(sql.Drivers(), "sqlite3") {
		return nil, errors.New("open claude-mem database: this program links no SQLite driver (import github.com/mattn/go-sqlite3)")
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Set("_query_only", "true")
	q.Set("_busy_timeout", "5000")
	db, err := sql.Open("sqlite3", sqliteuri.File(path, q))
	if err != nil {
		return nil, fmt.Errorf("open claude-mem database: %w", err)
	}
	var n int
	err = db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'
		AND name IN ('sdk_sessions', 'observations', 'session_summaries', 'user_prompts')`).Scan(&n)
	if err != nil || n != 4 {
		db.Close()
		if err != nil {
			return nil, fmt.Errorf("open claude-mem database: %w: %v", ErrNotClaudeMem, err)
		}
		return nil, ErrNotClaudeMem
	}
	return &ClaudeMem{db: db}, nil
}

// Close closes the database.
func (c *ClaudeMem) Close() error { return c.db.Close() }

// Count returns how many records Each will produce.
func (c *ClaudeMem) Count(ctx context.Context) (int, error) {
	var n int
	err := c.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM sdk_sessions) + (SELECT COUNT(*) FROM user_prompts)
		+ (SELECT COUNT(*) FROM observations) + (SELECT COUNT(*) FROM session_summaries)`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count claude-mem records: %w", err)
	}
	return n, nil
}

// ms normalises an epoch that may be in seconds (very old claude-mem rows) to ms.
func ms(v int64) int64 {
	if v > 0 && v < 1e12 {
		return v * 1000
	}
	return v
}

// Each converts every session, prompt, observation and summary into a memnode record
// with a deterministic ID derived from its claude-mem row, and calls fn in that order.
// Every field goes through privacy (CleanSession, CleanObservation …): nothing private or
// secret is imported, IDs, projects, file lists and models included.
func (c *ClaudeMem) Each(ctx context.Context, fn func(Record) error) error {
	steps := []func(context.Context, func(Record) error) error{c.sessions, c.prompts, c.observations, c.summaries}
	for _, st := range steps {
		if err := st(ctx, fn); err != nil {
			return err
		}
	}
	return nil
}

func (c *ClaudeMem) each(ctx context.Context, what, q string, scan func(*sql.Rows) (Record, error), fn func(Record) error) error {
	rows, err := c.db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("read claude-mem %s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		rec, err := scan(rows)
		if err != nil {
			return fmt.Errorf("read claude-mem %s: %w", what, err)
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read claude-mem %s: %w", what, err)
	}
	return nil
}

// platform is a claude-mem session's platform_source as memnode names it: claude-mem
// before platform_source existed recorded Claude Code only.
func platform(p string) string {
	if p == "" {
		return "claude-code"
	}
	return memory.PlatformName(p)
}

func (c *ClaudeMem) sessions(ctx context.Context, fn func(Record) error) error {
	return c.each(ctx, "sessions", `SELECT content_session_id, project, COALESCE(platform_source, ''), started_at_epoch,
		COALESCE(completed_at_epoch, 0), COALESCE(status, 'active') FROM sdk_sessions ORDER BY id`,
		func(r *sql.Rows) (Record, error) {
			var s memory.Session
			err := r.Scan(&s.ID, &s.Project, &s.Platform, &s.StartedAt, &s.EndedAt, &s.Status)
			s.Platform, s.StartedAt, s.EndedAt = platform(s.Platform), ms(s.StartedAt), ms(s.EndedAt)
			s.Origin = ClaudeMemOrigin
			privacy.CleanSession(&s)
			// A fixed stamp from the session's own times: re-importing changes nothing, and
			// memnode's own later writes to the same session win.
			s.HLC = uint64(max(s.StartedAt, s.EndedAt)) << 16
			return Record{Kind: KindSession, Session: &s}, err
		}, fn)
}

func (c *ClaudeMem) prompts(ctx context.Context, fn func(Record) error) error {
	return c.each(ctx, "prompts", `SELECT p.id, p.content_session_id, COALESCE(s.project, ''), p.prompt_number, p.prompt_text,
		p.created_at_epoch FROM user_prompts p LEFT JOIN sdk_sessions s ON s.content_session_id = p.content_session_id ORDER BY p.id`,
		func(r *sql.Rows) (Record, error) {
			var p memory.Prompt
			var id int64
			err := r.Scan(&id, &p.SessionID, &p.Project, &p.PromptNumber, &p.Text, &p.CreatedAt)
			p.CreatedAt = ms(p.CreatedAt)
			p.ID = store.ImportID(p.CreatedAt, "claude-mem:prompt:"+strconv.FormatInt(id, 10)+":"+strconv.FormatInt(p.CreatedAt, 10))
			p.Origin, p.HLC = ClaudeMemOrigin, uint64(p.CreatedAt)<<16
			privacy.CleanPrompt(&p)
			return Record{Kind: KindPrompt, Prompt: &p, ClaudeMemID: id}, err
		}, fn)
}

func (c *ClaudeMem) observations(ctx context.Context, fn func(Record) error) error {
	return c.each(ctx, "observations", `SELECT o.id, COALESCE(s.content_session_id, o.memory_session_id),
		COALESCE(NULLIF(o.merged_into_project, ''), o.project), o.type, COALESCE(o.title, ''), COALESCE(o.subtitle, ''),
		COALESCE(NULLIF(o.narrative, ''), o.text, ''), COALESCE(o.facts, ''), COALESCE(o.concepts, ''),
		COALESCE(o.files_read, ''), COALESCE(o.files_modified, ''), COALESCE(o.prompt_number, 0),
		COALESCE(o.discovery_tokens, 0), COALESCE(o.generated_by_model, ''), o.created_at_epoch
		FROM observations o LEFT JOIN sdk_sessions s ON s.memory_session_id = o.memory_session_id ORDER BY o.id`,
		func(r *sql.Rows) (Record, error) {
			var o memory.Observation
			var id int64
			var facts, concepts, fr, fm string
			err := r.Scan(&id, &o.SessionID, &o.Project, &o.Type, &o.Title, &o.Subtitle, &o.Narrative, &facts, &concepts,
				&fr, &fm, &o.PromptNumber, &o.DiscoveryTokens, &o.Model, &o.CreatedAt)
			o.CreatedAt = ms(o.CreatedAt)
			o.ID = store.ImportID(o.CreatedAt, "claude-mem:obs:"+strconv.FormatInt(id, 10)+":"+strconv.FormatInt(o.CreatedAt, 10))
			o.Facts, o.Concepts = jsonList(facts), jsonList(concepts)
			o.FilesRead, o.FilesModified = jsonList(fr), jsonList(fm)
			o.ToolName = "claude-mem"
			o.Origin, o.HLC = ClaudeMemOrigin, uint64(o.CreatedAt)<<16
			privacy.CleanObservation(&o)
			if o.Title == "" {
				o.Title = firstWords(o.Narrative, 12)
			}
			return Record{Kind: KindObservation, Observation: &o, ClaudeMemID: id}, err
		}, fn)
}

func (c *ClaudeMem) summaries(ctx context.Context, fn func(Record) error) error {
	return c.each(ctx, "summaries", `SELECT m.id, COALESCE(s.content_session_id, m.memory_session_id),
		COALESCE(NULLIF(m.merged_into_project, ''), m.project), COALESCE(m.request, ''), COALESCE(m.investigated, ''),
		COALESCE(m.learned, ''), COALESCE(m.completed, ''), COALESCE(m.next_steps, ''), COALESCE(m.notes, ''),
		COALESCE(m.discovery_tokens, 0), m.created_at_epoch
		FROM session_summaries m LEFT JOIN sdk_sessions s ON s.memory_session_id = m.memory_session_id ORDER BY m.id`,
		func(r *sql.Rows) (Record, error) {
			var s memory.Summary
			var id int64
			err := r.Scan(&id, &s.SessionID, &s.Project, &s.Request, &s.Investigated, &s.Learned, &s.Completed,
				&s.NextSteps, &s.Notes, &s.DiscoveryTokens, &s.CreatedAt)
			s.CreatedAt = ms(s.CreatedAt)
			s.ID = store.ImportID(s.CreatedAt, "claude-mem:summary:"+strconv.FormatInt(id, 10)+":"+strconv.FormatInt(s.CreatedAt, 10))
			s.Origin, s.HLC = ClaudeMemOrigin, uint64(s.CreatedAt)<<16
			privacy.CleanSummary(&s)
			return Record{Kind: KindSummary, Summary: &s, ClaudeMemID: id}, err
		}, fn)
}

// jsonList reads claude-mem's JSON-array-as-TEXT columns; anything else becomes one item.
func jsonList(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" || s == "[]" || s == "null" {
		return nil
	}
	var v []string
	if err := json.Unmarshal([]byte(s), &v); err == nil {
		return v
	}
	return []string{s}
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	if len(f) == 0 {
		return "(untitled)"
	}
	return strings.Join(f, " ")
}
