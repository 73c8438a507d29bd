// Package importer moves memory in and out of memnode: the memnode JSONL export format
// (lossless, one record a line) and the conversion of a claude-mem database.
package importer

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/privacy"
	"github.com/memnode/memnode/store"
)

// Format identifies the export format in its header line.
const (
	Format = "memnode-export"
	// FormatVersion 2 added the supersede kind (corrections); version 1 files still import.
	FormatVersion = 2
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
	KindSupersede   = "supersede"
)

// Record is one line of an export as the domain's records: a kind and exactly one payload
// field. On the wire it is a Line (lines.go), the format's own types.
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
	// Supersede is a correction: the observation Old is replaced by the observation New.
	Supersede *store.Supersession `json:"supersede,omitempty"`
	// ClaudeMemID is the number claude-mem gave a prompt, observation or summary read from
	// its database; the node keeps the map so claude-mem style numeric IDs keep resolving.
	ClaudeMemID int64 `json:"claude_mem_id,omitempty"`
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
	case KindSupersede:
		if r.Supersede == nil || r.Supersede.Old == "" || r.Supersede.New == "" || r.Supersede.Old == r.Supersede.New {
			return bad("without two distinct observation IDs (old, new)")
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
	err  error // a gzip stream that does not open
}

// NewReader reads records from r, plain or gzip-compressed (an export kept as .jsonl.gz, or
// piped through gzip, is read as it is).
func NewReader(r io.Reader) *Reader {
	u, err := Uncompressed(r)
	if err != nil {
		return &Reader{err: err}
	}
	return &Reader{br: bufio.NewReaderSize(u, 1<<16)}
}

// gzipMagic starts every gzip stream (RFC 1952).
const gzipMagic = "\x1f\x8b"

// Uncompressed returns r's content, decompressed when it is a gzip stream.
func Uncompressed(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, _ := br.Peek(len(gzipMagic)); string(magic) != gzipMagic {
		return br, nil
	}
	z, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("%w: a gzip file that does not open: %v", ErrFormat, err)
	}
	return z, nil
}

// Next returns the next record, io.EOF at the end. Blank lines are skipped.
func (d *Reader) Next() (Record, error) {
	if d.err != nil {
		return Record{}, d.err
	}
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
		var l Line
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return Record{}, fmt.Errorf("line %d: %w: %v", d.line, ErrFormat, err)
		}
		rec := l.record()
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
func Batch(recs []Record) *store.ImportBatch {
	b := &store.ImportBatch{}
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
			b.ClaudeMemIDs = claudeMemID(b.ClaudeMemIDs, r, store.OpPrompt, p.ID)
		case KindObservation:
			o := *r.Observation
			o.Facts, o.Concepts = slices.Clone(o.Facts), slices.Clone(o.Concepts)
			o.FilesRead, o.FilesModified = slices.Clone(o.FilesRead), slices.Clone(o.FilesModified)
			privacy.CleanObservation(&o)
			b.Observations = append(b.Observations, o)
			b.ClaudeMemIDs = claudeMemID(b.ClaudeMemIDs, r, store.OpObservation, o.ID)
		case KindSummary:
			s := *r.Summary
			privacy.CleanSummary(&s)
			b.Summaries = append(b.Summaries, s)
			b.ClaudeMemIDs = claudeMemID(b.ClaudeMemIDs, r, store.OpSummary, s.ID)
		case KindTombstone:
			b.Tombstones = append(b.Tombstones, r.ID)
		case KindSupersede:
			b.Supersedes = append(b.Supersedes, *r.Supersede)
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
	return w.enc.Encode(lineOf(r))
}

// Flush flushes buffered lines.
func (w *Writer) Flush() error { return w.w.Flush() }

// Count is how many records were written.
func (w *Writer) Count() int { return w.n }

// ExportReader is the store an export reads (the SQLite replica implements it): every
// record kind in a stable order, optionally only one project's.
type ExportReader interface {
	Walk(ctx context.Context, project string, v store.Visitor) error
}

// Export writes the replicated state read from src as JSONL: a header, then devices,
// sessions, prompts, observations, summaries, (for a full export) tombstones, and the
// corrections' supersede links, each in a stable order. With project set, only that project's records.
func Export(ctx context.Context, src ExportReader, w io.Writer, project string, now time.Time) (int, error) {
	out := NewWriter(w)
	if err := out.Write(Record{Kind: KindHeader, Header: &Header{Format: Format, Version: FormatVersion, ExportedAt: now.UnixMilli(), Project: project}}); err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	v := store.Visitor{
		Device:      func(d memory.Device) error { return out.Write(Record{Kind: KindDevice, Device: &d}) },
		Session:     func(s memory.Session) error { return out.Write(Record{Kind: KindSession, Session: &s}) },
		Prompt:      func(p memory.Prompt) error { return out.Write(Record{Kind: KindPrompt, Prompt: &p}) },
		Observation: func(o memory.Observation) error { return out.Write(Record{Kind: KindObservation, Observation: &o}) },
		Summary:     func(s memory.Summary) error { return out.Write(Record{Kind: KindSummary, Summary: &s}) },
		Supersede:   func(s store.Supersession) error { return out.Write(Record{Kind: KindSupersede, Supersede: &s}) },
	}
	if project == "" {
		// Tombstones name no project: only a full export carries them.
		v.Tombstone = func(id string) error { return out.Write(Record{Kind: KindTombstone, ID: id}) }
	}
	if err := src.Walk(ctx, project, v); err != nil {
		return out.Count(), fmt.Errorf("export: %w", err)
	}
	if err := out.Flush(); err != nil {
		return out.Count(), fmt.Errorf("export: %w", err)
	}
	return out.Count(), nil
}

func claudeMemID(ids []store.ClaudeMemID, r Record, kind, id string) []store.ClaudeMemID {
	if r.ClaudeMemID <= 0 {
		return ids
	}
	return append(ids, store.ClaudeMemID{Kind: kind, Num: r.ClaudeMemID, ID: id})
}
