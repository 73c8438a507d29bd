package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
)

// teamCall is one call to the node's team routes, starting the node when it is down.
func teamCall(ctx context.Context, env *cliEnv, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	_, err := with(ctx, newNodeConn(env), func(c *client.Client) (struct{}, error) {
		return struct{}{}, c.Call(ctx, method, path, in, out)
	})
	return err
}

// teamSearch is `memnode search QUERY --team`: FTS5 on the cluster, each hit with its author.
func teamSearch(ctx context.Context, env *cliEnv, query, project string, limit int, asJSON bool) int {
	v := url.Values{"q": {query}, "limit": {fmt.Sprint(limit)}}
	if project != "" {
		v.Set("project", project)
	}
	var rep apitype.TeamSearchReply
	if err := teamCall(ctx, env, http.MethodGet, "/api/team/search?"+v.Encode(), nil, &rep); err != nil {
		return fail(env, "search --team: %v", err)
	}
	if asJSON {
		return printJSON(env, rep)
	}
	if rep.Unreachable != "" {
		fmt.Fprintf(env.Stderr, "memnode: %s; results on this device:\n", rep.Unreachable)
		if len(rep.Local) == 0 {
			fmt.Fprintln(env.Stderr, "no matching records")
			return 0
		}
		if err := apitype.WriteIndex(env.Stdout, rep.Local); err != nil {
			return fail(env, "write output: %v", err)
		}
		return 0
	}
	if len(rep.Hits) == 0 {
		fmt.Fprintln(env.Stderr, "no matching records on the team cluster")
		return 0
	}
	if err := apitype.WriteTeamIndex(env.Stdout, rep.Hits); err != nil {
		return fail(env, "write output: %v", err)
	}
	return 0
}

// TeamSearch makes nodeConn a team searcher for the MCP server's search(team=true).
func (n *nodeConn) TeamSearch(ctx context.Context, query, project string, limit int) (apitype.TeamSearchReply, error) {
	v := url.Values{"q": {query}, "limit": {fmt.Sprint(limit)}}
	if project != "" {
		v.Set("project", project)
	}
	return with(ctx, n, func(c *client.Client) (apitype.TeamSearchReply, error) {
		var rep apitype.TeamSearchReply
		err := c.Call(ctx, http.MethodGet, "/api/team/search?"+v.Encode(), nil, &rep)
		return rep, err
	})
}
