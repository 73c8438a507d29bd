// Package mcpserver is memnode's MCP server (stdio): the three-layer memory workflow
// (search → timeline → get_observations) plus save_memory and forget, over the node API.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/memory"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Memory is what the tools need from the node (client.Client implements it).
type Memory interface {
	Search(ctx context.Context, q apitype.SearchQuery) (apitype.Results, error)
	Timeline(ctx context.Context, q apitype.TimelineQuery) (apitype.Timeline, error)
	Get(ctx context.Context, ids []string) (apitype.Records, error)
	SaveNote(ctx context.Context, n apitype.Note) (apitype.SaveResult, error)
	Forget(ctx context.Context, ids []string) (apitype.ForgetResult, error)
	Correct(ctx context.Context, c apitype.Correction) (apitype.SupersedeResult, error)
	Supersede(ctx context.Context, req apitype.Supersede) (apitype.SupersedeResult, error)
}

// TeamSearcher is the team cluster's search (search with team=true); the Memory may
// implement it. Without it, team=true answers that team memory is not available.
type TeamSearcher interface {
	TeamSearch(ctx context.Context, query, project string, limit int) (apitype.TeamSearchReply, error)
}

// Config configures a Server.
type Config struct {
	Memory Memory
	// DefaultProject is the project save_memory uses when the agent names none (the
	// project of the directory the IDE started the server in).
	DefaultProject string
	Version        string
	Logger         *slog.Logger
	// MaxLineBytes bounds one JSON-RPC line (default DefaultMaxLineBytes).
	MaxLineBytes int
	// DrainTimeout bounds how long calls read before EOF may take to be answered
	// (default DefaultDrainTimeout).
	DrainTimeout time.Duration
}

// Server is the MCP server. New → Run (blocks until the client hangs up or ctx ends).
type Server struct {
	cfg Config
	srv *mcp.Server
}

// Workflow is the text of the workflow tool: the tool list is read by the agent before
// every call, so the rules sit where they are always seen.
const Workflow = `memnode memory: 3-LAYER WORKFLOW (ALWAYS FOLLOW)
1. search(query) -> compact index, one line per record (~50-100 tokens): ID, time, type, title, [project @device].
   Filter there: project, type (observations|sessions|prompts), obs_type (bugfix,feature,decision,discovery,change,...), since/until, device.
2. timeline(anchor=ID) -> what happened just before and after an interesting record (prompts, observations, session summaries in time order).
3. get_observations(ids=[...]) -> full details, ONLY for the few IDs you filtered in steps 1-2 (~500-1000 tokens each).
NEVER fetch full details without filtering first: it costs about 10x the tokens.
Use save_memory to keep a decision or fact for later sessions; correct_memory when a memory is wrong or outdated (the correction replaces it in every later context); forget removes a record (and its content) on every device.`

