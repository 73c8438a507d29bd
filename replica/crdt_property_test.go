package replica_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/memnode/memnode/store"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
)

// world is one rapid case: a few origin replicas that write, forget and partially exchange
// ops, plus the bookkeeping needed to check the outcome. Every replica is a real SQLite file.
type world struct {
	t         *rapid.T
	ctx       context.Context
	dir       string
	origins   []*replica.Replica
	extra     []*replica.Replica
	records   []string          // IDs of every record created anywhere
	forgotten map[string]string // forgotten ID → unique text it carried ("" for sessions)
	// forgottenAt[i] holds the IDs origin i has tombstoned (its own forgets and those it received).
	forgottenAt []map[string]bool
	texts       map[string]string // record ID → its unique text
	seq         int
	// compact adds an action to run: an origin compacts its op-log (oplog_compact_test.go).
	compact func(i int)
}

func newWorld(t *rapid.T, tb testing.TB, n int) *world {
	dir, err := os.MkdirTemp(fastTempDir(tb), "case")
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, ctx: context.Background(), dir: dir, forgotten: map[string]string{}, texts: map[string]string{}}
	for i := range n {
		w.origins = append(w.origins, w.open(fmt.Sprintf("origin-%d", i)))
		w.forgottenAt = append(w.forgottenAt, map[string]bool{})
	}
	return w
}

