package privacy

import "strings"

// ContextTag wraps the context memnode injects, so that it is never stored again.
const ContextTag = "memnode-context"

// Clean is StripTags then Redact.
func Clean(s string) string { return Redact(StripTags(s)) }

// IsEmptyAfterClean reports whether nothing but white space is left of s once memory tags
// and secrets are removed, as for a prompt that was entirely <private>: such input is
// skipped rather than stored.
func IsEmptyAfterClean(s string) bool { return strings.TrimSpace(Clean(s)) == "" }
