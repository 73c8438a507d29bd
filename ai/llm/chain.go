package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memnode/memnode/ai"
)

// ChainConfig configures a Chain.
type ChainConfig struct {
	// Compressors are tried in order.
	Compressors []*Compressor
	// Fallback ends the chain (the offline compressor); required.
	Fallback ai.Compressor
	// Budget is the shared daily token cap; nil means unlimited.
	Budget *Budget
	// AuthCooldown is how long a provider with a rejected key is skipped; default 1h.
	AuthCooldown time.Duration
	// Now defaults to time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// DefaultAuthCooldown is how long a provider whose key was rejected is left alone.
const DefaultAuthCooldown = time.Hour

// ErrNoFallback is returned by NewChain without a fallback compressor.
var ErrNoFallback = errors.New("llm: chain needs a fallback compressor")

// Chain is an ai.Compressor over ordered providers ending in a fallback. Per failure class:
// auth_invalid disables a provider for AuthCooldown, quota_exhausted until the next UTC day,
// a rate limit with a long Retry-After for that long; transient and unrecoverable failures
// move the request to the next provider. Once a request cannot be covered by the daily
// budget, only the fallback runs until the next UTC day. Safe for concurrent use.
type Chain struct {
	cfg ChainConfig
	log *slog.Logger

	mu            sync.Mutex
	disabledUntil map[int]time.Time
	budgetOutDay  string // UTC day the budget ran out, "" if not

	fallbackCalls atomic.Int64
	fallbackErrs  atomic.Int64
}

var _ ai.Compressor = (*Chain)(nil)

// NewChain validates cfg and fills in defaults.
func NewChain(cfg ChainConfig) (*Chain, error) {
	if cfg.Fallback == nil {
		return nil, ErrNoFallback
	}
	for i, c := range cfg.Compressors {
		if c == nil {
			return nil, fmt.Errorf("llm: chain compressor %d is nil", i)
		}
	}
	if cfg.AuthCooldown <= 0 {
		cfg.AuthCooldown = DefaultAuthCooldown
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Chain{cfg: cfg, log: log, disabledUntil: map[int]time.Time{}}, nil
}

// Name implements ai.Compressor: the providers in order, then the fallback.
func (c *Chain) Name() string {
	names := make([]string, 0, len(c.cfg.Compressors)+1)
	for _, p := range c.cfg.Compressors {
		names = append(names, p.Name())
	}
	return strings.Join(append(names, c.cfg.Fallback.Name()), ">")
}

// Observe implements ai.Compressor. It splits calls into requests that fit the first
// provider's caps and sends each down the chain; it fails only when ctx is done (or when the
// fallback itself fails). Usage sums the tokens of all requests; its Model is the first
// request's.
func (c *Chain) Observe(ctx context.Context, calls []ai.ToolCall) ([]ai.Observation, ai.Usage, error) {
	if len(calls) == 0 {
		return nil, ai.Usage{}, nil
	}
	maxCall, maxReq := DefaultMaxCallBytes, DefaultMaxRequestBytes
	if len(c.cfg.Compressors) > 0 {
		maxCall, maxReq = c.cfg.Compressors[0].cfg.MaxCallBytes, c.cfg.Compressors[0].cfg.MaxRequestBytes
	}
	var all []ai.Observation
	var total ai.Usage
	for _, batch := range splitBatches(calls, maxCall, maxReq) {
		obs, u, err := c.observeBatch(ctx, batch)
		total = addUsage(total, u)
		if err != nil {
			return all, total, err
		}
		all = append(all, obs...)
	}
	return all, total, nil
}

func (c *Chain) observeBatch(ctx context.Context, batch []ai.ToolCall) ([]ai.Observation, ai.Usage, error) {
	for i, p := range c.cfg.Compressors {
		if !c.usable(i) {
			continue
		}
		obs, u, err := p.observeBatch(ctx, batch, c.cfg.Budget)
		if err == nil {
			return obs, u, nil
		}
		if stop, cerr := c.handle(ctx, i, err); stop {
			if cerr != nil {
				return nil, ai.Usage{}, cerr
			}
			break
		}
	}
	c.fallbackCalls.Add(1)
	obs, u, err := c.cfg.Fallback.Observe(ctx, batch)
	if err != nil {
		c.fallbackErrs.Add(1)
		return nil, u, fmt.Errorf("fallback %s: %w", c.cfg.Fallback.Name(), err)
	}
	return obs, u, nil
}

// Summarize implements ai.Compressor with the same policy as Observe.
func (c *Chain) Summarize(ctx context.Context, in ai.SessionInput) (ai.Summary, ai.Usage, error) {
	for i, p := range c.cfg.Compressors {
		if !c.usable(i) {
			continue
		}
		s, u, err := p.summarize(ctx, in, c.cfg.Budget)
		if err == nil {
			return s, u, nil
		}
		if stop, cerr := c.handle(ctx, i, err); stop {
			if cerr != nil {
				return ai.Summary{}, ai.Usage{}, cerr
			}
			break
		}
	}
	c.fallbackCalls.Add(1)
	s, u, err := c.cfg.Fallback.Summarize(ctx, in)
	if err != nil {
		c.fallbackErrs.Add(1)
		return s, u, fmt.Errorf("fallback %s: %w", c.cfg.Fallback.Name(), err)
	}
	return s, u, nil
}

// usable reports whether provider i may be asked now.
func (c *Chain) usable(i int) bool {
	now := c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.budgetOutDay != "" {
		if c.budgetOutDay == Day(now) {
			return false
		}
		c.budgetOutDay = ""
	}
	return !now.Before(c.disabledUntil[i])
}

// handle applies the per-class policy to a failure of provider i. stop means "skip the
// remaining providers": with a non-nil error the caller returns it (ctx done), otherwise it
// goes straight to the fallback (budget exhausted).
func (c *Chain) handle(ctx context.Context, i int, err error) (stop bool, _ error) {
	if ctx.Err() != nil {
		return true, ctx.Err()
	}
	now := c.cfg.Now()
	if errors.Is(err, ErrBudgetExhausted) {
		c.mu.Lock()
		first := c.budgetOutDay == ""
		c.budgetOutDay = Day(now)
		c.mu.Unlock()
		if first {
			c.log.Warn("daily token budget reached; offline compressor until the next UTC day", "limit", c.cfg.Budget.Limit())
		}
		return true, nil
	}
	var pe *Error
	if !errors.As(err, &pe) {
		return false, nil
	}
	var until time.Time
	switch pe.Class {
	case AuthInvalid:
		until = now.Add(c.cfg.AuthCooldown)
	case QuotaExhausted:
		until = nextUTCDay(now)
		if r := now.Add(pe.RetryAfter); r.After(until) {
			until = r
		}
	case RateLimit:
		if pe.RetryAfter > 0 {
			until = now.Add(pe.RetryAfter)
		}
	}
	if !until.IsZero() {
		c.mu.Lock()
		c.disabledUntil[i] = until
		c.mu.Unlock()
		c.log.Warn("provider disabled", "provider", pe.Provider, "class", pe.Class, "until", until.UTC().Format(time.RFC3339))
	}
	return false, nil
}

func nextUTCDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}

// Stats returns one entry per provider in chain order, then one for the fallback (Calls =
// requests it handled, Errors[Unrecoverable] = its failures).
func (c *Chain) Stats() []ProviderStats {
	out := make([]ProviderStats, 0, len(c.cfg.Compressors)+1)
	now := c.cfg.Now()
	c.mu.Lock()
	disabled := make(map[int]time.Time, len(c.disabledUntil))
	for k, v := range c.disabledUntil {
		disabled[k] = v
	}
	budgetOut := c.budgetOutDay == Day(now)
	c.mu.Unlock()
	for i, p := range c.cfg.Compressors {
		s := p.Stats()
		if d := disabled[i]; d.After(now) {
			s.DisabledUntil = d
		}
		if budgetOut && nextUTCDay(now).After(s.DisabledUntil) {
			s.DisabledUntil = nextUTCDay(now)
		}
		out = append(out, s)
	}
	fb := ProviderStats{Name: c.cfg.Fallback.Name(), Calls: c.fallbackCalls.Load(), Errors: map[Class]int64{}}
	if n := c.fallbackErrs.Load(); n > 0 {
		fb.Errors[Unrecoverable] = n
	}
	return append(out, fb)
}

// BudgetUsed returns the tokens used today, as settled (0 without a budget).
func (c *Chain) BudgetUsed() int64 {
	if c.cfg.Budget == nil {
		return 0
	}
	used, err := c.cfg.Budget.Used(context.Background())
	if err != nil {
		return 0
	}
	return used
}

// BudgetLimit returns the daily token limit, or -1 when there is none.
func (c *Chain) BudgetLimit() int64 {
	if c.cfg.Budget == nil || c.cfg.Budget.Limit() <= 0 {
		return -1
	}
	return c.cfg.Budget.Limit()
}

// Close closes every provider (an agent CLI's running children are killed and waited for).
func (c *Chain) Close() error {
	var errs []error
	for _, p := range c.cfg.Compressors {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// BudgetLeft returns the tokens left today, or -1 when there is no budget.
func (c *Chain) BudgetLeft() int64 {
	if c.cfg.Budget == nil {
		return -1
	}
	return c.cfg.Budget.Left(context.Background())
}
