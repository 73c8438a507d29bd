//go:build !memnode_lean

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/memnode/memnode/api"
	"github.com/memnode/memnode/keys"
	"github.com/memnode/memnode/team"
)

// envTeamPassword overrides the team password the key store holds (CI, scripts).
const envTeamPassword = "MEMNODE_TEAM_PASSWORD"

const teamUsage = `usage:
  memnode team join URL[,URL...] --user NAME [--name TEAM] [--ca-cert FILE] [--insecure]
                                   join the team's rqlite cluster (password on stdin, hidden
                                   on a terminal, or MEMNODE_TEAM_PASSWORD; kept in the key store);
                                   https:// beyond this machine, plain http:// only with --insecure
  memnode team share PROJECT       push PROJECT's memory to the team and pull the others'
  memnode team unshare PROJECT     stop sharing PROJECT (what was pushed stays on the cluster)
  memnode team status [--json]     cluster, leader, members, shared projects, backlog, lag
  memnode team leave [--purge]     stop pushing and pulling; --purge also forgets what was pulled
  memnode team admin add|remove @USER/DEVICE
                                   make a member's device a team admin, or no longer one (run
                                   on an admin's device; every member checks the signed change)
  memnode team remove @USER/DEVICE take a member's device out of the team (admin): its ops after
                                   the removal are refused by every member; then rotate the
                                   cluster credentials it knew (README, "Removing a member")
  memnode search QUERY --team      search everything the team shares`

// cmdTeam administers team memory through the running node's API (starting it if needed).
func cmdTeam(ctx context.Context, env *cliEnv, args []string) int {
	sub := ""
	if len(args) > 0 {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "join":
		return teamJoin(ctx, env, args)
	case "share", "unshare":
		pos, code, ok := newFlags(env, "team "+sub, "team "+sub+" PROJECT").parse(args, 1, 1)
		if !ok {
			return code
		}
		if err := teamCall(ctx, env, http.MethodPost, "/api/team/"+sub, api.TeamProjectRequest{Project: pos[0]}, nil); err != nil {
			return fail(env, "team %s: %v", sub, err)
		}
		if sub == "share" {
			fmt.Fprintf(env.Stdout, "Sharing %s with the team: its memory is pushed, the other members' is pulled.\n", pos[0])
		} else {
			fmt.Fprintf(env.Stdout, "Stopped sharing %s.\n", pos[0])
		}
		return 0
	case "status":
		fs := newFlags(env, "team status", "team status [--json]")
		asJSON := fs.Bool("json", false, "print JSON")
		if _, code, ok := fs.parse(args, 0, 0); !ok {
			return code
		}
		var st team.Status
		if err := teamCall(ctx, env, http.MethodGet, "/api/team", nil, &st); err != nil {
			return fail(env, "team status: %v", err)
		}
		if *asJSON {
			enc := json.NewEncoder(env.Stdout)
			enc.SetIndent("", "  ")
			enc.Encode(st)
			return 0
		}
		printTeamStatus(env.Stdout, st)
		return 0
	case "leave":
		fs := newFlags(env, "team leave", "team leave [--purge]")
		purge := fs.Bool("purge", false, "also forget the records pulled from the team")
		if _, code, ok := fs.parse(args, 0, 0); !ok {
			return code
		}
		var st team.Status
		if err := teamCall(ctx, env, http.MethodGet, "/api/team", nil, &st); err != nil {
			return fail(env, "team leave: %v", err)
		}
		if !st.Joined {
			return fail(env, "team leave: this device is in no team; nothing to leave ('memnode team join URL --user NAME' joins one)")
		}
		var rep api.TeamLeaveReply
		if err := teamCall(ctx, env, http.MethodPost, "/api/team/leave", api.TeamLeaveRequest{Purge: *purge}, &rep); err != nil {
			return fail(env, "team leave: %v", err)
		}
		if store, err := openKeyStore(env); err == nil {
			_ = store.Delete(keys.TeamPassword) // absent when the password came from the env
		}
		if *purge {
			fmt.Fprintf(env.Stdout, "Left the team; %d pulled records forgotten here.\n", rep.Forgotten)
		} else {
			fmt.Fprintln(env.Stdout, "Left the team; what was pulled stays here (team leave --purge forgets it).")
		}
		return 0
	case "admin":
		fs := newFlags(env, "team admin", "team admin add|remove @USER/DEVICE")
		pos, code, ok := fs.parse(args, 2, 2)
		if !ok {
			return code
		}
		if pos[0] != "add" && pos[0] != "remove" {
			return fs.usageErr("want add or remove, not %q", pos[0])
		}
		args = pos
		var ch team.AdminChange
		if err := teamCall(ctx, env, http.MethodPost, "/api/team/admin", api.TeamAdminRequest{Action: args[0], Device: args[1]}, &ch); err != nil {
			return fail(env, "team admin %s: %v", args[0], err)
		}
		switch {
		case !ch.Changed && args[0] == "add":
			fmt.Fprintf(env.Stdout, "@%s is already a team admin.", ch.Name)
		case !ch.Changed:
			fmt.Fprintf(env.Stdout, "@%s is not a team admin.", ch.Name)
		case args[0] == "add":
			fmt.Fprintf(env.Stdout, "@%s is now a team admin.", ch.Name)
		default:
			fmt.Fprintf(env.Stdout, "@%s is no longer a team admin.", ch.Name)
		}
		fmt.Fprintf(env.Stdout, " Admins: @%s\n", strings.Join(ch.Admins, ", @"))
		return 0
	case "remove":
		fs := newFlags(env, "team remove", "team remove @USER/DEVICE")
		pos, code, ok := fs.parse(args, 1, 1)
		if !ok {
			return code
		}
		var ch team.AdminChange
		if err := teamCall(ctx, env, http.MethodPost, "/api/team/remove", api.TeamRemoveRequest{Device: pos[0]}, &ch); err != nil {
			return fail(env, "team remove: %v", err)
		}
		if !ch.Changed {
			fmt.Fprintf(env.Stdout, "@%s was removed already.\n", ch.Name)
			return 0
		}
		fmt.Fprintf(env.Stdout, "@%s is removed from the team at position %d: every member refuses its ops after it.\n"+
			"Now rotate the cluster credentials that device knew (README, \"Removing a member\"). Admins: @%s\n",
			ch.Name, ch.Pos, strings.Join(ch.Admins, ", @"))
		return 0
	case "help", "-h", "--help":
		fmt.Fprintln(env.Stdout, teamUsage)
		return 0
	}
	return unknownSub(env, "team", sub, "join, share, unshare, status, leave, admin or remove")
}

