// Command memnode-bench measures a real memnode binary end to end (hook latency, event
// ingest rate, context generation time, node memory), optionally side by side with
// claude-mem as measured by the anchor script; docs/BENCH.md explains every figure.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// config is everything one benchmark run needs; main fills it from flags.
type config struct {
	Bin     string // memnode binary under test
	Fixture string // Claude Code hook payloads (session.jsonl); built-in payloads if missing
	// Settings, if set, is copied to the data dir as settings.json before the node starts
	// (to measure e.g. another worker count).
	Settings string

	HookRuns    int           // timed runs per hook (after Warmup)
	Warmup      int           // untimed runs before each timed series
	Events      int           // events of the ingest measurement
	Conc        int           // concurrent keep-alive HTTP clients
	ContextObs  int           // observation events in the context project
	ContextRuns int           // timed GET /api/context requests
	Settle      time.Duration // pause before each RSS reading (the anchor waits 2 s)
	IdleLong    time.Duration // read the idle RSS again this long after start; 0 skips it
	Timeout     time.Duration // watchdog for the memnode measurements

	Anchor        string        // path of claude-mem-anchor.sh; empty: no live anchor run
	AnchorDir     string        // the anchor's work dir; empty: a temp dir
	AnchorTSV     string        // an existing anchor results/summary.tsv to compare with
	AnchorTimeout time.Duration // watchdog for the anchor run

	// NoPlatforms skips the per-platform hook timings (a binary older than the platform
	// registry has only claude-code).
	NoPlatforms bool
	// Base, when set, is a second binary: the A/B mode measures it and Bin in turn, Rounds
	// times each (ab.go).
	Base   string
	Rounds int
	// Unproven talks plain HTTP to the node's port, without the token proof a binary older
	// than that proof cannot give (A/B mode, for both binaries alike).
	Unproven bool

	// Scale, when set, runs the scale benchmark at these sizes (scale.go) instead.
	Scale      string
	ScaleCache string // the datasets' cache root; empty: ~/.cache/memnode-bench/scale
	Reimport   bool   // scale: import each dataset again (this run's import figures, not the cache's)
	ScaleJoin  string // scale: the sizes a new device joins ("all", "none" or a list; scalejoin.go)
	// ScaleJoinOnly measures only the join at each size (the inner loop of install work).
	ScaleJoinOnly bool

	Keep bool      // keep the temp data dir
	Log  io.Writer // progress lines; nil discards
}

func defaultConfig() config {
	return config{
		Bin: "bin/memnode", Fixture: "testdata/fixtures/claude-code/session.jsonl",
		HookRuns: 200, Warmup: 10, Events: 20000, Conc: 4, ContextObs: 10000, ContextRuns: 200,
		Settle: 2 * time.Second, IdleLong: 30 * time.Second, Timeout: 10 * time.Minute, AnchorTimeout: 11 * time.Minute,
	}
}

func (c config) validate() error {
	switch {
	case c.Bin == "":
		return errors.New("-bin is required")
	case c.HookRuns < 1 || c.Events < 1 || c.ContextObs < 1 || c.ContextRuns < 1:
		return errors.New("-hook-runs, -events, -context-obs and -context-runs must be ≥ 1")
	case c.Warmup < 0 || c.Conc < 1 || c.Conc > 256:
		return errors.New("-warmup must be ≥ 0 and -conc within 1..256")
	case c.Timeout <= 0:
		return errors.New("-timeout must be > 0")
	case c.Base != "" && c.Rounds < 1:
		return errors.New("-rounds must be ≥ 1")
	}
	return nil
}

