package trigger

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/libs/events/contract"
)

var t0 = time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)

// booking is a reserved booking of account acc, id 42: 2027-04-10 to 04-14, 450.00 EUR unpaid.
func booking(version int64, mods ...func(*contract.Booking)) contract.Booking {
	b := contract.Booking{
		AccountID: "acc", BookingID: 42, PropertyID: 7, BrandID: 3, Status: "reserved",
		Version: version, Checkin: "2027-04-10", Checkout: "2027-04-14", Adults: 2,
		Currency: "EUR", TotalRent: "400.00", GrandTotal: "450.00",
	}
	for _, m := range mods {
		m(&b)
	}
	return b
}

func pay(id int64, amount, kind string) func(*contract.Booking) {
	return func(b *contract.Booking) {
		b.Payments = append(b.Payments, contract.BookingPayment{PaymentID: id, Amount: amount, Currency: "EUR", Kind: kind})
	}
}

// fail adds an automatic charge the card refused (contract.Booking.ChargeFailures).
func fail(id string) func(*contract.Booking) {
	return func(b *contract.Booking) {
		b.ChargeFailures = append(b.ChargeFailures, contract.BookingChargeFailure{ID: id, Amount: "450.00", Currency: "EUR",
			At: t0, Reason: "card declined"})
	}
}

func deposit(status string, held bool) func(*contract.Booking) {
	return func(b *contract.Booking) {
		b.Deposit = &contract.BookingDeposit{Status: status, Amount: "200.00", Currency: "EUR"}
		if held {
			b.Deposit.HeldAt = &t0
		}
	}
}

func cancelled(b *contract.Booking) { b.Status, b.Nights = "cancelled", []string{} }

// events lists the event messages created as trigger:occurrence, in order.
func events(p Planned) []string {
	var out []string
	for _, m := range p.Create {
		if !m.Scheduled {
			out = append(out, m.Trigger+":"+m.Occurrence)
		}
	}
	return out
}

