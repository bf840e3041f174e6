package feedsync

import (
	"slices"

	"github.com/vros/vros/libs/pricing"
)

// runsOf splits dates into runs of consecutive nights (dates sorted here).
func runsOf(dates []string) [][]string {
	slices.Sort(dates)
	var out [][]string
	prev := ""
	for _, d := range dates {
		if prev != "" && nextDate(prev) == d {
			out[len(out)-1] = append(out[len(out)-1], d)
		} else {
			out = append(out, []string{d})
		}
		prev = d
	}
	return out
}

func nextDate(d string) string {
	t, _ := pricing.ParseDate(d)
	return t.AddDays(1).String()
}

func setOf(dates []string) map[string]bool {
	out := make(map[string]bool, len(dates))
	for _, d := range dates {
		out[d] = true
	}
	return out
}
