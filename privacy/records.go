package privacy

import (
	"strings"

	"github.com/memnode/memnode/memory"
)

// The Clean* functions below are the gate for records: every string field of a record,
// its IDs, project and file lists included, passes Clean. Records that do not come from a
// hook event (imports, notes saved by hand) get no other cleaning, and records built from
// events get it a second time, so that no way into the store skips it.

// CleanSession cleans every string field of s.
func CleanSession(s *memory.Session) {
	cleanAll(&s.ID, &s.Project, &s.Platform, &s.Status, &s.Origin)
}

// CleanPrompt cleans every string field of p.
func CleanPrompt(p *memory.Prompt) {
	cleanAll(&p.ID, &p.SessionID, &p.Project, &p.Text, &p.Origin)
}

// CleanObservation cleans every string field and list of o. When that changes its content,
// the content hash is cleared so that the store computes it from what is kept.
func CleanObservation(o *memory.Observation) {
	before := o.HashContent()
	cleanAll(&o.ID, &o.SessionID, &o.Project, &o.Type, &o.Title, &o.Subtitle, &o.Narrative,
		&o.ToolName, &o.Model, &o.ContentHash, &o.Origin)
	for _, l := range []*[]string{&o.Facts, &o.Concepts, &o.FilesRead, &o.FilesModified} {
		*l = cleanList(*l)
	}
	if o.HashContent() != before {
		o.ContentHash = ""
	}
}

// CleanSummary cleans every string field of s.
func CleanSummary(s *memory.Summary) {
	cleanAll(&s.ID, &s.SessionID, &s.Project, &s.Request, &s.Investigated, &s.Learned, &s.Completed,
		&s.NextSteps, &s.Notes, &s.Model, &s.Origin)
}

// CleanDevice cleans every string field of d.
func CleanDevice(d *memory.Device) { cleanAll(&d.Origin, &d.Name) }

func cleanAll(fields ...*string) {
	for _, f := range fields {
		*f = Clean(*f)
	}
}

// cleanList cleans every item and drops the ones left empty.
func cleanList(v []string) []string {
	out := v[:0]
	for _, s := range v {
		if s = Clean(s); strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
