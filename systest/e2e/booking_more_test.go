package e2e

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/events"
)

func TestBookingPayments(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	pid := bookable(t, acc, "PAY1")
	b := create(t, acc, guest(pid, day(30), day(32)))
	var p struct {
		PaymentID string `json:"paymentId"`
	}
	acc.b(t, "addbookingpayment", obj{"bookingId": b.BookingID, "amount": "50.25", "description": "deposit", "time": "2026-01-02 10:00:00"}).ok(t, &p)
	if p.PaymentID == "" {
		t.Fatal("no paymentId")
	}
	acc.b(t, "updatebookingpayment", obj{"paymentId": p.PaymentID, "amount": 60}).ok(t, nil)
	var list struct {
		List []bookingData `json:"listBooking"`
	}
	acc.b(t, "listbooking", obj{"bookingId": b.BookingID}).ok(t, &list)
	if len(list.List) != 1 || len(list.List[0].Payments) != 1 || !list.List[0].Payments[0].Amount.Equal(dec("60")) {
		t.Fatalf("payments after update: %+v", list.List)
	}
	other.b(t, "updatebookingpayment", obj{"paymentId": p.PaymentID, "amount": 1}).wantStatus(t, 32)
	other.b(t, "removebookingpayment", obj{"paymentId": p.PaymentID}).wantStatus(t, 32)
	acc.b(t, "removebookingpayment", obj{"paymentId": p.PaymentID}).ok(t, nil)
	acc.b(t, "removebookingpayment", obj{"paymentId": p.PaymentID}).wantStatus(t, 32)
	for _, c := range []struct {
		name string
		body obj
	}{
		{"amount missing", obj{"bookingId": b.BookingID}},
		{"amount zero", obj{"bookingId": b.BookingID, "amount": "0"}},
		{"amount three decimals", obj{"bookingId": b.BookingID, "amount": "1.005"}},
		{"time in the future", obj{"bookingId": b.BookingID, "amount": "1", "time": time.Now().Add(72 * time.Hour).Unix()}},
		{"other currency", obj{"bookingId": b.BookingID, "amount": "1", "currency": "EUR"}},
	} {
		if a := acc.b(t, "addbookingpayment", c.body).wantStatus(t, 4); a.Message == "" {
			t.Errorf("%s: no message", c.name)
		}
	}
	acc.b(t, "addbookingpayment", obj{"bookingId": 99999999, "amount": "1"}).wantStatus(t, 24)
}

func TestGuestUsers(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	var u struct {
		UserID  int    `json:"userId"`
		Email   string `json:"email"`
		Name    string `json:"name"`
		Country string `json:"country"`
	}
	acc.b(t, "adduser", obj{"email": "Guest@Example.com", "password": "s3cret!", "name": "Guest One"}).ok(t, &u)
	if u.UserID == 0 || u.Country != "US" {
		t.Fatalf("adduser: %+v", u)
	}
	acc.b(t, "adduser", obj{"email": "guest@example.COM", "password": "another1", "name": "Twin"}).wantStatus(t, 40)
	other.b(t, "adduser", obj{"email": "guest@example.com", "password": "s3cret!", "name": "Same Email Other Account"}).ok(t, nil)
	acc.b(t, "adduser", obj{"email": "short@example.com", "password": "12345", "name": "Short"}).wantStatus(t, 4)

	acc.b(t, "login", obj{"email": "guest@example.com", "password": "s3cret!"}).ok(t, nil)
	acc.b(t, "login", obj{"email": "guest@example.com", "password": "wrong!!"}).wantStatus(t, 80)
	acc.b(t, "login", obj{"email": "nobody@example.com", "password": "s3cret!"}).wantStatus(t, 80)
	other.b(t, "login", obj{"email": "guest@example.com", "password": "wrong!!"}).wantStatus(t, 80)

	acc.b(t, "updateuser", obj{"userId": u.UserID, "name": "Guest Renamed", "country": "IT", "password": "newpass1"}).ok(t, &u)
	if u.Name != "Guest Renamed" || u.Country != "IT" {
		t.Fatalf("updateuser: %+v", u)
	}
	acc.b(t, "login", obj{"email": "guest@example.com", "password": "newpass1"}).ok(t, nil)
	other.b(t, "updateuser", obj{"userId": u.UserID, "name": "Hijack"}).wantStatus(t, 32)

	var s struct {
		UserID  int    `json:"userId"`
		Country string `json:"country"`
	}
	acc.b(t, "usesocialuser", obj{"email": "social@example.com", "name": "Social Guest", "locale": "fr_FR"}).ok(t, &s)
	if s.Country != "FR" {
		t.Fatalf("social user country %q", s.Country)
	}
	var again struct {
		UserID int `json:"userId"`
	}
	acc.b(t, "usesocialuser", obj{"email": "Social@example.com", "name": "Other Name", "locale": "en_US"}).ok(t, &again)
	if again.UserID != s.UserID {
		t.Fatalf("existing email gave a new user %d (first %d)", again.UserID, s.UserID)
	}
	// A booking may name its user; another account's user is refused.
	pid := bookable(t, acc, "USR1")
	g := guest(pid, day(30), day(31))
	g["userId"] = u.UserID
	create(t, acc, g)
	opid := bookable(t, other, "USR1")
	g = guest(opid, day(30), day(31))
	g["userId"] = u.UserID
	other.b(t, "create", g).wantStatus(t, 4)
}

