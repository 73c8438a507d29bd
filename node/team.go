package node

import (
	"context"
	"os"

	"github.com/libp2p/go-libp2p/core/crypto"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/team"
	"github.com/memnode/memnode/team/statedb"
)

// startTeam opens team memory; it contacts the cluster only once this device has joined.
// A failure leaves the node serving, without team memory, and is reported by the routes.
func (n *Node) startTeam(ctx context.Context, rep *replica.Replica, key crypto.PrivKey) {
	device := n.cfg.Settings.DeviceName
	if device == "" {
		device, _ = os.Hostname()
	}
	t, err := team.New(ctx, team.Config{
		StatePath: datadir.Dir(n.cfg.DataDir).Team(),
		OpenState: func(ctx context.Context, path string) (team.StateDB, error) { return statedb.Open(ctx, path) },
		Replica:   rep,
		Key:       key,
		Device:    device,
		LocalOnly: globMatcher(n.cfg.Settings.LocalOnlyProjects),
		Password:  n.cfg.TeamPassword,
		Feed:      n.feed,
		Logger:    n.log.With("part", "team"),
	})
	if err != nil {
		msg := err.Error()
		n.teamErr.Store(&msg)
		n.log.Error("team memory did not start", "err", err)
		return
	}
	t.Start(ctx)
	n.team.Store(t)
}

// teamSummary is status's team line: local state only, never a request to the cluster.
func (n *Node) teamSummary(ctx context.Context) apitype.TeamStatus {
	t := n.team.Load()
	if t == nil {
		if e := n.teamErr.Load(); e != nil {
			return apitype.TeamStatus{LastError: *e}
		}
		return apitype.TeamStatus{}
	}
	s, err := t.LocalStatus(ctx)
	if err != nil {
		return apitype.TeamStatus{LastError: err.Error()}
	}
	return apitype.TeamStatus{Joined: s.Joined, Name: s.Name, Shared: s.Shared, Reachable: s.Reachable,
		PushBacklog: s.PushBacklog, Rejected: s.Rejected, LastError: s.LastError, Squatted: len(s.Squatted)}
}
