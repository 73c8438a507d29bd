// Command memnode is memnode's CLI — search, the IDE hooks, the MCP server, the device-group
// admin — and, built without -tags memnode_lean, memnoded, the daemon binary that also runs
// the node. The lean memnode hands the daemon's commands to memnoded (daemon_exec.go).
// It only parses flags and wires packages together.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"syscall"

	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/internal/clienv"
)

// cliEnv is everything a command may read from the outside world. Commands never touch
// os.Stdin/os.Getenv directly, so tests can run them in-process.
type cliEnv struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// DataDir is MEMNODE_DATA_DIR or ~/.memnode.
	DataDir string
	// Settings are the settings file over the defaults, with env overrides applied.
	Settings configs.Settings
}

// command is one subcommand: run gets the arguments after its name and returns the exit code.
type command struct {
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) int
}

// commands is filled by commandTable so there is no package-level mutable state.
func commandTable() map[string]command {
	return map[string]command{
		"run":       {"run the node in the foreground", cmdRun},
		"start":     {"start the node in the background (idempotent; returns when ready)", cmdStart},
		"stop":      {"stop the node", cmdStop},
		"status":    {"show the node's state [--json]", cmdStatus},
		"repair":    {"recover what is readable from a corrupt database; --purge-dead: delete the dead letters (node stopped)", cmdRepair},
		"hook":      {"coding agent hook entry point: memnode hook " + platformList() + " <event>", cmdHook},
		"install":   {"install the hooks (and MCP server) into a coding agent: install " + platformList() + " [--scope user|project]; without a platform: the agents found here [--yes|--all]", cmdInstall},
		"uninstall": {"remove exactly what install added: uninstall " + platformList() + " [--scope user|project]", cmdUninstall},
		"context":   {"print the context a new session would get [--project P]", cmdContext},
		"version":   {"print the version, commit, build date and platform", cmdVersion},
		"keys":      {"manage AI provider keys: keys set PROVIDER | list | delete PROVIDER", cmdKeys},
		"search":    {"search memory: search QUERY [--project P --type T --obs-type a,b --since --until --limit --offset --order --device --file PATH --platform AGENT --mode fts|vector|hybrid --team --json]", cmdSearch},
		"timeline":  {"records around an anchor: timeline ID|S<session>|ISO-time|--query TEXT [--before N --after N --type T --obs-type a,b --project P --device D --platform AGENT --json]", cmdTimeline},
		"get":       {"full records by ID: get ID... [--json]", cmdGet},
		"forget":    {"forget records on every device: forget ID...", cmdForget},
		"correct":   {`record what is true about a wrong or outdated memory: correct ID "what is true" [--json]`, cmdCorrect},
		"supersede": {"mark a memory as replaced by another: supersede OLD NEW [--json]", cmdSupersede},
		"import":    {"import FILE.jsonl | import --from-claude-mem PATH", cmdImport},
		"export":    {"export memory as JSONL: export [--project P] [--out FILE]", cmdExport},
		"mcp":       {"MCP server on stdio (what the IDE runs)", cmdMCP},
		"embed":     {"embedding model for hybrid search: embed pull [MODEL] [--force] | embed status", cmdEmbed},
		"viewer":    {"print a one-time login URL for the web viewer [--open]", cmdViewer},
		"team":      {"team memory on an rqlite cluster: team join URL[,URL...] --user NAME | share PROJECT | unshare PROJECT | status [--json] | leave [--purge] | admin add|remove @USER/DEVICE", cmdTeam},
		"doctor":    {"is memnode working for me? binary, settings, data dir, disk, agents hooked up, keys, node, providers, sync, team; each problem with its fix [--json] (exit 1 on a problem)", cmdDoctor},
		"config":    {"read and change settings.json one key at a time: config get KEY | set KEY VALUE | unset KEY | list", cmdConfig},
		"save":      {`save a note by hand: save "TEXT" [--global | --project P] [--pin] [--title T] [--type T]`, cmdSave},
		"pin":       {"pin a memory: it heads every session-start context of its project: pin ID", cmdPin},
		"unpin":     {"take the pin off a memory: unpin ID", cmdUnpin},
		"pause":     {"stop recording: pause [PROJECT|.] [--for 2h] (no PROJECT: every project)", cmdPause},
		"resume":    {"record again after a pause: resume [PROJECT|.] (no PROJECT: every pause)", cmdResume},
		"track":     {"with capture: opt-in, record this project: track [PROJECT] [--remove] [--list]", cmdTrack},
		"peers":     {"device group: peers [--json] | invite [--ttl 10m] | join CODE | remove DEVICE | status --json", cmdPeers},
	}
}

// version, commit and date are set by the linker (Makefile: -X main.version=… -X
// main.commit=… -X main.date=…, the commit's time); "dev" and "unknown" otherwise.
var (
	version = "dev"
	commit  = "unknown"
	date    = "unknown"
)

func main() {
	setUpProcess()
	// Everything memnode creates (databases, logs, models, the socket, exports) is the
	// user's alone, whatever the shell's umask; the code also asks for 0600/0700 itself.
	syscall.Umask(0o077)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

func runMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	cmds := commandTable()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout, cmds)
		return 0
	}
	if args[0] == "--version" {
		args[0] = "version"
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "memnode: unknown command %q (see 'memnode help')\n", args[0])
		return 2
	}
	env, err := newEnv(stdin, stdout, stderr, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "memnode: %v\n", err)
		// A hook must never break the IDE because of a bad settings file, and config is
		// how the user repairs one.
		if args[0] != "hook" && args[0] != "config" && args[0] != "doctor" {
			return 1
		}
	}
	return c.run(ctx, env, args[1:])
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "memnode — persistent memory for AI coding agents, shared across your devices")
	fmt.Fprintln(w, "\nusage: memnode <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nenvironment: MEMNODE_DATA_DIR (default ~/.memnode), MEMNODE_PORT, MEMNODE_SYNC_HOST,")
	fmt.Fprintln(w, "  MEMNODE_SYNC_PORT, MEMNODE_GOSSIP_PORT, MEMNODE_DEVICE_NAME, MEMNODE_<PROVIDER>_API_KEY,")
	fmt.Fprintln(w, "  HF_ENDPOINT, HF_TOKEN (memnode embed pull)")
}

// newEnv resolves the data dir and settings. On a settings error it still returns a usable
// env with defaults, so hooks can keep working.
func newEnv(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) (*cliEnv, error) {
	dir, settings, err := clienv.Resolve(getenv)
	return &cliEnv{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv, DataDir: dir, Settings: settings}, err
}

// fail prints one clear line and returns exit code 1.
func fail(env *cliEnv, format string, a ...any) int {
	fmt.Fprintf(env.Stderr, "memnode: "+format+"\n", a...)
	return 1
}

func cmdVersion(_ context.Context, env *cliEnv, args []string) int {
	if _, code, ok := newFlags(env, "version", "version").parse(args, 0, 0); !ok {
		return code
	}
	fmt.Fprintln(env.Stdout, versionLine(progName))
	return 0
}

// versionLine is what `memnode version` and `memnode-hook version` print: "memnode 1.2.0
// (commit 4e8fa1044943, built 2026-12-02T13:31:56Z, linux/arm64, go1.26.8)".
func versionLine(prog string) string {
	return fmt.Sprintf("%s %s (commit %s, built %s, %s/%s, %s)", prog, version, commit, date, runtime.GOOS, runtime.GOARCH, runtime.Version())
}