// New builds the server and its tools.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.MaxLineBytes <= 0 {
		cfg.MaxLineBytes = DefaultMaxLineBytes
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	s := &Server{cfg: cfg}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "memnode", Version: cfg.Version}, &mcp.ServerOptions{
		Instructions: Workflow,
		Logger:       cfg.Logger,
	})
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:        "__IMPORTANT",
		Description: Workflow,
	}, s.workflow)
	// claude-mem's name for the same tool, so agents and CLAUDE.md files written for it work.
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:        "important_workflow",
		Description: Workflow,
	}, s.workflow)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name: "search",
		Description: "Step 1: search memory (past observations, session summaries, user prompts). Returns a compact index: " +
			"one line per record with its ID. Any text is a valid query; \"quoted words\" are a phrase, word* a prefix, OR between words " +
			"means either. Narrow with project/type/obs_type/since/until before fetching anything. Then call timeline or get_observations with IDs.",
	}, s.search)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name: "timeline",
		Description: "Step 2: records around an anchor in time order (prompts, observations, session summaries), as index lines. " +
			"anchor is a record ID from search, S<session id>, or an ISO time; or give query and the best match becomes the anchor.",
	}, s.timeline)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name: "get_observations",
		Description: "Step 3: full details of records by ID (observations, summaries or prompts). Only for IDs you picked from " +
			"search or timeline: batch them in one call.",
	}, s.get)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:        "save_memory",
		Description: "Save a note to memory (a decision, a fact, a how-to) so later sessions on any of the user's devices can find it.",
	}, s.save)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:        "forget",
		Description: "Forget records by ID (or a whole session as S<session id>): they and their content are removed on every device, for good.",
	}, s.forget)
	// One tool for "that memory is wrong": a model reaches for correct_memory whether it
	// has the true text (text) or a record that already says it (replaced_by).
	mcp.AddTool(s.srv, &mcp.Tool{
		Name: "correct_memory",
		Description: "Correct a memory that is wrong or outdated (a failed hypothesis recorded as fact, a decision since reversed). " +
			"Give the observation's ID and either text (what is true: saved as a new \"correction\" record) or replaced_by " +
			"(the ID of a record that already says it). The old record leaves every later session's context and search on " +
			"all devices; get_observations and timeline still show it, marked \"superseded by\".",
	}, s.correct)
	return s
}

// Run serves MCP over in/out (newline-delimited JSON-RPC) until the client disconnects or
// ctx ends. Nothing else is ever written to out. A malformed line is answered with a
// JSON-RPC error and serving goes on; at EOF the calls already read are answered first.
func (s *Server) Run(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	t := &lineTransport{in: in, out: out, maxLine: s.cfg.MaxLineBytes, drain: s.cfg.DrainTimeout}
	err := s.srv.Run(ctx, t)
	t.waitInputEnded()
	if err != nil && (errors.Is(err, io.EOF) || ctx.Err() != nil) {
		return nil
	}
	return err
}

type noArgs struct{}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func (s *Server) workflow(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
	return text(Workflow), nil, nil
}

// SearchArgs are the search tool's arguments. DateStart, DateEnd, OrderBy and a Type naming
// observation types are claude-mem's forms, accepted as aliases of Since, Until, Order and
// ObsType.
type SearchArgs struct {
	Query    string `json:"query,omitempty" jsonschema:"what to look for; empty lists the newest records"`
	Project  string `json:"project,omitempty" jsonschema:"only this project"`
	Type     string `json:"type,omitempty" jsonschema:"observations, sessions, prompts or all (default); or observation types as for obs_type"`
	ObsType  string `json:"obs_type,omitempty" jsonschema:"comma-separated observation types: bugfix,feature,decision,discovery,change,refactor,note"`
	Device   string `json:"device,omitempty" jsonschema:"only records that originated on this device (name or ID)"`
	File     string `json:"file,omitempty" jsonschema:"only observations that read or modified this file: full path, path in the project or file name"`
	Platform string `json:"platform,omitempty" jsonschema:"only records of sessions recorded by this coding agent: claude-code, codex, gemini-cli, opencode, copilot, qwen-code, cursor, windsurf"`
	Since    string `json:"since,omitempty" jsonschema:"ISO date/time: only records at or after it"`
	Until    string `json:"until,omitempty" jsonschema:"ISO date/time: only records before it"`
	Limit    int    `json:"limit,omitempty" jsonschema:"rows to return, 1-200 (default 20)"`
	Offset   int    `json:"offset,omitempty" jsonschema:"rows to skip, for the next page"`
	Order    string `json:"order,omitempty" jsonschema:"relevance (default), newest or oldest"`
	Mode     string `json:"mode,omitempty" jsonschema:"ranking: hybrid (default when embeddings are on: keywords and meaning), fts (exact words only) or vector (meaning only)"`
	Team     bool   `json:"team,omitempty" jsonschema:"search the team cluster: every project shared with the team, pulled here or not; hits show @user/device"`

	DateStart      any    `json:"dateStart,omitempty" jsonschema:"claude-mem alias of since: ISO date/time or epoch ms"`
	DateEnd        any    `json:"dateEnd,omitempty" jsonschema:"claude-mem alias of until: ISO date/time or epoch ms"`
	OrderBy        string `json:"orderBy,omitempty" jsonschema:"claude-mem alias of order: relevance, date_desc or date_asc"`
	PlatformSource string `json:"platformSource,omitempty" jsonschema:"claude-mem alias of platform"`
}

