package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
)

// TestDepositActions: a booking made with a card on a property with a damage deposit answers
// its depositHold; capturedeposit refuses what docs/money.md refuses, naming the field, then
// captures part of the hold and answers it with the capture's payment; releasedeposit of a
// hold no longer held is refused.
func TestDepositActions(t *testing.T) {
	s := newServer(t)
	acct := newAccount("deposit")
	const pid = 81
	data := fmt.Sprintf(`{"account_id":%q,"property_id":%d,"internal_code":"P%d","version":1,"deleted":false,
	 "content":{"name":"Deposit villa","maxguest":6},
	 "policy":{"payment_type":"None","damage_deposit":{"is_due_at":"Booking","amount_type":"Flat","amount":"250"}},
	 "rates":{"rate":{"daily_price":"100"},"minimum_stay":1,
	   "setting":{"standard_occupants":6,"accept_booking_upto":24,"default_allow_checkin":"All","default_allow_checkout":"All"}}}`,
		acct, pid, pid)
	v, err := events.Encode("/test", contract.RatePlansUpdated, acct, time.Now(), json.RawMessage(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.consumer.Apply(context.Background(), kafka.Message{Key: []byte(acct + ":" + strconv.Itoa(pid)), Value: v}); err != nil {
		t.Fatal(err)
	}
	in := time.Now().UTC().AddDate(0, 0, 30).Format(time.DateOnly)
	out := time.Now().UTC().AddDate(0, 0, 32).Format(time.DateOnly)
	code, a := s.b(t, acct, "create", fmt.Sprintf(`{"action":"create","firstName":"Ada","lastName":"Lovelace","email":"ada@example.com",
	 "propertyId":%d,"numberofadults":2,"checkin":%q,"checkout":%q,
	 "creditCard":{"CCNumber":"4242424242424242","NameOnCard":"ADA LOVELACE","Expiration":"12/2031","CVC":"123"}}`, pid, in, out))
	if code != 200 || a.Status != 0 {
		t.Fatalf("create: %d %+v", code, a)
	}
	type hold struct {
		Status          string       `json:"status"`
		Amount          json.Number  `json:"amount"`
		Currency        string       `json:"currency"`
		DueDate         string       `json:"dueDate"`
		AuthorizationID *string      `json:"authorizationId"`
		ReleaseOn       string       `json:"releaseOn"`
		CapturedAmount  *json.Number `json:"capturedAmount"`
		CaptureReason   *string      `json:"captureReason"`
		CapturedAt      *string      `json:"capturedAt"`
	}
	var b struct {
		BookingID   int64 `json:"bookingId"`
		DepositHold *hold `json:"depositHold"`
		Payments    []struct {
			Amount json.Number `json:"amount"`
			Kind   string      `json:"kind"`
		} `json:"payments"`
		AmountPaid json.Number `json:"amountPaid"`
	}
	if err := json.Unmarshal(a.Data, &b); err != nil {
		t.Fatal(err)
	}
	if h := b.DepositHold; h == nil || h.Status != "scheduled" || h.Amount != "250.00" || h.Currency != "USD" || h.AuthorizationID != nil {
		t.Fatalf("depositHold at booking: %+v", h)
	}
	for _, c := range []struct{ body, field string }{
		{`"amount":"10","reason":"lamp"`, "bookingId"}, // not held yet
	} {
		if _, a := s.b(t, acct, "capturedeposit", fmt.Sprintf(`{"action":"capturedeposit","bookingId":%d,%s}`, b.BookingID, c.body)); len(a.Errors) != 1 ||
			a.Errors[0].Field != c.field {
			t.Fatalf("capture %s: %+v", c.body, a)
		}
	}
	if _, err := s.svc.DepositPass(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ body, field string }{
		{`"amount":"250.01","reason":"lamp"`, "amount"},
		{`"amount":"0","reason":"lamp"`, "amount"},
		{`"amount":"10"`, "reason"},
		{`"amount":"10","reason":""`, "reason"},
		{`"reason":"lamp"`, "amount"},
	} {
		if _, a := s.b(t, acct, "capturedeposit", fmt.Sprintf(`{"action":"capturedeposit","bookingId":%d,%s}`, b.BookingID, c.body)); len(a.Errors) != 1 ||
			a.Errors[0].Field != c.field {
			t.Fatalf("capture %s: %+v", c.body, a)
		}
	}
	code, a = s.b(t, acct, "capturedeposit", fmt.Sprintf(`{"action":"capturedeposit","bookingId":%d,"amount":80,"reason":"a broken lamp"}`, b.BookingID))
	if code != 200 || a.Status != 0 {
		t.Fatalf("capture: %d %+v", code, a)
	}
	b.DepositHold = nil
	if err := json.Unmarshal(a.Data, &b); err != nil {
		t.Fatal(err)
	}
	h := b.DepositHold
	if h == nil || h.Status != "captured" || h.CapturedAmount == nil || *h.CapturedAmount != "80.00" || h.CaptureReason == nil ||
		*h.CaptureReason != "a broken lamp" || h.CapturedAt == nil || h.AuthorizationID == nil || len(b.Payments) != 1 || b.Payments[0].Amount != "80.00" ||
		b.Payments[0].Kind != "deposit_capture" || b.AmountPaid != "0.00" {
		t.Fatalf("captured: %+v, payments %+v, amountPaid %s (a captured deposit pays nothing of the stay)", h, b.Payments, b.AmountPaid)
	}
	if _, a := s.b(t, acct, "releasedeposit", fmt.Sprintf(`{"action":"releasedeposit","bookingId":%d}`, b.BookingID)); len(a.Errors) != 1 ||
		a.Errors[0].Field != "bookingId" {
		t.Fatalf("release after the capture: %+v", a)
	}
	if _, a := s.b(t, acct, "releasedeposit", `{"action":"releasedeposit"}`); len(a.Errors) != 1 || a.Errors[0].Field != "bookingId" {
		t.Fatalf("release without a booking: %+v", a)
	}

	// A cancellation releases the hold, and its answer says so.
	in = time.Now().UTC().AddDate(0, 0, 40).Format(time.DateOnly)
	out = time.Now().UTC().AddDate(0, 0, 42).Format(time.DateOnly)
	_, a = s.b(t, acct, "create", fmt.Sprintf(`{"action":"create","firstName":"Ada","lastName":"Lovelace","email":"ada@example.com",
	 "propertyId":%d,"numberofadults":2,"checkin":%q,"checkout":%q,
	 "creditCard":{"CCNumber":"4242424242424242","NameOnCard":"ADA LOVELACE","Expiration":"12/2031","CVC":"123"}}`, pid, in, out))
	if err := json.Unmarshal(a.Data, &b); err != nil {
		t.Fatal(err)
	}
	if _, err := s.svc.DepositPass(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, a = s.b(t, acct, "cancel", fmt.Sprintf(`{"action":"cancel","bookingId":%d}`, b.BookingID))
	var c struct {
		DepositHold *hold `json:"depositHold"`
	}
	if err := json.Unmarshal(a.Data, &c); err != nil || code != 200 || c.DepositHold == nil || c.DepositHold.Status != "released" ||
		c.DepositHold.AuthorizationID == nil {
		t.Fatalf("cancel: %d %s", code, a.Data)
	}
}
