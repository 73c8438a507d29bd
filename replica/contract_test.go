package replica_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/store/storetest"
)

// TestStoreContract runs the store contract against the SQLite replica on real files.
func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(tb testing.TB, origin string) storetest.Store {
		tb.Helper()
		path := filepath.Join(tb.TempDir(), "memnode.db")
		replica.PlaceMigrated(tb, path)
		r, err := replica.Open(context.Background(), replica.Config{Path: path, Origin: origin})
		if err != nil {
			tb.Fatalf("open replica: %v", err)
		}
		tb.Cleanup(func() { r.Close() })
		return r
	})
}
