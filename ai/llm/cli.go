package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/memnode/memnode/internal/atomicfile"
	"github.com/memnode/memnode/memory"
)

// Agent CLI provider kinds: the coding agent the user already has, run headless.
const (
	KindClaudeCode = "claude-code"
	KindCodex      = "codex"
	KindGeminiCLI  = "gemini-cli"
)

// CLIKinds lists the agent CLI provider kinds in a stable order.
func CLIKinds() []string { return []string{KindClaudeCode, KindCodex, KindGeminiCLI} }

// IsCLIKind reports whether kind is an agent CLI provider (no key; a local executable).
func IsCLIKind(kind string) bool { return cliSpecs[kind] != nil }

// DisabledEnv is the variable that makes every memnode hook exit at once (hooks.DisabledEnv):
// the first guard against memnode recording its own compression calls.
const DisabledEnv = "MEMNODE_DISABLED"

// CLIConfig configures an agent CLI provider.
type CLIConfig struct {
	Kind string
	// Path is the executable; "" looks the kind's command (claude, codex, gemini) up in PATH
	// at every request, so a CLI installed after the node started is found.
	Path  string
	Model string
	// WorkDir is the directory the child runs in (created 0700 when missing); its base
	// name must be memory.CompressorProject, the project memnode never records.
	WorkDir string
	// Env is the child's environment before the guards are added (cmd/ passes the node's).
	Env []string
	// Timeout bounds one invocation; default DefaultCLITimeout.
	Timeout time.Duration
	// MaxStdoutBytes bounds what is read from the child's stdout; default 4 MiB.
	MaxStdoutBytes int
	// MaxPromptBytes bounds what is written to its stdin; default 1 MiB.
	MaxPromptBytes int
	// Cooldown is how long a usage-limit answer disables the provider when the CLI does not
	// say when the limit resets; default DefaultCLICooldown.
	Cooldown time.Duration
}

// Defaults for CLIConfig.
const (
	DefaultCLITimeout  = 5 * time.Minute
	DefaultCLICooldown = time.Hour
	defaultCLIStdout   = 4 << 20
	defaultCLIPrompt   = 1 << 20
	// stderrKeep is how much of the child's stderr is kept, for classification only: it can
	// echo the prompt, so it is never logged or put into an error message.
	stderrKeep = 16 << 10
	// cliRateLimitCooldown is how long a rate-limit answer (not a usage limit) sets a CLI
	// aside: it has retried on its own before answering.
	cliRateLimitCooldown = 5 * time.Minute
	// cliWaitDelay is how long a killed child's pipes may stay open before Wait gives up.
	cliWaitDelay = 5 * time.Second
)

// ErrCLIClosed is returned by a CLI provider's Complete after Close.
var ErrCLIClosed = errors.New("agent CLI provider closed")

// cliResult is what a CLI's output says: the answer and its cost, or its failure.
type cliResult struct {
	Text  string
	Model string
	// InputTokens and OutputTokens as the CLI reported them; Reported is false when it
	// reported none (then they are estimated).
	InputTokens, OutputTokens int
	Reported                  bool
	// Failed is set when the CLI says the request failed; Status is the model API's HTTP
	// status when it names one; Failure is its error text (classification only, never shown).
	Failed  bool
	Status  int
	Failure string
}

// cliSpec is how one agent CLI is run headless and how its output reads.
type cliSpec struct {
	command string
	model   string
	// overhead is a conservative bound on the tokens the CLI adds to our prompt (its own
	// system prompt, tool schemas): reserved from the budget, and charged when it reports
	// no usage.
	overhead int64
	args     func(model, system, workDir string) []string
	// stdin is what is written to the child: the prompt, with the system prompt when the
	// CLI takes none on its command line.
	stdin func(system, prompt string) string
	env   []string
	// files are written into the work dir before a run (name → contents).
	files map[string]string
	parse func(stdout []byte) (cliResult, error)
	hint  string // what to do when it is not installed
	login string // what to do when it is not logged in
}

