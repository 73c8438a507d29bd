package search

import (
	"context"
	"strconv"
	"strings"

	"github.com/memnode/memnode/replica"
)

// resolveRef turns a record reference a caller gave into the ID it names. A number is
// claude-mem's ID of an observation, "S<number>" claude-mem's ID of a session summary
// (agents with claude-mem habits use both; the import kept the map). Anything else, and a
// number no import brought, is returned unchanged.
func (v *Service) resolveRef(ctx context.Context, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	kind, digits := replica.OpObservation, ref
	if rest, ok := strings.CutPrefix(ref, "S"); ok {
		kind, digits = replica.OpSummary, rest
	}
	num, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || num <= 0 || digits[0] == '+' {
		return ref, nil
	}
	id, ok, err := v.store.ClaudeMemRecord(ctx, kind, num)
	if err != nil || !ok {
		return ref, err
	}
	return id, nil
}
