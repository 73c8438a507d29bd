package hooks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/memory"
)

func spoolEvent(i int) apitype.Event {
	return apitype.Event{EventID: fmt.Sprintf("%032x", i), Kind: memory.KindObservation, SessionID: "s", Project: "p",
		At: time.Date(2026, 11, 28, 0, 0, i, 0, time.UTC), ToolName: "Bash"}
}

// collect drains into a slice.
func collect(t *testing.T, dir string) []apitype.Event {
	t.Helper()
	var got []apitype.Event
	n, err := DrainSpool(dir, func(evs []apitype.Event) error {
		got = append(got, evs...)
		return nil
	})
	if err != nil || n != len(got) {
		t.Fatalf("drain: n=%d len=%d err=%v", n, len(got), err)
	}
	return got
}

func TestSpoolAppendDrain(t *testing.T) {
	dir := t.TempDir()
	if got := collect(t, dir); len(got) != 0 {
		t.Fatalf("empty data dir drained %d", len(got))
	}
	for i := range 600 { // more than two batches
		if err := AppendSpool(dir, spoolEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "spool", "events.jsonl"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("spool file mode %v err %v", fi.Mode(), err)
	}
	if di, _ := os.Stat(filepath.Join(dir, "spool")); di.Mode().Perm() != 0o700 {
		t.Fatalf("spool dir mode %v", di.Mode())
	}
	got := collect(t, dir)
	if len(got) != 600 {
		t.Fatalf("drained %d", len(got))
	}
	for i, ev := range got {
		if ev.EventID != spoolEvent(i).EventID {
			t.Fatalf("event %d out of order: %s", i, ev.EventID)
		}
	}
	if left := spoolFiles(t, dir); len(left) != 0 {
		t.Fatalf("files left after a full drain: %v", left)
	}
	if got := collect(t, dir); len(got) != 0 {
		t.Fatalf("second drain replayed %d", len(got))
	}
}

func TestDrainKeepsFileWhenFnFails(t *testing.T) {
	dir := t.TempDir()
	for i := range 3 {
		if err := AppendSpool(dir, spoolEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	boom := errors.New("db closed")
	n, err := DrainSpool(dir, func([]apitype.Event) error { return boom })
	if !errors.Is(err, boom) || n != 0 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	// Hooks keep appending meanwhile; the next drain replays old then new.
	if err := AppendSpool(dir, spoolEvent(3)); err != nil {
		t.Fatal(err)
	}
	got := collect(t, dir)
	if len(got) != 4 || got[0].EventID != spoolEvent(0).EventID || got[3].EventID != spoolEvent(3).EventID {
		t.Fatalf("after failure, drained %+v", got)
	}
}

func TestDrainLeftoverReplayingAndTornLine(t *testing.T) {
	dir := t.TempDir()
	sp := filepath.Join(dir, "spool")
	if err := os.MkdirAll(sp, 0o700); err != nil {
		t.Fatal(err)
	}
	// A drain crashed after rotating: its .replaying file is still there, and its last line
	// was torn by a crash during an append.
	good, _ := jsonLine(spoolEvent(0))
	torn := append(append([]byte{}, good...), []byte(`{"event_id":"0000000000000000000000000000000f","kind":"obs`)...)
	if err := os.WriteFile(filepath.Join(sp, "events-00000000000000000001.replaying"), torn, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AppendSpool(dir, spoolEvent(1)); err != nil {
		t.Fatal(err)
	}
	got := collect(t, dir)
	if len(got) != 2 || got[0].EventID != spoolEvent(0).EventID || got[1].EventID != spoolEvent(1).EventID {
		t.Fatalf("drained %+v", got)
	}
	if left := spoolFiles(t, dir); len(left) != 0 {
		t.Fatalf("left: %v", left)
	}
}

func jsonLine(ev apitype.Event) ([]byte, error) {
	var b []byte
	dir, err := os.MkdirTemp("", "line")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := AppendSpool(dir, ev); err != nil {
		return nil, err
	}
	b, err = os.ReadFile(filepath.Join(dir, "spool", "events.jsonl"))
	return b, err
}

// Hooks append while the node drains, repeatedly: every event is delivered exactly once.
func TestSpoolConcurrentAppendDuringDrain(t *testing.T) {
	dir := t.TempDir()
	const writers, each = 8, 60
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := AppendSpool(dir, spoolEvent(w*each+i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	seen := map[string]int{}
	drain := func() {
		if _, err := DrainSpool(dir, func(evs []apitype.Event) error {
			for _, ev := range evs {
				seen[ev.EventID]++
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			drain()
		}
	}
	drain()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != writers*each {
		t.Fatalf("delivered %d distinct events, want %d", len(seen), writers*each)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("event %s delivered %d times", id, n)
		}
	}
}

func TestSpoolFull(t *testing.T) {
	dir := t.TempDir()
	sp := filepath.Join(dir, "spool")
	if err := os.MkdirAll(sp, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(sp, "events.jsonl"), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxSpoolBytes); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	f.Close()
	if err := AppendSpool(dir, spoolEvent(1)); !errors.Is(err, ErrSpoolFull) {
		t.Fatalf("err = %v, want ErrSpoolFull", err)
	}
}

// spoolFiles lists the spool's data files (the lock file stays).
func spoolFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "spool"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Name() != ".lock" {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestOldSpoolLineStillReplays: a line an older hook spooled (no version: apitype.Event's
// JSON as it wrote it, byte for byte) is replayed with every field, beside a line of today's
// format, which carries its version.
func TestOldSpoolLineStillReplays(t *testing.T) {
	dir := t.TempDir()
	old := `{"event_id":"0123456789abcdef0123456789abcdef","kind":"observation","platform":"claude-code","session_id":"s1","project":"billing","cwd":"/w/billing","at":"2026-11-28T10:00:00Z","tool_name":"Bash","tool_use_id":"toolu_1","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok"},"agent_id":"a1","agent_type":"sub"}` + "\n"
	if err := os.MkdirAll(filepath.Join(dir, "spool"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "spool", "events.jsonl"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AppendSpool(dir, spoolEvent(1)); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "spool", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(raw)), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], `{"v":1,`) {
		t.Fatalf("today's line is not versioned: %q", lines)
	}
	got := collect(t, dir)
	if len(got) != 2 {
		t.Fatalf("replayed %d events, want 2", len(got))
	}
	ev := got[0]
	if ev.EventID != "0123456789abcdef0123456789abcdef" || ev.Kind != memory.KindObservation || ev.Platform != "claude-code" ||
		ev.SessionID != "s1" || ev.Project != "billing" || ev.Cwd != "/w/billing" || !ev.At.Equal(time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)) ||
		ev.ToolName != "Bash" || ev.ToolUseID != "toolu_1" || string(ev.ToolInput) != `{"command":"go test ./..."}` ||
		string(ev.ToolResponse) != `{"stdout":"ok"}` || ev.AgentID != "a1" || ev.AgentType != "sub" {
		t.Fatalf("old line replayed as %+v", ev)
	}
	if got[1].EventID != spoolEvent(1).EventID || got[1].ToolName != "Bash" {
		t.Fatalf("today's line replayed as %+v", got[1])
	}
}

// TestSpoolLineCarriesEveryEventField: an event field the spool line has no place for would
// be lost by every event spooled while the node is down.
func TestSpoolLineCarriesEveryEventField(t *testing.T) {
	line := jsonNames(reflect.TypeFor[spoolLine]())
	for _, name := range jsonNames(reflect.TypeFor[apitype.Event]()) {
		if !slices.Contains(line, name) {
			t.Errorf("apitype.Event's %q has no place in the spool line (spoolline.go): add it there, to spoolLineOf and to event", name)
		}
	}
}

func jsonNames(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}
