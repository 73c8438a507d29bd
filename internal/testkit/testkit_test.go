package testkit

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a testing.TB whose cleanups run when the test says so and whose failures
// are recorded, not reported.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	errs     []string
}

func (r *recorder) Helper()          {}
func (r *recorder) Failed() bool     { return false }
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); panic(r) }

func (r *recorder) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestLeakCheckReportsARunningGoroutine(t *testing.T) {
	rec := &recorder{TB: t}
	leakCheck(rec, 50*time.Millisecond)
	stop := make(chan struct{})
	goLeakyPart(stop)
	goLeakyPart(stop) // the same stack: one profile entry for two goroutines
	rec.runCleanups()
	close(stop)
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "leakyPart") || !strings.HasPrefix(rec.errs[0], "2 goroutines ") {
		t.Fatalf("errors = %q; want one naming leakyPart and counting 2 goroutines", rec.errs)
	}
}

// goLeakyPart starts leakyPart and returns once it runs: a goroutine that has not started
// yet shows no function of its own in the goroutine profile, only that it exists.
func goLeakyPart(stop chan struct{}) {
	started := make(chan struct{})
	go leakyPart(started, stop)
	<-started
}

func leakyPart(started, stop chan struct{}) {
	close(started)
	<-stop
}

func TestLeakCheckWaitsForGoroutinesOnTheirWayOut(t *testing.T) {
	rec := &recorder{TB: t}
	leakCheck(rec, 10*time.Second)
	stop := make(chan struct{})
	goLeakyPart(stop)
	time.AfterFunc(20*time.Millisecond, func() { close(stop) }) // a Close that returns before its goroutine ends
	rec.runCleanups()
	if len(rec.errs) != 0 {
		t.Fatalf("errors = %q; want none once the goroutine ended", rec.errs)
	}
}

// TestLeakCheckSeesOnlyTheTestsOwnGoroutines: a goroutine started by a goroutine that ended
// before the check is still the test's; one started at the same time by a goroutine the test
// did not start (a parallel test's) is not.
func TestLeakCheckSeesOnlyTheTestsOwnGoroutines(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	startOther := make(chan struct{})
	otherStarted := make(chan struct{})
	go func() { // another test's goroutine, running before this test's check began
		<-startOther
		go otherTestsPart(stop)
		close(otherStarted)
	}()
	rec := &recorder{TB: t}
	leakCheck(rec, 50*time.Millisecond)
	close(startOther)
	<-otherStarted
	ended := make(chan struct{})
	go func() { goLeakyPart(stop); close(ended) }()
	<-ended
	rec.runCleanups()
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "leakyPart") || strings.Contains(rec.errs[0], "otherTestsPart") {
		t.Fatalf("errors = %q; want one naming leakyPart and not otherTestsPart", rec.errs)
	}
}

func otherTestsPart(stop chan struct{}) { <-stop }

// A helper that starts a part and checks it may be called again while the first part runs
// (node's startEmbedNode, in a loop): each check sees only what was started after its own
// call, and runs after that part's Close.
func TestLeakCheckCalledAgainChecksWhatItStartedAfter(t *testing.T) {
	rec := &recorder{TB: t}
	var stops []chan struct{}
	defer func() {
		for _, s := range stops {
			select {
			case <-s:
			default:
				close(s)
			}
		}
	}()
	for range 2 {
		leakCheck(rec, 50*time.Millisecond)
		stop := make(chan struct{})
		stops = append(stops, stop)
		go otherTestsPart(stop)
		rec.Cleanup(func() { close(stop) })
	}
	rec.runCleanups()
	if len(rec.errs) != 0 {
		t.Fatalf("errors = %q; want none: each part was stopped before its check", rec.errs)
	}
}

func TestWaitForStateNamesTheLastState(t *testing.T) {
	rec := &recorder{TB: t}
	func() {
		defer func() { recover() }()
		WaitForState(rec, "the answer", 30*time.Millisecond, func() (bool, string) { return false, "still 41" })
	}()
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "the answer: still 41") {
		t.Fatalf("errors = %q", rec.errs)
	}
	n := 0
	WaitFor(t, "three polls", time.Second, func() bool { n++; return n == 3 })
}

func TestOpenReplica(t *testing.T) {
	r := OpenReplica(t, "origin-a")
	if r.Origin() != "origin-a" {
		t.Fatalf("origin = %q", r.Origin())
	}
}

func TestFilesContainingSkipsSocketsAndFindsNestedFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "spool"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"a.db": "no", "spool/b.jsonl": "has NEEDLE", "c.log": "NEEDLE too"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("unix", filepath.Join(dir, "memnode.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := FilesContaining(t, dir, "NEEDLE")
	sort.Strings(got)
	if strings.Join(got, ",") != "c.log,spool/b.jsonl" {
		t.Fatalf("FilesContaining = %v", got)
	}
}
