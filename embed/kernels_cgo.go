//go:build cgo

package embed

/*
#cgo CFLAGS: -O3
#cgo LDFLAGS: -lm
#include "kernels.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// The kernels take Go slices: C only reads and writes the float arrays during the call and
// keeps no pointer, which cgo's rules allow.

func fptr(s []float32) *C.float {
	if len(s) == 0 {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&s[0]))
}

// gemmNT sets c[i*ldc+j] = bias[j] + Σp a[i*lda+p]·b[j*ldb+p] for i < m, j < n (bias may
// be nil): x·Wᵀ for row-major activations x and a row-major [out×in] weight W.
func gemmNT(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, bias []float32) {
	fits(a, m, k, lda)
	fits(b, n, k, ldb)
	fits(c, m, n, ldc)
	if bias != nil {
		fits(bias, 1, n, n)
	}
	C.memnode_gemm_nt(C.int(m), C.int(n), C.int(k), fptr(a), C.int(lda), fptr(b), C.int(ldb), fptr(c), C.int(ldc), fptr(bias))
}

// gemmNN sets c[i*ldc+j] = Σp a[i*lda+p]·b[p*ldb+j] for i < m, j < n.
func gemmNN(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	fits(a, m, k, lda)
	fits(b, k, n, ldb)
	fits(c, m, n, ldc)
	C.memnode_gemm_nn(C.int(m), C.int(n), C.int(k), fptr(a), C.int(lda), fptr(b), C.int(ldb), fptr(c), C.int(ldc))
}

// gelu applies spago's GELU (tanh approximation) in place.
func gelu(x []float32) {
	C.memnode_gelu(fptr(x), C.int(len(x)))
}

// dotI8 sets out[i] = Σp q[p]·rows[i*dim+p] for i < len(out).
func dotI8(q []int8, rows []int8, dim int, out []int32) {
	n := len(out)
	if n == 0 {
		return
	}
	if len(q) != dim || len(rows) < n*dim {
		panic(fmt.Sprintf("embed: dotI8 of %d rows of dim %d over %d codes, query %d", n, dim, len(rows), len(q)))
	}
	C.memnode_dot_i8((*C.int8_t)(unsafe.Pointer(&q[0])), (*C.int8_t)(unsafe.Pointer(&rows[0])), C.int(dim), C.int(n),
		(*C.int32_t)(unsafe.Pointer(&out[0])))
}

// dotRows sets out[i] = Σp q[p]·rows[idx[i]*dim+p] for i < len(idx).
func dotRows(q, rows []float32, dim int, idx []int32, out []float32) {
	m := len(idx)
	if m == 0 {
		return
	}
	if len(q) != dim || len(out) < m {
		panic(fmt.Sprintf("embed: dotRows query %d, dim %d, %d outputs for %d rows", len(q), dim, len(out), m))
	}
	for _, i := range idx {
		fits(rows[int(i)*dim:], 1, dim, dim)
	}
	C.memnode_dot_rows(fptr(q), fptr(rows), C.int(dim), (*C.int32_t)(unsafe.Pointer(&idx[0])), C.int(m), fptr(out))
}
