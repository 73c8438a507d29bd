package replica

import "hash/fnv"

// Crockford base32: sortable as ASCII, no ambiguous letters.
const idAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// newID mints a global record ID from an HLC stamp and the origin: 26 characters that sort
// by time. It is unique because an origin never issues the same stamp twice and the low 64
// bits hash the origin.
func newID(hlc uint64, origin string) string {
	h := fnv.New64a()
	h.Write([]byte(origin))
	lo, hi := h.Sum64(), hlc
	// 128 bits as 26 base32 digits (130 bits, the top 2 always zero).
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = idAlphabet[lo&31]
		lo = lo>>5 | (hi&31)<<59
		hi >>= 5
	}
	return string(out[:])
}
