package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/testbin"
	"github.com/memnode/memnode/platform/registry"
)

func TestStatsOf(t *testing.T) {
	d := make([]time.Duration, 0, 100)
	for i := 100; i >= 1; i-- { // unsorted on purpose
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want Stats
	}{
		{"empty", nil, Stats{}},
		{"one", []time.Duration{3 * time.Millisecond}, Stats{N: 1, P50: 3, P99: 3, Mean: 3, Min: 3, Max: 3}},
		{"even pair takes the lower (nearest rank)", []time.Duration{4 * time.Millisecond, 2 * time.Millisecond}, Stats{N: 2, P50: 2, P99: 4, Mean: 3, Min: 2, Max: 4}},
		{"1..100", d, Stats{N: 100, P50: 50, P99: 99, Mean: 50.5, Min: 1, Max: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := statsOf(tc.in); got != tc.want {
				t.Errorf("statsOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestReadAnchorTSV(t *testing.T) {
	a := readAnchorTSV("claude-mem-anchor.tsv") // a real anchor run, also the recorded reference
	if a.Skipped != "" {
		t.Fatalf("skipped: %s", a.Skipped)
	}
	want := map[string]float64{
		"hook_observation_p50_ms":  460,
		"hook_session_init_p50_ms": 412,
		"hook_context_p50_ms":      617,
		"hook_context_10k_p50_ms":  497,
		"node_start_ms":            451, // the fresh data dir row, not the populated one (336)
		"ingest_events_per_s":      226.6,
		"context_p50_ms":           36.7,
		"rss_idle_mib":             102676.0 / 1024,
		"rss_after_10k_mib":        154436.0 / 1024, // after the saves, not after the tool-call POSTs
	}
	for k, v := range want {
		if math.Abs(a.Values[k]-v) > 1e-9 {
			t.Errorf("%s = %v, want %v", k, a.Values[k], v)
		}
	}
	if len(a.Values) != len(want) {
		t.Errorf("got %d values, want %d: %v", len(a.Values), len(want), a.Values)
	}
	if a.Version != "13.25.3" {
		t.Errorf("version = %q", a.Version)
	}
	if rec := recorded(); len(rec.Values) != len(want) {
		t.Errorf("embedded reference has %d values", len(rec.Values))
	}

	live := &Anchor{Values: map[string]float64{"hook_observation_p50_ms": 311, "ingest_events_per_s": 320.5}}
	r := &Results{Anchor: live}
	r.Hooks.Observation.P50 = 3.11
	r.Ingest.EventsPerS = 3205
	r.Context.P50 = 3.67
	for _, row := range r.rows() {
		switch row.Key {
		case "hook_observation_p50_ms":
			if row.CMSource != "anchor" || math.Abs(row.Advantage-100) > 1e-9 || row.Met == nil || !*row.Met {
				t.Errorf("hook row: %+v, want anchor, advantage 100, met", row)
			}
		case "ingest_events_per_s":
			if math.Abs(row.Advantage-10) > 1e-9 || row.Met == nil || *row.Met {
				t.Errorf("ingest row: advantage %v met %v, want 10 and missed", row.Advantage, row.Met)
			}
		case "context_p50_ms": // not in the live anchor: falls back to the recorded run
			if row.CMSource != "recorded" || math.Abs(row.Advantage-10) > 1e-9 {
				t.Errorf("context row: %+v, want recorded, advantage 10", row)
			}
		}
	}
}

func TestAnchorSkipsGracefully(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.sh")
	a := runAnchor(context.Background(), config{Anchor: missing, AnchorTimeout: time.Minute}, func(string, ...any) {})
	if a.Skipped == "" || len(a.Values) != 0 {
		t.Fatalf("anchor = %+v, want skipped", a)
	}
	if b := readAnchorTSV(missing); b.Skipped == "" {
		t.Fatalf("missing tsv not reported: %+v", b)
	}
	// A script that fails before producing a summary (as when npm install fails).
	failing := filepath.Join(t.TempDir(), "fail.sh")
	if err := os.WriteFile(failing, []byte("echo npm install failed >&2; exit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("node"); err == nil {
		a = runAnchor(context.Background(), config{Anchor: failing, AnchorDir: filepath.Join(t.TempDir(), "new"), AnchorTimeout: time.Minute}, func(string, ...any) {})
		if !strings.Contains(a.Skipped, "failed") {
			t.Fatalf("failing script: %+v", a)
		}
	}
}

func TestLoadPayloads(t *testing.T) {
	proj := filepath.Join(t.TempDir(), "my proj")
	for _, fixture := range []string{"../../testdata/fixtures/claude-code/session.jsonl", filepath.Join(t.TempDir(), "missing.jsonl")} {
		p, err := loadPayloads(fixture, proj)
		if err != nil {
			t.Fatal(err)
		}
		a, b := p.observation(1), p.observation(2)
		var oa, ob struct {
			Cwd       string `json:"cwd"`
			ToolUseID string `json:"tool_use_id"`
			ToolName  string `json:"tool_name"`
		}
		if err := json.Unmarshal(a, &oa); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &ob); err != nil {
			t.Fatal(err)
		}
		if oa.Cwd != proj || oa.ToolUseID == ob.ToolUseID || oa.ToolName == "" {
			t.Errorf("%s: observation payloads %+v / %+v", p.source, oa, ob)
		}
		if bytes.Equal(p.sessionInit(1), p.sessionInit(2)) {
			t.Errorf("%s: session-init payloads are not distinct", p.source)
		}
		if bytes.Contains(p.context(0), []byte(fixtureProject)) || !bytes.Contains(p.context(0), []byte("my proj")) {
			t.Errorf("%s: context payload not rewritten: %s", p.source, p.context(0))
		}
	}
}

// TestBenchTiny runs the whole harness with tiny counts against a freshly built binary,
// so that the harness keeps working as the node changes.
func TestBenchTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("builds memnode and starts a real node")
	}
	dir, err := testbin.Memnode() // the e2e tests' build: cached, built once under a lock
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "memnode")
	cfg := defaultConfig()
	cfg.Bin, cfg.Fixture = bin, "../../testdata/fixtures/claude-code/session.jsonl"
	cfg.HookRuns, cfg.Warmup, cfg.Events, cfg.Conc, cfg.ContextObs, cfg.ContextRuns = 4, 1, 60, 3, 40, 5
	cfg.Settle, cfg.IdleLong, cfg.Timeout = 0, 0, 3*time.Minute
	var logb bytes.Buffer
	cfg.Log = &logb
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	res, err := run(ctx, cfg, nil)
	if err != nil {
		t.Fatalf("run: %v\nlog:\n%s", err, logb.String())
	}

	var hooked []string
	for _, p := range registry.Builtin().All() {
		if p.Adapter != nil {
			hooked = append(hooked, p.Name)
		}
	}
	if len(res.Hooks.PerPlatform) != len(hooked) {
		t.Errorf("per-platform hooks %+v, want one for each of %v", res.Hooks.PerPlatform, hooked)
	}
	for i, ph := range res.Hooks.PerPlatform {
		if i < len(hooked) && ph.Platform != hooked[i] || ph.Stats.N != cfg.HookRuns || ph.Stats.P50 <= 0 || ph.Payload == "" {
			t.Errorf("per-platform hook %d: %+v", i, ph)
		}
	}
	for name, s := range map[string]Stats{
		"observation hook": res.Hooks.Observation, "session-init hook": res.Hooks.SessionInit,
		"context hook": res.Hooks.Context, "context hook 10k": res.Hooks.Context10k,
		"memnode version": res.Floor.Version, "/bin/true": res.Floor.True, "memnode search": res.SearchCLI,
	} {
		if s.N != cfg.HookRuns || s.P50 <= 0 || s.P50 > s.P99 || s.Min > s.P50 {
			t.Errorf("%s stats %+v", name, s)
		}
	}
	if res.RSS.Idle.Anon <= 0 || res.RSS.Idle.Pss <= 0 || res.FirstAfterIdleMs <= 0 {
		t.Errorf("idle: %+v, first request after idle %.2f ms; want RssAnon, PSS and a latency", res.RSS.Idle, res.FirstAfterIdleMs)
	}
	t.Logf("idle node: RssAnon %d kB, PSS %d kB, RSS %d kB; first request after idle %.2f ms", res.RSS.Idle.Anon, res.RSS.Idle.Pss, res.RSS.Idle.RSS, res.FirstAfterIdleMs)
	if res.Context.N != cfg.ContextRuns || res.Context.P50 <= 0 || res.ContextBytes == 0 {
		t.Errorf("context: %+v, %d bytes", res.Context, res.ContextBytes)
	}
	if res.Search.N != cfg.ContextRuns || res.Search.P50 <= 0 {
		t.Errorf("search: %+v", res.Search)
	}
	for _, in := range []IngestResult{res.ContextIngest, res.Ingest} {
		if in.OK != in.Events || in.Failed != 0 || in.EventsPerS <= 0 {
			t.Errorf("ingest %s: %+v", in.Project, in)
		}
		// Every Bash event of the generator is worth an observation in the offline compressor.
		if in.Observations != in.Events || in.ObsPerS <= 0 {
			t.Errorf("ingest %s: %d observations from %d events", in.Project, in.Observations, in.Events)
		}
	}
	if res.ContextIngest.Events != cfg.ContextObs || res.Ingest.Events != cfg.Events {
		t.Errorf("event counts %d/%d", res.ContextIngest.Events, res.Ingest.Events)
	}
	if m := res.RSS.Idle; m.RSS <= 0 || m.Anon <= 0 || m.File <= 0 || res.RSS.AfterIngest.HWM < res.RSS.AfterIngest.RSS || res.WorkerFailures != 0 {
		t.Errorf("rss %+v, worker failures %d", res.RSS, res.WorkerFailures)
	}
	if res.NodePID <= 0 || alive(res.NodePID) {
		t.Errorf("node pid %d still running after run", res.NodePID)
	}
	if _, err := os.Stat(res.Meta.DataDir); !os.IsNotExist(err) {
		t.Errorf("temp data dir %s left behind (%v)", res.Meta.DataDir, err)
	}

	var table, js bytes.Buffer
	writeTable(&table, res)
	for _, want := range []string{"hook observation (PostToolUse) p50", "GET /api/context", "node RSS idle", "(recorded)"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	writeJSON(&js, res)
	var back Results
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Rows) != len(res.rows()) || back.Ingest.OK != cfg.Events {
		t.Errorf("JSON round trip: %v, %d rows", err, len(back.Rows))
	}
}

// TestDecodeStatusOfAnOlderNode: the A/B mode reads the status of a node older than API
// version 3 (flat: "queue" a number, counts under "counts") as well as this build's.
func TestDecodeStatusOfAnOlderNode(t *testing.T) {
	old := `{"pid":42,"version":"dev","data_dir":"/d","addr":"127.0.0.1:1","ready":true,"compressor":"offline",
		"counts":{"sessions":1,"observations":7,"pending":3},"queue":3,"ingested":10,"processed":7,"failures":1,
		"embeddings":"off","sync":"off"}`
	st, err := decodeStatus([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if st.PID != 42 || st.DataDir != "/d" || st.Queue.Waiting != 3 || st.Queue.Ingested != 10 || st.Queue.Failures != 1 || st.Records.Observations != 7 {
		t.Fatalf("old status read as %+v", st)
	}
	cur, err := json.Marshal(apitype.Status{PID: 7, DataDir: "/e", Queue: apitype.QueueStatus{Waiting: 2, Ingested: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := decodeStatus(cur); err != nil || st.PID != 7 || st.Queue.Waiting != 2 || st.Queue.Ingested != 5 {
		t.Fatalf("current status read as %+v, %v", st, err)
	}
	if _, err := decodeStatus([]byte("not json")); err == nil {
		t.Fatal("garbage decoded")
	}
}

// TestWriteAB: both columns, the median of the rounds, the change named better or worse by
// the figure's direction, every round's figure and its load average.
func TestWriteAB(t *testing.T) {
	mk := func(hook, ingest float64, load string) *Results {
		r := &Results{}
		r.Hooks.Observation.P50, r.Ingest.EventsPerS, r.Meta.LoadStart, r.Meta.LoadEnd = hook, ingest, load, load
		return r
	}
	var out bytes.Buffer
	writeAB(&out, [2]string{"old/memnode", "new/memnode"}, [2][]*Results{
		{mk(10, 1000, "1.00"), mk(12, 1100, "2.00"), mk(11, 900, "3.00")},
		{mk(9, 1200, "4.00"), mk(30, 1300, "5.00"), mk(10, 1250, "6.00")},
	})
	for _, want := range []string{"old/memnode", "new/memnode", "3 rounds",
		"hook observation p50 (ms) 11.00 10.00 -9.1% (better) 0.800 10.00 12.00 11.00 9.00 30.00 10.00",
		"ingest (events/s) 1000.00 1250.00 +25.0% (better) 0.100",
		"A round 2: 2.00 → 2.00", "B round 3: 6.00 → 6.00"} {
		if flat := strings.Join(strings.Fields(out.String()), " "); !strings.Contains(flat, want) {
			t.Errorf("A/B table lacks %q:\n%s", want, out.String())
		}
	}
}
