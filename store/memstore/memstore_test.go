package memstore_test

import (
	"testing"

	"github.com/memnode/memnode/store/memstore"
	"github.com/memnode/memnode/store/storetest"
)

// TestStoreContract runs the store contract against the in-memory store: the second
// implementation beside the SQLite replica (replica's TestStoreContract).
func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(tb testing.TB, origin string) storetest.Store { return memstore.New(origin) })
}
