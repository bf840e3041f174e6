package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/devstack/stack"
	edge "github.com/vros/vros/edge/service"
	"github.com/vros/vros/libs/config"
)

// floodClients is how many clients of account A flood edge at once in BenchmarkFairness;
// B, the account measured, runs loadParallel's 1 × GOMAXPROCS clients (2 on 2 cores).
const floodClients = 64

// fairnessLimits are the per-account concurrency limits BenchmarkFairness compares, each
// on an edge of its own in front of the same services (0: the stack's edge, no limit).
var fairnessLimits = []int{0, 32, 8}

// floods are the ways account A floods in BenchmarkFairness: the same cheap read as B's
// (30 days), a heavier one (a year's calendar, about 60 KB of prices), and the cheap one
// from clients that honour Retry-After (a refused client waits as told before it sends
// again, as a well-behaved integration does).
var floods = []struct {
	name   string
	days   int
	polite bool
}{{"A-flooding", 30, false}, {"A-flooding-365d", 365, false}, {"A-flooding-polite", 30, true}}

// BenchmarkFairness: account B's steady light load (2 clients of a 30-day getcalendar, a
// cheap but real read through catalog-svc and the pricing engine) with account A idle and
// with A flooding from 64 clients (floods), through edge with the per-account concurrency
// limit off, at the default 32 and at 8; beside the bare Fiber handler under the same loads.
// B's req/s, p50 and p99 are the benchmark's; A's served and refused requests per second
// while B was measured are reported as A-req/s and A-429/s.
func BenchmarkFairness(b *testing.B) {
	bare := func(days int) []byte {
		return []byte(fmt.Sprintf(`{"key":"k","pass":"p","action":"getcalendar","propertyId":"a_1","startDate":%q,"endDate":%q}`, day(1), day(days)))
	}
	b.Run("bare-fiber/A-idle", func(b *testing.B) { lightLoad(b, bareURL, bare(30)) })
	b.Run("bare-fiber/A-flooding", func(b *testing.B) {
		defer flood(b, bareURL, bare(30), false)()
		lightLoad(b, bareURL, bare(30))
	})
	eachStore(b, func(b *testing.B, s *store) {
		flooder, light := s.setupFairness(b)
		for _, limit := range fairnessLimits {
			url := s.st.EdgeURL
			name := "limit-off"
			if limit > 0 {
				url = s.startEdge(b, limit)
				name = fmt.Sprintf("limit-%d", limit)
			}
			b.Run(name+"/A-idle", func(b *testing.B) { lightLoad(b, url, light) })
			for _, f := range floods {
				b.Run(name+"/"+f.name, func(b *testing.B) {
					defer flood(b, url, flooder(f.days), f.polite)()
					lightLoad(b, url, light)
				})
			}
		}
	})
}

// lightLoad is B's load: loadParallel's 1 × GOMAXPROCS clients; every answer must be a
// success (a 429 for B fails the benchmark).
func lightLoad(b *testing.B, url string, body []byte) {
	loadParallel(b, 1, url+"/vros/external-booking", noHeaders, func() []byte { return body })
}

// flood sends body from floodClients clients until the returned stop is called, which
// reports A's served and refused (429) requests per second. A polite client refused 429
// waits its Retry-After (edge sends 1 s) before it sends again.
func flood(b *testing.B, url string, body []byte, polite bool) (stop func()) {
	flooding.Add(1) // the load beside it is meant to run on a busy machine (quiet)
	var served, refused, failed atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range floodClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := noHeaders()
			for {
				select {
				case <-done:
					return
				default:
				}
				code, resp := send("POST", url+"/vros/external-booking", h, body)
				switch {
				case answered(code, resp):
					served.Add(1)
				case code == 429:
					refused.Add(1)
					if polite {
						select {
						case <-done:
						case <-time.After(time.Second):
						}
					}
				default:
					failed.Add(1)
				}
			}
		}()
	}
	// Let the flood fill edge's queues before B is measured.
	time.Sleep(300 * time.Millisecond)
	served.Store(0)
	refused.Store(0)
	start := time.Now()
	return func() {
		elapsed := time.Since(start).Seconds()
		close(done)
		wg.Wait()
		flooding.Add(-1)
		b.ReportMetric(float64(served.Load())/elapsed, "A-req/s")
		b.ReportMetric(float64(refused.Load())/elapsed, "A-429/s")
		if n := failed.Load(); n > 0 {
			b.ReportMetric(float64(n)/elapsed, "A-failed/s")
		}
	}
}

// setupFairness opens account B on s and gives A (the stack's account) and B a property
// each, returning A's getcalendar body of a number of days and B's of 30 days, once
// catalog-svc serves both.
func (s *store) setupFairness(b *testing.B) (flooder func(days int) []byte, light []byte) {
	creds, err := openAccount(s.st.EdgeURL, "bench-admin")
	if err != nil {
		b.Fatal("account B:", err)
	}
	other := &store{name: s.name, st: s.st, creds: creds}
	ids, err := other.createBookable("FAIR", 1)
	if err != nil {
		b.Fatal(err)
	}
	pa := s.setupBookable(b)[0]
	flooder, light = func(days int) []byte { return s.creds.calendarBody(pa, 1, days) }, other.creds.calendarBody(ids[0], 1, 30)
	deadline := time.Now().Add(30 * time.Second)
	for _, body := range [][]byte{flooder(365), light} {
		for code, resp := send("POST", s.st.EdgeURL+"/vros/external-booking", noHeaders(), body); !answered(code, resp); code, resp = send("POST", s.st.EdgeURL+"/vros/external-booking", noHeaders(), body) {
			if time.Now().After(deadline) {
				b.Fatalf("catalog-svc never served the fairness properties: %d %s", code, resp)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return flooder, light
}

// startEdge starts another edge in front of s's services, with a per-account concurrency
// limit (the stack's own, started with stack.Options.AccountConcurrency 0, has none), until the benchmark ends; it returns its URL.
func (s *store) startEdge(b *testing.B, limit int) string {
	ctx, cancel := context.WithCancel(context.Background())
	addr, failed, stopped := make(chan string, 1), make(chan error, 1), make(chan struct{})
	go func() {
		defer close(stopped)
		failed <- edge.Run(ctx, edge.Config{Common: config.Common{MongoURI: s.st.MongoURI, KafkaBrokers: s.st.KafkaBrokers,
			InternalKeys: stack.ServiceKeys(keys, "edge"), LogLevel: "error"}, Addr: "127.0.0.1:0", AdminToken: "bench-admin",
			PropertyURL: s.st.PropertyURL, BookingURL: s.st.BookingURL, CatalogURL: s.st.CatalogURL,
			AccountConcurrency: limit, CacheTTL: 30 * time.Second, Development: true}, func(a string) { addr <- a })
	}()
	b.Cleanup(func() { cancel(); <-stopped })
	select {
	case a := <-addr:
		return "http://" + a
	case err := <-failed:
		b.Fatalf("edge with a concurrency limit of %d: %v", limit, err)
		return ""
	}
}
