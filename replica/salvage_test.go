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
	"time"

	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
)

// salvageSource writes n observations (plus their sessions) to a closed database file.
func salvageSource(t *testing.T, n int) (string, map[string]string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	r, err := replica.Open(ctx, replica.Config{Path: path, Origin: "src"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	at := time.Now().UnixMilli()
	b := &store.ImportBatch{}
	for i := 0; i < n; i++ {
		id := store.ImportID(at+int64(i), fmt.Sprint("obs-", i))
		title := fmt.Sprintf("observation %d about the parser", i)
		want[id] = title
		b.Observations = append(b.Observations, memory.Observation{ID: id, SessionID: "s", Project: "p", Type: "discovery",
			Title: title, Narrative: strings.Repeat("narrative text ", 40), CreatedAt: at + int64(i), Origin: "src", HLC: uint64(at+int64(i)) << 16})
	}
	b.Sessions = []memory.Session{{ID: "s", Project: "p", Platform: "claude-code", StartedAt: at, Status: "active", Origin: "src", HLC: uint64(at) << 16}}
	if _, err := r.Import(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return path, want
}

func salvagedTitles(t *testing.T, dst *replica.Replica) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := dst.Walk(context.Background(), "", store.Visitor{Observation: func(o memory.Observation) error {
		got[o.ID] = o.Title
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestSalvageCopiesAnIntactFileWhole(t *testing.T) {
	src, want := salvageSource(t, 300)
	dst := testkit.OpenReplica(t, "dst")
	res, err := dst.Salvage(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if res.Observations != 300 || res.Sessions != 1 || res.Skipped != 0 {
		t.Fatalf("salvage = %+v; want 300 observations, 1 session, nothing skipped", res)
	}
	got := salvagedTitles(t, dst)
	for id, title := range want {
		if got[id] != title {
			t.Fatalf("observation %s = %q, want %q", id, got[id], title)
		}
	}
}

func TestSalvageSkipsDamagedPages(t *testing.T) {
	src, want := salvageSource(t, 2000)
	// Damage a run of pages in the middle of the file: some of them hold observations.
	f, err := os.OpenFile(src, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	pages := st.Size() / 4096
	if _, err := f.WriteAt([]byte(strings.Repeat("\xff", 4096*10)), 4096*(pages/2)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// Damage deep in the file passes the open's check (the header, the schema and the root
	// pages are whole); the full check finds it.
	if r, err := replica.Open(context.Background(), replica.Config{Path: src, Origin: "src"}); err == nil {
		err = r.CheckIntegrity(context.Background())
		r.Close()
		if !errors.Is(err, replica.ErrCorrupt) {
			t.Fatalf("the full integrity check of the damaged file: %v, want ErrCorrupt", err)
		}
	}
	dst := testkit.OpenReplica(t, "dst")
	res, err := dst.Salvage(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	got := salvagedTitles(t, dst)
	t.Logf("salvaged %d of %d observations, %d unreadable ranges", len(got), len(want), res.Skipped)
	if len(got) < len(want)/2 {
		t.Fatalf("salvaged %d of %d observations; want most of them", len(got), len(want))
	}
	for id, title := range got {
		if want[id] != title {
			t.Fatalf("salvaged observation %s = %q, want %q", id, title, want[id])
		}
	}
}
