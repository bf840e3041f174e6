package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// The integrations' benchmarks (docs/benchmarks.md, "Integrations"): the iCal export's
// throughput through edge beside bare Fiber, and webhook delivery latency.

const icalProperties = 200

// icalSetup is what BenchmarkICalExport sets up on a stack: icalProperties properties with
// blocks, and their feeds' paths.
type icalSetup struct {
	once  sync.Once
	err   error
	paths []string
}

var (
	icalMu     sync.Mutex
	icalStores = map[*store]*icalSetup{}
)

func (s *store) setupICal(b *testing.B) []string {
	icalMu.Lock()
	f := icalStores[s]
	if f == nil {
		f = &icalSetup{}
		icalStores[s] = f
	}
	icalMu.Unlock()
	f.once.Do(func() { f.paths, f.err = s.createFeeds() })
	if f.err != nil {
		b.Fatal(f.err)
	}
	return f.paths
}

// createFeeds creates the properties, three blocks each (booking-svc learns of a property by
// its event: a block is retried until it knows it), makes their links and waits until
// catalog-svc serves every feed.
func (s *store) createFeeds() ([]string, error) {
	var paths []string
	for i := range icalProperties {
		code := fmt.Sprintf("IC%d", i)
		p := `{"action":"create","property":` + property[:len(`{"internal_code":"`)] + code + property[len(`{"internal_code":"BENCH1`):] + `}`
		if status, body := send("POST", s.st.EdgeURL+"/api/property", s.creds.aHeaders(), []byte(p)); status != 200 {
			return nil, fmt.Errorf("property: %d %s", status, body)
		}
		for j := range 3 {
			blk := []byte(fmt.Sprintf(`{"action":"create","block":{"internal_code":%q,"start_date":%q,"end_date":%q,"memo":"bench"}}`,
				code, day(10+20*j), day(12+20*j)))
			deadline := time.Now().Add(30 * time.Second)
			for status, body := send("POST", s.st.EdgeURL+"/api/property-blockdate", s.creds.aHeaders(), blk); status != 200; status, body = send("POST", s.st.EdgeURL+"/api/property-blockdate", s.creds.aHeaders(), blk) {
				if status != 404 || time.Now().After(deadline) {
					return nil, fmt.Errorf("block: %d %s", status, body)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		status, body := send("POST", s.st.EdgeURL+"/api/property-ical", s.creds.aHeaders(), []byte(`{"action":"get","property":{"internal_code":"`+code+`"}}`))
		var out struct {
			Data struct {
				Path string `json:"path"`
			} `json:"data"`
		}
		if status != 200 || json.Unmarshal(body, &out) != nil || out.Data.Path == "" {
			return nil, fmt.Errorf("property-ical: %d %s", status, body)
		}
		paths = append(paths, out.Data.Path)
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, p := range paths {
		for {
			status, body := send("GET", s.st.EdgeURL+p, nil, nil)
			if status == 200 && bytes.Count(body, []byte("BEGIN:VEVENT")) == 3 {
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("%s: catalog-svc never served the feed %s: %d %s", s.name, p, status, body)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return paths, nil
}

var (
	bareICalOnce sync.Once
	bareICalURL  string
)

// startBareICal serves a fixed calendar of the export's size with the export's headers and
// ETag check: the floor under which no feed can be served.
func startBareICal() string {
	bareICalOnce.Do(func() {
		var cal strings.Builder
		cal.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//vros//iCal export//EN\r\nCALSCALE:GREGORIAN\r\nMETHOD:PUBLISH\r\nX-WR-CALNAME:Seaside Villa with Garden\r\n")
		for i := range 3 {
			fmt.Fprintf(&cal, "BEGIN:VEVENT\r\nUID:block-%d@vros\r\nDTSTAMP:20261123T100000Z\r\nDTSTART;VALUE=DATE:20261210\r\nDTEND;VALUE=DATE:20261213\r\nSEQUENCE:1\r\nSUMMARY:Not available\r\nTRANSP:OPAQUE\r\nEND:VEVENT\r\n", i)
		}
		cal.WriteString("END:VCALENDAR\r\n")
		body := []byte(cal.String())
		const etag = `"0123456789abcdef0123456789abcdef"`
		app := fiber.New(fiber.Config{DisableStartupMessage: true})
		app.Get("/ical/:file", func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderCacheControl, "no-cache")
			c.Set(fiber.HeaderETag, etag)
			if c.Get(fiber.HeaderIfNoneMatch) == etag {
				return c.SendStatus(fiber.StatusNotModified)
			}
			c.Set(fiber.HeaderContentType, "text/calendar; charset=utf-8")
			return c.Send(body)
		})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		go func() { _ = app.Listener(ln) }()
		bareICalURL = "http://" + ln.Addr().String()
	})
	return bareICalURL
}

// loadGets GETs the urls in turn from 8 × GOMAXPROCS clients, b.N requests in all, sending
// If-None-Match with the ETag of each URL's first answer when conditional (a channel's
// poll of an unchanged calendar), and reports requests/s and latency percentiles.
func loadGets(b *testing.B, urls []string, conditional bool) {
	etags := make([]string, len(urls))
	want := 200
	if conditional {
		want = 304
		for i, u := range urls {
			etags[i] = etagOf(b, u)
		}
	}
	var (
		mu   sync.Mutex
		all  []time.Duration
		next atomic.Int64
	)
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			i := int(next.Add(1)) % len(urls)
			var h map[string]string
			if conditional {
				h = map[string]string{"If-None-Match": etags[i]}
			}
			t0 := time.Now()
			code, body := send("GET", urls[i], h, nil)
			mine = append(mine, time.Since(t0))
			if code != want || (want == 200 && !bytes.HasPrefix(body, []byte("BEGIN:VCALENDAR"))) {
				b.Errorf("GET %s: HTTP %d, want %d: %.200s", urls[i], code, want, body)
				return
			}
		}
		mu.Lock()
		all = append(all, mine...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if len(all) == 0 {
		return
	}
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "req/s")
	reportPercentiles(b, all)
}

func etagOf(b *testing.B, url string) string {
	code, etag := 0, ""
	for range 3 {
		code, etag = headOf(url)
		if code == 200 && etag != "" {
			return etag
		}
	}
	b.Fatalf("GET %s: HTTP %d, no ETag", url, code)
	return ""
}

// BenchmarkICalExport: the iCal feeds of icalProperties properties (three blocks each)
// polled through edge in turn, unconditionally ("full") and with If-None-Match of an
// unchanged calendar ("304", what channels mostly send), beside bare Fiber serving a fixed
// calendar of the same size with the same headers.
func BenchmarkICalExport(b *testing.B) {
	bare := startBareICal()
	bareURLs := make([]string, icalProperties)
	for i := range bareURLs {
		bareURLs[i] = fmt.Sprintf("%s/ical/t%d.ics", bare, i)
	}
	b.Run("bare-fiber/full", func(b *testing.B) { loadGets(b, bareURLs, false) })
	b.Run("bare-fiber/304", func(b *testing.B) { loadGets(b, bareURLs, true) })
	eachStore(b, func(b *testing.B, s *store) {
		paths := s.setupICal(b)
		urls := make([]string, len(paths))
		for i, p := range paths {
			urls[i] = s.st.EdgeURL + p
		}
		slices.Sort(urls)
		b.Run("edge/full", func(b *testing.B) { loadGets(b, urls, false) })
		b.Run("edge/304", func(b *testing.B) { loadGets(b, urls, true) })
	})
}

// headOf GETs url and answers its status and ETag.
func headOf(url string) (int, string) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(url)
	if err := client.Do(req, resp); err != nil {
		return 0, ""
	}
	return resp.StatusCode(), string(resp.Header.Peek(fiber.HeaderETag))
}

// receiver is a webhook endpoint in the benchmark: it notes when each booking's
// booking.created event arrives.
type receiver struct {
	url string
	mu  sync.Mutex
	at  map[int64]time.Time // booking id → first receipt
}

func startReceiver(b *testing.B) *receiver {
	r := &receiver{at: map[int64]time.Time{}}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Post("/hook", func(c *fiber.Ctx) error {
		now := time.Now()
		var ev struct {
			Type string `json:"type"`
			Data struct {
				BookingID int64 `json:"booking_id"`
			} `json:"data"`
		}
		if json.Unmarshal(c.Body(), &ev) == nil && ev.Type == "booking.created" {
			r.mu.Lock()
			if _, seen := r.at[ev.Data.BookingID]; !seen {
				r.at[ev.Data.BookingID] = now
			}
			r.mu.Unlock()
		}
		return c.SendStatus(fiber.StatusNoContent)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	b.Cleanup(func() { _ = app.Shutdown() })
	r.url = "http://" + ln.Addr().String() + "/hook"
	return r
}

func (r *receiver) received(id int64) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.at[id]
	return t, ok
}

// webhookSetup is what BenchmarkWebhookLatency sets up on a stack: properties to book.
type webhookSetup struct {
	once   sync.Once
	err    error
	ids    []int
	night  int
	bursts int
}

var webhookStores = map[*store]*webhookSetup{}

// BenchmarkWebhookLatency: the time from a booking write's answer (through edge) to the
// receipt of its booking.created webhook at a receiver in the benchmark (an endpoint of the
// account on loopback, the operator's switch on), in two shapes:
//   - sparse: an iteration is 20 one-night bookings, each written after the previous one's
//     webhook arrived (events one at a time);
//   - burst: an iteration is 200 one-night bookings on one new property written back to
//     back, then the wait for all 200 webhooks (one lane at the rate of sequential writes,
//     as e2e TestWebhookLatency does).
//
// p50-ms, p99-ms and max-ms are over every sample of the run.
func BenchmarkWebhookLatency(b *testing.B) {
	eachStore(b, func(b *testing.B, s *store) {
		rcv := startReceiver(b)
		admin := map[string]string{"Authorization": "Bearer bench-admin", "Content-Type": "application/json"}
		if status, body := send("PUT", s.st.EdgeURL+"/admin/v1/accounts/"+s.creds.AccountID+"/integrations", admin, []byte(`{"allow_private_targets":true}`)); status != 200 {
			b.Skipf("webhooks are not served by this stack (admin integrations switch: HTTP %d %.200s)", status, body)
		}
		status, body := send("POST", s.st.EdgeURL+"/api/webhook", s.creds.aHeaders(),
			[]byte(fmt.Sprintf(`{"action":"create","webhook":{"url":%q,"event_types":["booking.created"],"description":"bench"}}`, rcv.url)))
		var hook struct {
			Data struct {
				WebhookID int64 `json:"webhook_id"`
			} `json:"data"`
		}
		if status != 200 || json.Unmarshal(body, &hook) != nil || hook.Data.WebhookID == 0 {
			b.Skipf("webhooks are not served by this stack (create: HTTP %d %.200s)", status, body)
		}
		// The endpoint goes with the benchmark: later benchmarks' bookings deliver nothing.
		defer send("POST", s.st.EdgeURL+"/api/webhook", s.creds.aHeaders(), []byte(fmt.Sprintf(`{"action":"delete","webhook":{"webhook_id":%d}}`, hook.Data.WebhookID)))

		icalMu.Lock()
		w := webhookStores[s]
		if w == nil {
			w = &webhookSetup{}
			webhookStores[s] = w
		}
		icalMu.Unlock()
		w.once.Do(func() { w.ids, w.err = s.createBookable("WH", 8) })
		if w.err != nil {
			b.Fatal(w.err)
		}
		b.Run("sparse", func(b *testing.B) {
			samples := make([]time.Duration, 0, 20*b.N)
			for i := 0; i < b.N; i++ {
				for range 20 {
					w.night++
					pid, n := w.ids[(w.night/330)%len(w.ids)], 1+w.night%330
					id, answeredAt := webhookCreate(b, s, pid, n)
					samples = append(samples, rcv.await(b, id, answeredAt))
				}
			}
			b.StopTimer()
			reportLatency(b, samples)
		})
		b.Run("burst", func(b *testing.B) {
			samples := make([]time.Duration, 0, 200*b.N)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				w.bursts++
				ids, err := s.createBookable(fmt.Sprintf("WHB%d", w.bursts), 1)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				answered := make(map[int64]time.Time, 200)
				for n := 1; n <= 200; n++ {
					id, at := webhookCreate(b, s, ids[0], n)
					answered[id] = at
				}
				for id, at := range answered {
					samples = append(samples, rcv.await(b, id, at))
				}
			}
			b.StopTimer()
			reportLatency(b, samples)
		})
	})
}

// webhookCreate books night n of property pid through edge and returns the booking id and
// when the answer came.
func webhookCreate(b *testing.B, s *store, pid, n int) (int64, time.Time) {
	status, body := send("POST", s.st.EdgeURL+"/vros/external-booking", noHeaders(), s.creds.createBody(pid, n))
	answeredAt := time.Now()
	var out struct {
		Data struct {
			BookingID int64 `json:"bookingId"`
		} `json:"data"`
	}
	if !answered(status, body) || json.Unmarshal(body, &out) != nil || out.Data.BookingID == 0 {
		b.Fatalf("create: HTTP %d %s", status, body)
	}
	return out.Data.BookingID, answeredAt
}

// await waits for booking id's booking.created webhook and returns its latency from
// answeredAt.
func (r *receiver) await(b *testing.B, id int64, answeredAt time.Time) time.Duration {
	deadline := time.Now().Add(60 * time.Second)
	for {
		if at, ok := r.received(id); ok {
			return max(at.Sub(answeredAt), 0)
		}
		if time.Now().After(deadline) {
			b.Fatalf("booking %d: no webhook within 60 s", id)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

func reportLatency(b *testing.B, samples []time.Duration) {
	reportPercentiles(b, samples)
	b.ReportMetric(float64(samples[len(samples)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(0, "ns/op") // an iteration is writes plus their wait: its time is not a figure
}
