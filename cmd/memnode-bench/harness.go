package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/internal/localnet"
)

// harness owns one node under test: a temp data dir, a free loopback port and the process
// that `memnode start` leaves running.
type harness struct {
	cfg     config
	bin     string // absolute path of the binary
	root    string // temp dir holding everything below
	dataDir string
	home    string
	hookPrj string // git project the hook measurements run in
	ctxPrj  string // git project the context measurements run in
	port    int
	env     []string
	c       *client.Client // the node's API, made once the node has written its token
	hc      *http.Client   // c's connections
	pid     int
	box     *pidBox
}

// pidBox hands the node's pid to main's last-resort watchdog.
type pidBox struct{ v atomic.Int64 }

func (p *pidBox) set(pid int) { p.v.Store(int64(pid)) }
func (p *pidBox) get() int    { return int(p.v.Load()) }

func (h *harness) logf(format string, a ...any) {
	if h.cfg.Log != nil {
		fmt.Fprintf(h.cfg.Log, "[memnode-bench %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
	}
}

func newHarness(cfg config, box *pidBox) (*harness, error) {
	bin, err := filepath.Abs(cfg.Bin)
	if err != nil {
		return nil, fmt.Errorf("resolve -bin: %w", err)
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		return nil, fmt.Errorf("memnode binary %s not found (build it: go build -tags sqlite_fts5 -o bin/memnode ./cmd/memnode)", bin)
	}
	root, err := os.MkdirTemp("", "memnode-bench-")
	if err != nil {
		return nil, fmt.Errorf("create temp dir: %w", err)
	}
	h := &harness{cfg: cfg, bin: bin, root: root, box: box,
		dataDir: filepath.Join(root, "data"), home: filepath.Join(root, "home"),
		hookPrj: filepath.Join(root, "projects", "hookproj"), ctxPrj: filepath.Join(root, "projects", "ctxproj")}
	for _, d := range []string{h.dataDir, h.home, filepath.Join(h.hookPrj, ".git"), filepath.Join(h.ctxPrj, ".git")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			os.RemoveAll(root)
			return nil, fmt.Errorf("create %s: %w", d, err)
		}
	}
	if cfg.Settings != "" {
		b, err := os.ReadFile(cfg.Settings)
		if err == nil {
			err = os.WriteFile(datadir.Dir(h.dataDir).Settings(), b, 0o600)
		}
		if err != nil {
			os.RemoveAll(root)
			return nil, fmt.Errorf("settings: %w", err)
		}
	}
	if h.port, err = freePort(); err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MEMNODE_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "GODEBUG=") {
			h.env = append(h.env, kv)
		}
	}
	h.env = append(h.env, "MEMNODE_DATA_DIR="+h.dataDir, "MEMNODE_PORT="+strconv.Itoa(h.port), "HOME="+h.home)
	return h, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// run measures everything, always stops the node it started, and then runs or reads the
// claude-mem anchor if asked to.
func run(ctx context.Context, cfg config, box *pidBox) (*Results, error) {
	if box == nil {
		box = &pidBox{}
	}
	h, err := newHarness(cfg, box)
	if err != nil {
		return nil, err
	}
	res := &Results{Meta: meta(cfg, h)}
	err = h.measure(ctx, res)
	if cerr := h.close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	res.Meta.LoadEnd = loadAvg()
	if err != nil {
		return res, err
	}
	switch {
	case cfg.AnchorTSV != "":
		res.Anchor = readAnchorTSV(cfg.AnchorTSV)
	case cfg.Anchor != "":
		res.Anchor = runAnchor(ctx, cfg, h.logf)
	}
	return res, nil
}

