package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/internal/localnet"
)

// startTimeout bounds how long `memnode start` waits for a node that does not answer
// /health at all; one that answers is waited for while its start moves on (startWait).
const startTimeout = 20 * time.Second

// dialer is how this command reaches its node: the data dir's socket, or TCP when the
// settings ask for it.
func dialer(env *cliEnv) localnet.Dialer {
	return localnet.NewDialer(env.DataDir, env.Settings.Port, env.Settings.UseTCP())
}

// nodeHTTP is an HTTP client that reaches only env's node (see dialer).
func nodeHTTP(env *cliEnv) *http.Client { return &http.Client{Transport: dialer(env).Transport()} }

// health asks env's node with a fresh challenge. It fails with localnet.ErrNotOurNode when
// something answers but cannot prove it holds this data dir's token: such an answer is
// never trusted (a squatter on the port, a stale listener).
func health(ctx context.Context, env *cliEnv) (apitype.Health, error) {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	c, done := shortClient(env)
	defer done()
	return c.ProvenHealth(ctx)
}

// shortClient is a client of env's node for one short exchange; done closes its
// connections.
func shortClient(env *cliEnv) (*client.Client, func()) {
	d := dialer(env)
	hc := &http.Client{Transport: d.Transport()}
	return client.NewWithConfig(client.Config{BaseURL: d.BaseURL(), DataDir: env.DataDir, HTTPClient: hc}), hc.CloseIdleConnections
}

// portTaken reports whether something that is not this data dir's node holds the TCP port:
// it accepts connections but does not prove it holds the token (or there is no token yet).
func portTaken(ctx context.Context, env *cliEnv) bool {
	d := localnet.NewDialer(env.DataDir, env.Settings.Port, true)
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", d.TCPAddr)
	if err != nil {
		return false
	}
	c.Close()
	c, err = d.DialContext(ctx)
	if err != nil {
		return true
	}
	c.Close()
	return false
}

// errPortTaken is what start and status say about a squatted port.
func errPortTaken(env *cliEnv) error {
	return fmt.Errorf("port %d is taken by something else (it did not prove it is the node of %s); stop that program or set MEMNODE_PORT", env.Settings.Port, env.DataDir)
}

// startNode starts the node detached if it is not running and waits until it is ready.
func startNode(ctx context.Context, env *cliEnv) error {
	_, err := health(ctx, env)
	if err == nil {
		return waitReady(ctx, env, nil)
	}
	if errors.Is(err, localnet.ErrNotOurNode) {
		if env.Settings.UseTCP() {
			return errPortTaken(env)
		}
		return err
	}
	// A listener that accepts but never answers (not HTTP, or hung) fails the probe by
	// timeout, not by a wrong proof: a node started now would serve only its socket, which
	// this TCP client never reaches, and start would wait for nothing.
	if env.Settings.UseTCP() && portTaken(ctx, env) {
		return errPortTaken(env)
	}
	exe, err := daemonExe() // memnoded runs the node
	if err != nil {
		return err
	}
	if err := os.MkdirAll(datadir.Dir(env.DataDir).Logs(), 0o700); err != nil {
		return fmt.Errorf("create log dir: %w", err)
	}
	logPath := datadir.Dir(env.DataDir).NodeLog()
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	defer logf.Close()
	logStart, _ := logf.Seek(0, io.SeekEnd) // where this child's output begins
	cmd := exec.Command(exe, "run")
	cmd.Env = append(os.Environ(), "MEMNODE_DATA_DIR="+env.DataDir, "MEMNODE_PORT="+strconv.Itoa(env.Settings.Port))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // survives the hook or shell that started it
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start node: %w", err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if line := failLine(logPath, logStart); line != "" {
			err = fmt.Errorf("%s (log: %s)", line, logPath)
		} else {
			err = fmt.Errorf("%v; see %s", err, logPath)
		}
		exited <- err
	}()
	err = waitReady(ctx, env, exited)
	if errors.Is(err, context.DeadlineExceeded) {
		// Still starting after the timeout: say where it was, from its own log.
		if msg := lastLogMsg(logPath, logStart); msg != "" {
			err = fmt.Errorf("%w; its log's last line says %q (log: %s)", err, msg, logPath)
		}
	}
	return err
}

