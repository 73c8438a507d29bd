//go:build memnode_e2e

package node

import (
	"context"
	"os"
	"strconv"
	"time"

	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/store"
	memsync "github.com/memnode/memnode/sync"
)

// This file is only in the binary the end-to-end tests build (internal/testbin adds the tag
// memnode_e2e), never in a release: with MEMNODE_E2E_SNAPSHOT_GATE=FILE, a node serving a
// snapshot holds it after MEMNODE_E2E_SNAPSHOT_GATE_AFTER chunks (default 1) for as long
// as FILE exists, so a test can look at a device caught mid-transfer without timing it.

// syncStore is the replica, wrapped by the snapshot gate when the environment asks.
func syncStore(r *replica.Replica) memsync.Store {
	file := os.Getenv("MEMNODE_E2E_SNAPSHOT_GATE")
	if file == "" {
		return r
	}
	after, err := strconv.Atoi(os.Getenv("MEMNODE_E2E_SNAPSHOT_GATE_AFTER"))
	if err != nil {
		after = 1
	}
	return gatedStore{Replica: r, file: file, after: after}
}

type gatedStore struct {
	*replica.Replica
	file  string
	after int
}

func (g gatedStore) Snapshot(ctx context.Context, from store.SnapshotCursor, chunkBytes int, emit func(store.SnapshotChunk) error) error {
	n := 0
	return g.Replica.Snapshot(ctx, from, chunkBytes, func(c store.SnapshotChunk) error {
		for n >= g.after {
			if _, err := os.Stat(g.file); err != nil {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond): // the gate is a file the test removes
			}
		}
		n++
		return emit(c)
	})
}
