package codex

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/platformtest"
)

// liveRendered renders the captured hook calls of the session whose rollout is transcript,
// as the handlers record them: the turn's failed calls, which the Stop hook reads from the
// rollout, just before the Stop.
func liveRendered(t *testing.T, transcript string) []string {
	t.Helper()
	var out []string
	for _, c := range platformtest.Session(t, fixtures) {
		ev := memnodeEvent[c.Event]
		var p map[string]any
		if ev == "" || json.Unmarshal(c.Payload, &p) != nil || p["transcript_path"] != transcript {
			continue
		}
		p["transcript_path"] = filepath.Join(fixtures, transcript)
		b, _ := json.Marshal(p)
		in, err := Adapter{}.Normalize(ev, b)
		if err != nil {
			t.Fatal(err)
		}
		if ev == platform.EventSummarize {
			failed, err := Adapter{}.FailedCalls(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range failed {
				out = append(out, platformtest.Rendered(platform.EventObservation, f))
			}
		}
		if r := platformtest.Rendered(ev, in); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// TestReplayMatchesLiveHooks: each captured rollout, replayed, gives the hook calls Codex
// made for that session (captured in session.jsonl), as the adapter normalizes them — the
// failed apply_patch, for which Codex fires no hook, as the Stop hook records it.
func TestReplayMatchesLiveHooks(t *testing.T) {
	platformtest.ReplayMatchesLive(t, Adapter{}, fixtures, "/home/dev/demo-app", replayBytes, func(tr string) []string { return liveRendered(t, tr) })
	if !strings.Contains(strings.Join(liveRendered(t, "transcript-1.jsonl"), "\n"), "verification failed") {
		t.Error("the failed apply_patch is not among the live calls")
	}
}

// replayBytes replays a rollout of the fixtures (their exit codes are read from the file).
func replayBytes(b []byte) (platform.Replayed, error) {
	return Replay(bytes.NewReader(b), filepath.Join(fixtures, "transcript-1.jsonl"))
}

// TestHistoryLayout: the default folder follows CODEX_HOME; only rollout files are sessions.
func TestHistoryLayout(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	if got := history.Dir("/h", env("")); got != "/h/.codex/sessions" {
		t.Errorf("Dir = %s", got)
	}
	if got := history.Dir("/h", env("/c")); got != "/c/sessions" {
		t.Errorf("Dir with CODEX_HOME = %s", got)
	}
	dir := t.TempDir()
	for _, f := range []string{"2026/11/28/rollout-2026-11-28T09-14-00-a.jsonl", "2026/11/28/notes.jsonl", "x.json"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o700)
		os.WriteFile(filepath.Join(dir, f), nil, 0o600)
	}
	files, err := history.SessionFiles(dir, 0)
	if err != nil || len(files) != 1 || !strings.HasSuffix(files[0], "-a.jsonl") {
		t.Errorf("SessionFiles = %v, %v", files, err)
	}
}

func FuzzReplay(f *testing.F) { platformtest.FuzzReplay(f, Adapter{}, fixtures, replayBytes) }
