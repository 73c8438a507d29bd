package apitype

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memnode/memnode/memory"
)

// maxTitleRunes keeps an index row near 50–100 tokens.
const maxTitleRunes = 100

// A record's time is rendered here and nowhere else. FormatTime is the index's and a full
// record's (search, timeline, get, team search; CLI and MCP alike): the date and the time,
// in UTC. The session-start context and the file context group compact rows under day
// headings in the reader's zone: FormatDay heads a day, DayRow is a row under it with
// FormatClock's time. Every clock is 24-hour.

// FormatTime renders epoch ms compactly, in UTC.
func FormatTime(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04") }

// FormatDay is a day heading's date: "Nov 28, 2026".
func FormatDay(t time.Time) string { return t.Format("Jan 2, 2006") }

// FormatNow is a context's "now": day, time and the zone the context's times are in.
func FormatNow(t time.Time) string {
	return FormatDay(t) + " " + FormatClock(t) + " " + t.Format("MST")
}

// FormatClock is a row's time of day under a FormatDay heading: "09:14".
func FormatClock(t time.Time) string { return t.Format("15:04") }

// DayRow is one compact row under a FormatDay heading: "<id> <clock> <type emoji> <title>";
// the caller adds what its context says after the title.
func DayRow(id string, t time.Time, typ, title string) string {
	return id + " " + FormatClock(t) + " " + memory.TypeEmoji(typ) + " " + title
}

// WriteTeamIndex writes team search hits as one line each: ID, time, type, title, author,
// project.
func WriteTeamIndex(w io.Writer, hits []TeamHit) error {
	for _, h := range hits {
		if _, err := fmt.Fprintf(w, "%s  %s  %-9s %s  @%s  [%s]\n", h.ID, FormatTime(h.CreatedAt), h.Type, Clip(h.Title, maxTitleRunes), h.Author, h.Project); err != nil {
			return err
		}
	}
	return nil
}

// WriteIndex writes hits as one compact line each: ID, time, type, title, project, device.
func WriteIndex(w io.Writer, hits []Hit) error {
	for _, h := range hits {
		if _, err := io.WriteString(w, IndexLine(h)+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// IndexLine is one row of the index.
func IndexLine(h Hit) string {
	var b strings.Builder
	if h.Anchor {
		b.WriteString("> ")
	}
	id := h.ID
	if h.Short != "" {
		id = h.Short
	}
	fmt.Fprintf(&b, "%s  %s  %-9s %s  [%s", id, FormatTime(h.Time), h.Type, Clip(h.Title, maxTitleRunes), h.Project)
	if d := h.Device; d != "" {
		b.WriteString(" @" + d)
	} else if h.Origin != "" {
		b.WriteString(" @" + Clip(h.Origin, 12))
	}
	// Claude Code is where most records come from: only the other agents are named, so
	// an index of one agent's work pays nothing for it.
	if h.Platform != "" && h.Platform != DefaultPlatform {
		b.WriteString(" via " + h.Platform)
	}
	b.WriteString("]")
	if len(h.SupersededBy) > 0 {
		b.WriteString("  (superseded by " + strings.Join(h.SupersededBy, ", ") + ")")
	}
	if len(h.Corrects) > 0 {
		b.WriteString("  (corrects " + strings.Join(h.Corrects, ", ") + ")")
	}
	return b.String()
}

// write adds a record's "superseded by" and "corrects" lines.
func (l Links) write(b *strings.Builder) {
	line(b, "superseded by", strings.Join(l.SupersededBy, ", "))
	line(b, "corrects", strings.Join(l.Corrects, ", "))
}

// DefaultPlatform is the coding agent the index does not name (see IndexLine).
const DefaultPlatform = "claude-code"

// Clip shortens s to at most n runes, marking the cut with "…".
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// WriteRecords writes full records as readable text.
func WriteRecords(w io.Writer, recs Records) error {
	var b strings.Builder
	for i, it := range recs.Items {
		if i > 0 {
			b.WriteString("\n")
		}
		dev := it.Device
		switch {
		case it.Observation != nil:
			o := it.Observation
			fmt.Fprintf(&b, "## %s  [%s] %s\n", o.ID, o.Type, o.Title)
			fmt.Fprintf(&b, "time: %s  project: %s  session: %s  device: %s\n", FormatTime(o.CreatedAt), o.Project, o.SessionID, orOrigin(dev, o.Origin))
			line(&b, "subtitle", o.Subtitle)
			line(&b, "narrative", o.Narrative)
			list(&b, "facts", o.Facts)
			list(&b, "concepts", o.Concepts)
			list(&b, "files read", o.FilesRead)
			list(&b, "files modified", o.FilesModified)
			it.Links.write(&b)
		case it.Summary != nil:
			s := it.Summary
			fmt.Fprintf(&b, "## %s  [session summary]\n", s.ID)
			fmt.Fprintf(&b, "time: %s  project: %s  session: %s  device: %s\n", FormatTime(s.CreatedAt), s.Project, s.SessionID, orOrigin(dev, s.Origin))
			line(&b, "request", s.Request)
			line(&b, "investigated", s.Investigated)
			line(&b, "learned", s.Learned)
			line(&b, "completed", s.Completed)
			line(&b, "next steps", s.NextSteps)
			line(&b, "notes", s.Notes)
		case it.Prompt != nil:
			p := it.Prompt
			fmt.Fprintf(&b, "## %s  [prompt #%d]\n", p.ID, p.PromptNumber)
			fmt.Fprintf(&b, "time: %s  project: %s  session: %s  device: %s\n", FormatTime(p.CreatedAt), p.Project, p.SessionID, orOrigin(dev, p.Origin))
			line(&b, "text", p.Text)
		}
	}
	if len(recs.Missing) > 0 {
		fmt.Fprintf(&b, "\nnot found (never stored, or forgotten): %s\n", strings.Join(recs.Missing, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orOrigin(dev, origin string) string {
	if dev != "" {
		return dev
	}
	return origin
}

func line(b *strings.Builder, name, v string) {
	if v != "" {
		fmt.Fprintf(b, "%s: %s\n", name, v)
	}
}

func list(b *strings.Builder, name string, v []string) {
	if len(v) == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n", name)
	for _, s := range v {
		fmt.Fprintf(b, "  - %s\n", s)
	}
}
