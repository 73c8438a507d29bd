package embed

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
)

// Scored is an ID with a score; higher is better.
type Scored struct {
	ID    string
	Score float32
}

// Index is an in-memory kNN index over L2-normalised vectors of one dimension, safe for
// concurrent use. Beside each float32 vector it keeps an int8 copy (one scale per vector):
// a search scans the int8 copies — a quarter of the bytes, and the bytes are what bounds
// a scan of 100k × 384 — and re-ranks by exact float32 cosine every vector whose
// approximate score is within the rounding error's reach of the k-th best (see Search),
// so it returns the exact top k with exact scores.
type Index struct {
	dim       int
	perWorker int // vectors per scan goroutine; tests lower it to exercise the parallel path

	mu       sync.RWMutex
	ids      []string
	vecs     []float32 // row i is vecs[i*dim:(i+1)*dim]; contiguous for cache-friendly scans
	codes    []int8    // row i quantized: codes[i*dim+p] ≈ vecs[i*dim+p] / scales[i]
	scales   []float32
	maxScale float32 // the largest scale ever stored: bounds every row's rounding
	pos      map[string]int
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
	i, ok := x.pos[id]
	if !ok {
		i = len(x.ids)
		x.pos[id] = i
		x.ids = append(x.ids, id)
		x.vecs = append(x.vecs, v...)
		x.codes = append(x.codes, make([]int8, x.dim)...)
		x.scales = append(x.scales, 0)
	}
	copy(x.vecs[i*x.dim:(i+1)*x.dim], v)
	x.scales[i] = quantize(v, x.codes[i*x.dim:(i+1)*x.dim])
	x.maxScale = max(x.maxScale, x.scales[i])
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
		copy(x.codes[i*x.dim:(i+1)*x.dim], x.codes[last*x.dim:])
		x.scales[i] = x.scales[last]
		x.pos[x.ids[i]] = i
	}
	x.ids = x.ids[:last]
	x.vecs = x.vecs[:last*x.dim]
	x.codes = x.codes[:last*x.dim]
	x.scales = x.scales[:last]
	delete(x.pos, id)
}

// quantize writes v's int8 form to codes (the largest |component| becomes ±127) and
// returns the scale that maps a code back: v[p] ≈ codes[p] × scale.
func quantize(v []float32, codes []int8) float32 {
	var m float32
	for _, f := range v {
		m = max(m, float32(math.Abs(float64(f))))
	}
	if m == 0 {
		clear(codes)
		return 0
	}
	inv := 127 / m
	for p, f := range v {
		codes[p] = int8(math.Round(float64(f * inv)))
	}
	return m / 127
}

// rerankDepth is how many candidates one scan keeps for a top k: enough that the second
// pass (see Search) is rare; it is needed only where more than that many vectors score
// within rounding of the k-th best.
func rerankDepth(k int) int { return k + max(k, 64) }

// errSigmas is how many standard deviations of int8 rounding error the re-rank margin
// covers. The error of one approximate cosine is a sum of dim independent roundings of at
// most half a step: its spread is sqrt((sq² + sv²)/12) for the query's and the vector's
// steps sq, sv (~0.0006 for MiniLM-sized unit vectors); 6σ is never reached in practice.
const errSigmas = 6

