package main

import (
	"math"
	"math/rand/v2"
)

// mannWhitneyP is the two-sided p-value of the Mann–Whitney U test of a against b: how
// often a split of the pooled rounds into groups of len(a) and len(b), all equally likely
// when both binaries are the same, gives a U at least as far from its mean as the rounds
// did. Ties count half. Up to maxExactSplits splits it enumerates them all (7 rounds each:
// 3,432); beyond, it draws that many at random with a fixed seed, so a table is
// reproducible. It returns 1 when either side is empty.
func mannWhitneyP(a, b []float64) float64 {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return 1
	}
	pool := append(append(make([]float64, 0, n+m), a...), b...)
	mean := float64(n*m) / 2
	observed := math.Abs(uStat(pool, inA(n, n+m)) - mean)
	var extreme, total float64
	count := func(mask []bool) {
		total++
		if math.Abs(uStat(pool, mask)-mean) >= observed-1e-9 {
			extreme++
		}
	}
	if binom(n+m, n) <= maxExactSplits {
		eachSplit(n+m, n, count)
	} else {
		rng := rand.New(rand.NewPCG(1, 2))
		mask := make([]bool, n+m)
		for range maxExactSplits {
			for i := range mask {
				mask[i] = false
			}
			for _, i := range rng.Perm(n + m)[:n] {
				mask[i] = true
			}
			count(mask)
		}
	}
	return extreme / total
}

// maxExactSplits bounds the splits mannWhitneyP weighs (C(20, 10) = 184,756).
const maxExactSplits = 200_000

// uStat is U of the rounds marked in mask against the others: pairs where the marked one
// is larger, ties counting half.
func uStat(pool []float64, mask []bool) float64 {
	var u float64
	for i, x := range pool {
		if !mask[i] {
			continue
		}
		for j, y := range pool {
			switch {
			case mask[j]:
			case x > y:
				u++
			case x == y:
				u += 0.5
			}
		}
	}
	return u
}

// inA marks the first n of size rounds: the split the A/B run made.
func inA(n, size int) []bool {
	mask := make([]bool, size)
	for i := range n {
		mask[i] = true
	}
	return mask
}

// eachSplit calls f with every way of marking k of size rounds.
func eachSplit(size, k int, f func(mask []bool)) {
	mask := make([]bool, size)
	var rec func(i, left int)
	rec = func(i, left int) {
		if left == 0 {
			f(mask)
			return
		}
		if size-i < left {
			return
		}
		mask[i] = true
		rec(i+1, left-1)
		mask[i] = false
		rec(i+1, left)
	}
	rec(0, k)
}

func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}
