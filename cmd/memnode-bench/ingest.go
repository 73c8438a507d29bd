package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/memory"
)

// IngestResult is one POST /api/events load and the drain of the queue behind it.
type IngestResult struct {
	Project  string `json:"project"`
	Events   int    `json:"events"`
	Conc     int    `json:"conc"`
	Sessions int    `json:"sessions"`
	// OK counts 200 answers with ok=true and status "queued": durable on the node's disk.
	OK         int     `json:"ok"`
	Failed     int     `json:"failed"`
	FirstError string  `json:"first_error,omitempty"`
	WallS      float64 `json:"wall_s"`
	EventsPerS float64 `json:"events_per_s"`
	Ack        Stats   `json:"ack_ms"`
	// QueueAtEnd is the queue depth when the last event was acknowledged.
	QueueAtEnd int `json:"queue_at_end"`
	// DrainAfterS is from the last acknowledgement to an empty queue; TotalS from the first
	// request to an empty queue.
	DrainAfterS  float64 `json:"drain_after_s"`
	TotalS       float64 `json:"total_s"`
	Observations int     `json:"observations"`
	// ObsPerS is Observations / TotalS: the sustained rate of the whole pipeline,
	// HTTP intake and workers running at the same time.
	ObsPerS float64 `json:"observations_per_s"`
}

// drainPoll is how often /api/status is asked while the queue drains; each call counts
// rows, so polling much faster would load the node being measured.
const drainPoll = 25 * time.Millisecond

// ingest POSTs n distinct observation events for project over cfg.Conc keep-alive
// clients, spread over cfg.Conc sessions, and waits for the queue to drain.
func (h *harness) ingest(ctx context.Context, project, cwd string, n int) (IngestResult, error) {
	conc := h.cfg.Conc
	r := IngestResult{Project: project, Events: n, Conc: conc, Sessions: conc}
	nonce := time.Now().UnixNano()
	sessions := make([]string, conc)
	for s := range sessions {
		sessions[s] = fmt.Sprintf("bench-%s-%x-%d", project, nonce, s)
		// One prompt per session first, as UserPromptSubmit would send; not timed.
		ev := apitype.Event{EventID: fmt.Sprintf("%x-p%d", nonce, s), Kind: memory.KindPrompt, Platform: "claude-code",
			SessionID: sessions[s], Project: project, Cwd: cwd, At: time.Now().UTC(),
			Prompt: "make the test suite pass and speed up the store"}
		if _, err := h.do(ctx, http.MethodPost, "/api/events", mustJSON(ev)); err != nil {
			return r, fmt.Errorf("ingest session prompt: %w", err)
		}
	}
	// Bodies are built before the clock starts so the load generator, which shares the
	// CPUs with the node, does as little as possible while it runs.
	gen := newWords(12345)
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = mustJSON(observationEvent(gen, fmt.Sprintf("%x-%d", nonce, i), sessions[i%conc], project, cwd, i))
	}
	// Events of earlier phases may still wait in the queue (workers hold back while hook
	// events arrive): let them be processed first so they are not counted here.
	before, err := h.drain(ctx, time.Minute)
	if err != nil {
		return r, err
	}

	var next atomic.Int64
	var mu sync.Mutex
	lat := make([]time.Duration, 0, n)
	var wg sync.WaitGroup
	t0 := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, n/conc+1)
			ok, failed := 0, 0
			var firstErr string
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					break
				}
				t := time.Now()
				b, err := h.do(ctx, http.MethodPost, "/api/events", bodies[i])
				took := time.Since(t)
				var rep apitype.EventReply
				if err == nil {
					err = json.Unmarshal(b, &rep)
				}
				if err == nil && (!rep.OK || rep.Status != "queued") {
					err = fmt.Errorf("reply %s", b)
				}
				if err != nil {
					failed++
					if firstErr == "" {
						firstErr = err.Error()
					}
					continue
				}
				ok++
				mine = append(mine, took)
			}
			mu.Lock()
			lat = append(lat, mine...)
			r.OK += ok
			r.Failed += failed
			if r.FirstError == "" {
				r.FirstError = firstErr
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	wall := time.Since(t0)
	tEnd := time.Now()
	if err := ctx.Err(); err != nil {
		return r, err
	}
	r.WallS = wall.Seconds()
	r.EventsPerS = float64(r.OK) / wall.Seconds()
	r.Ack = statsOf(lat)
	if r.Failed > 0 {
		return r, fmt.Errorf("ingest %s: %d of %d events not acknowledged; first error: %s", project, r.Failed, n, r.FirstError)
	}

	st, err := h.status(ctx)
	if err != nil {
		return r, err
	}
	r.QueueAtEnd = st.Queue.Waiting
	// Generous but bounded: even at 50 events/s the drain finishes inside it.
	if st, err = h.drain(ctx, time.Minute+time.Duration(n)*20*time.Millisecond); err != nil {
		return r, fmt.Errorf("ingest %s: %w", project, err)
	}
	done := time.Now()
	r.DrainAfterS = done.Sub(tEnd).Seconds()
	r.TotalS = done.Sub(t0).Seconds()
	r.Observations = st.Records.Observations - before.Records.Observations
	r.ObsPerS = float64(r.Observations) / r.TotalS
	return r, nil
}

