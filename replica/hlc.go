package replica

import (
	"github.com/memnode/memnode/store"
	"sync"
	"time"
)

// HLC stamps pack wall-clock milliseconds into the high 48 bits and a logical counter into
// the low 16 (store.HLCLogicalBits), so stamps compare as plain integers and stay close to
// real time.
const hlcLogicalBits = store.HLCLogicalBits

// clock is a hybrid logical clock: monotonic per replica, and never behind any stamp it has
// observed from another replica.
type clock struct {
	mu   sync.Mutex
	last uint64
	now  func() time.Time
	max  func() uint64 // the largest stamp Observe accepts (Replica.maxStamp)
}

// Now returns a stamp strictly greater than every stamp issued or observed before.
func (c *clock) Now() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	wall := uint64(c.now().UnixMilli()) << hlcLogicalBits
	if wall > c.last {
		c.last = wall
	} else {
		c.last++
	}
	return c.last
}

// Observe moves the clock past a remote stamp. A stamp beyond the clock bound is not
// observed (Import and ApplyOps refuse it before; this is the last line).
func (c *clock) Observe(remote uint64) {
	if c.max != nil && remote > c.max() {
		return
	}
	c.mu.Lock()
	if remote > c.last {
		c.last = remote
	}
	c.mu.Unlock()
}

func (c *clock) Last() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}
