// Package sync replicates a device's op-log to the other devices of its owner over libp2p,
// with memberlist for membership and invite codes for pairing; DESIGN.md is the protocol's
// specification.
package sync
