// Package importer moves memory in and out of memnode: the memnode JSONL export format
// (lossless, one record a line) and the conversion of a claude-mem database.
package importer

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/privacy"
	"github.com/memnode/memnode/replica"
)

// Format identifies the export format in its header line.
const (
	Format        = "memnode-export"
	FormatVersion = 1
)

// Record kinds.
const (
	KindHeader      = "header"
	KindDevice      = "device"
	KindSession     = "session"
	KindPrompt      = "prompt"
	KindObservation = "observation"
	KindSummary     = "summary"
	KindTombstone   = "tombstone"
)

// Record is one line of an export: a kind and exactly one payload field.
type Record struct {
	Kind        string              `json:"kind"`
	Header      *Header             `json:"header,omitempty"`
	Device      *memory.Device      `json:"device,omitempty"`
	Session     *memory.Session     `json:"session,omitempty"`
	Prompt      *memory.Prompt      `json:"prompt,omitempty"`
	Observation *memory.Observation `json:"observation,omitempty"`
	Summary     *memory.Summary     `json:"summary,omitempty"`
	// ID is the forgotten ID of a tombstone.
	ID string `json:"id,omitempty"`
}

// Header is the first line of an export.
type Header struct {
	Format     string `json:"format"`
	Version    int    `json:"version"`
	ExportedAt int64  `json:"exported_at"` // epoch ms
	Project    string `json:"project,omitempty"`
	Source     string `json:"source,omitempty"`
}

// ErrFormat reports a line that is not a valid record.
var ErrFormat = errors.New("bad import record")

// Validate checks that the record's kind and payload agree and that it carries its ID.
func (r *Record) Validate() error {
	bad := func(what string) error { return fmt.Errorf("%w: %s %s", ErrFormat, r.Kind, what) }
	switch r.Kind {
	case KindHeader:
		if r.Header == nil || r.Header.Format != Format {
			return bad("is not a memnode export header")
		}
		if r.Header.Version > FormatVersion {
			return fmt.Errorf("%w: export version %d is newer than this memnode (%d): upgrade memnode", ErrFormat, r.Header.Version, FormatVersion)
		}
	case KindDevice:
		if r.Device == nil || r.Device.Origin == "" {
			return bad("without origin")
		}
	case KindSession:
		if r.Session == nil || r.Session.ID == "" {
			return bad("without id")
		}
	case KindPrompt:
		if r.Prompt == nil || r.Prompt.ID == "" {
			return bad("without id")
		}
	case KindObservation:
		if r.Observation == nil || r.Observation.ID == "" {
			return bad("without id")
		}
	case KindSummary:
		if r.Summary == nil || r.Summary.ID == "" {
			return bad("without id")
		}
	case KindTombstone:
		if r.ID == "" {
			return bad("without id")
		}
	default:
		return fmt.Errorf("%w: unknown kind %q", ErrFormat, r.Kind)
	}
	return nil
}

// MaxLine bounds one JSONL line.
const MaxLine = 16 << 20

// Reader decodes JSONL records.
type Reader struct {
	br   *bufio.Reader
	line int
}

// NewReader reads records from r.
func NewReader(r io.Reader) *Reader { return &Reader{br: bufio.NewReaderSize(r, 1<<16)} }

// Next returns the next record, io.EOF at the end. Blank lines are skipped.
func (d *Reader) Next() (Record, error) {
	for {
		raw, err := d.readLine()
		if err != nil {
			return Record{}, err
		}
		d.line++
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		var rec Record
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return Record{}, fmt.Errorf("line %d: %w: %v", d.line, ErrFormat, err)
		}
		if err := rec.Validate(); err != nil {
			return Record{}, fmt.Errorf("line %d: %w", d.line, err)
		}
		return rec, nil
	}
}

func (d *Reader) readLine() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := d.br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > MaxLine {
			return nil, fmt.Errorf("line %d: %w: longer than %d bytes", d.line+1, ErrFormat, MaxLine)
		}
		switch {
		case err == nil:
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(buf) > 0:
			return buf, nil
		default:
			return nil, err
		}
	}
}

// Batch turns records into a replica import batch (headers are dropped). It is the privacy
// gate of every import (memnode JSONL, claude-mem): every field of every record passes
// privacy.Clean*, whatever the file holds. Tombstone IDs are kept as they are.
func Batch(recs []Record) *replica.ImportBatch {
	b := &replica.ImportBatch{}
	for _, r := range recs {
		switch r.Kind {
		case KindDevice:
			d := *r.Device
			privacy.CleanDevice(&d)
			b.Devices = append(b.Devices, d)
		case KindSession:
			s := *r.Session
			privacy.CleanSession(&s)
			b.Sessions = append(b.Sessions, s)
		case KindPrompt:
			p := *r.Prompt
			privacy.CleanPrompt(&p)
			b.Prompts = append(b.Prompts, p)
		case KindObservation:
			o := *r.Observation
			o.Facts, o.Concepts = slices.Clone(o.Facts), slices.Clone(o.Concepts)
			o.FilesRead, o.FilesModified = slices.Clone(o.FilesRead), slices.Clone(o.FilesModified)
			privacy.CleanObservation(&o)
			b.Observations = append(b.Observations, o)
		case KindSummary:
			s := *r.Summary
			privacy.CleanSummary(&s)
			b.Summaries = append(b.Summaries, s)
		case KindTombstone:
			b.Tombstones = append(b.Tombstones, r.ID)
		}
	}
	return b
}

