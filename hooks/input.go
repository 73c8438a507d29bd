package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/memnode/memnode/privacy"
)

// Errors of decodeInput.
var (
	ErrEmptyInput    = errors.New("empty hook input on stdin")
	ErrInputTooLarge = errors.New("hook input larger than 32 MiB")
	ErrInvalidInput  = errors.New("hook input is not a JSON object")
)

// truncatedKeepBytes is how much of an input over MaxInputBytes is kept.
const truncatedKeepBytes = 1 << 20

// deadliner is what *os.File offers for pipes: a read that gives up at a deadline, so a
// stdin that never closes cannot hold the hook past its budget.
type deadliner interface {
	SetReadDeadline(time.Time) error
}

// decodeInput reads the payload (size-capped) and returns it both raw and cleaned: every
// string in cleaned, keys included, has passed privacy.Clean. Only cleaned may be used
// for anything that leaves the process.
func decodeInput(ctx context.Context, r io.Reader) (raw, cleaned []byte, err error) {
	if r == nil {
		return nil, nil, ErrEmptyInput
	}
	if d, ok := r.(deadliner); ok {
		if dl, ok := ctx.Deadline(); ok {
			_ = d.SetReadDeadline(dl)
		}
	}
	raw, err = io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read stdin: %w", err)
	}
	if len(raw) > MaxInputBytes {
		// Keep the tool call, its output cut short with a marker, rather than drop it. Its
		// first MiB is kept: cleaning 32 MiB would not fit the hook's time budget, and no
		// compressor reads that far into one tool's output.
		cut, ok := truncateJSON(raw[:truncatedKeepBytes], TruncatedMarker)
		if !ok {
			return nil, nil, ErrInputTooLarge
		}
		raw = cut
	}
	return cleanInput(raw)
}

// cleanInput validates and cleans one payload.
func cleanInput(raw []byte) (rawOut, cleaned []byte, err error) {
	if len(raw) > MaxInputBytes {
		return nil, nil, ErrInputTooLarge
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return nil, nil, ErrEmptyInput
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, nil, ErrInvalidInput
	}
	cleaned, err = privacy.CleanJSON(trimmed)
	if err != nil {
		return nil, nil, fmt.Errorf("clean hook input: %w", err)
	}
	return trimmed, cleaned, nil
}
