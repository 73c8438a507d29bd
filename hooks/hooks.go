// Package hooks is the short-lived IDE side of memnode: it reads one hook payload, strips
// everything private from it, and hands it to the node, or to the spool when the node is down.
package hooks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memnode/memnode/capture"
	"github.com/memnode/memnode/client"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/internal/localnet"
	"github.com/memnode/memnode/internal/logfile"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/platform"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/privacy"
)

// Defaults for Config fields left zero.
const (
	DefaultTimeout           = 10 * time.Second
	DefaultFailLoudThreshold = 3
	// MaxInputBytes caps the stdin payload; tool responses can be large but not unbounded.
	MaxInputBytes = 32 << 20
)

// mediaPrompt stands in for a prompt without text (an image or voice input).
const mediaPrompt = "[media prompt]"

// Config is everything one hook invocation needs; cmd/ fills it from the settings.
type Config struct {
	// DataDir holds token, spool/, state/ and logs/. Empty disables spooling and the
	// failure counter (the hook still answers).
	DataDir string
	// BaseURL of the node, e.g. http://127.0.0.1:38800.
	BaseURL string
	// Dialer, when set, is how the private client reaches the node (the data dir's socket,
	// or TCP after the listener's proof); nil dials BaseURL's host directly.
	Dialer *localnet.Dialer
	// Timeout bounds the whole hook, stdin to stdout.
	Timeout time.Duration
	// FailLoudThreshold is how many consecutive hooks without node contact make a hook
	// exit 2 with one stderr line.
	FailLoudThreshold int
	// ExcludedProjects are path.Match globs on the project name; such projects are ignored.
	ExcludedProjects []string
	// SkipTools are tool names whose calls are not recorded.
	SkipTools []string
	// OptIn records only tracked projects (setting capture: opt-in; see package capture).
	OptIn bool
	// ProjectDir is the agent's project root when it names one (Claude Code's
	// CLAUDE_PROJECT_DIR); it names the project instead of the working dir.
	ProjectDir string
	// WorkDir is the hook process's working directory: the Cwd of a payload that names
	// none (Windsurf runs Cascade hooks in the workspace root and sends no directory).
	WorkDir string
	// HomeDir, when set, is never taken as a project root (a dotfiles repo in $HOME would
	// otherwise swallow every project below it).
	HomeDir string
	// Start starts the node and returns when it is ready; nil disables auto-start.
	Start func(ctx context.Context) error
	// HTTPClient talks to the node; nil means a private client whose idle connections are
	// closed when Run returns.
	HTTPClient *http.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Version of memnode, sent as User-Agent.
	Version string
	// TokenDir is where Replay reads the node's token (the data dir; Replay keeps DataDir
	// empty so that it spools nothing).
	TokenDir string
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.FailLoudThreshold <= 0 {
		c.FailLoudThreshold = DefaultFailLoudThreshold
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	return c
}

// Run executes one hook: it reads the platform's payload from stdin, writes exactly one JSON
// object to stdout and returns the exit code. It never fails the IDE: the answer is neutral
// on any internal error, and the code is 0 unless the node has been out of reach for
// FailLoudThreshold hooks in a row, or an event could be neither handed to the node nor
// spooled (then 2 at once); either way with one line on stderr.
func Run(ctx context.Context, cfg Config, p platform.Platform, event string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()

	h := &hook{cfg: cfg, platform: p.Name, ad: p.Adapter, event: event, stderr: stderr}
	var hc *http.Client
	if cfg.HTTPClient != nil {
		hc = cfg.HTTPClient
	} else {
		tr := &http.Transport{
			Proxy:               nil, // the node is on loopback; never route it through a proxy
			DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 1,
		}
		if cfg.Dialer != nil {
			tr = cfg.Dialer.Transport()
		}
		hc = &http.Client{Transport: tr}
		// Close keep-alive connections so no transport goroutine outlives Run.
		defer hc.CloseIdleConnections()
	}
	h.api = client.NewWithConfig(client.Config{BaseURL: cfg.BaseURL, DataDir: cfg.DataDir,
		UserAgent: "memnode-hook/" + cfg.Version, HTTPClient: hc})

	out, code := h.run(ctx, stdin)
	if !validObject(out) {
		out = []byte("{}")
	}
	_, _ = stdout.Write(append(out, '\n'))
	return code
}

// hook is the state of one invocation.
type hook struct {
	cfg      Config
	platform string
	ad       platform.Adapter
	event    string
	stderr   io.Writer
	api      *client.Client

	// replay, when set, is the past hook call being imported: its events take its ID and
	// time instead of fresh ones.
	replay *platform.Recorded
	// minted counts the events this invocation made (a replay's second event gets a
	// suffixed ID).
	minted int

	startTried bool
	// reached and missed record whether the node answered / failed to answer during this
	// invocation; they drive the consecutive-failure counter.
	reached, missed bool
	// lost is why an event could be neither handed to the node nor spooled.
	lost error
}

// Replay runs one hook call of a past session (an import) exactly as the hook ran live —
// the platform's adapter, the privacy gate, the handlers and the recording policy — but
// with the call's own event ID and time, so importing the same transcript again stores
// nothing new (the node keeps every event ID it stored). Nothing is spooled: a node that
// does not take the event is an error.
func Replay(ctx context.Context, cfg Config, p platform.Platform, rec platform.Recorded) error {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	hc := cfg.HTTPClient
	if hc == nil {
		tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1}
		if cfg.Dialer != nil {
			tr = cfg.Dialer.Transport()
		}
		hc = &http.Client{Transport: tr}
		defer hc.CloseIdleConnections()
	}
	cfg.DataDir = "" // no spool, no failure counter, no hook.log: the caller reports
	h := &hook{cfg: cfg, platform: p.Name, ad: p.Adapter, event: rec.Event, stderr: io.Discard, replay: &rec,
		api: client.NewWithConfig(client.Config{BaseURL: cfg.BaseURL, DataDir: cfg.TokenDir, UserAgent: "memnode-import/" + cfg.Version, HTTPClient: hc})}
	handle := handlerFor(rec.Event)
	if handle == nil {
		return fmt.Errorf("replay: unknown hook event %q", rec.Event)
	}
	if (rec.Event == platform.EventObservation || rec.Event == platform.EventSummarize) &&
		rec.TurnPrompt != "" && privacy.IsEmptyAfterClean(rec.TurnPrompt) {
		// A wholly private turn: live, the node refuses its calls and the Stop hook its
		// answer; an import never sends them (a refused event leaves no trace to dedupe by).
		return nil
	}
	raw, cleaned, err := decodeInput(ctx, bytes.NewReader(rec.Payload))
	if err != nil {
		return fmt.Errorf("replay %s: %w", rec.ID, err)
	}
	in, err := p.Adapter.Normalize(rec.Event, cleaned)
	if err != nil {
		return fmt.Errorf("replay %s: normalize: %w", rec.ID, err)
	}
	if err := cleanJoined(p.Adapter, rec.Event, raw, &in); err != nil {
		return fmt.Errorf("replay %s: %w", rec.ID, err)
	}
	if rec.Event == platform.EventContext {
		// The session start is recorded; the context it would fetch is nobody's.
		project := h.project(&in)
		if h.excluded(&in, project) {
			return nil
		}
		ev := h.newEvent(memory.KindSessionStart, &in, project)
		ev.Reason = in.Reason
		return h.send(ctx, ev)
	}
	if _, err := handle(ctx, h, &in); err != nil {
		return fmt.Errorf("replay %s: %w", rec.ID, err)
	}
	if h.lost != nil || h.nodeDown() {
		return fmt.Errorf("replay %s: %w", rec.ID, ErrUnreachable)
	}
	return nil
}

