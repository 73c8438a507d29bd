package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
)

// nodeConn is a client of the local node that starts the node once when it is not
// running, so `memnode search` (and the MCP server) work right after a reboot.
type nodeConn struct {
	env     *cliEnv
	mu      sync.Mutex
	c       *client.Client
	started bool
}

func newNodeConn(env *cliEnv) *nodeConn { return &nodeConn{env: env} }

func (n *nodeConn) client(ctx context.Context, retry bool) (*client.Client, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if retry && !n.started {
		n.started = true
		if err := startNode(ctx, n.env); err != nil {
			return nil, fmt.Errorf("start node: %w", err)
		}
		n.c = nil // the token may be new
	}
	if n.c == nil {
		c, err := client.FromDialer(dialer(n.env))
		if err != nil {
			return nil, err
		}
		n.c = c
	}
	return n.c, nil
}

// with runs fn against the node, starting the node (once per nodeConn) and retrying
// when it is down.
func with[T any](ctx context.Context, n *nodeConn, fn func(*client.Client) (T, error)) (T, error) {
	var zero T
	c, err := n.client(ctx, false)
	if err == nil {
		var v T
		if v, err = fn(c); err == nil {
			return v, nil
		}
	}
	if !errors.Is(err, client.ErrNodeDown) && !errors.Is(err, client.ErrNoToken) || ctx.Err() != nil {
		return zero, err
	}
	if c, err = n.client(ctx, true); err != nil {
		return zero, err
	}
	return fn(c)
}

// nodeConn implements mcpserver.Memory.
func (n *nodeConn) Search(ctx context.Context, q apitype.SearchQuery) (apitype.Results, error) {
	return with(ctx, n, func(c *client.Client) (apitype.Results, error) { return c.Search(ctx, q) })
}

func (n *nodeConn) Timeline(ctx context.Context, q apitype.TimelineQuery) (apitype.Timeline, error) {
	return with(ctx, n, func(c *client.Client) (apitype.Timeline, error) { return c.Timeline(ctx, q) })
}

func (n *nodeConn) Get(ctx context.Context, ids []string) (apitype.Records, error) {
	return with(ctx, n, func(c *client.Client) (apitype.Records, error) { return c.Get(ctx, ids) })
}

func (n *nodeConn) SaveNote(ctx context.Context, note apitype.Note) (apitype.SaveResult, error) {
	return with(ctx, n, func(c *client.Client) (apitype.SaveResult, error) { return c.SaveNote(ctx, note) })
}

func (n *nodeConn) Forget(ctx context.Context, ids []string) (apitype.ForgetResult, error) {
	return with(ctx, n, func(c *client.Client) (apitype.ForgetResult, error) { return c.Forget(ctx, ids) })
}

func (n *nodeConn) Correct(ctx context.Context, corr apitype.Correction) (apitype.SupersedeResult, error) {
	return with(ctx, n, func(c *client.Client) (apitype.SupersedeResult, error) { return c.Correct(ctx, corr) })
}

func (n *nodeConn) Supersede(ctx context.Context, req apitype.Supersede) (apitype.SupersedeResult, error) {
	return with(ctx, n, func(c *client.Client) (apitype.SupersedeResult, error) { return c.Supersede(ctx, req) })
}

func (n *nodeConn) Pin(ctx context.Context, req apitype.Pin) (apitype.PinResult, error) {
	return with(ctx, n, func(c *client.Client) (apitype.PinResult, error) { return c.Pin(ctx, req) })
}

// parseMixed parses flags that may come after positional arguments
// (`memnode search webhook --project api`); "--" ends the flags.
func parseMixed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func printJSON(env *cliEnv, v any) int {
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fail(env, "write output: %v", err)
	}
	return 0
}

