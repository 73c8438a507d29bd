package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/internal/datadir"
)

// The scale benchmark (make bench-scale, docs/BENCH.md "Scale"): realistic datasets of 10k,
// 100k and 1M observations, generated once and imported once into a data dir that is
// cached, then every figure of issue 29 measured through the real binaries on a copy.

// scaleSeed is the generator's seed: one dataset per size, the same on every machine.
const scaleSeed = 29

// parseSizes reads "10k,100k,1m" (k and m suffixes, any case, or plain numbers).
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		mult := 1
		switch {
		case strings.HasSuffix(f, "k"):
			mult, f = 1_000, strings.TrimSuffix(f, "k")
		case strings.HasSuffix(f, "m"):
			mult, f = 1_000_000, strings.TrimSuffix(f, "m")
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("size %q: want a number like 10k, 100k or 1m", f)
		}
		out = append(out, n*mult)
	}
	if len(out) == 0 {
		return nil, errors.New("no sizes given (e.g. -scale 10k,100k,1m)")
	}
	return out, nil
}

func sizeName(n int) string {
	switch {
	case n%1_000_000 == 0:
		return fmt.Sprintf("%dm", n/1_000_000)
	case n%1_000 == 0:
		return fmt.Sprintf("%dk", n/1_000)
	}
	return strconv.Itoa(n)
}

// scaleCacheDir is where datasets live: ~/.cache/memnode-bench/scale/v<version>.
func scaleCacheDir(root string) (string, error) {
	if root == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache dir (set -scale-cache): %w", err)
		}
		root = filepath.Join(c, "memnode-bench", "scale")
	}
	return filepath.Join(root, fmt.Sprintf("v%d", scaleGenVersion)), nil
}

// scaleSet is one size's cached dataset: the export file, the data dir it was imported
// into (stopped cleanly), and the manifest.
type scaleSet struct {
	n       int
	dir     string
	export  string
	dataDir string
	man     scaleManifest
}

func (s scaleSet) manifestPath() string { return filepath.Join(s.dir, "manifest.json") }

// ScaleRow is one size's figures.
type ScaleRow struct {
	Size         int     `json:"size"`
	Observations int     `json:"observations"`
	Largest      int     `json:"largest_project_observations"`
	StartMs      float64 `json:"start_ready_warm_ms"`
	StartColdMs  float64 `json:"start_ready_first_ms"`
	ContextHook  Stats   `json:"context_hook_ms"`
	Timeline     Stats   `json:"timeline_ms"`
	SearchProj   Stats   `json:"search_project_ms"`
	Search       Stats   `json:"search_ms"`
	Status       Stats   `json:"status_ms"`
	Forget       Stats   `json:"forget_one_ms"`
	HookInForget Stats   `json:"posttooluse_during_forget_ms"`
	// HookMissed counts those hooks that gave up on the node (event spooled, exit 2 after
	// three in a row).
	HookMissed int `json:"posttooluse_during_forget_missed"`
	// CheckRunning: the node's background integrity check had not yet passed when those
	// forgets began (they come a few seconds after a start).
	CheckRunning bool `json:"forget_during_startup_check"`
	// The same figures once that check has passed (settledForgets records, more hooks): the
	// node's steady state, and a series long enough for its p99 not to be its maximum.
	ForgetSettled       Stats `json:"forget_one_settled_ms"`
	HookInForgetSettled Stats `json:"posttooluse_during_forget_settled_ms"`
	HookMissedSettled   int   `json:"posttooluse_during_forget_settled_missed"`
	// ColdHookMs is a SessionStart hook run while the node is stopped: it starts the node;
	// ColdHookContext says whether it still injected the context within its budget.
	ColdHookMs      float64      `json:"context_hook_node_stopped_ms"`
	ColdHookContext bool         `json:"context_hook_node_stopped_injected"`
	Import          *scaleImport `json:"import"`
	ImportCached    bool         `json:"import_cached"` // the build's import, not this run's
	DBBytes         int64        `json:"db_bytes"`
	Load            string       `json:"load"`
	// Join is a new device joining a copy of this size's memory, cut once midway (scalejoin.go);
	// nil when -scale-join leaves this size out.
	Join *scaleJoin `json:"join,omitempty"`
}

