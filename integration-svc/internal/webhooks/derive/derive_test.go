package derive

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/events/contract"
)

func raw(t *testing.T, v any) []byte {
	t.Helper()
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func booking(version int64, status string, nights []string, mod func(*contract.Booking)) *contract.Booking {
	b := &contract.Booking{AccountID: "a1", BookingID: 7, PropertyID: 3, Status: status, Version: version, Nights: nights,
		Checkin: "2027-01-10", Checkout: "2027-01-13", Adults: 2, Currency: "EUR", TotalRent: "100", GrandTotal: "120", BrandID: 2}
	if mod != nil {
		mod(b)
	}
	return b
}

var pay1 = contract.BookingPayment{PaymentID: 11, Amount: "50", Currency: "EUR", Method: "cash", PaidAt: time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC)}
var pay2 = contract.BookingPayment{PaymentID: 12, Amount: "20", Currency: "EUR", PaidAt: time.Date(2027, 1, 3, 0, 0, 0, 0, time.UTC)}

var cancelAt = time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)

// payAt is p recorded at created.
func payAt(p contract.BookingPayment, created time.Time) contract.BookingPayment {
	p.CreatedAt = created
	return p
}

func derive(t *testing.T, typ, key string, old, cur any) []webhook.Event {
	t.Helper()
	evs, err := Events(Change{Key: key, Account: "a1", Type: typ, At: time.Now(), Old: raw(t, old), New: raw(t, cur)})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func types(evs []webhook.Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func data(t *testing.T, e webhook.Event) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(e.Data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBookingEvents(t *testing.T) {
	n3 := []string{"2027-01-10", "2027-01-11", "2027-01-12"}
	n4 := []string{"2027-01-11", "2027-01-12", "2027-01-13", "2027-01-14"}
	tests := []struct {
		name      string
		old, cur  *contract.Booking
		want      []string
		availFrom string
		availTo   string
	}{
		{"first seen reserved → created + availability", nil, booking(1, "reserved", n3, nil),
			[]string{webhook.BookingCreated, webhook.AvailabilityChanged}, "2027-01-10", "2027-01-12"},
		{"coalesced: created with a payment and the form", nil, booking(3, "reserved", n3, func(b *contract.Booking) {
			b.Payments = []contract.BookingPayment{pay1}
			b.ArrivalFormCompleted = true
		}), []string{webhook.BookingCreated, webhook.AvailabilityChanged, webhook.PaymentAdded, webhook.ArrivalFormCompleted}, "2027-01-10", "2027-01-12"},
		// a create and the cancel right after it, coalesced: both changes' events, in order
		{"first seen cancelled → created, nights taken, cancelled, nights released", nil, booking(2, "cancelled", []string{}, nil),
			[]string{webhook.BookingCreated, webhook.AvailabilityChanged, webhook.BookingCancelled, webhook.AvailabilityChanged}, "2027-01-10", "2027-01-12"},
		{"cancelled → cancelled + availability over the released nights", booking(1, "reserved", n3, nil),
			booking(2, "cancelled", []string{}, nil), []string{webhook.BookingCancelled, webhook.AvailabilityChanged}, "2027-01-10", "2027-01-12"},
		// a payment and the cancel right after it, coalesced: in the order they happened
		{"coalesced: a payment, then the cancel", booking(1, "reserved", n3, nil), booking(3, "cancelled", []string{}, func(b *contract.Booking) {
			b.Payments = []contract.BookingPayment{payAt(pay1, cancelAt.Add(-time.Minute))}
			b.CancelledAt = &cancelAt
		}), []string{webhook.PaymentAdded, webhook.BookingCancelled, webhook.AvailabilityChanged}, "2027-01-10", "2027-01-12"},
		{"coalesced: the cancel, then a payment (a refund recorded after it)", booking(1, "reserved", n3, nil),
			booking(3, "cancelled", []string{}, func(b *contract.Booking) {
				b.Payments = []contract.BookingPayment{payAt(pay1, cancelAt.Add(time.Minute))}
				b.CancelledAt = &cancelAt
			}), []string{webhook.BookingCancelled, webhook.AvailabilityChanged, webhook.PaymentAdded}, "2027-01-10", "2027-01-12"},
		{"first seen cancelled with a payment made before the cancel", nil, booking(3, "cancelled", []string{}, func(b *contract.Booking) {
			b.Payments = []contract.BookingPayment{payAt(pay1, cancelAt.Add(-time.Minute))}
			b.CancelledAt = &cancelAt
		}), []string{webhook.BookingCreated, webhook.AvailabilityChanged, webhook.PaymentAdded, webhook.BookingCancelled, webhook.AvailabilityChanged},
			"2027-01-10", "2027-01-12"},
		{"payment added", booking(1, "reserved", n3, nil), booking(2, "reserved", n3, func(b *contract.Booking) { b.Payments = []contract.BookingPayment{pay1} }),
			[]string{webhook.PaymentAdded}, "", ""},
		{"payment removed, another added", booking(2, "reserved", n3, func(b *contract.Booking) { b.Payments = []contract.BookingPayment{pay1} }),
			booking(3, "reserved", n3, func(b *contract.Booking) { b.Payments = []contract.BookingPayment{pay2} }),
			[]string{webhook.PaymentAdded, webhook.PaymentRemoved}, "", ""},
		{"arrival form false → true", booking(1, "reserved", n3, nil), booking(2, "reserved", n3, func(b *contract.Booking) { b.ArrivalFormCompleted = true }),
			[]string{webhook.ArrivalFormCompleted}, "", ""},
		{"guests changed → updated", booking(1, "reserved", n3, nil), booking(2, "reserved", n3, func(b *contract.Booking) { b.Adults = 3 }),
			[]string{webhook.BookingUpdated}, "", ""},
		{"dates moved → updated + availability first..last of the changed nights", booking(1, "reserved", n3, nil), booking(2, "reserved", n4, nil),
			[]string{webhook.BookingUpdated, webhook.AvailabilityChanged}, "2027-01-10", "2027-01-14"},
		{"nothing but the version → nothing", booking(1, "reserved", n3, nil), booking(2, "reserved", n3, nil), nil, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var old any
			if tc.old != nil {
				old = tc.old
			}
			evs := derive(t, contract.BookingUpdated, "a1:booking:7", old, tc.cur)
			if g := types(evs); !slices.Equal(g, tc.want) {
				t.Fatalf("types = %v, want %v", g, tc.want)
			}
			ids := map[string]bool{}
			for i, e := range evs {
				if ids[e.ID] || e.Seq != i {
					t.Fatalf("event %s: id %s seen before, or seq %d at %d", e.Type, e.ID, e.Seq, i)
				}
				ids[e.ID] = true
				if e.PropertyID != 3 || e.Account != "a1" || e.BrandID != 2 {
					t.Fatalf("event %s: property %d account %s brand %d", e.Type, e.PropertyID, e.Account, e.BrandID)
				}
				if webhook.CarriesBooking(e.Type) != (e.BookingID == 7) {
					t.Fatalf("event %s: booking id %d", e.Type, e.BookingID)
				}
				m := data(t, e)
				if _, ok := m["booking"]; ok {
					t.Fatalf("event %s stores the booking: %v", e.Type, m)
				}
				if e.Type == webhook.AvailabilityChanged {
					if m["start_date"] != tc.availFrom || m["end_date"] != tc.availTo || m["reason"] != "booking" || m["booking_id"] != float64(7) {
						t.Fatalf("availability = %v", m)
					}
				}
				if e.Type == webhook.PaymentAdded {
					p := m["payment"].(map[string]any)
					if p["payment_id"] == nil || p["amount"] == nil {
						t.Fatalf("payment = %v", p)
					}
				}
			}
		})
	}
}

func TestMessageIDsAreStable(t *testing.T) {
	cur := booking(3, "reserved", []string{"2027-01-10"}, func(b *contract.Booking) { b.Payments = []contract.BookingPayment{pay1, pay2} })
	a := derive(t, contract.BookingReserved, "a1:booking:7", nil, cur)
	b := derive(t, contract.BookingReserved, "a1:booking:7", nil, cur)
	seen := map[string]bool{}
	for i := range a {
		if a[i].ID != b[i].ID {
			t.Fatalf("event %d: %s then %s", i, a[i].ID, b[i].ID)
		}
		if len(a[i].ID) != 30 || a[i].ID[:4] != "msg_" {
			t.Fatalf("id %q is not msg_ and 26 characters", a[i].ID)
		}
		if seen[a[i].ID] {
			t.Fatalf("id %s twice (the two payments must differ)", a[i].ID)
		}
		seen[a[i].ID] = true
	}
	other := derive(t, contract.BookingReserved, "a1:booking:8", nil, cur)
	if other[0].ID == a[0].ID {
		t.Fatal("another key gives the same id")
	}
}

func block(version int64, start, end string, deleted bool) *contract.Block {
	return &contract.Block{AccountID: "a1", BlockID: 5, PropertyID: 3, StartDate: start, EndDate: end, Deleted: deleted, Version: version, Memo: "m"}
}

func TestBlockEvents(t *testing.T) {
	tests := []struct {
		name     string
		typ      string
		old, cur *contract.Block
		from, to string
	}{
		{"created", contract.BlockCreated, nil, block(1, "2027-02-01", "2027-02-03", false), "2027-02-01", "2027-02-03"},
		{"moved (imported feed)", contract.BlockUpdated, block(1, "2027-02-01", "2027-02-03", false), block(2, "2027-02-02", "2027-02-06", false), "2027-02-01", "2027-02-06"},
		{"deleted", contract.BlockDeleted, block(1, "2027-02-01", "2027-02-03", false), block(2, "2027-02-01", "2027-02-03", true), "2027-02-01", "2027-02-03"},
		{"memo only → nothing", contract.BlockUpdated, block(1, "2027-02-01", "2027-02-03", false), block(2, "2027-02-01", "2027-02-03", false), "", ""},
		{"first seen deleted → nothing", contract.BlockDeleted, nil, block(2, "2027-02-01", "2027-02-03", true), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var old any
			if tc.old != nil {
				old = tc.old
			}
			evs := derive(t, tc.typ, "a1:block:5", old, tc.cur)
			if tc.from == "" {
				if len(evs) != 0 {
					t.Fatalf("events %v, want none", types(evs))
				}
				return
			}
			if len(evs) != 1 || evs[0].Type != webhook.AvailabilityChanged {
				t.Fatalf("events %v", types(evs))
			}
			m := data(t, evs[0])
			if m["start_date"] != tc.from || m["end_date"] != tc.to || m["reason"] != "block" || m["block_id"] != float64(5) {
				t.Fatalf("data %v", m)
			}
		})
	}
}

func property(version int64, mod func(*contract.Property)) *contract.Property {
	p := &contract.Property{AccountID: "a1", PropertyID: 3, InternalCode: "V1", Version: version, Content: contract.Content{Name: "Villa"}}
	if mod != nil {
		mod(p)
	}
	return p
}

func TestPropertyEvents(t *testing.T) {
	tests := []struct {
		name     string
		old, cur *contract.Property
		want     []string
	}{
		{"first seen → created", nil, property(1, nil), []string{webhook.PropertyCreated}},
		{"deleted flag → deleted", property(1, nil), property(2, func(p *contract.Property) { p.Deleted = true }), []string{webhook.PropertyDeleted}},
		{"rates differ → rates.updated", property(1, nil), property(2, func(p *contract.Property) { p.Rates = &contract.Rates{MinimumStay: 2} }), []string{webhook.RatesUpdated}},
		{"prices differ → rates.updated", property(1, nil), property(2, func(p *contract.Property) {
			p.Prices = map[string]contract.DayPrice{"2027-01-01": {}}
		}), []string{webhook.RatesUpdated}},
		{"a rate plan differs → rates.updated", property(1, nil), property(2, func(p *contract.Property) {
			p.RatePlans = []contract.RatePlan{{ID: 1, PlanTerms: contract.PlanTerms{Name: "Non-refundable"}}}
		}), []string{webhook.RatesUpdated}},
		{"the standard plan's terms differ → rates.updated", property(1, nil), property(2, func(p *contract.Property) {
			p.StandardPlan = &contract.PlanTerms{Name: "Flexible"}
		}), []string{webhook.RatesUpdated}},
		{"restrictions differ → rates.updated", property(1, nil), property(2, func(p *contract.Property) {
			stop := true
			p.Restrictions = []contract.Restriction{{StartDate: "2027-01-01", EndDate: "2027-01-03", StopSell: &stop}}
		}), []string{webhook.RatesUpdated}},
		{"channel markups differ → rates.updated", property(1, nil), property(2, func(p *contract.Property) {
			p.ChannelMarkups = []contract.Markup{{Channel: "airbnb", Adjustment: contract.Adjustment{Type: "percent", Value: "15"}}}
		}), []string{webhook.RatesUpdated}},
		{"content differs → property.updated", property(1, nil), property(2, func(p *contract.Property) { p.Content.Name = "Villa Blue" }), []string{webhook.PropertyUpdated}},
		{"both", property(1, nil), property(2, func(p *contract.Property) { p.Content.Bedrooms = 3; p.Rates = &contract.Rates{} }),
			[]string{webhook.RatesUpdated, webhook.PropertyUpdated}},
		{"iCal link rotated only → nothing", property(1, nil), property(2, func(p *contract.Property) { p.ICalTokenSHA256 = "ab" }), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var old any
			if tc.old != nil {
				old = tc.old
			}
			evs := derive(t, contract.PropertyUpdated, "a1:3", old, tc.cur)
			if g := types(evs); !slices.Equal(g, tc.want) {
				t.Fatalf("types = %v, want %v", g, tc.want)
			}
			for _, e := range evs {
				m := data(t, e)
				if m["internal_code"] != "V1" || m["property_id"] != float64(3) || m["version"] != float64(tc.cur.Version) {
					t.Fatalf("data %v", m)
				}
				// the resource in interface B's shape, as of this version.
				prop, _ := m["property"].(map[string]any)
				table, _ := m["rate_table"].(map[string]any)
				switch e.Type {
				case webhook.PropertyCreated, webhook.PropertyUpdated:
					if prop["id"] != "a1_3" || prop["name"] != tc.cur.Content.Name || prop["bedroom"] != float64(tc.cur.Content.Bedrooms) || table != nil {
						t.Fatalf("%s data %v", e.Type, m)
					}
				case webhook.RatesUpdated:
					// a property without rates has an empty table, as getratetable answers.
					seasons, _ := table["seasons"].([]any)
					ok := table["tableName"] == "Standard" && prop == nil && len(seasons) == 0 && tc.cur.Rates == nil
					if tc.cur.Rates != nil && len(seasons) == 1 {
						std, _ := seasons[0].(map[string]any)
						ok = table["tableName"] == "Standard" && prop == nil && std["def"] == float64(1) && std["minimumStay"] == float64(tc.cur.Rates.MinimumStay)
					}
					if !ok {
						t.Fatalf("%s data %v", e.Type, m)
					}
				default:
					if prop != nil || table != nil {
						t.Fatalf("%s carries a resource: %v", e.Type, m)
					}
				}
			}
		})
	}
}

