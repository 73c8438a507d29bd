package hooks

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/memnode/memnode/platform"
)

// semanticMinRunes: shorter prompts ("yes", "go on", "run the tests") carry too little
// meaning to look anything up, so they cost no extra request.
const semanticMinRunes = 20

// semanticContext asks the node for the past observations most related to the prompt
// (semantic inject). The node answers "" when the semantic_inject setting is off, so the
// hook needs no settings of its own. Any failure means no extra context: the prompt is
// already recorded.
func semanticContext(ctx context.Context, h *hook, prompt, project string) platform.Result {
	prompt = strings.TrimSpace(prompt)
	if prompt == mediaPrompt || utf8.RuneCountInString(prompt) < semanticMinRunes || h.nodeDown() {
		return platform.Result{}
	}
	body, err := json.Marshal(map[string]string{"prompt": prompt, "project": project})
	if err != nil {
		return platform.Result{}
	}
	reply, err := h.call(ctx, http.MethodPost, "/api/context/semantic", body)
	if err != nil {
		h.logf("semantic context: %v", err)
		return platform.Result{}
	}
	text := strings.TrimSpace(string(reply))
	if len(text) > maxContextBytes {
		text = text[:maxContextBytes]
	}
	return platform.Result{AdditionalContext: text}
}
