package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The join row of the scale benchmark (issue 29: "a second device joins a 1M-observation
// memory and holds all of it, with the link cut once midway and resumed"): two real memnode
// processes on loopback, A on a copy of the cached data dir and B on an empty one, paired with
// `memnode peers invite` / `peers join`. The clock starts at the join and stops when B holds
// every observation A holds and no snapshot install runs on B. Midway — once B reports half
// the snapshot's rows installed — B is killed with SIGKILL and started again: the cut. Then
// both export their memory (`memnode export`), which must be equal.

// scaleJoin is one join's figures.
type scaleJoin struct {
	Records      int     `json:"records"`      // sessions, prompts, observations, summaries B holds at the end
	Observations int     `json:"observations"` // observations B holds at the end (= A's)
	Seconds      float64 `json:"seconds"`      // join → B holds everything, the cut and restart included
	SnapshotRows int64   `json:"snapshot_rows"`
	CutAtRows    int64   `json:"cut_at_rows"`  // rows B had installed when it was killed
	ResumedRows  int64   `json:"resumed_rows"` // rows B reported after its restart, before installing more
	RestartMs    float64 `json:"restart_ms"`   // kill → B answers again (`memnode start`)
	// CPU seconds (user + system) of B's two processes and of A during the join: what the
	// install and the transfer cost, less sensitive to the machine's load than the wall time.
	CPUB         float64 `json:"cpu_b_s"`
	CPUA         float64 `json:"cpu_a_s"`
	ExportsEqual bool    `json:"exports_equal"`
	ExportBytes  int64   `json:"export_bytes"`
	LoadBefore   string  `json:"load_before"`
	LoadAfter    string  `json:"load_after"`
}

func (j *scaleJoin) rate() float64 {
	if j == nil || j.Seconds <= 0 {
		return 0
	}
	return float64(j.Records) / j.Seconds
}

// peersView is what the join reads of GET /api/peers (sync.Status; a view of its own so the
// benchmark does not link the sync stack).
type peersView struct {
	Devices []struct {
		PeerID   string `json:"peer_id"`
		Self     bool   `json:"self"`
		State    string `json:"state"`
		Ahead    uint64 `json:"ops_ahead"`
		Behind   uint64 `json:"ops_behind"`
		Compared bool   `json:"compared"`
	} `json:"devices"`
	Snapshot *struct {
		Rows  int64 `json:"rows"`
		Total int64 `json:"total"`
	} `json:"snapshot"`
}

func (h *harness) peers(ctx context.Context) (peersView, error) {
	var v peersView
	b, err := h.do(ctx, http.MethodGet, "/api/peers", nil)
	if err != nil {
		return v, err
	}
	return v, json.Unmarshal(b, &v)
}

// inStep reports whether every other device has announced its vector and neither side
// lacks an op of the other.
func (v peersView) inStep() bool {
	n := 0
	for _, d := range v.Devices {
		if d.Self {
			continue
		}
		if !d.Compared || d.Ahead != 0 || d.Behind != 0 {
			return false
		}
		n++
	}
	return n > 0
}

// withSync gives the harness's node device sync on loopback ports of its own.
func (h *harness) withSync(name string) error {
	sp, err := freePort()
	if err != nil {
		return err
	}
	gp, err := freePort()
	if err != nil {
		return err
	}
	h.env = append(h.env, "MEMNODE_SYNC_HOST=127.0.0.1", "MEMNODE_SYNC_PORT="+strconv.Itoa(sp),
		"MEMNODE_GOSSIP_PORT="+strconv.Itoa(gp), "MEMNODE_DEVICE_NAME="+name)
	return nil
}

// startSync starts the node and waits for its device sync to answer.
func (h *harness) startSync(ctx context.Context) error {
	if err := h.start(ctx); err != nil {
		return err
	}
	return waitUntil(ctx, time.Minute, "device sync to start", func() (bool, error) {
		_, err := h.peers(ctx)
		return err == nil, nil
	})
}

// waitUntil polls cond every 100 ms until it holds, fails or the timeout passes.
func waitUntil(ctx context.Context, timeout time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: not after %s", what, timeout)
		}
		if err := pause(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// measureJoin runs the join of a new device to a copy of set's data dir.
func measureJoin(ctx context.Context, cfg config, set scaleSet, box *pidBox, logf func(string, ...any)) (*scaleJoin, error) {
	a, err := newScaleHarness(cfg, "", box)
	if err != nil {
		return nil, err
	}
	defer a.close()
	var bbox pidBox // B's pid; A's is the one main's watchdog kills
	b, err := newScaleHarness(cfg, "", &bbox)
	if err != nil {
		return nil, err
	}
	defer b.close()
	if err := errors.Join(a.withSync("bench-a"), b.withSync("bench-b")); err != nil {
		return nil, err
	}
	os.RemoveAll(a.dataDir)
	if out, err := exec.CommandContext(ctx, "cp", "-a", "--reflink=auto", set.dataDir, a.dataDir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("copy data dir: %w: %s", err, out)
	}
	if err := a.startSync(ctx); err != nil {
		return nil, fmt.Errorf("export of A: %w", err)
	}
	ast, err := a.status(ctx)
	if err != nil {
		return nil, err
	}
	if err := b.startSync(ctx); err != nil {
		return nil, fmt.Errorf("export of B: %w", err)
	}
	// The invite's output holds the code: it is never printed.
	out, err := a.memnode(ctx, nil, a.root, "peers", "invite", "--ttl", "30m")
	if err != nil {
		return nil, fmt.Errorf("node A: %w", err)
	}
	code := ""
	if f := strings.Fields(out); len(f) > 0 {
		code = f[0]
	}
	if !strings.HasPrefix(code, "MN1") {
		return nil, errors.New("node A: peers invite printed no code")
	}
	j := &scaleJoin{LoadBefore: loadAvg()}
	logf("%s: B joins A (%d observations); B is killed at half the snapshot's rows and started again", sizeName(set.n), ast.Records.Observations)
	cpuA0, cpuB0 := procStatCPU(a.pid), procStatCPU(b.pid)
	t0 := time.Now()
	if _, err := b.memnode(ctx, nil, b.root, "peers", "join", code); err != nil {
		return nil, fmt.Errorf("node B: %s", strings.ReplaceAll(err.Error(), code, "<code>"))
	}
	// The cut: SIGKILL once half the rows are in, then `memnode start` again.
	limit := time.Duration(max(set.n/100, 600)) * time.Second // 1M: ≈ 2.8 h, far beyond any rate worth reporting
	if err := waitUntil(ctx, limit, "B to install half the snapshot", func() (bool, error) {
		v, err := b.peers(ctx)
		if err != nil || v.Snapshot == nil || v.Snapshot.Total == 0 {
			return false, nil // not begun yet, or between requests
		}
		j.SnapshotRows = v.Snapshot.Total
		j.CutAtRows = v.Snapshot.Rows
		return 2*v.Snapshot.Rows >= v.Snapshot.Total, nil
	}); err != nil {
		return nil, err
	}
	cpuB1 := procStatCPU(b.pid)
	if err := syscall.Kill(b.pid, syscall.SIGKILL); err != nil {
		return nil, fmt.Errorf("kill B: %w", err)
	}
	if !waitGone(b.pid, time.Minute) {
		return nil, fmt.Errorf("node B (pid %d) survived SIGKILL", b.pid)
	}
	b.pid = 0
	bbox.set(0)
	b.hc.CloseIdleConnections()
	logf("%s: killed B at %d of %d rows (%.1f s in); starting it again", sizeName(set.n), j.CutAtRows, j.SnapshotRows, time.Since(t0).Seconds())
	tk := time.Now()
	if err := b.startSync(ctx); err != nil {
		return nil, fmt.Errorf("node B after the kill: %w", err)
	}
	j.RestartMs = ms(time.Since(tk))
	if v, err := b.peers(ctx); err == nil && v.Snapshot != nil {
		j.ResumedRows = v.Snapshot.Rows
	}
	var bst struct {
		Records struct{ Sessions, Prompts, Observations, Summaries int }
	}
	if err := waitUntil(ctx, limit, "B to hold every observation", func() (bool, error) {
		v, err := b.peers(ctx)
		if err != nil || v.Snapshot != nil {
			return false, nil
		}
		st, err := b.status(ctx)
		if err != nil {
			return false, nil
		}
		bst.Records.Sessions, bst.Records.Prompts, bst.Records.Observations, bst.Records.Summaries =
			st.Records.Sessions, st.Records.Prompts, st.Records.Observations, st.Records.Summaries
		return st.Records.Observations >= ast.Records.Observations, nil
	}); err != nil {
		return nil, err
	}
	j.Seconds = time.Since(t0).Seconds()
	j.CPUB = (cpuB1 - cpuB0 + procStatCPU(b.pid)).Seconds() // the second process from its start
	j.CPUA = (procStatCPU(a.pid) - cpuA0).Seconds()
	j.LoadAfter = loadAvg()
	r := bst.Records
	j.Records, j.Observations = r.Sessions+r.Prompts+r.Observations+r.Summaries, r.Observations
	logf("%s: B holds %d records (%d observations) after %.1f s: %.0f records/s, CPU B %.1f s, A %.1f s (load %s → %s)",
		sizeName(set.n), j.Records, j.Observations, j.Seconds, j.rate(), j.CPUB, j.CPUA, j.LoadBefore, j.LoadAfter)

	// Exports: once each side has the other's ops (B's device name reaches A after the join).
	for _, h := range []*harness{a, b} {
		if err := waitUntil(ctx, 5*time.Minute, "A and B in step", func() (bool, error) {
			v, err := h.peers(ctx)
			return err == nil && v.inStep(), nil
		}); err != nil {
			return j, err
		}
	}
	ea, na, err := a.exportDigest(ctx)
	if err != nil {
		return j, fmt.Errorf("export of A: %w", err)
	}
	eb, _, err := b.exportDigest(ctx)
	if err != nil {
		return j, fmt.Errorf("export of B: %w", err)
	}
	j.ExportsEqual, j.ExportBytes = ea == eb, na
	logf("%s: exports equal: %v (%s each)", sizeName(set.n), j.ExportsEqual, mibOf(na))
	return j, nil
}

// exportDigest runs `memnode export` into a file and returns the SHA-256 of its lines after
// the header (which carries the time of the export) and their size.
func (h *harness) exportDigest(ctx context.Context) ([32]byte, int64, error) {
	var sum [32]byte
	path := filepath.Join(h.root, "export.jsonl")
	defer os.Remove(path)
	if _, err := h.memnode(ctx, nil, h.root, "export", "--out", path); err != nil {
		return sum, 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return sum, 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	if _, err := br.ReadBytes('\n'); err != nil {
		return sum, 0, fmt.Errorf("export %s: no header: %w", path, err)
	}
	d := sha256.New()
	n, err := io.Copy(d, br)
	if err != nil {
		return sum, 0, err
	}
	copy(sum[:], d.Sum(nil))
	return sum, n, nil
}

// joinSizes reads -scale-join: "all" (every size measured), "none", or a list of sizes.
func joinSizes(s string, sizes []int) (map[int]bool, error) {
	out := map[int]bool{}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "all":
		for _, n := range sizes {
			out[n] = true
		}
		return out, nil
	case "none", "off", "0":
		return out, nil
	}
	ns, err := parseSizes(s)
	if err != nil {
		return nil, fmt.Errorf("-scale-join: %w", err)
	}
	for _, n := range ns {
		out[n] = true
	}
	return out, nil
}

// writeJoinLine prints a size's join, if it was measured.
func writeJoinLine(w io.Writer, r ScaleRow) {
	j := r.Join
	if j == nil {
		return
	}
	fmt.Fprintf(w, "%s join: %d records (%d observations) in %.1f s = %.0f records/s, exports equal %v; CPU of B %.1f s, of A %.1f s; %d snapshot rows, B killed at %d and resumed from %d (restart %.0f ms); load %s → %s\n",
		sizeName(r.Size), j.Records, j.Observations, j.Seconds, j.rate(), j.ExportsEqual, j.CPUB, j.CPUA, j.SnapshotRows, j.CutAtRows, j.ResumedRows, j.RestartMs, j.LoadBefore, j.LoadAfter)
}

// procStatCPU is the process's user + system CPU time from /proc/<pid>/stat, threads that
// ended included (0 when unreadable).
func procStatCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: count fields after its closing paren.
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)        // utime, field 14
	st, _ := strconv.ParseInt(f[12], 10, 64)        // stime, field 15
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ is 100 on Linux
}
