package llm

import (
	"context"
	"strings"
)

// AnthropicVersion is the anthropic-version header the Messages API requires.
const AnthropicVersion = "2023-06-01"

// Anthropic speaks the Anthropic Messages API (POST /v1/messages, x-api-key).
type Anthropic struct{ cfg ProviderConfig }

// NewAnthropic returns a Messages API client. Defaults: https://api.anthropic.com,
// model claude-haiku-4-5.
func NewAnthropic(cfg ProviderConfig) *Anthropic {
	return &Anthropic{cfg: cfg.withDefaults(KindAnthropic, "https://api.anthropic.com", "claude-haiku-4-5")}
}

// Name implements Provider.
func (a *Anthropic) Name() string { return a.cfg.Name }

// Model implements Provider.
func (a *Anthropic) Model() string { return a.cfg.Model }

type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	System    string             `json:"system,omitempty"`
	Messages  []anthropicMessage `json:"messages"`
}

type anthropicMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type anthropicResponse struct {
	Model   string `json:"model"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Usage struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

// Complete implements Provider.
func (a *Anthropic) Complete(ctx context.Context, req Request) (Response, error) {
	body := anthropicRequest{
		Model: a.cfg.Model, MaxTokens: a.cfg.maxOut(req), System: req.System,
		Messages: []anthropicMessage{{Role: "user", Content: req.Prompt}},
	}
	headers := map[string]string{"x-api-key": a.cfg.APIKey, "anthropic-version": AnthropicVersion}
	var out anthropicResponse
	if err := doJSON(ctx, a.cfg, a.cfg.BaseURL+"/v1/messages", headers, body, &out); err != nil {
		return Response{}, err
	}
	var text strings.Builder
	for _, c := range out.Content {
		if c.Type == "text" {
			text.WriteString(c.Text)
		}
	}
	model := out.Model
	if model == "" {
		model = a.cfg.Model
	}
	return Response{
		Text: text.String(), Model: model,
		InputTokens:  out.Usage.InputTokens + out.Usage.CacheCreationInputTokens + out.Usage.CacheReadInputTokens,
		OutputTokens: out.Usage.OutputTokens,
	}, nil
}
