package store

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/memnode/memnode/memory"
)

// ClipMarker ends a field ClipOversized shortened.
const ClipMarker = " … [clipped: over the record size limit]"

// ClipOversized shortens the longest text fields of the batch's prompts, observations and
// summaries until each record fits memory.MaxRecordSize, and returns how many it clipped. The
// event pipeline calls it before Commit: what an agent produced is kept (its start), where
// a note a person saves is refused instead (Commit's ErrRecordTooLarge says why).
func (b *Batch) ClipOversized() int {
	clipped := 0
	for i := range b.Prompts {
		p := &b.Prompts[i]
		if clipFields(p, &p.Text) {
			clipped++
		}
	}
	for i := range b.Observations {
		o := &b.Observations[i]
		fields := []*string{&o.Narrative, &o.Title, &o.Subtitle}
		for j := range o.Facts {
			fields = append(fields, &o.Facts[j])
		}
		if clipFields(o, fields...) {
			clipped++
		}
	}
	for i := range b.Summaries {
		s := &b.Summaries[i]
		if clipFields(s, &s.Request, &s.Investigated, &s.Learned, &s.Completed, &s.NextSteps, &s.Notes) {
			clipped++
		}
	}
	return clipped
}

// clipFields shortens the longest of fields until rec's JSON fits memory.MaxRecordSize, leaving
// room for the ID, origin and stamp Commit adds. It reports whether it changed anything.
func clipFields(rec any, fields ...*string) bool {
	const room = 512
	changed := false
	for {
		size := jsonSize(rec)
		if size+room <= memory.MaxRecordSize {
			return changed
		}
		longest := fields[0]
		for _, f := range fields[1:] {
			if len(*f) > len(*longest) {
				longest = f
			}
		}
		if len(*longest) <= len(ClipMarker) {
			return changed // only lists and names left; the op writer refuses the record
		}
		over := size + room - memory.MaxRecordSize
		// Each byte cut shortens the JSON by at least one byte (escapes by up to six), so
		// one round is enough; the loop only guards the arithmetic.
		keep := max(0, len(*longest)-over-len(ClipMarker))
		for keep > 0 && !utf8.RuneStart((*longest)[keep]) {
			keep--
		}
		*longest = (*longest)[:keep] + ClipMarker
		changed = true
	}
}

// jsonSize is the length of rec's JSON; records are plain structs, so it cannot fail.
func jsonSize(rec any) int {
	b, err := json.Marshal(rec)
	if err != nil {
		panic(fmt.Sprintf("store: marshal %T: %v", rec, err))
	}
	return len(b)
}
