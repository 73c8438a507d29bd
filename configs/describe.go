package configs

import (
	"reflect"
	"strings"
)

// Info describes a setting for people (the viewer's settings page): the group it belongs
// to, what it does, its unit, the range Validate accepts, the choices it takes, and
// whether a running node applies a change at once (Live) or when it starts.
type Info struct {
	Group   string
	Help    string
	Unit    string
	Min     *int64
	Max     *int64
	Choices []string
	// Live: the node (and the hooks, which read settings.json at every call) apply a
	// change without a restart.
	Live bool
}

// Groups are the settings page's sections, in order.
var Groups = []string{"capture", "context", "ai", "search", "sync", "team", "viewer", "node"}

func between(lo, hi int64) (*int64, *int64) { return &lo, &hi }

func info(group, unit string, live bool, help string) Info {
	return Info{Group: group, Unit: unit, Live: live, Help: help}
}

func ranged(i Info, lo, hi int64) Info {
	i.Min, i.Max = between(lo, hi)
	return i
}

func choices(i Info, c ...string) Info {
	i.Choices = c
	return i
}

// infos is every setting's description; TestEverySettingIsDescribed keeps it complete.
var infos = map[string]Info{
	"excluded_projects":          info("capture", "globs", true, "Projects never recorded (path.Match globs on the project name, e.g. scratch, tmp-*)."),
	"skip_tools":                 info("capture", "tool names", true, "Tool calls never recorded (case-insensitive tool names)."),
	"capture":                    choices(info("capture", "", true, "all: every project is recorded; opt-in: only projects with a .memnode-track file or listed by memnode track."), CaptureAll, CaptureOptIn),
	"hook_fail_loud_threshold":   ranged(info("capture", "hooks", true, "Consecutive hooks that find the node unreachable before a hook exits 2 so the agent shows it."), 1, 1000),
	"hook_timeout":               info("capture", "duration", true, "A hook's whole budget, e.g. 10s."),
	"fsync_acks":                 info("capture", "", false, "Sync every acknowledged hook event to disk before answering: survives power loss, not only crashes (slower)."),
	"context_observations":       ranged(info("context", "observations", true, "Observations listed in the context a new session starts with."), 0, 10000),
	"context_full_count":         ranged(info("context", "observations", true, "Of those, how many are shown in full (narrative and facts); the rest as one line."), 0, 10000),
	"context_sessions":           ranged(info("context", "sessions", true, "Recent session summaries in the context."), 0, 10000),
	"context_pinned_tokens":      ranged(info("context", "tokens", true, "Cap of the pinned and global notes heading every context (estimated tokens; 0: the default)."), 0, 1<<31-1),
	"context_system_message_off": info("context", "", true, "Stop the one line shown to you at session start (\"memnode: 42 memories from 7 sessions\")."),
	"context_expand":             choices(info("context", "", true, "What the observations shown in full expand: facts (default) or narrative."), ExpandFacts, ExpandNarrative),
	"context_types":              info("context", "observation types", true, "Only these observation types in the context (e.g. bugfix,decision; empty: all)."),
	"context_exclude_types":      info("context", "observation types", true, "Observation types left out of the context (e.g. discovery)."),
	"context_concepts":           info("context", "concepts", true, "Only observations with one of these concepts in the context (empty: all)."),
	"context_exclude_concepts":   info("context", "concepts", true, "Observations with one of these concepts are left out of the context."),
	"context_economics_off":      info("context", "", true, "Drop the token-economics line at the end of the context."),
	"context_last_summary_full":  info("context", "", true, "Show the newest session summary whole (every field, not cut at 300 characters)."),
	"context_viewer_link":        info("context", "", true, "The context names this viewer's address (never a login code)."),
	"semantic_inject":            info("context", "", true, "At each prompt, add the past observations most related to it (needs an embedding model)."),
	"semantic_inject_limit":      ranged(info("context", "observations", true, "How many related observations a prompt gets at most."), 0, 20),
	"ai_providers":               choices(info("ai", "providers, in order", false, "The compression chain, tried in order; it always ends with the offline compressor. anthropic, openai, gemini need a key (the key store below); claude-code, codex, gemini-cli run the agent CLI you are logged in to (claude -p, codex exec, gemini -p), headless, with no tools and no hooks."), AIProviderKinds()...),
	"ai_cli_batch_wait":          info("ai", "duration", false, "With an agent CLI in the chain: how long no new tool call must arrive before compressing, so a turn's calls cost one CLI run (default 20s; at most 10m)."),
	"ai_cli_paths":               info("ai", "provider=path", false, "The executable per agent CLI provider (claude-code, codex, gemini-cli); empty: claude, codex or gemini found in PATH."),
	"ai_models":                  info("ai", "provider=model", false, "A model per provider (empty: the provider's default)."),
	"ai_base_urls":               info("ai", "provider=URL", false, "A base URL per provider: openai plus a base URL covers OpenRouter, Ollama, LM Studio, vLLM."),
	"ai_daily_token_budget":      ranged(info("ai", "tokens per UTC day", false, "Hard cap on provider tokens a day; past it the offline compressor takes over (0: unlimited)."), 0, 1<<53),
	"ai_max_output_tokens":       ranged(info("ai", "tokens", false, "Cap of one provider answer (0: the default, 1024)."), 0, 1<<31-1),
	"workers":                    ranged(info("ai", "workers", false, "Queue workers compressing events in parallel."), 1, 64),
	"embed_model":                info("search", "Hugging Face ID", false, "Sentence-embedding model for vector and hybrid search (memnode embed pull installs it)."),
	"device_name":                info("sync", "", false, "This device's name in the group (default: the host name)."),
	"sync_disabled":              info("sync", "", false, "Turn device sync off."),
	"sync_host":                  info("sync", "address", false, "Address sync listens on: 127.0.0.1 pairs nodes of this machine only; 0.0.0.0 or a LAN address syncs with other machines."),
	"sync_port":                  ranged(info("sync", "port", false, "libp2p port (TCP and QUIC); 0: 38900 + uid % 100, -1: any free port."), -1, 65535),
	"gossip_port":                ranged(info("sync", "port", false, "Memberlist port; 0: 39000 + uid % 100, -1: any free port."), -1, 65535),
	"mdns":                       info("sync", "", false, "Find group members on the LAN by mDNS."),
	"local_only_projects":        info("team", "globs", false, "Projects whose records never leave this device: neither to your other devices nor to a team."),
	"port":                       ranged(info("viewer", "port", false, "The node's API and viewer port on 127.0.0.1 (0: 38800 + uid % 100)."), 0, 65535),
	"transport":                  choices(info("node", "", false, "How hooks, CLI and MCP reach the node: unix (the data dir's socket) or tcp (the port)."), TransportUnix, TransportTCP),
	"log_level":                  choices(info("node", "", true, "How much the node logs (the Logs page shows it): debug, info, warn, error. memnode run --log-level overrides it."), "debug", "info", "warn", "error"),
	"release_startup_pages":      info("node", "", false, "Unmap the executable pages only start-up used, once ready (lowers RssFile; off by default)."),
}

// Describe returns what the settings page says about the setting name.
func Describe(name string) Info {
	return infos[name]
}

// fieldIndex maps each settings.json key to its struct field.
func fieldIndex() map[string]int {
	t := reflect.TypeFor[Settings]()
	out := map[string]int{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out[name] = i
		}
	}
	return out
}

// WithLive returns s with every Live setting taken from next: what a running node can
// apply at once, leaving the ones read at start as they run.
func (s Settings) WithLive(next Settings) Settings {
	out := s
	v, n := reflect.ValueOf(&out).Elem(), reflect.ValueOf(next)
	for name, i := range fieldIndex() {
		if infos[name].Live {
			v.Field(i).Set(n.Field(i))
		}
	}
	return out
}

// Changed lists the settings whose values differ between a and b, in Fields order.
func Changed(a, b Settings) []string {
	idx := fieldIndex()
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var out []string
	for _, f := range Fields() {
		i := idx[f.Name]
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, f.Name)
		}
	}
	return out
}