// nodeDown reports that the node failed to answer this invocation and never answered it:
// a further request would only spend the hook's budget again.
func (h *hook) nodeDown() bool { return h.missed && !h.reached }

// run returns the stdout JSON and the exit code.
func (h *hook) run(ctx context.Context, stdin io.Reader) (out []byte, code int) {
	ad := h.ad
	neutral := func() []byte {
		b, err := ad.Format(h.event, platform.Result{})
		if err != nil {
			return []byte("{}")
		}
		return b
	}
	defer func() {
		// A bug must not break the IDE. The panic value is not printed: it may quote input.
		if r := recover(); r != nil {
			h.logf("internal error in %s/%s hook (recovered)", h.platform, h.event)
			out, code = neutral(), 0
		}
	}()

	handle := handlerFor(h.event)
	if handle == nil {
		fmt.Fprintf(h.stderr, "memnode: unknown hook event %q for %s\n", h.event, h.platform)
		return neutral(), 0
	}

	// Budget: network work stops early enough to spool and answer inside Timeout.
	opCtx, cancel := context.WithDeadline(ctx, h.opDeadline(ctx))
	defer cancel()

	raw, cleaned, err := decodeInput(opCtx, stdin)
	if err != nil {
		h.logf("%s/%s hook: %v", h.platform, h.event, err)
		return neutral(), 0
	}
	in, err := ad.Normalize(h.event, cleaned)
	if err != nil {
		h.logf("%s/%s hook: normalize input: %v", h.platform, h.event, err)
		return neutral(), 0
	}
	if in.Cwd == "" {
		in.Cwd = h.cfg.WorkDir
	}
	if err := cleanJoined(ad, h.event, raw, &in); err != nil {
		h.logf("%s/%s hook: %v", h.platform, h.event, err)
		return neutral(), 0
	}
	raw = nil

	res, err := handle(opCtx, h, &in)
	if err != nil {
		h.logf("%s/%s hook: %v", h.platform, h.event, err)
		res = platform.Result{}
	}
	out, ferr := ad.Format(h.event, res)
	if ferr != nil {
		h.logf("%s/%s hook: format output: %v", h.platform, h.event, ferr)
		out = neutral()
	}
	return out, h.settleFailures()
}

