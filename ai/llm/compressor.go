package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/memnode/memnode/ai"
)

// CompressorConfig configures a single-provider Compressor. Zero values take the defaults.
type CompressorConfig struct {
	Provider Provider
	// MaxCallBytes caps the content of one tool call in a prompt; MaxRequestBytes caps one
	// request (larger batches are split).
	MaxCallBytes    int
	MaxRequestBytes int
	// MaxOutputTokens is requested from the provider and reserved from the budget.
	MaxOutputTokens int
	// MaxAttempts bounds attempts per request (first try included); default 3.
	MaxAttempts int
	// BaseDelay and MaxDelay shape the exponential backoff: BaseDelay*2^n plus up to 50%
	// jitter, at most MaxDelay. Defaults 500ms and 30s.
	BaseDelay, MaxDelay time.Duration
	// MaxRetryAfter is the longest server-requested wait honoured in place; longer waits end
	// the attempt so a Chain can move on. Default 60s.
	MaxRetryAfter time.Duration
	// Budget, when set, gates every attempt (a Chain passes its own instead).
	Budget *Budget
	// Estimate returns the input-token reservation for a request; default EstimateTokens.
	Estimate func(system, prompt string) int64
	// Sleep waits d or until ctx is done; default a timer. Tests inject a recorder.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a random duration in [0, n); default math/rand/v2.
	Jitter func(n time.Duration) time.Duration
	Logger *slog.Logger
}

// Defaults for CompressorConfig.
const (
	DefaultMaxAttempts   = 3
	DefaultBaseDelay     = 500 * time.Millisecond
	DefaultMaxDelay      = 30 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
)

// Compressor is an ai.Compressor backed by one Provider. Safe for concurrent use.
type Compressor struct {
	cfg CompressorConfig
	log *slog.Logger

	mu    sync.Mutex
	stats ProviderStats
}

var _ ai.Compressor = (*Compressor)(nil)

// ErrNoProvider is returned by NewCompressor without a provider.
var ErrNoProvider = errors.New("llm: no provider")

