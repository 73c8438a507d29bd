package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/hooks"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/store"
)

// minFreeDisk is the free space below which doctor calls the data dir's disk full: a
// commit, the WAL and a checkpoint need room, and SQLite fails a write without it.
const minFreeDisk = 64 << 20

// check is one line of `memnode doctor`: what was looked at, what was found and, for a
// problem, the command that fixes it.
type check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// cmdDoctor answers "is memnode working for me?" on one screen; exit 1 when something is
// wrong. It never starts the node: a node that is down is one of its answers.
func cmdDoctor(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "doctor", "doctor [--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, code, ok := fs.parse(args, 0, 0); !ok {
		return code
	}
	checks := doctorChecks(ctx, env)
	healthy := true
	for _, c := range checks {
		healthy = healthy && c.OK
	}
	if *asJSON {
		if code := printJSON(env, map[string]any{"ok": healthy, "checks": checks}); code != 0 {
			return code
		}
	} else {
		for _, c := range checks {
			mark := "ok  "
			if !c.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(env.Stdout, "%s %-11s %s\n", mark, c.Name, c.Detail)
			if c.Fix != "" {
				fmt.Fprintf(env.Stdout, "     %-11s fix: %s\n", "", c.Fix)
			}
		}
		if healthy {
			fmt.Fprintln(env.Stdout, "memnode is working.")
		}
	}
	if !healthy {
		return 1
	}
	return 0
}

func doctorChecks(ctx context.Context, env *cliEnv) []check {
	var out []check
	add := func(c check) { out = append(out, c) }
	problem := func(name, detail, fix string) { add(check{Name: name, Detail: detail, Fix: fix}) }
	good := func(name, format string, a ...any) {
		add(check{Name: name, OK: true, Detail: fmt.Sprintf(format, a...)})
	}

	exe, _ := os.Executable()
	good("binary", "%s, version %s", exe, version)
	add(daemonCheck(ctx, exe))

	// Settings: runMain let doctor run with a bad file so that it can say so here.
	if _, err := configs.Load(env.DataDir); err != nil {
		problem("settings", err.Error(), "memnode config list shows the file; memnode config unset KEY or fix "+datadir.Dir(env.DataDir).Settings())
	} else {
		good("settings", "%s", datadir.Dir(env.DataDir).Settings())
	}

	// The data dir: private, and on a disk with room.
	switch fi, err := os.Stat(env.DataDir); {
	case errors.Is(err, fs.ErrNotExist):
		good("data dir", "%s does not exist yet (the first start creates it)", env.DataDir)
	case err != nil:
		problem("data dir", err.Error(), "check "+env.DataDir)
	case fi.Mode().Perm()&0o077 != 0:
		problem("data dir", fmt.Sprintf("%s is %04o: other local users can read your memory", env.DataDir, fi.Mode().Perm()), "chmod 700 "+env.DataDir)
	default:
		good("data dir", "%s (%04o)", env.DataDir, fi.Mode().Perm())
	}
	if free, err := freeBytes(env.DataDir); err == nil {
		if free < minFreeDisk {
			problem("disk", fmt.Sprintf("%s free where the data dir is: new memory cannot be stored", mib(int64(free))), "free space on that disk (or move the data dir: MEMNODE_DATA_DIR)")
		} else {
			good("disk", "%s free", mib(int64(free)))
		}
	}

	// Capture: what the user switched off (a choice, not a problem).
	if lines := captureLines(env); len(lines) > 0 {
		for _, l := range lines {
			good("capture", "%s", l)
		}
	} else {
		good("capture", "every project is recorded")
	}
	if disabledEnv := env.Getenv(hooks.DisabledEnv); hooks.Disabled(env.Getenv) {
		problem("capture", hooks.DisabledEnv+"="+disabledEnv+" in this environment: hooks started from it record nothing", "unset "+hooks.DisabledEnv)
	}

	// Agents: hooked up, their MCP server registered, and running a binary that exists.
	hs := hookups(env)
	var agents []string // the agents whose hooks run memnode: their last event is shown below
	if len(hs) == 0 {
		problem("agents", "no coding agent is hooked up", "memnode install")
	}
	for _, h := range hs {
		switch {
		case h.Hooks && h.MCP:
			good("agents", "%s: hooks and MCP server", h.Platform)
		case h.Hooks:
			problem("mcp", h.Platform+" runs memnode's hooks, but memnode's MCP server is not registered: the agent cannot search its memory", "memnode install "+h.Platform)
		case h.MCP:
			good("agents", "%s: MCP server (no hooks: nothing is recorded from it)", h.Platform)
		}
		if h.Hooks {
			agents = append(agents, h.Platform)
		}
	}
	for _, s := range platform.StaleBinaries(hs) {
		problem("agents", fmt.Sprintf("%s runs %s, which is gone (moved or upgraded)", s.File, s.Binary), "memnode install "+s.Platform)
	}

	// Keys: which store, or why none opens.
	if store, err := openKeyStore(env); err != nil {
		problem("keys", err.Error(), "set "+envKeysBackend+"=os|kernel|file (file needs "+envKeysPassphrase+")")
	} else {
		good("keys", "%s", store.Backend())
	}

	// The node and what it reports.
	h, err := health(ctx, env)
	if err != nil {
		fix := "memnode start"
		if env.Settings.UseTCP() && portTaken(ctx, env) {
			fix = errPortTaken(env).Error()
		}
		problem("node", "not running (hooks start it on demand, but nothing is recorded while it is down)", fix)
		return out
	}
	var st apitype.Status
	if err := apiGet(ctx, env, "/api/status", &st); err != nil {
		problem("node", fmt.Sprintf("running (pid %d) but its status does not answer: %v", h.PID, err), "memnode stop && memnode start")
		return out
	}
	switch {
	case st.Storage.State == apitype.StorageCorrupt:
		problem("node", "the database is corrupt: "+st.Storage.Message, "memnode stop && memnode repair")
	case !h.Ready:
		problem("node", fmt.Sprintf("running (pid %d) but not ready: %s", h.PID, st.Storage.Message), "see "+datadir.Dir(env.DataDir).NodeLog())
	default:
		good("node", "running (pid %d, version %s), %s, %d waiting in the queue", h.PID, h.Version,
			plural(st.Records.Observations, "observation"), st.Queue.Waiting)
	}
	if st.Storage.Message != "" && st.Storage.State != apitype.StorageCorrupt {
		problem("storage", st.Storage.State+": "+st.Storage.Message, "see "+datadir.Dir(env.DataDir).NodeLog())
	}
	if st.Queue.Dead > 0 {
		problem("queue", fmt.Sprintf("%s set aside after failing %d times, not retried (%s says why)", plural(st.Queue.Dead, "event"), store.MaxAttempts,
			datadir.Dir(env.DataDir).NodeLog()), "memnode stop && memnode repair --purge-dead && memnode start")
	}
	for _, a := range agents {
		i := slices.IndexFunc(st.Agents, func(s apitype.AgentSeen) bool { return s.Platform == a })
		if i >= 0 {
			good("last event", "%s: received %s ago", a, time.Since(time.UnixMilli(st.Agents[i].LastEvent)).Truncate(time.Second))
			continue
		}
		good("last event", "%s: none since the node started; newest record: %s", a, lastRecord(ctx, env, a))
	}
	good("compressor", "%s", st.Compressor.Name)
	if ai := st.Compressor.AI; ai != nil {
		switch {
		case ai.BudgetLimit > 0 && ai.BudgetLeft == 0:
			problem("ai budget", fmt.Sprintf("%d of %d tokens used today: the offline compressor until the next UTC day", ai.BudgetUsed, ai.BudgetLimit), "memnode config set ai_daily_token_budget N")
		case ai.BudgetLimit > 0:
			good("ai budget", "%d of %d tokens used today", ai.BudgetUsed, ai.BudgetLimit)
		}
		for _, p := range ai.Providers {
			switch {
			case strings.HasPrefix(p.CLI, "not found"):
				problem("provider", providerLine(p), "install the agent CLI or name it: memnode config set ai_cli_paths "+p.Name+"=/path/to/it")
			case p.CLI != "" && p.LastError != "":
				problem("provider", providerLine(p), "run the agent CLI once by hand (its login or usage limit); memnode config get ai_providers")
			case p.LastError != "":
				problem("provider", providerLine(p), "memnode keys list; memnode config get ai_providers")
			default:
				good("provider", "%s", providerLine(p))
			}
		}
	}
	good("embeddings", "%s", st.Embed.State)
	good("sync", "%s", st.Sync.State)
	switch tm := st.Team; {
	case tm.Joined && !tm.Reachable:
		problem("team", tm.Name+": the cluster is unreachable", "memnode team status")
	case tm.Joined:
		good("team", "%s, reachable", tm.Name)
	case tm.LastError != "":
		problem("team", tm.LastError, "memnode team status")
	default:
		good("team", "not in a team")
	}
	return out
}