func main() {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("memnode-bench", flag.ExitOnError)
	fs.StringVar(&cfg.Bin, "bin", cfg.Bin, "memnode binary to measure")
	fs.StringVar(&cfg.Fixture, "fixture", cfg.Fixture, "Claude Code hook payloads (session.jsonl); built-in payloads when missing")
	fs.StringVar(&cfg.Settings, "settings", "", "settings.json to give the node (default: built-in defaults)")
	fs.IntVar(&cfg.HookRuns, "hook-runs", cfg.HookRuns, "timed runs per hook")
	fs.IntVar(&cfg.Warmup, "warmup", cfg.Warmup, "untimed warm-up runs before each timed series")
	fs.IntVar(&cfg.Events, "events", cfg.Events, "observation events POSTed in the ingest measurement")
	fs.IntVar(&cfg.Conc, "conc", cfg.Conc, "concurrent keep-alive HTTP clients (the anchor's CONC)")
	fs.IntVar(&cfg.ContextObs, "context-obs", cfg.ContextObs, "observation events ingested into the context project")
	fs.IntVar(&cfg.ContextRuns, "context-runs", cfg.ContextRuns, "timed GET /api/context requests")
	fs.DurationVar(&cfg.Settle, "settle", cfg.Settle, "pause before each RSS reading")
	fs.DurationVar(&cfg.IdleLong, "idle-long", cfg.IdleLong, "read the idle RSS again this long after start (0: skip)")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "watchdog for the memnode measurements")
	fs.StringVar(&cfg.Anchor, "anchor", "", "run this claude-mem-anchor.sh afterwards and compare (installs claude-mem from npm; minutes)")
	fs.StringVar(&cfg.AnchorDir, "anchor-dir", "", "work dir for -anchor (default: a temp dir; reuse one with SKIP_INSTALL=1 in the env)")
	fs.StringVar(&cfg.AnchorTSV, "anchor-tsv", "", "compare with an existing anchor results/summary.tsv instead of running it")
	fs.DurationVar(&cfg.AnchorTimeout, "anchor-timeout", cfg.AnchorTimeout, "watchdog for -anchor")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the temp data dir (its path is printed)")
	fs.BoolVar(&cfg.NoPlatforms, "no-platforms", false, "skip the per-platform hook timings")
	fs.BoolVar(&cfg.Unproven, "unproven", false, "reach the node over plain TCP without the token proof (a binary older than the proof; -base sets it for both)")
	fs.StringVar(&cfg.Base, "base", "", "A/B mode: measure this (older) binary and -bin in turn, -rounds times each, and print both columns")
	fs.IntVar(&cfg.Rounds, "rounds", 3, "A/B mode: runs of each binary (ABBA order)")
	fs.StringVar(&cfg.Scale, "scale", "", "scale benchmark at these sizes, e.g. 10k,100k,1m (datasets generated and imported once, cached; docs/BENCH.md)")
	fs.StringVar(&cfg.ScaleCache, "scale-cache", "", "cache root of the scale datasets (default ~/.cache/memnode-bench/scale)")
	fs.StringVar(&cfg.ScaleJoin, "scale-join", "all", "scale: the sizes at which a second device joins a copy of the memory, cut once midway (all, none, or e.g. 10k,100k)")
	fs.BoolVar(&cfg.ScaleJoinOnly, "scale-join-only", false, "scale: measure only the join at each size")
	fs.BoolVar(&cfg.Reimport, "reimport", false, "scale: import each dataset again into an empty data dir and report this run's import figures")
	asJSON := fs.Bool("json", false, "print JSON instead of the table")
	quiet := fs.Bool("q", false, "no progress lines on stderr")
	fs.Parse(os.Args[1:])
	if !*quiet {
		cfg.Log = os.Stderr
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "memnode-bench:", err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	limit := cfg.Timeout
	if cfg.Base != "" {
		limit *= time.Duration(2 * cfg.Rounds)
	}
	var sizes []int
	if cfg.Scale != "" {
		var err error
		if sizes, err = parseSizes(cfg.Scale); err != nil {
			fmt.Fprintln(os.Stderr, "memnode-bench:", err)
			os.Exit(2)
		}
		limit = 4 * time.Hour // a first 1M build generates and imports a million records
	}
	if cfg.Anchor != "" {
		limit += cfg.AnchorTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	// Last resort if something ignores ctx: the run's cleanup kills the node it started,
	// then the process goes. Bounded even when a child or a syscall hangs.
	var nodePID pidBox
	hard := time.AfterFunc(limit+time.Minute, func() {
		fmt.Fprintf(os.Stderr, "memnode-bench: WATCHDOG: %s exceeded, aborting\n", limit+time.Minute)
		killIfOurs(nodePID.get(), cfg.Bin)
		os.Exit(3)
	})
	defer hard.Stop()

	if cfg.Scale != "" {
		if err := runScale(ctx, cfg, sizes, &nodePID, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "memnode-bench:", err)
			os.Exit(1)
		}
		return
	}
	if cfg.Base != "" {
		if err := runAB(ctx, cfg, &nodePID, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "memnode-bench:", err)
			os.Exit(1)
		}
		return
	}
	res, err := run(ctx, cfg, &nodePID)
	if err != nil {
		// A partial table would show zeros for what was not measured; the progress lines
		// on stderr say how far the run got.
		fmt.Fprintln(os.Stderr, "memnode-bench:", err)
		os.Exit(1)
	}
	if *asJSON {
		writeJSON(os.Stdout, res)
	} else {
		writeTable(os.Stdout, res)
	}
}
