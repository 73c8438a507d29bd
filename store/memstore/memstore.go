// Package memstore is a second implementation of the store contract, in memory: no SQLite,
// no files. It exists to keep the contract honest — `store/storetest` runs against it and
// against the SQLite replica, so a case that only SQLite's behaviour satisfies shows up as a
// failure here — and as a fake for tests that need a store's semantics without a database.
// It is not a production backend: nothing is durable, and its full-text match is a plain
// token scan (quoted phrases, a trailing * for a prefix, implicit AND, OR) with a simple
// negative term-frequency score standing in for bm25.
package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// Store is an in-memory store. The zero value is not usable: call New.
type Store struct {
	mu     sync.Mutex
	origin string
	hlc    uint64
	pos    int64 // local arrival position of the next record

	sessions   map[string]memory.Session
	states     map[string]store.SessionState
	prompts    map[string]row[memory.Prompt]
	obs        map[string]row[memory.Observation]
	sums       map[string]row[memory.Summary]
	hashes     map[string]bool // session \x00 content hash of every stored observation
	devices    map[string]memory.Device
	tombstones map[string]bool
	ops        map[string][]store.Op // origin → its ops, seq i+1 at index i

	queue   []store.PendingEvent
	nextQ   int64
	seen    map[string]bool // event IDs a commit stored
	claimed map[string]bool
}

// row is a stored record and its local arrival position.
type row[T any] struct {
	rec T
	pos int64
}

// New returns an empty store whose local ops carry origin.
func New(origin string) *Store {
	return &Store{
		origin: origin, sessions: map[string]memory.Session{}, states: map[string]store.SessionState{},
		prompts: map[string]row[memory.Prompt]{}, obs: map[string]row[memory.Observation]{}, sums: map[string]row[memory.Summary]{},
		hashes: map[string]bool{}, devices: map[string]memory.Device{}, tombstones: map[string]bool{},
		ops: map[string][]store.Op{}, seen: map[string]bool{}, claimed: map[string]bool{},
	}
}

// Origin returns the origin of this store's local ops.
func (s *Store) Origin() string { return s.origin }

// tick returns a stamp greater than every stamp issued or observed (an HLC).
func (s *Store) tick() uint64 {
	wall := uint64(time.Now().UnixMilli()) << store.HLCLogicalBits
	s.hlc = max(s.hlc+1, wall)
	return s.hlc
}

func (s *Store) appendLocal(kind, recordID string, hlc uint64, payload any) {
	b, err := json.Marshal(payload)
	if err != nil {
		panic(fmt.Sprintf("memstore: marshal %T: %v", payload, err)) // plain structs
	}
	log := s.ops[s.origin]
	s.ops[s.origin] = append(log, store.Op{Origin: s.origin, Seq: uint64(len(log)) + 1, HLC: hlc, Kind: kind, RecordID: recordID, Payload: b})
}

func (s *Store) state(id string) store.SessionState {
	if st, ok := s.states[id]; ok {
		return st
	}
	return store.SessionState{SessionID: id}
}

