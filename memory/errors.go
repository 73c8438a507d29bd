package memory

import "errors"

// ErrInvalid marks input the caller must fix (an HTTP API answers 400). Producers wrap it
// with the reason: fmt.Errorf("%w: project is required", memory.ErrInvalid).
var ErrInvalid = errors.New("invalid request")

// MaxRecordSize bounds one record as it replicates (its JSON op payload, bytes). The replica
// refuses a larger record where it enters, so no record can stall device sync.
const MaxRecordSize = 1 << 20

// ErrRecordTooLarge marks a record over MaxRecordSize (an HTTP API answers 413); nothing of
// its batch is stored.
var ErrRecordTooLarge = errors.New("record too large")

// ErrStorageFull marks a write refused because the disk holding the data dir is full (an
// HTTP API answers 507). Nothing of it was kept; the same write succeeds once space returns.
var ErrStorageFull = errors.New("disk full")