func TestArrivalForm(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	pid := bookable(t, acc, "ARR1")
	b := create(t, acc, guest(pid, day(30), day(32)))
	var m struct {
		Message string `json:"message"`
	}
	acc.b(t, "updatearrivalform", obj{"bookingId": b.BookingID, "arriveBy": "plane", "transportNumber": "AZ610", "expectedTime": "9:30",
		"isCompleted": "False", "detailInformation": []obj{{"name": "Ada", "surname": "Lovelace", "nationality": "GB"}, {"name": "Byron"}}}).ok(t, &m)
	if m.Message != "Complete" {
		t.Fatalf("message %q", m.Message)
	}
	acc.b(t, "updatearrivalform", obj{"bookingId": b.BookingID, "isCompleted": "True", "detailInformation": []obj{{"name": "Solo"}}}).ok(t, nil)
	var list struct {
		List []struct {
			Arrival struct {
				ArriveBy     string `json:"arriveBy"`
				ExpectedTime string `json:"expectedTime"`
				IsCompleted  string `json:"isCompleted"`
				Guests       []struct {
					Name string `json:"name"`
				} `json:"detailInformation"`
			} `json:"arrivalForm"`
		} `json:"listBooking"`
	}
	acc.b(t, "listbooking", obj{"bookingId": b.BookingID}).ok(t, &list)
	a := list.List[0].Arrival
	if a.ArriveBy != "plane" || a.ExpectedTime != "09:30" || a.IsCompleted != "True" || len(a.Guests) != 1 || a.Guests[0].Name != "Solo" {
		t.Fatalf("arrival form: %+v", a)
	}
	acc.b(t, "updatearrivalform", obj{"bookingId": b.BookingID, "arriveBy": "rocket"}).wantStatus(t, 4)
	acc.b(t, "updatearrivalform", obj{"bookingId": b.BookingID, "expectedTime": "25:00"}).wantStatus(t, 4)
	other.b(t, "updatearrivalform", obj{"bookingId": b.BookingID, "arriveBy": "car"}).wantStatus(t, 24)
}

// TestBlocksShareTheLedger: blocks (interface A) and bookings hold nights in one ledger.
func TestBlocksShareTheLedger(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	pid := bookable(t, acc, "BLK1")
	var blk struct {
		Data struct {
			BlockID int `json:"block_id"`
		} `json:"data"`
	}
	r := acc.a(t, "property-blockdate", obj{"action": "create", "block": obj{"internal_code": "BLK1", "start_date": day(40), "end_date": day(42), "memo": "Owner stay"}})
	r.status(t, http.StatusOK)
	r.decode(t, &blk)
	acc.b(t, "create", guest(pid, day(42), day(44))).wantStatus(t, 8)
	create(t, acc, guest(pid, day(43), day(45)))
	acc.a(t, "property-blockdate", obj{"action": "create", "block": obj{"internal_code": "BLK1", "start_date": day(44), "end_date": day(44)}}).status(t, http.StatusConflict)
	acc.a(t, "property-blockdate", obj{"action": "create", "block": obj{"internal_code": "BLK1", "start_date": day(44), "end_date": day(40)}}).wantViolation(t, "block.end_date", "before")
	acc.a(t, "property-blockdate", obj{"action": "create", "block": obj{"internal_code": "NOPE", "start_date": day(50), "end_date": day(51)}}).status(t, http.StatusNotFound)
	createProperty(t, other, "BLK1")
	other.a(t, "property-blockdate", obj{"action": "delete", "block": obj{"block_id": blk.Data.BlockID}}).status(t, http.StatusNotFound)
	acc.a(t, "property-blockdate", obj{"action": "delete", "block": obj{"block_id": blk.Data.BlockID}}).status(t, http.StatusOK)
	create(t, acc, guest(pid, day(40), day(43)))
	if h := held(t, acc, pid, day(40), 5); len(h) != 5 {
		t.Fatalf("nights held after the block went: %v", h)
	}
}