// Commit stores a batch of local changes at once, as the contract's Commit does.
func (s *Store) Commit(_ context.Context, b *store.Batch) (store.CommitResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, base := range b.Claimed {
		if !s.tombstones[base.SessionID] && s.state(base.SessionID) != base {
			return store.CommitResult{}, fmt.Errorf("%w: session %s", store.ErrStaleClaim, base.SessionID)
		}
	}
	var res store.CommitResult
	for _, in := range b.Sessions {
		if s.tombstones[in.ID] {
			continue
		}
		in.HLC, in.Origin = s.tick(), s.origin
		s.mergeSession(in)
		s.appendLocal(store.OpSession, in.ID, in.HLC, in)
	}
	for _, st := range b.States {
		if !s.tombstones[st.SessionID] {
			s.states[st.SessionID] = st
		}
	}
	for _, p := range b.Prompts {
		if s.tombstones[p.SessionID] {
			continue
		}
		p.HLC, p.Origin = s.tick(), s.origin
		p.ID = store.NewID(p.HLC, p.Origin)
		s.prompts[p.ID] = row[memory.Prompt]{p, s.next()}
		s.appendLocal(store.OpPrompt, p.ID, p.HLC, p)
		res.Prompts = append(res.Prompts, p)
	}
	for _, o := range b.Observations {
		if s.tombstones[o.SessionID] {
			continue
		}
		key := o.SessionID + "\x00" + o.HashContent()
		if s.hashes[key] {
			res.Duplicates++
			continue
		}
		s.hashes[key] = true
		o.HLC, o.Origin = s.tick(), s.origin
		o.ID = store.NewID(o.HLC, o.Origin)
		s.obs[o.ID] = row[memory.Observation]{o, s.next()}
		s.appendLocal(store.OpObservation, o.ID, o.HLC, o)
		res.Observations = append(res.Observations, o)
	}
	for _, sm := range b.Summaries {
		if s.tombstones[sm.SessionID] {
			continue
		}
		sm.HLC, sm.Origin = s.tick(), s.origin
		sm.ID = store.NewID(sm.HLC, sm.Origin)
		s.sums[sm.ID] = row[memory.Summary]{sm, s.next()}
		s.appendLocal(store.OpSummary, sm.ID, sm.HLC, sm)
		res.Summaries = append(res.Summaries, sm)
	}
	s.queue = slices.DeleteFunc(s.queue, func(ev store.PendingEvent) bool { return slices.Contains(b.Done, ev.ID) })
	for _, id := range b.DoneEvents {
		s.seen[id] = true
	}
	return res, nil
}

func (s *Store) next() int64 { s.pos++; return s.pos }

// mergeSession applies a session write by the LWW rule: the higher stamp wins (ties by
// origin), and the earliest start is kept whichever wins.
func (s *Store) mergeSession(in memory.Session) {
	cur, ok := s.sessions[in.ID]
	if !ok {
		s.sessions[in.ID] = in
		return
	}
	start := min(cur.StartedAt, in.StartedAt)
	if in.HLC > cur.HLC || (in.HLC == cur.HLC && in.Origin > cur.Origin) {
		cur = in
	}
	cur.StartedAt = start
	s.sessions[in.ID] = cur
}

// VersionVector returns every origin's highest contiguous seq held.
func (s *Store) VersionVector(context.Context) (store.VersionVector, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vv := store.VersionVector{}
	for o, log := range s.ops {
		if len(log) > 0 {
			vv[o] = uint64(len(log))
		}
	}
	return vv, nil
}

// OpsSince returns up to limit ops of origin after seq after, in seq order.
func (s *Store) OpsSince(_ context.Context, origin string, after uint64, limit int) ([]store.Op, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	log := s.ops[origin]
	if after >= uint64(len(log)) {
		return nil, nil
	}
	out := slices.Clone(log[after:min(uint64(len(log)), after+uint64(limit))])
	for i := range out {
		out[i].Payload = slices.Clone(out[i].Payload)
	}
	return out, nil
}

