package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memnode/memnode/api/apitype"
)

// decodeStatus reads GET /api/status from this build's node or from one older than API
// version 3, whose status was flat ("queue" a number, counts under "counts"): the A/B mode
// measures such a binary with the same harness.
func decodeStatus(b []byte) (apitype.Status, error) {
	var st apitype.Status
	err := json.Unmarshal(b, &st)
	if err == nil {
		return st, nil
	}
	var old struct {
		PID      int    `json:"pid"`
		Version  string `json:"version"`
		DataDir  string `json:"data_dir"`
		Ready    bool   `json:"ready"`
		Queue    int    `json:"queue"`
		Ingested int64  `json:"ingested"`
		Failures int64  `json:"failures"`
		Counts   struct {
			Observations int `json:"observations"`
		} `json:"counts"`
	}
	if json.Unmarshal(b, &old) != nil {
		return st, fmt.Errorf("decode status: %w", err)
	}
	st = apitype.Status{PID: old.PID, Version: old.Version, DataDir: old.DataDir, Ready: old.Ready}
	st.Queue.Waiting, st.Queue.Ingested, st.Queue.Failures = old.Queue, old.Ingested, old.Failures
	st.Records.Observations = old.Counts.Observations
	return st, nil
}

// searchTerms are the queries timeSearch sends in turn: words of the ingested events'
// commands and outputs, one term and two.
var searchTerms = []string{"test", "ok", "run tests", "go test"}

// timeSearch times GET /api/search in project sequentially over one keep-alive
// connection, the terms in turn.
func (h *harness) timeSearch(ctx context.Context, project string, n int) (Stats, error) {
	d := make([]time.Duration, 0, n)
	var cpu0 time.Duration
	for i := range h.cfg.Warmup + n {
		if i == h.cfg.Warmup {
			cpu0 = procCPU(h.pid)
		}
		path := "/api/search?" + url.Values{"query": {searchTerms[i%len(searchTerms)]}, "project": {project}, "limit": {"20"}}.Encode()
		t := time.Now()
		b, err := h.do(ctx, http.MethodGet, path, nil)
		took := time.Since(t)
		if err != nil {
			return Stats{}, err
		}
		if len(b) < 3 {
			return Stats{}, fmt.Errorf("GET %s: empty answer", path)
		}
		if i >= h.cfg.Warmup {
			d = append(d, took)
		}
	}
	st := statsOf(d)
	st.NodeCPU = cpuPerReq(cpu0, procCPU(h.pid), n)
	return st, nil
}

// abFigure is one headline figure of the A/B table.
type abFigure struct {
	label  string
	unit   string
	higher bool // a rate: more is better
	of     func(*Results) float64
}

var abFigures = []abFigure{
	{"hook observation p50", "ms", false, func(r *Results) float64 { return r.Hooks.Observation.P50 }},
	{"hook session-init p50", "ms", false, func(r *Results) float64 { return r.Hooks.SessionInit.P50 }},
	{"hook context p50", "ms", false, func(r *Results) float64 { return r.Hooks.Context.P50 }},
	{"ingest", "events/s", true, func(r *Results) float64 { return r.Ingest.EventsPerS }},
	{"ingest to records", "obs/s", true, func(r *Results) float64 { return r.Ingest.ObsPerS }},
	// Where "ingest to records" goes: the POSTs (1/ingest events/s), then the drain of what
	// was still queued at the last acknowledgement.
	{"  queued at last ack", "events", false, func(r *Results) float64 { return float64(r.Ingest.QueueAtEnd) }},
	{"  drain after last ack", "ms", false, func(r *Results) float64 { return r.Ingest.DrainAfterS * 1000 }},
	{"context p50", "ms", false, func(r *Results) float64 { return r.Context.P50 }},
	{"search p50", "ms", false, func(r *Results) float64 { return r.Search.P50 }},
	{"memnode search p50", "ms", false, func(r *Results) float64 { return r.SearchCLI.P50 }},
	// The node's CPU time per request of the two series above: a code path's cost, which
	// the machine's load moves far less than a latency.
	{"  context node CPU", "µs/req", false, func(r *Results) float64 { return r.Context.NodeCPU }},
	{"  search node CPU", "µs/req", false, func(r *Results) float64 { return r.Search.NodeCPU }},
}

// runAB measures cfg.Base and cfg.Bin in turn (both reached over plain TCP: the base may
// predate the token proof), cfg.Rounds times each, in ABBA order (A B,
// B A, A B, …) so a drift of the machine's load falls on both alike, and writes both
// columns — the median of the rounds and every round's figure — with the load average at
// the start of each run.
func runAB(ctx context.Context, cfg config, box *pidBox, w io.Writer) error {
	cfg.NoPlatforms = true // the older binary may know only claude-code
	bins := [2]string{cfg.Base, cfg.Bin}
	var results [2][]*Results
	for round := range cfg.Rounds {
		order := []int{0, 1}
		if round%2 == 1 {
			order = []int{1, 0}
		}
		for _, which := range order {
			c := cfg
			// Both over plain TCP: the base predates the token proof, and the API figures
			// must not differ by transport.
			c.Bin, c.Unproven = bins[which], true
			if c.Log != nil {
				fmt.Fprintf(c.Log, "A/B round %d/%d: %s (load %s)\n", round+1, cfg.Rounds, c.Bin, loadAvg())
			}
			res, err := run(ctx, c, box)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round+1, c.Bin, err)
			}
			results[which] = append(results[which], res)
		}
	}
	writeAB(w, bins, results)
	return nil
}

func writeAB(w io.Writer, bins [2]string, results [2][]*Results) {
	fmt.Fprintf(w, "A (base): %s\nB (new):  %s\n%d rounds each, ABBA order; medians, then each round\n\n", bins[0], bins[1], len(results[0]))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tA median\tB median\tB vs A\tp\tA rounds\tB rounds\t")
	for _, f := range abFigures {
		var cols [2][]float64
		for i := range results {
			for _, r := range results[i] {
				cols[i] = append(cols[i], f.of(r))
			}
		}
		a, b := median(cols[0]), median(cols[1])
		delta := "—"
		if a > 0 {
			change := (b - a) / a * 100
			better := change < 0
			if f.higher {
				better = change > 0
			}
			word := "worse"
			if better {
				word = "better"
			}
			if change == 0 {
				word = "same"
			}
			delta = fmt.Sprintf("%+.1f%% (%s)", change, word)
		}
		fmt.Fprintf(tw, "%s (%s)\t%.2f\t%.2f\t%s\t%.3f\t%s\t%s\t\n", f.label, f.unit, a, b, delta, mannWhitneyP(cols[0], cols[1]),
			joinFigures(cols[0]), joinFigures(cols[1]))
	}
	tw.Flush()
	fmt.Fprintln(w, "\np: two-sided Mann–Whitney test of the rounds (exact up to 200,000 splits of the pooled rounds).")
	fmt.Fprintln(w, "Below 0.05 the two columns differ by more than the rounds' spread; at 7 rounds each the")
	fmt.Fprintln(w, "smallest p is 0.001 (every B round beyond every A round).")
	fmt.Fprintln(w, "\nload average at the start and end of each run (1, 5, 15 min):")
	for i, name := range []string{"A", "B"} {
		for k, r := range results[i] {
			fmt.Fprintf(w, "  %s round %d: %s → %s\n", name, k+1, r.Meta.LoadStart, r.Meta.LoadEnd)
		}
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func joinFigures(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, " ")
}
