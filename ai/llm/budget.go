package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/memnode/memnode/internal/atomicfile"
)

// BudgetStore persists settled token usage per UTC day ("2006-01-02"). Implementations must
// be safe for concurrent use; Add returns the day's new total.
type BudgetStore interface {
	Load(ctx context.Context, day string) (int64, error)
	Add(ctx context.Context, day string, tokens int64) (int64, error)
}

// Day returns the UTC day key used by BudgetStore.
func Day(t time.Time) string { return t.UTC().Format("2006-01-02") }

// MemoryBudgetStore keeps usage in memory (tests, or a node without persistence).
type MemoryBudgetStore struct {
	mu   sync.Mutex
	days map[string]int64
}

// NewMemoryBudgetStore returns an empty in-memory store.
func NewMemoryBudgetStore() *MemoryBudgetStore {
	return &MemoryBudgetStore{days: map[string]int64{}}
}

// Load implements BudgetStore.
func (m *MemoryBudgetStore) Load(_ context.Context, day string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.days[day], nil
}

// Add implements BudgetStore.
func (m *MemoryBudgetStore) Add(_ context.Context, day string, tokens int64) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.days[day] += tokens
	return m.days[day], nil
}

// FileBudgetStore keeps usage in a small JSON file {day: tokens}, rewritten atomically
// (temp file, fsync, rename) on every Add. Only the last keepDays days are kept.
type FileBudgetStore struct {
	path string
	mu   sync.Mutex
	days map[string]int64 // nil until first read
}

const keepDays = 14

// NewFileBudgetStore returns a store backed by path (created on first Add).
func NewFileBudgetStore(path string) *FileBudgetStore { return &FileBudgetStore{path: path} }

func (f *FileBudgetStore) loadLocked() error {
	if f.days != nil {
		return nil
	}
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		f.days = map[string]int64{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read budget file: %w", err)
	}
	days := map[string]int64{}
	if err := json.Unmarshal(b, &days); err != nil {
		return fmt.Errorf("parse budget file %s: %w", f.path, err)
	}
	f.days = days
	return nil
}

// Load implements BudgetStore.
func (f *FileBudgetStore) Load(_ context.Context, day string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.loadLocked(); err != nil {
		return 0, err
	}
	return f.days[day], nil
}

// Add implements BudgetStore.
func (f *FileBudgetStore) Add(_ context.Context, day string, tokens int64) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.loadLocked(); err != nil {
		return 0, err
	}
	next := make(map[string]int64, len(f.days)+1)
	for d, v := range f.days {
		next[d] = v
	}
	next[day] += tokens
	keys := make([]string, 0, len(next))
	for d := range next {
		keys = append(keys, d)
	}
	sort.Strings(keys)
	for len(keys) > keepDays {
		delete(next, keys[0])
		keys = keys[1:]
	}
	b, err := json.Marshal(next)
	if err != nil {
		return 0, fmt.Errorf("encode budget: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return 0, fmt.Errorf("write budget file: %w", err)
	}
	if err := atomicfile.Write(f.path, b, 0o600); err != nil {
		return 0, fmt.Errorf("write budget file: %w", err)
	}
	f.days = next
	return next[day], nil
}

// Budget is a hard daily token cap shared by every provider of a Chain. Reserve before
// sending (conservative estimate), Settle after (actual usage): the sum of settled usage and
// open reservations never exceeds the limit, whatever the concurrency.
type Budget struct {
	limit int64
	store BudgetStore
	now   func() time.Time

	mu       sync.Mutex
	day      string
	used     int64 // settled, as persisted
	reserved int64 // open reservations for day
}

// NewBudget returns a budget of limit tokens per UTC day; limit <= 0 means unlimited.
// now defaults to time.Now.
func NewBudget(limit int64, store BudgetStore, now func() time.Time) *Budget {
	if store == nil {
		store = NewMemoryBudgetStore()
	}
	if now == nil {
		now = time.Now
	}
	return &Budget{limit: limit, store: store, now: now}
}

// Reservation is an open claim on the budget; settle it exactly once.
type Reservation struct {
	b      *Budget
	day    string
	tokens int64
	once   sync.Once
}

// rollLocked moves to the current UTC day, loading its persisted usage.
func (b *Budget) rollLocked(ctx context.Context) error {
	day := Day(b.now())
	if day == b.day {
		return nil
	}
	used, err := b.store.Load(ctx, day)
	if err != nil {
		return fmt.Errorf("load budget: %w", err)
	}
	// Reservations of the previous day settle against that day (see Settle).
	b.day, b.used, b.reserved = day, used, 0
	return nil
}

// Reserve claims tokens for one request, or returns ErrBudgetExhausted.
func (b *Budget) Reserve(ctx context.Context, tokens int64) (*Reservation, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.rollLocked(ctx); err != nil {
		return nil, err
	}
	if b.limit > 0 && b.used+b.reserved+tokens > b.limit {
		return nil, ErrBudgetExhausted
	}
	b.reserved += tokens
	return &Reservation{b: b, day: b.day, tokens: tokens}, nil
}

// Settle releases the reservation and records the actual usage. Actual usage above the
// reservation is recorded as reported (the truth), but can only happen if the estimator
// undercounts; the default estimator is a strict upper bound.
func (r *Reservation) Settle(ctx context.Context, actual int64) error {
	var err error
	r.once.Do(func() {
		b := r.b
		b.mu.Lock()
		defer b.mu.Unlock()
		if actual > 0 {
			if _, err = b.store.Add(ctx, r.day, actual); err != nil {
				err = fmt.Errorf("record budget: %w", err)
			}
		}
		if r.day == b.day {
			b.reserved -= r.tokens
			if actual > 0 {
				b.used += actual
			}
		}
	})
	return err
}

// Used returns the settled usage of the current UTC day.
func (b *Budget) Used(ctx context.Context) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.rollLocked(ctx); err != nil {
		return 0, err
	}
	return b.used, nil
}

// Left returns the tokens still available today (limit - used - reserved), or -1 when the
// budget is unlimited.
func (b *Budget) Left(ctx context.Context) int64 {
	if b == nil || b.limit <= 0 {
		return -1
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rollLocked(ctx) != nil {
		return 0
	}
	return max(b.limit-b.used-b.reserved, 0)
}

// Limit returns the daily limit (<= 0: unlimited).
func (b *Budget) Limit() int64 { return b.limit }

// EstimateTokens is the default reservation estimate for a prompt: one token per byte plus
// framing overhead. Byte-level BPE (Claude, GPT) and SentencePiece (Gemini) never produce more
// tokens than bytes, so this is a strict upper bound and the cap holds to the token. It
// over-reserves about 3x for typical code, which only matters in the last request of a day.
func EstimateTokens(system, prompt string) int64 {
	return int64(len(system)+len(prompt)) + 64
}