// measure runs the phases in an order that keeps each figure clean: memory before any
// load, hooks on an almost empty database, the 10k context project before the bulk ingest.
func (h *harness) measure(ctx context.Context, res *Results) error {
	cfg := h.cfg
	h.logf("data dir %s, port %d, binary %s", h.dataDir, h.port, h.bin)
	if out, err := h.memnode(ctx, nil, h.root, "version"); err == nil {
		res.Meta.Version = strings.TrimSpace(out)
	}

	t0 := time.Now()
	if err := h.start(ctx); err != nil {
		return err
	}
	res.StartMs = ms(time.Since(t0))
	res.NodePID = h.pid
	h.logf("node pid %d ready after %.1f ms", h.pid, res.StartMs)

	if err := pause(ctx, cfg.Settle); err != nil {
		return err
	}
	var err error
	if res.RSS.Idle, err = procMem(h.pid); err != nil {
		return err
	}
	if cfg.IdleLong > 0 {
		h.logf("idle: reading RSS again %s after start", cfg.IdleLong)
		if err := pause(ctx, cfg.IdleLong-time.Since(t0)); err != nil {
			return err
		}
		res.IdleLongS = time.Since(t0).Seconds()
		if res.RSS.IdleLong, err = procMem(h.pid); err != nil {
			return err
		}
	}
	// What a person feels after the node sat idle: the first request's latency (the
	// session-start context of an empty project, through the whole stack).
	t1 := time.Now()
	if _, err := h.do(ctx, http.MethodGet, "/api/context?project=bench-idle", nil); err != nil {
		return fmt.Errorf("first request after idle: %w", err)
	}
	res.FirstAfterIdleMs = float64(time.Since(t1).Microseconds()) / 1000

	h.logf("process floor: /bin/true and memnode version, %d runs each", cfg.HookRuns)
	if res.Floor.True, err = timeRuns(ctx, cfg.Warmup, cfg.HookRuns, func(int) *exec.Cmd {
		return exec.CommandContext(ctx, "/bin/true")
	}, nil); err != nil {
		return fmt.Errorf("/bin/true: %w", err)
	}
	if res.Floor.Version, err = timeRuns(ctx, cfg.Warmup, cfg.HookRuns, func(int) *exec.Cmd {
		return h.cmd(ctx, h.root, "version")
	}, nil); err != nil {
		return fmt.Errorf("memnode version: %w", err)
	}

	pl, err := loadPayloads(cfg.Fixture, h.hookPrj)
	if err != nil {
		return err
	}
	res.PayloadSource = pl.source
	for _, hk := range []struct {
		event string
		dst   *Stats
		mk    func(i int) []byte
	}{
		{"observation", &res.Hooks.Observation, pl.observation},
		{"session-init", &res.Hooks.SessionInit, pl.sessionInit},
		{"context", &res.Hooks.Context, pl.context},
	} {
		h.logf("hook %s: %d warm-up + %d timed runs", hk.event, cfg.Warmup, cfg.HookRuns)
		if *hk.dst, err = h.timeHook(ctx, "claude-code", hk.event, h.hookPrj, hk.mk, false); err != nil {
			return err
		}
	}
	if !cfg.NoPlatforms {
		if res.Hooks.PerPlatform, err = h.timePlatformHooks(ctx); err != nil {
			return err
		}
	}

	ctxName := filepath.Base(h.ctxPrj)
	h.logf("context project: ingest %d observation events (conc %d) and drain", cfg.ContextObs, cfg.Conc)
	if res.ContextIngest, err = h.ingest(ctx, ctxName, h.ctxPrj, cfg.ContextObs); err != nil {
		return err
	}
	h.logf("GET /api/context?project=%s: %d timed requests", ctxName, cfg.ContextRuns)
	if res.Context, res.ContextBytes, err = h.timeContext(ctx, ctxName, cfg.ContextRuns); err != nil {
		return err
	}
	h.logf("GET /api/search in project %s: %d timed requests", ctxName, cfg.ContextRuns)
	if res.Search, err = h.timeSearch(ctx, ctxName, cfg.ContextRuns); err != nil {
		return err
	}
	// The same queries as a user types them: `memnode search` is a process start, the
	// settings and token read, a connection and the same request (issue 30: within 2× of
	// the HTTP figure above).
	h.logf("memnode search in project %s: %d timed runs", ctxName, cfg.HookRuns)
	if res.SearchCLI, err = timeRuns(ctx, cfg.Warmup, cfg.HookRuns, func(i int) *exec.Cmd {
		return h.cmd(ctx, h.root, "search", searchTerms[i%len(searchTerms)], "--project", ctxName, "--limit", "20")
	}, func(_ int, out []byte) error {
		if len(out) == 0 {
			return errors.New("memnode search printed no hits")
		}
		return nil
	}); err != nil {
		return fmt.Errorf("memnode search: %w", err)
	}
	ctxPl, err := loadPayloads(cfg.Fixture, h.ctxPrj)
	if err != nil {
		return err
	}
	h.logf("hook context with %d observations: %d timed runs", res.ContextIngest.Observations, cfg.HookRuns)
	if res.Hooks.Context10k, err = h.timeHook(ctx, "claude-code", "context", h.ctxPrj, ctxPl.context, true); err != nil {
		return err
	}
	if err := pause(ctx, cfg.Settle); err != nil {
		return err
	}
	if res.RSS.AfterContext, err = procMem(h.pid); err != nil {
		return err
	}

	h.logf("ingest: %d observation events over %d keep-alive clients, then drain", cfg.Events, cfg.Conc)
	if res.Ingest, err = h.ingest(ctx, "bench-ingest", filepath.Join(h.root, "projects", "bench-ingest"), cfg.Events); err != nil {
		return err
	}
	if err := pause(ctx, cfg.Settle); err != nil {
		return err
	}
	if res.RSS.AfterIngest, err = procMem(h.pid); err != nil {
		return err
	}
	st, err := h.status(ctx)
	if err != nil {
		return err
	}
	res.FinalObservations, res.WorkerFailures = st.Records.Observations, st.Queue.Failures
	if st.Queue.Failures > 0 {
		h.logf("WARNING: the node reports %d worker failures (see %s)", st.Queue.Failures, datadir.Dir(h.dataDir).Logs())
	}
	return nil
}