func teamJoin(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "team join", "team join URL[,URL...] --user NAME [--name TEAM] [--ca-cert FILE] [--insecure] (password on stdin or "+envTeamPassword+")")
	user := fs.String("user", "", "the team cluster user (from its auth file)")
	name := fs.String("name", "", "the team's name, when this join founds it")
	insecure := fs.Bool("insecure", false, "allow plain http:// to a cluster beyond this machine")
	caFile := fs.String("ca-cert", "", "PEM file of the CA that signed the cluster's HTTPS certificates (kept by the node)")
	rest, code, ok := fs.parse(args, 1, 1)
	if !ok {
		return code
	}
	if *user == "" {
		return fs.usageErr("missing --user NAME (the cluster user from its auth file)")
	}
	var urls []string
	for _, u := range strings.Split(rest[0], ",") {
		u = strings.TrimRight(strings.TrimSpace(u), "/")
		if u == "" {
			continue
		}
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil {
			return fs.usageErr("%q is not an http(s)://host:port URL without credentials", u)
		}
		urls = append(urls, u)
	}
	if err := team.CheckTransport(urls, *insecure); err != nil {
		return fail(env, "team join: %v", err)
	}
	var ca []byte
	if *caFile != "" {
		b, err := os.ReadFile(*caFile)
		if err != nil {
			return fail(env, "team join: --ca-cert: %v", err)
		}
		if !bytes.Contains(b, []byte("-----BEGIN CERTIFICATE-----")) {
			return fail(env, "team join: --ca-cert %s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", *caFile)
		}
		ca = b
	}
	password := env.Getenv(envTeamPassword)
	if password == "" {
		p, err := readSecret(env, "team password for "+*user+" (input is hidden): ",
			"no team password: type it at the prompt, pipe it in (memnode team join URL --user NAME < passwordfile) or set "+envTeamPassword)
		if err != nil {
			return fail(env, "team join: %v", err)
		}
		password = p
	}
	var info team.JoinInfo
	if err := teamCall(ctx, env, http.MethodPost, "/api/team/join", api.TeamJoinRequest{URLs: urls, User: *user, Password: password, Name: *name, CACert: string(ca)}, &info); err != nil {
		return fail(env, "team join: %v", err)
	}
	// Kept for the node's next start; the env variable, when set, wins over it.
	store, err := openKeyStore(env)
	if err == nil {
		err = store.Set(keys.TeamPassword, password)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "memnode: the password could not be kept (%v): set %s for the node, or the team stops after a restart\n", err, envTeamPassword)
	}
	leader := info.Leader
	if leader == "" {
		leader = "unknown (the user lacks the status permission)"
	}
	fmt.Fprintf(env.Stdout, "Joined team %s: leader %s, %d members.", info.Name, leader, info.Members)
	if info.Founded {
		fmt.Fprint(env.Stdout, " This device founded it and is its admin.")
	}
	fmt.Fprintln(env.Stdout, "\nNothing is shared yet: `memnode team share PROJECT`.")
	return 0
}

