package e2e

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func withTaxesAndServices(code string) (string, obj) {
	return "property-tax", obj{"internal_code": code, "taxes": []obj{
		{"name": "City tax", "amount": 10, "type": 1, "calculationType": 1, "def": 1},
		{"name": "VAT", "amount": 14, "type": 1, "calculationType": 1, "def": 1},
	}}
}

func withDefaultServices(code string) (string, obj) {
	return "property-service", obj{"internal_code": code, "services": []obj{
		{"name": "Cleaning", "amount": 50, "type": 1, "applicable": 1, "def": 1, "taxes": []obj{{"name": "VAT", "perc": "10"}}},
		{"name": "Concierge", "amount": 30, "type": 2, "applicable": 1, "def": 1},
		{"name": "Airport transfer", "amount": 80, "type": 1, "applicable": 1, "def": 0},
	}}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// TestQuoteRelations is the example: 7 nights at 100, rent taxes of 10 % and 14 %, a
// fixed service of 50 with a 10 % tax, a 30 % service. Every figure is checked, and the
// spec's relation holds to the cent.
func TestQuoteRelations(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "REL1", withTaxesAndServices, withDefaultServices)
	var q bookingData
	acc.b(t, "getinfo", obj{"propertyId": pid, "numberofadults": 2, "checkin": day(30), "checkout": day(37)}).ok(t, &q)
	want := map[string]decimal.Decimal{"totalRent": dec("700"), "taxTotal": dec("168"), "serviceTotal": dec("265"),
		"discountTotal": dec("0"), "grandTotal": dec("1133")}
	got := map[string]decimal.Decimal{"totalRent": q.TotalRent, "taxTotal": q.TaxTotal, "serviceTotal": q.ServiceTotal,
		"discountTotal": q.DiscountTotal, "grandTotal": q.GrandTotal}
	for k, v := range want {
		if !got[k].Equal(v) {
			t.Errorf("%s = %s, want %s", k, got[k], v)
		}
	}
	q.relation(t)
	if q.QtyOfNights != 7 || len(q.NightlyDetail) != 7 {
		t.Fatalf("nights: %d, detail %v", q.QtyOfNights, q.NightlyDetail)
	}
	if names := q.serviceNames(); !slices.Equal(names, []string{"Cleaning", "Concierge"}) {
		t.Fatalf("default services %v, want the two marked def", names)
	}
	for _, s := range q.Service {
		switch s.Name {
		case "Cleaning":
			if !s.Amount.Equal(dec("50")) || !s.TaxAmount.Equal(dec("5")) {
				t.Fatalf("Cleaning %s + %s, want 50 + 5", s.Amount, s.TaxAmount)
			}
		case "Concierge":
			if !s.Amount.Equal(dec("210")) || !s.TaxAmount.IsZero() {
				t.Fatalf("Concierge %s + %s, want 30 %% of 700 = 210", s.Amount, s.TaxAmount)
			}
		}
	}
	if len(q.Tax) != 2 || !q.Tax[0].Amount.Add(q.Tax[1].Amount).Equal(dec("168")) {
		t.Fatalf("taxes %+v", q.Tax)
	}
}

