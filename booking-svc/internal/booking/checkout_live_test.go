package booking_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/cardpay/route"
	"github.com/vros/vros/testkit/stripemock"
)

// stripeMethods are the properties' Stripe methods (route.Methods).
type stripeMethods map[int64]route.StripeMethod

func (m stripeMethods) Stripe(_ context.Context, _ string, pid int64) (route.StripeMethod, bool, error) {
	k, ok := m[pid]
	return k, ok, nil
}

// intents records what the domain asks of the PaymentIntents gateway and passes it on; the
// next failReads reads fail as an unreachable gateway would.
type intents struct {
	next      booking.Intents
	mu        sync.Mutex
	created   []cardpay.IntentRequest
	cancelled []string
	failReads int
}

func (r *intents) CreateIntent(ctx context.Context, req cardpay.IntentRequest) (cardpay.Intent, error) {
	r.mu.Lock()
	r.created = append(r.created, req)
	r.mu.Unlock()
	return r.next.CreateIntent(ctx, req)
}

func (r *intents) Intent(ctx context.Context, account string, pid int64, id string) (cardpay.Intent, error) {
	r.mu.Lock()
	fail := r.failReads > 0
	if fail {
		r.failReads--
	}
	r.mu.Unlock()
	if fail {
		return cardpay.Intent{}, errors.New("stripe: connection refused")
	}
	return r.next.Intent(ctx, account, pid, id)
}

func (r *intents) CancelIntent(ctx context.Context, account string, pid int64, id, key string) (cardpay.Intent, error) {
	r.mu.Lock()
	r.cancelled = append(r.cancelled, id+" "+key)
	r.mu.Unlock()
	return r.next.CancelIntent(ctx, account, pid, id, key)
}

// liveFixture is a checkout fixture whose property 1 has a Stripe method (property 2 none),
// its PaymentIntents answered by a stripe-mock with status, reading back as 300.00 USD.
func liveFixture(t *testing.T, status string) (coFixture, *intents, string) {
	t.Helper()
	return liveFixtureReading(t, status, 30000)
}

// liveFixtureReading is liveFixture with its intents reading back as minor cents of USD.
func liveFixtureReading(t *testing.T, status string, minor int64) (coFixture, *intents, string) {
	t.Helper()
	rec := &intents{next: &route.Router{Methods: stripeMethods{1: {SecretKey: "sk_test_villa1", PublishableKey: "pk_test_villa1"}},
		StripeURL: stripemock.Start(t, status, stripemock.IntentAmount(minor, "usd"))}}
	f := newCheckoutFixtureWith(t, rec)
	account := unique("co-live")
	f.brands(t, account)
	f.property(t, account, 1, "null", "")
	f.property(t, account, 2, "null", "")
	return f, rec, account
}

