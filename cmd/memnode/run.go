//go:build !memnode_lean

package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/contextfile"
	"github.com/memnode/memnode/internal/clienv"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/internal/exepages"
	"github.com/memnode/memnode/internal/logfile"
	"github.com/memnode/memnode/node"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/registry"
)

func cmdRun(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "run", "run [--log-level debug|info|warn|error] [--pprof ADDR]")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	pprofAddr := fs.String("pprof", "", "serve Go profiles (net/http/pprof) on this loopback address, e.g. 127.0.0.1:6060 (no token: every local user can read them; debugging only)")
	if _, code, ok := fs.parse(args, 0, 0); !ok {
		return code
	}
	// The level is the flag's when given, else the log_level setting's, which the viewer
	// and memnode config set change while the node runs.
	flagLevel := false
	fs.Visit(func(f *flag.Flag) { flagLevel = flagLevel || f.Name == "log-level" })
	if !flagLevel && env.Settings.LogLevel != "" {
		*level = env.Settings.LogLevel
	}
	lv := new(slog.LevelVar)
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		return fs.usageErr("bad --log-level %q", *level)
	}
	env, closeLog, err := runLog(env)
	if err != nil {
		return fail(env, "run: %v", err)
	}
	defer closeLog()
	startupLines(env)
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: lv}))
	if *pprofAddr != "" {
		stop, err := servePprof(*pprofAddr, log)
		if err != nil {
			return fail(env, "run: %v", err)
		}
		defer stop()
	}
	comp, err := buildCompressor(env, log)
	if err != nil {
		return fail(env, "run: %v", err)
	}
	// The viewer's restart ends this run like a signal would, then the process runs
	// itself again (same PID, terminal, environment and arguments): every setting applies.
	ctx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var restart atomic.Bool
	linger, maxDefer := batchWindow(env.Settings)
	n, err := node.New(node.Config{DataDir: env.DataDir, Settings: env.Settings, Version: version, Logger: log, Compressor: comp, Embedder: buildEmbedder(env),
		Linger: linger, MaxDefer: maxDefer,
		Reload: func() (configs.Settings, error) {
			_, s, err := clienv.Resolve(env.Getenv)
			if err == nil && !flagLevel {
				_ = lv.UnmarshalText([]byte(cmp.Or(s.LogLevel, "info"))) // Validate accepted it
			}
			return s, err
		},
		Restart:      func() { restart.Store(true); stopRun() },
		ContextFiles: contextFileSpecs(registry.Builtin()),
		TeamPassword: func() string { return teamPassword(env) },
		OpenKeys:     func() (node.KeyStore, error) { return openKeyStore(env) },
		FirstRun:     func() apitype.ViewerFirstRun { return firstRun(env) },
		ImportHistory: func(ctx context.Context, name string, progress func(done, total int)) ([]string, error) {
			return importForViewer(ctx, env, name, progress)
		}})
	if err != nil {
		return fail(env, "run: %v", err)
	}
	if err := n.Start(ctx); err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return 0 // stopped while starting
		}
		if errors.Is(err, datadir.ErrAlreadyRunning) {
			pid, _ := datadir.ReadPIDFile(env.DataDir)
			return fail(env, "run: already running (pid %d) on data dir %s; 'memnode stop' stops it", pid.PID, env.DataDir)
		}
		return fail(env, "run: %v", err)
	}
	log.Info("memnode listening", "addr", n.Addr(), "data_dir", env.DataDir, "version", version)
	if env.Settings.ReleaseStartupPages {
		go releaseStartupPages(ctx, n, log)
	}
	<-ctx.Done()
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err = n.Close(sctx)
	// The workers are stopped: an agent CLI still running a compression is killed and waited for.
	if c, ok := comp.(io.Closer); ok {
		err = errors.Join(err, c.Close())
	}
	if err != nil {
		log.Error("shutdown", "err", err)
		return 1
	}
	if restart.Load() {
		return reexec(env) // the log's descriptor closes on exec; the new run opens it again
	}
	return 0
}

// runLog returns env with Stderr writing to the data dir's node log as well, so the viewer's
// Logs page and `memnode doctor` see a node run in a terminal too. Under `memnode start`
// the node's stderr already is that log, and env is returned as is.
func runLog(env *cliEnv) (*cliEnv, func(), error) {
	dd := datadir.Dir(env.DataDir)
	if f, ok := env.Stderr.(*os.File); ok {
		a, errA := f.Stat()
		b, errB := os.Stat(dd.NodeLog())
		if errA == nil && errB == nil && os.SameFile(a, b) {
			// Under start: stderr is the log. Lines go through the capping, rotating
			// writer; after a rotation stdout and stderr point at the new file, so a
			// panic's trace lands in the current log.
			w, err := logfile.Open(dd.NodeLog(), 0, 0)
			if err != nil {
				return env, nil, err
			}
			w.OnRotate = func(nf *os.File) {
				unix.Dup2(int(nf.Fd()), 1)
				unix.Dup2(int(nf.Fd()), 2)
			}
			teed := *env
			teed.Stderr = w
			return &teed, func() { w.Close() }, nil
		}
	}
	if err := datadir.Secure(env.DataDir); err != nil {
		return env, nil, err
	}
	if err := os.MkdirAll(dd.Logs(), 0o700); err != nil {
		return env, nil, fmt.Errorf("create log dir: %w", err)
	}
	logf, err := logfile.Open(dd.NodeLog(), 0, 0) // lines capped, rotated at its size cap
	if err != nil {
		return env, nil, fmt.Errorf("open log: %w", err)
	}
	teed := *env
	teed.Stderr = io.MultiWriter(logf, logfile.Capped(env.Stderr, 0)) // the log first: a closed terminal must not stop it
	return &teed, func() { logf.Close() }, nil
}

