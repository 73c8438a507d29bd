package embed

import (
	"container/heap"
	"fmt"
	"runtime"
	"sort"
	"sync"
)

// Scored is an ID with a score; higher is better.
type Scored struct {
	ID    string
	Score float32
}

// Index is an exact in-memory kNN index over L2-normalised vectors of one dimension.
// It is safe for concurrent use. Search is a linear scan with a bounded heap: at 100k
// vectors of dim 384 that is ~38M multiply-adds per query, which the benchmarks show is
// within the latency target, so no approximate index is used.
type Index struct {
	dim       int
	perWorker int // vectors per scan goroutine; tests lower it to exercise the parallel path

	mu   sync.RWMutex
	ids  []string
	vecs []float32 // row i is vecs[i*dim:(i+1)*dim]; contiguous for cache-friendly scans
	pos  map[string]int
}

// NewIndex returns an empty index for vectors of length dim.
func NewIndex(dim int) *Index {
	return &Index{dim: dim, perWorker: parallelScanMin, pos: make(map[string]int)}
}

// Dim is the vector length the index accepts.
func (x *Index) Dim() int { return x.dim }

// Len is the number of vectors stored.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.ids)
}

// Add stores v under id, replacing any previous vector for id. v is copied.
func (x *Index) Add(id string, v []float32) error {
	if len(v) != x.dim {
		return fmt.Errorf("add vector %q: %w: dim %d, index dim %d", id, ErrBadVector, len(v), x.dim)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if i, ok := x.pos[id]; ok {
		copy(x.vecs[i*x.dim:(i+1)*x.dim], v)
		return nil
	}
	x.pos[id] = len(x.ids)
	x.ids = append(x.ids, id)
	x.vecs = append(x.vecs, v...)
	return nil
}

// Remove deletes id's vector; removing an absent id is a no-op. The last row moves into
// the hole so rows stay contiguous.
func (x *Index) Remove(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	i, ok := x.pos[id]
	if !ok {
		return
	}
	last := len(x.ids) - 1
	if i != last {
		x.ids[i] = x.ids[last]
		copy(x.vecs[i*x.dim:(i+1)*x.dim], x.vecs[last*x.dim:])
		x.pos[x.ids[i]] = i
	}
	x.ids = x.ids[:last]
	x.vecs = x.vecs[:last*x.dim]
	delete(x.pos, id)
}

// Search returns the k stored vectors most similar to q, best first. Ties are broken by
// ID so results are deterministic.
func (x *Index) Search(q []float32, k int) []Scored {
	if k <= 0 || len(q) != x.dim {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.ids)
	workers := min(runtime.GOMAXPROCS(0), n/x.perWorker)
	if workers <= 1 {
		out := []Scored(x.scan(q, k, 0, n))
		sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
		return out
	}
	// Large indexes are scanned in parallel chunks, each keeping its own top k; the
	// union of the chunk winners contains the global top k.
	parts := make([]minHeap, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[w] = x.scan(q, k, w*n/workers, (w+1)*n/workers)
		}()
	}
	wg.Wait()
	var out []Scored
	for _, p := range parts {
		out = append(out, p...)
	}
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	return out[:min(k, len(out))]
}

// parallelScanMin is the number of vectors per goroutine below which a parallel scan
// costs more in scheduling than it saves.
const parallelScanMin = 8192

// scan returns the top k of rows [from, to) as a heap. Callers hold x.mu.
func (x *Index) scan(q []float32, k, from, to int) minHeap {
	h := make(minHeap, 0, min(k, to-from))
	for i := from; i < to; i++ {
		s := Cosine(q, x.vecs[i*x.dim:(i+1)*x.dim])
		if len(h) < k {
			heap.Push(&h, Scored{ID: x.ids[i], Score: s})
			continue
		}
		if c := (Scored{ID: x.ids[i], Score: s}); better(c, h[0]) {
			h[0] = c
			heap.Fix(&h, 0)
		}
	}
	return h
}

// better orders results: higher score first, then smaller ID.
func better(a, b Scored) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID < b.ID
}

// minHeap keeps the worst of the current top k at the root.
type minHeap []Scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(Scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
