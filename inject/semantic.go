package inject

import (
	"strings"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/privacy"
)

// Semantic renders the observations related to a user's prompt, most related first,
// inside the context tag, until budget (in estimated tokens) is spent; the first one is
// always shown, cut to the budget.
func Semantic(obs []memory.Observation, budget int) string {
	head := "<" + privacy.ContextTag + ">\nmemnode: past observations related to this prompt (get_observations([IDs]) for details):\n"
	tail := "</" + privacy.ContextTag + ">"
	used := memory.EstimateTokens(head + tail)
	var b strings.Builder
	b.WriteString(head)
	shown := 0
	for _, o := range obs {
		line := "- " + o.ID + " " + o.Type + ": " + strings.Join(strings.Fields(o.Title), " ")
		if s := strings.Join(strings.Fields(o.Subtitle), " "); s != "" {
			line += " — " + s
		}
		if len(o.Facts) > 0 {
			line += " (" + strings.Join(strings.Fields(o.Facts[0]), " ") + ")"
		}
		line += "\n"
		cost := memory.EstimateTokens(line)
		if used+cost > budget {
			if shown > 0 {
				break
			}
			line = clipLine(line, (budget-used)*4) + "\n"
			cost = memory.EstimateTokens(line)
		}
		b.WriteString(line)
		used += cost
		shown++
	}
	b.WriteString(tail)
	return b.String()
}

// clipLine cuts a line (without its newline) to maxBytes, never below the cut mark.
func clipLine(line string, maxBytes int) string {
	line = strings.TrimRight(line, "\n")
	if maxBytes < len("…") {
		return "…"
	}
	return Truncate(line, maxBytes)
}