// Search returns the k stored vectors most similar to q, best first. Ties are broken by
// ID so results are deterministic.
//
// The int8 scan keeps the rerankDepth(k) best rows of each chunk by approximate score; A
// is the k-th best approximate score among them. A row of the exact top k scores at least
// A − 2e approximately (e bounds the rounding error: the k rows at or above A score at
// least A − e exactly), so every row at or above that threshold is re-ranked exactly — a
// chunk whose kept rows all clear it may have dropped others, and is scanned once more for
// every row above it.
func (x *Index) Search(q []float32, k int) []Scored {
	if k <= 0 || len(q) != x.dim {
		return nil
	}
	qc := make([]int8, x.dim)
	sq := quantize(q, qc)
	depth := rerankDepth(k)

	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.ids)
	workers := max(1, min(runtime.GOMAXPROCS(0), n/x.perWorker))
	parts := make([]candidates, workers)
	x.parallel(workers, func(w int) {
		parts[w] = x.scan(qc, sq, w*n/workers, (w+1)*n/workers, depth, float32(math.Inf(-1)))
	})
	var approx []float32
	for _, p := range parts {
		approx = append(approx, p.approx...)
	}
	if len(approx) == 0 {
		return nil
	}
	slices.SortFunc(approx, func(a, b float32) int { return cmp.Compare(b, a) })
	e := errSigmas * float32(math.Sqrt(float64(sq*sq+x.maxScale*x.maxScale)/12))
	threshold := approx[min(k, len(approx))-1] - 2*e
	x.parallel(workers, func(w int) {
		if p := parts[w]; len(p.rows) == depth && p.approx[0] >= threshold {
			parts[w] = x.scan(qc, sq, w*n/workers, (w+1)*n/workers, -1, threshold)
		}
	})
	var cand []int32
	for _, p := range parts {
		for i, r := range p.rows {
			if p.approx[i] >= threshold {
				cand = append(cand, r)
			}
		}
	}
	exact := make([]float32, len(cand))
	dotRows(q, x.vecs, x.dim, cand, exact)
	out := make([]Scored, len(cand))
	for i, r := range cand {
		out[i] = Scored{ID: x.ids[r], Score: exact[i]}
	}
	slices.SortFunc(out, func(a, b Scored) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	return out[:min(k, len(out))]
}

// parallel runs f(0..workers-1), on goroutines when there is more than one, and waits.
func (x *Index) parallel(workers int, f func(w int)) {
	if workers == 1 {
		f(0)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(w)
		}()
	}
	wg.Wait()
}

// parallelScanMin is the number of vectors per goroutine below which a parallel scan
// costs more in scheduling than it saves.
const parallelScanMin = 8192

// scanBlock is how many rows one kernel call scores: small enough for a stack-sized
// buffer, large enough that the cgo call is noise.
const scanBlock = 1024

// candidates are rows with their approximate scores; as scan returns them with a depth,
// a min-heap (the worst kept row at index 0).
type candidates struct {
	rows   []int32
	approx []float32
}

// scan scores rows [from, to) by their int8 codes (qc the query's codes, sq its scale)
// and returns those scoring at least min: with depth > 0 only the best depth of them.
// Callers hold x.mu.
func (x *Index) scan(qc []int8, sq float32, from, to, depth int, min float32) candidates {
	var h candidates
	if depth > 0 {
		h = candidates{rows: make([]int32, 0, depth), approx: make([]float32, 0, depth)}
	}
	var dots [scanBlock]int32
	for b := from; b < to; b += scanBlock {
		m := to - b
		if m > scanBlock {
			m = scanBlock
		}
		dotI8(qc, x.codes[b*x.dim:(b+m)*x.dim], x.dim, dots[:m])
		for j, d := range dots[:m] {
			r := int32(b + j)
			a := float32(d) * x.scales[r] * sq
			switch {
			case a < min:
			case depth <= 0:
				h.rows, h.approx = append(h.rows, r), append(h.approx, a)
			case len(h.rows) < depth:
				h.push(r, a)
			case a > h.approx[0]:
				h.rows[0], h.approx[0] = r, a
				h.down(0)
			}
		}
	}
	return h
}

func (h *candidates) push(r int32, a float32) {
	h.rows, h.approx = append(h.rows, r), append(h.approx, a)
	for i := len(h.rows) - 1; i > 0; {
		p := (i - 1) / 2
		if h.approx[p] <= h.approx[i] {
			break
		}
		h.swap(i, p)
		i = p
	}
}

func (h *candidates) down(i int) {
	n := len(h.rows)
	for {
		least, l := i, 2*i+1
		if l < n && h.approx[l] < h.approx[least] {
			least = l
		}
		if r := l + 1; r < n && h.approx[r] < h.approx[least] {
			least = r
		}
		if least == i {
			return
		}
		h.swap(i, least)
		i = least
	}
}

func (h *candidates) swap(i, j int) {
	h.rows[i], h.rows[j] = h.rows[j], h.rows[i]
	h.approx[i], h.approx[j] = h.approx[j], h.approx[i]
}

// better orders results: higher score first, then smaller ID.
func better(a, b Scored) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID < b.ID
}
