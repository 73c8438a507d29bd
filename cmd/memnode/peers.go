//go:build !memnode_lean

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memnode/memnode/api"
	"github.com/memnode/memnode/client"
	memsync "github.com/memnode/memnode/sync"
)

const peersUsage = `usage:
  memnode peers [--json]              list the devices of this group
  memnode peers status --json         the same, as JSON for scripts
  memnode peers invite [--ttl 10m]    print a single-use code for a new device
  memnode peers join [CODE]           join the group of the device that printed CODE
                                      (without CODE, it is read from stdin)
  memnode peers remove DEVICE         revoke a device (name, short ID or peer ID) for good
  memnode peers leave                 leave the group (this device keeps its memory and
                                      becomes a group of one, which can join another)`

// cmdPeers administers the device group through the running node's API.
func cmdPeers(ctx context.Context, env *cliEnv, args []string) int {
	sub := ""
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || args[0] == "-h" || args[0] == "--help") {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "", "list", "status":
		fs := newFlags(env, strings.TrimSpace("peers "+sub), strings.TrimSpace("peers "+sub)+" [--json]")
		asJSON := fs.Bool("json", false, "print JSON")
		if _, code, ok := fs.parse(args, 0, 0); !ok {
			return code
		}
		var st memsync.Status
		if err := peersCall(ctx, env, http.MethodGet, "/api/peers", nil, &st); err != nil {
			return fail(env, "peers: %v", err)
		}
		if *asJSON {
			enc := json.NewEncoder(env.Stdout)
			enc.SetIndent("", "  ")
			enc.Encode(st)
			return 0
		}
		printPeers(env.Stdout, st)
		return 0
	case "invite":
		fs := newFlags(env, "peers invite", "peers invite [--ttl 10m]")
		ttl := fs.Duration("ttl", memsync.DefaultInviteTTL, "how long the code stays valid")
		if _, code, ok := fs.parse(args, 0, 0); !ok {
			return code
		}
		if *ttl <= 0 {
			return fs.usageErr("--ttl must be positive, e.g. 10m")
		}
		var rep api.InviteReply
		if err := peersCall(ctx, env, http.MethodPost, "/api/peers/invite", api.InviteRequest{TTL: ttl.String()}, &rep); err != nil {
			return fail(env, "peers invite: %v", err)
		}
		fmt.Fprintf(env.Stdout, "%s\n\nOn the other device run:\n  memnode peers join %s\nThe code works once, until %s. Do not share it with anyone else.\n",
			rep.Code, rep.Code, rep.Expires.Local().Format("15:04:05"))
		return 0
	case "join":
		fs := newFlags(env, "peers join", "peers join [CODE] (without CODE, it is read from stdin)")
		pos, exit, ok := fs.parse(args, 0, 1)
		if !ok {
			return exit
		}
		code := ""
		if len(pos) > 0 {
			code = pos[0]
		} else {
			// Reading from stdin keeps the code out of shell history and process listings.
			line, err := bufio.NewReader(env.Stdin).ReadString('\n')
			if err != nil && line == "" {
				return fail(env, "peers join: no code given (pass it as an argument or on stdin)")
			}
			code = strings.TrimSpace(line)
		}
		if code == "" {
			return fs.usageErr("missing argument")
		}
		if err := peersCall(ctx, env, http.MethodPost, "/api/peers/join", api.JoinRequest{Code: code}, nil); err != nil {
			return fail(env, "peers join: %v", err)
		}
		fmt.Fprintln(env.Stdout, "Joined. This device now syncs with the group; `memnode peers` lists the devices.")
		return 0
	case "remove":
		pos, code, ok := newFlags(env, "peers remove", "peers remove DEVICE (name, short ID or peer ID)").parse(args, 1, 1)
		if !ok {
			return code
		}
		var m memsync.Member
		if err := peersCall(ctx, env, http.MethodPost, "/api/peers/remove", api.RemoveRequest{Device: pos[0]}, &m); err != nil {
			return fail(env, "peers remove: %v", err)
		}
		fmt.Fprintf(env.Stdout, "Removed %s (%s). It can no longer connect, and the group key was rotated.\n", m.Name, m.PeerID)
		return 0
	case "leave":
		if _, code, ok := newFlags(env, "peers leave", "peers leave").parse(args, 0, 0); !ok {
			return code
		}
		if err := peersCall(ctx, env, http.MethodPost, "/api/peers/leave", nil, nil); err != nil {
			return fail(env, "peers leave: %v", err)
		}
		fmt.Fprintln(env.Stdout, "Left the group. This device keeps its memory and is now a group of one; `memnode peers join CODE` joins another.")
		return 0
	case "help", "-h", "--help":
		fmt.Fprintln(env.Stdout, peersUsage)
		return 0
	}
	return unknownSub(env, "peers", sub, "list, status, invite, join, remove or leave")
}

