package bench

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Two measures beside the closed-loop one (load), so that a ratio measures our work and a
// percentile includes queueing (docs/benchmarks.md, "How to read"):
//
//   - bare-same-bytes: the bare Fiber app answers vros's own answer to the same request —
//     the same bytes, size and content type, fetched once through edge — after decoding the
//     request's JSON as the other bare routes do. The ratio against it is what our work costs,
//     not the size of the payload.
//   - open-loop: requests are offered at a constant rate whatever the answers' pace (vegeta),
//     a quarter of the closed loop's throughput measured just before on the same stack (the
//     generator shares the machine's two cores, and net/http costs it more than fasthttp
//     does the closed loop: at half, it saturated the cores itself); a request that waits
//     for a busy server counts its wait (no coordinated omission).

// canned is an answer the bare app sends as it is.
type canned struct {
	body        []byte
	contentType string
}

var (
	cannedAnswers sync.Map // id → canned
	cannedN       atomic.Int64
)

// sameBytesURL registers answer on the bare app and returns the URL that sends it.
func sameBytesURL(answer []byte, contentType string) string {
	id := strconv.FormatInt(cannedN.Add(1), 10)
	cannedAnswers.Store(id, canned{body: bytes.Clone(answer), contentType: contentType})
	return bareURL + "/same/" + id
}

// sameBytes fetches vros's answer to the request once (it must succeed) and runs the
// closed-loop load against the bare app sending those bytes ("bare-same-bytes").
func sameBytes(b *testing.B, url string, headers func() map[string]string, body []byte) {
	code, ct, answer := sendCT("POST", url, headers(), body)
	if !answered(code, answer) {
		b.Fatalf("the answer to copy: HTTP %d %.300s", code, answer)
	}
	same := sameBytesURL(answer, ct)
	b.Run("bare-same-bytes", func(b *testing.B) {
		load(b, same, headers, body)
		b.ReportMetric(float64(len(answer)), "answer-bytes")
	})
}

// edgeLoads runs the closed-loop load through edge ("edge"), then the open-loop one at a
// quarter of the throughput the closed loop reached ("edge-open-loop").
func edgeLoads(b *testing.B, url string, headers func() map[string]string, body func() []byte) {
	var closed float64
	b.Run("edge", func(b *testing.B) { closed = loadParallel(b, 8, url, headers, body) })
	if closed == 0 {
		return
	}
	b.Run("edge-open-loop", func(b *testing.B) { openLoop(b, max(1, int(closed/4)), url, headers(), body) })
}

// openLoopFor is how long an open-loop run offers requests: longer than make bench's
// benchtime, so that the benchmark runs once.
const openLoopFor = 5 * time.Second

// openLoop offers rate requests a second for openLoopFor and reports what was offered and
// answered, and the latencies (p50, p99) from the moment each request was due.
func openLoop(b *testing.B, rate int, url string, headers map[string]string, body func() []byte) {
	quiet(b)
	h := http.Header{}
	for k, v := range headers {
		h.Set(k, v)
	}
	targeter := func(t *vegeta.Target) error {
		t.Method, t.URL, t.Header, t.Body = http.MethodPost, url, h, body()
		return nil
	}
	// Only the head of each answer is kept (answered reads interface B's status there): the
	// generator shares the process, and keeping whole answers made its garbage collection a
	// tail of its own.
	attacker := vegeta.NewAttacker(vegeta.Workers(16), vegeta.MaxWorkers(4096), vegeta.KeepAlive(true),
		vegeta.Timeout(30*time.Second), vegeta.Connections(512), vegeta.MaxBody(64))
	var (
		all    []time.Duration
		failed int
		first  string
	)
	b.ResetTimer()
	start := time.Now()
	for res := range attacker.Attack(vegeta.Targeter(targeter), vegeta.Rate{Freq: rate, Per: time.Second}, openLoopFor, "bench") {
		if res.Error != "" || !answered(int(res.Code), res.Body) {
			failed++
			if first == "" {
				first = fmt.Sprintf("HTTP %d %s %.200s", res.Code, res.Error, res.Body)
			}
			continue
		}
		all = append(all, res.Latency)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if failed > 0 {
		b.Errorf("%d of %d requests failed, e.g. %s", failed, failed+len(all), first)
	}
	if len(all) == 0 {
		return
	}
	b.ReportMetric(float64(rate), "offered-req/s")
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "req/s")
	reportPercentiles(b, all)
}