// runScale builds what is missing and measures each size in turn.
func runScale(ctx context.Context, cfg config, sizes []int, box *pidBox, out io.Writer) error {
	root, err := scaleCacheDir(cfg.ScaleCache)
	if err != nil {
		return err
	}
	logf := func(format string, a ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "[bench-scale %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
		}
	}
	joins, err := joinSizes(cfg.ScaleJoin, sizes)
	if err != nil {
		return err
	}
	var rows []ScaleRow
	for _, n := range sizes {
		set, err := ensureScaleSet(ctx, cfg, root, n, box, logf)
		if err != nil {
			return fmt.Errorf("%s dataset: %w", sizeName(n), err)
		}
		row := ScaleRow{Size: set.n, Observations: set.man.Observations, Largest: set.man.LargestObs, Import: set.man.Import, ImportCached: true}
		if !cfg.ScaleJoinOnly {
			if row, err = measureScale(ctx, cfg, set, box, logf); err != nil {
				return fmt.Errorf("%s: %w", sizeName(n), err)
			}
		}
		if joins[n] || cfg.ScaleJoinOnly {
			// After measureScale: a binary that migrates the schema has migrated the cache.
			if row.Join, err = measureJoin(ctx, cfg, set, box, logf); err != nil {
				return fmt.Errorf("%s join: %w", sizeName(n), err)
			}
		}
		rows = append(rows, row)
		// After each size: a 1M run that fails still leaves 10k and 100k printed.
		if cfg.ScaleJoinOnly {
			writeJoinLine(out, row)
		} else {
			writeScaleTable(out, rows)
		}
	}
	return nil
}

// ensureScaleSet generates and imports the dataset of n observations unless the cache has it.
func ensureScaleSet(ctx context.Context, cfg config, root string, n int, box *pidBox, logf func(string, ...any)) (scaleSet, error) {
	set := scaleSet{n: n, dir: filepath.Join(root, sizeName(n))}
	set.export = filepath.Join(set.dir, "export.jsonl.gz")
	set.dataDir = filepath.Join(set.dir, "data")
	if b, err := os.ReadFile(set.manifestPath()); err == nil && json.Unmarshal(b, &set.man) == nil &&
		set.man.Version == scaleGenVersion && set.man.Import != nil && dirExists(set.dataDir) {
		logf("%s: cached in %s", sizeName(n), set.dir)
		return set, nil
	}
	if err := os.MkdirAll(set.dir, 0o700); err != nil {
		return set, err
	}
	if !fileExists(set.export) || set.man.Version != scaleGenVersion {
		logf("%s: generating %d observations into %s", sizeName(n), n, set.export)
		man, err := writeScaleExport(set.export, n, func(done int) {
			if done%max(1, n/10) < max(1, n/100) {
				logf("%s: generated %d of %d observations", sizeName(n), done, n)
			}
		})
		if err != nil {
			return set, err
		}
		set.man = man
		if err := writeManifest(set); err != nil {
			return set, err
		}
	}
	logf("%s: importing %s with `memnode import` into a fresh data dir (at 1M this takes minutes)", sizeName(n), set.export)
	building := set.dataDir + ".building"
	os.RemoveAll(building)
	os.RemoveAll(set.dataDir)
	imp, err := scaleImportInto(ctx, cfg, set, building, box, logf)
	if err != nil {
		return set, err
	}
	if err := os.Rename(building, set.dataDir); err != nil {
		return set, err
	}
	set.man.Import = imp
	return set, writeManifest(set)
}