// startupLines are the node's first lines: where its log is, how to open the viewer, and
// which agents are hooked up (or what to run when none is).
func startupLines(env *cliEnv) {
	fmt.Fprintf(env.Stderr, "memnode %s starting; data dir %s, log %s\n", version, env.DataDir, datadir.Dir(env.DataDir).NodeLog())
	fmt.Fprintln(env.Stderr, "  viewer:  memnode viewer   (prints a one-time login link; --open opens it)")
	agents, stale := hookedUp(env)
	switch {
	case len(agents) == 0:
		fmt.Fprintln(env.Stderr, "  agents:  no agent hooked up yet: memnode install")
	default:
		fmt.Fprintf(env.Stderr, "  agents:  %s hooked up\n", strings.Join(agents, ", "))
	}
	for _, s := range stale {
		fmt.Fprintf(env.Stderr, "  warning: %s runs %s, which is gone: memnode install %s\n", s.File, s.Binary, s.Platform)
	}
}

// releaseStartupPages unmaps the executable pages start-up touched once the node is
// ready (internal/exepages): most of them are never run again, and left mapped they
// would count as the idle daemon's memory and be kept from reclaim.
func releaseStartupPages(ctx context.Context, n *node.Node, log *slog.Logger) {
	if n.WaitReady(ctx) != nil {
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Second):
	}
	st, err := exepages.Release()
	if err != nil {
		log.Warn("could not release start-up pages", "err", err)
		return
	}
	log.Info("released start-up pages of the executable", "mappings", st.Mappings, "mib", st.Bytes>>20)
}

// reexec replaces this process with a fresh run of the same binary, arguments and
// environment (the viewer's restart); it returns only when that fails.
func reexec(env *cliEnv) int {
	exe, err := os.Executable()
	if err != nil {
		return fail(env, "restart: %v; start the node again: memnode start", err)
	}
	err = syscall.Exec(exe, os.Args, os.Environ())
	return fail(env, "restart: %v; start the node again: memnode start", err)
}

// hookedUp lists the agents whose user-scope configuration runs memnode (hooks or MCP
// server), and the memnode executables such configuration names that are gone.
func hookedUp(env *cliEnv) (agents []string, stale []platform.StaleBinary) {
	hs := hookups(env)
	for _, h := range hs {
		agents = append(agents, h.Platform)
	}
	return agents, platform.StaleBinaries(hs)
}

// firstRun is what the viewer's empty feed says: the agents hooked up, claude-mem's
// database when ~/.claude-mem holds one, and the agents whose past sessions are on disk.
func firstRun(env *cliEnv) apitype.ViewerFirstRun {
	agents, _ := hookedUp(env)
	fr := apitype.ViewerFirstRun{Agents: agents}
	if home := env.Getenv("HOME"); home != "" {
		db := filepath.Join(home, ".claude-mem", "claude-mem.db")
		if fi, err := os.Stat(db); err == nil && fi.Mode().IsRegular() {
			fr.ClaudeMem = db
		}
		for _, p := range registry.Builtin().All() {
			if p.History == nil {
				continue
			}
			dir := p.History.Dir(home, env.Getenv)
			if files, err := p.History.SessionFiles(dir, 0); err == nil && len(files) > 0 {
				fr.Histories = append(fr.Histories, apitype.ViewerHistory{Platform: p.Name, Display: p.Display, Dir: dir, Sessions: len(files)})
			}
		}
	}
	return fr
}

// contextFileSpecs maps every platform that has a context file to it, for the node.
func contextFileSpecs(reg *platform.Registry) map[string]contextfile.Spec {
	specs := map[string]contextfile.Spec{}
	for _, p := range reg.All() {
		if !p.ContextFile.Zero() {
			specs[p.Name] = p.ContextFile
		}
	}
	return specs
}

// importForViewer is the viewer's import of an agent's past sessions (POST
// /api/viewer/import), run by the node process through its own API: the default folder,
// every session, the summary lines as the CLI prints them.
func importForViewer(ctx context.Context, env *cliEnv, name string, progress func(done, total int)) ([]string, error) {
	p, ok := registry.Builtin().Lookup(name)
	if !ok || p.History == nil {
		return nil, fmt.Errorf("memnode does not import the past sessions of %q", name)
	}
	var warnings []string
	res, err := runHistoryImport(ctx, env, p, "", 0, true, progress, func(line string) { warnings = append(warnings, line) })
	return append(res.summary(p), warnings...), err
}
