package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Request is one completion request: a system prompt and a single user message.
type Request struct {
	System string
	Prompt string
	// MaxOutputTokens overrides the provider's configured maximum when > 0.
	MaxOutputTokens int
}

// Response is the text a provider produced and what it cost, as the provider reported it.
type Response struct {
	Text         string
	Model        string
	InputTokens  int
	OutputTokens int
}

// Provider is one model endpoint. Implementations are safe for concurrent use.
type Provider interface {
	Name() string
	Model() string
	Complete(ctx context.Context, req Request) (Response, error)
}

// ProviderConfig configures any of the three providers.
type ProviderConfig struct {
	// Name overrides the provider name in stats and logs (e.g. "openrouter", "ollama").
	Name string
	// BaseURL overrides the vendor endpoint (tests, proxies, OpenAI-compatible servers).
	BaseURL string
	Model   string
	// APIKey comes from package keys or an env override read in cmd/. May be empty for local
	// OpenAI-compatible servers (Ollama, LM Studio).
	APIKey     string
	HTTPClient *http.Client
	// MaxOutputTokens is sent as the provider's output cap; default DefaultMaxOutputTokens.
	MaxOutputTokens int
	// Timeout bounds one HTTP attempt; default DefaultTimeout.
	Timeout time.Duration
}

// Defaults for ProviderConfig.
const (
	DefaultMaxOutputTokens = 1024
	DefaultTimeout         = 60 * time.Second
	// maxBodyBytes bounds what is read from a provider response.
	maxBodyBytes = 4 << 20
)

