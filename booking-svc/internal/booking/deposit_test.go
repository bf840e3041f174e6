package booking_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/booking-svc/internal/propertyview"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/libs/seal"
)

// depFixture is a booking service with the test gateway and a test clock, and what a
// second service on the same store (a restart) needs.
type depFixture struct {
	coFixture
	box     *seal.Box
	account string
	today   pricing.Date
}

var depositStart = time.Date(2027, 1, 10, 9, 0, 0, 0, time.UTC)

func newDepositFixture(t *testing.T, policy string) depFixture {
	t.Helper()
	ctx := context.Background()
	st, nights := openStores(t, db)
	c := &clock{now: depositStart}
	led := ledger.New(nights)
	led.Now = c.Now
	vw, err := propertyview.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	box, _ := seal.New(seal.NewKey())
	gw := cardpay.NewTest(c.Now)
	f := depFixture{coFixture: coFixture{fixture: fixture{st: st, led: led, vw: vw}, gw: gw, clock: c}, box: box,
		account: unique("dep-acct"), today: pricing.DateOf(depositStart)}
	f.svc = f.service()
	f.settings(t, contract.Settings{AccountID: f.account, Version: 1})
	f.property(t, f.account, 1, policy, "")
	return f
}

// service is a new booking service on the fixture's store, gateway and clock: a restart.
func (f depFixture) service() *booking.Service {
	svc := booking.New(booking.Deps{PropertyView: propertyview.NewReader(f.vw), Bookings: f.st, Blocks: f.st, Users: f.st, Ledger: f.led,
		Gateway: f.gw, Checkouts: f.st, Box: f.box})
	svc.SetClock(f.clock.Now)
	return svc
}

func depositPolicy(due string, xday int, amount string) string {
	x := ""
	if xday > 0 {
		x = fmt.Sprintf(`,"x_day":%d`, xday)
	}
	return fmt.Sprintf(`{"payment_type":"None","damage_deposit":{"is_due_at":%q%s,"amount_type":"Flat","amount":%q}}`, due, x, amount)
}

var visaCard = card.Card{Number: cardpay.CardVisa, NameOnCard: "ADA LOVELACE", ExpMonth: 12, ExpYear: 2031, CVC: "123"}

