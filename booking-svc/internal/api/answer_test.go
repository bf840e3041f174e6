package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/arrival"
	"github.com/vros/vros/booking-svc/internal/booking"
)

// TestEraseFromAnswer: a stored answer is rewritten only when it is the booking object of a
// booking the erasure names — the guest wholly when the booking is theirs, else only their
// entry in its party — and otherwise left byte for byte.
func TestEraseFromAnswer(t *testing.T) {
	b := booking.Booking{BookingID: 7, Status: booking.StatusReserved, Guest: booking.Guest{FirstName: "Ada", LastName: "Lovelace",
		Email: "ada@example.com", Phone1: "+44 1"}, Quote: booking.Quote{GrandTotal: "330.00", Currency: "EUR"},
		Payments: map[int64]booking.Payment{3: {PaymentID: 3, Amount: "10.00", Description: "from Ada Lovelace"}},
		Arrival: &arrival.Arrival{TransportNumber: "LH 1", Guests: []arrival.Guest{{Name: "Ada", Email: "ada@example.com"},
			{Name: "Charles", Email: "charles@example.com"}}}}
	answer := func(data any) []byte {
		raw, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(storedAnswer{Status: 0, Message: "Success", Data: raw})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	object := answer(bookingOf(b, time.UTC))
	own := booking.Forgotten{Own: map[int64]bool{7: true}, Email: "ADA@example.com", Names: []string{"Ada Lovelace", "ada@example.com"}}
	party := booking.Forgotten{Party: map[int64]bool{7: true}, Email: "charles@EXAMPLE.com"}
	for _, r := range []struct {
		name     string
		body     []byte
		f        booking.Forgotten
		changed  bool
		has, not []string
	}{
		{"the guest's own booking", object, own, true,
			[]string{`"firstName":"Erased","lastName":"","fullName":"Erased ","email":"erased@invalid"`, `"grandTotal":330.00`, `"description":"from Erased"`,
				`"transportNumber":""`, `"paymentId":"3"`},
			[]string{"Ada", "Lovelace", "ada@example.com", "+44 1", "LH 1", "Charles"}},
		{"a booking listing them in its party", object, party, true,
			[]string{`"firstName":"Ada"`, `"name":"Ada","surname":""`, `"transportNumber":"LH 1"`},
			[]string{"Charles", "charles@example.com"}},
		{"a booking the erasure does not name", object, booking.Forgotten{Own: map[int64]bool{8: true}}, false, nil, nil},
		{"cancel's answer (a booking id only)", answer(map[string]int64{"bookingId": 7}), own, false, nil, nil},
		{"an error answer", []byte(`{"status":40,"message":"another change of this booking is in progress"}`), own, false, nil, nil},
		{"not JSON", []byte("{"), own, false, nil, nil},
	} {
		out, changed, err := eraseFromAnswer(r.body, r.f)
		if err != nil || changed != r.changed {
			t.Errorf("%s: changed %v, err %v", r.name, changed, err)
			continue
		}
		if !changed && string(out) != string(r.body) {
			t.Errorf("%s: unchanged answer rewritten:\n%s", r.name, out)
		}
		for _, s := range r.has {
			if !strings.Contains(string(out), s) {
				t.Errorf("%s: %s lacks %s", r.name, out, s)
			}
		}
		for _, s := range r.not {
			if strings.Contains(string(out), s) {
				t.Errorf("%s: %s still holds %s", r.name, out, s)
			}
		}
	}
}