// opDeadline leaves a tenth of the budget (at least 50ms, at most 1s) for spooling and output.
func (h *hook) opDeadline(ctx context.Context) time.Time {
	dl, _ := ctx.Deadline()
	reserve := min(max(h.cfg.Timeout/10, 50*time.Millisecond), time.Second, h.cfg.Timeout/2)
	return dl.Add(-reserve)
}

// settleFailures updates the consecutive-failure counter and picks the exit code.
func (h *hook) settleFailures() int {
	if h.cfg.DataDir == "" {
		return 0
	}
	if h.lost != nil {
		// No counter here: on a full disk it could not be written either.
		fmt.Fprintf(h.stderr, "memnode: event not kept: the node did not take it and spooling failed (%s); free disk space in %s, then see 'memnode status'\n",
			oneLine(h.lost.Error()), h.cfg.DataDir)
		return 2
	}
	switch {
	case h.reached:
		if err := resetFailures(h.cfg.DataDir); err != nil {
			h.logf("reset failure counter: %v", err)
		}
	case h.missed:
		n, err := recordFailure(h.cfg.DataDir, h.cfg.Now())
		if err != nil {
			h.logf("record failure: %v", err)
			return 0
		}
		if n >= h.cfg.FailLoudThreshold {
			where := datadir.Dir(h.cfg.DataDir).Spool()
			fmt.Fprintf(h.stderr, "memnode: node unreachable for %d consecutive hooks (events are spooled in %s); run 'memnode start' or see 'memnode status'\n", n, where)
			return 2
		}
	}
	return 0
}

// hookLogMax is hook.log's size cap (one old generation, hook.log.1, is kept).
const hookLogMax = 5 << 20

// logf appends one line to DataDir/logs/hook.log. It never carries payload content, only
// what went wrong, and it never writes to stderr (stderr is for the one fail-loud line).
func (h *hook) logf(format string, a ...any) {
	if h.cfg.DataDir == "" {
		return
	}
	dd := datadir.Dir(h.cfg.DataDir)
	if err := os.MkdirAll(dd.Logs(), 0o700); err != nil {
		return
	}
	line := h.cfg.Now().UTC().Format(time.RFC3339) + " " + fmt.Sprintf(format, a...)
	// Capped and rotated: an error that quotes its input (a 20 MiB session ID) cannot fill
	// the disk.
	_ = logfile.AppendLine(dd.HookLog(), []byte(strings.ReplaceAll(line, "\n", " ")+"\n"), hookLogMax, logfile.DefaultMaxLine)
}

// newEvent fills the fields every event carries.
func (h *hook) newEvent(kind string, in *platform.Input, project string) apitype.Event {
	ev := apitype.Event{
		EventID:   memory.NewEventID(),
		Kind:      kind,
		Platform:  h.platform,
		SessionID: in.SessionID,
		Project:   project,
		Cwd:       in.Cwd,
		At:        h.cfg.Now().UTC(),
	}
	if r := h.replay; r != nil {
		ev.EventID, ev.At = r.ID, r.At.UTC()
		if h.minted > 0 {
			ev.EventID = fmt.Sprintf("%s#%d", r.ID, h.minted)
		}
	}
	h.minted++
	return ev
}

// excluded reports whether nothing of project is sent: it matches one of the exclusion
// globs, or the user's capture switches say no (paused, or not tracked under opt-in).
func (h *hook) excluded(in *platform.Input, project string) bool {
	if h.policy().ProjectExcluded(project) {
		return true
	}
	dir := h.cfg.DataDir
	if dir == "" {
		dir = h.cfg.TokenDir // an import's replay
	}
	if dir == "" {
		return false
	}
	st, err := capture.Load(datadir.Dir(dir).Capture())
	if err != nil {
		// A broken switch file must not silently record what the user paused.
		h.logf("capture switches: %v (nothing recorded until 'memnode resume' rewrites it)", err)
		return true
	}
	root := h.cfg.ProjectDir
	if root == "" || !filepath.IsAbs(root) {
		root = ""
		if in.Cwd != "" {
			root = ProjectRoot(in.Cwd, h.cfg.HomeDir)
		}
	}
	return !st.Decide(h.cfg.OptIn, project, root, h.cfg.Now()).Record
}

