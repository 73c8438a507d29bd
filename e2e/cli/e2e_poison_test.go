package cli

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/logfile"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/store"
)

// checkLogs fails when a log of the data dir passes its size cap or holds a line over the
// line cap.
func checkLogs(t *testing.T, dataDir string) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dataDir, "logs", "*"))
	for _, p := range logs {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > logfile.DefaultMaxBytes {
			t.Errorf("%s: %d bytes, over the %d cap", p, fi.Size(), logfile.DefaultMaxBytes)
		}
		f, _ := os.Open(p)
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			if len(sc.Bytes())+1 > logfile.DefaultMaxLine {
				t.Errorf("%s: a line of %d bytes", p, len(sc.Bytes()))
				break
			}
		}
		f.Close()
	}
}

// TestPoisonEventEnds is issue 26's poison "done when": a hook with a 20 MiB session_id is
// refused at ingest (the hook still exits 0, nothing is queued); an event already queued
// that can never be processed (a 2 MiB session_id queued before the check existed) is
// retried at most store.MaxAttempts times, then set aside: `memnode status` shows it,
// the logs stay under their caps, `memnode doctor` names it with its fix, and
// `memnode repair --purge-dead` deletes it.
func TestPoisonEventEnds(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipped in -short")
	}
	in := e2ekit.NewInstance(t)
	in.Start()
	huge := strings.Repeat("p", 20<<20)
	body := fmt.Sprintf(`{"session_id":%q,"transcript_path":"","cwd":%q,"hook_event_name":"UserPromptSubmit","prompt":"poison"}`, huge, in.DataDir)
	if r := in.RunLean([]byte(body), "hook", "claude-code", "session-init"); r.Code != 0 {
		t.Fatalf("hook with a 20 MiB session_id: exit %d: %.500s", r.Code, r.Stderr)
	}
	if q := in.Queued(); q != 0 {
		t.Fatalf("the 20 MiB session_id was queued (%d)", q)
	}
	checkLogs(t, in.DataDir)

	// A poison event in the queue: the node stopped, a row no build can commit.
	in.MustRun(nil, "stop")
	q, err := sql.Open("sqlite3", "file:"+filepath.Join(in.DataDir, "memnode.queue.db")+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	sid := strings.Repeat("s", 2<<20)
	ev, _ := json.Marshal(map[string]any{"event_id": "poison-1", "kind": "prompt", "platform": "claude-code",
		"session_id": sid, "project": "poison", "prompt": "poison prompt", "at": time.Now().UTC()})
	if _, err := q.Exec(`INSERT INTO pending(event_id, kind, session_id, project, payload, created_at) VALUES ('poison-1', 'prompt', ?, 'poison', ?, ?)`,
		sid, ev, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	q.Close()
	in.Start()
	testkit.WaitFor(t, "the poison event set aside", 5*time.Minute, func() bool {
		return strings.Contains(in.MustRun(nil, "status"), "1 event set aside after failing")
	})
	if n := in.Queued(); n != 0 {
		t.Fatalf("%d events still queued", n)
	}
	checkLogs(t, in.DataDir)
	if r := in.Run(nil, "doctor"); r.Code != 1 || !strings.Contains(r.Stdout, "FAIL queue       1 event set aside after failing") || !strings.Contains(r.Stdout, "repair --purge-dead") {
		t.Fatalf("doctor with a dead event: exit %d\n%s", r.Code, r.Stdout)
	}
	in.MustRun(nil, "stop")
	if out := in.MustRun(nil, "repair", "--purge-dead"); !strings.Contains(out, "deleted 1 dead event") {
		t.Fatalf("repair --purge-dead: %s", out)
	}
	in.Start()
	if out := in.MustRun(nil, "status"); strings.Contains(out, "set aside") {
		t.Fatalf("status after the purge: %s", out)
	}
	// Attempts are bounded: the node logged at most MaxAttempts failures of it.
	log, _ := os.ReadFile(filepath.Join(in.DataDir, "logs", "memnode.log"))
	if n := strings.Count(string(log), "processing failed"); n == 0 || n > store.MaxAttempts {
		t.Fatalf("%d failures logged, want 1..%d", n, store.MaxAttempts)
	}
}
