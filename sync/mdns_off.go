//go:build !memnode_mdns

package sync

import "errors"

// ErrNoMDNS reports a binary built without LAN discovery (build tag memnode_mdns, which needs
// the module github.com/libp2p/zeroconf/v2). Joining by known addresses works regardless.
var ErrNoMDNS = errors.New("this build has no mDNS discovery (build with -tags memnode_mdns)")

func (n *Node) startMDNS() error { return ErrNoMDNS }