func printPeers(w io.Writer, st memsync.Status) {
	if st.RemovedBy != "" {
		fmt.Fprintf(w, "This device was removed from its group (told by %s): it no longer syncs. Run `memnode peers leave`, then join another group.\n", st.RemovedBy)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tPEER\tSTATE\tLAST SYNC\tTO PULL\tTO SEND\tADDRESSES")
	for _, d := range st.Devices {
		name := d.Name
		if d.Self {
			name += " (this device)"
		}
		last := "-"
		if d.LastSync != nil {
			last = time.Since(*d.LastSync).Truncate(time.Second).String() + " ago"
		}
		// TO PULL: ops the device has that this one lacks; TO SEND: the other way round.
		pull, send := "-", "-"
		switch {
		case d.Self:
		case !d.Compared:
			pull, send = "unknown yet", "unknown yet"
		default:
			pull, send = fmt.Sprint(d.Ahead), fmt.Sprint(d.Behind)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, d.ShortID, d.State, last, pull, send, strings.Join(d.Addrs, " "))
	}
	tw.Flush()
	for _, d := range st.Devices {
		if d.Error != "" {
			fmt.Fprintf(w, "sync with %s (%s) keeps failing: %s\n", d.Name, d.ShortID, d.Error)
		}
	}
	if line := catchUpLine(st); line != "" {
		fmt.Fprintln(w, line)
	}
	if st.PendingInvites > 0 {
		fmt.Fprintf(w, "%d invite(s) pending\n", st.PendingInvites)
	}
}

// catchUpLine says how far this device is while it catches up ("" once it holds every op
// its peers announced, or before any peer has announced one), with the rows of a snapshot
// it is installing.
func catchUpLine(st memsync.Status) string {
	compared := false
	for _, d := range st.Devices {
		compared = compared || d.Compared
	}
	snap := ""
	if s := st.Snapshot; s != nil {
		snap = fmt.Sprintf("snapshot: %d of %d rows installed", s.Rows, s.Total)
	}
	line := ""
	switch {
	case len(st.Devices) > 1 && !compared:
		line = "catching up: unknown yet (no device has announced what it holds; the first sync tells)"
	case st.OpsKnown > st.OpsHeld:
		line = fmt.Sprintf("catching up: %d of %d ops here, %d to pull", st.OpsHeld, st.OpsKnown, st.OpsKnown-st.OpsHeld)
	case snap != "":
		return "catching up: " + snap
	}
	if line != "" && snap != "" {
		line += "; " + snap
	}
	return line
}

// peersCall sends a JSON request to the node's API with the data dir's token. Pairing
// talks to other devices, so it gets a deadline of its own.
func peersCall(ctx context.Context, env *cliEnv, method, path string, in, out any) error {
	c, err := client.FromDialer(dialer(env))
	if err != nil {
		return fmt.Errorf("is the node running? %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return c.Call(ctx, method, path, in, out)
}
