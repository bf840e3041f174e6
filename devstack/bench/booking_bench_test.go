package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// bookableProperties are set up once for the booking benchmarks: 100 a night, any day.
var (
	bookableOnce sync.Once
	bookableIDs  []int
)

const benchProperties = 20

func setupBookable(b *testing.B) []int {
	bookableOnce.Do(func() {
		for i := 0; i < benchProperties; i++ {
			code := fmt.Sprintf("BK%d", i)
			p := `{"action":"create","property":` + property[:len(`{"internal_code":"`)] + code + property[len(`{"internal_code":"BENCH1`):] + `}`
			status, body := send("POST", st.EdgeURL+"/api/property", aHeaders(), []byte(p))
			if status != 200 {
				fmt.Fprintln(os.Stderr, "property:", status, string(body))
				os.Exit(1)
			}
			var out struct {
				Data struct {
					PropertyID string `json:"property_id"`
				} `json:"data"`
			}
			_ = json.Unmarshal(body, &out)
			rates := `{"internal_code":"` + code + `","rate":{"daily_price":100,"minimum_stay":1},` +
				`"setting":{"standard_occupants":6,"accept_booking_upto":12,"advanced_notice_booking_from":"0"}}`
			if status, body := send("POST", st.EdgeURL+"/api/property-rate", aHeaders(), []byte(rates)); status != 200 {
				fmt.Fprintln(os.Stderr, "rates:", status, string(body))
				os.Exit(1)
			}
			id, _ := strconv.Atoi(out.Data.PropertyID)
			bookableIDs = append(bookableIDs, id)
		}
		// Wait until booking-svc has the rates of the last one (events arrive in order).
		last := bookableIDs[len(bookableIDs)-1]
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if code, _ := send("POST", st.EdgeURL+"/vros/external-booking", nil, quoteBody(last, 0)); code == 200 {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		fmt.Fprintln(os.Stderr, "booking-svc never priced the benchmark properties")
		os.Exit(1)
	})
	return bookableIDs
}

func day(n int) string { return time.Now().UTC().AddDate(0, 0, n).Format(time.DateOnly) }

func quoteBody(pid, n int) []byte {
	return []byte(fmt.Sprintf(`{"key":%q,"pass":%q,"action":"getinfo","propertyId":%d,"numberofadults":2,"checkin":%q,"checkout":%q}`,
		creds.Key, creds.Pass, pid, day(10+n%300), day(17+n%300)))
}

// BenchmarkGetinfo: a 7-night quote through edge, beside the bare Fiber baseline.
func BenchmarkGetinfo(b *testing.B) {
	ids := setupBookable(b)
	b.Run("bare-fiber", func(b *testing.B) { load(b, bareURL+"/vros/external-booking", noHeaders, quoteBody(ids[0], 0)) })
	b.Run("edge", func(b *testing.B) { load(b, st.EdgeURL+"/vros/external-booking", noHeaders, quoteBody(ids[0], 0)) })
}

func noHeaders() map[string]string { return map[string]string{"Content-Type": "application/json"} }

// BenchmarkCreate: one-night bookings through edge, each on a night no other took (so every
// one succeeds: the cost measured is a booking, not a refusal), beside the baseline. The
// calendar holds benchProperties × 330 nights, far more than a benchtime of seconds books.
func BenchmarkCreate(b *testing.B) {
	ids := setupBookable(b)
	var next atomic.Int64
	body := func() []byte {
		n := int(next.Add(1))
		pid := ids[(n/330)%len(ids)]
		return []byte(fmt.Sprintf(`{"key":%q,"pass":%q,"action":"create","propertyId":%d,"firstName":"Bench","lastName":"Guest",`+
			`"email":"bench@example.com","numberofadults":2,"leadsourceId":1,"checkin":%q,"checkout":%q}`,
			creds.Key, creds.Pass, pid, day(1+n%330), day(2+n%330)))
	}
	b.Run("bare-fiber", func(b *testing.B) { loadBodies(b, bareURL+"/vros/external-booking", noHeaders, body) })
	b.Run("edge", func(b *testing.B) { loadBodies(b, st.EdgeURL+"/vros/external-booking", noHeaders, body) })
}
