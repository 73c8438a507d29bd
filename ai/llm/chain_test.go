package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/internal/testkit"
)

// fakeClock is a settable clock shared by a Chain and its Budget.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func newTestChain(t *testing.T, fb ai.Compressor, budget *Budget, clk *fakeClock, comps ...*Compressor) *Chain {
	t.Helper()
	ch, err := NewChain(ChainConfig{Compressors: comps, Fallback: fb, Budget: budget, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestChainPolicyPerClass(t *testing.T) {
	clk := newFakeClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
	qStatus, qBody := quotaBody("openai")
	auth := newFakeAPI(t, "anthropic", "right", fakeReply{text: goodObservation})
	quota := newFakeAPI(t, "openai", "k", fakeReply{status: qStatus, body: qBody})
	flaky := newFakeAPI(t, "gemini", "k", fakeReply{status: 503, body: `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`})
	authP := auth.provider(time.Second)
	auth.setKey("rotated") // our key is now wrong

	sl := &sleepRecorder{}
	fb := &fakeOffline{}
	ch := newTestChain(t, fb, nil, clk,
		newTestCompressor(t, authP, sl), newTestCompressor(t, quota.provider(time.Second), sl), newTestCompressor(t, flaky.provider(time.Second), sl))

	obs, u, err := ch.Observe(context.Background(), toolCalls(3, "s"))
	if err != nil || len(obs) != 3 || u.Model != "offline" || fb.handled() != 3 {
		t.Fatalf("every call must end as an observation via the fallback: %d obs, usage %+v, err %v", len(obs), u, err)
	}
	if auth.count() != 1 || quota.count() != 1 || flaky.count() != DefaultMaxAttempts {
		t.Fatalf("requests: auth %d quota %d flaky %d", auth.count(), quota.count(), flaky.count())
	}
	st := ch.Stats()
	if len(st) != 4 || st[3].Name != "offline" || st[3].Calls != 1 {
		t.Fatalf("stats %+v", st)
	}
	if !st[0].DisabledUntil.Equal(clk.Now().Add(DefaultAuthCooldown)) || st[0].Errors[AuthInvalid] != 1 {
		t.Fatalf("auth provider: %+v", st[0])
	}
	if !st[1].DisabledUntil.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) || st[1].Errors[QuotaExhausted] != 1 {
		t.Fatalf("quota provider must be off until the next UTC day: %+v", st[1])
	}
	if !st[2].DisabledUntil.IsZero() || st[2].Errors[Transient] != int64(DefaultMaxAttempts) {
		t.Fatalf("transient provider stays enabled: %+v", st[2])
	}

	// Second round: the disabled ones are skipped, the flaky one is asked again and recovers.
	flaky.script(fakeReply{text: goodObservation, in: 40, out: 9})
	obs, u, err = ch.Observe(context.Background(), toolCalls(1, "s"))
	if err != nil || len(obs) != 1 || u.Model != flaky.model || u.InputTokens != 40 {
		t.Fatalf("second round: %+v %+v %v", obs, u, err)
	}
	if auth.count() != 1 || quota.count() != 1 {
		t.Fatalf("disabled providers were called again")
	}

	// After the cool-down and the day change, both come back.
	clk.Advance(10 * time.Hour)
	auth.setKey("right")
	if _, u, err := ch.Observe(context.Background(), toolCalls(1, "s")); err != nil || u.Model != auth.model {
		t.Fatalf("after cool-down the first provider should answer: %+v %v", u, err)
	}
}

func TestChainSummarizeFallsBack(t *testing.T) {
	clk := newFakeClock(time.Now())
	f := newFakeAPI(t, "anthropic", "k", fakeReply{text: "I'd rather not."})
	fb := &fakeOffline{}
	ch := newTestChain(t, fb, nil, clk, newTestCompressor(t, f.provider(time.Second), &sleepRecorder{}))
	s, u, err := ch.Summarize(context.Background(), ai.SessionInput{Request: "do it"})
	if err != nil || s.Notes != "offline" || u.Model != "offline" {
		t.Fatalf("garbage summary must fall back: %+v %+v %v", s, u, err)
	}
	f.script(fakeReply{text: goodSummary, in: 5, out: 5})
	if s, _, err := ch.Summarize(context.Background(), ai.SessionInput{Request: "do it"}); err != nil || s.Learned == "" {
		t.Fatalf("provider summary: %+v %v", s, err)
	}
}

func TestChainReturnsErrorOnlyWhenContextDone(t *testing.T) {
	f := newFakeAPI(t, "openai", "k", fakeReply{block: true})
	ctx, cancel := context.WithCancel(context.Background())
	ch := newTestChain(t, &fakeOffline{}, nil, newFakeClock(time.Now()), newTestCompressor(t, f.provider(time.Minute), &sleepRecorder{}))
	done := make(chan error, 1)
	go func() { _, _, err := ch.Observe(ctx, toolCalls(1, "s")); done <- err }()
	testkit.WaitFor(t, "the condition", 5*time.Second, func() bool { return f.count() == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestBudgetHoldsToTheToken(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock(time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC))
	b := NewBudget(1000, NewMemoryBudgetStore(), clk.Now)
	r, err := b.Reserve(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reserve(ctx, 1); !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("reserve past the cap: %v", err)
	}
	if err := r.Settle(ctx, 990); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reserve(ctx, 11); !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("11 tokens fit in 10: %v", err)
	}
	r2, err := b.Reserve(ctx, 10)
	if err != nil {
		t.Fatalf("10 tokens left: %v", err)
	}
	_ = r2.Settle(ctx, 10)
	_ = r2.Settle(ctx, 10) // settling twice is a no-op
	if u, _ := b.Used(ctx); u != 1000 || b.Left(ctx) != 0 {
		t.Fatalf("used %d left %d", u, b.Left(ctx))
	}
	clk.Advance(time.Hour) // next UTC day
	if b.Left(ctx) != 1000 {
		t.Fatalf("new day left %d", b.Left(ctx))
	}
}

func TestBudgetConcurrentCallersNeverExceed(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryBudgetStore()
	clk := newFakeClock(time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC))
	const limit = 50_000
	b := NewBudget(limit, store, clk.Now)
	var wg sync.WaitGroup
	var granted atomic.Int64
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				est := int64(100 + (g*37+i*11)%900)
				r, err := b.Reserve(ctx, est)
				if err != nil {
					continue
				}
				actual := est - int64(i%7) // providers report at most what was reserved
				granted.Add(actual)
				if err := r.Settle(ctx, actual); err != nil {
					t.Error(err)
				}
			}
		}(g)
	}
	wg.Wait()
	got, _ := store.Load(ctx, Day(clk.Now()))
	if got > limit || got != granted.Load() {
		t.Fatalf("stored %d, granted %d, limit %d", got, granted.Load(), limit)
	}
	if got < limit-1000 {
		t.Fatalf("budget under-used: %d of %d (every caller should fill it up)", got, limit)
	}
}

