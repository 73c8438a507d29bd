package node

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memnode/memnode/api/apitype"
)

// agentsSeen remembers when the last event of each coding agent reached this node (since it
// started): `memnode doctor` answers "is my agent's capture working?" from it.
type agentsSeen struct {
	mu sync.Mutex
	at map[string]time.Time // platform → when its last event arrived
}

// note records an event of platform arriving at t.
func (a *agentsSeen) note(platform string, t time.Time) {
	if platform == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.at == nil {
		a.at = map[string]time.Time{}
	}
	a.at[platform] = t
}

// list returns every agent seen, by name.
func (a *agentsSeen) list() []apitype.AgentSeen {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]apitype.AgentSeen, 0, len(a.at))
	for p, t := range a.at {
		out = append(out, apitype.AgentSeen{Platform: p, LastEvent: t.UnixMilli()})
	}
	slices.SortFunc(out, func(x, y apitype.AgentSeen) int { return strings.Compare(x.Platform, y.Platform) })
	return out
}
