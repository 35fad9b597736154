// Package sample thins a dated history to a few items per period, the same ones
// each time: the imports of git histories (SkyPilot's catalog, GCP's pricing file)
// keep one snapshot a day or every few days with it.
package sample

import "time"

// Every keeps, of items in order, the first of each key in each period of length
// every, periods counted from the Unix epoch in UTC (so sampling the same history
// again, or a longer one, keeps the same items). key returns an item's key and
// time. every <= 0 keeps them all.
func Every[T any](items []T, every time.Duration, key func(T) (string, time.Time)) []T {
	if every <= 0 {
		return items
	}
	type slot struct {
		key    string
		period int64
	}
	seen := map[slot]bool{}
	var out []T
	for _, it := range items {
		k, at := key(it)
		n := at.UnixNano()
		p := n / int64(every)
		if n < 0 && n%int64(every) != 0 {
			p-- // floor, not truncation, before 1970
		}
		if s := (slot{k, p}); !seen[s] {
			seen[s] = true
			out = append(out, it)
		}
	}
	return out
}
