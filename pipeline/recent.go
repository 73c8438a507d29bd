package pipeline

import (
	"encoding/json"
	"sync"

	"github.com/memnode/memnode/api/apitype"
)

// maxRecentCalls bounds recentCalls: a failure arrives seconds after its call.
const maxRecentCalls = 256

// recentCalls remembers the tool and input of the latest tool calls by session and tool
// use ID, so that a failure reported without its tool (apitype.ToolFailedStep: Antigravity
// records a call at PreToolUse and hears of its failure at PostToolUse, which names only
// the step) is recorded with the call that failed: "Tests fail: pytest -q", not a failure
// of nothing. A node restart between the two forgets the call; the failure is then
// recorded as it came.
type recentCalls struct {
	mu    sync.Mutex
	calls map[string]recentCall
	order []string // keys, oldest first
}

type recentCall struct {
	tool  string
	input json.RawMessage
}

// pair remembers ev's call, or, for a failure that names only its call, gives ev that
// call's tool and input.
func (r *recentCalls) pair(ev *queueRow) {
	if ev.ToolUseID == "" {
		return
	}
	key := ev.SessionID + "\x00" + ev.ToolUseID
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.ToolName == apitype.ToolFailedStep {
		if c, ok := r.calls[key]; ok {
			ev.ToolName, ev.ToolInput = c.tool, c.input
		}
		return
	}
	if r.calls == nil {
		r.calls = make(map[string]recentCall, maxRecentCalls)
	}
	if _, ok := r.calls[key]; !ok {
		if len(r.order) == maxRecentCalls {
			delete(r.calls, r.order[0])
			r.order = r.order[1:]
		}
		r.order = append(r.order, key)
	}
	r.calls[key] = recentCall{tool: ev.ToolName, input: ev.ToolInput}
}
