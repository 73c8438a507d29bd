package node

import (
	"context"
	"fmt"
	"net"

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
	return st.Summary()
}