func (c ProviderConfig) withDefaults(name, baseURL, model string) ProviderConfig {
	if c.Name == "" {
		c.Name = name
	}
	if c.BaseURL == "" {
		c.BaseURL = baseURL
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.Model == "" {
		c.Model = model
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.MaxOutputTokens <= 0 {
		c.MaxOutputTokens = DefaultMaxOutputTokens
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

func (c ProviderConfig) maxOut(req Request) int {
	if req.MaxOutputTokens > 0 {
		return req.MaxOutputTokens
	}
	return c.MaxOutputTokens
}

// Class says what a provider failure means for retrying.
type Class string

// Failure classes (claude-mem's ClassifiedProviderError kinds).
const (
	// Transient: network trouble, timeouts, 5xx, overload. Retry, then try the next provider.
	Transient Class = "transient"
	// RateLimit: 429 or equivalent. Retry after RetryAfter, then try the next provider.
	RateLimit Class = "rate_limit"
	// QuotaExhausted: credits or daily quota gone. Disable the provider until the next day.
	QuotaExhausted Class = "quota_exhausted"
	// AuthInvalid: missing, wrong or revoked key. Disable the provider for a cool-down.
	AuthInvalid Class = "auth_invalid"
	// Unrecoverable: the request itself is bad (too large, unknown model) or the answer is
	// unusable. Do not retry on this provider; the next one may still succeed.
	Unrecoverable Class = "unrecoverable"
)

// Classes lists every class in a stable order (for stats output).
func Classes() []Class {
	return []Class{Transient, RateLimit, QuotaExhausted, AuthInvalid, Unrecoverable}
}

// Error is a classified provider failure. Its message never contains the API key.
type Error struct {
	Provider string
	Class    Class
	// Status is the HTTP status, 0 for transport failures and unusable answers.
	Status int
	// RetryAfter is the server's requested wait (Retry-After header or body hint), if any.
	RetryAfter time.Duration
	Message    string
	Err        error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Provider, e.Class)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether the same provider may be asked again.
func (e *Error) Retryable() bool { return e.Class == Transient || e.Class == RateLimit }

// Sentinel errors.
var (
	// ErrBadOutput marks a 200 answer that is neither empty nor parseable XML.
	ErrBadOutput = errors.New("unusable model output")
	// ErrEmptyAnswer marks an empty answer where one was required (summaries).
	ErrEmptyAnswer = errors.New("empty model answer")
	// ErrBudgetExhausted means the daily token budget cannot cover the request.
	ErrBudgetExhausted = errors.New("daily token budget exhausted")
)

// ClassOf returns the class of err, or "" when err is not an *Error.
func ClassOf(err error) Class {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return ""
}

// Classify turns an HTTP failure (status, headers, body) into a classified *Error. It is the
// single place that knows the vendors' quirks: Gemini reports quota as 429/403 and sometimes
// 500 with "quota exceeded" in the body, OpenAI as 429 insufficient_quota, OpenRouter as 402,
// Anthropic overload as 529.
func Classify(provider string, status int, h http.Header, body []byte) *Error {
	msg := errorMessage(body)
	e := &Error{Provider: provider, Status: status, Message: msg, RetryAfter: retryAfter(h, body)}
	low := strings.ToLower(string(body))
	quota := containsAny(low, "insufficient_quota", "quota exceeded", "exceeded your current quota",
		"quota_exceeded", "billing", "insufficient credits", "credit balance", "out of credits")
	perMinute := containsAny(low, "per min", "perminute", "per_minute")
	switch {
	case status == http.StatusUnauthorized:
		e.Class = AuthInvalid
	case containsAny(low, "api key not valid", "invalid api key", "invalid x-api-key", "api_key_invalid", "incorrect api key"):
		e.Class = AuthInvalid
	case status == http.StatusPaymentRequired:
		e.Class = QuotaExhausted
	case quota && !perMinute:
		e.Class = QuotaExhausted
	case status == http.StatusForbidden:
		e.Class = AuthInvalid
	case status == http.StatusTooManyRequests:
		e.Class = RateLimit
	case status == http.StatusRequestTimeout || status == 425 || status >= 500:
		e.Class = Transient
	default:
		e.Class = Unrecoverable
	}
	return e
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// errorMessage pulls a short human message out of the three vendors' error envelopes.
func errorMessage(body []byte) string {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	msg := ""
	if json.Unmarshal(body, &env) == nil && len(env.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Status  string `json:"status"`
		}
		var s string
		if json.Unmarshal(env.Error, &obj) == nil {
			msg = strings.TrimSpace(obj.Type + obj.Status + ": " + obj.Message)
			msg = strings.TrimPrefix(msg, ": ")
		} else if json.Unmarshal(env.Error, &s) == nil {
			msg = s
		}
	}
	if msg == "" {
		msg = strings.TrimSpace(string(body))
	}
	return truncate(msg, 200)
}

// retryAfter reads Retry-After (seconds or HTTP date), retry-after-ms, and Gemini's
// RetryInfo.retryDelay ("20s") from the body.
func retryAfter(h http.Header, body []byte) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil {
			if d := time.Until(t); d > 0 {
				return d
			}
		}
	}
	if i := bytes.Index(body, []byte(`"retryDelay"`)); i >= 0 {
		rest := body[i+len(`"retryDelay"`):]
		var v string
		if j := bytes.IndexByte(rest, '"'); j >= 0 {
			if k := bytes.IndexByte(rest[j+1:], '"'); k >= 0 {
				v = string(rest[j+1 : j+1+k])
			}
		}
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return d
		}
	}
	return 0
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// doJSON posts body to url and decodes a 2xx answer into out. Every failure comes back as an
// *Error (or ctx.Err() when the caller's context ended). The key is only ever in headers,
// never in the URL, so transport errors (which print the URL) cannot leak it.
func doJSON(ctx context.Context, cfg ProviderConfig, url string, headers map[string]string, body, out any) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return &Error{Provider: cfg.Name, Class: Unrecoverable, Err: fmt.Errorf("encode request: %w", err)}
	}
	actx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return &Error{Provider: cfg.Name, Class: Unrecoverable, Err: fmt.Errorf("build request: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := cfg.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &Error{Provider: cfg.Name, Class: Transient, Err: scrub(transportError(err), cfg.APIKey)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &Error{Provider: cfg.Name, Class: Transient, Status: resp.StatusCode, Err: scrub(fmt.Errorf("read response: %w", transportError(err)), cfg.APIKey)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := Classify(cfg.Name, resp.StatusCode, resp.Header, raw)
		e.Message = redact(e.Message, cfg.APIKey)
		return e
	}
	if err := json.Unmarshal(raw, out); err != nil {
		// A 200 that is not JSON is a broken proxy or a truncated answer: worth a retry.
		return &Error{Provider: cfg.Name, Class: Transient, Status: resp.StatusCode,
			Message: "response is not JSON: " + redact(truncate(string(raw), 80), cfg.APIKey)}
	}
	return nil
}

// transportError drops the URL from *url.Error-like errors: it is noise in a one-line message.
func transportError(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("timeout: %w", errors.Unwrap(err))
	}
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

type scrubbed struct{ msg string }

func (s scrubbed) Error() string { return s.msg }

// scrub returns err with the key removed from its text. The chain is flattened on purpose:
// nothing downstream needs to unwrap transport errors, and wrapping would carry the original
// text along.
func scrub(err error, key string) error {
	if err == nil {
		return nil
	}
	return scrubbed{redact(err.Error(), key)}
}

func redact(s, key string) string {
	if len(key) < 4 {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// Provider kinds accepted by NewProvider (the names package keys stores keys under).
const (
	KindAnthropic = "anthropic"
	KindOpenAI    = "openai"
	KindGemini    = "gemini"
)

// ErrUnknownKind is returned by NewProvider for a kind it does not know.
var ErrUnknownKind = errors.New("unknown provider kind (want anthropic, openai or gemini)")

// NewProvider builds the provider of the given kind, so wiring code can go from settings
// (an ordered list of kinds, a model and base URL per kind) to a chain in one loop.
func NewProvider(kind string, cfg ProviderConfig) (Provider, error) {
	switch kind {
	case KindAnthropic:
		return NewAnthropic(cfg), nil
	case KindOpenAI:
		return NewOpenAI(cfg), nil
	case KindGemini:
		return NewGemini(cfg), nil
	}
	return nil, fmt.Errorf("provider %q: %w", kind, ErrUnknownKind)
}
