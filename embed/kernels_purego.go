//go:build !cgo

package embed

import "math"

// Without cgo the kernels are plain Go loops: correct, several times slower.

func gemmNT(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, bias []float32) {
	fits(a, m, k, lda)
	fits(b, n, k, ldb)
	fits(c, m, n, ldc)
	for i := 0; i < m; i++ {
		ai := a[i*lda : i*lda+k]
		for j := 0; j < n; j++ {
			bj := b[j*ldb : j*ldb+k]
			var s float32
			for p, x := range ai {
				s += x * bj[p]
			}
			if bias != nil {
				s += bias[j]
			}
			c[i*ldc+j] = s
		}
	}
}

func gemmNN(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	fits(a, m, k, lda)
	fits(b, k, n, ldb)
	fits(c, m, n, ldc)
	for i := 0; i < m; i++ {
		ci := c[i*ldc : i*ldc+n]
		clear(ci)
		for p := 0; p < k; p++ {
			w, bp := a[i*lda+p], b[p*ldb:p*ldb+n]
			for j := range ci {
				ci[j] += w * bp[j]
			}
		}
	}
}

func gelu(x []float32) {
	for i, v := range x {
		x[i] = float32(0.5 * float64(v) * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(float64(v)+0.044715*math.Pow(float64(v), 3)))))
	}
}

func dotI8(q []int8, rows []int8, dim int, out []int32) {
	for i := range out {
		r := rows[i*dim : (i+1)*dim]
		var s int32
		for p, x := range q {
			s += int32(x) * int32(r[p])
		}
		out[i] = s
	}
}

func dotRows(q, rows []float32, dim int, idx []int32, out []float32) {
	for j, i := range idx {
		r := rows[int(i)*dim : (int(i)+1)*dim]
		var s float32
		for p, x := range q {
			s += x * r[p]
		}
		out[j] = s
	}
}