// cliSpecs are the supported agent CLIs. Each runs with no MCP servers and, where the CLI
// lets a flag say so, none of the user's hooks and no session on disk (Claude Code, Codex;
// Gemini CLI 0.61 has no such switch: its user hooks still run, tested, and only
// MEMNODE_DISABLED=1 and the never-recorded memnode-compressor project stop memnode's); and
// with as few tools as its flags allow: Claude Code none, Codex 0.171 only
// request_user_input (nobody answers it headless), Gemini CLI none (a policy denying every
// tool).
var cliSpecs = map[string]*cliSpec{
	KindClaudeCode: {
		command: "claude", model: "haiku", overhead: 2000,
		args: func(model, system, _ string) []string {
			return []string{"-p", "--output-format", "json", "--model", model,
				"--system-prompt", system,
				"--tools", "", // no built-in tools
				"--strict-mcp-config", "--mcp-config", `{"mcpServers":{}}`, // no MCP servers
				"--settings", `{"disableAllHooks":true}`, // none of the user's hooks (memnode's)
				"--disable-slash-commands", "--no-session-persistence"}
		},
		stdin: func(_, prompt string) string { return prompt },
		// Claude Code retries 429/5xx ten times by default; the Compressor retries itself.
		env:   []string{"CLAUDE_CODE_MAX_RETRIES=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"},
		parse: parseClaudeOutput,
		hint:  "install Claude Code (npm install -g @anthropic-ai/claude-code) or set ai_cli_paths",
		login: "run claude and /login",
	},
	KindCodex: {
		command: "codex", model: "gpt-5-mini", overhead: 20000,
		args: func(model, _, _ string) []string {
			return []string{"exec", "--json", "--ephemeral", "--skip-git-repo-check",
				"--sandbox", "read-only", "-c", `approval_policy="never"`,
				"--disable", "hooks", // none of the user's hooks (memnode's)
				"-c", "mcp_servers={}", // no MCP servers
				// no tools: Codex 0.171 offers 13 by default (shell, agents, goals, images, web)
				"--disable", "shell_tool", "--disable", "unified_exec", "--disable", "multi_agent",
				"--disable", "goals", "--disable", "view_image", "--disable", "image_generation",
				"--disable", "apps", "-c", `web_search="disabled"`,
				"-m", model, "-"}
		},
		stdin: func(system, prompt string) string { return system + "\n\n" + prompt },
		parse: parseCodexOutput,
		hint:  "install Codex (npm install -g @openai/codex) or set ai_cli_paths",
		login: "run codex login",
	},
	KindGeminiCLI: {
		command: "gemini", model: "gemini-2.5-flash-lite", overhead: 12000,
		args: func(model, _, workDir string) []string {
			return []string{"--output-format", "json", "--model", model,
				"--policy", filepath.Join(workDir, geminiPolicyFile), // every tool denied: none offered
				"--extensions", "none", // no extensions (they bring hooks and MCP servers)
				"--allowed-mcp-server-names", "none",
				"--approval-mode", "plan", // read-only: no tool may change anything
				"--skip-trust",                          // headless in an untrusted dir: Gemini CLI 0.61 exits 55 without it
				"--prompt", "Answer the request above."} // headless; the request comes on stdin
		},
		stdin: func(system, prompt string) string { return system + "\n\n" + prompt },
		files: map[string]string{geminiPolicyFile: "# memnode: the compressor offers its model no tool.\n[[rule]]\ntoolName = \"*\"\ndecision = \"deny\"\npriority = 999\n"},
		parse: parseGeminiOutput,
		hint:  "install Gemini CLI (npm install -g @google/gemini-cli) or set ai_cli_paths",
		login: "run gemini and sign in",
	},
}

// geminiPolicyFile is Gemini CLI's policy (its policy engine leaves denied tools out of the
// model's declarations), written into the work dir.
const geminiPolicyFile = "gemini-policy.toml"