// book books nights from today+in to today+out, with c (nil: no card).
func (f depFixture) book(t *testing.T, svc *booking.Service, in, out int, c *card.Card) booking.Booking {
	t.Helper()
	b, err := svc.Create(context.Background(), f.account, booking.NewBooking{
		Stay:           booking.Stay{PropertyID: 1, Checkin: f.today.AddDays(in), Checkout: f.today.AddDays(out), Adults: 2},
		Party:          ada,
		PaymentRequest: booking.PaymentRequest{Card: c}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f depFixture) read(t *testing.T, id int64) booking.Booking {
	t.Helper()
	b, err := f.svc.BookingAnyStatus(context.Background(), f.account, id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pass runs the money worker's deposit pass once and answers the version of the
// fixture's bookings it then reads (the index is shared with other tests' accounts, so the
// pass's count is not this test's).
func (f depFixture) pass(t *testing.T, svc *booking.Service, id int64) int64 {
	t.Helper()
	if _, err := svc.DepositPass(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f.read(t, id).Version
}

// at sets the clock to day d (from the fixture's first day) at 09:00.
func (f depFixture) at(d int) {
	f.clock.mu.Lock()
	f.clock.now = depositStart.AddDate(0, 0, d)
	f.clock.mu.Unlock()
}

// holdsOf are the test gateway's holds of the fixture's booking id (by their keys).
func (f depFixture) holdsOf(id int64) []cardpay.TestHold {
	var out []cardpay.TestHold
	prefix := fmt.Sprintf("deposit-%s-%d-", f.account, id)
	for _, h := range f.gw.Holds() {
		if len(h.Keys) > 0 && len(h.Keys[0]) > len(prefix) && h.Keys[0][:len(prefix)] == prefix {
			out = append(out, h)
		}
	}
	return out
}

// TestDepositDueDates: the hold is scheduled on the deposit installment's date, for each
// way a policy dates it, and released the configured days after check-out; a booking
// without a card gets no_card.
func TestDepositDueDates(t *testing.T) {
	for _, c := range []struct {
		name string
		due  string
		xday int
		want int // days from today
	}{
		{"booking", pricing.DueBooking, 0, 0},
		{"arrival", pricing.DueArrival, 0, 20},
		{"check-out", pricing.DueCheckout, 0, 23},
		{"5 days before arrival", pricing.DueXDayPriorArrival, 5, 15},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newDepositFixture(t, depositPolicy(c.due, c.xday, "300"))
			b := f.book(t, f.svc, 20, 23, &visaCard)
			d := b.Deposit
			if d == nil || d.Status != booking.DepositScheduled || d.Amount != "300.00" || d.Currency != "USD" ||
				d.DueDate != f.today.AddDays(c.want).String() || d.ReleaseOn != f.today.AddDays(30).String() {
				t.Fatalf("deposit %+v, want scheduled 300.00 USD due %s, released %s", d, f.today.AddDays(c.want), f.today.AddDays(30))
			}
			if nc := f.book(t, f.svc, 40, 42, nil); nc.Deposit == nil || nc.Deposit.Status != booking.DepositNoCard {
				t.Fatalf("without a card: %+v", nc.Deposit)
			}
		})
	}
	f := newDepositFixture(t, `{"payment_type":"None"}`)
	if b := f.book(t, f.svc, 20, 23, &visaCard); b.Deposit != nil {
		t.Fatalf("no deposit in the policy: %+v", b.Deposit)
	}
}

// TestDepositHoldAndRelease: nothing before the due date, the hold on it, nothing more while
// it is young, the release seven days after check-out (a release due before the hold is
// six days old: no renewal); the card then goes (no paymentAuto).
func TestDepositHoldAndRelease(t *testing.T) {
	f := newDepositFixture(t, depositPolicy(pricing.DueArrival, 0, "300"))
	b := f.book(t, f.svc, 3, 5, &visaCard)
	f.at(2)
	if v := f.pass(t, f.svc, b.BookingID); v != b.Version || len(f.holdsOf(b.BookingID)) != 0 {
		t.Fatalf("before the due date: version %d, holds %+v", v, f.holdsOf(b.BookingID))
	}
	f.at(3)
	if v := f.pass(t, f.svc, b.BookingID); v != b.Version+2 {
		t.Fatalf("at the due date: version %d, want %d (begun, done)", v, b.Version+2)
	}
	got := f.read(t, b.BookingID)
	hs := f.holdsOf(b.BookingID)
	if d := got.Deposit; d.Status != booking.DepositHeld || d.Pending != "" || d.Step != 1 || len(hs) != 1 || d.AuthorizationID != hs[0].ID ||
		d.HeldAt == nil || !d.HeldAt.Equal(f.clock.Now()) || got.Card == nil {
		t.Fatalf("after the due date: %+v, holds %+v", d, hs)
	}
	if hs[0].Keys[0] != fmt.Sprintf("deposit-%s-%d-1-hold", f.account, b.BookingID) || !hs[0].Amount.Equal(decimal.RequireFromString("300")) {
		t.Fatalf("hold %+v", hs[0])
	}
	f.at(8) // the hold is five days old, the release four days away
	if v := f.pass(t, f.svc, b.BookingID); v != got.Version {
		t.Fatalf("three days after check-out: version %d, want %d", v, got.Version)
	}
	f.at(12)
	if v := f.pass(t, f.svc, b.BookingID); v != got.Version+2 {
		t.Fatalf("seven days after check-out: version %d, want %d", v, got.Version+2)
	}
	got = f.read(t, b.BookingID)
	if d := got.Deposit; d.Status != booking.DepositReleased || d.ReleasedAt == nil || got.Card != nil {
		t.Fatalf("released: %+v, card %+v", d, got.Card)
	}
	if hs := f.holdsOf(b.BookingID); hs[0].State != cardpay.HoldReleased {
		t.Fatalf("gateway: %+v", hs)
	}
	if v := f.pass(t, f.svc, b.BookingID); v != got.Version {
		t.Fatalf("a pass after the end: version %d, want %d", v, got.Version)
	}
}

// TestDepositCapture: the owner captures part of the hold with a reason; the rest is
// released, the capture recorded as a payment; refusals name the field.
func TestDepositCapture(t *testing.T) {
	f := newDepositFixture(t, depositPolicy(pricing.DueBooking, 0, "300"))
	b := f.book(t, f.svc, 3, 5, &visaCard)
	ctx := context.Background()
	if _, err := f.svc.CaptureDeposit(ctx, f.account, b.BookingID, booking.CaptureInput{Amount: decimal.RequireFromString("10"), Reason: "x"}); !isField(err, "bookingId") {
		t.Fatalf("capture before the hold: %v", err)
	}
	f.pass(t, f.svc, b.BookingID)
	for _, c := range []struct {
		in    booking.CaptureInput
		field string
	}{
		{booking.CaptureInput{Amount: decimal.RequireFromString("300.01"), Reason: "broken lamp"}, "amount"},
		{booking.CaptureInput{Amount: decimal.RequireFromString("0"), Reason: "broken lamp"}, "amount"},
		{booking.CaptureInput{Amount: decimal.RequireFromString("1.005"), Reason: "broken lamp"}, "amount"},
		{booking.CaptureInput{Amount: decimal.RequireFromString("10")}, "reason"},
	} {
		if _, err := f.svc.CaptureDeposit(ctx, f.account, b.BookingID, c.in); !isField(err, c.field) {
			t.Errorf("capture %+v: %v, want a refusal of %s", c.in, err, c.field)
		}
	}
	got, err := f.svc.CaptureDeposit(ctx, f.account, b.BookingID, booking.CaptureInput{Amount: decimal.RequireFromString("120.5"), Reason: "broken lamp"})
	if err != nil {
		t.Fatal(err)
	}
	d := got.Deposit
	if d.Status != booking.DepositCaptured || d.CapturedAmount != "120.50" || d.CaptureReason != "broken lamp" || d.CapturedAt == nil || got.Card != nil {
		t.Fatalf("captured: %+v", d)
	}
	var pays []booking.Payment
	for _, p := range got.Payments {
		pays = append(pays, p)
	}
	if len(pays) != 1 || pays[0].Kind != booking.KindDepositCapture || pays[0].Amount != "120.50" || pays[0].Method != booking.MethodCard ||
		pays[0].ChargeID != d.AuthorizationID {
		t.Fatalf("payments %+v", pays)
	}
	hs := f.holdsOf(b.BookingID)
	if len(hs) != 1 || hs[0].State != cardpay.HoldCaptured || !hs[0].Captured.Equal(decimal.RequireFromString("120.5")) {
		t.Fatalf("gateway %+v", hs)
	}
	if _, err := f.svc.ReleaseDeposit(ctx, f.account, b.BookingID); !isField(err, "bookingId") {
		t.Fatalf("release after the capture: %v", err)
	}
	f.at(30)
	if v := f.pass(t, f.svc, b.BookingID); v != got.Version {
		t.Fatalf("a pass after the capture: version %d, want %d", v, got.Version)
	}
}

func isField(err error, field string) bool {
	var fe *booking.FieldError
	return errors.As(err, &fe) && fe.Field == field
}

// TestDepositReauthorize: a long stay's hold is renewed when it is six days old (a new hold
// under the next step, then the old released), until the release after check-out.
func TestDepositReauthorize(t *testing.T) {
	f := newDepositFixture(t, depositPolicy(pricing.DueArrival, 0, "500"))
	b := f.book(t, f.svc, 1, 15, &visaCard)
	f.at(1)
	f.pass(t, f.svc, b.BookingID)
	f.at(7) // 6 days held
	f.pass(t, f.svc, b.BookingID)
	got := f.read(t, b.BookingID)
	hs := f.holdsOf(b.BookingID)
	d := got.Deposit
	if d.Status != booking.DepositHeld || d.Step != 2 || d.Reauthorizations != 1 || len(hs) != 2 || hs[0].State != cardpay.HoldReleased ||
		hs[1].State != cardpay.HoldHeld || d.AuthorizationID != hs[1].ID || !d.HeldAt.Equal(f.clock.Now()) {
		t.Fatalf("renewed: %+v, holds %+v", d, hs)
	}
	if want := fmt.Sprintf("deposit-%s-%d-2-hold", f.account, b.BookingID); hs[1].Keys[0] != want ||
		hs[0].Keys[1] != fmt.Sprintf("deposit-%s-%d-1-release", f.account, b.BookingID) {
		t.Fatalf("keys %v %v", hs[0].Keys, hs[1].Keys)
	}
	f.at(13)
	f.pass(t, f.svc, b.BookingID)
	f.at(22) // check-out 15 + 7
	f.pass(t, f.svc, b.BookingID)
	got = f.read(t, b.BookingID)
	hs = f.holdsOf(b.BookingID)
	if got.Deposit.Status != booking.DepositReleased || got.Deposit.Reauthorizations != 2 || len(hs) != 3 {
		t.Fatalf("at the end: %+v, holds %+v", got.Deposit, hs)
	}
	for _, h := range hs {
		if h.State != cardpay.HoldReleased {
			t.Fatalf("a hold left: %+v", hs)
		}
	}
}

// TestDepositCancelReleases: cancelling releases a held deposit at once; a scheduled one
// ends without reaching the gateway.
func TestDepositCancelReleases(t *testing.T) {
	f := newDepositFixture(t, depositPolicy(pricing.DueArrival, 0, "300"))
	ctx := context.Background()
	held := f.book(t, f.svc, 0, 2, &visaCard)
	later := f.book(t, f.svc, 10, 12, &visaCard)
	f.pass(t, f.svc, held.BookingID)
	for _, b := range []booking.Booking{held, later} {
		got, err := f.svc.Cancel(ctx, f.account, b.BookingID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Deposit.Status != booking.DepositReleased || got.Deposit.ReleasedAt == nil || got.Card != nil {
			t.Fatalf("cancelled: %+v", got.Deposit)
		}
	}
	if hs := f.holdsOf(held.BookingID); len(hs) != 1 || hs[0].State != cardpay.HoldReleased {
		t.Fatalf("gateway %+v", hs)
	}
	if hs := f.holdsOf(later.BookingID); len(hs) != 0 {
		t.Fatalf("gateway %+v", hs)
	}
}

// TestDepositStepsOnceAcrossRestarts: a service stopped between the gateway's answer and
// its record leaves the step begun; a new service on the same store repeats it under the
// same key, and the gateway holds, captures and releases once.
func TestDepositStepsOnceAcrossRestarts(t *testing.T) {
	for _, step := range []string{"deposit:begun", "deposit:answered"} {
		t.Run(step, func(t *testing.T) {
			f := newDepositFixture(t, depositPolicy(pricing.DueArrival, 0, "300"))
			b := f.book(t, f.svc, 1, 3, &visaCard)
			stop := func(svc *booking.Service) {
				reached := make(chan struct{})
				svc.Crash = func(s, account string) {
					if s == step && account == f.account {
						close(reached)
						select {} // the process died here
					}
				}
				go func() { _, _ = svc.DepositPass(context.Background()) }()
				<-reached
			}
			f.at(1)
			stop(f.svc)
			stopped := f.read(t, b.BookingID)
			if d := stopped.Deposit; d.Pending != "hold" || d.Step != 1 {
				t.Fatalf("stopped: %+v", d)
			}
			svc := f.service()
			// While the stopped step's deadline runs its beginner may still be at work: the
			// pass leaves it. Once it is past, the pass repeats it.
			if v := f.pass(t, svc, b.BookingID); v != stopped.Version {
				t.Fatalf("a pass within the stopped step's deadline: version %d, want %d (left to its beginner)", v, stopped.Version)
			}
			f.clock.Add(svc.Deadline)
			if v := f.pass(t, svc, b.BookingID); v != stopped.Version+1 {
				t.Fatalf("after the restart: version %d, want %d (one record of the step)", v, stopped.Version+1)
			}
			got := f.read(t, b.BookingID)
			hs := f.holdsOf(b.BookingID)
			if got.Deposit.Status != booking.DepositHeld || got.Deposit.Step != 1 || len(hs) != 1 || got.Deposit.AuthorizationID != hs[0].ID {
				t.Fatalf("after the restart: %+v, holds %+v", got.Deposit, hs)
			}
			// The release, stopped the same way, is done once too.
			f.at(10)
			stop(svc)
			svc = f.service()
			f.clock.Add(svc.Deadline)
			f.pass(t, svc, b.BookingID)
			got = f.read(t, b.BookingID)
			hs = f.holdsOf(b.BookingID)
			if got.Deposit.Status != booking.DepositReleased || len(hs) != 1 || hs[0].State != cardpay.HoldReleased || len(hs[0].Keys) != 2 {
				t.Fatalf("released after the restart: %+v, holds %+v", got.Deposit, hs)
			}
		})
	}
}

// TestDepositConcurrentPasses: passes at once (of one service and of another on the same
// store) place one authorization and record it once.
func TestDepositConcurrentPasses(t *testing.T) {
	f := newDepositFixture(t, depositPolicy(pricing.DueBooking, 0, "300"))
	var ids []int64
	for i := range 3 {
		ids = append(ids, f.book(t, f.svc, 2+3*i, 4+3*i, &visaCard).BookingID)
	}
	other := f.service()
	var wg sync.WaitGroup
	for _, svc := range []*booking.Service{f.svc, f.svc, other, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := svc.DepositPass(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		got := f.read(t, id)
		hs := f.holdsOf(id)
		if got.Deposit.Status != booking.DepositHeld || got.Deposit.Step != 1 || len(hs) != 1 || got.Deposit.AuthorizationID != hs[0].ID ||
			got.Version != 3 {
			t.Fatalf("booking %d (version %d): %+v, holds %+v", id, got.Version, got.Deposit, hs)
		}
	}
}

// countingGateway is the test gateway counting the capture requests it is asked.
type countingGateway struct {
	*cardpay.Test
	captures atomic.Int32
}

func (g *countingGateway) Capture(ctx context.Context, req cardpay.CaptureRequest) (cardpay.Captured, error) {
	g.captures.Add(1)
	return g.Test.Capture(ctx, req)
}

// TestDepositPassLeavesAStepInFlight: a pass that meets an owner's capture still under way
// (begun, the gateway not yet answered) leaves it to the owner's request: the gateway is
// asked once, not once by each.
func TestDepositPassLeavesAStepInFlight(t *testing.T) {
	f := newDepositFixture(t, depositPolicy(pricing.DueBooking, 0, "300"))
	b := f.book(t, f.svc, 3, 5, &visaCard)
	f.pass(t, f.svc, b.BookingID)
	gw := &countingGateway{Test: f.gw}
	svc := booking.New(booking.Deps{PropertyView: propertyview.NewReader(f.vw), Bookings: f.st, Blocks: f.st, Users: f.st, Ledger: f.led,
		Gateway: gw, Checkouts: f.st, Box: f.box})
	svc.SetClock(f.clock.Now)
	begun, goOn := make(chan struct{}), make(chan struct{})
	svc.Crash = func(step, account string) {
		if step == "deposit:begun" && account == f.account {
			close(begun)
			<-goOn // the owner's request is slow here
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := svc.CaptureDeposit(context.Background(), f.account, b.BookingID,
			booking.CaptureInput{Amount: decimal.RequireFromString("50"), Reason: "stained sofa"})
		done <- err
	}()
	<-begun
	// The worker's pass, of another replica, meets the capture begun.
	other := booking.New(booking.Deps{PropertyView: propertyview.NewReader(f.vw), Bookings: f.st, Blocks: f.st, Users: f.st, Ledger: f.led,
		Gateway: gw, Checkouts: f.st, Box: f.box})
	other.SetClock(f.clock.Now)
	f.pass(t, other, b.BookingID)
	close(goOn)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := gw.captures.Load(); n != 1 {
		t.Fatalf("the gateway was asked %d captures, want 1", n)
	}
	if d := f.read(t, b.BookingID).Deposit; d.Status != booking.DepositCaptured || d.CapturedAmount != "50.00" {
		t.Fatalf("deposit %+v", d)
	}
}
