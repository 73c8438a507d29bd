package store

import (
	"crypto/sha256"
	"encoding/binary"
	"hash/fnv"
	"strings"
)

// IDAlphabet is Crockford base32: sortable as ASCII, no ambiguous letters. Record IDs and
// their short forms spell in it.
const IDAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// Short ID bounds: a short form is MinShortID to MaxShortID characters of a hash of the ID.
const (
	MinShortID = 6  // characters of the shortest short form (~2 tokens by memory.EstimateTokens)
	MaxShortID = 12 // characters of the stored hash (60 bits)
)

// NewID mints a global record ID from an HLC stamp and the origin: 26 characters that sort
// by time. It is unique because an origin never issues the same stamp twice and the low 64
// bits hash the origin.
func NewID(hlc uint64, origin string) string {
	h := fnv.New64a()
	h.Write([]byte(origin))
	lo, hi := h.Sum64(), hlc
	// 128 bits as 26 base32 digits (130 bits, the top 2 always zero).
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = IDAlphabet[lo&31]
		lo = lo>>5 | (hi&31)<<59
		hi >>= 5
	}
	return string(out[:])
}

// ImportID derives a stable global ID for a record imported from elsewhere: the same key
// always gives the same ID (so imports are idempotent), and IDs sort by createdAt like
// the IDs minted here.
func ImportID(createdAtMs int64, key string) string {
	sum := sha256.Sum256([]byte(key))
	stamp := uint64(createdAtMs)<<HLCLogicalBits | uint64(binary.BigEndian.Uint16(sum[:2]))
	return NewID(stamp, "import:"+key)
}

// IsShortIDForm reports whether s could be a short ID (or a prefix of one): 4 to 12
// Crockford base32 characters, any case.
func IsShortIDForm(s string) bool {
	if len(s) < 4 || len(s) > MaxShortID {
		return false
	}
	for _, c := range strings.ToUpper(s) {
		if !strings.ContainsRune(IDAlphabet, c) {
			return false
		}
	}
	return true
}
