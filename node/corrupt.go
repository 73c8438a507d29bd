package node

import (
	"fmt"

	"github.com/memnode/memnode/api"
	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
)

// A database found corrupt while the node runs (SQLITE_CORRUPT or SQLITE_NOTADB from any
// read or write: replica.IsCorrupt) stops the node from taking more: Ready turns false
// (/health says so, data routes answer 503), the pipeline refuses events (hooks spool
// them), and Status says what to do. It stays so until the node is stopped and repaired;
// quick_check at the next start fails the same way.

// corruption returns the error that showed the database corrupt, or nil.
func (n *Node) corruption() error {
	if e := n.corrupt.Load(); e != nil {
		return *e
	}
	if p := n.pipe.Load(); p != nil {
		return p.Broken()
	}
	return nil
}

// checkCorrupt latches err when it shows the database corrupt, and returns it, wrapped
// with memory.ErrCorrupt then.
func (n *Node) checkCorrupt(err error) error {
	if err == nil || !replica.IsCorrupt(err) {
		return err
	}
	if n.corrupt.CompareAndSwap(nil, &err) {
		n.log.Error("the database is corrupt: the node takes no more writes; stop it and run 'memnode repair'", "err", err)
	}
	return fmt.Errorf("%w: %w", memory.ErrCorrupt, err)
}

// corruptStatus is Status.Storage for a corrupt database.
func corruptStatus(err error) apitype.StorageStatus {
	return apitype.StorageStatus{State: apitype.StorageCorrupt, Message: api.CorruptMessage + " (" + err.Error() + ")"}
}
