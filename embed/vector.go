package embed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrBadVector means a stored vector blob cannot be decoded.
var ErrBadVector = errors.New("bad vector blob")

// Cosine returns the cosine similarity of a and b. For L2-normalised vectors (everything
// an Embedder returns) it equals the dot product, which is all it computes: the search
// hot path calls it once per stored vector, so it skips the norms. Vectors of different
// lengths score 0.
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	b = b[:len(a)] // lets the compiler drop bounds checks below
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i]*b[i] + a[i+4]*b[i+4]
		s1 += a[i+1]*b[i+1] + a[i+5]*b[i+5]
		s2 += a[i+2]*b[i+2] + a[i+6]*b[i+6]
		s3 += a[i+3]*b[i+3] + a[i+7]*b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Normalize scales v in place to unit L2 norm and reports whether it could: an all-zero
// or non-finite vector is left unchanged and yields false.
func Normalize(v []float32) bool {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsInf(sum, 0) || math.IsNaN(sum) {
		return false
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return true
}

// EncodeVector serialises v as little-endian float32s, the blob format stored beside rows.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVector parses a blob written by EncodeVector. It rejects lengths that are not a
// multiple of 4 and non-finite values, since blobs arrive from peers and imports.
func DecodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("decode vector: %w: %d bytes is not a multiple of 4", ErrBadVector, len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		x := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("decode vector: %w: non-finite value at %d", ErrBadVector, i)
		}
		v[i] = x
	}
	return v, nil
}
