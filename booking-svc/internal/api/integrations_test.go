package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/vros/vros/booking-svc/internal/booking"
)

// listed is the booking object listbooking (interface B) answers for booking id.
func (s *server) listed(t *testing.T, account string, id int64) map[string]any {
	t.Helper()
	code, body := s.do(t, account, http.MethodPost, "/internal/b/listbooking", fmt.Sprintf(`{"bookingId":%d}`, id))
	if code != http.StatusOK {
		t.Fatalf("listbooking: %d %s", code, body)
	}
	var out struct {
		Data struct {
			List []map[string]any `json:"listBooking"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil || len(out.Data.List) != 1 {
		t.Fatalf("listbooking: %v %s", err, body)
	}
	return out.Data.List[0]
}

// TestHookBooking: /internal/hooks/booking/{id} answers interface B's booking object without
// the card, only to the booking's own account (also under concurrent callers of two
// accounts), and names a bad id.
func TestHookBooking(t *testing.T) {
	s := newServer(t)
	acctA, acctB := newAccount("hooka"), newAccount("hookb")
	g := booking.Guest{FirstName: "Hookfirst", LastName: "Hooklast", Email: "hook@example.com"}
	a := s.book(t, acctA, 11, "2027-03-01", 3, g, 0)
	b := s.book(t, acctB, 12, "2027-03-01", 2, g, 0)

	get := func(account string, id int64) (int, map[string]any, string) {
		code, body := s.do(t, account, http.MethodGet, "/internal/hooks/booking/"+strconv.FormatInt(id, 10), "")
		var out map[string]any
		_ = json.Unmarshal(body, &out)
		return code, out, string(body)
	}
	for _, tc := range []struct {
		account string
		b       booking.Booking
	}{{acctA, a}, {acctB, b}} {
		code, out, raw := get(tc.account, tc.b.BookingID)
		if code != http.StatusOK {
			t.Fatalf("hook booking %d: %d %s", tc.b.BookingID, code, raw)
		}
		if len(out) != 1 {
			t.Fatalf("answer has keys other than booking: %s", raw)
		}
		hook, _ := out["booking"].(map[string]any)
		want := s.listed(t, tc.account, tc.b.BookingID)
		if want["creditCard"] == nil {
			t.Fatalf("the fixture has no card shown by listbooking: %v", want)
		}
		delete(want, "creditCard")
		if !reflect.DeepEqual(hook, want) {
			t.Errorf("hook booking differs from listbooking minus the card:\nhook %v\nwant %v", hook, want)
		}
		for _, leak := range []string{"4242", "creditCard", "visa", "12/2030", "sealed", "card"} {
			if strings.Contains(raw, leak) {
				t.Errorf("answer holds %q: %s", leak, raw)
			}
		}
	}

	// Another account's booking, an unknown id and bad ids.
	for _, tc := range []struct {
		account string
		path    string
		code    int
		field   string
	}{
		{acctB, strconv.FormatInt(a.BookingID, 10), http.StatusNotFound, ""},
		{acctA, strconv.FormatInt(b.BookingID, 10), http.StatusNotFound, ""},
		{acctA, "999999999", http.StatusNotFound, ""},
		{acctA, "0", http.StatusBadRequest, "id"},
		{acctA, "x1", http.StatusBadRequest, "id"},
	} {
		code, body := s.do(t, tc.account, http.MethodGet, "/internal/hooks/booking/"+tc.path, "")
		if code != tc.code || (tc.field != "" && !strings.Contains(string(body), `"`+tc.field+`"`)) {
			t.Errorf("%s as %s: %d %s, want %d naming %q", tc.path, tc.account, code, body, tc.code, tc.field)
		}
		if code == http.StatusNotFound && strings.Contains(string(body), "Hookfirst") {
			t.Errorf("404 shows the booking: %s", body)
		}
	}

	// Eight concurrent callers of two accounts, each asking for both bookings.
	var wg sync.WaitGroup
	errs := make(chan string, 8*20)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine, theirs, acct := a, b, acctA
			if i%2 == 1 {
				mine, theirs, acct = b, a, acctB
			}
			for range 10 {
				if code, out, raw := get(acct, mine.BookingID); code != http.StatusOK ||
					out["booking"].(map[string]any)["bookingId"] != float64(mine.BookingID) {
					errs <- fmt.Sprintf("own booking: %d %s", code, raw)
				}
				if code, _, raw := get(acct, theirs.BookingID); code != http.StatusNotFound {
					errs <- fmt.Sprintf("other account's booking: %d %s", code, raw)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestICalProperty: /internal/ical/property finds a property by internal code in the view,
// only the account's own.
func TestICalProperty(t *testing.T) {
	s := newServer(t)
	acctA, acctB := newAccount("icpa"), newAccount("icpb")
	priceable(t, s, acctA, 41)
	for _, tc := range []struct {
		account, query string
		code           int
		want           string
	}{
		{acctA, "?internal_code=P41", http.StatusOK, `{"property_id":41}`},
		{acctB, "?internal_code=P41", http.StatusNotFound, `"P41`},
		{acctA, "?internal_code=P42", http.StatusNotFound, `"P42`},
		{acctA, "", http.StatusBadRequest, `"internal_code"`},
	} {
		code, body := s.do(t, tc.account, http.MethodGet, "/internal/ical/property"+tc.query, "")
		if code != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s as %s: %d %s, want %d with %s", tc.query, tc.account, code, body, tc.code, tc.want)
		}
	}
}