// A booking moved to another property frees the old property's nights and takes the new
// one's: each property gets its availability.changed, on its own lane (property) and with
// its own message id, even when the dates stay the same; the events keep their derived
// order (Seq).
func TestBookingMovedToAnotherProperty(t *testing.T) {
	n3 := []string{"2027-01-10", "2027-01-11", "2027-01-12"}
	moved := booking(2, "reserved", n3, func(b *contract.Booking) { b.PropertyID = 4 })
	evs := derive(t, contract.BookingUpdated, "a1:booking:7", booking(1, "reserved", n3, nil), moved)
	want := []string{webhook.BookingUpdated, webhook.AvailabilityChanged, webhook.AvailabilityChanged}
	if g := types(evs); !slices.Equal(g, want) {
		t.Fatalf("types = %v, want %v", g, want)
	}
	for i, e := range evs {
		if e.Seq != i {
			t.Fatalf("event %d (%s) has seq %d", i, e.Type, e.Seq)
		}
	}
	from, to := data(t, evs[1]), data(t, evs[2])
	if evs[1].PropertyID != 3 || from["property_id"] != float64(3) || from["start_date"] != "2027-01-10" || from["end_date"] != "2027-01-12" {
		t.Fatalf("the left property's event: property %d %v", evs[1].PropertyID, from)
	}
	if evs[2].PropertyID != 4 || to["property_id"] != float64(4) || to["start_date"] != "2027-01-10" || to["end_date"] != "2027-01-12" {
		t.Fatalf("the new property's event: property %d %v", evs[2].PropertyID, to)
	}
	if evs[1].ID == evs[2].ID {
		t.Fatal("the two availability events share a message id")
	}
}