// query maps the arguments, aliases included, onto the node's search query: the ones named
// as GET /api/search's parameters are decoded by apitype's one codec, as the node decodes
// them; claude-mem's other forms are mapped here.
func (a SearchArgs) query() (apitype.SearchQuery, error) {
	typ, obsTypes := kindAndTypes(a.Type, a.ObsType)
	q, err := apitype.ParseSearchQuery(url.Values{"query": {a.Query}, "project": {a.Project}, "type": {typ},
		"obs_type": {strings.Join(obsTypes, ",")}, "device": {a.Device}, "file": {a.File}, "platform": {a.Platform},
		"platformSource": {a.PlatformSource}, "since": {a.Since}, "until": {a.Until}, "limit": {strconv.Itoa(a.Limit)},
		"offset": {strconv.Itoa(a.Offset)}, "order": {a.Order}, "mode": {a.Mode}})
	if err != nil {
		return q, err
	}
	if q.Since, err = timeAlias("since", a.Since != "", q.Since, "dateStart", a.DateStart); err != nil {
		return q, err
	}
	if q.Until, err = timeAlias("until", a.Until != "", q.Until, "dateEnd", a.DateEnd); err != nil {
		return q, err
	}
	if a.OrderBy != "" {
		order, ok := map[string]string{"relevance": "relevance", "date_desc": "newest", "date_asc": "oldest"}[a.OrderBy]
		if !ok {
			return q, fmt.Errorf("orderBy %q is not relevance, date_desc or date_asc", a.OrderBy)
		}
		if q.Order != "" && q.Order != order {
			return q, fmt.Errorf("order %q and orderBy %q disagree: give one of them", q.Order, a.OrderBy)
		}
		q.Order = order
	}
	return q, nil
}

// kindAndTypes maps the type and obs_type arguments onto a record kind and observation
// types: a type naming only observation types is claude-mem's form of obs_type.
func kindAndTypes(typ, obsType string) (string, []string) {
	if kinds, ok := observationTypes(typ); ok {
		typ, obsType = "observations", strings.Trim(obsType+","+kinds, ",")
	}
	return typ, apitype.SplitList(obsType)
}

// obsTypeNames are the observation types a claude-mem style type argument may name.
var obsTypeNames = map[string]bool{
	memory.TypeBugfix: true, memory.TypeFeature: true, memory.TypeRefactor: true, memory.TypeChange: true,
	memory.TypeDiscovery: true, memory.TypeDecision: true, "note": true,
}

// observationTypes reports whether t (comma-separated) names only observation types, as
// claude-mem's type argument may: then it filters observations, never a record kind.
func observationTypes(t string) (string, bool) {
	if t == "" {
		return "", false
	}
	var out []string
	for _, p := range strings.Split(t, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		if !obsTypeNames[p] {
			return "", false
		}
		out = append(out, p)
	}
	return strings.Join(out, ","), true
}

