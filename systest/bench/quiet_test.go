package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/libs/events"
)

// Every load starts from a quiet machine. A write benchmark leaves work behind it: the
// consumers of both stacks (catalog, the services' property views, the journal, webhooks,
// messaging, channels) apply the thousands of events it published, for seconds after it. A
// benchmark measured meanwhile measures that work too: the first full run after property
// updates got three times faster showed getinfo and create at half their figures alone.
// quiet waits until every consumer group of both stacks has committed the end of each
// partition it reads (caughtUp), up to quietMax: a consumer that waits on its store more
// than it computes (the journal applies a burst of creates at tens of events a second)
// leaves the CPUs nearly idle while it works through a backlog, and the real stack's create
// measured after the embedded one's ran at 502 req/s, p99 66 ms, against 590, 55 ms alone.
// Then it waits until the machine's CPUs are mostly idle (/proc/stat, all processes: the
// real stack's PostgreSQL and Kafka too) for two windows in a row, up to quietMax; where
// /proc/stat cannot be read it does not wait.
const (
	quietWindow = 250 * time.Millisecond
	quietBusy   = 0.15 // of all CPUs: under a third of one core on two
	quietMax    = 60 * time.Second
	caughtUpMax = 3 * time.Minute
)

// flooding counts the floods running (BenchmarkFairness): a load measured beside one does
// not wait for a quiet machine.
var flooding atomic.Int32

func quiet(b *testing.B) {
	b.Helper()
	if flooding.Load() > 0 {
		return
	}
	for start := time.Now(); ; time.Sleep(quietWindow) {
		lagging, err := caughtUp()
		if err != nil {
			b.Logf("consumer lag unknown: %v", err)
			break
		}
		if lagging == "" {
			break
		}
		if time.Since(start) > caughtUpMax {
			b.Logf("%s still behind after %v: measuring anyway", lagging, caughtUpMax)
			break
		}
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

// caughtUp names a consumer group of a running stack that has not committed the end of a
// partition of the vros topics it has committed on ("" when none); a group that committed
// nothing on a partition does not read it.
func caughtUp() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, s := range stores {
		c := &kafka.Client{Addr: kafka.TCP(s.st.KafkaBrokers...)}
		parts, err := events.PartitionsOf(ctx, c, events.Topics)
		if err != nil {
			return "", err
		}
		ends, err := events.NextOffsets(ctx, c, parts)
		if err != nil {
			return "", err
		}
		groups, err := c.ListGroups(ctx, &kafka.ListGroupsRequest{})
		if err == nil {
			err = groups.Error
		}
		if err != nil {
			return "", fmt.Errorf("groups of the %s stack: %w", s.name, err)
		}
		for _, g := range groups.Groups {
			committed, err := events.Committed(ctx, c, g.GroupID, parts)
			if err != nil {
				return "", err
			}
			for p, off := range committed {
				if off >= 0 && off < ends[p] {
					return s.name + " " + g.GroupID, nil
				}
			}
		}
	}
	return "", nil
}