// TestLiveCheckouts: a live account's checkout pays through a PaymentIntent of the
// property's Stripe (stripe-mock), made for what is due now and confirmed by the browser:
// booked once it succeeded, refused while it has not, cancelled at Stripe and expired when
// its window ends unpaid, booked by the janitor or a cancel when it was paid; a property
// without Stripe holds nothing; a gateway that cannot be reached leaves the checkout to the
// next pass.
func TestLiveCheckouts(t *testing.T) {
	ctx := context.Background()
	create := func(t *testing.T, f coFixture, account string, pid int64) booking.Booking {
		t.Helper()
		b, err := f.svc.CreateCheckout(ctx, account, booking.NewCheckout{EngineStay: f.stay(pid, 30, 3)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.CheckoutGuest(ctx, account, 1, b.Engine.ID, guestAda); err != nil {
			t.Fatal(err)
		}
		return b
	}
	free := func(t *testing.T, f coFixture, account string) {
		t.Helper()
		for d, o := range f.nightsOf(t, account, 1, f.stay(1, 30, 3)) {
			if o != "" {
				t.Fatalf("night %s held by %q", d, o)
			}
		}
	}

	t.Run("paid: booked with the intent's payment", func(t *testing.T) {
		f, rec, account := liveFixture(t, "succeeded")
		b := create(t, f, account, 1)
		co := b.Engine
		if co.Gateway != booking.GatewayStripe || !strings.HasPrefix(co.IntentID, "pi_") || co.ClientSecret == "" ||
			co.PublishableKey != "pk_test_villa1" || co.DueNow != "300.00" {
			t.Fatalf("checkout %+v", co)
		}
		if len(rec.created) != 1 {
			t.Fatalf("%d intents created", len(rec.created))
		}
		req := rec.created[0]
		if req.Amount.StringFixed(2) != "300.00" || req.Currency != "USD" || req.IdempotencyKey != "checkout-"+co.ID || req.Sandbox ||
			req.PropertyID != 1 || req.AccountID != account || req.Metadata["checkout_id"] != co.ID {
			t.Fatalf("intent request %+v", req)
		}
		for range 2 {
			got, err := f.svc.ConfirmCheckout(ctx, account, 1, co.ID, nil)
			if err != nil || got.Status != booking.StatusReserved || len(got.Payments) != 1 {
				t.Fatalf("confirm: %v %+v", err, got)
			}
			for _, p := range got.Payments {
				if p.ChargeID != co.IntentID || p.Amount != "300.00" || p.Method != booking.MethodCard {
					t.Fatalf("payment %+v", p)
				}
			}
		}
		if len(f.gw.Charges()) != 0 || len(rec.created) != 1 {
			t.Fatal("a live checkout reached the test gateway, or made a second intent")
		}
	})

	// What is recorded is what Stripe says it took: an intent reading back as another amount
	// than the checkout asked for (which a browser cannot make Stripe do) is recorded as read.
	t.Run("paid another amount: the payment is Stripe's", func(t *testing.T) {
		f, _, account := liveFixtureReading(t, "succeeded", 29999)
		b := create(t, f, account, 1)
		got, err := f.svc.ConfirmCheckout(ctx, account, 1, b.Engine.ID, nil)
		if err != nil || got.Status != booking.StatusReserved || len(got.Payments) != 1 {
			t.Fatalf("confirm: %v %+v", err, got.Payments)
		}
		for _, p := range got.Payments {
			if p.Amount != "299.99" || p.Currency != "USD" {
				t.Fatalf("payment %+v", p)
			}
		}
	})

	t.Run("not paid: refused, then cancelled at Stripe and expired", func(t *testing.T) {
		f, rec, account := liveFixture(t, "requires_payment_method")
		b := create(t, f, account, 1)
		if _, err := f.svc.ConfirmCheckout(ctx, account, 1, b.Engine.ID, nil); !errors.Is(err, booking.ErrPaymentIncomplete) {
			t.Fatalf("confirm of an unpaid intent: %v", err)
		}
		if got, _ := f.svc.FindCheckout(ctx, account, 1, b.Engine.ID); got.Status != booking.StatusHeld {
			t.Fatalf("after an incomplete payment: %s", got.Status)
		}
		f.clock.Add(coWindow)
		f.janitor(t)
		got, err := f.svc.FindCheckout(ctx, account, 1, b.Engine.ID)
		if err != nil || got.Status != booking.StatusFailed || got.Engine.Outcome != booking.CheckoutExpired {
			t.Fatalf("after the window: %v %s", err, got.Status)
		}
		if len(rec.cancelled) != 1 || rec.cancelled[0] != b.Engine.IntentID+" checkout-"+b.Engine.ID+"-cancel" {
			t.Fatalf("cancelled at Stripe: %v", rec.cancelled)
		}
		free(t, f, account)
	})

	t.Run("paid, never confirmed: the janitor books it", func(t *testing.T) {
		f, rec, account := liveFixture(t, "succeeded")
		b := create(t, f, account, 1)
		f.clock.Add(coWindow)
		f.janitor(t)
		got, err := f.svc.FindCheckout(ctx, account, 1, b.Engine.ID)
		if err != nil || got.Status != booking.StatusReserved || len(got.Payments) != 1 || len(rec.cancelled) != 0 {
			t.Fatalf("after the window: %v %s, %d cancels", err, got.Status, len(rec.cancelled))
		}
		// A confirm then answers the booking.
		if c, err := f.svc.ConfirmCheckout(ctx, account, 1, b.Engine.ID, nil); err != nil || c.BookingID != got.BookingID {
			t.Fatalf("confirm: %v", err)
		}
	})

	t.Run("paid, then cancelled: booked", func(t *testing.T) {
		f, _, account := liveFixture(t, "succeeded")
		b := create(t, f, account, 1)
		var be *booking.CheckoutBookedError
		if _, err := f.svc.CancelCheckout(ctx, account, 1, b.Engine.ID); !errors.As(err, &be) {
			t.Fatalf("cancel of a paid checkout: %v", err)
		}
		if got, _ := f.svc.FindCheckout(ctx, account, 1, b.Engine.ID); got.Status != booking.StatusReserved {
			t.Fatalf("status %s", got.Status)
		}
	})

	t.Run("no Stripe: refused, nothing held", func(t *testing.T) {
		f, _, account := liveFixture(t, "succeeded")
		var ne *booking.NoIntentsError
		if _, err := f.svc.CreateCheckout(ctx, account, booking.NewCheckout{EngineStay: f.stay(2, 30, 3)}); !errors.As(err, &ne) || ne.PropertyID != 2 {
			t.Fatalf("checkout of a property without Stripe: %v", err)
		}
		for d, o := range f.nightsOf(t, account, 2, f.stay(2, 30, 3)) {
			if o != "" {
				t.Fatalf("night %s held by %q", d, o)
			}
		}
	})

	t.Run("the gateway unreachable at expiry: held until the next pass", func(t *testing.T) {
		f, rec, account := liveFixture(t, "requires_payment_method")
		b := create(t, f, account, 1)
		rec.failReads = 1
		f.clock.Add(coWindow)
		f.janitor(t)
		if got, _ := f.svc.FindCheckout(ctx, account, 1, b.Engine.ID); got.Status != booking.StatusHeld || len(rec.cancelled) != 0 {
			t.Fatalf("after a failed read: %s, %d cancels", got.Status, len(rec.cancelled))
		}
		f.janitor(t)
		if got, _ := f.svc.FindCheckout(ctx, account, 1, b.Engine.ID); got.Status != booking.StatusFailed || len(rec.cancelled) != 1 {
			t.Fatalf("after the next pass: %s, %d cancels", got.Status, len(rec.cancelled))
		}
		free(t, f, account)
	})
}