// TestServiceRules: the B1 semantics of `service` on create and update.
func TestServiceRules(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "SVC1", withDefaultServices)
	other := bookable(t, acc, "SVC2", func(code string) (string, obj) {
		return "property-service", obj{"internal_code": code, "services": []obj{{"name": "Linen", "amount": 20, "type": 1, "def": 1}}}
	})
	g := guest(pid, day(40), day(43))

	absent := create(t, acc, g)
	if names := absent.serviceNames(); !slices.Equal(names, []string{"Cleaning", "Concierge"}) {
		t.Fatalf("absent service: %v, want the property's defaults", names)
	}
	g2 := guest(pid, day(50), day(53))
	g2["service"] = []obj{}
	if none := create(t, acc, g2); len(none.Service) != 0 {
		t.Fatalf("empty service: %v, want none", none.serviceNames())
	}
	g3 := guest(pid, day(60), day(63))
	g3["service"] = []obj{{"name": "Boat trip", "amount": 120, "type": 1, "applicable": 3}}
	own := create(t, acc, g3)
	if names := own.serviceNames(); !slices.Equal(names, []string{"Boat trip"}) || !own.Service[0].Amount.Equal(dec("240")) {
		t.Fatalf("own service: %+v, want Boat trip 120 × 2 occupants", own.Service)
	}

	var d bookingData
	// Update without service, same property: the services stay.
	acc.b(t, "update", obj{"bookingId": own.BookingID, "numberofadults": 3}).ok(t, &d)
	if names := d.serviceNames(); !slices.Equal(names, []string{"Boat trip"}) || !d.Service[0].Amount.Equal(dec("360")) {
		t.Fatalf("update without service: %+v", d.Service)
	}
	// Update with service: it replaces them.
	acc.b(t, "update", obj{"bookingId": own.BookingID, "service": []obj{{"name": "Crib", "amount": 15, "type": 1}}}).ok(t, &d)
	if names := d.serviceNames(); !slices.Equal(names, []string{"Crib"}) {
		t.Fatalf("update with service: %v", names)
	}
	// Update with empty service: none.
	acc.b(t, "update", obj{"bookingId": own.BookingID, "service": ""}).ok(t, &d)
	if len(d.Service) != 0 {
		t.Fatalf("update with empty service: %v", d.serviceNames())
	}
	// Update to another property without service: that property's defaults.
	acc.b(t, "update", obj{"bookingId": absent.BookingID, "propertyId": other}).ok(t, &d)
	if names := d.serviceNames(); d.PropertyID != int64(other) || !slices.Equal(names, []string{"Linen"}) {
		t.Fatalf("moved booking: property %d services %v", d.PropertyID, names)
	}
	// insertservice (and its alias addservice) adds to the list.
	var ins struct {
		Service []struct{ Name string } `json:"service"`
	}
	acc.b(t, "addservice", obj{"bookingId": absent.BookingID, "service": []obj{{"name": "Late checkout", "amount": 40, "type": 1}}}).ok(t, &ins)
	if len(ins.Service) != 2 || ins.Service[1].Name != "Late checkout" {
		t.Fatalf("insertservice: %+v", ins.Service)
	}
}

// TestFormEncodedBooking: a PHP client's form body with service[0][name]… and numbers as
// strings books like JSON.
func TestFormEncodedBooking(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "FORM1")
	form := url.Values{"key": {acc.Key}, "pass": {acc.Pass}, "action": {"create"}, "propertyId": {strconv.Itoa(pid)},
		"firstName": {"Grace"}, "lastName": {"Hopper"}, "email": {"grace@example.com"}, "numberofadults": {"2"},
		"numberofchildren": {"1"}, "leadsourceId": {"1"}, "checkin": {day(20)}, "checkout": {day(22)},
		"service[0][name]": {"Cleaning"}, "service[0][amount]": {"35.50"}, "service[0][type]": {"1"},
		"service[0][taxes][0][name]": {"VAT"}, "service[0][taxes][0][perc]": {"10"}}
	r := do(t, http.MethodPost, "/vros/external-booking", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, form.Encode())
	var d bookingData
	r.ok(t, &d)
	if len(d.Service) != 1 || !d.Service[0].Amount.Equal(dec("35.5")) || !d.Service[0].TaxAmount.Equal(dec("3.55")) || !d.TotalRent.Equal(dec("200")) {
		t.Fatalf("form booking: rent %s services %+v", d.TotalRent, d.Service)
	}
	d.relation(t)
	// String numbers in JSON too.
	g := guest(pid, day(25), day(26))
	g["numberofadults"], g["leadsourceId"], g["propertyId"] = "1", "1", strconv.Itoa(pid)
	create(t, acc, g)
}