func cmdSearch(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "search", "search QUERY [--project P --type T --limit N …; --help lists them]")
	// The flags are GET /api/search's parameters under their names (obs-type is obs_type),
	// decoded by apitype's one codec as the node decodes them.
	params := map[string]*string{}
	param := func(flag, def, usage string) {
		params[strings.ReplaceAll(flag, "-", "_")] = fs.String(flag, def, usage)
	}
	param("project", "", "only this project")
	param("type", "all", "observations, sessions, prompts or all")
	param("obs-type", "", "comma-separated observation types (bugfix,decision,…)")
	param("device", "", "only records that originated on this device (name or ID)")
	param("file", "", "only observations that read or modified this file (full path, path in the project or file name)")
	param("platform", "", "only records of sessions recorded by this coding agent (claude-code, codex, …)")
	param("since", "", "only records at or after this ISO date/time")
	param("until", "", "only records before this ISO date/time")
	limit := fs.Int("limit", apitype.DefaultLimit, "rows to show")
	offset := fs.Int("offset", 0, "rows to skip")
	param("order", "relevance", "relevance, newest or oldest")
	param("mode", "", "ranking: fts, vector or hybrid (default hybrid when observations are embedded, else fts)")
	asJSON := fs.Bool("json", false, "print JSON")
	onTeam := fs.Bool("team", false, "search the team cluster: everything shared, pulled here or not")
	pos, code, ok := fs.parse(args, 0, -1)
	if !ok {
		return code
	}
	v := url.Values{"query": {strings.Join(pos, " ")}, "limit": {strconv.Itoa(*limit)}, "offset": {strconv.Itoa(*offset)}}
	for name, p := range params {
		v.Set(name, *p)
	}
	q, err := apitype.ParseSearchQuery(v)
	if err != nil {
		return fs.usageErr("--%s", strings.Replace(err.Error(), "obs_type", "obs-type", 1))
	}
	if *onTeam {
		return teamSearch(ctx, env, q.Text, q.Project, q.Limit, *asJSON)
	}
	if q.Limit < 0 || q.Offset < 0 {
		return fs.usageErr("--limit and --offset take a number >= 0")
	}
	res, err := newNodeConn(env).Search(ctx, q)
	if err != nil {
		return fail(env, "search: %v", err)
	}
	if *asJSON {
		return printJSON(env, res)
	}
	if len(res.Hits) == 0 {
		fmt.Fprintln(env.Stderr, "no matching records")
		return 0
	}
	if err := apitype.WriteIndex(env.Stdout, res.Hits); err != nil {
		return fail(env, "write output: %v", err)
	}
	return 0
}

func cmdTimeline(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "timeline", "timeline ANCHOR|--query TEXT [--before N --after N …] (ANCHOR: record ID, S<session id> or ISO time)")
	var q apitype.TimelineQuery
	fs.StringVar(&q.Query, "query", "", "anchor on the best match of this query instead")
	fs.IntVar(&q.Before, "before", apitype.DefaultDepth, "records before the anchor")
	fs.IntVar(&q.After, "after", apitype.DefaultDepth, "records after the anchor")
	fs.StringVar(&q.Project, "project", "", "only this project")
	fs.StringVar(&q.Device, "device", "", "only records from this device")
	fs.StringVar(&q.Platform, "platform", "", "only records of sessions recorded by this coding agent")
	fs.StringVar(&q.Type, "type", "all", "around the anchor: observations, sessions, prompts or all")
	obsTypes := fs.String("obs-type", "", "around the anchor: only observations of these comma-separated types (bugfix,decision,…)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, code, ok := fs.parse(args, 0, 1)
	if !ok {
		return code
	}
	q.ObsTypes = apitype.SplitList(*obsTypes)
	switch {
	case len(pos) == 0 && q.Query == "":
		return fs.usageErr("missing argument")
	case len(pos) == 1 && q.Query != "":
		return fs.usageErr("give an ANCHOR or --query, not both")
	case q.Before < 0 || q.After < 0:
		return fs.usageErr("--before and --after take a number >= 0")
	}
	if len(pos) == 1 {
		q.Anchor = pos[0]
	}
	tl, err := newNodeConn(env).Timeline(ctx, q)
	switch {
	case errors.Is(err, client.ErrNotFound) && q.Anchor != "":
		return fail(env, "timeline: nothing here is named %q (an anchor is a record ID, S<session id> or an ISO time; 'memnode search' finds IDs)", q.Anchor)
	case errors.Is(err, client.ErrNotFound):
		return fail(env, "timeline: no record matches %q", q.Query)
	case err != nil:
		return fail(env, "timeline: %v", err)
	}
	if *asJSON {
		return printJSON(env, tl)
	}
	if err := apitype.WriteIndex(env.Stdout, tl.Items); err != nil {
		return fail(env, "write output: %v", err)
	}
	return 0
}

