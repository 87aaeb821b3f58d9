// Package benchtest holds what the `make bench` figures of several
// packages share. Only tests import it.
package benchtest

import (
	"sort"
	"time"
)

// Median returns the median duration of f over n runs.
func Median(n int, f func()) time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		start := time.Now()
		f()
		ds[i] = time.Since(start)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[n/2]
}

// Ms is d in milliseconds, for printing.
func Ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
