package memory

import "errors"

// ErrInvalid marks input the caller must fix (an HTTP API answers 400). Producers wrap it
// with the reason: fmt.Errorf("%w: project is required", memory.ErrInvalid).
var ErrInvalid = errors.New("invalid request")