// TestMoneyEvents: each step of a refund or a deposit hold (docs/money.md) derives exactly
// its event, with the refund or deposit as the booking now has it, and no booking.updated;
// deriving the same change again gives the same message ids.
func TestMoneyEvents(t *testing.T) {
	n3 := []string{"2027-01-10", "2027-01-11", "2027-01-12"}
	at := time.Date(2027, 1, 3, 9, 0, 0, 0, time.UTC)
	refund := func(status string) func(*contract.Booking) {
		return func(b *contract.Booking) {
			b.Status, b.Nights, b.CancelledAt = "cancelled", []string{}, &cancelAt
			b.Refund = &contract.BookingRefund{Status: status, Amount: "70.00", Refunded: "0.00", Currency: "EUR", Policy: "moderate", Percent: "50"}
			if status == contract.RefundSucceeded {
				b.Refund.Refunded = "70.00"
			}
		}
	}
	deposit := func(status string, held bool, reauth int) func(*contract.Booking) {
		return func(b *contract.Booking) {
			b.Deposit = &contract.BookingDeposit{Status: status, Amount: "300.00", Currency: "EUR", DueDate: "2027-01-03", Reauthorizations: reauth}
			if held {
				b.Deposit.HeldAt = &at
			}
			switch status {
			case contract.DepositReleased:
				b.Deposit.ReleasedAt = &at
			case contract.DepositCaptured:
				b.Deposit.CapturedAmount, b.Deposit.CapturedAt = "120.00", &at
			case contract.DepositFailed:
				b.Deposit.LastError = "card_declined"
			}
		}
	}
	both := func(fs ...func(*contract.Booking)) func(*contract.Booking) {
		return func(b *contract.Booking) {
			for _, f := range fs {
				f(b)
			}
		}
	}
	tests := []struct {
		name     string
		old, cur *contract.Booking
		want     []string
	}{
		{"refund pending → succeeded", booking(2, "cancelled", nil, refund(contract.RefundPending)),
			booking(3, "cancelled", nil, refund(contract.RefundSucceeded)), []string{webhook.RefundSucceeded}},
		{"refund pending → failed", booking(2, "cancelled", nil, refund(contract.RefundPending)),
			booking(3, "cancelled", nil, refund(contract.RefundFailed)), []string{webhook.RefundFailed}},
		{"refund failed → pending (retryrefund) → nothing", booking(3, "cancelled", nil, refund(contract.RefundFailed)),
			booking(4, "cancelled", nil, refund(contract.RefundPending)), nil},
		{"refund failed again after a retry", booking(4, "cancelled", nil, refund(contract.RefundPending)),
			booking(5, "cancelled", nil, refund(contract.RefundFailed)), []string{webhook.RefundFailed}},
		{"cancelled and refunded at once", booking(1, "reserved", n3, nil),
			booking(2, "cancelled", nil, refund(contract.RefundSucceeded)), []string{webhook.BookingCancelled, webhook.AvailabilityChanged, webhook.RefundSucceeded}},
		{"cancelled, nothing to refund", booking(1, "reserved", n3, nil),
			booking(2, "cancelled", nil, refund(contract.RefundNone)), []string{webhook.BookingCancelled, webhook.AvailabilityChanged}},
		{"deposit scheduled → held", booking(1, "reserved", n3, deposit(contract.DepositScheduled, false, 0)),
			booking(2, "reserved", n3, deposit(contract.DepositHeld, true, 0)), []string{webhook.DepositHeld}},
		{"deposit re-authorized", booking(2, "reserved", n3, deposit(contract.DepositHeld, true, 0)),
			booking(3, "reserved", n3, deposit(contract.DepositHeld, true, 1)), []string{webhook.DepositReauthorized}},
		{"deposit held → released", booking(3, "reserved", n3, deposit(contract.DepositHeld, true, 1)),
			booking(4, "reserved", n3, deposit(contract.DepositReleased, true, 1)), []string{webhook.DepositReleased}},
		{"deposit held → captured", booking(3, "reserved", n3, deposit(contract.DepositHeld, true, 1)),
			booking(4, "reserved", n3, deposit(contract.DepositCaptured, true, 1)), []string{webhook.DepositCaptured}},
		{"deposit scheduled → failed", booking(1, "reserved", n3, deposit(contract.DepositScheduled, false, 0)),
			booking(2, "reserved", n3, deposit(contract.DepositFailed, false, 0)), []string{webhook.DepositFailed}},
		{"deposit scheduled → no card → nothing", booking(1, "reserved", n3, deposit(contract.DepositScheduled, false, 0)),
			booking(2, "reserved", n3, deposit(contract.DepositNoCard, false, 0)), nil},
		{"coalesced: held, then released", booking(1, "reserved", n3, deposit(contract.DepositScheduled, false, 0)),
			booking(3, "reserved", n3, deposit(contract.DepositReleased, true, 0)), []string{webhook.DepositHeld, webhook.DepositReleased}},
		{"coalesced: cancelled, refunded and the deposit released", booking(2, "reserved", n3, deposit(contract.DepositHeld, true, 0)),
			booking(3, "cancelled", nil, both(refund(contract.RefundSucceeded), deposit(contract.DepositReleased, true, 0))),
			[]string{webhook.BookingCancelled, webhook.AvailabilityChanged, webhook.RefundSucceeded, webhook.DepositReleased}},
		{"first seen with the deposit held", nil, booking(2, "reserved", n3, deposit(contract.DepositHeld, true, 0)),
			[]string{webhook.BookingCreated, webhook.AvailabilityChanged, webhook.DepositHeld}},
		{"deposit unchanged but the version → nothing", booking(2, "reserved", n3, deposit(contract.DepositHeld, true, 1)),
			booking(3, "reserved", n3, deposit(contract.DepositHeld, true, 1)), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var old any
			if tc.old != nil {
				old = tc.old
			}
			evs := derive(t, contract.BookingUpdated, "a1:booking:7", old, tc.cur)
			if g := types(evs); !slices.Equal(g, tc.want) {
				t.Fatalf("types = %v, want %v", g, tc.want)
			}
			again := derive(t, contract.BookingUpdated, "a1:booking:7", old, tc.cur)
			for i, e := range evs {
				if again[i].ID != e.ID {
					t.Fatalf("%s: id %s, then %s on replay", e.Type, e.ID, again[i].ID)
				}
				if !webhook.KnownType(e.Type) || webhook.CarriesBooking(e.Type) != (e.BookingID == 7) || e.PropertyID != 3 {
					t.Fatalf("%s: known %v, carries the booking %v, booking %d property %d", e.Type, webhook.KnownType(e.Type),
						webhook.CarriesBooking(e.Type), e.BookingID, e.PropertyID)
				}
				m := data(t, e)
				if m["booking"] != nil {
					t.Fatalf("%s stores the booking: %v", e.Type, m)
				}
				refund, _ := m["refund"].(map[string]any)
				deposit, _ := m["deposit"].(map[string]any)
				ids := m["booking_id"] == float64(7) && m["property_id"] == float64(3) && e.BookingID == 7
				switch e.Type {
				case webhook.RefundSucceeded, webhook.RefundFailed:
					if !ids || refund["status"] != tc.cur.Refund.Status || refund["amount"] != "70.00" || deposit != nil {
						t.Fatalf("%s data %v", e.Type, m)
					}
				case webhook.DepositHeld, webhook.DepositReauthorized, webhook.DepositReleased, webhook.DepositCaptured, webhook.DepositFailed:
					if !ids || deposit["status"] != tc.cur.Deposit.Status || deposit["amount"] != "300.00" || refund != nil {
						t.Fatalf("%s data %v", e.Type, m)
					}
				}
			}
		})
	}
}

// TestRefundPaymentEvent: a refund recorded as a payment is a payment.added whose payment
// says it is a refund and of which payment.
func TestRefundPaymentEvent(t *testing.T) {
	refunded := contract.BookingPayment{PaymentID: 13, Amount: "-50", Currency: "EUR", Method: "card", PaidAt: cancelAt,
		Kind: contract.PaymentKindRefund, RefundOf: 11}
	evs := derive(t, contract.BookingUpdated, "a1:booking:7", booking(3, "cancelled", nil, func(b *contract.Booking) { b.Payments = []contract.BookingPayment{pay1} }),
		booking(4, "cancelled", nil, func(b *contract.Booking) { b.Payments = []contract.BookingPayment{pay1, refunded} }))
	if g := types(evs); !slices.Equal(g, []string{webhook.PaymentAdded}) {
		t.Fatalf("types = %v", g)
	}
	p := data(t, evs[0])["payment"].(map[string]any)
	if p["kind"] != "refund" || p["refund_of"] != float64(11) || p["amount"] != "-50" {
		t.Fatalf("payment = %v", p)
	}
}