// lastLogMsg returns the msg of the last slog line (`… msg="…"` or `msg=word`) the node
// wrote to its log after offset, or "".
func lastLogMsg(logPath string, offset int64) string {
	msg := ""
	for _, line := range strings.Split(logSince(logPath, offset), "\n") {
		_, rest, ok := strings.Cut(line, " msg=")
		if !ok {
			continue
		}
		if strings.HasPrefix(rest, `"`) {
			if q, err := strconv.QuotedPrefix(rest); err == nil {
				if u, err := strconv.Unquote(q); err == nil {
					msg = u
				}
			}
			continue
		}
		msg, _, _ = strings.Cut(rest, " ")
	}
	return msg
}

// failLine returns the last one-line failure ("memnode: run: …", see fail) the node wrote
// to its log after offset, without the "memnode: " prefix, or "".
func failLine(logPath string, offset int64) string {
	last := ""
	for _, line := range strings.Split(logSince(logPath, offset), "\n") {
		if rest, ok := strings.CutPrefix(line, "memnode: "); ok {
			last = rest
		}
	}
	return last
}

// logSince is what the node's log holds after offset (at most 1 MiB), or "".
func logSince(logPath string, offset int64) string {
	f, err := os.Open(logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	return string(b)
}

// waitReady polls /health until the node is ready, ctx ends, or the child exits; it waits
// on the node's progress (startWait), not a fixed time.
func waitReady(ctx context.Context, env *cliEnv, exited <-chan error) error {
	return startWait{noAnswer: startTimeout, stall: stallTimeout, slow: slowStart, say: env.Stderr}.wait(ctx, env, exited)
}

// stallTimeout is how long a node that answers /health may stay in one start phase without
// a step before `memnode start` gives up on it; slowStart is how long a start runs before
// start says what the node is doing.
const (
	stallTimeout = time.Minute
	slowStart    = time.Second
)

// startWait is how `memnode start` waits for the node it started (issue 29): as long as the
// node's start moves on — /health reports its phase and a count of steps — with no overall
// limit, so a big database's migration or a loaded machine is waited out, while a node that
// never answers (noAnswer) or stays on one step (stall; not a migration, which reports itself
// unbounded: one SQL script as long as the database is big) fails with what it was doing. Once
// the wait has lasted slow, each phase is printed to say (the hook discards it).
type startWait struct {
	noAnswer, stall, slow time.Duration
	say                   io.Writer
}

func (w startWait) wait(ctx context.Context, env *cliEnv, exited <-chan error) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	t0 := time.Now()
	moved := t0 // the last sign of progress: the start of the wait, or a new step
	var steps uint64
	phase, said, answered, unbounded := "", "", false, false
	for {
		if h, err := health(ctx, env); err == nil {
			if h.Ready {
				return nil
			}
			// Up but not ready: starting, or stopped for good by a corrupt database (a node
			// past its start, or one too old to name its phase: a node still starting is
			// not asked for its status, which reads the database it is opening).
			var st apitype.Status
			if (h.Phase == "" || h.Phase == "ready") && apiGet(ctx, env, "/api/status", &st) == nil && st.Storage.State == apitype.StorageCorrupt {
				return fmt.Errorf("the node (pid %d) is up but stopped taking writes: %s", h.PID, st.Storage.Message)
			}
			if !answered || h.Steps != steps || h.Phase != phase {
				moved = time.Now()
			}
			answered, steps, phase, unbounded = true, h.Steps, h.Phase, h.Unbounded
			if phase != "" && phase != said && time.Since(t0) >= w.slow && w.say != nil {
				fmt.Fprintf(w.say, "memnode start: %s…\n", phase)
				said = phase
			}
		}
		select {
		case err := <-exited:
			// Several hooks may start the node at once: one child wins the data dir's lock,
			// the others exit. While the winner holds the lock, wait for it to be ready.
			exited = nil
			if datadir.Held(env.DataDir) {
				continue
			}
			return fmt.Errorf("node exited during start: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("node not ready (%s): %w", orStarting(phase), ctx.Err())
		case <-tick.C:
		}
		switch {
		case !answered && time.Since(t0) > w.noAnswer:
			return fmt.Errorf("node not ready: no answer after %s: %w", w.noAnswer, context.DeadlineExceeded)
		case answered && !unbounded && time.Since(moved) > w.stall:
			return fmt.Errorf("node not ready: no progress for %s while %s: %w", w.stall, orStarting(phase), context.DeadlineExceeded)
		}
	}
}

// orStarting is phase, or "starting" from a node that names none.
func orStarting(phase string) string {
	if phase == "" {
		return "starting"
	}
	return phase
}

func cmdStart(ctx context.Context, env *cliEnv, args []string) int {
	if _, code, ok := newFlags(env, "start", "start").parse(args, 0, 0); !ok {
		return code
	}
	_, err := health(ctx, env)
	wasUp := err == nil
	if err := startNode(ctx, env); err != nil {
		return fail(env, "start: %v", err)
	}
	h, _ := health(ctx, env)
	if wasUp {
		fmt.Fprintf(env.Stdout, "memnode already running (pid %d) on 127.0.0.1:%d\n", h.PID, env.Settings.Port)
	} else {
		fmt.Fprintf(env.Stdout, "memnode started (pid %d) on 127.0.0.1:%d, data in %s\n", h.PID, env.Settings.Port, env.DataDir)
	}
	return 0
}

func cmdStop(ctx context.Context, env *cliEnv, args []string) int {
	if _, code, ok := newFlags(env, "stop", "stop").parse(args, 0, 0); !ok {
		return code
	}
	pid, err := datadir.ReadPIDFile(env.DataDir)
	if err != nil || !datadir.Alive(pid.PID) {
		fmt.Fprintln(env.Stdout, "memnode is not running")
		return 0
	}
	// A stale pid file may name another data dir's node (pids are reused): signal only the
	// process that holds this data dir's lock.
	if holder, known := datadir.LockHolder(env.DataDir); known {
		if holder != pid.PID {
			if holder == 0 {
				fmt.Fprintln(env.Stdout, "memnode is not running (stale pid file)")
				return 0
			}
			return fail(env, "stop: pid file names %d but this data dir's lock is held by %d; not stopping anything", pid.PID, holder)
		}
	} else if h, err := health(ctx, env); err != nil || h.PID != pid.PID {
		return fail(env, "stop: pid %d did not prove it is this data dir's node; not stopping anything", pid.PID)
	}
	if err := syscall.Kill(pid.PID, syscall.SIGTERM); err != nil {
		return fail(env, "stop: signal %d: %v", pid.PID, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if !datadir.Alive(pid.PID) {
			fmt.Fprintf(env.Stdout, "memnode stopped (pid %d)\n", pid.PID)
			return 0
		}
		time.Sleep(20 * time.Millisecond) // polling a process we cannot wait on
	}
	return fail(env, "stop: pid %d still running after 20s", pid.PID)
}

// apiGet calls the node's API with the data dir's token and decodes the JSON answer (or,
// for out of type *string, returns the text).
func apiGet(ctx context.Context, env *cliEnv, path string, out any) error {
	hc := nodeHTTP(env)
	defer hc.CloseIdleConnections()
	c := client.NewWithConfig(client.Config{BaseURL: dialer(env).BaseURL(), DataDir: env.DataDir, HTTPClient: hc})
	if s, ok := out.(*string); ok {
		b, err := c.Raw(ctx, http.MethodGet, path, nil, 64<<20)
		*s = string(b)
		return err
	}
	return c.Call(ctx, http.MethodGet, path, nil, out)
}

func cmdContext(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "context", "context [--project P]")
	project := fs.String("project", "", "project name (default: git root name of the current directory)")
	if _, code, ok := fs.parse(args, 0, 0); !ok {
		return code
	}
	if *project == "" {
		wd, _ := os.Getwd()
		*project = projectName(wd)
	}
	if err := startNode(ctx, env); err != nil {
		return fail(env, "context: %v", err)
	}
	var text string
	if err := apiGet(ctx, env, "/api/context?project="+urlQueryEscape(*project), &text); err != nil {
		return fail(env, "context: %v", err)
	}
	if text == "" {
		fmt.Fprintf(env.Stderr, "memnode: no memory yet for project %q\n", *project)
		return 0
	}
	fmt.Fprint(env.Stdout, text)
	return 0
}
