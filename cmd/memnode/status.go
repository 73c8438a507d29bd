package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/hooks"
	"github.com/memnode/memnode/internal/localnet"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/store"
)

// exitNotRunning is `memnode status`'s exit code when no node runs.
const exitNotRunning = 3

func cmdStatus(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "status", "status [--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, code, ok := fs.parse(args, 0, 0); !ok {
		return code
	}
	stale := staleHooks(env)
	h, err := health(ctx, env)
	if err != nil {
		taken := portTaken(ctx, env)
		if *asJSON {
			json.NewEncoder(env.Stdout).Encode(map[string]any{"running": false, "data_dir": env.DataDir, "port": env.Settings.Port, "port_taken": taken, "stale_hooks": stale, "capture": captureLines(env)})
		} else {
			fmt.Fprintf(env.Stdout, "memnode is not running (data dir %s, port %d); 'memnode start' starts it\n", env.DataDir, env.Settings.Port)
			writeCapture(env)
			if taken {
				fmt.Fprintf(env.Stdout, "  warning:     %v\n", errPortTaken(env))
			}
			writeStale(env.Stdout, stale)
		}
		return exitNotRunning
	}
	// A node that found its database corrupt is not ready but still answers its status.
	var st apitype.Status
	stErr := apiGet(ctx, env, "/api/status", &st)
	if stErr != nil && h.Ready {
		return fail(env, "status: %v", stErr)
	}
	known := stErr == nil
	if *asJSON {
		out := map[string]any{"running": true, "ready": h.Ready, "pid": h.PID, "version": h.Version, "data_dir": env.DataDir, "port": env.Settings.Port, "stale_hooks": stale, "capture": captureLines(env)}
		if known {
			out["status"] = st
		}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
		return 0
	}
	fmt.Fprintf(env.Stdout, "memnode %s running (pid %d) on %s\n", h.Version, h.PID, localnet.SocketPath(env.DataDir))
	fmt.Fprintf(env.Stdout, "  data dir:    %s\n", env.DataDir)
	writeCapture(env)
	writeStale(env.Stdout, stale)
	if !known {
		fmt.Fprintln(env.Stdout, "  state:       starting (database not open yet)")
		return 0
	}
	tcp := fmt.Sprintf("127.0.0.1:%d", env.Settings.Port)
	if st.TCPError != "" {
		tcp = fmt.Sprintf("off: %v (hooks, CLI and MCP use the socket)", errPortTaken(env))
	}
	writeStatus(env.Stdout, st, tcp)
	return 0
}

// writeCapture prints one "capture:" line per pause or mode that keeps projects unrecorded.
func writeCapture(env *cliEnv) {
	if hooks.Disabled(env.Getenv) {
		fmt.Fprintf(env.Stdout, "  %-12s %s=%s here: hooks started from this environment record nothing\n", "capture:", hooks.DisabledEnv, env.Getenv(hooks.DisabledEnv))
	}
	for _, l := range captureLines(env) {
		fmt.Fprintf(env.Stdout, "  %-12s %s\n", "capture:", l)
	}
}