func cmdGet(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "get", "get ID... [--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	ids, code, ok := fs.parse(args, 1, -1)
	if !ok {
		return code
	}
	recs, err := newNodeConn(env).Get(ctx, ids)
	if err != nil {
		return fail(env, "get: %v", err)
	}
	if *asJSON {
		return printJSON(env, recs)
	}
	missing := recs.Missing
	recs.Missing = nil // said on stderr: stdout holds records only
	if len(recs.Items) > 0 {
		if err := apitype.WriteRecords(env.Stdout, recs); err != nil {
			return fail(env, "write output: %v", err)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(env.Stderr, "memnode: get: not found (never stored, or forgotten): %s\n", strings.Join(missing, ", "))
	}
	if len(recs.Items) == 0 {
		return 1
	}
	return 0
}

func cmdForget(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "forget", "forget ID... (record IDs, or S<session id> for a whole session)")
	ids, code, ok := fs.parse(args, 1, -1)
	if !ok {
		return code
	}
	res, err := newNodeConn(env).Forget(ctx, ids)
	if err != nil {
		return fail(env, "forget: %v", err)
	}
	if res.Found == 0 {
		names := res.Missing
		if len(names) == 0 {
			names = ids
		}
		return fail(env, "forget: nothing forgotten: no record or session here is named %s (see 'memnode search')", strings.Join(names, ", "))
	}
	fmt.Fprintf(env.Stdout, "forgot %d of %d ID(s); the tombstones will reach every device\n", res.Found, res.Requested)
	if len(res.Missing) > 0 {
		fmt.Fprintf(env.Stderr, "memnode: forget: not found here: %s\n", strings.Join(res.Missing, ", "))
	}
	return 0
}

func cmdCorrect(ctx context.Context, env *cliEnv, args []string) int {
	return runSupersede(ctx, env, args, "correct", `correct ID "what is true" [--json]`, 2, -1,
		func(c *nodeConn, pos []string) (apitype.SupersedeResult, error) {
			return c.Correct(ctx, apitype.Correction{ID: pos[0], Text: strings.Join(pos[1:], " ")})
		})
}

func cmdSupersede(ctx context.Context, env *cliEnv, args []string) int {
	return runSupersede(ctx, env, args, "supersede", "supersede OLD NEW [--json] (two observation IDs: NEW replaces OLD)", 2, 2,
		func(c *nodeConn, pos []string) (apitype.SupersedeResult, error) {
			return c.Supersede(ctx, apitype.Supersede{Old: pos[0], New: pos[1]})
		})
}

// runSupersede is correct and supersede: between least and most (-1: any) arguments, the
// request, and one line saying what changed.
func runSupersede(ctx context.Context, env *cliEnv, args []string, name, synopsis string, least, most int,
	call func(*nodeConn, []string) (apitype.SupersedeResult, error)) int {
	fs := newFlags(env, name, synopsis)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	pos, code, ok := fs.parse(args, least, most)
	if !ok {
		return code
	}
	res, err := call(newNodeConn(env), pos)
	if err != nil {
		return fail(env, "%s: %v", name, err)
	}
	if *asJSON {
		return printJSON(env, res)
	}
	fmt.Fprintf(env.Stdout, "%s corrects %s, which leaves the context and search (get and timeline still show it, superseded); this reaches every device\n",
		orID(res.NewShort, res.New), orID(res.OldShort, res.Old))
	return 0
}

// orID is a record's short ID, or its ID when it has none.
func orID(short, id string) string {
	if short != "" {
		return short
	}
	return id
}
