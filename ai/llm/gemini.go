package llm

import (
	"context"
	"net/url"
	"strings"
)

// Gemini speaks the Gemini API generateContent
// (POST {base}/v1beta/models/{model}:generateContent, x-goog-api-key).
type Gemini struct{ cfg ProviderConfig }

// NewGemini returns a generateContent client. Defaults:
// https://generativelanguage.googleapis.com, model gemini-2.5-flash. The key travels in the
// x-goog-api-key header, never in the URL (URLs end up in error messages).
func NewGemini(cfg ProviderConfig) *Gemini {
	return &Gemini{cfg: cfg.withDefaults(KindGemini, "https://generativelanguage.googleapis.com", "gemini-2.5-flash")}
}

// Name implements Provider.
func (g *Gemini) Name() string { return g.cfg.Name }

// Model implements Provider.
func (g *Gemini) Model() string { return g.cfg.Model }

type geminiPart struct {
	Text string `json:"text"`
}

type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

type geminiRequest struct {
	SystemInstruction *geminiContent  `json:"systemInstruction,omitempty"`
	Contents          []geminiContent `json:"contents"`
	GenerationConfig  struct {
		MaxOutputTokens int `json:"maxOutputTokens"`
	} `json:"generationConfig"`
}

type geminiResponse struct {
	Candidates []struct {
		Content geminiContent `json:"content"`
	} `json:"candidates"`
	UsageMetadata struct {
		PromptTokenCount     int `json:"promptTokenCount"`
		CandidatesTokenCount int `json:"candidatesTokenCount"`
		ThoughtsTokenCount   int `json:"thoughtsTokenCount"`
	} `json:"usageMetadata"`
	ModelVersion string `json:"modelVersion"`
}

// Complete implements Provider.
func (g *Gemini) Complete(ctx context.Context, req Request) (Response, error) {
	var body geminiRequest
	if req.System != "" {
		body.SystemInstruction = &geminiContent{Parts: []geminiPart{{Text: req.System}}}
	}
	body.Contents = []geminiContent{{Role: "user", Parts: []geminiPart{{Text: req.Prompt}}}}
	body.GenerationConfig.MaxOutputTokens = g.cfg.maxOut(req)
	u := g.cfg.BaseURL + "/v1beta/models/" + url.PathEscape(g.cfg.Model) + ":generateContent"
	var out geminiResponse
	if err := doJSON(ctx, g.cfg, u, map[string]string{"x-goog-api-key": g.cfg.APIKey}, body, &out); err != nil {
		return Response{}, err
	}
	var text strings.Builder
	if len(out.Candidates) > 0 {
		for _, p := range out.Candidates[0].Content.Parts {
			text.WriteString(p.Text)
		}
	}
	model := out.ModelVersion
	if model == "" {
		model = g.cfg.Model
	}
	return Response{
		Text: text.String(), Model: model, InputTokens: out.UsageMetadata.PromptTokenCount,
		// Thinking tokens are billed as output.
		OutputTokens: out.UsageMetadata.CandidatesTokenCount + out.UsageMetadata.ThoughtsTokenCount,
	}, nil
}
