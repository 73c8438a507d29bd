// Package configs holds memnode's settings: their named defaults, the settings file format,
// and the IDE hook templates. Only cmd/ reads the environment; it passes plain values here.
package configs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memnode/memnode/internal/datadir"
)

// AIProviderKinds are the providers ai_providers accepts (ai/llm's kinds: the HTTP
// providers, then the agent CLIs, AICLIKinds).
func AIProviderKinds() []string {
	return []string{"anthropic", "openai", "gemini", "claude-code", "codex", "gemini-cli"}
}

// AICLIKinds are the agent CLI providers: the coding agent the user has, run headless.
func AICLIKinds() []string { return []string{"claude-code", "codex", "gemini-cli"} }

// Settings are the user-tunable knobs. Precedence: flag > env > settings file > defaults.
type Settings struct {
	// Port the node listens on (127.0.0.1 only). 0 means DefaultPort(uid).
	Port int `json:"port,omitempty"`
	// Transport is how hooks, CLI and MCP reach the node: TransportUnix (default, the data
	// dir's socket) or TransportTCP (the port, after the node proves it holds the token).
	Transport string `json:"transport,omitempty"`

	// ExcludedProjects are glob patterns (path.Match) of project names never recorded.
	ExcludedProjects []string `json:"excluded_projects,omitempty"`
	// SkipTools are tool names whose calls are never recorded.
	SkipTools []string `json:"skip_tools,omitempty"`
	// Capture is CaptureAll (default: every project is recorded) or CaptureOptIn (only
	// projects with a .memnode-track file in their root or listed by `memnode track`).
	Capture string `json:"capture,omitempty"`
	// LocalOnlyProjects are glob patterns of projects whose records never leave this device.
	LocalOnlyProjects []string `json:"local_only_projects,omitempty"`

	// HookFailLoudThreshold is how many consecutive unreachable-node hooks make a hook exit 2.
	HookFailLoudThreshold int `json:"hook_fail_loud_threshold,omitempty"`
	// HookTimeout bounds one hook invocation end to end.
	HookTimeout Duration `json:"hook_timeout,omitempty"`

	// Context injection bounds (claude-mem's progressive disclosure).
	ContextObservations int `json:"context_observations,omitempty"`
	ContextFullCount    int `json:"context_full_count,omitempty"`
	ContextSessions     int `json:"context_sessions,omitempty"`
	// ContextPinnedTokens caps the pinned and global notes heading every context (estimated
	// tokens; 0: inject.DefaultPinnedTokens).
	ContextPinnedTokens int `json:"context_pinned_tokens,omitempty"`
	// ContextExpand is the field the observations shown in full expand: ExpandFacts (the
	// default) or ExpandNarrative.
	ContextExpand string `json:"context_expand,omitempty"`
	// ContextTypes, when set, keeps only observations of these types in the context;
	// ContextExcludeTypes leaves these out. ContextConcepts and ContextExcludeConcepts do
	// the same by concept (an observation with any listed concept).
	ContextTypes           []string `json:"context_types,omitempty"`
	ContextExcludeTypes    []string `json:"context_exclude_types,omitempty"`
	ContextConcepts        []string `json:"context_concepts,omitempty"`
	ContextExcludeConcepts []string `json:"context_exclude_concepts,omitempty"`
	// ContextEconomicsOff drops the token-economics line.
	ContextEconomicsOff bool `json:"context_economics_off,omitempty"`
	// ContextLastSummaryFull shows the newest session summary whole (every field, uncut).
	ContextLastSummaryFull bool `json:"context_last_summary_full,omitempty"`

	// FsyncAcks makes the node fsync every acknowledged hook event before answering, so it
	// survives power loss and not only a crash (slower: one disk sync per ack batch).
	FsyncAcks bool `json:"fsync_acks,omitempty"`

	// Workers is the number of queue workers compressing events.
	Workers int `json:"workers,omitempty"`

	// AIProviders is the ordered fallback chain of model providers ("anthropic", "openai",
	// "gemini", or the agent CLIs "claude-code", "codex", "gemini-cli"); empty means the
	// offline compressor only. The chain always ends offline.
	AIProviders []string `json:"ai_providers,omitempty"`
	// AICLIPaths is the executable per agent CLI provider; empty means its command
	// (claude, codex, gemini) found in PATH.
	AICLIPaths map[string]string `json:"ai_cli_paths,omitempty"`
	// AICLIBatchWait is how long the queue must be quiet before the workers compress, when
	// an agent CLI is in the chain (one CLI run costs a process start and the CLI's own
	// prompt, so a turn's tool calls should go out in one); 0 means DefaultAICLIBatchWait.
	AICLIBatchWait Duration `json:"ai_cli_batch_wait,omitempty"`
	// AIModels and AIBaseURLs are per provider kind; empty means the provider's default.
	AIModels   map[string]string `json:"ai_models,omitempty"`
	AIBaseURLs map[string]string `json:"ai_base_urls,omitempty"`
	// AIDailyTokenBudget is a hard cap on provider tokens per UTC day; 0 means unlimited.
	AIDailyTokenBudget int64 `json:"ai_daily_token_budget,omitempty"`
	// AIMaxOutputTokens bounds one provider answer; 0 means the default.
	AIMaxOutputTokens int `json:"ai_max_output_tokens,omitempty"`

	// DeviceName is this device's name in the group; default: the host name.
	DeviceName string `json:"device_name,omitempty"`
	// SyncDisabled turns device sync off entirely.
	SyncDisabled bool `json:"sync_disabled,omitempty"`
	// SyncHost is the address sync listens on. The default, 127.0.0.1, only pairs nodes of
	// this machine; set 0.0.0.0 (or a LAN address) to sync with your other devices.
	SyncHost string `json:"sync_host,omitempty"`
	// SyncPort is the libp2p port (TCP and QUIC); GossipPort is memberlist's. 0 means the
	// per-user defaults (DefaultSyncPort, DefaultGossipPort); -1 means any free port.
	SyncPort   int `json:"sync_port,omitempty"`
	GossipPort int `json:"gossip_port,omitempty"`
	// MDNS announces and discovers group members on the LAN.
	MDNS bool `json:"mdns,omitempty"`

	// EmbedModel is the Hugging Face ID of the sentence-embedding model for hybrid search
	// (installed by `memnode embed pull`); empty means embed.DefaultModel.
	EmbedModel string `json:"embed_model,omitempty"`
	// SemanticInject adds, at each prompt, the past observations most related to it
	// (needs an embedding model).
	SemanticInject bool `json:"semantic_inject,omitempty"`
	// SemanticInjectLimit is how many observations semantic inject adds at most.
	SemanticInjectLimit int `json:"semantic_inject_limit,omitempty"`
	// ReleaseStartupPages makes `memnode run` unmap the executable pages only start-up
	// used, once ready (internal/exepages). Off by default: it lowers RssFile, a number the
	// kernel reclaims anyway under pressure, by bending the process; what users feel is
	// RssAnon/PSS and the first request after idle (docs/BENCH.md).
	ReleaseStartupPages bool `json:"release_startup_pages,omitempty"`
	// ContextViewerLink makes the session-start context name the web viewer's address
	// (http://127.0.0.1:PORT; `memnode viewer --open` logs a browser in). Off by default.
	ContextViewerLink bool `json:"context_viewer_link,omitempty"`
	// LogLevel is the node's log level: debug, info (default), warn or error; run's
	// --log-level flag overrides it.
	LogLevel string `json:"log_level,omitempty"`
	// ContextSystemMessageOff stops the one line memnode shows the user at session start
	// ("memnode: 42 memories from 7 sessions · viewer: memnode viewer"; Claude Code's
	// systemMessage). The line is on by default.
	ContextSystemMessageOff bool `json:"context_system_message_off,omitempty"`
}

