package memory

import (
	"crypto/rand"
	"encoding/hex"
)

// NewEventID mints an event's ID: 128 random bits in hex. The hook mints it, so a spooled
// event replayed after an acknowledged send is stored once; the node mints one only for an
// event that arrives without.
func NewEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported systems
	return hex.EncodeToString(b[:])
}
