package agents

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/agentcli"
)

// cliSlots caps the agent CLIs and npm runs (Node.js processes, each a busy core while it
// starts) that this package's tests, which run in parallel, run at once: one per core but
// one, the last core left to the memnode nodes, the hooks the agents start and the other
// tests' setup. On 2 cores that is one: go test's -parallel (GOMAXPROCS) already keeps two
// tests running, and two agent CLIs at once went past their timeouts at load 10–19 (5 runs
// with no cap; Copilot's 1-minute run at load 12–15 with two slots).
// It is the package's test state, shared by its tests as their processes share the machine.
var cliSlots = newSlots(runtime.GOMAXPROCS(0) - 1)

// slots is a counting semaphore that knows who holds it, to say so when a test waits too long.
type slots struct {
	free    chan struct{}
	mu      sync.Mutex
	holders map[*slotHolder]bool
}

type slotHolder struct {
	test, what string
	since      time.Time
}

func newSlots(n int) *slots {
	n = max(n, 1)
	s := &slots{free: make(chan struct{}, n), holders: map[*slotHolder]bool{}}
	for range n {
		s.free <- struct{}{}
	}
	return s
}

// deadliner is the part of *testing.T that knows the test binary's -timeout.
type deadliner interface{ Deadline() (time.Time, bool) }

// slotMargin is how long before the test binary's deadline a test stops waiting for a slot:
// time to fail with a message that names the holders, instead of the binary's panic.
const slotMargin = 30 * time.Second

// take waits for a free slot to run what and returns its release. It waits until slotMargin
// before the test binary's deadline (without one, as long as it takes); then it fails the
// test saying that it got no slot and who held them. A run's own timeout starts once it has
// its slot.
func (s *slots) take(tb testing.TB, what string) (release func()) {
	tb.Helper()
	var expired <-chan time.Time
	if d, ok := tb.(deadliner); ok {
		if deadline, ok := d.Deadline(); ok {
			timer := time.NewTimer(time.Until(deadline) - slotMargin)
			defer timer.Stop()
			expired = timer.C
		}
	}
	start := time.Now()
	select {
	case <-s.free:
	default:
		select {
		case <-s.free:
		case <-expired:
			tb.Fatalf("waited %s for one of the %d agent-CLI slots to run %s, and the test binary's -timeout is %s away: %s",
				time.Since(start).Round(time.Second), cap(s.free), what, slotMargin, s.held())
			return func() {}
		}
	}
	if waited := time.Since(start); waited > time.Second {
		tb.Logf("waited %s for an agent-CLI slot to run %s", waited.Round(100*time.Millisecond), what)
	}
	h := &slotHolder{test: tb.Name(), what: what, since: time.Now()}
	s.mu.Lock()
	s.holders[h] = true
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.holders, h)
			s.mu.Unlock()
			s.free <- struct{}{}
		})
	}
}

// held names the slots' holders, what they run and for how long.
func (s *slots) held() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for h := range s.holders {
		out = append(out, fmt.Sprintf("%s runs %s (for %s)", h.test, h.what, time.Since(h.since).Round(time.Second)))
	}
	if len(out) == 0 {
		return "no test holds one now"
	}
	sort.Strings(out)
	return "held by " + strings.Join(out, "; ")
}

// runCLI is agentcli.Run holding an agent-CLI slot: timeout counts from the start of the
// process, not from the wait. It logs how long the run took.
func runCLI(tb testing.TB, timeout time.Duration, cmd *exec.Cmd) agentcli.Output {
	tb.Helper()
	what := strings.Join(append([]string{filepath.Base(cmd.Path)}, firstArg(cmd.Args)...), " ")
	release := cliSlots.take(tb, what)
	defer release()
	start := time.Now()
	o := agentcli.Run(tb, timeout, cmd)
	tb.Logf("%s ran %s", what, time.Since(start).Round(100*time.Millisecond))
	return o
}

// firstArg is the subcommand or flag after the program in args, for naming a run.
func firstArg(args []string) []string {
	if len(args) < 2 {
		return nil
	}
	return args[1:2]
}

// installCLI is agentcli.Install: a package the cache already holds is returned at once, and
// an npm install (a Node.js process) holds an agent-CLI slot.
func installCLI(tb testing.TB, pkg, version, bin string) string {
	tb.Helper()
	if exe, ok := agentcli.Installed(tb, pkg, version, bin); ok {
		return exe
	}
	release := cliSlots.take(tb, "npm install "+pkg+"@"+version)
	defer release()
	return agentcli.Install(tb, pkg, version, bin)
}

// deadlineTB is a test whose binary's deadline is at hand: a take that finds no free slot
// fails at once, into failed.
type deadlineTB struct {
	testing.TB
	name, failed string
}

func (f *deadlineTB) Name() string                      { return f.name }
func (f *deadlineTB) Deadline() (time.Time, bool)       { return time.Now(), true }
func (f *deadlineTB) Fatalf(format string, args ...any) { f.failed = fmt.Sprintf(format, args...) }

// TestCLISlotsCapTheRuns: two slots let two runs hold one and not a third, which fails at
// the deadline naming what it waited for and who held the slots; a released slot (released
// twice: once counts) goes to the next run.
func TestCLISlotsCapTheRuns(t *testing.T) {
	t.Parallel()
	s := newSlots(2)
	take := func(name, what string) (func(), string) {
		tb := &deadlineTB{TB: t, name: name}
		release := s.take(tb, what)
		return release, tb.failed
	}
	releaseA, failed := take("TestA", "claude -p")
	if failed != "" {
		t.Fatalf("the first run got no slot: %s", failed)
	}
	releaseB, failed := take("TestB", "npm install")
	if failed != "" {
		t.Fatalf("the second run got no slot: %s", failed)
	}
	_, failed = take("TestC", "codex exec")
	for _, want := range []string{"2 agent-CLI slots to run codex exec", "TestA runs claude -p", "TestB runs npm install"} {
		if !strings.Contains(failed, want) {
			t.Errorf("a third run beside two holders: %q, want a failure naming %q", failed, want)
		}
	}
	releaseA()
	releaseA()
	releaseC, failed := take("TestC", "codex exec")
	if failed != "" {
		t.Fatalf("a released slot did not go to the next run: %s", failed)
	}
	if _, failed = take("TestD", "qwen -p"); !strings.Contains(failed, "TestC runs codex exec") || strings.Contains(failed, "TestA") {
		t.Errorf("a slot released twice counted twice, or its holder stayed listed: %q", failed)
	}
	releaseB()
	releaseC()
	if s.held() != "no test holds one now" {
		t.Errorf("after every release: %s", s.held())
	}
}
