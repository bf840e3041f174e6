package booking_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/propertyview"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/libs/seal"
)

// refundFixture is a checkout fixture (its test gateway and clock) with an account whose
// property 1 is paid in full at booking, 100 a night, flexible.
type refundFixture struct {
	coFixture
	account string
	booked  *int // bookings made: each books later nights
}

func newRefundFixture(t *testing.T, name string) refundFixture {
	f := refundFixture{coFixture: newCheckoutFixture(t), account: unique(name), booked: new(int)}
	f.clock.now = f.clock.now.Truncate(time.Millisecond) // as the store keeps times
	f.brands(t, f.account)
	f.property(t, f.account, 1, "null", "")
	return f
}

// book books 3 nights checking in 40 days from today (each booking 5 days after the one
// before), the grand total charged to the card.
func (f refundFixture) book(t *testing.T) booking.Booking {
	t.Helper()
	in := pricing.DateOf(f.clock.Now()).AddDays(40 + 5**f.booked)
	*f.booked++
	b, err := f.svc.Create(context.Background(), f.account, booking.NewBooking{Stay: booking.Stay{PropertyID: 1, Checkin: in, Checkout: in.AddDays(3),
		Adults: 2}, Party: booking.Party{Guest: guestAda}, PaymentRequest: booking.PaymentRequest{Charge: true, Card: &visa}, Sandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Payments) != 1 {
		t.Fatalf("payments %+v, want the charge at booking", b.Payments)
	}
	return b
}

// service is another Service on the same stores, gateway and clock: another replica, or
// booking-svc restarted.
func (f refundFixture) service(t *testing.T) *booking.Service {
	t.Helper()
	box, _ := seal.New(seal.NewKey())
	svc := booking.New(booking.Deps{PropertyView: propertyview.NewReader(f.vw), Bookings: f.st, Blocks: f.st, Users: f.st, Ledger: f.led,
		Gateway: f.gw, Checkouts: f.st, Box: box})
	svc.SetClock(f.clock.Now)
	svc.Lease, svc.CheckoutWindow = coLease, coWindow
	return svc
}

// refunds are the booking's refund entries.
func refunds(b booking.Booking) []booking.Payment {
	var out []booking.Payment
	for _, p := range b.Payments {
		if p.Kind == booking.KindRefund {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b booking.Payment) int { return int(a.PaymentID - b.PaymentID) })
	return out
}

func (f refundFixture) due(t *testing.T) []booking.DueRefund {
	t.Helper()
	all, err := f.st.RefundsDue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []booking.DueRefund
	for _, d := range all {
		if d.AccountID == f.account {
			out = append(out, d)
		}
	}
	return out
}

// TestCancelRefunds: a cancellation refunds by its policy, most recent payment first: the
// manual payment's part recorded at once, the card's through the gateway within the cancel,
// each as a negative payment linked to what it refunds; the mark is removed once nothing is
// pending.
func TestCancelRefunds(t *testing.T) {
	f := newRefundFixture(t, "refund-cancel")
	ctx := context.Background()
	b := f.book(t)
	var charge booking.Payment
	for _, p := range b.Payments {
		charge = p
	}
	f.clock.Add(time.Hour)
	cash, err := f.svc.AddPayment(ctx, f.account, b.BookingID, booking.PaymentInput{Amount: decimal.NewFromInt(50), Description: "deposit in cash"})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Hour)
	res, err := f.svc.Cancel(ctx, f.account, b.BookingID)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Refund
	// Flexible (no plan's policy recorded, or the standard plan's): 100 % of 300.00; 350.00 paid.
	if r == nil || r.Status != booking.RefundSucceeded || r.Percent != "100" || r.PolicyAmount != b.Quote.GrandTotal ||
		r.NetPaid != "350.00" || r.Amount != b.Quote.GrandTotal || r.Override || len(r.Parts) != 2 {
		t.Fatalf("refund %+v", r)
	}
	want := []struct {
		of             int64
		amount, method string
	}{{cash, "50.00", booking.MethodManual}, {charge.PaymentID, "250.00", booking.MethodCard}}
	for i, p := range r.Parts {
		if p.Of != want[i].of || p.Amount != want[i].amount || p.Method != want[i].method || p.Status != booking.RefundSucceeded {
			t.Fatalf("part %d: %+v, want %+v", i, p, want[i])
		}
	}
	entries := refunds(res)
	if len(entries) != 2 {
		t.Fatalf("refund entries %+v", entries)
	}
	for _, e := range entries {
		p := r.Parts[slices.IndexFunc(r.Parts, func(p booking.RefundPart) bool { return p.PaymentID == e.PaymentID })]
		if e.Amount != "-"+p.Amount || e.RefundOf != p.Of || e.Method != p.Method || (p.Method == booking.MethodCard) != (e.ChargeID == p.RefundID && e.ChargeID != "") {
			t.Fatalf("entry %+v of part %+v", e, p)
		}
	}
	rs := f.gw.Refunds()
	if len(rs) != 1 || !rs[0].Amount.Equal(decimal.NewFromInt(250)) {
		t.Fatalf("gateway refunds %+v", rs)
	}
	if keys := f.gw.RefundKeys(); len(keys) != 1 || keys[0] != fmt.Sprintf("refund-%s-%d-%d-1", f.account, b.BookingID, charge.PaymentID) {
		t.Fatalf("keys %v", keys)
	}
	// Read back from the store as answered.
	got, err := f.svc.Booking(ctx, f.account, b.BookingID)
	if err != nil || got.Refund == nil || got.Refund.Status != booking.RefundSucceeded || len(refunds(got)) != 2 {
		t.Fatalf("stored %+v, %v", got.Refund, err)
	}
	// The mark outlives the cancel's deadline, then the worker removes it.
	if n := len(f.due(t)); n != 1 {
		t.Fatalf("%d marks, want 1", n)
	}
	f.clock.Add(2*f.svc.Deadline + time.Second)
	if _, err := f.svc.RefundPass(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(f.due(t)); n != 0 {
		t.Fatalf("%d marks left", n)
	}
	if len(f.gw.Refunds()) != 1 {
		t.Fatal("refunded again")
	}
}

// TestCancelRefundOverride: the owner's amount replaces the policy's, up to what was paid;
// above it the cancel is refused and nothing changes.
func TestCancelRefundOverride(t *testing.T) {
	f := newRefundFixture(t, "refund-override")
	ctx := context.Background()
	b := f.book(t)
	over := decimal.RequireFromString("300.01")
	_, err := f.svc.CancelWith(ctx, f.account, b.BookingID, booking.CancelOptions{RefundAmount: &over, RefundReason: "x"})
	var fe *booking.FieldError
	if !errors.As(err, &fe) || fe.Field != "refundAmount" || fe.Message != "must be at most 300.00, what was paid" {
		t.Fatalf("err = %v", err)
	}
	if cur, _ := f.svc.Booking(ctx, f.account, b.BookingID); cur.Status != booking.StatusReserved || cur.Refund != nil {
		t.Fatalf("refused cancel changed the booking: %s %+v", cur.Status, cur.Refund)
	}
	amount := decimal.RequireFromString("120.5")
	res, err := f.svc.CancelWith(ctx, f.account, b.BookingID, booking.CancelOptions{RefundAmount: &amount, RefundReason: "goodwill"})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Refund; r.Amount != "120.50" || !r.Override || r.Reason != "goodwill" || r.Status != booking.RefundSucceeded || len(refunds(res)) != 1 {
		t.Fatalf("refund %+v", r)
	}
}

// TestRefundRetriedOnce: a gateway whose first refund attempt fails: the part waits for its
// first retry, which the worker makes when due, recording the refund once.
func TestRefundRetriedOnce(t *testing.T) {
	f := newRefundFixture(t, "refund-retry")
	ctx := context.Background()
	b := f.book(t)
	var calls atomic.Int32
	f.gw.FailRefunds(func(cardpay.RefundRequest) error {
		if calls.Add(1) == 1 {
			return errors.New("gateway unreachable")
		}
		return nil
	})
	res, err := f.svc.Cancel(ctx, f.account, b.BookingID)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Refund.Parts[0]
	if res.Refund.Status != booking.RefundPending || p.Attempts != 1 || p.LastError == "" || !p.NextAttemptAt.Equal(f.clock.Now().Add(time.Minute)) {
		t.Fatalf("after the first attempt: %+v", res.Refund)
	}
	if _, err := f.svc.RefundPass(ctx); err != nil { // not due yet
		t.Fatal(err)
	}
	if calls.Load() != 1 {
		t.Fatalf("%d attempts before the retry is due", calls.Load())
	}
	f.clock.Add(time.Minute)
	for range 2 {
		if _, err := f.svc.RefundPass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := f.svc.Booking(ctx, f.account, b.BookingID)
	if got.Refund.Status != booking.RefundSucceeded || got.Refund.Parts[0].Attempts != 2 || len(refunds(got)) != 1 || len(f.gw.Refunds()) != 1 {
		t.Fatalf("after the retry: %+v, entries %+v, gateway %+v", got.Refund, refunds(got), f.gw.Refunds())
	}
	if calls.Load() != 2 {
		t.Fatalf("%d attempts, want 2", calls.Load())
	}
}

// TestRefundFailures: a refusal fails the part at once; an error past the last retry fails it
// too; retryrefund starts it again (a refused part under a new key).
func TestRefundFailures(t *testing.T) {
	f := newRefundFixture(t, "refund-fail")
	ctx := context.Background()
	f.svc.RefundRetry = []time.Duration{time.Minute}
	refused := f.book(t)
	f.gw.FailRefunds(func(cardpay.RefundRequest) error { return &cardpay.RefusedError{Reason: "charge disputed"} })
	res, err := f.svc.Cancel(ctx, f.account, refused.BookingID)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Refund.Parts[0]
	if res.Refund.Status != booking.RefundFailed || p.Status != booking.RefundFailed || p.Attempts != 1 || p.LastError != "refused: charge disputed" {
		t.Fatalf("refused: %+v", res.Refund)
	}

	down := f.book(t)
	f.gw.FailRefunds(func(cardpay.RefundRequest) error { return errors.New("gateway down") })
	if _, err := f.svc.Cancel(ctx, f.account, down.BookingID); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Minute)
	if _, err := f.svc.RefundPass(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := f.svc.Booking(ctx, f.account, down.BookingID)
	if q := got.Refund.Parts[0]; got.Refund.Status != booking.RefundFailed || q.Attempts != 2 || q.LastError != "gateway down" {
		t.Fatalf("after the last retry: %+v", got.Refund)
	}

	if _, err := f.svc.RetryRefund(ctx, f.account, b0(f, t)); err == nil {
		t.Fatal("retryrefund of a booking without a failed refund")
	}
	f.gw.FailRefunds(nil)
	for _, b := range []booking.Booking{refused, down} {
		out, err := f.svc.RetryRefund(ctx, f.account, b.BookingID)
		if err != nil {
			t.Fatal(err)
		}
		q := out.Refund.Parts[0]
		if out.Refund.Status != booking.RefundSucceeded || q.Attempts != 1 || len(refunds(out)) != 1 {
			t.Fatalf("booking %d after retryrefund: %+v", b.BookingID, out.Refund)
		}
		if wantKey := fmt.Sprintf("refund-%s-%d-%d-1", f.account, b.BookingID, q.Of); (b.BookingID == refused.BookingID) != (q.Key == wantKey+"-retry1") {
			t.Fatalf("key %s", q.Key)
		}
	}
	if n := len(f.gw.Refunds()); n != 2 {
		t.Fatalf("%d refunds, want 2", n)
	}
}

// b0 is a reserved booking with nothing to retry.
func b0(f refundFixture, t *testing.T) int64 { return f.book(t).BookingID }

// TestRefundStoppedAfterTheGatewaysAnswer: a cancel stopped for good between the gateway's
// answer and the record (step refund:answered, as a kill -9 there); booking-svc restarted on
// the same stores: once the stopped attempt's lease is over, the worker repeats the refund
// under the same key, the gateway answers the refund it made, and one refund is recorded.
func TestRefundStoppedAfterTheGatewaysAnswer(t *testing.T) {
	f := newRefundFixture(t, "refund-crash")
	ctx := context.Background()
	b := f.book(t)
	steps := newStepper()
	f.svc.Crash = steps.hook
	st := steps.arm(f.account, "refund:answered", false) // never released: the process died there
	go func() { _, _ = f.svc.Cancel(ctx, f.account, b.BookingID) }()
	<-st.reached
	if n := len(f.gw.Refunds()); n != 1 {
		t.Fatalf("%d refunds at the stop, want 1", n)
	}

	restarted := f.service(t)
	if _, err := restarted.RefundPass(ctx); err != nil { // the lease of the stopped attempt holds
		t.Fatal(err)
	}
	if got, _ := restarted.Booking(ctx, f.account, b.BookingID); got.Refund.Status != booking.RefundPending || len(refunds(got)) != 0 {
		t.Fatalf("during the stopped attempt's lease: %+v", got.Refund)
	}
	f.clock.Add(2*restarted.Deadline + time.Second)
	if _, err := restarted.RefundPass(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := restarted.Booking(ctx, f.account, b.BookingID)
	if got.Status != booking.StatusCancelled || got.Refund.Status != booking.RefundSucceeded || len(refunds(got)) != 1 {
		t.Fatalf("after the restart: %s %+v %+v", got.Status, got.Refund, refunds(got))
	}
	rs := f.gw.Refunds()
	if len(rs) != 1 || refunds(got)[0].ChargeID != rs[0].ID || len(f.gw.RefundKeys()) != 1 || f.gw.RefundKeys()[0] != got.Refund.Parts[0].Key {
		t.Fatalf("gateway refunds %+v keys %v, recorded %+v", rs, f.gw.RefundKeys(), refunds(got))
	}
}

// TestConcurrentRefundPasses: 20 worker passes at once on two services (two replicas) attempt
// a due part once between them, and record it once.
func TestConcurrentRefundPasses(t *testing.T) {
	f := newRefundFixture(t, "refund-race")
	ctx := context.Background()
	var ids []int64
	for range 3 {
		ids = append(ids, f.book(t).BookingID)
	}
	f.gw.FailRefunds(func(cardpay.RefundRequest) error { return errors.New("gateway unreachable") })
	for _, id := range ids {
		if _, err := f.svc.Cancel(ctx, f.account, id); err != nil {
			t.Fatal(err)
		}
	}
	var attempts atomic.Int32
	f.gw.FailRefunds(func(cardpay.RefundRequest) error { attempts.Add(1); return nil })
	f.clock.Add(time.Minute)
	services := []*booking.Service{f.svc, f.service(t)}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := services[i%2].RefundPass(ctx); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, id := range ids {
		got, _ := f.svc.Booking(ctx, f.account, id)
		if got.Refund.Status != booking.RefundSucceeded || len(refunds(got)) != 1 || got.Refund.Parts[0].Attempts != 2 {
			t.Fatalf("booking %d: %+v, entries %+v", id, got.Refund, refunds(got))
		}
	}
	if n := len(f.gw.Refunds()); n != len(ids) || int(attempts.Load()) != len(ids) {
		t.Fatalf("%d refunds in %d attempts, want %d", n, attempts.Load(), len(ids))
	}
}

// TestChannelCancellationRefunds: a channel manager's cancellation decides the refund as a
// cancel does: a payment recorded on a channel booking is refunded by the policy (flexible:
// no plan recorded), its part recorded at once.
func TestChannelCancellationRefunds(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	account := unique("refund-channel")
	f.priceable(t, account, 1)
	svc := f.channelService(nil)
	in := pricing.DateOf(time.Now()).AddDays(60).String()
	res, err := svc.ApplyChannel(ctx, account, channelRev("new", "R", "r1", 1, in, 2))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := svc.AddPayment(ctx, account, res.Booking.BookingID, booking.PaymentInput{Amount: decimal.NewFromInt(80), Description: "paid at the desk"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := svc.ApplyChannel(ctx, account, channelRev("cancelled", "R", "r2", 2, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	r := out.Booking.Refund
	if out.Booking.Status != booking.StatusCancelled || r == nil || r.Status != booking.RefundSucceeded || r.Amount != "80.00" ||
		len(r.Parts) != 1 || r.Parts[0].Of != pid || r.Parts[0].Method != booking.MethodManual || len(refunds(out.Booking)) != 1 {
		t.Fatalf("channel cancellation: %s %+v", out.Booking.Status, r)
	}
}

// busyWatch is the refunds' index, telling when a lease was refused because another holds it.
type busyWatch struct {
	due
	busy chan struct{}
}

// due is the index busyWatch passes on to.
type due = booking.RefundsDue

func (w *busyWatch) TakeRefundLease(ctx context.Context, account string, id int64, holder string, now, until time.Time) error {
	err := w.due.TakeRefundLease(ctx, account, id, holder, now, until)
	if errors.Is(err, booking.ErrBusy) {
		select {
		case w.busy <- struct{}{}:
		default:
		}
	}
	return err
}

// TestCancelWaitsForTheWorker: a cancel whose refund lease the money worker holds (it was
// looking at the booking the moment the cancel wrote it) waits for the lease and attempts
// the refund itself, so that its answer shows the refund made, not a part pending because
// the worker happened to be looking.
func TestCancelWaitsForTheWorker(t *testing.T) {
	f := newRefundFixture(t, "refund-wait")
	ctx := context.Background()
	b := f.book(t)
	w := &busyWatch{due: f.st, busy: make(chan struct{}, 1)}
	box, _ := seal.New(seal.NewKey())
	svc := booking.New(booking.Deps{PropertyView: propertyview.NewReader(f.vw), Bookings: f.st, Blocks: f.st, Users: f.st, Ledger: f.led,
		Gateway: f.gw, Checkouts: f.st, Box: box, RefundsDue: w})
	svc.SetClock(f.clock.Now)
	svc.Lease, svc.CheckoutWindow = coLease, coWindow
	svc.Crash = func(step, account string) {
		if step != "cancel:cancelled" || account != f.account {
			return
		}
		// The worker takes the booking's lease between the cancel's write and its attempt.
		now := f.clock.Now()
		if err := f.st.TakeRefundLease(ctx, account, b.BookingID, "worker", now, now.Add(time.Hour)); err != nil {
			t.Errorf("the worker's lease: %v", err)
		}
	}
	done := make(chan error, 1)
	go func() {
		<-w.busy // the cancel found the lease taken
		done <- f.st.EndRefundLease(ctx, f.account, b.BookingID, "worker", time.Time{})
	}()
	res, err := svc.Cancel(ctx, f.account, b.BookingID)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r := res.Refund; r == nil || r.Status != booking.RefundSucceeded || len(refunds(res)) != 1 {
		t.Fatalf("the cancel answered the refund %+v, want it made by the cancel once the worker let go", r)
	}
	if n := len(f.gw.Refunds()); n != 1 {
		t.Fatalf("%d gateway refunds, want 1", n)
	}
}
