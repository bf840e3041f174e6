package bench

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"
)

// freshness is what BenchmarkFreshness sets up on a stack: a property whose rate changes,
// and properties whose nights are booked one by one.
type freshness struct {
	once    sync.Once
	err     error
	ratePID int
	bookIDs []int
	price   int // samples of rate changes so far
	night   int // samples of bookings so far
}

const (
	freshBookProperties = 8 // × 330 nights: far more samples than a benchtime of seconds takes
	freshPoll           = time.Millisecond
	freshDay            = 30 // the calendar day whose price changes
)

func (s *store) setupFreshness(b *testing.B) *freshness {
	f := &s.fresh
	f.once.Do(func() {
		ids, err := s.createBookable("FRR", 1)
		if err != nil {
			f.err = err
			return
		}
		f.ratePID = ids[0]
		if f.bookIDs, err = s.createBookable("FRB", freshBookProperties); err != nil {
			f.err = err
			return
		}
		// The catalog is fed by events: wait until it has every property (events of a
		// topic's partition arrive in order, but the properties are spread over partitions).
		deadline := time.Now().Add(30 * time.Second)
		for !s.calendarPrice(f.ratePID, 100) || !s.allKnown(f.bookIDs) {
			if time.Now().After(deadline) {
				f.err = fmt.Errorf("%s: catalog-svc never served the freshness properties", s.name)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	if f.err != nil {
		b.Fatal(f.err)
	}
	return f
}

// b sends an interface B action through edge and decodes its data into v; it reports
// whether the answer was a success.
func (s *store) b(action, fields string, v any) bool {
	body := fmt.Sprintf(`{"key":%q,"pass":%q,"action":%q,%s}`, s.creds.Key, s.creds.Pass, action, fields)
	code, resp := send("POST", s.st.EdgeURL+"/vros/external-booking", noHeaders(), []byte(body))
	var out struct {
		Status int             `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	return code == 200 && json.Unmarshal(resp, &out) == nil && out.Status == 0 && (v == nil || json.Unmarshal(out.Data, v) == nil)
}

// calendarPrice reports whether getcalendar shows price on freshDay.
func (s *store) calendarPrice(pid, price int) bool {
	var cal []struct {
		Price json.Number `json:"price"`
	}
	ok := s.b("getcalendar", fmt.Sprintf(`"propertyId":"%s_%d","startDate":%q,"endDate":%q`, s.creds.AccountID, pid, day(freshDay), day(freshDay)), &cal)
	if !ok || len(cal) != 1 {
		return false
	}
	p, err := cal[0].Price.Float64()
	return err == nil && p == float64(price)
}

// booked reports whether getnonavailabledate shows the night from day n as taken.
func (s *store) booked(pid, n int) bool {
	var ranges []json.RawMessage
	return s.b("getnonavailabledate", fmt.Sprintf(`"propertyId":%d,"startDate":%q,"endDate":%q`, pid, day(n), day(n)), &ranges) && len(ranges) == 1
}

// allKnown reports whether the catalog serves the availability of every property.
func (s *store) allKnown(ids []int) bool {
	for _, id := range ids {
		if !s.b("getnonavailabledate", fmt.Sprintf(`"propertyId":%d,"startDate":%q,"endDate":%q`, id, day(1), day(1)), nil) {
			return false
		}
	}
	return true
}

// BenchmarkFreshness: the time from a write's answer to the first catalog read through edge
// that shows it, on each stack, one write at a time: an A4 rate change until getcalendar
// shows the new price, and a one-night booking until getnonavailabledate shows the night.
// Reads are polled every millisecond. Every iteration is a sample; p50-ms, p99-ms and
// max-ms are over the b.N samples of the run.
func BenchmarkFreshness(b *testing.B) {
	eachStore(b, func(b *testing.B, s *store) {
		f := s.setupFreshness(b)
		b.Run("rate-getcalendar", func(b *testing.B) {
			code := "FRR0"
			measureFreshness(b, func() (func() bool, error) {
				f.price++
				price := 101 + f.price%1000 // never the previous one
				if status, body := send("POST", s.st.EdgeURL+"/api/property-rate", s.creds.aHeaders(), rates(code, price)); status != 200 {
					return nil, fmt.Errorf("rates: HTTP %d %s", status, body)
				}
				return func() bool { return s.calendarPrice(f.ratePID, price) }, nil
			})
		})
		b.Run("booking-getnonavailabledate", func(b *testing.B) {
			measureFreshness(b, func() (func() bool, error) {
				f.night++
				pid, n := f.bookIDs[(f.night/330)%len(f.bookIDs)], 1+f.night%330
				if status, body := send("POST", s.st.EdgeURL+"/vros/external-booking", noHeaders(), s.creds.createBody(pid, n)); !answered(status, body) {
					return nil, fmt.Errorf("create: HTTP %d %s", status, body)
				}
				return func() bool { return s.booked(pid, n) }, nil
			})
		})
	})
}

// measureFreshness runs b.N samples: write, then poll visible from the write's answer on.
func measureFreshness(b *testing.B, write func() (visible func() bool, err error)) {
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		visible, err := write()
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		deadline := start.Add(30 * time.Second)
		for !visible() {
			if time.Now().After(deadline) {
				b.Fatalf("sample %d never became visible", i)
			}
			time.Sleep(freshPoll)
		}
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, samples) // sorts them
	b.ReportMetric(float64(samples[len(samples)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(0, "ns/op") // an iteration is a write plus its wait: its time is not a figure
}