// TestChainBudgetCapAgainstRealServers runs concurrent sessions through the chain against a
// fake provider that reports real usage: the provider never bills more than the budget, the
// rest ends in the fallback, and the next UTC day the provider is used again.
func TestChainBudgetCapAgainstRealServers(t *testing.T) {
	f := newFakeAPI(t, "anthropic", "k", fakeReply{text: goodObservation, in: 700, out: 200})
	clk := newFakeClock(time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC))
	store := NewFileBudgetStore(filepath.Join(t.TempDir(), "budget.json"))
	// The estimate is exact here so the test can count: 700 in + 256 max out reserved,
	// 900 settled.
	comp := newTestCompressor(t, f.provider(5*time.Second), &sleepRecorder{}, func(c *CompressorConfig) {
		c.Estimate = func(string, string) int64 { return 700 }
	})
	const limit = 10_000
	budget := NewBudget(limit, store, clk.Now)
	fb := &fakeOffline{}
	ch := newTestChain(t, fb, budget, clk, comp)

	var wg sync.WaitGroup
	var obsCount atomic.Int64
	for s := 0; s < 8; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				obs, _, err := ch.Observe(context.Background(), toolCalls(1, fmt.Sprint("s", s)))
				if err != nil {
					t.Error(err)
				}
				obsCount.Add(int64(len(obs)))
			}
		}(s)
	}
	wg.Wait()
	day := Day(clk.Now())
	used, _ := store.Load(context.Background(), day)
	st := ch.Stats()
	billed := st[0].InputTokens + st[0].OutputTokens
	if used > limit || billed != used {
		t.Fatalf("used %d billed %d limit %d", used, billed, limit)
	}
	// 10000/956 → at most 10 requests fit at once; all 40 events still became observations.
	if f.count() == 0 || f.count() > 11 || obsCount.Load() != 40 || fb.handled() != 40-f.count() {
		t.Fatalf("provider requests %d, observations %d, fallback %d", f.count(), obsCount.Load(), fb.handled())
	}
	if left := ch.BudgetLeft(); left != limit-used {
		t.Fatalf("BudgetLeft %d, want %d", left, limit-used)
	}
	if st[0].DisabledUntil.IsZero() {
		t.Fatalf("status should show the provider off until the next day")
	}

	// Persisted: a fresh store and budget see the same usage.
	reopened := NewBudget(limit, NewFileBudgetStore(store.path), clk.Now)
	if u, _ := reopened.Used(context.Background()); u != used {
		t.Fatalf("reopened budget used %d, want %d", u, used)
	}

	before := f.count()
	clk.Advance(5 * time.Hour) // past midnight UTC
	if _, u, err := ch.Observe(context.Background(), toolCalls(1, "next-day")); err != nil || u.Model != f.model || f.count() != before+1 {
		t.Fatalf("next day the provider must be used again: %+v %v", u, err)
	}
}

func TestFileBudgetStoreCreatesItsDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "budget.json")
	if n, err := NewFileBudgetStore(path).Add(context.Background(), "2026-11-01", 7); err != nil || n != 7 {
		t.Fatalf("add = %d, %v", n, err)
	}
	if v, err := NewFileBudgetStore(path).Load(context.Background(), "2026-11-01"); err != nil || v != 7 {
		t.Fatalf("reload = %d, %v", v, err)
	}
}

func TestFileBudgetStoreAtomicAndPrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "budget.json")
	s := NewFileBudgetStore(path)
	ctx := context.Background()
	for d := 1; d <= 20; d++ {
		if _, err := s.Add(ctx, fmt.Sprintf("2026-11-%02d", d), int64(d)); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := s.Add(ctx, "2026-11-20", 5); n != 25 {
		t.Fatalf("total %d", n)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("budget file mode %v err %v", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
	var days map[string]int64
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &days); err != nil || len(days) != keepDays || days["2026-11-01"] != 0 {
		t.Fatalf("kept days %v", days)
	}
	if v, _ := NewFileBudgetStore(path).Load(ctx, "2026-11-20"); v != 25 {
		t.Fatalf("reload %d", v)
	}
	if err := os.WriteFile(path, []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFileBudgetStore(path).Load(ctx, "x"); err == nil {
		t.Fatal("a corrupt budget file must be an error, not a silent reset")
	}
}

// TestKeyNeverLogged drives failures whose bodies echo the key and checks that the key
// reaches no log line (debug level, JSON), no error string, no stats, and no file.
func TestKeyNeverLogged(t *testing.T) {
	const key = "sk-ant-api03-SECRETSECRETSECRET"
	dir := t.TempDir()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var errs []string
	for _, kind := range kinds {
		f := newFakeAPI(t, kind, key, fakeReply{status: 503, body: `{"error":{"message":"upstream said key=` + key + `"}}`})
		p := f.provider(time.Second)
		f.setKey("other") // now the server rejects ours and echoes it in the 401 body
		c := newTestCompressor(t, p, &sleepRecorder{}, func(c *CompressorConfig) { c.Logger = log })
		ch, err := NewChain(ChainConfig{Compressors: []*Compressor{c}, Fallback: &fakeOffline{}, Logger: log,
			Budget: NewBudget(1_000_000, NewFileBudgetStore(filepath.Join(dir, "budget.json")), nil)})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := ch.Observe(context.Background(), toolCalls(1, "s")); err != nil {
			t.Fatal(err)
		}
		// Also a transient failure whose body carries the key.
		f.setKey(key)
		_, err = p.Complete(context.Background(), Request{Prompt: "x"})
		errs = append(errs, err.Error())
		for _, s := range ch.Stats() {
			errs = append(errs, s.LastError)
		}
	}
	if !strings.Contains(logs.String(), "auth_invalid") {
		t.Fatalf("expected the auth failure to be logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), key) {
		t.Fatalf("key in logs:\n%s", logs.String())
	}
	for _, e := range errs {
		if strings.Contains(e, key) {
			t.Fatalf("key in error/stats: %s", e)
		}
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(key)) {
				t.Fatalf("key in file %s", p)
			}
		}
		return nil
	})
}
