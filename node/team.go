package node

import (
	"context"
	"fmt"
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

// teamRoutes is the API's view of team memory: errors until it started.
type teamRoutes struct{ n *Node }

func (r teamRoutes) get() (*team.Team, error) {
	if t := r.n.team.Load(); t != nil {
		return t, nil
	}
	if e := r.n.teamErr.Load(); e != nil {
		return nil, fmt.Errorf("team memory failed to start: %s", *e)
	}
	return nil, errNotReady
}

func (r teamRoutes) Join(ctx context.Context, req team.JoinRequest) (team.JoinInfo, error) {
	t, err := r.get()
	if err != nil {
		return team.JoinInfo{}, err
	}
	return t.Join(ctx, req)
}

func (r teamRoutes) Share(ctx context.Context, project string) error {
	t, err := r.get()
	if err != nil {
		return err
	}
	return t.Share(ctx, project)
}

func (r teamRoutes) Unshare(ctx context.Context, project string) error {
	t, err := r.get()
	if err != nil {
		return err
	}
	return t.Unshare(ctx, project)
}

func (r teamRoutes) Status(ctx context.Context) (team.Status, error) {
	t, err := r.get()
	if err != nil {
		return team.Status{}, err
	}
	return t.Status(ctx)
}

func (r teamRoutes) Leave(ctx context.Context, purge bool) (int, error) {
	t, err := r.get()
	if err != nil {
		return 0, err
	}
	return t.Leave(ctx, purge)
}

func (r teamRoutes) Search(ctx context.Context, query, project string, limit int) ([]team.Hit, error) {
	t, err := r.get()
	if err != nil {
		return nil, err
	}
	return t.Search(ctx, query, project, limit)
}

func (r teamRoutes) Admin(ctx context.Context, add bool, who string) (team.AdminChange, error) {
	t, err := r.get()
	if err != nil {
		return team.AdminChange{}, err
	}
	return t.Admin(ctx, add, who)
}

func (r teamRoutes) Remove(ctx context.Context, who string) (team.AdminChange, error) {
	t, err := r.get()
	if err != nil {
		return team.AdminChange{}, err
	}
	return t.Remove(ctx, who)
}