// lastRecord says when the newest record of agent's sessions was stored, or that none is.
func lastRecord(ctx context.Context, env *cliEnv, agent string) string {
	c, err := client.FromDialer(dialer(env))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := c.Search(ctx, apitype.SearchQuery{Platform: agent, Order: "newest", Limit: 1, Type: "all"})
	switch {
	case err != nil:
		return "unknown (" + err.Error() + ")"
	case len(res.Hits) == 0:
		return "nothing recorded yet (start a session in it)"
	}
	return time.Since(time.UnixMilli(res.Hits[0].Time)).Truncate(time.Second).String() + " ago"
}

// freeBytes is the space an unprivileged writer has on the file system of path (or of its
// nearest existing parent).
func freeBytes(path string) (uint64, error) {
	for {
		var st syscall.Statfs_t
		err := syscall.Statfs(path, &st)
		if err == nil {
			return st.Bavail * uint64(st.Bsize), nil
		}
		parent := path[:max(strings.LastIndex(path, "/"), 1)]
		if !errors.Is(err, syscall.ENOENT) || parent == path {
			return 0, err
		}
		path = parent
	}
}

// daemonCheck finds memnoded, which runs the node (the lean memnode execs it), and checks
// that it is this binary's build: a memnoded left from another release would run a node
// that speaks another version.
func daemonCheck(ctx context.Context, exe string) check {
	const fix = "reinstall memnode: memnode and memnoded come together (README, Install)"
	d, err := daemonExe()
	if err != nil {
		return check{Name: "daemon", Detail: err.Error(), Fix: fix}
	}
	if d == exe {
		return check{Name: "daemon", OK: true, Detail: "this binary runs the node"}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, d, "version").Output()
	if err != nil {
		return check{Name: "daemon", Detail: fmt.Sprintf("%s version: %v", d, err), Fix: fix}
	}
	// "memnoded 1.2.0 (commit …, built …, linux/amd64, go1.26.8)": all but the name must match.
	got := strings.TrimSpace(string(out))
	_, gotBuild, _ := strings.Cut(got, " ")
	_, wantBuild, _ := strings.Cut(versionLine(progName), " ")
	if gotBuild != wantBuild {
		return check{Name: "daemon", Detail: fmt.Sprintf("%s is %q, this memnode is %s", d, got, wantBuild), Fix: fix}
	}
	return check{Name: "daemon", OK: true, Detail: d}
}
