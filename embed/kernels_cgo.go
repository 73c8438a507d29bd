//go:build cgo

package embed

/*
#cgo CFLAGS: -O3
#cgo LDFLAGS: -lm
#include "kernels.h"
*/
import "C"

import "unsafe"

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