func (w *world) open(origin string) *replica.Replica {
	path := filepath.Join(w.dir, fmt.Sprintf("%s-%d.db", origin, len(w.extra)+len(w.origins)))
	replica.PlaceMigrated(w.t, path)
	r, err := replica.Open(w.ctx, replica.Config{Path: path, Origin: origin})
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

func (w *world) close() {
	for _, r := range append(w.origins, w.extra...) {
		r.Close()
	}
	os.RemoveAll(w.dir)
}

func (w *world) fresh(name string) *replica.Replica {
	r := w.open(name)
	w.extra = append(w.extra, r)
	return r
}

// fastTempDir is a test temp dir on tmpfs when the machine has one: the replicas are real
// SQLite files either way, but hundreds of rapid cases of fsyncs on a disk take minutes.
func fastTempDir(tb testing.TB) string { return testkit.FastTempDir(tb) }

// permute draws an order of ops by index, which keeps rapid's failure logs readable.
func permute(t *rapid.T, ops []store.Op, label string) []store.Op {
	idx := make([]int, len(ops))
	for i := range idx {
		idx[i] = i
	}
	idx = rapid.Permutation(idx).Draw(t, label)
	out := make([]store.Op, len(ops))
	for i, j := range idx {
		out[i] = ops[j]
	}
	return out
}

var sessionIDs = []string{"sess-1", "sess-2", "sess-3"}

// sessionProject is the project a session's records are written in: two projects, so the
// per-project counts have more than one row to keep apart.
func sessionProject(sid string) string {
	if sid == "sess-3" {
		return "q"
	}
	return "p"
}

// commit writes a random local batch at origin i.
func (w *world) commit(i int) {
	t := w.t
	r := w.origins[i]
	sid := rapid.SampledFrom(sessionIDs).Draw(t, "session")
	b := &store.Batch{}
	// A session forgotten on this device is not written again here: Commit does not yet check
	// tombstones for sessions (see TestCRDTForgottenSessionIsNotRevivedLocally).
	_, gone := w.forgottenAt[i][sid]
	if !gone && rapid.Bool().Draw(t, "touch session") {
		// The project is part of the session's LWW register: a later write may move it.
		b.Sessions = []memory.Session{{ID: sid, Project: rapid.SampledFrom([]string{"p", "q"}).Draw(t, "session project"), StartedAt: 1000,
			Status: rapid.SampledFrom([]string{"active", "completed", "failed"}).Draw(t, "status")}}
	}
	for range rapid.IntRange(0, 2).Draw(t, "observations") {
		w.seq++
		text := fmt.Sprintf("obs%dtext", w.seq)
		b.Observations = append(b.Observations, memory.Observation{SessionID: sid, Project: sessionProject(sid), Type: "discovery",
			Title: text, DiscoveryTokens: w.seq * 7, Narrative: "n", Facts: []string{"f"}, FilesRead: []string{"a.go"}, CreatedAt: int64(w.seq)})
	}
	if rapid.Bool().Draw(t, "prompt") {
		w.seq++
		b.Prompts = []memory.Prompt{{SessionID: sid, Project: "p", PromptNumber: w.seq, Text: fmt.Sprintf("prompt%dtext", w.seq), CreatedAt: int64(w.seq)}}
	}
	if rapid.Bool().Draw(t, "summary") {
		w.seq++
		b.Summaries = []memory.Summary{{SessionID: sid, Project: "p", Request: fmt.Sprintf("sum%dtext", w.seq), CreatedAt: int64(w.seq)}}
	}
	res, err := r.Commit(w.ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range res.Observations {
		w.records, w.texts[o.ID] = append(w.records, o.ID), o.Title
	}
	for _, p := range res.Prompts {
		w.records, w.texts[p.ID] = append(w.records, p.ID), p.Text
	}
	for _, s := range res.Summaries {
		w.records, w.texts[s.ID] = append(w.records, s.ID), s.Request
	}
}

// forget forgets, at origin i, a record created anywhere (maybe not yet seen here) or a
// whole session.
func (w *world) forget(i int) {
	var id string
	if len(w.records) > 0 && rapid.Bool().Draw(w.t, "forget a record") {
		id = rapid.SampledFrom(w.records).Draw(w.t, "record")
	} else {
		id = rapid.SampledFrom(sessionIDs).Draw(w.t, "forget session")
	}
	if _, err := w.origins[i].Forget(w.ctx, []string{id}); err != nil {
		w.t.Fatal(err)
	}
	w.forgotten[id] = w.texts[id]
	w.forgottenAt[i][id] = true
}

// correct, at origin i, corrects an observation it holds (a new record replacing it) or
// supersedes it by another it holds. Refusals (the record is unknown here, forgotten, or
// the replacement itself superseded) are what a user would see, and change nothing.
func (w *world) correct(i int) {
	if len(w.records) == 0 {
		return
	}
	r := w.origins[i]
	old := rapid.SampledFrom(w.records).Draw(w.t, "correct")
	if rapid.Bool().Draw(w.t, "supersede by another") {
		by := rapid.SampledFrom(w.records).Draw(w.t, "by")
		if err := r.Supersede(w.ctx, old, by); err != nil && !refused(err) {
			w.t.Fatal(err)
		}
		return
	}
	w.seq++
	text := fmt.Sprintf("corr%dtext", w.seq)
	c, err := r.Correct(w.ctx, old, memory.Observation{SessionID: "manual:p", Project: "p", Type: "correction",
		Title: text, Narrative: text, CreatedAt: int64(w.seq)})
	if err != nil {
		if !refused(err) {
			w.t.Fatal(err)
		}
		return
	}
	w.records, w.texts[c.ID] = append(w.records, c.ID), text
}

// pin pins or unpins one of the records at origin i (a register: concurrent pins and unpins
// on several devices must converge to one answer).
func (w *world) pin(i int) {
	if len(w.records) == 0 {
		return
	}
	id := rapid.SampledFrom(w.records).Draw(w.t, "pin")
	if _, err := w.origins[i].Pin(w.ctx, id, rapid.Bool().Draw(w.t, "pinned")); err != nil && !refused(err) {
		w.t.Fatal(err)
	}
}

// refused reports an error Supersede or Correct gives for a request it declines.
func refused(err error) bool {
	for _, e := range []error{store.ErrUnknownRecord, store.ErrForgotten, store.ErrSelfSupersede, store.ErrSupersededReplacement} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func (w *world) rename(i int) {
	name := rapid.SampledFrom([]string{"laptop", "desktop", "tablet"}).Draw(w.t, "name")
	target := w.origins[rapid.IntRange(0, len(w.origins)-1).Draw(w.t, "device")].Origin()
	if err := w.origins[i].SetDeviceName(w.ctx, target, name); err != nil {
		w.t.Fatal(err)
	}
}

// held returns every op r holds, of every origin.
func (w *world) held(r *replica.Replica) []store.Op {
	vv, err := r.VersionVector(w.ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	var all []store.Op
	for o := range vv {
		ops, err := r.OpsSince(w.ctx, o, 0, 1_000_000)
		if err != nil {
			w.t.Fatal(err)
		}
		all = append(all, ops...)
	}
	return all
}

// noteTombstones records which sessions origin i now has tombstoned.
func (w *world) noteTombstones(i int) {
	d := w.dump(w.origins[i])
	for _, line := range strings.Split(d, "\n") {
		if id, ok := strings.CutPrefix(line, "tombstone\t"); ok {
			w.forgottenAt[i][id] = true
		}
	}
}

// allOps returns every op of every origin, as its origin holds them.
func (w *world) allOps() []store.Op {
	var all []store.Op
	for _, r := range w.origins {
		ops, err := r.OpsSince(w.ctx, r.Origin(), 0, 1_000_000)
		if err != nil {
			w.t.Fatal(err)
		}
		all = append(all, ops...)
	}
	return all
}

// deliverChaos hands ops to dst the way a bad network would: random subsets, random order,
// duplicates, random batch boundaries; a partition is a round that delivers nothing. It then
// retries (anti-entropy) until dst holds every op, as the version vector says.
func (w *world) deliverChaos(dst *replica.Replica, ops []store.Op, label string) {
	t := w.t
	want := store.VersionVector{}
	for _, op := range ops {
		want[op.Origin] = max(want[op.Origin], op.Seq)
	}
	rounds := rapid.IntRange(0, 4).Draw(t, label+" chaos rounds")
	for r := 0; r < rounds; r++ {
		if len(ops) == 0 {
			break
		}
		perm := permute(t, ops, label+" order")
		keep := rapid.IntRange(0, len(perm)).Draw(t, label+" delivered")
		w.applyInBatches(dst, perm[:keep], label)
	}
	// Anti-entropy: keep exchanging until complete. Each retry sends, per origin, the ops past
	// dst's vector in seq order — what the sync protocol does.
	for attempt := 0; ; attempt++ {
		vv, err := dst.VersionVector(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		var missing []store.Op
		for _, op := range ops {
			if op.Seq > vv[op.Origin] {
				missing = append(missing, op)
			}
		}
		if len(missing) == 0 {
			return
		}
		if attempt > 3*len(ops)+3 {
			t.Fatalf("%s: anti-entropy does not converge; vv %v, want %v", label, vv, want)
		}
		w.applyInBatches(dst, missing, label)
	}
}

func (w *world) applyInBatches(dst *replica.Replica, ops []store.Op, label string) {
	for len(ops) > 0 {
		k := rapid.IntRange(1, len(ops)).Draw(w.t, label+" batch")
		if _, err := dst.ApplyOps(w.ctx, ops[:k]); err != nil {
			w.t.Fatal(err)
		}
		ops = ops[k:]
	}
}

func (w *world) dump(r *replica.Replica) string {
	d, err := r.CanonicalDump(w.ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	return d
}

// run draws and performs the history: local writes, forgets, renames, and partial
// exchanges between origins (so later ops depend on earlier remote ones).
func (w *world) run() {
	steps := rapid.IntRange(1, 14).Draw(w.t, "steps")
	for range steps {
		i := rapid.IntRange(0, len(w.origins)-1).Draw(w.t, "at")
		actions := 9
		if w.compact != nil {
			actions = 11
		}
		switch rapid.IntRange(0, actions).Draw(w.t, "action") {
		case 0, 1, 2, 3:
			w.commit(i)
		case 4, 5:
			w.forget(i)
		case 6:
			w.rename(i)
		case 7:
			if rapid.Bool().Draw(w.t, "pin instead") {
				w.pin(i)
			} else {
				w.correct(i)
			}
		case 10, 11:
			w.compact(i)
		default: // a partial exchange: some of another origin's ops reach i
			j := rapid.IntRange(0, len(w.origins)-1).Draw(w.t, "from")
			ops := w.held(w.origins[j]) // relay: j passes on what it holds of every origin
			if len(ops) > 0 {
				perm := permute(w.t, ops, "partial order")
				w.applyInBatches(w.origins[i], perm[:rapid.IntRange(0, len(perm)).Draw(w.t, "partial")], "partial")
				w.noteTombstones(i)
			}
		}
	}
}

// checkForgotten asserts that no forgotten record is present, or its text anywhere
// (tables or op-log payloads).
func (w *world) checkForgotten(r *replica.Replica, name string) {
	d := w.dump(r)
	for id, text := range w.forgotten {
		for _, line := range strings.Split(d, "\n") {
			if link, ok := strings.CutPrefix(line, "supersede\t"); ok {
				// A link may name a forgotten replacement; never a forgotten record or session.
				f := strings.Split(link, "\t")
				if f[0] == id || f[2] == id {
					w.t.Fatalf("%s: link of forgotten %s came back: %s", name, id, line)
				}
				continue
			}
			if strings.Contains(line, id) && !strings.HasPrefix(line, "tombstone") && !strings.HasPrefix(line, "device") {
				if strings.HasPrefix(line, "session") || !strings.HasPrefix(id, "sess-") {
					w.t.Fatalf("%s: forgotten %s came back: %s", name, id, line)
				}
			}
		}
		if text == "" {
			continue
		}
		if strings.Contains(d, text) {
			w.t.Fatalf("%s: forgotten text %q is back in the tables", name, text)
		}
		if has, err := r.OpPayloadContains(w.ctx, text); err != nil || has {
			w.t.Fatalf("%s: forgotten text %q still in the op-log (%v)", name, text, err)
		}
	}
}

// TestCRDTConvergesUnderAnySchedule: whatever the history and whatever the delivery
// schedule (order, duplicates, drops and retries, partitions), every replica that has
// received every op holds the same state, and nothing forgotten survives anywhere.
func TestCRDTConvergesUnderAnySchedule(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := newWorld(rt, t, rapid.IntRange(2, 3).Draw(rt, "origins"))
		defer w.close()
		w.run()
		all := w.allOps()
		replicas := append([]*replica.Replica{}, w.origins...)
		replicas = append(replicas, w.fresh("observer-1"), w.fresh("observer-2"))
		for k, r := range replicas {
			w.deliverChaos(r, all, fmt.Sprintf("replica %d", k))
		}
		want := w.dump(replicas[0])
		for k, r := range replicas[1:] {
			if got := w.dump(r); got != want {
				rt.Fatalf("replica %d differs from replica 0:\n%s\n---\n%s", k+1, want, got)
			}
		}
		for k, r := range replicas {
			w.checkForgotten(r, fmt.Sprintf("replica %d", k))
		}
	})
}

// TestCRDTMergeLaws: merging op sets is commutative (A then B = B then A), associative
// ((A∪B)∪C = A∪(B∪C)) and idempotent (applying everything again changes nothing).
func TestCRDTMergeLaws(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := newWorld(rt, t, 3)
		defer w.close()
		w.run()
		sets := make([][]store.Op, 3)
		for i, r := range w.origins {
			ops, err := r.OpsSince(w.ctx, r.Origin(), 0, 1_000_000)
			if err != nil {
				rt.Fatal(err)
			}
			sets[i] = ops
		}
		apply := func(r *replica.Replica, groups ...[]store.Op) *replica.Replica {
			for _, g := range groups {
				if _, err := r.ApplyOps(w.ctx, g); err != nil {
					rt.Fatal(err)
				}
			}
			return r
		}
		cat := func(a, b []store.Op) []store.Op { return append(append([]store.Op{}, a...), b...) }
		abc := apply(w.fresh("ab-c"), cat(sets[0], sets[1]), sets[2])
		cba := apply(w.fresh("c-ba"), sets[2], cat(sets[1], sets[0]))
		aBC := apply(w.fresh("a-bc"), sets[0], cat(sets[1], sets[2]))
		want := w.dump(abc)
		if got := w.dump(cba); got != want {
			rt.Fatalf("not commutative:\n%s\n---\n%s", want, got)
		}
		if got := w.dump(aBC); got != want {
			rt.Fatalf("not associative:\n%s\n---\n%s", want, got)
		}
		res, err := abc.ApplyOps(w.ctx, cat(cat(sets[0], sets[1]), sets[2]))
		if err != nil {
			rt.Fatal(err)
		}
		if res.Applied != 0 || w.dump(abc) != want {
			rt.Fatalf("not idempotent: re-applying applied %d ops", res.Applied)
		}
	})
}

// openPlain opens a replica for the deterministic regression tests below.
func openPlain(tb testing.TB, origin string) *replica.Replica {
	tb.Helper()
	path := filepath.Join(fastTempDir(tb), origin+".db")
	replica.PlaceMigrated(tb, path)
	r, err := replica.Open(context.Background(), replica.Config{Path: path, Origin: origin})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

func mustDump(tb testing.TB, r *replica.Replica) string {
	tb.Helper()
	d, err := r.CanonicalDump(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func allOpsOf(tb testing.TB, r *replica.Replica) []store.Op {
	tb.Helper()
	ops, err := r.OpsSince(context.Background(), r.Origin(), 0, 1_000_000)
	if err != nil {
		tb.Fatal(err)
	}
	return ops
}

// TestCRDTForgottenSessionIsNotRevivedLocally: after a session is forgotten, a later local
// write of the same session (the IDE's next hook event) must not bring it back on this
// device only; every other replica drops that op's content as tombstoned.
func TestCRDTForgottenSessionIsNotRevivedLocally(t *testing.T) {
	ctx := context.Background()
	a, b := openPlain(t, "dev-a"), openPlain(t, "dev-b")
	sess := memory.Session{ID: "s1", Project: "p", StartedAt: 1}
	if _, err := a.Commit(ctx, &store.Batch{Sessions: []memory.Session{sess}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Forget(ctx, []string{"s1"}); err != nil {
		t.Fatal(err)
	}
	sess.Status = "completed"
	if _, err := a.Commit(ctx, &store.Batch{Sessions: []memory.Session{sess}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ApplyOps(ctx, allOpsOf(t, a)); err != nil {
		t.Fatal(err)
	}
	da, db := mustDump(t, a), mustDump(t, b)
	if da != db {
		t.Fatalf("a forgotten session revived on its origin only (Commit must check tombstones).\norigin:\n%s\nother:\n%s", da, db)
	}
}

// TestCRDTSessionStartedAtCommutes: two devices write the same session with different start
// times; the result must not depend on the order their ops arrive in.
func TestCRDTSessionStartedAtCommutes(t *testing.T) {
	ctx := context.Background()
	a, b := openPlain(t, "dev-a"), openPlain(t, "dev-b")
	if _, err := a.Commit(ctx, &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "p", StartedAt: 5}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ApplyOps(ctx, allOpsOf(t, a)); err != nil { // b's clock moves past a's
		t.Fatal(err)
	}
	if _, err := b.Commit(ctx, &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "p", StartedAt: 10, Status: "completed"}}}); err != nil {
		t.Fatal(err)
	}
	opsA, opsB := allOpsOf(t, a), allOpsOf(t, b)
	x, y := openPlain(t, "dev-x"), openPlain(t, "dev-y")
	for _, step := range []struct {
		r   *replica.Replica
		ops []store.Op
	}{{x, opsA}, {x, opsB}, {y, opsB}, {y, opsA}} {
		if _, err := step.r.ApplyOps(ctx, step.ops); err != nil {
			t.Fatal(err)
		}
	}
	if dx, dy := mustDump(t, x), mustDump(t, y); dx != dy {
		t.Fatalf("sessions.started_at depends on arrival order.\nA then B:\n%s\nB then A:\n%s", dx, dy)
	}
}
