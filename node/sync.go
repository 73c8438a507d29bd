package node

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/memnode/memnode/replica"
	memsync "github.com/memnode/memnode/sync"
)

// startSync joins the device group. A failure (a port in use, say) leaves the node running
// on its own and is shown by status; memory on this device is unaffected.
func (n *Node) startSync(ctx context.Context, rep *replica.Replica) {
	s := n.cfg.Settings
	port, gport := max(s.SyncPort, 0), max(s.GossipPort, 0)
	host := s.SyncHost
	if host == "" {
		host = "127.0.0.1"
	}
	proto := "ip4"
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		proto = "ip6"
	}
	sn, err := memsync.New(memsync.Config{
		DataDir:    n.cfg.DataDir,
		DeviceName: s.DeviceName,
		ListenAddrs: []string{
			fmt.Sprintf("/%s/%s/tcp/%d", proto, host, port),
			fmt.Sprintf("/%s/%s/udp/%d/quic-v1", proto, host, port),
		},
		GossipBindAddr: host,
		GossipPort:     gport,
		Store:          syncStore(rep),
		Feed:           n.feed,
		Logger:         n.log,
		Version:        n.cfg.Version,
		MDNS:           s.MDNS,
	})
	if err == nil {
		err = sn.Start(ctx)
	}
	if err != nil {
		msg := err.Error()
		n.syncErr.Store(&msg)
		n.log.Error("device sync did not start; this device keeps working alone", "err", err)
		return
	}
	n.sync.Store(sn)
	n.log.Info("device sync on", "peer_id", sn.ID().String(), "addrs", sn.Addrs())
}

// syncSummary is the one-line sync state for status.
func (n *Node) syncSummary(ctx context.Context) string {
	if n.cfg.Settings.SyncDisabled {
		return "off (sync_disabled)"
	}
	if e := n.syncErr.Load(); e != nil {
		return "error: " + *e
	}
	sn := n.sync.Load()
	if sn == nil {
		return "starting"
	}
	st, err := sn.Status(ctx)
	if err != nil {
		return "error: " + err.Error()
	}
	if st.RemovedBy != "" {
		return "removed from its group (told by " + st.RemovedBy + "); 'memnode peers leave' starts a new group"
	}
	alive := 0
	for _, d := range st.Devices {
		if d.State == memsync.StateAlive {
			alive++
		}
	}
	if len(st.Devices) <= 1 {
		return "on, not paired yet ('memnode peers invite' on this device, 'memnode peers join CODE' on another)"
	}
	line := strconv.Itoa(len(st.Devices)) + " devices, " + strconv.Itoa(alive) + " alive ('memnode peers' for details)"
	if st.OpsKnown > st.OpsHeld {
		line += "; catching up: " + strconv.FormatUint(st.OpsHeld, 10) + " of " + strconv.FormatUint(st.OpsKnown, 10) + " ops here"
	}
	for _, d := range st.Devices {
		if d.Error != "" {
			line += "; error with " + d.Name + ": " + d.Error
		}
	}
	return line
}

// peers serves the peers API routes from whatever sync node is running.
type peers struct{ n *Node }

func (p peers) node() (*memsync.Node, error) {
	if sn := p.n.sync.Load(); sn != nil {
		return sn, nil
	}
	if e := p.n.syncErr.Load(); e != nil {
		return nil, fmt.Errorf("device sync failed to start: %s: %w", *e, memsync.ErrNotStarted)
	}
	return nil, memsync.ErrNotStarted
}

func (p peers) Status(ctx context.Context) (memsync.Status, error) {
	sn, err := p.node()
	if err != nil {
		return memsync.Status{}, err
	}
	return sn.Status(ctx)
}

func (p peers) Invite(ttl time.Duration) (string, error) {
	sn, err := p.node()
	if err != nil {
		return "", err
	}
	return sn.Invite(ttl)
}

func (p peers) Join(ctx context.Context, code string) error {
	sn, err := p.node()
	if err != nil {
		return err
	}
	return sn.Join(ctx, code)
}

func (p peers) Remove(ctx context.Context, device string) (memsync.Member, error) {
	sn, err := p.node()
	if err != nil {
		return memsync.Member{}, err
	}
	return sn.Remove(ctx, device)
}

func (p peers) Leave(ctx context.Context) error {
	sn, err := p.node()
	if err != nil {
		return err
	}
	return sn.Leave(ctx)
}
