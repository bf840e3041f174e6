package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
)

// calendarDays reads getcalendar of acc's property pid over from..to as date → day.
func calendarDays(t *testing.T, s *server, acc string, pid int64, from, to string) map[string]dayJSON {
	t.Helper()
	var days []dayJSON
	data := s.actionOf(acc, "getcalendar", fmt.Sprintf(`{"propertyId":"%s_%d","startDate":%q,"endDate":%q}`, acc, pid, from, to))
	if err := json.Unmarshal(data, &days); err != nil {
		t.Fatalf("getcalendar: %v: %s", err, data)
	}
	out := map[string]dayJSON{}
	for _, d := range days {
		out[d.Date] = d
	}
	return out
}

// TestCalendarFollowsEveryChange: getcalendar's answers are kept (calendars.go), and each
// change of what they show — a booking, its cancellation, a block, new rates, the account's
// currency — shows at the next read of the same range.
func TestCalendarFollowsEveryChange(t *testing.T) {
	s := newServer(t, "")
	s.load(contract.PropertyUpdated, property("acc1", 20, "Cal", "Lucca", 1, 1, 2, "80", false))
	read := func() map[string]dayJSON { return calendarDays(t, s, "acc1", 20, "2030-03-01", "2030-03-03") }
	want := func(step, date, avail, price, currency string) {
		t.Helper()
		d := read()[date]
		if d.Availability != avail || string(d.Price) != price || d.Currency != currency {
			t.Errorf("%s: %s is %s at %s %s, want %s at %s %s", step, date, d.Availability, d.Price, d.Currency, avail, price, currency)
		}
	}
	want("before any change", "2030-03-01", "true", "80", "USD")
	want("read again (kept)", "2030-03-01", "true", "80", "USD")
	booking := contract.Booking{AccountID: "acc1", BookingID: 1, PropertyID: 20, Status: "reserved", Version: 1,
		Checkin: "2030-03-01", Checkout: "2030-03-02", Nights: []string{"2030-03-01"}, GrandTotal: "80", Currency: "EUR"}
	s.load(contract.BookingReserved, booking)
	want("booked", "2030-03-01", "false", "80", "USD")
	booking.Status, booking.Version, booking.Nights = "cancelled", 2, []string{}
	s.load(contract.BookingCancelled, booking)
	want("cancelled", "2030-03-01", "true", "80", "USD")
	s.load(contract.BlockCreated, contract.Block{AccountID: "acc1", BlockID: 1, PropertyID: 20, StartDate: "2030-03-02", EndDate: "2030-03-02", Version: 1})
	want("blocked", "2030-03-02", "false", "80", "USD")
	p := property("acc1", 20, "Cal", "Lucca", 1, 1, 2, "95", false)
	p.Version = 2
	s.load(contract.PropertyUpdated, p)
	want("new rates", "2030-03-01", "true", "95", "USD")
	st := contract.DefaultSettings("acc1")
	st.Currency, st.Version = "EUR", 1
	s.load(contract.SettingsUpdated, st)
	want("new currency", "2030-03-01", "true", "95", "EUR")
}

// TestCalendarsOfTenantsUnderLoad: two accounts' properties of the same id, priced apart,
// read by many clients at once while bookings land: every answer is its own account's.
func TestCalendarsOfTenantsUnderLoad(t *testing.T) {
	s := newServer(t, "")
	price := map[string]string{"acc1": "80", "acc2": "95"}
	for acc, p := range price {
		s.load(contract.PropertyUpdated, property(acc, 20, "Same", "Lucca", 1, 1, 2, p, false))
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acc := []string{"acc1", "acc2"}[i%2]
			for range 50 {
				for date, d := range calendarDays(t, s, acc, 20, "2030-03-01", "2030-03-20") {
					if string(d.Price) != price[acc] {
						t.Errorf("%s read %s at %s, its price is %s", acc, date, d.Price, price[acc])
						return
					}
				}
			}
		}()
	}
	for n := range 40 {
		acc := []string{"acc1", "acc2"}[n%2]
		night, out := fmt.Sprintf("2030-03-%02d", 1+n/2), fmt.Sprintf("2030-03-%02d", 2+n/2)
		s.load(contract.BookingReserved, contract.Booking{AccountID: acc, BookingID: int64(n + 1), PropertyID: 20, Status: "reserved",
			Version: 1, Checkin: night, Checkout: out, Nights: []string{night}, GrandTotal: "1", Currency: "EUR"})
	}
	wg.Wait()
	for _, acc := range []string{"acc1", "acc2"} {
		days := calendarDays(t, s, acc, 20, "2030-03-01", "2030-03-20")
		for date, d := range days {
			if d.Availability != "false" {
				t.Errorf("%s: %s is free after every night was booked", acc, date)
			}
		}
	}
}