// close stops the node through the CLI, kills it if it does not go, and removes the temp dir.
func (h *harness) close() error {
	var errs []error
	if h.pid > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if _, err := h.memnode(ctx, nil, h.root, "stop"); err != nil {
			errs = append(errs, fmt.Errorf("memnode stop: %w", err))
		}
		cancel()
		if !waitGone(h.pid, 10*time.Second) {
			killIfOurs(h.pid, h.bin)
			errs = append(errs, fmt.Errorf("node pid %d did not stop; killed", h.pid))
		}
		h.box.set(0)
	}
	if h.hc != nil {
		h.hc.CloseIdleConnections()
	}
	if h.cfg.Keep {
		h.logf("kept %s", h.root)
	} else if err := os.RemoveAll(h.root); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// cmd is `memnode args...` in dir with the harness's environment.
func (h *harness) cmd(ctx context.Context, dir string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, h.bin, args...)
	c.Env, c.Dir = h.env, dir
	c.WaitDelay = 5 * time.Second
	return c
}

// memnode runs one CLI command to completion and returns its stdout.
func (h *harness) memnode(ctx context.Context, stdin []byte, dir string, args ...string) (string, error) {
	c := h.cmd(ctx, dir, args...)
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		return out.String(), fmt.Errorf("memnode %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// timeRuns runs mk(i) warm+n times and times the last n, fork to exit; check, if set,
// validates each run's stdout.
func timeRuns(ctx context.Context, warm, n int, mk func(i int) *exec.Cmd, check func(i int, out []byte) error) (Stats, error) {
	d := make([]time.Duration, 0, n)
	for i := range warm + n {
		if err := ctx.Err(); err != nil {
			return Stats{}, err
		}
		c := mk(i)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		t := time.Now()
		err := c.Run()
		took := time.Since(t)
		if err != nil {
			return Stats{}, fmt.Errorf("run %d: %w: %s", i, err, strings.TrimSpace(errb.String()))
		}
		if check != nil {
			if err := check(i, out.Bytes()); err != nil {
				return Stats{}, fmt.Errorf("run %d: %w", i, err)
			}
		}
		if i >= warm {
			d = append(d, took)
		}
	}
	return statsOf(d), nil
}

// timeHook times `memnode hook <platform> <event>` with the payload on a stdin pipe (as the
// agent passes it) in project dir, and checks that every run reached the node.
func (h *harness) timeHook(ctx context.Context, platform, event, dir string, payload func(i int) []byte, wantContext bool) (Stats, error) {
	n, warm := h.cfg.HookRuns, h.cfg.Warmup
	payloads := make([][]byte, warm+n)
	for i := range payloads {
		payloads[i] = payload(i)
	}
	before, err := h.status(ctx)
	if err != nil {
		return Stats{}, err
	}
	st, err := timeRuns(ctx, warm, n, func(i int) *exec.Cmd {
		c := h.cmd(ctx, dir, "hook", platform, event)
		// What `memnode install` puts in the IDE's settings: the lean memnode-hook beside
		// the binary when it exists.
		if lean := filepath.Join(filepath.Dir(h.bin), "memnode-hook"); fileExists(lean) {
			c.Path, c.Args[0] = lean, lean
		}
		c.Stdin = bytes.NewReader(payloads[i])
		return c
	}, func(_ int, out []byte) error {
		var o struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out, &o); err != nil {
			return fmt.Errorf("hook stdout is not one JSON object: %q", out)
		}
		if wantContext && !strings.Contains(o.HookSpecificOutput.AdditionalContext, "<memnode-context>") {
			return fmt.Errorf("context hook injected no context: %q", out)
		}
		return nil
	})
	if err != nil {
		return Stats{}, fmt.Errorf("hook %s %s: %w", platform, event, err)
	}
	after, err := h.status(ctx)
	if err != nil {
		return Stats{}, err
	}
	// Every hook of these three sends exactly one event; fewer means some were spooled
	// (the node was not reached) and the timing would not be of the real path.
	if got := after.Queue.Ingested - before.Queue.Ingested; got != int64(warm+n) {
		return Stats{}, fmt.Errorf("hook %s: node ingested %d events from %d hook runs (spooled? see %s)", event, got, warm+n, datadir.Dir(h.dataDir).HookLog())
	}
	return st, nil
}

// connect makes the harness's API client: the one client of the node API over the node's
// TCP port (the listener proves it holds the token before a request is sent), with one
// keep-alive connection per load-generating goroutine.
func (h *harness) connect() error {
	tok, err := datadir.Dir(h.dataDir).ReadToken()
	if err != nil {
		return err
	}
	d := localnet.NewDialer(h.dataDir, h.port, true)
	tr := d.Transport()
	if h.cfg.Unproven {
		// The A/B base predates the token proof: plain TCP to the port of the node this
		// harness just started on its own temp data dir (health checks the data dir).
		tr = &http.Transport{}
	}
	tr.MaxIdleConnsPerHost, tr.MaxConnsPerHost = h.cfg.Conc+2, h.cfg.Conc+2
	tr.DisableCompression = true
	h.hc = &http.Client{Transport: tr}
	h.c = client.NewWithConfig(client.Config{BaseURL: d.BaseURL(), Token: tok, HTTPClient: h.hc})
	return nil
}

// health is GET /api/status (with the token: /health names no data dir), checked to be
// our node.
func (h *harness) health(ctx context.Context) (apitype.Status, error) {
	st, err := h.status(ctx)
	if err != nil {
		return st, err
	}
	if st.DataDir != h.dataDir || st.PID <= 0 {
		return st, fmt.Errorf("the node on port %d serves %q (pid %d), not our data dir %s", h.port, st.DataDir, st.PID, h.dataDir)
	}
	return st, nil
}

func (h *harness) status(ctx context.Context) (apitype.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	b, err := h.c.Raw(ctx, http.MethodGet, "/api/status", nil, 1<<20)
	if err != nil {
		return apitype.Status{}, err
	}
	return decodeStatus(b)
}

// do sends one request and returns the body of a 2xx answer.
func (h *harness) do(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	b, err := h.c.Raw(ctx, method, path, body, 8<<20)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return b, nil
}

// timeContext times GET /api/context sequentially over one keep-alive connection.
func (h *harness) timeContext(ctx context.Context, project string, n int) (Stats, int, error) {
	path := "/api/context?project=" + project
	size := 0
	d := make([]time.Duration, 0, n)
	var cpu0 time.Duration
	for i := range h.cfg.Warmup + n {
		if i == h.cfg.Warmup {
			cpu0 = procCPU(h.pid)
		}
		t := time.Now()
		b, err := h.do(ctx, http.MethodGet, path, nil)
		took := time.Since(t)
		if err != nil {
			return Stats{}, 0, err
		}
		if !bytes.Contains(b, []byte("<memnode-context>")) {
			return Stats{}, 0, fmt.Errorf("GET %s: no context block in %d bytes", path, len(b))
		}
		size = len(b)
		if i >= h.cfg.Warmup {
			d = append(d, took)
		}
	}
	st := statsOf(d)
	st.NodeCPU = cpuPerReq(cpu0, procCPU(h.pid), n)
	return st, size, nil
}

// procCPU is the CPU time pid's threads have run so far: the sum of the first field of
// each /proc/<pid>/task/<tid>/schedstat (ns, unlike /proc/<pid>/stat's 10 ms ticks). A
// thread that exits takes its time with it (Go keeps its threads); 0 when unreadable.
func procCPU(pid int) time.Duration {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // the thread exited between the listing and the read
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err == nil {
			sum += time.Duration(ns)
		}
	}
	return sum
}