// writeStatus renders the parts of a node's status for people, one "name: value" line each
// (the header, data dir and pid are the caller's).
func writeStatus(w io.Writer, st apitype.Status, tcp string) {
	line := func(name, format string, a ...any) {
		fmt.Fprintf(w, "  %-12s %s\n", name+":", fmt.Sprintf(format, a...))
	}
	r := st.Records
	if st.Storage.State == apitype.StorageCorrupt {
		line("state", "not ready: the database is corrupt; 'memnode stop', then 'memnode repair'")
		line("records", "unreadable")
	} else {
		line("records", "%s, %s, %s, %s (%s, %s)", plural(r.Observations, "observation"), plural(r.Sessions, "session"),
			plural(r.Prompts, "prompt"), plural(r.Summaries, "summary"), plural(r.Ops, "op"), plural(r.Tombstones, "tombstone"))
	}
	q := st.Queue
	line("queue", "%d waiting; since start %d ingested, %d processed, %s", q.Waiting, q.Ingested, q.Processed, plural(int(q.Failures), "failure"))
	if q.Dead > 0 {
		line("dead", "%s set aside after failing %d times, not retried (see the node's log; 'memnode repair --purge-dead' deletes them)", plural(q.Dead, "event"), store.MaxAttempts)
	}
	line("tcp", "%s", tcp)
	line("compressor", "%s", st.Compressor.Name)
	if ai := st.Compressor.AI; ai != nil {
		if ai.BudgetLimit > 0 {
			line("ai budget", "%d of %d tokens used today, %d left", ai.BudgetUsed, ai.BudgetLimit, max(ai.BudgetLeft, 0))
		} else {
			line("ai budget", "unlimited")
		}
		for _, p := range ai.Providers {
			line("provider", "%s", providerLine(p))
		}
	}
	line("embeddings", "%s", st.Embed.State)
	line("sync", "%s", st.Sync.State)
	if tm := st.Team; tm.Joined {
		reach := "reachable"
		if !tm.Reachable {
			reach = "unreachable"
		}
		line("team", "%s, %s, shared: %s, push backlog %d, rejected ops %d", tm.Name, reach, strings.Join(tm.Shared, ","), tm.PushBacklog, tm.Rejected)
		if tm.Squatted > 0 {
			line("team", "ERROR: %d ops written under this device's ID by someone else (memnode team status)", tm.Squatted)
		}
	} else if tm.LastError != "" {
		line("team", "off: %s", tm.LastError)
	}
	storage := st.Storage.State
	if st.Storage.Message != "" {
		storage += ": " + st.Storage.Message
	}
	line("storage", "%s", storage)
}

// providerLine is one provider's usage: "anthropic (claude-x): 3 calls, 1200 in / 300 out
// tokens, errors: rate_limit 1; last error: …".
func providerLine(p apitype.ProviderStatus) string {
	var b strings.Builder
	b.WriteString(p.Name)
	if p.Model != "" {
		b.WriteString(" (" + p.Model + ")")
	}
	if p.CLI != "" {
		b.WriteString(" via " + p.CLI)
	}
	fmt.Fprintf(&b, ": %s, %d in / %d out tokens", plural(int(p.Calls), "call"), p.InputTokens, p.OutputTokens)
	if len(p.Errors) > 0 {
		classes := make([]string, 0, len(p.Errors))
		for c := range p.Errors {
			classes = append(classes, c)
		}
		sort.Strings(classes)
		b.WriteString(", errors:")
		for _, c := range classes {
			fmt.Fprintf(&b, " %s %d", c, p.Errors[c])
		}
	}
	if !p.DisabledUntil.IsZero() {
		b.WriteString(", skipped until " + p.DisabledUntil.Local().Format("15:04:05"))
	}
	if p.LastError != "" {
		b.WriteString("; last error: " + p.LastError)
	}
	return b.String()
}

// plural is "1 summary", "2 summaries", "0 ops".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	switch {
	case strings.HasSuffix(noun, "y"):
		noun = strings.TrimSuffix(noun, "y") + "ies"
	default:
		noun += "s"
	}
	return fmt.Sprintf("%d %s", n, noun)
}

// staleHooks lists the memnode executables the user-scope configuration of the installed
// agents runs that are gone (an upgrade or move since `memnode install`); nil when none, or
// when the home directory is unknown.
func staleHooks(env *cliEnv) []platform.StaleBinary {
	return platform.StaleBinaries(hookups(env))
}

// writeStale prints one line per stale binary, saying how to fix it.
func writeStale(w io.Writer, stale []platform.StaleBinary) {
	for _, s := range stale {
		fmt.Fprintf(w, "  warning:     %s runs %s, which is gone (moved or upgraded): run 'memnode install %s' again\n", s.File, s.Binary, s.Platform)
	}
}