func writeManifest(set scaleSet) error {
	b, err := json.MarshalIndent(set.man, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(set.manifestPath(), b, 0o600)
}

// writeScaleExport generates the dataset into path (gzip, fast level), via a temp file.
func writeScaleExport(path string, n int, progress func(int)) (scaleManifest, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".export-*")
	if err != nil {
		return scaleManifest{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	z, _ := gzip.NewWriterLevel(bw, gzip.BestSpeed)
	w := importer.NewWriter(z)
	man, err := genDataset(w, n, scaleSeed, progress)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = z.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Close()
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	return man, err
}

// scaleImportInto starts a node on an empty data dir, runs `memnode import` of the dataset
// (its progress bar on our stderr), and stops the node: the import's rate and the bytes the
// node wrote to disk meanwhile and while it stopped.
func scaleImportInto(ctx context.Context, cfg config, set scaleSet, dataDir string, box *pidBox, logf func(string, ...any)) (*scaleImport, error) {
	h, err := newScaleHarness(cfg, dataDir, box)
	if err != nil {
		return nil, err
	}
	defer h.close()
	if err := h.start(ctx); err != nil {
		return nil, err
	}
	w0 := procWriteBytes(h.pid)
	t0 := time.Now()
	c := h.cmd(ctx, h.root, "import", set.export)
	c.Stdout, c.Stderr = cfg.Log, cfg.Log
	if c.Stdout == nil {
		c.Stdout, c.Stderr = io.Discard, io.Discard
	}
	if err := c.Run(); err != nil {
		return nil, fmt.Errorf("memnode import: %w", err)
	}
	took := time.Since(t0)
	// Counted up to the node's exit: its Close checkpoints what the import left in the WAL
	// (up to 2 GiB, replica's importCheckpoint), and those writes are the import's too.
	// The watch begins before the stop: `memnode stop` returns once the node is gone, and
	// a process that is not our child leaves no count to read after it.
	exited := watchWrites(h.pid, time.Minute)
	if _, err := h.memnode(ctx, nil, h.root, "stop"); err != nil {
		return nil, err
	}
	w1 := exited()
	if w1 < w0 {
		return nil, fmt.Errorf("the node's bytes written were not read up to its exit (%d at the start, %d at the end)", w0, w1)
	}
	h.pid = 0
	imp := &scaleImport{Records: set.man.Records, Seconds: took.Seconds(), WriteBytes: w1 - w0,
		DBBytes: dbBytes(dataDir), Load: loadAvg(), MeasuredUTC: time.Now().UTC().Format(time.RFC3339)}
	logf("%s: imported %d records in %.1f s (%.0f/s), node wrote %s, DB %s",
		sizeName(set.n), imp.Records, imp.Seconds, float64(imp.Records)/imp.Seconds, mibOf(imp.WriteBytes), mibOf(imp.DBBytes))
	return imp, nil
}

// newScaleHarness is a harness on the given data dir (kept: the caller owns it; empty: one
// in the harness's temp root) with a temp root for home and projects.
func newScaleHarness(cfg config, dataDir string, box *pidBox) (*harness, error) {
	cfg.Keep = false
	h, err := newHarness(cfg, box)
	if err != nil {
		return nil, err
	}
	if dataDir == "" {
		dataDir = filepath.Join(h.root, "data")
	}
	h.dataDir = dataDir
	for i, kv := range h.env {
		if strings.HasPrefix(kv, "MEMNODE_DATA_DIR=") {
			h.env[i] = "MEMNODE_DATA_DIR=" + dataDir
		}
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		os.RemoveAll(h.root)
		return nil, err
	}
	return h, nil
}

// start runs `memnode start` (it returns when the node is ready), connects and checks that
// the node serves our data dir.
func (h *harness) start(ctx context.Context) error {
	if _, err := h.memnode(ctx, nil, h.root, "start"); err != nil {
		return fmt.Errorf("start node: %w", err)
	}
	if err := h.connect(); err != nil {
		return err
	}
	st, err := h.health(ctx)
	if err != nil {
		return err
	}
	h.pid = st.PID
	h.box.set(st.PID)
	return nil
}

// stopNode stops the node (the harness stays usable for another start).
func (h *harness) stopNode(ctx context.Context) error {
	if _, err := h.memnode(ctx, nil, h.root, "stop"); err != nil {
		return err
	}
	if !waitGone(h.pid, time.Minute) {
		return fmt.Errorf("node pid %d did not stop", h.pid)
	}
	h.pid = 0
	h.box.set(0)
	if h.hc != nil {
		h.hc.CloseIdleConnections()
	}
	return nil
}

// measureScale copies the cached data dir and measures every figure on the copy.
func measureScale(ctx context.Context, cfg config, set scaleSet, box *pidBox, logf func(string, ...any)) (ScaleRow, error) {
	row := ScaleRow{Size: set.n, Observations: set.man.Observations, Largest: set.man.LargestObs, Import: set.man.Import, ImportCached: true}
	h, err := newScaleHarness(cfg, "", box)
	if err != nil {
		return row, err
	}
	defer h.close()
	os.RemoveAll(h.dataDir) // cp makes it
	logf("%s: copying the cached data dir to %s", sizeName(set.n), h.dataDir)
	if out, err := exec.CommandContext(ctx, "cp", "-a", "--reflink=auto", set.dataDir, h.dataDir).CombinedOutput(); err != nil {
		return row, fmt.Errorf("copy data dir: %w: %s", err, out)
	}
	// The copy's gigabytes sit dirty in the page cache for up to 30 s: the first fsync of
	// memnode.db would write them back (the first forget after the start-up check took
	// 560-700 ms at 1M), an artifact of this set-up, not of memnode. Flushed here, they stay
	// cached.
	t0 := time.Now()
	syscall.Sync()
	logf("%s: copy flushed to disk in %.1f s", sizeName(set.n), time.Since(t0).Seconds())
	// start → ready: the first start after the copy, then a warm one (the OS cache holds the files).
	logAt := fileSize(datadir.Dir(h.dataDir).NodeLog())
	t0 = time.Now()
	if err := h.start(ctx); err != nil {
		return row, err
	}
	row.StartColdMs = ms(time.Since(t0))
	if err := h.stopNode(ctx); err != nil {
		return row, err
	}
	row.DBBytes = dbBytes(h.dataDir) // after the binary's migrations, if it had any
	// A binary with newer migrations migrated the copy on that start (minutes at 1M when a
	// migration rebuilds an index): the cache takes the migrated data dir, so the next run
	// does not pay it again.
	if logSays(datadir.Dir(h.dataDir).NodeLog(), logAt, `msg="schema migrated"`) {
		logf("%s: the first start migrated the schema (%.0f s): the cache keeps the migrated data dir", sizeName(set.n), row.StartColdMs/1000)
		if err := replaceDir(ctx, h.dataDir, set.dataDir); err != nil {
			return row, err
		}
	}
	startAt := fileSize(datadir.Dir(h.dataDir).NodeLog())
	t0 = time.Now()
	if err := h.start(ctx); err != nil {
		return row, err
	}
	row.StartMs = ms(time.Since(t0))
	logf("%s: start → ready %.0f ms (first after copy %.0f ms)", sizeName(set.n), row.StartMs, row.StartColdMs)

	runs := min(cfg.HookRuns, 50)
	prj := filepath.Join(h.root, "projects", set.man.Largest)
	if err := os.MkdirAll(filepath.Join(prj, ".git"), 0o700); err != nil {
		return row, err
	}
	pl, err := loadPayloads(cfg.Fixture, prj)
	if err != nil {
		return row, err
	}
	h.cfg.HookRuns, h.cfg.Warmup = runs, min(cfg.Warmup, 5)
	logf("%s: SessionStart context hook in %s (%d observations): %d runs", sizeName(set.n), set.man.Largest, set.man.LargestObs, runs)
	if row.ContextHook, err = h.timeHook(ctx, "claude-code", "context", prj, pl.context, true); err != nil {
		return row, err
	}
	q := url.QueryEscape(set.man.Query)
	for _, m := range []struct {
		name string
		path string
		dst  *Stats
	}{
		{"timeline", "/api/timeline?anchor=" + set.man.Anchor + "&project=" + set.man.Largest, &row.Timeline},
		{"project search", "/api/search?query=" + q + "&project=" + set.man.Largest, &row.SearchProj},
		{"search", "/api/search?query=" + q, &row.Search},
		{"status", "/api/status", &row.Status},
	} {
		logf("%s: %s: %d requests", sizeName(set.n), m.name, runs)
		if *m.dst, err = h.timeGET(ctx, m.path, runs); err != nil {
			return row, err
		}
	}
	row.CheckRunning = !logSays(datadir.Dir(h.dataDir).NodeLog(), startAt, checkPassed)
	logf("%s: forget %d records one by one while PostToolUse hooks run (start-up check running: %v)", sizeName(set.n), len(set.man.Forget), row.CheckRunning)
	if row.Forget, row.HookInForget, row.HookMissed, err = h.forgetUnderHooks(ctx, set.man.Forget, prj, pl); err != nil {
		return row, err
	}
	logf("%s: waiting for the start-up integrity check to pass", sizeName(set.n))
	if err := waitUntil(ctx, 5*time.Minute, "the node's log to say "+checkPassed, func() (bool, error) {
		return logSays(datadir.Dir(h.dataDir).NodeLog(), startAt, checkPassed), nil
	}); err != nil {
		return row, err
	}
	ids, err := h.settledForgetIDs(ctx, set.man)
	if err != nil {
		return row, err
	}
	logf("%s: forget %d more records one by one while PostToolUse hooks run (check passed)", sizeName(set.n), len(ids))
	if row.ForgetSettled, row.HookInForgetSettled, row.HookMissedSettled, err = h.forgetUnderHooks(ctx, ids, prj, pl); err != nil {
		return row, err
	}
	logf("%s: SessionStart hook with the node stopped (the hook starts it)", sizeName(set.n))
	if err := h.stopNode(ctx); err != nil {
		return row, err
	}
	if row.ColdHookMs, row.ColdHookContext, err = h.coldContextHook(ctx, prj, pl); err != nil {
		return row, err
	}
	row.Load = loadAvg()
	if cfg.Reimport {
		if err := h.stopNode(ctx); err != nil {
			return row, err
		}
		logf("%s: -reimport: importing again into an empty data dir", sizeName(set.n))
		dir, err := os.MkdirTemp("", "memnode-bench-import-")
		if err != nil {
			return row, err
		}
		defer os.RemoveAll(dir)
		if row.Import, err = scaleImportInto(ctx, cfg, set, filepath.Join(dir, "data"), box, logf); err != nil {
			return row, err
		}
		row.ImportCached = false
	}
	return row, nil
}

// coldContextHook runs one SessionStart hook with the node stopped and adopts the node it
// starts (so close stops it).
func (h *harness) coldContextHook(ctx context.Context, prj string, pl *payloads) (float64, bool, error) {
	c := h.cmd(ctx, prj, "hook", "claude-code", "context")
	if lean := filepath.Join(filepath.Dir(h.bin), "memnode-hook"); fileExists(lean) {
		c.Path, c.Args[0] = lean, lean
	}
	c.Stdin = strings.NewReader(string(pl.context(0)))
	t := time.Now()
	out, err := c.Output()
	took := ms(time.Since(t))
	if err != nil {
		return took, false, fmt.Errorf("SessionStart hook with the node stopped: %w", err)
	}
	// The hook started the node (or left it starting): wait for it, so it is stopped at the end.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		st, err := h.health(ctx)
		if err == nil {
			h.pid = st.PID
			h.box.set(st.PID)
			break
		}
		if time.Now().After(deadline) {
			return took, false, fmt.Errorf("the node the hook started is not ready after 5 min: %w", err)
		}
		if err := pause(ctx, 100*time.Millisecond); err != nil {
			return took, false, err
		}
	}
	return took, strings.Contains(string(out), "<memnode-context>"), nil
}

// timeGET times n sequential GETs of path (after a short warm-up).
func (h *harness) timeGET(ctx context.Context, path string, n int) (Stats, error) {
	d := make([]time.Duration, 0, n)
	for i := range h.cfg.Warmup + n {
		t := time.Now()
		if _, err := h.do(ctx, http.MethodGet, path, nil); err != nil {
			return Stats{}, err
		}
		if i >= h.cfg.Warmup {
			d = append(d, time.Since(t))
		}
	}
	return statsOf(d), nil
}

// checkPassed is the node's log line once its background integrity check after a start
// has read the whole file (node/startphase.go).
const checkPassed = `msg="integrity check passed"`

// settledForgets is how many records the settled forget series forgets: at ~20 ms a forget
// at 1M, hooks of ~5 ms run about 150 times meanwhile.
const settledForgets = 40

// settledForgetIDs picks the settled series' records: the oldest observations of the
// largest project, neither the timeline's anchor nor one the first series forgot.
func (h *harness) settledForgetIDs(ctx context.Context, man scaleManifest) ([]string, error) {
	b, err := h.do(ctx, http.MethodGet, "/api/search?type=observations&order=oldest&limit=200&project="+url.QueryEscape(man.Largest), nil)
	if err != nil {
		return nil, err
	}
	var res struct {
		Hits []struct{ ID string }
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("settled forgets: %w", err)
	}
	var ids []string
	for _, hit := range res.Hits {
		if hit.ID != man.Anchor && !slices.Contains(man.Forget, hit.ID) && len(ids) < settledForgets {
			ids = append(ids, hit.ID)
		}
	}
	if len(ids) < settledForgets {
		return nil, fmt.Errorf("settled forgets: %d observations of %s to forget, want %d", len(ids), man.Largest, settledForgets)
	}
	return ids, nil
}

// forgetUnderHooks forgets ids one by one (POST /api/forget) while PostToolUse hooks run
// back to back in the project: the forgets' latencies, and those of the hooks that ran while
// a forget was in flight (at least a few more after the last, so a fast forget still has a
// series).
func (h *harness) forgetUnderHooks(ctx context.Context, ids []string, prj string, pl *payloads) (Stats, Stats, int, error) {
	var (
		mu      sync.Mutex
		forgets []time.Duration
		ferr    error
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		for _, id := range ids {
			t := time.Now()
			b, err := h.do(ctx, http.MethodPost, "/api/forget", mustJSON(map[string][]string{"ids": {id}}))
			took := time.Since(t)
			var rep struct{ Found int }
			if err == nil {
				err = json.Unmarshal(b, &rep)
			}
			if err == nil && rep.Found != 1 {
				err = fmt.Errorf("forget %s: found %d, want 1: %s", id, rep.Found, b)
			}
			mu.Lock()
			forgets = append(forgets, took)
			if err != nil && ferr == nil {
				ferr = err
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	var hooks []time.Duration
	after, missed := 0, 0
	for i := 0; after < 5; i++ {
		select {
		case <-done:
			after++
		default:
		}
		c := h.cmd(ctx, prj, "hook", "claude-code", "observation")
		if lean := filepath.Join(filepath.Dir(h.bin), "memnode-hook"); fileExists(lean) {
			c.Path, c.Args[0] = lean, lean
		}
		c.Stdin = strings.NewReader(string(pl.observation(100000 + i)))
		t := time.Now()
		err := c.Run()
		hooks = append(hooks, time.Since(t))
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			// The hook gave up on the node (its event is spooled; after 3 in a row it exits
			// 2 to tell the agent): what a user sees, counted, not a failed run.
			missed++
		case err != nil:
			<-done
			return Stats{}, Stats{}, 0, fmt.Errorf("PostToolUse hook during forget: %w", err)
		}
	}
	<-done
	mu.Lock()
	defer mu.Unlock()
	return statsOf(forgets), statsOf(hooks), missed, ferr
}

// procWriteBytes is /proc/<pid>/io's write_bytes: what the process caused to be written to
// the storage layer (page cache write-back included); 0 when unreadable.
func procWriteBytes(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "write_bytes:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// watchWrites reads pid's write_bytes now and then polls it until the process is gone (or
// timeout, writesUntilGone); the function it returns waits for the last count read.
func watchWrites(pid int, timeout time.Duration) func() int64 {
	first := procWriteBytes(pid)
	done := make(chan int64, 1)
	go func() { done <- max(first, writesUntilGone(pid, timeout)) }()
	return func() int64 { return <-done }
}

// writesUntilGone polls pid's write_bytes until the process is gone (or timeout) and
// returns the last it read: the final read after the process ended finds a zombie's count
// complete; a process no longer there (not our child, already reaped) gives the read before,
// at most a millisecond earlier.
func writesUntilGone(pid int, timeout time.Duration) int64 {
	var last int64
	deadline := time.Now().Add(timeout)
	for {
		if n := procWriteBytes(pid); n > 0 {
			last = n
		}
		if !alive(pid) {
			if n := procWriteBytes(pid); n > 0 {
				last = n
			}
			return last
		}
		if time.Now().After(deadline) {
			return last
		}
		time.Sleep(time.Millisecond) // polling a process that is not our child
	}
}

// dbBytes is the replica database's size on disk: memnode.db and its WAL.
func dbBytes(dataDir string) int64 {
	var n int64
	db := datadir.Dir(dataDir).DB()
	for _, p := range []string{db, db + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// replaceDir puts a copy of src in place of dst (a copy beside it, then two renames).
func replaceDir(ctx context.Context, src, dst string) error {
	next, old := dst+".new", dst+".old"
	os.RemoveAll(next)
	os.RemoveAll(old)
	if out, err := exec.CommandContext(ctx, "cp", "-a", "--reflink=auto", src, next).CombinedOutput(); err != nil {
		return fmt.Errorf("copy the migrated data dir into the cache: %w: %s", err, out)
	}
	if err := os.Rename(dst, old); err != nil {
		return err
	}
	if err := os.Rename(next, dst); err != nil {
		return err
	}
	return os.RemoveAll(old)
}

// logSays reports whether the file holds s after offset.
func logSays(path string, offset int64, s string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return false
	}
	b, _ := io.ReadAll(f)
	return strings.Contains(string(b), s)
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func mibOf(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// writeScaleTable prints one row per figure, one column per size, then the growth from
// each size to the next: a path that is O(n) shows ×10 per ×10 of data.
func writeScaleTable(w io.Writer, rows []ScaleRow) {
	fmt.Fprintf(w, "\n== memnode at scale (make bench-scale; dataset generator v%d, seed %d)\n", scaleGenVersion, scaleSeed)
	head := []string{"figure"}
	for i, r := range rows {
		head = append(head, sizeName(r.Size))
		if i > 0 {
			head = append(head, fmt.Sprintf("×%s→%s", sizeName(rows[i-1].Size), sizeName(r.Size)))
		}
	}
	var lines [][]string
	add := func(name string, f func(r ScaleRow) float64, format string) {
		l := []string{name}
		for i, r := range rows {
			l = append(l, fmt.Sprintf(format, f(r)))
			if i > 0 {
				if prev := f(rows[i-1]); prev > 0 {
					l = append(l, fmt.Sprintf("×%.1f", f(r)/prev))
				} else {
					l = append(l, "-")
				}
			}
		}
		lines = append(lines, l)
	}
	add("largest project (observations)", func(r ScaleRow) float64 { return float64(r.Largest) }, "%.0f")
	add("start → ready, warm (ms)", func(r ScaleRow) float64 { return r.StartMs }, "%.0f")
	add("start → ready, first after copy (ms)", func(r ScaleRow) float64 { return r.StartColdMs }, "%.0f")
	add("SessionStart context hook p50, largest project (ms)", func(r ScaleRow) float64 { return r.ContextHook.P50 }, "%.1f")
	add("timeline p50 (ms)", func(r ScaleRow) float64 { return r.Timeline.P50 }, "%.1f")
	add("search with project filter p50 (ms)", func(r ScaleRow) float64 { return r.SearchProj.P50 }, "%.1f")
	add("search p50 (ms)", func(r ScaleRow) float64 { return r.Search.P50 }, "%.1f")
	add("/api/status p50 (ms)", func(r ScaleRow) float64 { return r.Status.P50 }, "%.1f")
	add("forget one record p50 (ms)", func(r ScaleRow) float64 { return r.Forget.P50 }, "%.0f")
	add("forget one record max (ms)", func(r ScaleRow) float64 { return r.Forget.Max }, "%.0f")
	add("PostToolUse hook p99 during forgets (ms)", func(r ScaleRow) float64 { return r.HookInForget.P99 }, "%.1f")
	add("  ... hooks in that series", func(r ScaleRow) float64 { return float64(r.HookInForget.N) }, "%.0f")
	add("  ... hooks that gave up on the node", func(r ScaleRow) float64 { return float64(r.HookMissed) }, "%.0f")
	add("  ... start-up integrity check still running (1 = yes)", func(r ScaleRow) float64 {
		if r.CheckRunning {
			return 1
		}
		return 0
	}, "%.0f")
	add("check passed: forget one record p50 (ms)", func(r ScaleRow) float64 { return r.ForgetSettled.P50 }, "%.0f")
	add("check passed: forget one record max (ms)", func(r ScaleRow) float64 { return r.ForgetSettled.Max }, "%.0f")
	add("check passed: PostToolUse hook p99 during forgets (ms)", func(r ScaleRow) float64 { return r.HookInForgetSettled.P99 }, "%.1f")
	add("  ... hooks in that series", func(r ScaleRow) float64 { return float64(r.HookInForgetSettled.N) }, "%.0f")
	add("  ... hooks that gave up on the node", func(r ScaleRow) float64 { return float64(r.HookMissedSettled) }, "%.0f")
	add("SessionStart hook, node stopped: hook starts it (ms)", func(r ScaleRow) float64 { return r.ColdHookMs }, "%.0f")
	add("  ... and it injected the context (1 = yes)", func(r ScaleRow) float64 {
		if r.ColdHookContext {
			return 1
		}
		return 0
	}, "%.0f")
	add("import (records/s)", func(r ScaleRow) float64 { return float64(r.Import.Records) / r.Import.Seconds }, "%.0f")
	add("import: bytes written to disk (MiB)", func(r ScaleRow) float64 { return float64(r.Import.WriteBytes) / (1 << 20) }, "%.0f")
	add("import: DB size after (MiB)", func(r ScaleRow) float64 { return float64(r.Import.DBBytes) / (1 << 20) }, "%.0f")
	add("import: written ÷ DB size", func(r ScaleRow) float64 { return float64(r.Import.WriteBytes) / float64(max(1, r.Import.DBBytes)) }, "%.1f")
	add("import: DB bytes per observation", func(r ScaleRow) float64 { return float64(r.Import.DBBytes) / float64(max(1, r.Observations)) }, "%.0f")
	add("DB bytes per observation", func(r ScaleRow) float64 { return float64(r.DBBytes) / float64(max(1, r.Observations)) }, "%.0f")
	add("new device joins, cut once (records/s)", func(r ScaleRow) float64 { return r.Join.rate() }, "%.0f")
	add("  ... wall time, kill -9 and restart included (s)", func(r ScaleRow) float64 {
		if r.Join == nil {
			return 0
		}
		return r.Join.Seconds
	}, "%.1f")
	add("  ... exports equal (1 = yes)", func(r ScaleRow) float64 {
		if r.Join == nil || !r.Join.ExportsEqual {
			return 0
		}
		return 1
	}, "%.0f")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, l := range lines {
		fmt.Fprintln(tw, strings.Join(l, "\t"))
	}
	tw.Flush()
	for _, r := range rows {
		src := "this run"
		if r.ImportCached {
			src = "when the cache was built, " + r.Import.MeasuredUTC
		}
		fmt.Fprintf(w, "%s: load %s after its figures; import measured %s (load %s then); %d forgets, %d hooks during them (%d gave up)\n",
			sizeName(r.Size), r.Load, src, r.Import.Load, r.Forget.N, r.HookInForget.N, r.HookMissed)
		writeJoinLine(w, r)
	}
}