func TestListBooking(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "LST1")
	pid2 := bookable(t, acc, "LST2")
	for i := 0; i < 12; i++ {
		g := guest(pid, day(30+2*i), day(31+2*i))
		if i%3 == 0 {
			g["firstName"], g["email"] = "Zelda", "zelda"+strconv.Itoa(i)+"@example.com"
		}
		create(t, acc, g)
	}
	create(t, acc, guest(pid2, day(30), day(31)))
	var l struct {
		Total int           `json:"totalRecords"`
		List  []bookingData `json:"listBooking"`
	}
	acc.b(t, "listbooking", obj{}).ok(t, &l)
	if l.Total != 13 || len(l.List) != 10 {
		t.Fatalf("default page: total %d, %d items (want 13, 10)", l.Total, len(l.List))
	}
	acc.b(t, "listbooking", obj{"page": 2}).ok(t, &l)
	if len(l.List) != 3 {
		t.Fatalf("page 2: %d items", len(l.List))
	}
	acc.b(t, "listbooking", obj{"propertyId": pid2}).ok(t, &l)
	if l.Total != 1 {
		t.Fatalf("by property: %d", l.Total)
	}
	acc.b(t, "listbooking", obj{"keyword": "zelda"}).ok(t, &l)
	if l.Total != 4 {
		t.Fatalf("keyword: %d, want 4", l.Total)
	}
	acc.b(t, "listbooking", obj{"keyword": ".*"}).ok(t, &l)
	if l.Total != 0 {
		t.Fatalf("keyword is a pattern: %d matches for .*", l.Total)
	}
	acc.b(t, "listbooking", obj{"checkin": day(30), "checkout": day(34), "propertyId": pid}).ok(t, &l)
	if l.Total != 2 {
		t.Fatalf("overlapping [%s, %s): %d, want 2", day(30), day(34), l.Total)
	}
	acc.b(t, "listbooking", obj{"limit": 101}).wantStatus(t, 4)
}

// TestBookingEvents: a booking's changes reach vros.booking.v1 without the guest's data.
func TestBookingEvents(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "BEV1")
	b := create(t, acc, guest(pid, day(30), day(33)))
	acc.b(t, "cancel", obj{"bookingId": b.BookingID}).ok(t, nil)
	key := acc.AccountID + ":booking:" + strconv.FormatInt(b.BookingID, 10)
	r := keyReader(t, events.TopicBooking, key)
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), viewsWithin)
	defer cancel()
	seen := map[string]bool{}
	for !seen["vros.booking.cancelled"] {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("events seen %v: %v", seen, err)
		}
		if string(m.Key) != key {
			continue
		}
		if strings.Contains(string(m.Value), "ada@example.com") || strings.Contains(string(m.Value), "Lovelace") {
			t.Fatalf("booking event carries guest data: %s", m.Value)
		}
		var e struct {
			Status string   `json:"status"`
			Nights []string `json:"nights"`
		}
		ev, err := events.Decode(m.Value, &e)
		if err != nil {
			t.Fatal(err)
		}
		seen[ev.Type()] = true
		if ev.Type() == "vros.booking.reserved" && (e.Status != "reserved" || len(e.Nights) != 3) {
			t.Fatalf("reserved event: %+v", e)
		}
		if ev.Type() == "vros.booking.cancelled" && (e.Status != "cancelled" || len(e.Nights) != 0) {
			t.Fatalf("cancelled event: %+v", e)
		}
	}
	if !seen["vros.booking.reserved"] {
		t.Fatalf("no reserved event: %v", seen)
	}
}

// TestDeletedPropertyIsNotBookable: once a property is deleted through interface A,
// booking-svc refuses it (status 16) and its existing bookings stay.
func TestDeletedPropertyIsNotBookable(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "DEL1")
	b := create(t, acc, guest(pid, day(30), day(32)))
	acc.a(t, "property", obj{"action": "delete", "property": obj{"internal_code": "DEL1"}}).status(t, http.StatusOK)
	deadline := time.Now().Add(viewsWithin)
	for {
		r := acc.b(t, "getinfo", obj{"propertyId": pid, "numberofadults": 1, "checkin": day(40), "checkout": day(41)})
		if a := r.b(t); a.Status == 16 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("booking-svc still prices a deleted property")
		}
		time.Sleep(20 * time.Millisecond)
	}
	acc.b(t, "listbooking", obj{"bookingId": b.BookingID}).ok(t, nil)
	// None of the account's events was parked (TestPoisonEventIsParked parks one of its own,
	// and may run at the same time).
	var parked int64
	parked, _ = mongoDB.Database("vros_booking").Collection("parked_events").CountDocuments(context.Background(),
		obj{"key": obj{"$regex": "^" + acc.AccountID + ":"}})
	if parked != 0 {
		t.Fatalf("%d events of the account parked", parked)
	}
}