// NewCompressor validates cfg and fills in defaults.
func NewCompressor(cfg CompressorConfig) (*Compressor, error) {
	if cfg.Provider == nil {
		return nil, ErrNoProvider
	}
	if cfg.MaxCallBytes <= 0 {
		cfg.MaxCallBytes = DefaultMaxCallBytes
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.MaxCallBytes > cfg.MaxRequestBytes/2 {
		return nil, fmt.Errorf("llm: max call bytes %d must be at most half of max request bytes %d", cfg.MaxCallBytes, cfg.MaxRequestBytes)
	}
	if cfg.MaxOutputTokens <= 0 {
		cfg.MaxOutputTokens = DefaultMaxOutputTokens
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.BaseDelay <= 0 {
		cfg.BaseDelay = DefaultBaseDelay
	}
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = DefaultMaxDelay
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if cfg.Estimate == nil {
		cfg.Estimate = EstimateTokens
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleepCtx
	}
	if cfg.Jitter == nil {
		cfg.Jitter = func(n time.Duration) time.Duration {
			if n <= 0 {
				return 0
			}
			return rand.N(n)
		}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Compressor{cfg: cfg, log: log.With("provider", cfg.Provider.Name())}
	c.stats = ProviderStats{Name: cfg.Provider.Name(), Model: cfg.Provider.Model(), Errors: map[Class]int64{}}
	return c, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Name implements ai.Compressor.
func (c *Compressor) Name() string { return c.cfg.Provider.Name() }

// Close closes the provider when it holds resources (an agent CLI's running children).
func (c *Compressor) Close() error {
	if cl, ok := c.cfg.Provider.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// Model is the configured model of the provider.
func (c *Compressor) Model() string { return c.cfg.Provider.Model() }

// Observe implements ai.Compressor: one request per batch that fits MaxRequestBytes.
func (c *Compressor) Observe(ctx context.Context, calls []ai.ToolCall) ([]ai.Observation, ai.Usage, error) {
	var all []ai.Observation
	var total ai.Usage
	for _, batch := range splitBatches(calls, c.cfg.MaxCallBytes, c.cfg.MaxRequestBytes) {
		obs, u, err := c.observeBatch(ctx, batch, c.cfg.Budget)
		total = addUsage(total, u)
		if err != nil {
			return all, total, err
		}
		all = append(all, obs...)
	}
	return all, total, nil
}

func addUsage(a, b ai.Usage) ai.Usage {
	if a.Model == "" {
		a.Model = b.Model
	}
	a.InputTokens += b.InputTokens
	a.OutputTokens += b.OutputTokens
	return a
}

// observeBatch sends one request for calls (which must already fit the request cap).
func (c *Compressor) observeBatch(ctx context.Context, calls []ai.ToolCall, budget *Budget) ([]ai.Observation, ai.Usage, error) {
	if len(calls) == 0 {
		return nil, ai.Usage{}, nil
	}
	req := Request{System: systemPrompt, Prompt: observationPrompt(calls, c.cfg.MaxCallBytes), MaxOutputTokens: c.cfg.MaxOutputTokens}
	resp, err := c.complete(ctx, req, budget)
	u := ai.Usage{Model: resp.Model, InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens}
	if err != nil {
		return nil, u, err
	}
	obs, perr := ParseObservations(resp.Text)
	if perr != nil {
		return nil, u, c.badOutput(perr)
	}
	return obs, u, nil
}

// Summarize implements ai.Compressor.
func (c *Compressor) Summarize(ctx context.Context, in ai.SessionInput) (ai.Summary, ai.Usage, error) {
	return c.summarize(ctx, in, c.cfg.Budget)
}

func (c *Compressor) summarize(ctx context.Context, in ai.SessionInput, budget *Budget) (ai.Summary, ai.Usage, error) {
	req := Request{System: systemPrompt, Prompt: summaryPrompt(in, c.cfg.MaxRequestBytes), MaxOutputTokens: c.cfg.MaxOutputTokens}
	resp, err := c.complete(ctx, req, budget)
	u := ai.Usage{Model: resp.Model, InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens}
	if err != nil {
		return ai.Summary{}, u, err
	}
	s, perr := ParseSummary(resp.Text)
	if perr != nil {
		return ai.Summary{}, u, c.badOutput(perr)
	}
	return s, u, nil
}

func (c *Compressor) badOutput(err error) error {
	e := &Error{Provider: c.Name(), Class: Unrecoverable, Err: err}
	c.record(0, 0, e)
	c.log.Warn("model answer unusable", "class", e.Class, "err", err)
	return e
}

// complete runs one request with retries. It returns the successful Response, an *Error, a
// budget error, or ctx.Err().
func (c *Compressor) complete(ctx context.Context, req Request, budget *Budget) (Response, error) {
	est := c.cfg.Estimate(req.System, req.Prompt) + int64(req.MaxOutputTokens)
	var last error
	for attempt := 0; attempt < c.cfg.MaxAttempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return Response{}, err
		}
		var res *Reservation
		if budget != nil {
			r, err := budget.Reserve(ctx, est)
			if err != nil {
				return Response{}, fmt.Errorf("%s: %w", c.Name(), err)
			}
			res = r
		}
		resp, err := c.cfg.Provider.Complete(ctx, req)
		if res != nil {
			var actual int64
			if err == nil {
				actual = int64(resp.InputTokens + resp.OutputTokens)
			}
			if serr := res.Settle(context.WithoutCancel(ctx), actual); serr != nil {
				c.log.Warn("budget not recorded", "err", serr)
			}
		}
		if err == nil {
			c.record(resp.InputTokens, resp.OutputTokens, nil)
			return resp, nil
		}
		if ctx.Err() != nil {
			return Response{}, ctx.Err()
		}
		var pe *Error
		if !errors.As(err, &pe) {
			pe = &Error{Provider: c.Name(), Class: Transient, Err: err}
		}
		c.record(0, 0, pe)
		last = pe
		if !pe.Retryable() || attempt == c.cfg.MaxAttempts-1 {
			break
		}
		if pe.RetryAfter > c.cfg.MaxRetryAfter {
			c.log.Info("provider asks for a long wait; giving up on it for now", "class", pe.Class, "retry_after", pe.RetryAfter)
			break
		}
		d := c.backoff(attempt)
		if pe.RetryAfter > 0 {
			// Honour the server's wait, plus a little jitter so workers do not return together.
			d = pe.RetryAfter + c.cfg.Jitter(c.cfg.BaseDelay/2)
		}
		c.log.Debug("retrying provider", "class", pe.Class, "status", pe.Status, "attempt", attempt+1, "delay", d)
		if err := c.cfg.Sleep(ctx, d); err != nil {
			return Response{}, err
		}
	}
	c.log.Warn("provider failed", "err", last)
	return Response{}, last
}

// backoff is BaseDelay*2^attempt plus up to 50% jitter, capped at MaxDelay.
func (c *Compressor) backoff(attempt int) time.Duration {
	d := c.cfg.BaseDelay << min(attempt, 20)
	if d <= 0 || d > c.cfg.MaxDelay {
		d = c.cfg.MaxDelay
	}
	d += c.cfg.Jitter(d / 2)
	return min(d, c.cfg.MaxDelay)
}

func (c *Compressor) record(in, out int, err *Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.stats.Errors[err.Class]++
		c.stats.LastError = err.Error()
		// An unusable answer was already counted as a call when it arrived.
		if !errors.Is(err, ErrBadOutput) {
			c.stats.Calls++
		}
		return
	}
	c.stats.Calls++
	c.stats.InputTokens += int64(in)
	c.stats.OutputTokens += int64(out)
}

// Stats returns a snapshot of this provider's counters.
func (c *Compressor) Stats() ProviderStats {
	var cli string
	if e, ok := c.cfg.Provider.(interface{ Executable() string }); ok {
		cli = e.Executable()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.CLI = cli
	s.Errors = make(map[Class]int64, len(c.stats.Errors))
	for k, v := range c.stats.Errors {
		s.Errors[k] = v
	}
	return s
}

// ProviderStats are one provider's counters since start.
type ProviderStats struct {
	Name  string `json:"name"`
	Model string `json:"model"`
	// Calls counts requests sent (each retry attempt counts).
	Calls        int64           `json:"calls"`
	InputTokens  int64           `json:"input_tokens"`
	OutputTokens int64           `json:"output_tokens"`
	Errors       map[Class]int64 `json:"errors,omitempty"`
	// DisabledUntil is set while a Chain skips the provider (auth, quota, long rate limit).
	DisabledUntil time.Time `json:"disabled_until,omitzero"`
	// LastError is the last failure, one line, key-free.
	LastError string `json:"last_error,omitempty"`
	// CLI is an agent CLI provider's executable, or "not found: <command>"; "" for HTTP
	// providers.
	CLI string `json:"cli,omitempty"`
}