func ids(ms []Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func TestEventTriggers(t *testing.T) {
	off, _ := Settings{}.With(Change{Trigger: BookingConfirmed, Enabled: ptr(false)})
	failedOff, _ := Settings{}.With(Change{Trigger: PaymentFailed, Enabled: ptr(false)})
	v1 := booking(1)
	held := booking(3, deposit(contract.DepositHeld, true))
	tests := []struct {
		name     string
		settings Settings
		prev     *contract.Booking
		next     contract.Booking
		want     []string
	}{
		{"first reserved → confirmed + owner.booking", Settings{}, nil, v1,
			[]string{"booking.confirmed:once", "owner.booking:once"}},
		{"booking.confirmed off → owner.booking only", off, nil, v1, []string{"owner.booking:once"}},
		{"a change messages do not show (arrival form) → nothing", Settings{}, &v1,
			booking(2, func(b *contract.Booking) { b.ArrivalFormCompleted = true }), nil},
		{"guests changed → modified at version 2", Settings{}, &v1,
			booking(2, func(b *contract.Booking) { b.Children = 1 }), []string{"booking.modified:2"}},
		{"total changed → modified", Settings{}, &v1,
			booking(2, func(b *contract.Booking) { b.GrandTotal = "480.00" }), []string{"booking.modified:2"}},
		{"total written otherwise (450 = 450.00) → nothing", Settings{}, &v1,
			booking(2, func(b *contract.Booking) { b.GrandTotal = "450" }), nil},
		{"stay moved → modified", Settings{}, &v1,
			booking(5, func(b *contract.Booking) { b.Checkout = "2027-04-15" }), []string{"booking.modified:5"}},
		{"cancelled → cancelled + owner.cancellation", Settings{}, &v1, booking(2, cancelled),
			[]string{"booking.cancelled:once", "owner.cancellation:once"}},
		{"first seen cancelled → cancelled only, never confirmed", Settings{}, nil, booking(2, cancelled),
			[]string{"booking.cancelled:once", "owner.cancellation:once"}},
		{"a payment appears → received per payment id", Settings{}, &v1, booking(2, pay(901, "150.00", "")),
			[]string{"payment.received:901"}},
		{"a second payment → only the new id", Settings{}, ptr(booking(2, pay(901, "150.00", ""))),
			booking(3, pay(901, "150.00", ""), pay(902, "300.00", "")), []string{"payment.received:902"}},
		{"a refund payment → nothing", Settings{}, ptr(booking(2, pay(901, "150.00", ""))),
			booking(3, pay(901, "150.00", ""), pay(903, "-150.00", contract.PaymentKindRefund)), nil},
		{"a captured deposit → nothing", Settings{}, &v1, booking(2, pay(904, "50.00", contract.PaymentKindDepositCapture)), nil},
		{"a payment of 0 → nothing", Settings{}, &v1, booking(2, pay(905, "0.00", "")), nil},
		{"a charge failure appears → failed per failure id", Settings{}, &v1, booking(2, fail("2027-03-01-450.00")),
			[]string{"payment.failed:2027-03-01-450.00"}},
		{"a second failure → only the new id", Settings{}, ptr(booking(2, fail("2027-03-01-450.00"))),
			booking(3, fail("2027-03-01-450.00"), fail("2027-03-05-450.00")), []string{"payment.failed:2027-03-05-450.00"}},
		{"the same failures again (another change) → nothing", Settings{}, ptr(booking(2, fail("2027-03-01-450.00"))),
			booking(3, fail("2027-03-01-450.00"), func(b *contract.Booking) { b.Adults = 3 }), []string{"booking.modified:3"}},
		{"a failure and a payment in one event → both", Settings{}, &v1,
			booking(2, fail("2027-03-01-450.00"), pay(906, "100.00", "")), []string{"payment.received:906", "payment.failed:2027-03-01-450.00"}},
		{"a failure first seen on a cancelled booking → nothing of it", Settings{}, &v1, booking(2, cancelled, fail("2027-03-01-450.00")),
			[]string{"booking.cancelled:once", "owner.cancellation:once"}},
		{"payment.failed off → nothing", failedOff, &v1, booking(2, fail("2027-03-01-450.00")), nil},
		{"replayed alone (prev none) → confirmed and the failure, ids as step by step", Settings{}, nil, booking(2, fail("2027-03-01-450.00")),
			[]string{"booking.confirmed:once", "owner.booking:once", "payment.failed:2027-03-01-450.00"}},
		{"deposit scheduled → held", Settings{}, ptr(booking(2, deposit(contract.DepositScheduled, false))),
			held, []string{"deposit.held:once"}},
		{"deposit re-authorized (still held) → nothing", Settings{}, &held,
			booking(4, deposit(contract.DepositHeld, true), func(b *contract.Booking) { b.Deposit.Reauthorizations = 1 }), nil},
		{"deposit held → released", Settings{}, &held, booking(4, deposit(contract.DepositReleased, true)),
			[]string{"deposit.released:once"}},
		{"deposit held → captured (the rest released)", Settings{}, &held, booking(4, deposit(contract.DepositCaptured, true)),
			[]string{"deposit.released:once"}},
		{"a hold never placed, released by the cancel → no deposit message", Settings{},
			ptr(booking(2, deposit(contract.DepositScheduled, false))),
			booking(3, cancelled, deposit(contract.DepositReleased, false)),
			[]string{"booking.cancelled:once", "owner.cancellation:once"}},
		{"an older version than applied → nothing", Settings{}, ptr(booking(3)), booking(2, cancelled), nil},
		{"the same version again → nothing", Settings{}, ptr(booking(2)), booking(2, pay(901, "1.00", "")), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Plan(tt.prev, tt.next, tt.settings, time.UTC, t0)
			if got := events(p); !slices.Equal(got, tt.want) {
				t.Errorf("events %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStaleEventPlansNothing(t *testing.T) {
	p := Plan(ptr(booking(4)), booking(3, cancelled, func(b *contract.Booking) { b.Checkin = "2027-05-01" }), Settings{}, time.UTC, t0)
	if len(p.Create) != 0 || len(p.Cancel) != 0 || p.CancelScheduled {
		t.Fatalf("planned %+v", p)
	}
}

func TestMessageFields(t *testing.T) {
	p := Plan(nil, booking(1), Settings{}, time.UTC, t0.In(time.FixedZone("x", 3600)))
	byTrigger := map[string]Message{}
	for _, m := range p.Create {
		byTrigger[m.Trigger] = m
	}
	want := Message{ID: "acc:booking.confirmed:42:once", Account: "acc", Trigger: BookingConfirmed,
		BookingID: 42, PropertyID: 7, BrandID: 3, Occurrence: Once, To: Guest, Lang: LangBooking, SendAt: t0}
	if got := byTrigger[BookingConfirmed]; got != want {
		t.Errorf("confirmed\n got %+v\nwant %+v", got, want)
	}
	if o := byTrigger[OwnerBooking]; o.To != Owner || o.Lang != LangAccount || o.ID != "acc:owner.booking:42:once" {
		t.Errorf("owner.booking %+v", o)
	}
	if a := byTrigger[StayArrival]; !a.Scheduled || a.To != Guest || a.SendAt.Location() != time.UTC {
		t.Errorf("stay.arrival %+v", a)
	}
}

// Event triggers whose source is not a booking snapshot.
func TestEventOfOtherSources(t *testing.T) {
	m, ok := Event("acc", OwnerChannelConflict, 42, "c-17", Settings{}, t0)
	if !ok || m.ID != "acc:owner.channel_conflict:42:c-17" || m.To != Owner {
		t.Errorf("channel conflict %+v %v", m, ok)
	}
	if m, ok := Event("acc", PaymentFailed, 42, "inst-2", Settings{}, t0); !ok || m.To != Guest || m.ID != "acc:payment.failed:42:inst-2" {
		t.Errorf("payment failed %+v %v", m, ok)
	}
	off, _ := Settings{}.With(Change{Trigger: PaymentFailed, Enabled: ptr(false)})
	if _, ok := Event("acc", PaymentFailed, 42, "x", off, t0); ok {
		t.Error("a trigger switched off is planned")
	}
	if _, ok := Event("acc", StayArrival, 42, "x", Settings{}, t0); ok {
		t.Error("a scheduled trigger is planned as an event")
	}
}

func scheduledAt(p Planned) map[string]string {
	out := map[string]string{}
	for _, m := range p.Create {
		if m.Scheduled {
			out[m.Trigger] = m.Occurrence + " " + m.SendAt.Format(time.RFC3339)
		}
	}
	return out
}

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestScheduledTriggers(t *testing.T) {
	stay := func(in, out string) func(*contract.Booking) {
		return func(b *contract.Booking) { b.Checkin, b.Checkout = in, out }
	}
	custom, _ := Settings{}.With(Change{Trigger: StayArrival, Days: ptr(0), At: ptr("08:15")},
		Change{Trigger: StayThanks, Enabled: ptr(false)}, Change{Trigger: StayCheckout, Days: ptr(0), At: ptr("07:00")})
	tests := []struct {
		name     string
		zone     string
		settings Settings
		b        contract.Booking
		now      time.Time
		want     map[string]string // trigger → occurrence and SendAt (UTC)
	}{
		{"defaults, UTC", "UTC", Settings{}, booking(1), t0, map[string]string{
			PaymentDueSoon: "2027-04-07T10:00 2027-04-07T10:00:00Z",
			StayArrival:    "2027-04-07T10:00 2027-04-07T10:00:00Z",
			StayCheckout:   "2027-04-13T18:00 2027-04-13T18:00:00Z",
			StayThanks:     "2027-04-15T10:00 2027-04-15T10:00:00Z",
		}},
		{"paid in full → no due_soon; settings' days, time and off", "UTC", custom, booking(1, pay(1, "450.00", "")), t0, map[string]string{
			StayArrival:  "2027-04-10T08:15 2027-04-10T08:15:00Z",
			StayCheckout: "2027-04-14T07:00 2027-04-14T07:00:00Z",
		}},
		// The EU clocks go forward on Sunday 2027-03-28: 10:00 is 09:00 UTC before, 08:00 after.
		{"Europe/Rome across the March change", "Europe/Rome", Settings{}, booking(1, stay("2027-03-30", "2027-04-02")), t0, map[string]string{
			PaymentDueSoon: "2027-03-27T10:00 2027-03-27T09:00:00Z",
			StayArrival:    "2027-03-27T10:00 2027-03-27T09:00:00Z",
			StayCheckout:   "2027-04-01T18:00 2027-04-01T16:00:00Z",
			StayThanks:     "2027-04-03T10:00 2027-04-03T08:00:00Z",
		}},
		{"Europe/Rome, the change day itself", "Europe/Rome", Settings{}, booking(1, stay("2027-03-31", "2027-04-01")), t0, map[string]string{
			PaymentDueSoon: "2027-03-28T10:00 2027-03-28T08:00:00Z",
			StayArrival:    "2027-03-28T10:00 2027-03-28T08:00:00Z",
			StayCheckout:   "2027-03-31T18:00 2027-03-31T16:00:00Z",
			StayThanks:     "2027-04-02T10:00 2027-04-02T08:00:00Z",
		}},
		// UTC+14: the local day is the day before in UTC.
		{"Pacific/Kiritimati", "Pacific/Kiritimati", Settings{}, booking(1, stay("2027-06-10", "2027-06-14")), t0, map[string]string{
			PaymentDueSoon: "2027-06-07T10:00 2027-06-06T20:00:00Z",
			StayArrival:    "2027-06-07T10:00 2027-06-06T20:00:00Z",
			StayCheckout:   "2027-06-13T18:00 2027-06-13T04:00:00Z",
			StayThanks:     "2027-06-15T10:00 2027-06-14T20:00:00Z",
		}},
		// UTC-9 in summer (HDT): 18:00 local is the next day in UTC.
		{"America/Adak", "America/Adak", Settings{}, booking(1, stay("2027-06-10", "2027-06-14")), t0, map[string]string{
			PaymentDueSoon: "2027-06-07T10:00 2027-06-07T19:00:00Z",
			StayArrival:    "2027-06-07T10:00 2027-06-07T19:00:00Z",
			StayCheckout:   "2027-06-13T18:00 2027-06-14T03:00:00Z",
			StayThanks:     "2027-06-15T10:00 2027-06-15T19:00:00Z",
		}},
		// Booked the day before arrival: the 3-days-before ones are past, sent at once.
		{"past due, the stay not started → at once", "UTC", Settings{}, booking(1), time.Date(2027, 4, 9, 15, 0, 0, 0, time.UTC), map[string]string{
			PaymentDueSoon: "2027-04-07T10:00 2027-04-09T15:00:00Z",
			StayArrival:    "2027-04-07T10:00 2027-04-09T15:00:00Z",
			StayCheckout:   "2027-04-13T18:00 2027-04-13T18:00:00Z",
			StayThanks:     "2027-04-15T10:00 2027-04-15T10:00:00Z",
		}},
		{"past due, booked on the arrival day → skipped", "UTC", Settings{}, booking(1), time.Date(2027, 4, 10, 6, 0, 0, 0, time.UTC), map[string]string{
			StayCheckout: "2027-04-13T18:00 2027-04-13T18:00:00Z",
			StayThanks:   "2027-04-15T10:00 2027-04-15T10:00:00Z",
		}},
		// 2027-06-10 12:00 UTC is 06-11 02:00 in Kiritimati (the arrival day: skipped) and
		// 06-10 03:00 in Adak (the day before: sent at once). The server's UTC day says neither.
		{"Kiritimati: the local day says the stay started", "Pacific/Kiritimati", Settings{}, booking(1, stay("2027-06-11", "2027-06-14")),
			time.Date(2027, 6, 10, 12, 0, 0, 0, time.UTC), map[string]string{
				StayCheckout: "2027-06-13T18:00 2027-06-13T04:00:00Z",
				StayThanks:   "2027-06-15T10:00 2027-06-14T20:00:00Z",
			}},
		{"Adak: the local day says it has not", "America/Adak", Settings{}, booking(1, stay("2027-06-11", "2027-06-14")),
			time.Date(2027, 6, 10, 12, 0, 0, 0, time.UTC), map[string]string{
				PaymentDueSoon: "2027-06-08T10:00 2027-06-10T12:00:00Z",
				StayArrival:    "2027-06-08T10:00 2027-06-10T12:00:00Z",
				StayCheckout:   "2027-06-13T18:00 2027-06-14T03:00:00Z",
				StayThanks:     "2027-06-15T10:00 2027-06-15T19:00:00Z",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scheduledAt(Plan(nil, tt.b, tt.settings, mustLoad(t, tt.zone), tt.now))
			for k, w := range tt.want {
				if got[k] != w {
					t.Errorf("%s: %q, want %q", k, got[k], w)
				}
			}
			for k, g := range got {
				if _, ok := tt.want[k]; !ok {
					t.Errorf("%s planned (%s), want none", k, g)
				}
			}
		})
	}
}

// A local time the clocks skip or repeat still has one instant.
func TestLocalInstantAcrossDSTChanges(t *testing.T) {
	rome := mustLoad(t, "Europe/Rome")
	in := func(date, at string) string {
		b := booking(1, func(b *contract.Booking) { b.Checkin, b.Checkout = date, "2027-12-01" })
		s, _ := Settings{}.With(Change{Trigger: StayArrival, Days: ptr(0), At: ptr(at)})
		for _, m := range Schedule(b, s, rome) {
			if m.Trigger == StayArrival {
				return m.SendAt.Format(time.RFC3339)
			}
		}
		return ""
	}
	if got := in("2027-03-28", "02:30"); got != "2027-03-28T01:30:00Z" { // 03:30 CEST, after the jump
		t.Errorf("skipped 02:30 → %s", got)
	}
	if got := in("2027-10-31", "02:30"); got != "2027-10-31T01:30:00Z" { // the second 02:30, CET
		t.Errorf("repeated 02:30 → %s", got)
	}
}

func TestStayMovedCancelsTheOldAndCreatesTheNew(t *testing.T) {
	rome := mustLoad(t, "Europe/Rome")
	v1 := booking(1)
	moved := booking(2, func(b *contract.Booking) { b.Checkin, b.Checkout = "2027-04-20", "2027-04-24" })
	p := Plan(&v1, moved, Settings{}, rome, t0)
	old := ids(Schedule(v1, Settings{}, rome))
	if len(old) != 4 || !sameSet(p.Cancel, old) {
		t.Errorf("cancel %v, want the old stay's %v", p.Cancel, old)
	}
	if p.CancelScheduled {
		t.Error("a move cancels every scheduled message")
	}
	if got := scheduledAt(p)[StayArrival]; got != "2027-04-17T10:00 2027-04-17T08:00:00Z" {
		t.Errorf("new arrival %s", got)
	}
	if len(scheduledAt(p)) != 4 || !slices.Equal(events(p), []string{"booking.modified:2"}) {
		t.Errorf("created %v", ids(p.Create))
	}

	// Only the check-out moves: the arrival keeps its id and stays, the others go.
	longer := booking(2, func(b *contract.Booking) { b.Checkout = "2027-04-16" })
	p = Plan(&v1, longer, Settings{}, rome, t0)
	for _, id := range p.Cancel {
		if strings.Contains(id, StayArrival) || strings.Contains(id, PaymentDueSoon) {
			t.Errorf("cancelled %s, whose day did not move", id)
		}
	}
	if len(p.Cancel) != 2 {
		t.Errorf("cancel %v, want the check-out and thanks of 04-14", p.Cancel)
	}

	// A change that does not move the stay re-plans no scheduled message.
	p = Plan(&v1, booking(2, func(b *contract.Booking) { b.Adults = 3 }), Settings{}, rome, t0)
	if len(scheduledAt(p)) != 0 || len(p.Cancel) != 0 {
		t.Errorf("guests changed: created %v, cancel %v", ids(p.Create), p.Cancel)
	}
}

func TestCancelledCancelsEveryScheduledMessage(t *testing.T) {
	v1 := booking(1)
	p := Plan(&v1, booking(2, cancelled), Settings{}, time.UTC, t0)
	if !p.CancelScheduled || !sameSet(p.Cancel, ids(Schedule(v1, Settings{}, time.UTC))) {
		t.Errorf("cancel %v (all: %v)", p.Cancel, p.CancelScheduled)
	}
	if len(scheduledAt(p)) != 0 {
		t.Errorf("created scheduled %v", ids(p.Create))
	}
	// Cancelled with its stay moved in the same write: both stays' messages go.
	p = Plan(&v1, booking(2, cancelled, func(b *contract.Booking) { b.Checkin = "2027-04-11" }), Settings{}, time.UTC, t0)
	for _, id := range ids(Schedule(v1, Settings{}, time.UTC)) {
		if !slices.Contains(p.Cancel, id) {
			t.Errorf("%s not cancelled", id)
		}
	}
	// A trigger switched off since is cancelled too (it may have been planned when on).
	off, _ := Settings{}.With(Change{Trigger: StayArrival, Enabled: ptr(false)})
	p = Plan(&v1, booking(2, cancelled), off, time.UTC, t0)
	if !slices.Contains(p.Cancel, "acc:stay.arrival:42:2027-04-07T10:00") {
		t.Errorf("cancel %v", p.Cancel)
	}
}

func TestBalancePaidCancelsTheDueReminder(t *testing.T) {
	v1 := booking(1, pay(1, "150.00", ""))
	p := Plan(&v1, booking(2, pay(1, "150.00", ""), pay(2, "300.00", "")), Settings{}, time.UTC, t0)
	if !slices.Equal(p.Cancel, []string{"acc:payment.due_soon:42:2027-04-07T10:00"}) {
		t.Errorf("cancel %v", p.Cancel)
	}
	// Partly paid: still due.
	p = Plan(&v1, booking(2, pay(1, "150.00", ""), pay(2, "299.99", "")), Settings{}, time.UTC, t0)
	if len(p.Cancel) != 0 {
		t.Errorf("cancel %v", p.Cancel)
	}
}

// Planning the latest snapshot alone (a replay, a consumer starting over) answers no id that
// planning each event in turn did not: the outbox's insert-once makes it a no-op.
func TestReplayPlansTheSameIDs(t *testing.T) {
	loc := mustLoad(t, "Pacific/Kiritimati")
	steps := []contract.Booking{
		booking(1, deposit(contract.DepositScheduled, false)),
		booking(2, deposit(contract.DepositScheduled, false), pay(901, "150.00", "")),
		booking(3, deposit(contract.DepositHeld, true), pay(901, "150.00", "")),
		booking(4, deposit(contract.DepositHeld, true), pay(901, "150.00", ""), pay(902, "300.00", "")),
		booking(5, deposit(contract.DepositReleased, true), pay(901, "150.00", ""), pay(902, "300.00", "")),
	}
	var prev *contract.Booking
	seen := map[string]bool{}
	now := t0
	for i := range steps {
		for _, id := range ids(Plan(prev, steps[i], Settings{}, loc, now).Create) {
			seen[id] = true
		}
		prev = &steps[i]
		now = now.Add(24 * time.Hour)
	}
	for i, b := range steps {
		replay := ids(Plan(nil, b, Settings{}, loc, now).Create)
		if len(replay) == 0 {
			t.Fatalf("step %d: replay planned nothing", i+1)
		}
		for _, id := range replay {
			if !seen[id] {
				t.Errorf("step %d: replay planned %s, never planned before", i+1, id)
			}
		}
	}
	first := ids(Plan(nil, steps[0], Settings{}, loc, t0).Create)
	if again := ids(Plan(nil, steps[0], Settings{}, loc, t0.Add(time.Hour)).Create); !slices.Equal(first, again) {
		t.Errorf("first reserved planned twice: %v then %v", first, again)
	}
	if p := Plan(&steps[4], steps[4], Settings{}, loc, now); len(p.Create)+len(p.Cancel) != 0 {
		t.Errorf("the same event again planned %+v", p)
	}
	if p := Plan(&steps[4], steps[2], Settings{}, loc, now); len(p.Create)+len(p.Cancel) != 0 {
		t.Errorf("an older event planned %+v", p)
	}
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// TestChargeFailureOf: a payment.failed message's occurrence names the failure its snapshot
// lists (what the sender shows of the attempt).
func TestChargeFailureOf(t *testing.T) {
	b := booking(2, fail("2027-03-01-450.00"))
	p := Plan(ptr(booking(1)), b, Settings{}, time.UTC, t0)
	var m Message
	for _, x := range p.Create {
		if x.Trigger == PaymentFailed {
			m = x
		}
	}
	if m.ID != "acc:payment.failed:42:2027-03-01-450.00" || m.To != Guest || m.Lang != LangBooking || m.PropertyID != 7 {
		t.Fatalf("payment.failed message %+v", m)
	}
	f, ok := ChargeFailure(b, m.Occurrence)
	if !ok || f.Amount != "450.00" || f.Reason != "card declined" || !f.At.Equal(t0) {
		t.Fatalf("ChargeFailure = %+v, %v", f, ok)
	}
	if _, ok := ChargeFailure(b, "2027-03-02-450.00"); ok {
		t.Fatal("found a failure the booking does not list")
	}
}