// TestBookingStatuses: each status of the spec's error table.
func TestBookingStatuses(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	pid := bookable(t, acc, "ST1")
	b := create(t, acc, guest(pid, day(70), day(73)))

	t.Run("8 dates unavailable on create", func(t *testing.T) {
		acc.b(t, "create", guest(pid, day(72), day(75))).wantStatus(t, 8)
	})
	t.Run("8 dates unavailable on update", func(t *testing.T) {
		b2 := create(t, acc, guest(pid, day(80), day(82)))
		acc.b(t, "update", obj{"bookingId": b2.BookingID, "checkin": day(71), "checkout": day(74)}).wantStatus(t, 8)
	})
	t.Run("16 unknown property", func(t *testing.T) {
		acc.b(t, "create", guest(999999, day(70), day(73))).wantStatus(t, 16)
		acc.b(t, "getinfo", obj{"propertyId": 999999, "numberofadults": 1, "checkin": day(70), "checkout": day(71)}).wantStatus(t, 16)
	})
	t.Run("16 another account's property", func(t *testing.T) {
		other.b(t, "create", guest(pid, day(90), day(92))).wantStatus(t, 16)
		other.b(t, "getinfo", obj{"propertyId": pid, "numberofadults": 1, "checkin": day(90), "checkout": day(91)}).wantStatus(t, 16)
	})
	t.Run("24 unknown booking", func(t *testing.T) {
		acc.b(t, "update", obj{"bookingId": 987654, "numberofadults": 2}).wantStatus(t, 24)
	})
	t.Run("24 another account's booking", func(t *testing.T) {
		other.b(t, "update", obj{"bookingId": b.BookingID, "numberofadults": 2}).wantStatus(t, 24)
		other.b(t, "cancel", obj{"bookingId": b.BookingID}).wantStatus(t, 24)
		other.b(t, "addbookingpayment", obj{"bookingId": b.BookingID, "amount": "10"}).wantStatus(t, 24)
		other.b(t, "listbooking", obj{"bookingId": b.BookingID}).ok(t, nil)
	})
	card := func(number string) obj {
		return obj{"CCNumber": number, "NameOnCard": "Ada Lovelace", "Expiration": "12/2035", "CVC": "123"}
	}
	t.Run("111 declined card, reason appended", func(t *testing.T) {
		g := guest(pid, day(100), day(102))
		g["paymentCharge"], g["creditCard"] = 1, card("4000000000000002")
		a := acc.b(t, "create", g).wantStatus(t, 111)
		if a.Message != "payment did not succeed: card declined" {
			t.Fatalf("message %q", a.Message)
		}
		// The nights were not kept.
		create(t, acc, guest(pid, day(100), day(102)))
	})
	t.Run("112 3-D Secure card", func(t *testing.T) {
		g := guest(pid, day(110), day(112))
		g["paymentCharge"], g["creditCard"] = 1, card("4000000000003220")
		acc.b(t, "create", g).wantStatus(t, 112)
	})
	t.Run("approved card is charged and masked", func(t *testing.T) {
		g := guest(pid, day(120), day(122))
		g["paymentCharge"], g["creditCard"] = 1, card("4242424242424242")
		d := create(t, acc, g)
		if d.CreditCard == nil || d.CreditCard.Number != "•••• 4242" {
			t.Fatalf("card %+v", d.CreditCard)
		}
		if len(d.Payments) != 1 || !d.Payments[0].Amount.Equal(d.GrandTotal) || d.Payments[0].Method != "card" {
			t.Fatalf("payments %+v (grand total %s)", d.Payments, d.GrandTotal)
		}
	})
	t.Run("4 invalid fields name the field", func(t *testing.T) {
		g := guest(pid, day(130), day(129))
		delete(g, "email")
		a := acc.b(t, "create", g).wantStatus(t, 4)
		if len(a.Message) == 0 {
			t.Fatal("no message")
		}
		r := acc.b(t, "create", obj{"propertyId": pid})
		if r.Code != http.StatusOK || r.b(t).Status != 4 || !strings.Contains(string(r.Body), "firstName") {
			t.Fatalf("missing fields: %s", r.Body)
		}
	})
	t.Run("stay rules are field errors", func(t *testing.T) {
		acc.b(t, "getinfo", obj{"propertyId": pid, "numberofadults": 7, "checkin": day(140), "checkout": day(141)}).wantStatus(t, 4)
		acc.b(t, "getinfo", obj{"propertyId": pid, "numberofadults": 1, "checkin": day(-2), "checkout": day(1)}).wantStatus(t, 4)
		acc.b(t, "getinfo", obj{"propertyId": pid, "numberofadults": 1, "checkin": day(500), "checkout": day(501)}).wantStatus(t, 4)
		g := guest(pid, day(150), day(151))
		g["leadsourceId"] = 99
		acc.b(t, "create", g).wantStatus(t, 4)
		g = guest(pid, day(150), day(151))
		g["currency"] = "EUR"
		acc.b(t, "create", g).wantStatus(t, 4)
	})
}