// drain polls /api/status until the queue is empty and returns that status.
func (h *harness) drain(ctx context.Context, limit time.Duration) (apitype.Status, error) {
	t0 := time.Now()
	for {
		st, err := h.status(ctx)
		if err != nil || st.Queue.Waiting == 0 {
			return st, err
		}
		if time.Since(t0) > limit {
			return st, fmt.Errorf("queue still holds %d events after %s", st.Queue.Waiting, limit.Round(time.Second))
		}
		if err := pause(ctx, drainPoll); err != nil {
			return st, err
		}
	}
}

// observationEvent is a Bash tool call like the anchor's load generator sends to
// claude-mem: a distinct test command and ~40 words of output.
func observationEvent(w *words, id, session, project, cwd string, i int) apitype.Event {
	in := mustJSON(map[string]string{
		"command":     fmt.Sprintf("go test ./pkg/%s/... -run Test%d", w.pick(), i),
		"description": "run tests",
	})
	out := mustJSON(map[string]any{
		"stdout":      fmt.Sprintf("ok  \texample.com/%s\t0.%ds\n", w.pick(), i%1000) + w.n(40),
		"stderr":      "",
		"interrupted": false,
		"isImage":     false,
	})
	return apitype.Event{EventID: id, Kind: memory.KindObservation, Platform: "claude-code", SessionID: session,
		Project: project, Cwd: cwd, At: time.Now().UTC(), ToolName: "Bash",
		ToolUseID: "toolu_bench_" + id, ToolInput: in, ToolResponse: out}
}

// vocabulary is a slice of the anchor's load-generator vocabulary.
var vocabulary = strings.Fields(`fts sqlite index tokenizer porter trigram query ranking bm25 snippet
highlight migration schema table column trigger wal checkpoint vacuum pragma journal mutex goroutine
channel context deadline timeout retry backoff worker queue hook session prompt observation summary
transcript injection budget token embedding vector cosine similarity http handler router middleware
json marshal unmarshal struct interface pointer slice map race detector benchmark profiling pprof
heap allocation garbage collector latency throughput histogram metrics logging config yaml toml env
flag cli subcommand daemon pidfile signal sigterm graceful shutdown listener loopback port socket
unix tcp tls certificate auth bearer cors ratelimit cache lru ttl eviction compaction dedupe hash
uuid timestamp parser lexer ast symbol refactor rename test fixture mock golden coverage lint vet
build module release tag changelog deploy rollback feature settings defaults validation error panic
recover privacy redact secret markdown timeline anchor project worktree branch commit diff patch
merge rebase conflict bugfix decision discovery security performance regression flaky deadlock leak`)

// words is the anchor's linear congruential generator, so runs are reproducible.
type words struct{ seed int64 }

func newWords(seed int64) *words { return &words{seed: seed} }

func (w *words) pick() string {
	w.seed = (w.seed*1103515245 + 12345) & 0x7fffffff
	return vocabulary[int(w.seed)%len(vocabulary)]
}

func (w *words) n(k int) string {
	s := make([]string, k)
	for i := range s {
		s[i] = w.pick()
	}
	return strings.Join(s, " ")
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called on values built here, which always marshal
	}
	return b
}
