package llm

import "context"

// OpenAI speaks OpenAI-compatible Chat Completions (POST {base}/chat/completions, Bearer
// auth): OpenAI itself, OpenRouter, Ollama, LM Studio, vLLM.
type OpenAI struct{ cfg ProviderConfig }

// NewOpenAI returns a Chat Completions client. BaseURL includes the version path
// (default https://api.openai.com/v1; Ollama: http://127.0.0.1:11434/v1). Default model
// gpt-4o-mini.
func NewOpenAI(cfg ProviderConfig) *OpenAI {
	return &OpenAI{cfg: cfg.withDefaults(KindOpenAI, "https://api.openai.com/v1", "gpt-4o-mini")}
}

// Name implements Provider.
func (o *OpenAI) Name() string { return o.cfg.Name }

// Model implements Provider.
func (o *OpenAI) Model() string { return o.cfg.Model }

type openAIMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type openAIRequest struct {
	Model     string          `json:"model"`
	Messages  []openAIMessage `json:"messages"`
	MaxTokens int             `json:"max_tokens"`
}

type openAIResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// Complete implements Provider.
func (o *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	msgs := make([]openAIMessage, 0, 2)
	if req.System != "" {
		msgs = append(msgs, openAIMessage{Role: "system", Content: req.System})
	}
	msgs = append(msgs, openAIMessage{Role: "user", Content: req.Prompt})
	body := openAIRequest{Model: o.cfg.Model, Messages: msgs, MaxTokens: o.cfg.maxOut(req)}
	headers := map[string]string{}
	if o.cfg.APIKey != "" {
		headers["Authorization"] = "Bearer " + o.cfg.APIKey
	}
	var out openAIResponse
	if err := doJSON(ctx, o.cfg, o.cfg.BaseURL+"/chat/completions", headers, body, &out); err != nil {
		return Response{}, err
	}
	text := ""
	if len(out.Choices) > 0 {
		text = out.Choices[0].Message.Content
	}
	model := out.Model
	if model == "" {
		model = o.cfg.Model
	}
	return Response{Text: text, Model: model, InputTokens: out.Usage.PromptTokens, OutputTokens: out.Usage.CompletionTokens}, nil
}