// cpuPerReq is the CPU time between two procCPU readings per request, in µs; 0 when a
// reading failed.
func cpuPerReq(before, after time.Duration, n int) float64 {
	if before <= 0 || after <= before || n <= 0 {
		return 0
	}
	return float64(after-before) / float64(time.Microsecond) / float64(n)
}

// mem is one reading of /proc/<pid>/status, in kB.
type mem struct {
	RSS  int `json:"rss_kb"`  // VmRSS
	Anon int `json:"anon_kb"` // RssAnon: heap, stacks, SQLite page cache
	File int `json:"file_kb"` // RssFile: mapped pages of the binary and libraries
	HWM  int `json:"hwm_kb"`  // VmHWM: peak RSS so far
	// Pss is the proportional set size (/proc/<pid>/smaps_rollup): shared pages count by
	// the share each process has, so it is what the node adds to the machine.
	Pss int `json:"pss_kb"`
}

// procMem reads the memory figures of pid.
func procMem(pid int) (mem, error) {
	var m mem
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m, fmt.Errorf("read node memory: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.Atoi(f[0])
		switch k {
		case "VmRSS":
			m.RSS = n
		case "RssAnon":
			m.Anon = n
		case "RssFile":
			m.File = n
		case "VmHWM":
			m.HWM = n
		}
	}
	if m.RSS == 0 {
		return m, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Pss:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					m.Pss, _ = strconv.Atoi(f[0])
				}
				break
			}
		}
	}
	return m, nil
}

// alive is false for a pid that is gone or a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil && runtime.GOOS != "linux"
	}
	// state is the field after "(comm)"; comm may contain spaces and parentheses.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

func waitGone(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for alive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond) // polling a process that is not our child
	}
	return true
}

// killIfOurs SIGKILLs pid only if it still runs the binary under test.
func killIfOurs(pid int, bin string) {
	if pid <= 0 || !alive(pid) {
		return
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil || filepath.Base(strings.TrimSuffix(exe, " (deleted)")) != filepath.Base(bin) {
		return
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

// pause waits d unless ctx ends first; it lets the node settle before a memory reading.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
