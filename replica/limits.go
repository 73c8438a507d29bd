package replica

import (
	"fmt"

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
