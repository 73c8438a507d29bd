package replica

import (
	"context"
	"errors"
	"github.com/memnode/memnode/store"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
)

func TestAbsurdStampsAreRefusedAndTheClockStaysNearNow(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, "dev-a")
	now := time.Now()
	for _, hlc := range []uint64{1<<63 - 4, math.MaxUint64, uint64(now.Add(time.Hour).UnixMilli()) << hlcLogicalBits} {
		_, err := r.Import(ctx, &store.ImportBatch{Observations: []memory.Observation{{ID: store.ImportID(now.UnixMilli(), "k"), SessionID: "s", Project: "p", Title: "t", CreatedAt: now.UnixMilli(), HLC: hlc}}})
		if !errors.Is(err, memory.ErrClockAhead) {
			t.Fatalf("import with hlc %d: %v, want ErrClockAhead", hlc, err)
		}
		t.Logf("hlc %d refused: %v", hlc, err)
	}
	// A created_at in the far future (with an accepted stamp) is clamped.
	future := now.Add(365 * 24 * time.Hour).UnixMilli()
	if _, err := r.Import(ctx, &store.ImportBatch{Observations: []memory.Observation{{ID: store.ImportID(now.UnixMilli(), "ok"), SessionID: "s", Project: "p", Title: "from the future", CreatedAt: future}}}); err != nil {
		t.Fatal(err)
	}
	var created int64
	if err := r.ReadDB().QueryRowContext(ctx, "SELECT created_at FROM observations WHERE title = 'from the future'").Scan(&created); err != nil {
		t.Fatal(err)
	}
	if latest := now.Add(memory.MaxFutureAt).UnixMilli(); created >= future || created < latest || created > latest+60_000 {
		t.Fatalf("created_at %d, want clamped to about %d (now + %s)", created, latest, memory.MaxFutureAt)
	}

	// ApplyOps: the op from the far future is refused with its origin's later ops; another
	// origin's op in the same call is applied; the clock does not move.
	ops := []store.Op{
		{Origin: "dev-b", Seq: 1, HLC: 1<<63 - 4, Kind: store.OpDevice, RecordID: "device:dev-b", Payload: []byte(`{"origin":"dev-b","name":"b"}`)},
		{Origin: "dev-b", Seq: 2, HLC: uint64(now.UnixMilli()) << hlcLogicalBits, Kind: store.OpDevice, RecordID: "device:dev-b", Payload: []byte(`{"origin":"dev-b","name":"b2"}`)},
		{Origin: "dev-c", Seq: 1, HLC: uint64(now.UnixMilli()) << hlcLogicalBits, Kind: store.OpDevice, RecordID: "device:dev-c", Payload: []byte(`{"origin":"dev-c","name":"c"}`)},
	}
	res, err := r.ApplyOps(ctx, ops)
	if !errors.Is(err, memory.ErrClockAhead) || res.Ahead != 1 || res.Applied != 1 || res.Gaps != 1 {
		t.Fatalf("ApplyOps: %+v, %v; want 1 applied, 1 refused, 1 gap, ErrClockAhead", res, err)
	}
	vv, err := r.VersionVector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if vv["dev-b"] != 0 || vv["dev-c"] != 1 {
		t.Fatalf("vv %v", vv)
	}
	// A payload that carries its own absurd stamp is refused the same way.
	bad := store.Op{Origin: "dev-d", Seq: 1, HLC: uint64(now.UnixMilli()) << hlcLogicalBits, Kind: store.OpObservation, RecordID: "x",
		Payload: []byte(`{"id":"x","session_id":"s","project":"p","type":"t","title":"t","created_at":1,"hlc":18446744073709551615}`)}
	if res, err := r.ApplyOps(ctx, []store.Op{bad}); !errors.Is(err, memory.ErrClockAhead) || res.Ahead != 1 {
		t.Fatalf("ApplyOps of a record stamped 2^64-1: %+v, %v", res, err)
	}
	if got := store.HLCTime(r.clock.Now()); got.Sub(now) > time.Minute {
		t.Fatalf("the clock moved to %s", got)
	}
}

// A database whose op-log holds stamps past the bound (written before the bound existed, or
// by a clock that was wrong) does not keep the clock there after a restart.
func TestClockDoesNotResumeFromAPoisonedOpLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	far := time.Now().Add(365 * 24 * time.Hour)
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a", Now: func() time.Time { return far }})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetDeviceName(ctx, "dev-a", "laptop"); err != nil {
		t.Fatal(err)
	}
	r.Close()
	r, err = Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.SetDeviceName(ctx, "dev-a", "laptop 2"); err != nil {
		t.Fatalf("write after a poisoned op-log: %v", err)
	}
	if got := store.HLCTime(r.clock.Last()); time.Until(got) > time.Minute {
		t.Fatalf("clock resumed at %s, a year ahead", got)
	}
}