// timeAlias applies claude-mem's alias of a time bound (an ISO string or epoch ms as a JSON
// number) over ms, memnode's own argument decoded already; giving both is an error unless
// they agree.
func timeAlias(name string, given bool, ms int64, alias string, av any) (int64, error) {
	if av == nil {
		return ms, nil
	}
	var ams int64
	var ok bool
	switch x := av.(type) {
	case string:
		if ams, ok = apitype.ParseTimeFilter(x); !ok {
			return 0, fmt.Errorf("%s %q is not an ISO date/time or epoch ms", alias, x)
		}
	case float64:
		if x != math.Trunc(x) || x < 0 || x > math.MaxInt64/2 {
			return 0, fmt.Errorf("%s %v is not an epoch time in ms", alias, x)
		}
		ams = int64(x)
	default:
		return 0, fmt.Errorf("%s must be an ISO date/time or epoch ms, not %T", alias, av)
	}
	if given && ams != ms {
		return 0, fmt.Errorf("%s and %s disagree: give one of them", name, alias)
	}
	return ams, nil
}

func (s *Server) search(ctx context.Context, _ *mcp.CallToolRequest, a SearchArgs) (*mcp.CallToolResult, any, error) {
	if a.Team {
		return s.teamSearch(ctx, a)
	}
	q, err := a.query()
	if err != nil {
		return nil, nil, err
	}
	res, err := s.cfg.Memory.Search(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	var b strings.Builder
	if len(res.Hits) == 0 {
		b.WriteString("No matching records.")
		if res.Mode == "none" {
			b.WriteString(" (The query has no searchable words.)")
		}
		return text(b.String()), nil, nil
	}
	fmt.Fprintf(&b, "%d result(s)", len(res.Hits))
	if res.Mode == "all+any" {
		b.WriteString(" (few records had every word; records with some of the words follow)")
	}
	b.WriteString(". Next: timeline(anchor=ID) for context, get_observations(ids=[...]) for details.\n")
	_ = apitype.WriteIndex(&b, res.Hits)
	if len(res.Hits) == q.Limit || (q.Limit == 0 && len(res.Hits) == apitype.DefaultLimit) {
		fmt.Fprintf(&b, "(more may follow: offset=%d)\n", a.Offset+len(res.Hits))
	}
	return text(b.String()), nil, nil
}

// teamSearch answers search(team=true) from the team cluster, one row per hit with its author.
func (s *Server) teamSearch(ctx context.Context, a SearchArgs) (*mcp.CallToolResult, any, error) {
	ts, ok := s.cfg.Memory.(TeamSearcher)
	if !ok {
		return nil, nil, errors.New("team memory is not available here")
	}
	rep, err := ts.TeamSearch(ctx, a.Query, a.Project, a.Limit)
	if err != nil {
		return nil, nil, err
	}
	if rep.Unreachable != "" {
		// Cut off from the cluster: say so, and answer from this device, whose shared
		// projects hold what was pulled so far.
		var b strings.Builder
		fmt.Fprintf(&b, "The team cluster did not answer: %s. ", rep.Unreachable)
		if len(rep.Local) == 0 {
			b.WriteString("No matching records on this device either.")
			return text(b.String()), nil, nil
		}
		fmt.Fprintf(&b, "%d result(s) from this device instead (team records pulled so far included). Next: timeline(anchor=ID), get_observations(ids=[...]).\n", len(rep.Local))
		_ = apitype.WriteIndex(&b, rep.Local)
		return text(b.String()), nil, nil
	}
	hits := rep.Hits
	if len(hits) == 0 {
		return text("No matching records on the team cluster."), nil, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d team result(s). Records of projects this device shares are also in local search, timeline and get_observations.\n", len(hits))
	_ = apitype.WriteTeamIndex(&b, hits)
	return text(b.String()), nil, nil
}

// TimelineArgs are the timeline tool's arguments.
type TimelineArgs struct {
	Anchor      any    `json:"anchor,omitempty" jsonschema:"record ID (a number: a claude-mem observation ID), S<session id>, or ISO time"`
	Query       string `json:"query,omitempty" jsonschema:"instead of anchor: the best match of this query is the anchor"`
	DepthBefore int    `json:"depth_before,omitempty" jsonschema:"records before the anchor (default 10, max 100)"`
	DepthAfter  int    `json:"depth_after,omitempty" jsonschema:"records after the anchor (default 10, max 100)"`
	Project     string `json:"project,omitempty" jsonschema:"only this project"`
	Device      string `json:"device,omitempty" jsonschema:"only records from this device"`
	Platform    string `json:"platform,omitempty" jsonschema:"only records of sessions recorded by this coding agent"`
	Type        string `json:"type,omitempty" jsonschema:"around the anchor: observations, sessions, prompts or all (default); or observation types as for obs_type"`
	ObsType     string `json:"obs_type,omitempty" jsonschema:"around the anchor: only observations of these comma-separated types: bugfix,feature,decision,discovery,change,refactor,note"`
}

// query maps the arguments onto the node's timeline query; a type naming observation
// types is claude-mem's form of obs_type, as for search.
func (a TimelineArgs) query(anchor string) apitype.TimelineQuery {
	q := apitype.TimelineQuery{Anchor: anchor, Query: a.Query, Before: a.DepthBefore, After: a.DepthAfter,
		Project: a.Project, Device: a.Device, Platform: a.Platform}
	q.Type, q.ObsTypes = kindAndTypes(a.Type, a.ObsType)
	return q
}

func (s *Server) timeline(ctx context.Context, _ *mcp.CallToolRequest, a TimelineArgs) (*mcp.CallToolResult, any, error) {
	anchor, err := idArg("anchor", a.Anchor)
	if err != nil {
		return nil, nil, err
	}
	if strings.TrimSpace(anchor) == "" && strings.TrimSpace(a.Query) == "" {
		return nil, nil, errors.New("give anchor (a record ID from search, S<session id> or an ISO time) or query")
	}
	tl, err := s.cfg.Memory.Timeline(ctx, a.query(anchor))
	if err != nil {
		return nil, nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Timeline around %s (%d records, oldest first; > marks the anchor):\n", anchorName(tl), len(tl.Items))
	_ = apitype.WriteIndex(&b, tl.Items)
	return text(b.String()), nil, nil
}

func anchorName(tl apitype.Timeline) string {
	for _, it := range tl.Items {
		if it.Anchor && it.Short != "" {
			return it.Short
		}
	}
	if tl.AnchorID != "" {
		return tl.AnchorID
	}
	return apitype.FormatTime(tl.AnchorTime)
}

// GetArgs are the get_observations tool's arguments.
type GetArgs struct {
	IDs []any `json:"ids" jsonschema:"record IDs from search or timeline (at most 100); numbers are claude-mem observation IDs of imported records"`
}

// idArg reads a record reference given as a string or, as claude-mem's tools take them,
// a number (a claude-mem ID, which the node resolves for imported records).
func idArg(name string, v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case float64:
		if x != math.Trunc(x) || x < 0 || x > 1<<53 {
			return "", fmt.Errorf("%s %v is not a record ID", name, x)
		}
		return strconv.FormatInt(int64(x), 10), nil
	default:
		return "", fmt.Errorf("%s must be a record ID (a string or a claude-mem number), not %T", name, v)
	}
}

func (s *Server) get(ctx context.Context, _ *mcp.CallToolRequest, a GetArgs) (*mcp.CallToolResult, any, error) {
	if len(a.IDs) == 0 {
		return nil, nil, errors.New("ids must list at least one record ID from search or timeline")
	}
	ids := make([]string, len(a.IDs))
	for i, v := range a.IDs {
		id, err := idArg("ids", v)
		if err != nil {
			return nil, nil, err
		}
		ids[i] = id
	}
	recs, err := s.cfg.Memory.Get(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	if len(recs.Items) == 0 {
		return text("None of these IDs names a record (never stored, or forgotten)."), nil, nil
	}
	var b strings.Builder
	_ = apitype.WriteRecords(&b, recs)
	return text(b.String()), nil, nil
}

// SaveArgs are the save_memory tool's arguments.
type SaveArgs struct {
	Text    string `json:"text" jsonschema:"the note: what to remember, self-contained"`
	Title   string `json:"title,omitempty" jsonschema:"a short title (default: the start of the text)"`
	Project string `json:"project,omitempty" jsonschema:"project it belongs to (default: the current project)"`
	Type    string `json:"type,omitempty" jsonschema:"note (default), decision, discovery, bugfix, ..."`
	Scope   string `json:"scope,omitempty" jsonschema:"project (default): for this project; global: a preference or rule for every project (e.g. 'use pnpm, never npm'), shown at the start of every session"`
	Pin     bool   `json:"pin,omitempty" jsonschema:"true: show it at the start of every session of its project"`
}

func (s *Server) save(ctx context.Context, _ *mcp.CallToolRequest, a SaveArgs) (*mcp.CallToolResult, any, error) {
	if a.Project == "" {
		a.Project = s.cfg.DefaultProject
	}
	res, err := s.cfg.Memory.SaveNote(ctx, apitype.Note{Text: a.Text, Title: a.Title, Project: a.Project, Type: a.Type, Scope: a.Scope, Pin: a.Pin})
	if err != nil {
		return nil, nil, err
	}
	if res.Duplicate {
		return text("Already in memory (an identical note exists)."), nil, nil
	}
	where := "in project " + a.Project
	switch {
	case a.Scope == apitype.ScopeGlobal:
		where = "as a global note (every project's sessions start with it)"
	case a.Pin:
		where += ", pinned (every session of it starts with it)"
	}
	return text("Saved as " + res.ID + " " + where + "."), nil, nil
}

// ForgetArgs are the forget tool's arguments.
type ForgetArgs struct {
	IDs []string `json:"ids" jsonschema:"record IDs, or S<session id> for a whole session"`
}

func (s *Server) forget(ctx context.Context, _ *mcp.CallToolRequest, a ForgetArgs) (*mcp.CallToolResult, any, error) {
	if len(a.IDs) == 0 {
		return nil, nil, errors.New("ids must list at least one record ID")
	}
	res, err := s.cfg.Memory.Forget(ctx, a.IDs)
	if err != nil {
		return nil, nil, err
	}
	return text(fmt.Sprintf("Forgotten: %d of %d ID(s) named a record here; the tombstones reach every device.", res.Found, res.Requested)), nil, nil
}

// CorrectArgs are the correct_memory tool's arguments.
type CorrectArgs struct {
	ID         string `json:"id" jsonschema:"ID (or short ID) of the observation that is wrong or outdated"`
	Text       string `json:"text,omitempty" jsonschema:"what is true instead, self-contained (saved as a new correction record)"`
	ReplacedBy string `json:"replaced_by,omitempty" jsonschema:"instead of text: the ID of an existing record that replaces it"`
}

func (s *Server) correct(ctx context.Context, _ *mcp.CallToolRequest, a CorrectArgs) (*mcp.CallToolResult, any, error) {
	var res apitype.SupersedeResult
	var err error
	switch {
	case a.ID == "":
		return nil, nil, errors.New("id must name the observation that is wrong or outdated")
	case (a.Text == "") == (a.ReplacedBy == ""):
		return nil, nil, errors.New("give either text (what is true) or replaced_by (an existing record's ID), not both")
	case a.Text != "":
		res, err = s.cfg.Memory.Correct(ctx, apitype.Correction{ID: a.ID, Text: a.Text})
	default:
		res, err = s.cfg.Memory.Supersede(ctx, apitype.Supersede{Old: a.ID, New: a.ReplacedBy})
	}
	if err != nil {
		return nil, nil, err
	}
	return text(fmt.Sprintf("%s is now superseded by %s: later sessions see the correction, not the old record.",
		shortOr(res.OldShort, res.Old), shortOr(res.NewShort, res.New))), nil, nil
}

func shortOr(short, id string) string {
	if short != "" {
		return short
	}
	return id
}
