// Package llm compresses tool calls into observations with hosted or local language models
// (Anthropic Messages, OpenAI-compatible Chat Completions, Gemini generateContent).
//
// The pieces, from the wire up:
//
//   - Provider speaks one vendor's HTTP wire format and classifies its failures into an
//     *Error with a Class (transient, rate_limit, quota_exhausted, auth_invalid,
//     unrecoverable) and an optional RetryAfter.
//   - Compressor builds the observation/summary prompts, caps the content it sends (per tool
//     call and per request), retries transient and rate-limit failures with exponential
//     backoff plus jitter (honouring Retry-After), and parses the XML answer. It implements
//     ai.Compressor for a single provider.
//   - Chain implements ai.Compressor over ordered Compressors and a final fallback
//     (the offline compressor). It disables a provider after auth or quota failures, gates
//     every request through a daily token Budget, and never fails unless ctx is done, so every
//     queued event ends as an observation.
//
// Budget accounting reserves before sending (a conservative input estimate plus the maximum
// output tokens) and settles to the provider's reported usage afterwards, so concurrent
// callers can never push the day's used tokens past the limit. Content handed to this package
// must already have passed the privacy strip and secret redaction; keys come from package keys
// through plain config fields and are never logged or echoed in errors.
package llm
