package replica

import (
	"fmt"
	"unicode/utf8"

	"github.com/memnode/memnode/memory"
)

// MaxRecordSize bounds the JSON payload of one op (one record as it replicates). Every
// record enters through the op writer, which refuses larger ones with
// memory.ErrRecordTooLarge, so every op a replica holds fits one sync message (sync's frame
// limit is 8 MiB, its payload limit 7 MiB): size can never stall an origin's strictly
// ordered op stream.
const MaxRecordSize = memory.MaxRecordSize

func checkRecordSize(kind, id string, payload []byte) error {
	if len(payload) <= MaxRecordSize {
		return nil
	}
	return fmt.Errorf("%s %s is %d KiB, over the %d KiB limit of one record (split it): %w",
		kind, id, len(payload)>>10, MaxRecordSize>>10, memory.ErrRecordTooLarge)
}

// clipMarker ends a field ClipOversized shortened.
const clipMarker = " … [clipped: over the record size limit]"

// ClipOversized shortens the longest text fields of the batch's prompts, observations and
// summaries until each record fits MaxRecordSize, and returns how many it clipped. The
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

// clipFields shortens the longest of fields until rec's JSON fits MaxRecordSize, leaving
// room for the ID, origin and stamp Commit adds. It reports whether it changed anything.
func clipFields(rec any, fields ...*string) bool {
	const room = 512
	changed := false
	for {
		size := len(mustJSON(rec))
		if size+room <= MaxRecordSize {
			return changed
		}
		longest := fields[0]
		for _, f := range fields[1:] {
			if len(*f) > len(*longest) {
				longest = f
			}
		}
		if len(*longest) <= len(clipMarker) {
			return changed // only lists and names left; the op writer refuses the record
		}
		over := size + room - MaxRecordSize
		// Each byte cut shortens the JSON by at least one byte (escapes by up to six), so
		// one round is enough; the loop only guards the arithmetic.
		keep := max(0, len(*longest)-over-len(clipMarker))
		for keep > 0 && !utf8.RuneStart((*longest)[keep]) {
			keep--
		}
		*longest = (*longest)[:keep] + clipMarker
		changed = true
	}
}
