package api

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/cardpay"
)

// TestCancelRefundInB: cancel refunds by the policy and answers the refund; an override above
// what was paid is refused naming the field, with nothing changed; the booking object carries
// the refund and each refund payment's kind and refundOf; retryrefund starts a failed part
// again.
func TestCancelRefundInB(t *testing.T) {
	s := newServer(t)
	acct := newAccount("refund")
	const pid = 81
	planned(t, s, acct, pid, "")
	base := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 40)
	book := func(days int) int64 {
		t.Helper()
		code, a := s.b(t, acct, "create", fmt.Sprintf(`{"action":"create","firstName":"Ada","lastName":"Lovelace","email":"ada@example.com",
		  "propertyId":%d,"numberofadults":2,"checkin":%q,"checkout":%q,"paymentCharge":1,
		  "creditCard":{"CCNumber":"4242424242424242","NameOnCard":"ADA","Expiration":"12/2040","CVC":"123"}}`, pid,
			base.AddDate(0, 0, days).Format(time.DateOnly), base.AddDate(0, 0, days+3).Format(time.DateOnly)))
		var b struct {
			BookingID int64 `json:"bookingId"`
		}
		if code != 200 || a.Status != 0 || json.Unmarshal(a.Data, &b) != nil {
			t.Fatalf("create: %d %+v", code, a)
		}
		return b.BookingID
	}
	id := book(0)
	code, a := s.b(t, acct, "cancel", fmt.Sprintf(`{"bookingId":%d,"refundAmount":"300.01","refundReason":"x"}`, id))
	if code != 400 || a.Status != 4 || len(a.Errors) != 1 || a.Errors[0] != (fieldError{"refundAmount", "must be at most 300.00, what was paid"}) {
		t.Fatalf("override above paid: %d %+v", code, a)
	}
	code, a = s.b(t, acct, "cancel", fmt.Sprintf(`{"bookingId":%d}`, id))
	if code != 200 || a.Status != 0 {
		t.Fatalf("cancel: %d %+v", code, a)
	}
	var ans struct {
		BookingID int64           `json:"bookingId"`
		Refund    json.RawMessage `json:"refund"`
	}
	if err := json.Unmarshal(a.Data, &ans); err != nil || ans.BookingID != id {
		t.Fatalf("cancel's answer %s", a.Data)
	}
	var r map[string]any
	_ = json.Unmarshal(ans.Refund, &r)
	if r["status"] != "succeeded" || r["policy"] != "flexible" || r["percent"] != 100.0 || r["policyAmount"] != 300.0 ||
		r["netPaid"] != 300.0 || r["amount"] != 300.0 || r["refunded"] != 300.0 || r["override"] != false {
		t.Fatalf("refund %s", ans.Refund)
	}
	parts := r["parts"].([]any)
	part := parts[0].(map[string]any)
	if len(parts) != 1 || part["method"] != "card" || part["status"] != "succeeded" || part["attempts"] != 1.0 || part["nextAttemptAt"] != nil ||
		part["refundId"] == "" {
		t.Fatalf("parts %v", parts)
	}
	// The booking object: the refund, and the refund entry's kind and refundOf.
	code, a = s.b(t, acct, "listbooking", fmt.Sprintf(`{"bookingId":%d}`, id))
	var list struct {
		Bookings []map[string]any `json:"listBooking"`
	}
	if code != 200 || json.Unmarshal(a.Data, &list) != nil || len(list.Bookings) != 1 {
		t.Fatalf("listbooking: %d %s", code, a.Data)
	}
	b := list.Bookings[0]
	if got, _ := json.Marshal(b["refund"]); string(got) != func() string { x, _ := json.Marshal(r); return string(x) }() {
		t.Fatalf("listed refund %s, cancel answered %s", got, ans.Refund)
	}
	pays := b["payments"].([]any)
	if len(pays) != 2 || b["amountPaid"] != 0.0 {
		t.Fatalf("payments %v, amountPaid %v", pays, b["amountPaid"])
	}
	charge, refund := pays[0].(map[string]any), pays[1].(map[string]any)
	if _, ok := charge["kind"]; ok || charge["refundOf"] != nil || refund["kind"] != "refund" || refund["refundOf"] != charge["paymentId"] ||
		refund["amount"] != -300.0 || refund["paymentId"] != part["paymentId"] || part["refundOf"] != charge["paymentId"] {
		t.Fatalf("charge %v, refund %v, part %v", charge, refund, part)
	}
	// A refund entry cannot be changed.
	if code, a := s.b(t, acct, "removebookingpayment", fmt.Sprintf(`{"paymentId":%q}`, refund["paymentId"])); code != 400 || a.Errors[0].Field != "paymentId" {
		t.Fatalf("removebookingpayment of a refund: %d %+v", code, a)
	}

	// A refused refund, then retryrefund.
	id2 := book(10)
	s.gw.FailRefunds(func(cardpay.RefundRequest) error { return &cardpay.RefusedError{Reason: "charge disputed"} })
	if code, a := s.b(t, acct, "cancel", fmt.Sprintf(`{"bookingId":%d,"refundAmount":100,"refundReason":"goodwill"}`, id2)); code != 200 ||
		!json.Valid(a.Data) {
		t.Fatalf("cancel: %d %+v", code, a)
	} else if err := json.Unmarshal(a.Data, &ans); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(ans.Refund, &r)
	if r["status"] != "failed" || r["amount"] != 100.0 || r["override"] != true || r["reason"] != "goodwill" || r["refunded"] != 0.0 ||
		r["parts"].([]any)[0].(map[string]any)["lastError"] != "refused: charge disputed" {
		t.Fatalf("refused refund %s", ans.Refund)
	}
	s.gw.FailRefunds(nil)
	if code, a := s.b(t, acct, "retryrefund", fmt.Sprintf(`{"bookingId":%d}`, id)); code != 400 || a.Errors[0] != (fieldError{"bookingId", "has no failed refund to retry"}) {
		t.Fatalf("retryrefund of a refunded booking: %d %+v", code, a)
	}
	code, a = s.b(t, acct, "retryrefund", `{"bookingId":`+strconv.FormatInt(id2, 10)+`}`)
	var again map[string]any
	if code != 200 || json.Unmarshal(a.Data, &again) != nil {
		t.Fatalf("retryrefund: %d %+v", code, a)
	}
	if rr := again["refund"].(map[string]any); rr["status"] != "succeeded" || rr["refunded"] != 100.0 || again["amountPaid"] != 200.0 {
		t.Fatalf("after retryrefund: %v, amountPaid %v", rr, again["amountPaid"])
	}
}
