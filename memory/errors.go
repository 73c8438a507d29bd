package memory

import "errors"

// ErrInvalid marks input the caller must fix (an HTTP API answers 400). Producers wrap it
// with the reason: fmt.Errorf("%w: project is required", memory.ErrInvalid).
var ErrInvalid = errors.New("invalid request")

// ErrRecordTooLarge marks a record over MaxRecordSize (an HTTP API answers 413); nothing of
// its batch is stored.
var ErrRecordTooLarge = errors.New("record too large")

// ErrStorageFull marks a write refused because the disk holding the data dir is full (an
// HTTP API answers 507). Nothing of it was kept; the same write succeeds once space returns.
var ErrStorageFull = errors.New("disk full")

// ErrClockAhead marks a stamp too far ahead of this device's wall clock (a broken clock or a
// forged stamp); such a record or op is refused, so one bad clock cannot drag every
// device's clock along (an HTTP API answers 400).
var ErrClockAhead = errors.New("clock stamp too far in the future")

// ErrCorrupt marks a request refused because the node found its database corrupt while it
// ran (an HTTP API answers 503): nothing more is written to it; 'memnode repair' (node
// stopped) recovers what is readable.
var ErrCorrupt = errors.New("database is corrupt")
