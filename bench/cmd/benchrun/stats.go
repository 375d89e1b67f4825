package main

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// dist summarises latency samples.
type dist struct {
	N                       int
	P50, P90, P99, Max, Avg time.Duration
}

func summarize(s []time.Duration) dist {
	if len(s) == 0 {
		return dist{}
	}
	c := slices.Clone(s)
	slices.Sort(c)
	q := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(c)))) - 1
		return c[max(0, min(i, len(c)-1))]
	}
	var sum time.Duration
	for _, d := range c {
		sum += d
	}
	return dist{N: len(c), P50: q(.50), P90: q(.90), P99: q(.99), Max: c[len(c)-1], Avg: sum / time.Duration(len(c))}
}

// median of durations (the middle one; the mean of the two middle ones for an even count).
func median(v []time.Duration) time.Duration {
	if len(v) == 0 {
		return 0
	}
	c := slices.Clone(v)
	slices.Sort(c)
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

// iqr is the 25th–75th percentile range of v.
func iqr(v []time.Duration) (time.Duration, time.Duration) {
	if len(v) == 0 {
		return 0, 0
	}
	c := slices.Clone(v)
	slices.Sort(c)
	return c[(len(c)-1)/4], c[(3*(len(c)-1)+3)/4]
}

func us(d time.Duration) float64 { return math.Round(float64(d)/float64(time.Microsecond)*10) / 10 }

func fus(d time.Duration) string {
	return fmt.Sprintf("%.0f", float64(d)/float64(time.Microsecond))
}

func fms(d time.Duration) string {
	return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond))
}

func kib(b float64) string { return fmt.Sprintf("%.1f KiB", b/1024) }
