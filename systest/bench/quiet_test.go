package bench

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Every load starts from a quiet machine. A write benchmark leaves work behind it: the
// consumers of both stacks (catalog, the services' property views, the journal, webhooks,
// messaging, channels) apply the thousands of events it published, for seconds after it. A
// benchmark measured meanwhile measures that work too: the first full run after property
// updates got three times faster showed getinfo and create at half their figures alone.
// quiet waits until the machine's CPUs are mostly idle (/proc/stat, all processes: the
// real stack's PostgreSQL and Kafka too) for two windows in a row, up to quietMax; where
// /proc/stat cannot be read it does not wait.
const (
	quietWindow = 250 * time.Millisecond
	quietBusy   = 0.15 // of all CPUs: under a third of one core on two
	quietMax    = 60 * time.Second
)

// flooding counts the floods running (BenchmarkFairness): a load measured beside one does
// not wait for a quiet machine.
var flooding atomic.Int32

func quiet(b *testing.B) {
	b.Helper()
	if flooding.Load() > 0 {
		return
	}
	start := time.Now()
	calm := 0
	prevBusy, prevTotal, ok := cpuTimes()
	for ok && calm < 2 {
		if time.Since(start) > quietMax {
			b.Logf("the machine was still busy after %v: measuring anyway", quietMax)
			return
		}
		time.Sleep(quietWindow)
		busy, total, ok2 := cpuTimes()
		if !ok2 || total == prevTotal {
			return
		}
		if float64(busy-prevBusy)/float64(total-prevTotal) < quietBusy {
			calm++
		} else {
			calm = 0
		}
		prevBusy, prevTotal, ok = busy, total, ok2
	}
}

// cpuTimes reads the busy and total jiffies of all CPUs from /proc/stat.
func cpuTimes() (busy, total uint64, ok bool) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, false
	}
	for i, f := range fields[1:] {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, true
}
