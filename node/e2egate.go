//go:build !memnode_e2e

package node

import (
	"github.com/memnode/memnode/replica"
	memsync "github.com/memnode/memnode/sync"
)

// syncStore is the store device sync works on: the replica itself. (The binary the
// end-to-end tests build, tag memnode_e2e, can hold a snapshot mid-transfer: e2egate_e2e.go.)
func syncStore(r *replica.Replica) memsync.Store { return r }
