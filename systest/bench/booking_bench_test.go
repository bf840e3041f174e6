package bench

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

const benchProperties = 20

// setupBookable creates, once per stack, the properties of the booking benchmarks: 100 a
// night, any day.
func (s *store) setupBookable(b *testing.B) []int {
	s.bookableOnce.Do(func() {
		ids, err := s.createBookable("BK", benchProperties)
		if err != nil {
			b.Fatal(err)
		}
		s.bookableIDs = ids
	})
	if len(s.bookableIDs) == 0 {
		b.Fatal("the benchmark properties could not be set up")
	}
	return s.bookableIDs
}

// createBookable creates n properties with codes prefix0…, 100 a night, and waits until
// booking-svc prices every one.
func (s *store) createBookable(prefix string, n int) ([]int, error) {
	var ids []int
	for i := 0; i < n; i++ {
		code := fmt.Sprintf("%s%d", prefix, i)
		p := `{"action":"create","property":` + property[:len(`{"internal_code":"`)] + code + property[len(`{"internal_code":"BENCH1`):] + `}`
		status, body := send("POST", s.st.EdgeURL+"/api/property", s.creds.aHeaders(), []byte(p))
		if status != 200 {
			return nil, fmt.Errorf("property: %d %s", status, body)
		}
		var out struct {
			Data struct {
				PropertyID string `json:"property_id"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &out)
		if status, body := send("POST", s.st.EdgeURL+"/api/property-rate", s.creds.aHeaders(), rates(code, 100)); status != 200 {
			return nil, fmt.Errorf("rates: %d %s", status, body)
		}
		id, _ := strconv.Atoi(out.Data.PropertyID)
		ids = append(ids, id)
	}
	// The properties are spread over the topic's partitions: wait for each.
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range ids {
		for code, body := send("POST", s.st.EdgeURL+"/vros/external-booking", nil, s.creds.quoteBody(id, 0)); !answered(code, body); code, body = send("POST", s.st.EdgeURL+"/vros/external-booking", nil, s.creds.quoteBody(id, 0)) {
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("%s: booking-svc never priced the benchmark properties", s.name)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return ids, nil
}

// rates is an A4 rate body: price a night, any day in and out, bookable a year ahead.
func rates(code string, price int) []byte {
	return []byte(fmt.Sprintf(`{"internal_code":%q,"rate":{"daily_price":%d,"minimum_stay":1},`+
		`"setting":{"standard_occupants":6,"accept_booking_upto":12,"advanced_notice_booking_from":"0"}}`, code, price))
}

func day(n int) string { return time.Now().UTC().AddDate(0, 0, n).Format(time.DateOnly) }

// quoteBody is getinfo of property pid for 7 nights from day 10+n%300 (of any account, as the
// property id says).
func (c credentials) quoteBody(pid, n int) []byte {
	return []byte(fmt.Sprintf(`{"key":%q,"pass":%q,"action":"getinfo","propertyId":%d,"numberofadults":2,"checkin":%q,"checkout":%q}`,
		c.Key, c.Pass, pid, day(10+n%300), day(17+n%300)))
}

// createBody books the one night from day n to day n+1.
func (c credentials) createBody(pid, n int) []byte {
	return []byte(fmt.Sprintf(`{"key":%q,"pass":%q,"action":"create","propertyId":%d,"firstName":"Bench","lastName":"Guest",`+
		`"email":"bench@example.com","numberofadults":2,"leadsourceId":1,"checkin":%q,"checkout":%q}`,
		c.Key, c.Pass, pid, day(n), day(n+1)))
}

// calendarBody is getcalendar of property pid of c's account from day from to day to.
func (c credentials) calendarBody(pid, from, to int) []byte {
	return []byte(fmt.Sprintf(`{"key":%q,"pass":%q,"action":"getcalendar","propertyId":"%s_%d","startDate":%q,"endDate":%q}`,
		c.Key, c.Pass, c.AccountID, pid, day(from), day(to)))
}

// BenchmarkGetinfo: a 7-night quote through edge on each stack, beside the bare Fiber
// baseline.
func BenchmarkGetinfo(b *testing.B) {
	bare := []byte(`{"key":"k","pass":"p","action":"getinfo","propertyId":1,"numberofadults":2,"checkin":"` + day(10) + `","checkout":"` + day(17) + `"}`)
	b.Run("bare-fiber", func(b *testing.B) { load(b, bareURL+"/vros/external-booking", noHeaders, bare) })
	eachStore(b, func(b *testing.B, s *store) {
		ids := s.setupBookable(b)
		url, body := s.st.EdgeURL+"/vros/external-booking", s.creds.quoteBody(ids[0], 0)
		sameBytes(b, url, noHeaders, body)
		edgeLoads(b, url, noHeaders, once(body))
	})
}

func noHeaders() map[string]string { return map[string]string{"Content-Type": "application/json"} }

// BenchmarkCreate: one-night bookings through edge on each stack, each on a night no other
// took (so every one succeeds: the cost measured is a booking, not a refusal), beside the
// baseline. A stack's calendar holds (benchProperties-1) × 330 nights, far more than a
// benchtime of seconds books; the first property stays free, so that BenchmarkGetcalendar
// reads the same calendar whatever ran before it.
func BenchmarkCreate(b *testing.B) {
	var bareNext atomic.Int64
	b.Run("bare-fiber", func(b *testing.B) {
		loadBodies(b, bareURL+"/vros/external-booking", noHeaders, func() []byte {
			n := int(bareNext.Add(1))
			return []byte(fmt.Sprintf(`{"key":"k","pass":"p","action":"create","propertyId":%d,"firstName":"Bench","lastName":"Guest",`+
				`"email":"bench@example.com","numberofadults":2,"leadsourceId":1,"checkin":%q,"checkout":%q}`,
				1+n%benchProperties, day(1+n%330), day(2+n%330)))
		})
	})
	eachStore(b, func(b *testing.B, s *store) {
		ids := s.setupBookable(b)
		next := func() []byte {
			n := int(s.nights.Add(1))
			return s.creds.createBody(ids[1+(n/330)%(len(ids)-1)], 1+n%330)
		}
		url := s.st.EdgeURL + "/vros/external-booking"
		sameBytes(b, url, noHeaders, next())
		edgeLoads(b, url, noHeaders, next)
	})
}
