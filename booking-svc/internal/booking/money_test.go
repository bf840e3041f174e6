package booking

import (
	"slices"
	"testing"
	"time"
)

func TestParseRetrySchedule(t *testing.T) {
	got, err := ParseRetrySchedule("1m, 5m,30m,2h,12h")
	if err != nil || !slices.Equal(got, DefaultRefundRetry) {
		t.Fatalf("%v, %v", got, err)
	}
	if got, err := ParseRetrySchedule("90s"); err != nil || !slices.Equal(got, []time.Duration{90 * time.Second}) {
		t.Fatalf("%v, %v", got, err)
	}
	for _, bad := range []string{"", "1m,", "0s", "-1m", "soon", "1m,1m,1m,1m,1m,1m,1m,1m,1m,1m,1m,1m,1m,1m,1m,1m,1m,1m,1m,1m,1m"} {
		if _, err := ParseRetrySchedule(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