// Transports (Settings.Transport).
const (
	TransportUnix = "unix"
	TransportTCP  = "tcp"
)

// Expanded fields (Settings.ContextExpand).
const (
	ExpandFacts     = "facts"
	ExpandNarrative = "narrative"
)

// Capture modes (Settings.Capture).
const (
	CaptureAll   = "all"
	CaptureOptIn = "opt-in"
)

// OptIn reports whether only tracked projects are recorded.
func (s Settings) OptIn() bool { return s.Capture == CaptureOptIn }

// UseTCP reports whether clients reach the node over its TCP port.
func (s Settings) UseTCP() bool { return s.Transport == TransportTCP }

// Defaults for every setting.
const (
	DefaultHookFailLoudThreshold = 3
	DefaultHookTimeout           = 10 * time.Second
	// DefaultAICLIBatchWait is AICLIBatchWait's default: agents call tools seconds apart, a
	// turn's calls come within it.
	DefaultAICLIBatchWait      = 20 * time.Second
	DefaultContextObservations = 50
	DefaultContextFullCount    = 5
	DefaultContextSessions     = 3
	DefaultWorkers             = 2
	DefaultSemanticInjectLimit = 5
)

// defaultSkipTools are tools whose calls carry no memory worth keeping; the agents'
// housekeeping tools (TodoWrite, ToolSearch, …) are never recorded whatever this list
// holds (memory.Housekeeping, the one list).
var defaultSkipTools = []string{"AskUserQuestion", "SlashCommand", "Skill", "ExitPlanMode"}

// Default returns the settings with every default filled in.
func Default() Settings {
	return Settings{
		SkipTools:             append([]string(nil), defaultSkipTools...),
		HookFailLoudThreshold: DefaultHookFailLoudThreshold,
		HookTimeout:           Duration(DefaultHookTimeout),
		ContextObservations:   DefaultContextObservations,
		ContextFullCount:      DefaultContextFullCount,
		ContextSessions:       DefaultContextSessions,
		Workers:               DefaultWorkers,
		SemanticInjectLimit:   DefaultSemanticInjectLimit,
	}
}