// TestAppendDaysIsMarshal: getcalendar's own encoder writes exactly encoding/json's bytes,
// for ordinary days and for strings that need escaping.
func TestAppendDaysIsMarshal(t *testing.T) {
	days := []dayJSON{
		{Date: "2030-03-01", Availability: "true", Currency: "EUR", Price: "80", WeeklyPrice: "500.5", MonthlyPrice: "0",
			GuestPrice: "80", GuestWeeklyPrice: "500.5", GuestMonthlyPrice: "1999.99", MinimumStay: 2, CheckInOutType: CheckInOut},
		{Date: "2030-03-02", Availability: "false", Currency: "", MinimumStay: 0, CheckInOutType: CheckNeither, MinimumStayThrough: 3,
			MaximumStay: 14, ClosedToArrival: true, ClosedToDeparture: true, StopSell: true},
		{Date: "2030-03-04", Availability: "true", Currency: "USD", CheckInOutType: CheckInOnly, ClosedToDeparture: true},
		{Date: "2030-03-03", Availability: "true", Currency: `<&>"\ é` + "\u2028\x01", Price: "-1.25", MinimumStay: -3, CheckInOutType: CheckOutOnly},
	}
	for _, c := range [][]dayJSON{nil, {}, days[:1], days} {
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil {
			want = []byte("[]") // getcalendar always answers a list
		}
		if got := appendDays(nil, c); string(got) != string(want) {
			t.Errorf("appendDays:\n got %s\nwant %s", got, want)
		}
	}
}

// TestErasedAccountsAnswersForgotten: an erasure drops the account's kept calendars and
// price spans (its search records), and only its own.
func TestErasedAccountsAnswersForgotten(t *testing.T) {
	s := newServer(t, "")
	for _, acc := range []string{"acc1", "acc2"} {
		s.load(contract.PropertyUpdated, property(acc, 20, "Same", "Lucca", 1, 1, 2, "80", false))
		calendarDays(t, s, acc, 20, "2030-03-01", "2030-03-05")
		if code, out := s.call(acc, "POST", "/internal/read/get-min-max-price-property", `{}`, nil); code != 200 {
			t.Fatalf("%s: %d %s", acc, code, out)
		}
	}
	spans := func(acc string) int { return len(s.api.records.Snapshot(acc)) }
	if s.api.calendars.c.Len() != 2 || spans("acc1") != 1 || spans("acc2") != 1 {
		t.Fatalf("kept %d calendars and %d + %d spans, want 2 and 1 + 1", s.api.calendars.c.Len(), spans("acc1"), spans("acc2"))
	}
	s.load(contract.AccountErased, contract.AccountErasure{AccountID: "acc1"})
	var calendars []string
	for _, k := range s.api.calendars.c.Keys() {
		calendars = append(calendars, k.p.Snap.AccountID)
	}
	if len(calendars) != 1 || calendars[0] != "acc2" {
		t.Errorf("calendars kept after acc1's erasure: %v, want acc2's only", calendars)
	}
	if spans("acc1") != 0 || spans("acc2") != 1 {
		t.Errorf("spans kept after acc1's erasure: acc1 %d, acc2 %d; want 0 and 1", spans("acc1"), spans("acc2"))
	}
}

// BenchmarkGetcalendarMiss: getcalendar of a year never asked before (the answer computed
// and encoded, not kept), through the app, of a property with a season and, in the second
// case, restrictions on a third of its days.
func BenchmarkGetcalendarMiss(b *testing.B) {
	for _, withRestrictions := range []bool{false, true} {
		b.Run(fmt.Sprint("restrictions=", withRestrictions), func(b *testing.B) {
			s := newServer(&testing.T{}, "")
			p := property("acc1", 20, "Bench", "Lucca", 1, 1, 2, "80", false)
			p.Rates.Seasons = []contract.Season{{Name: "High", StartDate: "2030-06-01", EndDate: "2030-09-30", Prices: contract.Prices{Daily: "120"}}}
			if withRestrictions {
				for d := 0; d < 365; d += 3 {
					day := fmt.Sprintf("2030-%02d-%02d", 1+d/31%12, 1+d%28)
					p.Restrictions = append(p.Restrictions, contract.Restriction{StartDate: day, EndDate: day, MinStayArrival: &[]int{3}[0]})
				}
				slices.SortFunc(p.Restrictions, func(x, y contract.Restriction) int { return strings.Compare(x.StartDate, y.StartDate) })
				p.Restrictions = slices.CompactFunc(p.Restrictions, func(x, y contract.Restriction) bool { return x.StartDate == y.StartDate })
			}
			s.load(contract.PropertyUpdated, p)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				from := pricing.MustDate("2030-01-01").AddDays(i % 700)
				body := fmt.Sprintf(`{"propertyId":"acc1_20","startDate":%q,"endDate":%q}`, from, from.AddDays(364))
				if code, out := s.call("acc1", http.MethodPost, "/internal/b/getcalendar", body, nil); code != http.StatusOK {
					b.Fatalf("%d %s", code, out)
				}
				s.api.calendars.c.Purge()
			}
		})
	}
}