// TestAutomaticPayments: with paymentAuto, booking-svc charges the kept card for each
// installment of the schedule once it is due; a declined card is noted and not retried.
func TestAutomaticPayments(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "AUTO1", func(code string) (string, obj) {
		return "property-policy", obj{"internal_code": code, "short_stay": obj{"payment_type": "Partial", "payment_partial": obj{
			"first_payment":     obj{"is_due_at": "Booking", "amount_type": "PercentOfGrandTotal", "amount": 30},
			"remaining_payment": obj{"is_due_at": "XDayPriorArrival", "x_day": 30},
		}}}
	})
	card := obj{"CCNumber": "4242 4242 4242 4242", "NameOnCard": "Ada Lovelace", "Expiration": "12/2035", "CVC": "123"}
	near := guest(pid, day(20), day(22)) // the remaining payment is due today too
	near["paymentAuto"], near["creditCard"] = 1, card
	far := guest(pid, day(60), day(62)) // only the first payment is due yet
	far["paymentAuto"], far["creditCard"] = 1, card
	bad := guest(pid, day(70), day(72))
	bad["paymentAuto"], bad["creditCard"] = 1, obj{"CCNumber": "4000000000000002", "NameOnCard": "Ada Lovelace", "Expiration": "12/2035", "CVC": "123"}
	n, f, x := create(t, acc, near), create(t, acc, far), create(t, acc, bad)

	paid := func(id int64) (decimal.Decimal, int) {
		var l struct {
			List []struct {
				AmountPaid decimal.Decimal `json:"amountPaid"`
				Payments   []struct {
					Method string `json:"method"`
				} `json:"payments"`
			} `json:"listBooking"`
		}
		acc.b(t, "listbooking", obj{"bookingId": id}).ok(t, &l)
		return l.List[0].AmountPaid, len(l.List[0].Payments)
	}
	deadline := time.Now().Add(viewsWithin)
	for {
		a, _ := paid(n.BookingID)
		b, _ := paid(f.BookingID)
		if a.Equal(n.GrandTotal) && b.Equal(f.GrandTotal.Mul(dec("0.3")).Round(2)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("paid %s of %s (near) and %s of %s (far, 30 %% due)", a, n.GrandTotal, b, f.GrandTotal)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(600 * time.Millisecond) // a few more autopay rounds: nothing is charged twice
	if a, count := paid(n.BookingID); !a.Equal(n.GrandTotal) || count != 1 {
		t.Fatalf("near booking: paid %s in %d payments after more rounds", a, count)
	}
	if a, count := paid(x.BookingID); !a.IsZero() || count != 0 {
		t.Fatalf("declined card: paid %s in %d payments", a, count)
	}
}

// TestWeekendNights: the account chooses whether the weekend price covers two nights
// (Friday, Saturday) or three (and Sunday).
func TestWeekendNights(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "WKND1", func(code string) (string, obj) {
		r := simpleRates(code)
		r["rate"] = obj{"daily_price": 100, "weekend_price": 150, "minimum_stay": 1}
		r["setting"].(obj)["apply_weekend_price"] = true
		return "property-rate", r
	})
	// The next Friday at least a week ahead, and the stay Friday to Monday.
	fri := time.Now().UTC().AddDate(0, 0, 7)
	for fri.Weekday() != time.Friday {
		fri = fri.AddDate(0, 0, 1)
	}
	in, sun, out := fri.Format(time.DateOnly), fri.AddDate(0, 0, 2).Format(time.DateOnly), fri.AddDate(0, 0, 3).Format(time.DateOnly)
	sunday := func() decimal.Decimal {
		var q bookingData
		acc.b(t, "getinfo", obj{"propertyId": pid, "numberofadults": 1, "checkin": in, "checkout": out}).ok(t, &q)
		return q.NightlyDetail[sun]
	}
	if p := sunday(); !p.Equal(dec("100")) {
		t.Fatalf("Sunday night %s with two weekend nights, want 100", p)
	}
	acc.a(t, "account-settings", obj{"weekend_nights": 3}).status(t, http.StatusOK)
	acc.a(t, "account-settings", obj{"weekend_nights": 4}).wantViolation(t, "weekend_nights", "")
	deadline := time.Now().Add(viewsWithin)
	for !sunday().Equal(dec("150")) {
		if time.Now().After(deadline) {
			t.Fatalf("Sunday night still %s after choosing three weekend nights", sunday())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