// Writer encodes records as JSONL.
type Writer struct {
	w   *bufio.Writer
	enc *json.Encoder
	n   int
}

// NewWriter writes records to w; call Flush at the end.
func NewWriter(w io.Writer) *Writer {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &Writer{w: bw, enc: enc}
}

// Write writes one record (json.Encoder ends it with a newline).
func (w *Writer) Write(r Record) error {
	w.n++
	return w.enc.Encode(r)
}

// Flush flushes buffered lines.
func (w *Writer) Flush() error { return w.w.Flush() }

// Count is how many records were written.
func (w *Writer) Count() int { return w.n }

// Export writes the replicated state read from db (replica.ReadDB()) as JSONL: a header,
// then devices, sessions, prompts, observations, summaries and (for a full export)
// tombstones, each in a stable order. With project set, only that project's records.
func Export(ctx context.Context, db *sql.DB, w io.Writer, project string, now time.Time) (int, error) {
	out := NewWriter(w)
	if err := out.Write(Record{Kind: KindHeader, Header: &Header{Format: Format, Version: FormatVersion, ExportedAt: now.UnixMilli(), Project: project}}); err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	where, args := "", []any{}
	if project != "" {
		where, args = " WHERE project = ?", []any{project}
	}
	steps := []struct {
		name string
		q    string
		scan func(*sql.Rows) (Record, error)
	}{
		{"devices", "SELECT origin, name FROM devices ORDER BY origin", func(r *sql.Rows) (Record, error) {
			var d memory.Device
			err := r.Scan(&d.Origin, &d.Name)
			return Record{Kind: KindDevice, Device: &d}, err
		}},
		{"sessions", "SELECT id, project, platform, started_at, COALESCE(ended_at, 0), status, origin, hlc FROM sessions" + where + " ORDER BY started_at, id",
			func(r *sql.Rows) (Record, error) {
				var s memory.Session
				var hlc int64
				err := r.Scan(&s.ID, &s.Project, &s.Platform, &s.StartedAt, &s.EndedAt, &s.Status, &s.Origin, &hlc)
				s.HLC = uint64(hlc)
				return Record{Kind: KindSession, Session: &s}, err
			}},
		{"prompts", "SELECT id, session_id, project, prompt_number, text, created_at, origin, hlc FROM prompts" + where + " ORDER BY created_at, id",
			func(r *sql.Rows) (Record, error) {
				var p memory.Prompt
				var hlc int64
				err := r.Scan(&p.ID, &p.SessionID, &p.Project, &p.PromptNumber, &p.Text, &p.CreatedAt, &p.Origin, &hlc)
				p.HLC = uint64(hlc)
				return Record{Kind: KindPrompt, Prompt: &p}, err
			}},
		{"observations", "SELECT " + replica.ObservationColumns + " FROM observations" + where + " ORDER BY created_at, id",
			func(r *sql.Rows) (Record, error) {
				o, err := replica.ScanObservation(r)
				return Record{Kind: KindObservation, Observation: &o}, err
			}},
		{"summaries", "SELECT " + replica.SummaryColumns + " FROM summaries" + where + " ORDER BY created_at, id",
			func(r *sql.Rows) (Record, error) {
				s, err := replica.ScanSummary(r)
				return Record{Kind: KindSummary, Summary: &s}, err
			}},
	}
	if project == "" {
		steps = append(steps, struct {
			name string
			q    string
			scan func(*sql.Rows) (Record, error)
		}{"tombstones", "SELECT id FROM tombstones ORDER BY id", func(r *sql.Rows) (Record, error) {
			var rec Record
			err := r.Scan(&rec.ID)
			rec.Kind = KindTombstone
			return rec, err
		}})
	}
	for _, st := range steps {
		a := args
		if st.name == "devices" || st.name == "tombstones" {
			a = nil
		}
		if err := exportRows(ctx, db, out, st.q, a, st.scan); err != nil {
			return out.Count(), fmt.Errorf("export %s: %w", st.name, err)
		}
	}
	if err := out.Flush(); err != nil {
		return out.Count(), fmt.Errorf("export: %w", err)
	}
	return out.Count(), nil
}

func exportRows(ctx context.Context, db *sql.DB, out *Writer, q string, args []any, scan func(*sql.Rows) (Record, error)) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		rec, err := scan(rows)
		if err != nil {
			return err
		}
		if err := out.Write(rec); err != nil {
			return err
		}
	}
	return rows.Err()
}