// ApplyOps applies remote ops: each origin's in seq order, duplicates and ops past a gap
// skipped and counted. A malformed op fails the call before anything is applied.
func (s *Store) ApplyOps(_ context.Context, ops []store.Op) (store.ApplyResult, error) {
	for _, op := range ops {
		if op.Origin == "" || op.Seq == 0 || op.Kind == "" || op.RecordID == "" {
			return store.ApplyResult{}, fmt.Errorf("apply: %w: %+v", store.ErrBadOp, op)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var res store.ApplyResult
	for _, op := range ops {
		have := uint64(len(s.ops[op.Origin]))
		switch {
		case op.Seq <= have:
			res.Duplicates++
			continue
		case op.Seq > have+1:
			res.Gaps++
			continue
		}
		s.hlc = max(s.hlc, op.HLC)
		op.Payload = slices.Clone(op.Payload)
		if err := s.applyOne(&op); err != nil {
			return res, err
		}
		s.ops[op.Origin] = append(s.ops[op.Origin], op)
		res.Applied++
	}
	return res, nil
}

// applyOne applies a remote op; a record the store holds a tombstone for is not stored,
// and its op keeps no payload.
func (s *Store) applyOne(op *store.Op) error {
	decode := func(v any) error {
		if err := json.Unmarshal(op.Payload, v); err != nil {
			return fmt.Errorf("apply %s %s: %w: %w", op.Kind, op.RecordID, store.ErrBadOp, err)
		}
		return nil
	}
	if s.tombstones[op.RecordID] {
		if op.Kind != store.OpForget {
			op.Payload = nil
		}
		return nil
	}
	if op.Payload == nil {
		return nil // a purged copy: the record was forgotten where it came from
	}
	switch op.Kind {
	case store.OpSession:
		var in memory.Session
		if err := decode(&in); err != nil {
			return err
		}
		s.mergeSession(in)
	case store.OpPrompt:
		var p memory.Prompt
		if err := decode(&p); err != nil {
			return err
		}
		if s.tombstones[p.SessionID] {
			op.Payload = nil
		} else if _, ok := s.prompts[p.ID]; !ok {
			s.prompts[p.ID] = row[memory.Prompt]{p, s.next()}
		}
	case store.OpObservation:
		var o memory.Observation
		if err := decode(&o); err != nil {
			return err
		}
		if s.tombstones[o.SessionID] {
			op.Payload = nil
		} else if _, ok := s.obs[o.ID]; !ok {
			s.obs[o.ID] = row[memory.Observation]{o, s.next()}
			s.hashes[o.SessionID+"\x00"+o.HashContent()] = true
		}
	case store.OpSummary:
		var sm memory.Summary
		if err := decode(&sm); err != nil {
			return err
		}
		if s.tombstones[sm.SessionID] {
			op.Payload = nil
		} else if _, ok := s.sums[sm.ID]; !ok {
			s.sums[sm.ID] = row[memory.Summary]{sm, s.next()}
		}
	case store.OpDevice:
		var d memory.Device
		if err := decode(&d); err != nil {
			return err
		}
		s.devices[d.Origin] = d
	case store.OpForget:
		s.forget(op.RecordID)
	}
	return nil
}

// Forget forgets records or whole sessions by ID and returns how many of them it knew.
func (s *Store) Forget(_ context.Context, ids []string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	found := 0
	for _, id := range ids {
		if s.known(id) {
			found++
		}
		hlc := s.tick()
		s.forget(id)
		s.appendLocal(store.OpForget, id, hlc, map[string]string{"id": id})
	}
	return found, nil
}

func (s *Store) known(id string) bool {
	_, p := s.prompts[id]
	_, o := s.obs[id]
	_, m := s.sums[id]
	_, ss := s.sessions[id]
	return p || o || m || ss || slices.ContainsFunc(s.queue, func(ev store.PendingEvent) bool { return ev.SessionID == id })
}

// forget tombstones id and removes what it names: a record, or a session with all its
// records. The content leaves the op-log too (payloads of the removed records' ops).
func (s *Store) forget(id string) {
	s.tombstones[id] = true
	gone := map[string]bool{id: true}
	if p, ok := s.prompts[id]; ok {
		st := s.state(p.rec.SessionID)
		if _, has := s.states[p.rec.SessionID]; has {
			if p.rec.PromptNumber == st.PromptCount {
				st.TurnPrivate = true
			}
			if st.FirstPrompt == p.rec.Text {
				st.FirstPrompt = ""
			}
			if st.LastPrompt == p.rec.Text {
				st.LastPrompt = ""
			}
			s.states[p.rec.SessionID] = st
		}
	}
	if _, ok := s.sessions[id]; ok {
		delete(s.sessions, id)
		delete(s.states, id)
		for rid, p := range s.prompts {
			if p.rec.SessionID == id {
				gone[rid] = true
			}
		}
		for rid, o := range s.obs {
			if o.rec.SessionID == id {
				gone[rid] = true
			}
		}
		for rid, m := range s.sums {
			if m.rec.SessionID == id {
				gone[rid] = true
			}
		}
		s.queue = slices.DeleteFunc(s.queue, func(ev store.PendingEvent) bool { return ev.SessionID == id })
	}
	for rid := range gone {
		delete(s.prompts, rid)
		delete(s.obs, rid)
		delete(s.sums, rid)
	}
	for origin, log := range s.ops {
		for i := range log {
			if gone[log[i].RecordID] && log[i].Kind != store.OpForget {
				log[i].Payload = nil
			}
		}
		s.ops[origin] = log
	}
}

// GetObservations returns the stored observations among ids, in the order asked.
func (s *Store) GetObservations(_ context.Context, ids []string) ([]memory.Observation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []memory.Observation
	for _, id := range ids {
		if o, ok := s.obs[id]; ok {
			out = append(out, o.rec)
		}
	}
	return out, nil
}

// CanonicalDump renders the replicated state deterministically (sessions as the replica
// renders them; other records as their JSON).
func (s *Store) CanonicalDump(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, id := range sortedKeys(s.sessions) {
		x := s.sessions[id]
		fmt.Fprintf(&b, "session\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%d\n", x.ID, x.Project, x.Platform, x.StartedAt, x.EndedAt, x.Status, x.Origin, x.HLC)
	}
	dumpJSON(&b, "prompt", s.prompts)
	dumpJSON(&b, "observation", s.obs)
	dumpJSON(&b, "summary", s.sums)
	for _, o := range sortedKeys(s.devices) {
		fmt.Fprintf(&b, "device\t%s\t%s\n", o, s.devices[o].Name)
	}
	for _, id := range sortedKeys(s.tombstones) {
		fmt.Fprintf(&b, "tombstone\t%s\n", id)
	}
	return b.String(), nil
}

func dumpJSON[T any](b *strings.Builder, name string, rows map[string]row[T]) {
	for _, id := range sortedKeys(rows) {
		j, _ := json.Marshal(rows[id].rec)
		fmt.Fprintf(b, "%s\t%s\n", name, j)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// OpPayloadContains reports whether any op payload still holds text.
func (s *Store) OpPayloadContains(_ context.Context, text string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, log := range s.ops {
		for _, op := range log {
			if strings.Contains(string(op.Payload), text) {
				return true, nil
			}
		}
	}
	return false, nil
}

// SetDeviceName names an origin's device (an LWW register that replicates as a device op).
func (s *Store) SetDeviceName(_ context.Context, origin, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := memory.Device{Origin: origin, Name: name}
	s.devices[origin] = d
	s.appendLocal(store.OpDevice, origin, s.tick(), d)
	return nil
}

// Enqueue queues an event; dup is true when its ID is queued or was stored already.
func (s *Store) Enqueue(_ context.Context, ev store.PendingEvent) (dup bool, err error) {
	if ev.EventID == "" {
		return false, errors.New("enqueue: event id required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[ev.EventID] || slices.ContainsFunc(s.queue, func(q store.PendingEvent) bool { return q.EventID == ev.EventID }) {
		return true, nil
	}
	s.nextQ++
	ev.ID, ev.Attempts = s.nextQ, 0
	ev.Payload = slices.Clone(ev.Payload)
	s.queue = append(s.queue, ev)
	return false, nil
}

// ClaimSession claims up to max queued events of the oldest session no one holds.
func (s *Store) ClaimSession(_ context.Context, max int) (store.Claim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range s.queue {
		if s.claimed[ev.SessionID] {
			continue
		}
		c := store.Claim{SessionID: ev.SessionID}
		for _, e := range s.queue {
			if e.SessionID == c.SessionID && len(c.Events) < max {
				c.Events = append(c.Events, e)
			}
		}
		s.claimed[c.SessionID] = true
		return c, nil
	}
	return store.Claim{}, nil
}

// Release records a failed attempt; an event that failed MaxAttempts times leaves the queue.
func (s *Store) Release(_ context.Context, ids []int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.queue {
		if slices.Contains(ids, s.queue[i].ID) {
			s.queue[i].Attempts++
		}
	}
	s.queue = slices.DeleteFunc(s.queue, func(ev store.PendingEvent) bool { return ev.Attempts >= store.MaxAttempts })
	return nil
}

// Unclaim hands a session back.
func (s *Store) Unclaim(sessionID string) {
	s.mu.Lock()
	delete(s.claimed, sessionID)
	s.mu.Unlock()
}

// QueueDepth counts the queued events.
func (s *Store) QueueDepth(context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue), nil
}

// tokens splits text into lower-case words, as FTS5's unicode61 tokenizer does.
func tokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}
