package platform

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// TranscriptOpenTimeout bounds how long opening an agent's transcript or rollout may take:
// a path on a hung network mount must not hold a hook past its budget.
const TranscriptOpenTimeout = 2 * time.Second

// ErrNotRegular means a transcript path names something other than a regular file (a
// FIFO, a device, a directory): reading it could block forever, so it is not read.
var ErrNotRegular = errors.New("not a regular file")

// ErrOpenTimeout means the transcript did not open within TranscriptOpenTimeout.
var ErrOpenTimeout = errors.New("transcript did not open in time")

// OpenTranscript opens an agent's transcript (or rollout) for reading, only if it is a
// regular file: it is checked by stat first, opened non-blocking (a FIFO swapped in
// meanwhile does not block the open) and checked again on the open file; the stat and
// open give up after TranscriptOpenTimeout (the hook goes on without the transcript).
func OpenTranscript(path string) (*os.File, error) {
	type res struct {
		f   *os.File
		err error
	}
	done := make(chan res, 1)
	go func() {
		f, err := openRegular(path)
		done <- res{f, err}
	}()
	select {
	case r := <-done:
		return r.f, r.err
	case <-time.After(TranscriptOpenTimeout):
		go func() { // close what the stuck open may still return
			if r := <-done; r.f != nil {
				r.f.Close()
			}
		}()
		return nil, fmt.Errorf("open %s: %w", path, ErrOpenTimeout)
	}
}

func openRegular(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("open %s: %w", path, ErrNotRegular)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open %s: %w", path, ErrNotRegular)
	}
	return f, nil
}
