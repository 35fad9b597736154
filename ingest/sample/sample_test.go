package sample

import (
	"fmt"
	"testing"
	"time"
)

func TestEveryPeriodsFromTheEpoch(t *testing.T) {
	type item struct {
		k  string
		at time.Time
	}
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	items := []item{
		{"a", at("1969-12-31T23:00:00Z")}, {"a", at("1970-01-01T01:00:00Z")}, {"a", at("1970-01-01T23:00:00Z")},
		{"b", at("1970-01-01T02:00:00Z")}, {"a", at("1970-01-02T00:00:00Z")},
	}
	var got []string
	for _, it := range Every(items, 24*time.Hour, func(i item) (string, time.Time) { return i.k, i.at }) {
		got = append(got, it.k+" "+it.at.Format("02T15"))
	}
	// Dec 31 23:00 is in the day before the epoch, not in its first day.
	if want := "[a 31T23 a 01T01 b 01T02 a 02T00]"; fmt.Sprint(got) != want {
		t.Errorf("Every = %v, want %s", got, want)
	}
}