// CLI is a Provider that runs an agent CLI headless, one child process per request. Close
// kills the children still running (their whole process group) and waits for them.
type CLI struct {
	cfg  CLIConfig
	spec *cliSpec

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

var _ Provider = (*CLI)(nil)

// ErrBadWorkDir is returned by NewCLI for a work dir memnode would record.
var ErrBadWorkDir = errors.New("agent CLI work dir must be named " + memory.CompressorProject)

// NewCLI validates cfg and fills in defaults.
func NewCLI(cfg CLIConfig) (*CLI, error) {
	spec := cliSpecs[cfg.Kind]
	if spec == nil {
		return nil, fmt.Errorf("agent CLI %q: %w", cfg.Kind, ErrUnknownKind)
	}
	if filepath.Base(cfg.WorkDir) != memory.CompressorProject || !filepath.IsAbs(cfg.WorkDir) {
		return nil, fmt.Errorf("%s: %q: %w", cfg.Kind, cfg.WorkDir, ErrBadWorkDir)
	}
	if cfg.Model == "" {
		cfg.Model = spec.model
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultCLITimeout
	}
	if cfg.MaxStdoutBytes <= 0 {
		cfg.MaxStdoutBytes = defaultCLIStdout
	}
	if cfg.MaxPromptBytes <= 0 {
		cfg.MaxPromptBytes = defaultCLIPrompt
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = DefaultCLICooldown
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &CLI{cfg: cfg, spec: spec, ctx: ctx, cancel: cancel}, nil
}

// Name implements Provider.
func (c *CLI) Name() string { return c.cfg.Kind }

// Model implements Provider.
func (c *CLI) Model() string { return c.cfg.Model }

// Estimate is the budget reservation for a request: EstimateTokens plus what the CLI adds.
func (c *CLI) Estimate(system, prompt string) int64 {
	return EstimateTokens(system, prompt) + c.spec.overhead
}

// Executable says which executable runs: its path, or "not found: <command>".
func (c *CLI) Executable() string {
	if p, err := c.lookPath(); err == nil {
		return p
	}
	return "not found: " + cmpOr(c.cfg.Path, c.spec.command)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (c *CLI) lookPath() (string, error) {
	p, err := exec.LookPath(cmpOr(c.cfg.Path, c.spec.command))
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// Close kills the children still running and waits for them; it is idempotent.
func (c *CLI) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	return nil
}

// Complete implements Provider: one run of the CLI with the prompt on stdin.
func (c *CLI) Complete(ctx context.Context, req Request) (Response, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return Response{}, &Error{Provider: c.Name(), Class: Unrecoverable, Err: ErrCLIClosed}
	}
	c.wg.Add(1)
	c.mu.Unlock()
	defer c.wg.Done()

	path, err := c.lookPath()
	if err != nil {
		// Not installed is like a missing key: skipped for a cool-down, said in status.
		return Response{}, &Error{Provider: c.Name(), Class: AuthInvalid,
			Message: fmt.Sprintf("%s not found (%s)", cmpOr(c.cfg.Path, c.spec.command), c.spec.hint)}
	}
	input := c.spec.stdin(req.System, req.Prompt)
	if len(input) > c.cfg.MaxPromptBytes {
		return Response{}, &Error{Provider: c.Name(), Class: Unrecoverable,
			Message: fmt.Sprintf("prompt of %d bytes is over the %d-byte cap", len(input), c.cfg.MaxPromptBytes)}
	}
	if err := c.prepareWorkDir(); err != nil {
		return Response{}, &Error{Provider: c.Name(), Class: Unrecoverable, Err: err}
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel) // Close kills it too
	defer stop()

	cmd := exec.CommandContext(rctx, path, c.spec.args(c.cfg.Model, req.System, c.cfg.WorkDir)...)
	cmd.Dir = c.cfg.WorkDir
	cmd.Env = c.childEnv()
	cmd.Stdin = strings.NewReader(input)
	stdout := &capBuffer{max: c.cfg.MaxStdoutBytes}
	stderr := &tailBuffer{max: stderrKeep}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	setProcessGroup(cmd)
	cmd.WaitDelay = cliWaitDelay
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return Response{}, ctx.Err()
	}
	if c.ctx.Err() != nil {
		return Response{}, &Error{Provider: c.Name(), Class: Unrecoverable, Err: ErrCLIClosed}
	}
	if rctx.Err() != nil {
		return Response{}, &Error{Provider: c.Name(), Class: Transient, Message: fmt.Sprintf("no answer within %s; killed", c.cfg.Timeout)}
	}
	if stdout.over {
		return Response{}, &Error{Provider: c.Name(), Class: Unrecoverable,
			Message: fmt.Sprintf("output over %d bytes", c.cfg.MaxStdoutBytes)}
	}
	res, perr := c.spec.parse(stdout.Bytes())
	if perr == nil && !res.Failed && runErr == nil {
		return c.response(req, res), nil
	}
	return Response{}, c.classify(res, perr, runErr, stderr.Bytes())
}

// prepareWorkDir creates the work dir and the files the CLI is pointed at.
func (c *CLI) prepareWorkDir() error {
	if err := os.MkdirAll(c.cfg.WorkDir, 0o700); err != nil {
		return fmt.Errorf("create work dir: %w", err)
	}
	for name, content := range c.spec.files {
		p := filepath.Join(c.cfg.WorkDir, name)
		if b, err := os.ReadFile(p); err == nil && string(b) == content {
			continue
		}
		if err := atomicfile.Write(p, []byte(content), 0o600); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// childEnv is the node's environment plus the guards: the hooks' off switch, and the
// kind's own settings. Later entries win (os/exec keeps the last of duplicate keys).
func (c *CLI) childEnv() []string {
	env := append([]string(nil), c.cfg.Env...)
	env = append(env, c.spec.env...)
	return append(env, DisabledEnv+"=1")
}

// response turns a parsed answer into a Response, estimating conservatively what the CLI
// did not report: every byte of input and output a token, plus the CLI's overhead.
func (c *CLI) response(req Request, res cliResult) Response {
	r := Response{Text: res.Text, Model: cmpOr(res.Model, c.cfg.Model), InputTokens: res.InputTokens, OutputTokens: res.OutputTokens}
	if !res.Reported || r.InputTokens+r.OutputTokens <= 0 {
		r.InputTokens = int(c.Estimate(req.System, req.Prompt))
		r.OutputTokens = len(res.Text)
	}
	return r
}

// classify turns a failed run into an *Error whose message is one of a few fixed phrases:
// what a CLI prints on failure can echo the prompt, so none of it is passed on.
func (c *CLI) classify(res cliResult, perr, runErr error, stderr []byte) *Error {
	text := strings.ToLower(res.Failure + "\n" + string(stderr))
	e := &Error{Provider: c.Name(), Status: res.Status}
	switch {
	case res.Status == 401 || res.Status == 403 || containsAny(text, cliAuthPhrases...):
		e.Class, e.Message = AuthInvalid, "not logged in or key rejected ("+c.spec.login+")"
	case res.Status == 402 || containsAny(text, cliLimitPhrases...):
		e.Class, e.Message = RateLimit, "usage limit reached"
		e.RetryAfter = c.cfg.Cooldown
		if d := resetIn(text, time.Now()); d > 0 {
			e.RetryAfter = d
		}
	case res.Status == 429 || containsAny(text, "rate limit", "rate_limit", "too many requests"):
		// The CLI has retried already: set it aside for a while rather than start it again.
		e.Class, e.Message, e.RetryAfter = RateLimit, "rate limited", min(c.cfg.Cooldown, cliRateLimitCooldown)
	case res.Status == 529 || res.Status >= 500 || containsAny(text, "overloaded", "econnreset", "etimedout", "network error", "fetch failed"):
		e.Class, e.Message = Transient, "model API unavailable"
		if res.Status == 0 {
			e.Message = "network error"
		}
	case perr != nil:
		e.Class, e.Message = Unrecoverable, "output unreadable"
		e.Err = fmt.Errorf("%w: %w", ErrBadOutput, perr)
	default:
		e.Class, e.Message = Unrecoverable, "the CLI failed"
		if res.Status != 0 {
			e.Message = fmt.Sprintf("model API answered HTTP %d", res.Status)
		}
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		e.Message += fmt.Sprintf(" (exit %d)", ee.ExitCode())
	}
	return e
}

// cliAuthPhrases are the agent CLIs' words for "not logged in / key rejected" (Claude Code
// 2.1: "Not logged in · Please run /login", "Invalid API key · Fix external API key",
// "OAuth token has expired"; Codex: "401 Unauthorized"; Gemini CLI: "API key not valid",
// "Please set an Auth method").
var cliAuthPhrases = []string{"not logged in", "invalid api key", "please run /login", "oauth token has expired",
	"session expired", "authentication_error", "401 unauthorized", "unauthorized", "api key not valid",
	"please set an auth method", "login required", "missing environment variable"}

// cliLimitPhrases are their words for a usage limit, quota or spend limit (Claude Code:
// "Claude AI usage limit reached|<epoch>", "You've hit your session limit · resets 3pm",
// "spend limit reached", "Credit balance is too low"; Codex: "You've hit your usage limit",
// "usage_limit_reached", "Quota exceeded"; Gemini CLI: "RESOURCE_EXHAUSTED", "exhausted your
// daily quota").
var cliLimitPhrases = []string{"usage limit", "hit your", "limit reached", "spend limit", "credit balance",
	"usage_limit_reached", "quota exceeded", "exceeded your current quota", "resource_exhausted",
	"exhausted your", "insufficient_quota", "billing_error"}

// resetIn reads when a usage limit resets from Claude Code's "usage limit reached|<unix
// seconds>" form; 0 when the text does not say (then the cool-down applies).
func resetIn(text string, now time.Time) time.Duration {
	i := strings.Index(text, "limit reached|")
	if i < 0 {
		return 0
	}
	var secs int64
	for _, r := range text[i+len("limit reached|"):] {
		if r < '0' || r > '9' || secs > 1<<40 {
			break
		}
		secs = secs*10 + int64(r-'0')
	}
	d := time.Unix(secs, 0).Sub(now)
	if d <= 0 || d > 8*24*time.Hour {
		return 0
	}
	return d
}

// capBuffer keeps at most max bytes and notes whether more came.
type capBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (b *capBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room < len(p) {
		b.over = true
		b.buf.Write(p[:max(room, 0)])
		return len(p), nil // keep draining: a blocked pipe would hang the child
	}
	return b.buf.Write(p)
}

func (b *capBuffer) Bytes() []byte { return b.buf.Bytes() }

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) Bytes() []byte { return b.buf }
