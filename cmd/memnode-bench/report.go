package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Stats summarises timings in milliseconds. Percentiles are nearest-rank, like the
// anchor's load generator.
type Stats struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	// NodeCPU is the node's CPU time (all its threads, user and system) per timed request,
	// in µs, where the series measured it: unlike a latency it does not move with what
	// else the machine runs, so it tells a slower code path from a busier machine.
	NodeCPU float64 `json:"node_cpu_us,omitempty"`
}

func statsOf(d []time.Duration) Stats {
	if len(d) == 0 {
		return Stats{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	var sum time.Duration
	for _, x := range s {
		sum += x
	}
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return ms(s[max(0, min(i, len(s)-1))])
	}
	return Stats{N: len(s), P50: rank(0.50), P99: rank(0.99), Mean: ms(sum) / float64(len(s)), Min: ms(s[0]), Max: ms(s[len(s)-1])}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Meta says what was measured where, so a figure can be judged later.
type Meta struct {
	Time        string `json:"time"`
	Bin         string `json:"bin"`
	Settings    string `json:"settings,omitempty"`
	DataDir     string `json:"data_dir"`
	Version     string `json:"version"`
	CPUs        int    `json:"cpus"`
	Kernel      string `json:"kernel"`
	LoadStart   string `json:"loadavg_start"`
	LoadEnd     string `json:"loadavg_end"`
	HookRuns    int    `json:"hook_runs"`
	Warmup      int    `json:"warmup"`
	Events      int    `json:"events"`
	Conc        int    `json:"conc"`
	ContextObs  int    `json:"context_obs"`
	ContextRuns int    `json:"context_runs"`
}

func meta(cfg config, h *harness) Meta {
	k, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return Meta{Time: time.Now().UTC().Format(time.RFC3339), Bin: h.bin, Settings: cfg.Settings, DataDir: h.dataDir, CPUs: runtime.NumCPU(),
		Kernel: strings.TrimSpace(string(k)), LoadStart: loadAvg(), HookRuns: cfg.HookRuns, Warmup: cfg.Warmup,
		Events: cfg.Events, Conc: cfg.Conc, ContextObs: cfg.ContextObs, ContextRuns: cfg.ContextRuns}
}

// Results is everything one run measured.
type Results struct {
	Meta          Meta    `json:"meta"`
	PayloadSource string  `json:"payload_source"`
	NodePID       int     `json:"node_pid"`
	StartMs       float64 `json:"start_ms"`
	IdleLongS     float64 `json:"idle_long_s,omitempty"` // when the second idle RSS was read
	// FirstAfterIdleMs is the latency of the first request after the idle readings.
	FirstAfterIdleMs float64 `json:"first_after_idle_ms"`
	Floor            struct {
		True    Stats `json:"true_ms"`
		Version Stats `json:"memnode_version_ms"`
	} `json:"process_floor"`
	Hooks struct {
		Observation Stats `json:"observation_ms"`
		SessionInit Stats `json:"session_init_ms"`
		Context     Stats `json:"context_ms"`
		Context10k  Stats `json:"context_10k_ms"`
		// PerPlatform is the observation hook of every registered agent with hooks, with
		// a payload from its fixtures (platforms.go).
		PerPlatform []PlatformHook `json:"per_platform"`
	} `json:"hooks"`
	ContextIngest IngestResult `json:"context_ingest"`
	Context       Stats        `json:"context_ms"`
	ContextBytes  int          `json:"context_bytes"`
	// Search is GET /api/search over the context project (ab.go's searchTerms, in turn).
	Search Stats `json:"search_ms"`
	// SearchCLI is `memnode search` of the same terms in the same project, fork to exit.
	SearchCLI Stats        `json:"search_cli_ms"`
	Ingest    IngestResult `json:"ingest"`
	RSS       struct {
		Idle         mem `json:"idle"`
		IdleLong     mem `json:"idle_long"` // after -idle-long of idleness; zero when skipped
		AfterContext mem `json:"after_context"`
		AfterIngest  mem `json:"after_ingest"` // its HWM is the run's peak
	} `json:"memory"`
	FinalObservations int     `json:"final_observations"`
	WorkerFailures    int64   `json:"worker_failures"`
	Anchor            *Anchor `json:"anchor,omitempty"`
	Rows              []Row   `json:"rows"`
}

// Row is one line of the table: a headline figure with its target and claude-mem's.
type Row struct {
	Key    string  `json:"key"`
	Label  string  `json:"label"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Detail string  `json:"detail,omitempty"`
	// Target is the goal (≤ for times and memory, ≥ for rates); 0 means none.
	Target float64 `json:"target,omitempty"`
	Met    *bool   `json:"met,omitempty"`
	// ClaudeMem is claude-mem's figure: from the anchor when it ran or was read, else the
	// recorded reference (CMSource says which).
	ClaudeMem float64 `json:"claude_mem,omitempty"`
	CMSource  string  `json:"claude_mem_source,omitempty"`
	// Advantage is how many times better memnode is: claude-mem/memnode for times and
	// memory, memnode/claude-mem for rates.
	Advantage float64 `json:"advantage,omitempty"`
	Higher    bool    `json:"higher_is_better,omitempty"`
}

func mib(kb int) float64 { return float64(kb) / 1024 }

func memDetail(m mem) string {
	return fmt.Sprintf("anon %.1f MiB + file %.1f MiB (mapped binary); PSS %.1f MiB", mib(m.Anon), mib(m.File), mib(m.Pss))
}

func (r *Results) rows() []Row {
	st := func(s Stats) string {
		d := fmt.Sprintf("p99 %.1f, mean %.1f, min %.1f, n=%d", s.P99, s.Mean, s.Min, s.N)
		if s.NodeCPU > 0 {
			d += fmt.Sprintf("; node CPU %.0f µs/req", s.NodeCPU)
		}
		return d
	}
	rows := []Row{
		{Key: "hook_observation_p50_ms", Label: "hook observation (PostToolUse) p50", Value: r.Hooks.Observation.P50, Unit: "ms", Detail: st(r.Hooks.Observation), Target: 10},
		{Key: "hook_session_init_p50_ms", Label: "hook session-init (UserPromptSubmit) p50", Value: r.Hooks.SessionInit.P50, Unit: "ms", Detail: st(r.Hooks.SessionInit)},
		{Key: "hook_context_p50_ms", Label: "hook context (SessionStart), small project p50", Value: r.Hooks.Context.P50, Unit: "ms", Detail: st(r.Hooks.Context)},
		{Key: "hook_context_10k_p50_ms", Label: fmt.Sprintf("hook context, %d obs p50", r.ContextIngest.Observations), Value: r.Hooks.Context10k.P50, Unit: "ms", Detail: st(r.Hooks.Context10k)},
		{Key: "memnode_version_p50_ms", Label: "process floor: memnode version p50", Value: r.Floor.Version.P50, Unit: "ms", Detail: fmt.Sprintf("%s; /bin/true p50 %.2f", st(r.Floor.Version), r.Floor.True.P50)},
		{Key: "node_start_ms", Label: "memnode start → ready (fresh data dir)", Value: r.StartMs, Unit: "ms", Detail: "one run"},
		{Key: "ingest_events_per_s", Label: fmt.Sprintf("ingest POST /api/events, conc %d", r.Ingest.Conc), Value: r.Ingest.EventsPerS, Unit: "events/s", Higher: true, Target: 5000,
			Detail: fmt.Sprintf("%d durable acks in %.2f s; ack p50 %.2f p99 %.2f ms", r.Ingest.OK, r.Ingest.WallS, r.Ingest.Ack.P50, r.Ingest.Ack.P99)},
		{Key: "ingest_observations_per_s", Label: "queue → observations, first POST to empty queue", Value: r.Ingest.ObsPerS, Unit: "obs/s", Higher: true,
			Detail: fmt.Sprintf("%d obs in %.2f s; queue %d at last ack, drained %.2f s later", r.Ingest.Observations, r.Ingest.TotalS, r.Ingest.QueueAtEnd, r.Ingest.DrainAfterS)},
		{Key: "context_p50_ms", Label: fmt.Sprintf("GET /api/context, %d obs p50", r.ContextIngest.Observations), Value: r.Context.P50, Unit: "ms", Detail: st(r.Context) + fmt.Sprintf(", %d bytes", r.ContextBytes), Target: 20},
		{Key: "context_p99_ms", Label: "GET /api/context p99", Value: r.Context.P99, Unit: "ms"},
		{Key: "search_p50_ms", Label: fmt.Sprintf("GET /api/search, %d obs p50", r.ContextIngest.Observations), Value: r.Search.P50, Unit: "ms", Detail: st(r.Search)},
		{Key: "search_cli_p50_ms", Label: fmt.Sprintf("memnode search, %d obs p50", r.ContextIngest.Observations), Value: r.SearchCLI.P50, Unit: "ms",
			Detail: fmt.Sprintf("%s; %.1f× the HTTP p50", st(r.SearchCLI), r.SearchCLI.P50/max(r.Search.P50, 1e-9))},
		{Key: "rss_idle_mib", Label: "node RSS idle (after start)", Value: mib(r.RSS.Idle.RSS), Unit: "MiB", Detail: memDetail(r.RSS.Idle), Target: 30},
		{Key: "rss_after_10k_mib", Label: fmt.Sprintf("node RSS after %d obs + context", r.ContextIngest.Observations), Value: mib(r.RSS.AfterContext.RSS), Unit: "MiB", Detail: memDetail(r.RSS.AfterContext)},
		{Key: "rss_after_ingest_mib", Label: fmt.Sprintf("node RSS after all (%d obs)", r.FinalObservations), Value: mib(r.RSS.AfterIngest.RSS), Unit: "MiB", Detail: memDetail(r.RSS.AfterIngest)},
		{Key: "rss_peak_mib", Label: "node peak RSS (VmHWM)", Value: mib(r.RSS.AfterIngest.HWM), Unit: "MiB", Detail: fmt.Sprintf("%d kB", r.RSS.AfterIngest.HWM)},
	}
	i0 := slices.IndexFunc(rows, func(x Row) bool { return x.Key == "hook_context_10k_p50_ms" })
	for j, ph := range r.Hooks.PerPlatform {
		rows = slices.Insert(rows, i0+1+j, Row{Key: "hook_observation_p50_ms_" + ph.Platform,
			Label: "hook observation p50, " + ph.Platform, Value: ph.Stats.P50, Unit: "ms", Target: 10,
			Detail: st(ph.Stats) + "; " + ph.Payload})
	}
	if r.RSS.IdleLong.RSS > 0 {
		i := slices.IndexFunc(rows, func(x Row) bool { return x.Key == "rss_idle_mib" })
		rows = slices.Insert(rows, i+1, Row{Key: "rss_idle_long_mib", Label: fmt.Sprintf("node RSS idle, %.0f s after start", r.IdleLongS),
			Value: mib(r.RSS.IdleLong.RSS), Unit: "MiB", Detail: memDetail(r.RSS.IdleLong)})
	}
	// What users feel: private memory, the node's share of the machine, and the first
	// request after idle (the RSS rows above also count clean file pages the kernel takes
	// back under pressure).
	idle := r.RSS.Idle
	if r.RSS.IdleLong.RSS > 0 {
		idle = r.RSS.IdleLong
	}
	i := slices.IndexFunc(rows, func(x Row) bool { return x.Key == "rss_idle_mib" })
	rows = slices.Insert(rows, i, Row{Key: "rss_anon_idle_mib", Label: "node RssAnon idle (private memory)", Value: mib(idle.Anon), Unit: "MiB", Detail: memDetail(idle)},
		Row{Key: "pss_idle_mib", Label: "node PSS idle (its share of the machine)", Value: mib(idle.Pss), Unit: "MiB", Detail: "/proc/<pid>/smaps_rollup"},
		Row{Key: "first_request_after_idle_ms", Label: "first request after idle (GET /api/context)", Value: r.FirstAfterIdleMs, Unit: "ms", Detail: "one request, after the idle RSS readings"})
	ref := recorded()
	for i := range rows {
		x := &rows[i]
		if x.Target > 0 {
			met := x.Value <= x.Target
			if x.Higher {
				met = x.Value >= x.Target
			}
			x.Met = &met
		}
		switch {
		case r.Anchor != nil && r.Anchor.Values[x.Key] > 0:
			x.ClaudeMem, x.CMSource = r.Anchor.Values[x.Key], "anchor"
		case ref.Values[x.Key] > 0:
			x.ClaudeMem, x.CMSource = ref.Values[x.Key], "recorded"
		}
		if x.ClaudeMem > 0 && x.Value > 0 {
			x.Advantage = x.ClaudeMem / x.Value
			if x.Higher {
				x.Advantage = x.Value / x.ClaudeMem
			}
		}
	}
	return rows
}

func num(v float64) string {
	switch {
	case v == math.Trunc(v) && v < 1e6:
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func writeTable(w io.Writer, r *Results) {
	r.Rows = r.rows()
	m := r.Meta
	fmt.Fprintf(w, "memnode-bench  %s  (%s)\n", m.Version, m.Bin)
	fmt.Fprintf(w, "%s, %d CPUs, kernel %s, load avg %s at start / %s at end\n", m.Time, m.CPUs, m.Kernel, m.LoadStart, m.LoadEnd)
	fmt.Fprintf(w, "hook runs %d (+%d warm-up), events %d, conc %d, context obs %d, context runs %d; payloads: %s\n\n",
		m.HookRuns, m.Warmup, m.Events, m.Conc, m.ContextObs, m.ContextRuns, r.PayloadSource)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tmemnode\ttarget\tclaude-mem\tadvantage\tdetail")
	for _, x := range r.Rows {
		target := ""
		if x.Target > 0 {
			op, mark := "≤", "MISSED"
			if x.Higher {
				op = "≥"
			}
			if *x.Met {
				mark = "ok"
			}
			target = fmt.Sprintf("%s %s %s %s", op, num(x.Target), x.Unit, mark)
		}
		cm, adv := "", ""
		if x.ClaudeMem > 0 {
			cm = fmt.Sprintf("%s %s (%s)", num(x.ClaudeMem), x.Unit, x.CMSource)
		}
		if x.Advantage > 0 {
			adv = fmt.Sprintf("%.1f×", x.Advantage)
		}
		fmt.Fprintf(tw, "%s\t%s %s\t%s\t%s\t%s\t%s\n", x.Label, num(x.Value), x.Unit, target, cm, adv, x.Detail)
	}
	tw.Flush()
	if r.WorkerFailures > 0 {
		fmt.Fprintf(w, "\nWARNING: %d worker failures during the run\n", r.WorkerFailures)
	}
	if a := r.Anchor; a != nil {
		fmt.Fprintf(w, "\nclaude-mem anchor: %s", a.Source)
		if a.Version != "" {
			fmt.Fprintf(w, " (claude-mem %s)", a.Version)
		}
		if a.Skipped != "" {
			fmt.Fprintf(w, " — not used: %s", a.Skipped)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\nadvantage = claude-mem/memnode for times and memory, memnode/claude-mem for rates")
	fmt.Fprintln(w, "(anchor) = claude-mem measured in this run; (recorded) = cmd/memnode-bench/claude-mem-anchor.tsv, claude-mem 13.25.3 on the same VM, 2026-11-30")
}

func writeJSON(w io.Writer, r *Results) {
	r.Rows = r.rows()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(r)
}