// DefaultPort is the stable per-user port: 38800 + uid%100. claude-mem uses 37700 + uid%100,
// so the two never collide, and two users on one machine get different ports.
func DefaultPort(uid int) int {
	if uid < 0 {
		uid = 0
	}
	return 38800 + uid%100
}

// DefaultSyncPort is the per-user libp2p port (TCP and QUIC): 38900 + uid%100.
func DefaultSyncPort(uid int) int { return DefaultPort(uid) + 100 }

// DefaultGossipPort is the per-user memberlist port: 39000 + uid%100.
func DefaultGossipPort(uid int) int { return DefaultPort(uid) + 200 }

// Load reads dataDir/settings.json over the defaults. A missing file is not an error.
func Load(dataDir string) (Settings, error) {
	s := Default()
	path := datadir.Dir(dataDir).Settings()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("read settings: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("parse %s: %w", path, err)
	}
	return s, s.Validate()
}

// Validate reports the first setting that is out of range.
func (s Settings) Validate() error {
	switch {
	case s.Port < 0 || s.Port > 65535:
		return fmt.Errorf("settings: port %d out of range", s.Port)
	case s.HookFailLoudThreshold < 1:
		return fmt.Errorf("settings: hook_fail_loud_threshold must be >= 1")
	case s.HookTimeout <= 0:
		return fmt.Errorf("settings: hook_timeout must be positive")
	case s.ContextObservations < 0 || s.ContextFullCount < 0 || s.ContextSessions < 0 || s.ContextPinnedTokens < 0:
		return fmt.Errorf("settings: context bounds must not be negative")
	case s.Workers < 1:
		return fmt.Errorf("settings: workers must be >= 1")
	case s.SyncPort < -1 || s.SyncPort > 65535 || s.GossipPort < -1 || s.GossipPort > 65535:
		return fmt.Errorf("settings: sync_port and gossip_port must be -1 (any), 0 (default) or a port")
	case s.AIDailyTokenBudget < 0 || s.AIMaxOutputTokens < 0:
		return fmt.Errorf("settings: ai budgets must not be negative")
	case s.AICLIBatchWait < 0 || time.Duration(s.AICLIBatchWait) > 10*time.Minute:
		return fmt.Errorf("settings: ai_cli_batch_wait must be 0..10m")
	case s.SemanticInjectLimit < 0 || s.SemanticInjectLimit > 20:
		return fmt.Errorf("settings: semantic_inject_limit must be 0..20")
	case s.ContextExpand != "" && s.ContextExpand != ExpandFacts && s.ContextExpand != ExpandNarrative:
		return fmt.Errorf("settings: context_expand %q: want %q or %q", s.ContextExpand, ExpandFacts, ExpandNarrative)
	case s.Capture != "" && s.Capture != CaptureAll && s.Capture != CaptureOptIn:
		return fmt.Errorf("settings: capture %q: want %q or %q", s.Capture, CaptureAll, CaptureOptIn)
	case s.LogLevel != "" && s.LogLevel != "debug" && s.LogLevel != "info" && s.LogLevel != "warn" && s.LogLevel != "error":
		return fmt.Errorf("settings: log_level %q: want debug, info, warn or error", s.LogLevel)
	case s.Transport != "" && s.Transport != TransportUnix && s.Transport != TransportTCP:
		return fmt.Errorf("settings: transport %q: want %q or %q", s.Transport, TransportUnix, TransportTCP)
	}
	for _, p := range s.AIProviders {
		if !slices.Contains(AIProviderKinds(), p) {
			return fmt.Errorf("settings: unknown ai provider %q (want one of %s)", p, strings.Join(AIProviderKinds(), ", "))
		}
	}
	for kind, path := range s.AICLIPaths {
		if !slices.Contains(AICLIKinds(), kind) {
			return fmt.Errorf("settings: ai_cli_paths: %q is not an agent CLI provider (want one of %s)", kind, strings.Join(AICLIKinds(), ", "))
		}
		if path != "" && !filepath.IsAbs(path) {
			return fmt.Errorf("settings: ai_cli_paths: %s: %q is not an absolute path", kind, path)
		}
	}
	return nil
}

// Duration is a time.Duration that reads and writes as a Go duration string ("10s").
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON accepts "10s" or a number of milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		ms, perr := strconv.ParseInt(string(b), 10, 64)
		if perr != nil {
			return fmt.Errorf("duration: want \"10s\" or milliseconds: %w", err)
		}
		*d = Duration(time.Duration(ms) * time.Millisecond)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	*d = Duration(v)
	return nil
}