// skipTool reports whether calls of tool are configured not to be recorded. (The agent's
// bookkeeping and memnode's own MCP tools are marked by the adapter.)
func (h *hook) skipTool(tool string) bool { return h.policy().ToolSkipped(tool) }

func (h *hook) policy() memory.Policy {
	return memory.Policy{ExcludedProjects: h.cfg.ExcludedProjects, SkipTools: h.cfg.SkipTools}
}

// project is the project of a hook's input: the agent's project dir when it names one
// (Config.ProjectDir), else the working dir's.
func (h *hook) project(in *platform.Input) string {
	if h.cfg.ProjectDir != "" && filepath.IsAbs(h.cfg.ProjectDir) {
		return ProjectName(h.cfg.ProjectDir, h.cfg.HomeDir)
	}
	return ProjectName(in.Cwd, h.cfg.HomeDir)
}

// ProjectName is the project a working directory belongs to: the base name of the git root
// above cwd (a .git dir or file, so submodules count), else the base name of cwd. A git
// worktree belongs to its main repository's project, so it sees that project's memory. home
// is never a project (a dotfiles repo in $HOME would otherwise name every project).
func ProjectName(cwd, home string) string {
	if cwd == "" {
		return "unknown"
	}
	root, main, ok := gitRoot(cwd, home)
	switch {
	case ok && main != "":
		return filepath.Base(main)
	case ok:
		return filepath.Base(root)
	}
	return filepath.Base(filepath.Clean(cwd))
}

// ProjectRoot is the directory of a working directory's project: the git root above cwd (a
// worktree's own directory, not its main repository's), else cwd itself. It is where a
// project's agent rules and context files live.
func ProjectRoot(cwd, home string) string {
	if root, _, ok := gitRoot(cwd, home); ok {
		return root
	}
	return filepath.Clean(cwd)
}

// gitRoot finds the nearest directory above cwd with a .git (dir or file; home never
// counts), and for a worktree its main repository's directory.
func gitRoot(cwd, home string) (root, main string, ok bool) {
	dir := filepath.Clean(cwd)
	home = filepath.Clean(home)
	for d := dir; ; {
		if home == "." || d != home {
			if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
				main, _ := worktreeMain(filepath.Join(d, ".git"), fi)
				return d, main, true
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", false
		}
		d = parent
	}
}

// cleanJoined cleans the parts a record is assembled from as one text, from the raw
// payload: the prompt once its text parts are joined (a <private> opened in one part and
// closed in another), a tool call's input and response together (opened in tool_input,
// closed in tool_response). Two more facts of a prompt are taken from the raw payload;
// nothing else of it leaves this process.
func cleanJoined(ad platform.Adapter, event string, raw []byte, in *platform.Input) error {
	if event != platform.EventSessionInit && event != platform.EventObservation {
		return nil
	}
	rawIn, err := ad.Normalize(event, raw)
	if err != nil {
		return fmt.Errorf("normalize input: %w", err)
	}
	if event == platform.EventSessionInit {
		in.PromptHadText = strings.TrimSpace(rawIn.Prompt) != ""
		in.ProtocolOnly = rawIn.Prompt != "" && privacy.IsProtocolOnly(rawIn.Prompt)
		in.Prompt = privacy.Clean(rawIn.Prompt)
		return nil
	}
	parts, err := privacy.CleanJSONParts(rawIn.ToolInput, rawIn.ToolResponse)
	if err != nil {
		return fmt.Errorf("clean tool call: %w", err)
	}
	in.ToolInput, in.ToolResponse = platform.NonNull(parts[0]), platform.NonNull(parts[1])
	return nil
}

// worktreeMain reads a worktree's .git file ("gitdir: <main>/.git/worktrees/<name>") and
// returns the main repository's dir. Submodules (gitdir: …/.git/modules/…) are not worktrees.
func worktreeMain(dotGit string, fi os.FileInfo) (string, bool) {
	if !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return "", false
	}
	b, err := os.ReadFile(dotGit)
	if err != nil {
		return "", false
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", false
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(filepath.Dir(dotGit), gitdir)
	}
	wts := filepath.Dir(filepath.Clean(gitdir)) // <main>/.git/worktrees
	if filepath.Base(wts) != "worktrees" || filepath.Base(filepath.Dir(wts)) != ".git" {
		return "", false
	}
	return filepath.Dir(filepath.Dir(wts)), true
}

// oneLine keeps an error on the single stderr line the hook may write.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