func printTeamStatus(w io.Writer, st team.Status) {
	if !st.Joined {
		fmt.Fprintln(w, "not in a team (memnode team join URL --user NAME)")
		return
	}
	reach := "reachable"
	if !st.Reachable {
		reach = "UNREACHABLE"
	}
	fmt.Fprintf(w, "team %s as %s (@%s)%s\n", st.Name, st.User, st.Author, map[bool]string{true: ", admin"}[st.Admin])
	fmt.Fprintf(w, "cluster: %s, %s\n", strings.Join(st.URLs, ","), reach)
	if st.Leader != "" {
		fmt.Fprintf(w, "leader:  %s\n", st.Leader)
	}
	for _, n := range st.Nodes {
		fmt.Fprintf(w, "  node %s %s leader=%v reachable=%v\n", n.ID, n.URL, n.Leader, n.Reachable)
	}
	switch {
	case st.Removed:
		fmt.Fprintln(w, "ERROR: an admin removed this device from the team: nothing is pushed or pulled (team leave --purge forgets what was pulled)")
	case !st.Admitted:
		fmt.Fprintln(w, "waiting: no admin admitted this device yet; its ops wait here (an admin's running node admits a new device within seconds)")
	}
	fmt.Fprintf(w, "members: %d\nshared:  %s\n", st.Members, strings.Join(st.Shared, ", "))
	if len(st.Waiting) > 0 {
		fmt.Fprintf(w, "waiting to be admitted: @%s (a name another device holds is never admitted)\n", strings.Join(st.Waiting, ", @"))
	}
	if len(st.Admins) > 0 {
		fmt.Fprintf(w, "admins:  @%s\n", strings.Join(st.Admins, ", @"))
	}
	// Counts a user can act on: what is still to go up and to come down, or "unknown yet"
	// (the cluster has not been asked), never a 0 that only means "not known".
	lag := fmt.Sprintf("%d ops", st.PullLag)
	if st.PullLag < 0 {
		lag = "unknown yet"
	}
	fmt.Fprintf(w, "to push: %d ops   to pull: %s   rejected ops: %d\n", st.PushBacklog, lag, st.Rejected)
	if st.LastError != "" {
		fmt.Fprintf(w, "last error: %s\n", st.LastError)
	}
	for _, s := range st.Squatted {
		fmt.Fprintf(w, "ERROR: %s\n", s.Error)
	}
	for _, s := range st.Stalled {
		fmt.Fprintf(w, "stalled: @%s in %s, %d ops held: %s\n", s.Author, s.Project, s.Held, s.Reason)
	}
	for _, r := range st.Refused {
		fmt.Fprintf(w, "refused: %s from @%s at position %d: %s\n", r.Kind, r.Author, r.Pos, r.Reason)
	}
}

// teamPassword is what the daemon hands the node: MEMNODE_TEAM_PASSWORD, else the key
// store's entry. The node asks only once this device has joined a team.
func teamPassword(env *cliEnv) string {
	if p := env.Getenv(envTeamPassword); p != "" {
		return p
	}
	store, err := openKeyStore(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "memnode: team password: %v (set %s)\n", err, envTeamPassword)
		return ""
	}
	p, err := store.Get(keys.TeamPassword)
	if err != nil && !errors.Is(err, keys.ErrNotFound) {
		fmt.Fprintf(env.Stderr, "memnode: team password: %v\n", err)
	}
	return p
}
