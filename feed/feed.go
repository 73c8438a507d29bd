// Package feed is memnode's in-process change feed: every commit to the memory store is
// published once, and any number of subscribers (device sync, the embedding worker, the
// viewer's live stream, team push) each receive it.
//
// The model is syncthing's lib/events: publishing never blocks the committer, and a subscriber
// that falls behind is told so (Overflowed) instead of slowing the writer down. A subscriber
// that sees an overflow treats it as "something changed, rescan"; nothing else is lost,
// because the store — not the feed — is the source of truth.
package feed

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Origin says where a committed change came from.
type Origin uint8

const (
	// Local is a change made on this device: hook events, notes, local forgets.
	Local Origin = iota + 1
	// Device is a change applied from a paired device (sync ops).
	Device
	// Team is a change pulled from the team cluster.
	Team
	// Import is a change read from an export file or a claude-mem database.
	Import
)

func (o Origin) String() string {
	switch o {
	case Local:
		return "local"
	case Device:
		return "device"
	case Team:
		return "team"
	case Import:
		return "import"
	}
	return "unknown"
}

// Change describes one committed transaction. ID slices hold the records it added or
// changed; Forgotten holds the IDs whose content it purged (records or sessions).
type Change struct {
	Seq          uint64 // assigned by the bus; strictly increasing
	At           time.Time
	Origin       Origin
	Observations []string
	Summaries    []string
	Prompts      []string
	Sessions     []string
	Devices      []string
	Forgotten    []string
	// LocalOps is true when the commit appended ops of this device's origin (sync pushes).
	LocalOps bool
}

// Empty reports whether the change names nothing.
func (c Change) Empty() bool {
	return len(c.Observations)+len(c.Summaries)+len(c.Prompts)+len(c.Sessions)+
		len(c.Devices)+len(c.Forgotten) == 0 && !c.LocalOps
}

// DefaultBuffer is how many changes a subscriber may fall behind before it is told it
// overflowed.
const DefaultBuffer = 1024

// Bus fans changes out to subscribers. The zero value is not usable; call New.
type Bus struct {
	mu     sync.Mutex
	seq    uint64
	subs   map[*Subscription]struct{}
	now    func() time.Time
	closed bool
}

// New returns an empty bus.
func New() *Bus {
	return &Bus{subs: make(map[*Subscription]struct{}), now: time.Now}
}

// Publish hands c to every subscriber and returns the sequence number it was given. It never
// blocks on a subscriber. Publishing an empty change, or on a closed bus, does nothing and
// returns 0. A nil bus is allowed (stores opened without a feed).
func (b *Bus) Publish(c Change) uint64 {
	if b == nil || c.Empty() {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0
	}
	b.seq++
	c.Seq = b.seq
	if c.At.IsZero() {
		c.At = b.now()
	}
	for s := range b.subs {
		s.push(c)
	}
	return c.Seq
}

// Subscribe registers a subscriber that may fall up to buf changes behind (DefaultBuffer when
// buf <= 0). Close the subscription when done.
func (b *Bus) Subscribe(buf int) *Subscription {
	if buf <= 0 {
		buf = DefaultBuffer
	}
	s := &Subscription{bus: b, max: buf, ready: make(chan struct{}, 1)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.closed = true
		close(s.ready)
		return s
	}
	b.subs[s] = struct{}{}
	return s
}

// Close ends every subscription: their Ready channels close and Next returns ErrClosed once
// the pending changes are taken. Close is idempotent.
func (b *Bus) Close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	for s := range b.subs {
		s.close()
	}
	b.subs = nil
}

// Subscription is one subscriber's view of the bus. Its methods are safe for concurrent use.
type Subscription struct {
	bus        *Bus
	max        int
	ready      chan struct{}
	mu         sync.Mutex
	pending    []Change
	overflowed bool
	closed     bool
}

func (s *Subscription) push(c Change) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if len(s.pending) >= s.max {
		s.pending = s.pending[:0]
		s.overflowed = true
	} else {
		s.pending = append(s.pending, c)
	}
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

func (s *Subscription) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	close(s.ready)
}

// Ready is signalled (without blocking the publisher) when changes are pending, and closed
// when the subscription or the bus is closed. Receive from it, then call Take.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Take returns the pending changes in publish order and whether some were dropped since the
// last Take because the subscriber fell more than its buffer behind.
func (s *Subscription) Take() (changes []Change, overflowed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	changes, overflowed = s.pending, s.overflowed
	s.pending, s.overflowed = nil, false
	return changes, overflowed
}

// Next waits until changes are pending, ctx is done, or the subscription is closed, and
// returns what Take returns. It returns ErrClosed only once nothing is left to take.
func (s *Subscription) Next(ctx context.Context) ([]Change, bool, error) {
	for {
		if ch, of := s.Take(); len(ch) > 0 || of {
			return ch, of, nil
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case _, ok := <-s.ready:
			if !ok {
				if ch, of := s.Take(); len(ch) > 0 || of {
					return ch, of, nil
				}
				return nil, false, ErrClosed
			}
		}
	}
}

// Close unsubscribes. It is idempotent.
func (s *Subscription) Close() {
	if s.bus != nil {
		s.bus.mu.Lock()
		delete(s.bus.subs, s)
		s.bus.mu.Unlock()
	}
	s.close()
}

// ErrClosed is returned by Next after the subscription or its bus was closed.
var ErrClosed = errors.New("feed: subscription closed")
