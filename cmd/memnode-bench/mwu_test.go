package main

import (
	"math"
	"testing"
)

// TestMannWhitneyP: the exact p-values of small cases worked by hand, identical rounds,
// complete separation at 7 rounds each (2/3,432), and the sampled path beyond the bound.
func TestMannWhitneyP(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float64
		want float64
	}{
		{"one each, different", []float64{1}, []float64{2}, 1},             // both splits are as extreme
		{"two each, separated", []float64{1, 2}, []float64{3, 4}, 2.0 / 6}, // U=0 or U=4 of C(4,2)=6
		{"identical rounds", []float64{5, 5, 5}, []float64{5, 5, 5}, 1},    // every split ties
		{"seven each, separated", []float64{1, 2, 3, 4, 5, 6, 7}, []float64{8, 9, 10, 11, 12, 13, 14}, 2.0 / 3432},
		{"seven each, interleaved", []float64{1, 3, 5, 7, 9, 11, 13}, []float64{2, 4, 6, 8, 10, 12, 14}, -1}, // large p
		{"empty side", nil, []float64{1}, 1},
	} {
		got := mannWhitneyP(tc.a, tc.b)
		if tc.want < 0 {
			if got < 0.5 {
				t.Errorf("%s: p = %.4f, want a large p", tc.name, got)
			}
			continue
		}
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: p = %.6f, want %.6f", tc.name, got, tc.want)
		}
	}
	if testing.Short() {
		return // -short: the sampled p-value below takes seconds; make test runs it
	}
	// 12 rounds each: C(24,12) splits, beyond the bound: sampled, and still near 2/C(24,12).
	a, b := make([]float64, 12), make([]float64, 12)
	for i := range a {
		a[i], b[i] = float64(i), float64(100+i)
	}
	if p := mannWhitneyP(a, b); p > 0.001 {
		t.Errorf("12 rounds each, separated: p = %.5f, want < 0.001", p)
	}
	if p1, p2 := mannWhitneyP(a, b), mannWhitneyP(a, b); p1 != p2 {
		t.Errorf("the sampled p-value is not reproducible: %v, %v", p1, p2)
	}
}
