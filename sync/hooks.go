package sync

import (
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// testHooks are the switches this package's tests turn on a node (newNode; the test helpers
// set them through nodeSetup). Config carries none of them, and New passes the zero value,
// under which a node behaves as if they did not exist.
type testHooks struct {
	// wrapStream, when set, wraps every session stream: a test makes a path go silent
	// without closing it, as a cut cable does.
	wrapStream func(network.Stream) network.Stream
	// sessionTimeout, when set, replaces sessionTimeout.
	sessionTimeout time.Duration
	// snapChunkBytes, when set, replaces opsMessageSoft as the size of a served snapshot's
	// chunks: a small history then spans many chunks.
	snapChunkBytes int
	// plainOnly makes the node speak only ProtocolSync, as devices before ProtocolSyncZ did
	// (tests of the fallback).
	plainOnly bool
	// joinChecked, when set, is called by Join once it has checked that it may join and
	// before it dials the inviter: a test orders a join the inviter makes into this device
	// at that moment.
	joinChecked func(inviter peer.ID)
	// cut are peers a test has partitioned away (guarded by Node.mu).
	cut map[peer.ID]bool
	// gossipDown is set once memberlist was shut down without leaving (a test simulates a
	// crash that way); memberlist panics on Leave after Shutdown.
	gossipDown atomic.Bool
}
