package main

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Anchor is claude-mem's side of the comparison, read from the anchor script's
// results/summary.tsv (metric TAB value TAB method).
type Anchor struct {
	Source  string `json:"source"`
	Skipped string `json:"skipped,omitempty"`
	Version string `json:"version,omitempty"`
	// Values are keyed like Row.Key; Raw keeps the anchor's own value strings.
	Values map[string]float64 `json:"values,omitempty"`
	Raw    map[string]string  `json:"raw,omitempty"`
}

// anchorMetric maps one anchor row (found by prefix) to one of our row keys.
type anchorMetric struct {
	prefix, key string
	re          *regexp.Regexp
	scale       float64
}

func anchorMetrics() []anchorMetric {
	median := regexp.MustCompile(`median ([0-9.]+) ms`)
	rate := regexp.MustCompile(`([0-9.]+) req/s`)
	kb := regexp.MustCompile(`\(([0-9]+) kB`)
	return []anchorMetric{
		{"hook PostToolUse (observation) end-to-end", "hook_observation_p50_ms", median, 1},
		{"hook UserPromptSubmit (session-init) end-to-end", "hook_session_init_p50_ms", median, 1},
		{"hook SessionStart context (empty project)", "hook_context_p50_ms", median, 1},
		{"SessionStart context hook (project with", "hook_context_10k_p50_ms", median, 1},
		{"worker cold start -> /api/health 200 (fresh data dir)", "node_start_ms", median, 1},
		{"ingest POST /api/sessions/observations (ingest_keepalive)", "ingest_events_per_s", rate, 1},
		{"GET /api/context/inject?project=proj", "context_p50_ms", median, 1},
		{"worker RSS idle", "rss_idle_mib", kb, 1.0 / 1024},
		{"worker RSS after", "rss_after_10k_mib", kb, 1.0 / 1024}, // the last such row: after the 10k saves
	}
}

// recordedAnchor is the summary.tsv of a live anchor run of claude-mem 13.25.3 on the
// measurement VM (2026-11-30, 2 CPUs, load average ≈ 3); it fills the claude-mem column when
// the anchor is neither run nor read. Refresh it with -anchor and copy DIR/results/summary.tsv.
//
//go:embed claude-mem-anchor.tsv
var recordedAnchor []byte

func recorded() *Anchor {
	return parseAnchorTSV(bytes.NewReader(recordedAnchor), "recorded: cmd/memnode-bench/claude-mem-anchor.tsv")
}

// readAnchorTSV parses a summary.tsv file; problems are reported in Skipped, never fatal.
func readAnchorTSV(path string) *Anchor {
	f, err := os.Open(path)
	if err != nil {
		return &Anchor{Source: path, Skipped: err.Error()}
	}
	defer f.Close()
	return parseAnchorTSV(f, path)
}

func parseAnchorTSV(rd io.Reader, source string) *Anchor {
	a := &Anchor{Source: source, Values: map[string]float64{}, Raw: map[string]string{}}
	ms := anchorMetrics()
	sc := bufio.NewScanner(rd)
	for sc.Scan() {
		metric, value, _ := strings.Cut(sc.Text(), "\t")
		value, _, _ = strings.Cut(value, "\t")
		if metric == "claude-mem version" {
			a.Version = value
		}
		for _, m := range ms {
			if !strings.HasPrefix(metric, m.prefix) {
				continue
			}
			if m.key == "rss_after_10k_mib" && !strings.Contains(metric, "saves") {
				continue
			}
			if sub := m.re.FindStringSubmatch(value); sub != nil {
				if v, err := strconv.ParseFloat(sub[1], 64); err == nil && v > 0 {
					a.Values[m.key] = v * m.scale
					a.Raw[m.key] = metric + ": " + value
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		a.Skipped = err.Error()
	} else if len(a.Values) == 0 {
		a.Skipped = "no known metric in it (an incomplete anchor run?)"
	}
	return a
}

// runAnchor runs the anchor script on a free port and reads its summary. Any failure
// (script missing, no node/npm, install failing) leaves a reason in Skipped.
func runAnchor(ctx context.Context, cfg config, logf func(string, ...any)) *Anchor {
	skip := func(format string, a ...any) *Anchor {
		an := &Anchor{Source: cfg.Anchor, Skipped: fmt.Sprintf(format, a...)}
		logf("anchor skipped: %s", an.Skipped)
		return an
	}
	if fi, err := os.Stat(cfg.Anchor); err != nil || fi.IsDir() {
		return skip("script %s not found", cfg.Anchor)
	}
	for _, tool := range []string{"bash", "node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return skip("%s is not installed", tool)
		}
	}
	dir := cfg.AnchorDir
	if dir == "" {
		d, err := os.MkdirTemp("", "claude-mem-anchor-")
		if err != nil {
			return skip("temp dir: %v", err)
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return skip("anchor dir: %v", err)
	}
	port, err := freePort()
	if err != nil {
		return skip("%v", err)
	}
	logPath := filepath.Join(dir, "memnode-bench-anchor.log")
	lf, err := os.Create(logPath)
	if err != nil {
		return skip("log file: %v", err)
	}
	defer lf.Close()
	ctx, cancel := context.WithTimeout(ctx, cfg.AnchorTimeout)
	defer cancel()
	logf("anchor: bash %s %s (port %d; npm install + measurements take minutes; log %s)", cfg.Anchor, dir, port, logPath)
	cmd := exec.CommandContext(ctx, "bash", cfg.Anchor, dir)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = lf, lf
	// TERM lets the script's EXIT trap stop the claude-mem worker it started.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	t0 := time.Now()
	runErr := cmd.Run()
	a := readAnchorTSV(filepath.Join(dir, "results", "summary.tsv"))
	a.Source = fmt.Sprintf("live run in %s (%s)", dir, time.Since(t0).Round(time.Second))
	if runErr != nil {
		if len(a.Values) == 0 {
			return skip("anchor script failed (%v); see %s", runErr, logPath)
		}
		a.Source += fmt.Sprintf(", script ended with %v", runErr)
	}
	return a
}