// TestCancelFreesNights: a cancelled booking shows its cancellation date, can no longer be
// changed, and its nights can be booked again.
func TestCancelFreesNights(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "CAN1")
	b := create(t, acc, guest(pid, day(30), day(33)))
	var c struct {
		BookingID int64 `json:"bookingId"`
	}
	acc.b(t, "cancel", obj{"bookingId": b.BookingID}).ok(t, &c)
	if c.BookingID != b.BookingID {
		t.Fatalf("cancel answered %d", c.BookingID)
	}
	acc.b(t, "cancel", obj{"bookingId": b.BookingID}).wantStatus(t, 40)
	acc.b(t, "update", obj{"bookingId": b.BookingID, "numberofadults": 1}).wantStatus(t, 40)
	if h := held(t, acc, pid, day(30), 3); len(h) != 0 {
		t.Fatalf("cancelled nights still held: %v", h)
	}
	again := create(t, acc, guest(pid, day(30), day(33)))
	var list struct {
		Total int           `json:"totalRecords"`
		List  []bookingData `json:"listBooking"`
	}
	acc.b(t, "listbooking", obj{"propertyId": pid}).ok(t, &list)
	if list.Total != 2 || list.List[0].BookingID != again.BookingID || list.List[1].CancellationDate == nil {
		t.Fatalf("list after cancel: %+v", list)
	}
}

// TestIdempotentCreate: a retried create with the same Idempotency-Key answers the first
// booking and books nothing more; another body under the same key is refused.
func TestIdempotentCreate(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "IDEM1")
	body := jsonText(mergeObj(obj{"key": acc.Key, "pass": acc.Pass, "action": "create"}, guest(pid, day(30), day(32))))
	h := map[string]string{"Idempotency-Key": "order-42"}
	first := do(t, http.MethodPost, "/vros/external-booking", h, body)
	second := do(t, http.MethodPost, "/vros/external-booking", h, body)
	var a, b bookingData
	first.ok(t, &a)
	second.ok(t, &b)
	if a.BookingID != b.BookingID || second.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry booked %d after %d (replayed %q)", b.BookingID, a.BookingID, second.Header.Get("Idempotent-Replayed"))
	}
	var list struct {
		Total int `json:"totalRecords"`
	}
	acc.b(t, "listbooking", obj{"propertyId": pid}).ok(t, &list)
	if list.Total != 1 {
		t.Fatalf("%d bookings after a retried create", list.Total)
	}
	other := jsonText(mergeObj(obj{"key": acc.Key, "pass": acc.Pass, "action": "create"}, guest(pid, day(40), day(42))))
	if r := do(t, http.MethodPost, "/vros/external-booking", h, other); r.Code != http.StatusOK || r.b(t).Status == 0 {
		t.Fatalf("key reused with another body: HTTP %d %s", r.Code, r.Body)
	}
}

func mergeObj(a, b obj) obj {
	for k, v := range b {
		a[k] = v
	}
	return a
}
