package booking

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/faults"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/libs/pricing"
)

// The booking engine's checkouts (docs/booking.md, "Checkouts (the booking engine)";
// docs/booking-engine.md). A checkout is a booking in state held: create's op and claim
// hold its nights, so that nobody else can book or hold them, but it is never listed or
// published. Confirm pays what is due now and makes it reserved with one write through the
// outbox, as create does; cancel, or the janitor once its window has ended, makes it failed
// (with the checkout's outcome) and frees its nights. Every change of a held checkout holds
// the booking's ledger op, as interface B's changes of a booking do: one at a time across
// replicas, so two confirms book once and charge once, and a confirm and the expiry never
// both win. Each op lists the checkout's nights as released, so that the janitor frees them
// when a change stops after the checkout ended and keeps them (the booking's document lists
// them) otherwise.

// intentCanceled is the Status of a PaymentIntent that was cancelled (Stripe's word).
const intentCanceled = "canceled"

// DefaultCheckoutWindow is how long a checkout holds its nights unless configured.
const DefaultCheckoutWindow = 15 * time.Minute

// Gateways a checkout pays through.
const (
	GatewayTest   = "test"   // a sandbox account's test gateway: the card is sent with confirm
	GatewayStripe = "stripe" // a live property's Stripe: the browser confirms a PaymentIntent
	GatewayNone   = "none"   // nothing is due at booking
)

// Checkout statuses, as the engine shows them.
const (
	CheckoutHeld      = "held"
	CheckoutBooked    = "booked"
	CheckoutExpired   = "expired"
	CheckoutCancelled = "cancelled"
)

// Errors of checkouts.
var (
	// ErrNoCheckout: no checkout of this account and brand has the id.
	ErrNoCheckout = errors.New("checkout does not exist")
	// ErrPaymentIncomplete: the gateway has not confirmed the checkout's PaymentIntent.
	ErrPaymentIncomplete = errors.New("the payment has not been completed: confirm it with the card form, then confirm the checkout again")
	// ErrGateway: the card gateway could not be asked (a network failure, a refused key);
	// nothing changed, and the same request may be sent again.
	ErrGateway = errors.New("the payment gateway could not be reached")
)

// CheckoutEndedError: the checkout ended without a booking (expired or cancelled), so it
// can no longer change or be confirmed.
type CheckoutEndedError struct{ ID, Outcome string }

func (e *CheckoutEndedError) Error() string {
	if e.Outcome == CheckoutCancelled {
		return "checkout " + e.ID + " was cancelled"
	}
	return "checkout " + e.ID + " has " + e.Outcome
}

// CheckoutBookedError: the checkout is booked already; only confirm answers it again.
type CheckoutBookedError struct {
	ID        string
	BookingID int64
}

func (e *CheckoutBookedError) Error() string {
	return fmt.Sprintf("checkout %s is booked (booking %d): it can no longer change here", e.ID, e.BookingID)
}

// NoIntentsError: a live property that has no card payment method the guest's browser can
// confirm (Stripe), or whose Stripe account refused the request (Reason), while the checkout
// has something to pay now.
type NoIntentsError struct {
	PropertyID int64
	Reason     string
}

func (e *NoIntentsError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("property %d cannot take payments on this website: %s", e.PropertyID, e.Reason)
	}
	return fmt.Sprintf("property %d cannot take payments on this website: no card payment method that confirms in the browser (Stripe) is set up for it", e.PropertyID)
}

// EngineStay is what a booking engine's quote or checkout asks for: a stay of a property the
// brand sells, in the language asked for (a BCP 47 tag, "" none).
type EngineStay struct {
	BrandID           int64
	PropertyID        int64
	Checkin, Checkout pricing.Date
	Adults, Children  int
	Lang              string
}

// Offer is a booking engine's quote: the stay priced as a booking would keep it, what a
// checkout would charge now and the installments due after that (Later: the schedule's
// rent installments due after the day of booking, the damage deposit apart), and the
// language its labels are in.
type Offer struct {
	PropertyID        int64
	Checkin, Checkout string
	Nights            int
	Adults, Children  int
	Quote             Quote
	DueNow            string
	Later             []Installment
	Lang              string
}

// OfferOf is the offer a checkout holds.
func OfferOf(b Booking) Offer {
	o := Offer{PropertyID: b.PropertyID, Checkin: b.Checkin, Checkout: b.Checkout, Nights: len(b.Nights), Adults: b.Adults,
		Children: b.Children, Quote: b.Quote, Later: later(b.Quote, b.CreatedAt.UTC().Format(time.DateOnly))}
	if b.Engine != nil {
		o.DueNow, o.Lang = b.Engine.DueNow, b.Engine.Lang
	}
	return o
}

// later are the rent installments of q due after today: what due_now does not pay.
func later(q Quote, today string) []Installment {
	out := []Installment{}
	for _, in := range q.Schedule {
		if in.Label != pricing.LabelDeposit && in.Due > today {
			out = append(out, in)
		}
	}
	return out
}

// CheckoutStatus is the status the engine shows for a checkout at now: held (until its
// window ends: expired, before the janitor has run), booked, expired or cancelled.
func CheckoutStatus(b Booking, now time.Time) string {
	switch b.Status {
	case StatusReserved, StatusCancelled:
		return CheckoutBooked
	case StatusFailed:
		if b.Engine != nil && b.Engine.Outcome == CheckoutCancelled {
			return CheckoutCancelled
		}
		return CheckoutExpired
	}
	if b.Engine != nil && !now.Before(b.Engine.ExpiresAt) {
		return CheckoutExpired
	}
	return CheckoutHeld
}

// Now is the service's clock (SetClock): what a checkout's window is measured by.
func (s *Service) Now() time.Time { return s.now() }

// engineProperty returns a property the brand sells, with the account's settings: a
// property the account does not have, or the brand does not sell, is ErrNoProperty.
func (s *Service) engineProperty(ctx context.Context, account string, brand, pid int64) (Property, Settings, error) {
	set, err := s.propertyView.Settings(ctx, account)
	if err != nil {
		return Property{}, set, err
	}
	br, ok := set.Brands[int(brand)]
	if !ok || !br.Sells(pid) {
		return Property{}, set, ErrNoProperty
	}
	p, err := s.property(ctx, account, pid)
	return p, set, err
}

// engineCurrency is the currency a brand's website quotes in: the brand's default when the
// account can convert into it, else the property's.
func engineCurrency(set Settings, brand int64, p Property) string {
	c := set.Brands[int(brand)].DefaultCurrency
	if _, ok := set.ExchangeRates[c]; ok && c != "" {
		return c
	}
	return p.Pricing.Currency
}

// engineLang is the language of an answer's labels: the one asked for when the account has
// it (its code, or the language of a regional tag such as it-IT), else the brand's default
// language, else the account's.
func engineLang(set Settings, brand int64, asked string) string {
	if asked != "" {
		base, _, _ := strings.Cut(strings.ReplaceAll(asked, "_", "-"), "-")
		for _, want := range []string{asked, base} {
			for _, l := range set.Languages {
				if strings.EqualFold(l, want) {
					return l
				}
			}
		}
	}
	if l := set.Brands[int(brand)].DefaultLanguage; l != "" {
		return l
	}
	if len(set.Languages) > 0 {
		return set.Languages[0]
	}
	return "en"
}

// dueNow is what a booking of quote q pays at booking on day today, as create's charge
// computes it: what the schedule makes due by then (the whole grand total when the
// property has no payment schedule), with the currency's minor digits.
func dueNow(q Quote, today string) string {
	due := outstanding(Booking{Quote: q}, today)
	if len(q.Schedule) == 0 {
		due, _ = decimal.NewFromString(q.GrandTotal)
	}
	if due.IsNegative() {
		due = decimal.Zero
	}
	return due.StringFixed(minorDigits(q.GrandTotal))
}

// minorDigits are the decimal places of an amount as a quote writes it: its currency's.
func minorDigits(amount string) int32 {
	if _, frac, ok := strings.Cut(amount, "."); ok {
		return int32(len(frac))
	}
	return 0
}

// offer prices an engine stay: the property's rules and rates exactly as getinfo applies
// them (Quote), in the brand's currency.
func (s *Service) offer(ctx context.Context, account string, es EngineStay) (Property, Settings, Stay, Priced, error) {
	p, set, err := s.engineProperty(ctx, account, es.BrandID, es.PropertyID)
	if err != nil {
		return p, set, Stay{}, Priced{}, err
	}
	st := Stay{PropertyID: p.PropertyID, Checkin: es.Checkin, Checkout: es.Checkout, Adults: es.Adults, Children: es.Children,
		Currency: engineCurrency(set, es.BrandID, p)}
	pr, err := s.price(set, p, st, sale{brand: es.BrandID})
	return p, set, st, pr, err
}

// EngineQuote prices a stay for a brand's website: what getinfo answers (the stay's rules,
// then a night already held is UnavailableError), and what a checkout would charge now.
func (s *Service) EngineQuote(ctx context.Context, account string, es EngineStay) (Offer, error) {
	p, set, st, pr, err := s.offer(ctx, account, es)
	if err != nil {
		return Offer{}, err
	}
	if err := s.available(ctx, account, st); err != nil {
		return Offer{}, err
	}
	q, today := pr.Quote(), s.now().UTC().Format(time.DateOnly)
	return Offer{PropertyID: p.PropertyID, Checkin: st.Checkin.String(), Checkout: st.Checkout.String(),
		Nights: pricing.DaysBetween(st.Checkin, st.Checkout), Adults: st.Adults, Children: st.Children, Quote: q,
		DueNow: dueNow(q, today), Later: later(q, today), Lang: engineLang(set, es.BrandID, es.Lang)}, nil
}

// NewCheckout is a checkout's create request.
type NewCheckout struct {
	EngineStay
	// ID is the booking id to use, reserved beforehand (NewBookingID) so that a retry of
	// the request can find what this attempt did; 0 allocates one.
	ID int64
	// Sandbox is the account's mode: its checkouts pay through the test gateway.
	Sandbox bool
}

// NewCheckoutID draws a checkout id: "co_" and 128 random bits.
func NewCheckoutID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails
	return "co_" + hex.EncodeToString(b[:])
}

// ValidCheckoutID reports whether id is shaped like a checkout id.
func ValidCheckoutID(id string) bool {
	h, ok := strings.CutPrefix(id, "co_")
	if !ok || len(h) != 32 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

// CreateCheckout holds a stay for the booking engine until the window ends: create's steps
// (op, pending booking, claim) with the checkout recorded before the claim, then, for a live
// account with something due now, a PaymentIntent, and the booking becomes held. A night
// already held answers UnavailableError and leaves nothing held.
func (s *Service) CreateCheckout(ctx context.Context, account string, nc NewCheckout) (Booking, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	ctx = s.steps(ctx, "checkout", account)
	if s.checkouts == nil {
		return Booking{}, errors.New("checkouts are not wired")
	}
	p, set, st, pr, err := s.offer(ctx, account, nc.EngineStay)
	if err != nil {
		return Booking{}, err
	}
	party := Party{BrandID: nc.BrandID, LeadSourceID: int64(set.DefaultLeadSource)}
	if b := set.Brands[int(nc.BrandID)]; b.LeadSource != 0 {
		party.LeadSourceID = int64(b.LeadSource) // the brand's lead source first (docs/brands.md)
	}
	id := nc.ID
	if id == 0 {
		if id, err = s.store.NextBookingID(ctx); err != nil {
			return Booking{}, err
		}
	}
	now := s.store.Now()
	b := Booking{AccountID: account, BookingID: id, CreatedAt: now, UpdatedAt: now, Sandbox: nc.Sandbox}
	s.apply(&b, p, st, party, pr)
	co := &Checkout{ID: NewCheckoutID(), ExpiresAt: s.now().Add(s.CheckoutWindow).UTC().Truncate(time.Millisecond),
		Lang: engineLang(set, nc.BrandID, nc.Lang), DueNow: dueNow(b.Quote, s.now().UTC().Format(time.DateOnly)), Gateway: GatewayNone}
	if due, _ := decimal.NewFromString(co.DueNow); due.IsPositive() {
		co.Gateway = GatewayStripe
		if nc.Sandbox {
			co.Gateway = GatewayTest
		}
	}
	b.Engine = co

	owner := bookingOwner(id)
	stay := ledger.Stay{Account: account, PropertyID: p.PropertyID, Dates: b.Nights}
	if err := s.ledger.Begin(ctx, ledger.Op{Owner: owner, Account: account, Claim: []ledger.Stay{stay}}); err != nil {
		return Booking{}, err
	}
	faults.At(ctx, "op")
	// From here on the op is ended only on a clean outcome; otherwise the janitor finishes it.
	if err := s.store.InsertPending(ctx, b); err != nil {
		return Booking{}, err
	}
	faults.At(ctx, "pending")
	if err := s.checkouts.PutCheckout(ctx, Hold{ID: co.ID, AccountID: account, BookingID: id, ExpiresAt: co.ExpiresAt}); err != nil {
		return Booking{}, err
	}
	faults.At(ctx, "recorded")
	fail := func(cause error) (Booking, error) {
		wctx := context.WithoutCancel(ctx)
		if err := s.store.MarkFailed(wctx, account, id); err == nil {
			_ = s.checkouts.DropHold(wctx, co.ID)
			_ = s.ledger.End(wctx, account, owner)
		}
		return Booking{}, cause
	}
	if err := s.ledger.Claim(ctx, stay, owner); err != nil {
		var te *ledger.TakenError
		if errors.As(err, &te) {
			return fail(&UnavailableError{Date: te.Date})
		}
		return Booking{}, err
	}
	faults.At(ctx, "claimed")
	if co.Gateway == GatewayStripe {
		in, err := s.createIntent(ctx, b)
		if err != nil {
			if rerr := s.ledger.Release(context.WithoutCancel(ctx), stay, owner); rerr != nil {
				return Booking{}, errors.Join(err, rerr) // the op stays: the janitor finishes
			}
			return fail(err)
		}
		co.IntentID, co.ClientSecret, co.PublishableKey = in.ID, in.ClientSecret, in.PublishableKey
		faults.At(ctx, "payment-intent")
	}
	if ctx.Err() != nil {
		return Booking{}, ctx.Err() // past the deadline: the janitor will undo it
	}
	out, err := s.checkouts.Unpublished(ctx, account, id, func(b *Booking) error {
		if b.Status != StatusPending {
			return fmt.Errorf("checkout %s is %s, not pending", co.ID, b.Status)
		}
		b.Status = StatusHeld
		b.Engine = co
		return nil
	})
	if err != nil {
		return out, err
	}
	faults.At(ctx, "held")
	_ = s.ledger.End(ctx, account, owner)
	return out, nil
}

// createIntent asks the property's gateway for the PaymentIntent of a checkout's due amount.
func (s *Service) createIntent(ctx context.Context, b Booking) (cardpay.Intent, error) {
	if s.intents == nil {
		return cardpay.Intent{}, &NoIntentsError{PropertyID: b.PropertyID}
	}
	amt, err := decimal.NewFromString(b.Engine.DueNow)
	if err != nil {
		return cardpay.Intent{}, fmt.Errorf("checkout %s due %q: %w", b.Engine.ID, b.Engine.DueNow, err)
	}
	in, err := s.intents.CreateIntent(ctx, cardpay.IntentRequest{AccountID: b.AccountID, Sandbox: b.Sandbox, PropertyID: b.PropertyID,
		Amount: amt, Currency: b.Quote.Currency, IdempotencyKey: "checkout-" + b.Engine.ID,
		Description: fmt.Sprintf("Booking %d: %s, %s to %s", b.BookingID, b.PropertyName, b.Checkin, b.Checkout),
		Metadata:    map[string]string{"checkout_id": b.Engine.ID, "booking_id": strconv.FormatInt(b.BookingID, 10)}})
	if errors.Is(err, cardpay.ErrNoIntents) {
		return in, &NoIntentsError{PropertyID: b.PropertyID}
	}
	if reason, ok := cardpay.Declined(err); ok {
		// The property's Stripe account refused the request (its key): the owner's to fix.
		return in, &NoIntentsError{PropertyID: b.PropertyID, Reason: reason}
	}
	if err != nil && !errors.Is(err, cardpay.ErrInvalidRequest) {
		return in, fmt.Errorf("%w: %w", ErrGateway, err)
	}
	return in, err
}

// FindCheckout returns the booking of checkout id, made through brand of account: any
// other account's or brand's, an unknown id, or an attempt that never held anything is
// ErrNoCheckout. A checkout still being created answers ErrBusy.
func (s *Service) FindCheckout(ctx context.Context, account string, brand int64, id string) (Booking, error) {
	if s.checkouts == nil || !ValidCheckoutID(id) {
		return Booking{}, ErrNoCheckout
	}
	h, err := s.checkouts.CheckoutHold(ctx, id)
	if errors.Is(err, ErrNotFound) || err == nil && h.AccountID != account {
		return Booking{}, ErrNoCheckout
	}
	if err != nil {
		return Booking{}, err
	}
	b, err := s.store.Booking(ctx, account, h.BookingID)
	if errors.Is(err, ErrNotFound) {
		return Booking{}, ErrNoCheckout
	}
	if err != nil {
		return Booking{}, err
	}
	switch {
	case b.Engine == nil || b.Engine.ID != id || b.BrandID != brand:
		return Booking{}, ErrNoCheckout
	case b.Status == StatusFailed && b.Engine.Outcome == "":
		return Booking{}, ErrNoCheckout // its nights were taken, or its creator stopped
	case b.Status == StatusPending:
		return b, ErrBusy
	}
	return b, nil
}

// ResumeCheckout returns the checkout booking id holds, for a retried create whose earlier
// attempt stopped (idempotency): once the attempt is settled, a checkout made (held, or
// booked or ended since) is answered, its record written again in case the attempt stopped
// before it; anything else is ErrNoCheckout (the request runs again).
func (s *Service) ResumeCheckout(ctx context.Context, account string, id int64) (Booking, error) {
	b, err := s.store.Booking(ctx, account, id)
	if errors.Is(err, ErrNotFound) {
		return b, ErrNoCheckout
	}
	if err != nil {
		return b, err
	}
	switch {
	case b.Engine == nil, b.Status == StatusPending, b.Status == StatusFailed && b.Engine.Outcome == "":
		return b, ErrNoCheckout
	}
	if err := s.checkouts.PutCheckout(ctx, Hold{ID: b.Engine.ID, AccountID: account, BookingID: id, ExpiresAt: b.Engine.ExpiresAt}); err != nil {
		return b, err
	}
	return b, nil
}

// holdOp is the ledger op of a change of held checkout b: it claims nothing and lists the
// checkout's nights as released, so that the janitor, repairing a change that stopped, frees
// them if the checkout ended and keeps them (its document lists them) otherwise.
func holdOp(b Booking) ledger.Op {
	return ledger.Op{Owner: bookingOwner(b.BookingID), Account: b.AccountID,
		Release: []ledger.Stay{{Account: b.AccountID, PropertyID: b.PropertyID, Dates: b.Nights}}}
}

// awaitStep is how often a change waits for another change of the same checkout to end.
const awaitStep = 20 * time.Millisecond

// await begins op, waiting while another change of the same owner holds one, up to the
// deadline of ctx (then ErrBusy).
func (s *Service) await(ctx context.Context, op ledger.Op) error {
	for {
		err := s.ledger.Begin(ctx, op)
		if !errors.Is(err, ledger.ErrBusy) {
			return err
		}
		t := time.NewTimer(awaitStep)
		select {
		case <-ctx.Done():
			t.Stop()
			return ErrBusy
		case <-t.C:
		}
	}
}

// underOp runs change on checkout id under its op: it waits for the op, reads the checkout
// again and passes it to change, which ends the op (endOp) on every path it returns by,
// unless a write it began may have left the checkout ended with its nights still held (the
// janitor then repairs the op).
func (s *Service) underOp(ctx context.Context, account string, brand int64, id string,
	change func(ctx context.Context, b Booking, endOp func()) (Booking, error)) (Booking, error) {
	b, err := s.FindCheckout(ctx, account, brand, id)
	if err != nil {
		return b, err
	}
	if b.Status != StatusHeld {
		return change(ctx, b, func() {})
	}
	op := holdOp(b)
	if err := s.await(ctx, op); err != nil {
		return b, err
	}
	faults.At(ctx, "op")
	endOp := func() { _ = s.ledger.End(context.WithoutCancel(ctx), account, op.Owner) }
	now, err := s.store.Booking(ctx, account, b.BookingID)
	if err != nil {
		endOp()
		return b, err
	}
	return change(ctx, now, endOp)
}

// CheckoutGuest sets the guest of a held checkout.
func (s *Service) CheckoutGuest(ctx context.Context, account string, brand int64, id string, g Guest) (Booking, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	ctx = s.steps(ctx, "guest", account)
	return s.underOp(ctx, account, brand, id, func(ctx context.Context, b Booking, endOp func()) (Booking, error) {
		if err := s.stillHeld(b); err != nil {
			endOp()
			return b, err
		}
		out, err := s.checkouts.Unpublished(ctx, account, b.BookingID, func(b *Booking) error {
			if b.Status != StatusHeld {
				return fmt.Errorf("checkout %s is %s, not held", id, b.Status)
			}
			b.Guest = g
			b.Guest.PhoneCountryCode = phoneCode(g.Country)
			return nil
		})
		endOp()
		return out, err
	})
}

// stillHeld refuses a change of a checkout that is not held, or whose window has ended.
func (s *Service) stillHeld(b Booking) error {
	switch st := CheckoutStatus(b, s.now()); st {
	case CheckoutHeld:
		return nil
	case CheckoutBooked:
		return &CheckoutBookedError{ID: b.Engine.ID, BookingID: b.BookingID}
	default:
		return &CheckoutEndedError{ID: b.Engine.ID, Outcome: st}
	}
}

// ConfirmCheckout books a held checkout: it pays what is due now (c, the card, through the
// test gateway of a sandbox account; the PaymentIntent the browser confirmed, through
// Stripe; nothing when nothing is due), then makes the booking reserved with one write
// through the outbox, as create does. A checkout booked already is answered as it is; one
// whose window has ended is expired first (a live one whose PaymentIntent succeeded is
// booked instead: the guest paid). The checkout needs its guest, and a card for the test
// gateway; the card is used for this charge and never kept.
func (s *Service) ConfirmCheckout(ctx context.Context, account string, brand int64, id string, c *card.Card) (Booking, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	ctx = s.steps(ctx, "confirm", account)
	b, err := s.FindCheckout(ctx, account, brand, id)
	if err != nil || b.Status != StatusHeld {
		return s.confirmed(b, err)
	}
	if err := checkConfirm(b, c); err != nil && s.now().Before(b.Engine.ExpiresAt) {
		return b, err // refused before waiting for the checkout; an expired one is ended below
	}
	return s.underOp(ctx, account, brand, id, func(ctx context.Context, b Booking, endOp func()) (Booking, error) {
		if b.Status != StatusHeld {
			endOp()
			return s.confirmed(b, nil)
		}
		if !s.now().Before(b.Engine.ExpiresAt) {
			out, err := s.endHeld(ctx, b, CheckoutExpired, endOp)
			if err == nil && out.Status == StatusReserved {
				return out, nil
			}
			if err == nil {
				err = &CheckoutEndedError{ID: id, Outcome: CheckoutExpired}
			}
			return out, err
		}
		if err := checkConfirm(b, c); err != nil {
			endOp()
			return b, err
		}
		pay, err := s.payCheckout(ctx, b, c)
		if err != nil {
			var pe *PaymentError
			if errors.As(err, &pe) {
				// Refused: no money was taken. The next try is a new charge, under a new key.
				_, uerr := s.checkouts.Unpublished(context.WithoutCancel(ctx), account, b.BookingID, func(b *Booking) error {
					b.Engine.Declined++
					return nil
				})
				err = errors.Join(err, uerr)
			}
			endOp()
			return b, err
		}
		if ctx.Err() != nil {
			return b, ctx.Err() // the janitor repairs the op; the charge's key books it on a retry
		}
		out, err := s.bookHeld(ctx, b, pay)
		if err != nil {
			return b, err // the op stays: the janitor settles it from the document
		}
		endOp()
		return out, nil
	})
}

// confirmed answers a confirm of a checkout that is no longer held.
func (s *Service) confirmed(b Booking, err error) (Booking, error) {
	switch {
	case err != nil:
		return b, err
	case b.Status == StatusReserved || b.Status == StatusCancelled:
		return b, nil
	}
	return b, &CheckoutEndedError{ID: b.Engine.ID, Outcome: CheckoutStatus(b, s.now())}
}

// checkConfirm checks what a confirm needs of the checkout and the request.
func checkConfirm(b Booking, c *card.Card) error {
	switch {
	case b.Guest.FirstName == "":
		return &FieldError{Field: "guest", Message: "must be given before the checkout is confirmed (POST /checkouts/" + b.Engine.ID + "/guest)"}
	case b.Engine.Gateway == GatewayTest && c == nil:
		return &FieldError{Field: "card", Message: "is required: " + b.Engine.DueNow + " " + b.Quote.Currency + " is due now"}
	}
	return nil
}

// payCheckout takes what checkout b owes now and returns the payment to record (nil when
// nothing is due).
func (s *Service) payCheckout(ctx context.Context, b Booking, c *card.Card) (*Payment, error) {
	due, err := decimal.NewFromString(b.Engine.DueNow)
	if err != nil {
		return nil, fmt.Errorf("checkout %s due %q: %w", b.Engine.ID, b.Engine.DueNow, err)
	}
	switch b.Engine.Gateway {
	case GatewayTest:
		pay, err := s.chargeAmount(ctx, b, *c, due, "checkout", chargeKey(b))
		if err == nil {
			faults.At(ctx, "charged")
		}
		return pay, err
	case GatewayStripe:
		in, err := s.succeededIntent(ctx, b)
		if err != nil {
			return nil, err
		}
		if in == nil {
			return nil, ErrPaymentIncomplete
		}
		return s.intentPayment(ctx, b, due, *in)
	}
	return nil, nil
}

// intentPayment is the payment of checkout b's succeeded PaymentIntent in: what Stripe says
// it took, to the cent, in the checkout's currency (the intent was made for due, and a
// browser cannot change its amount, but the record follows the money).
func (s *Service) intentPayment(ctx context.Context, b Booking, due decimal.Decimal, in cardpay.Intent) (*Payment, error) {
	if strings.EqualFold(in.Currency, b.Quote.Currency) && in.Amount.IsPositive() {
		due = in.Amount
	}
	return s.cardPayment(ctx, b, due, "card payment at checkout", in.ID, s.store.Now())
}

// chargeKey is the gateway's idempotency key of the next charge of checkout b: the same for
// every retry of one try (a confirm that stopped after the charge charges nothing twice),
// another after a refusal (the guest may then pay with another card).
func chargeKey(b Booking) string {
	return "checkout-" + b.Engine.ID + "-" + strconv.Itoa(b.Engine.Declined)
}

// succeededIntent reads checkout b's PaymentIntent: nil when it has not succeeded (or is not
// the one the checkout made).
func (s *Service) succeededIntent(ctx context.Context, b Booking) (*cardpay.Intent, error) {
	in, err := s.readIntent(ctx, b)
	if err != nil || in == nil || in.Status != cardpay.IntentSucceeded || in.ID != b.Engine.IntentID {
		return nil, err
	}
	return in, nil
}

// readIntent reads checkout b's PaymentIntent (nil: it has none, or no gateway is wired).
func (s *Service) readIntent(ctx context.Context, b Booking) (*cardpay.Intent, error) {
	if s.intents == nil || b.Engine.IntentID == "" {
		return nil, nil
	}
	in, err := s.intents.Intent(ctx, b.AccountID, b.PropertyID, b.Engine.IntentID)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGateway, err)
	}
	return &in, nil
}

// bookHeld makes held checkout b a reserved booking with its payment (nil: none): one
// write, on the condition that it is still held, through the outbox and the booking's list
// entry, as create's last write; then the checkout is no longer held.
func (s *Service) bookHeld(ctx context.Context, b Booking, pay *Payment) (Booking, error) {
	out, err := s.store.Update(ctx, b.AccountID, b.BookingID, Reserved, func(cur *Booking) error {
		if cur.Status != StatusHeld {
			return fmt.Errorf("checkout %s is %s, not held", b.Engine.ID, cur.Status)
		}
		cur.Status = StatusReserved
		addPayment(cur, pay)
		return nil
	})
	if err != nil {
		return out, err
	}
	faults.At(ctx, "reserved")
	_ = s.checkouts.DropHold(ctx, b.Engine.ID)
	return out, nil
}

// endHeld ends held checkout b, whose op the caller holds, with outcome (expired,
// cancelled), and frees its nights. A live checkout whose PaymentIntent succeeded is booked
// instead (the guest paid); another one's PaymentIntent is cancelled first. endOp is called
// on every clean outcome; a failure after the checkout ended leaves the op to the janitor,
// which frees the nights.
func (s *Service) endHeld(ctx context.Context, b Booking, outcome string, endOp func()) (Booking, error) {
	co := b.Engine
	if co.Gateway == GatewayStripe && co.IntentID != "" && s.intents != nil {
		in, err := s.readIntent(ctx, b)
		switch {
		case errors.Is(err, cardpay.ErrNoIntents):
			// The property has no Stripe method any more: nothing can be read, charged or
			// cancelled there; the checkout ends.
		case err != nil:
			endOp()
			return b, err // the next pass (or request) asks again
		case in.Status == cardpay.IntentSucceeded && in.ID == co.IntentID:
			due, _ := decimal.NewFromString(co.DueNow)
			pay, err := s.intentPayment(ctx, b, due, *in)
			if err != nil {
				endOp()
				return b, err
			}
			out, err := s.bookHeld(ctx, b, pay)
			if err != nil {
				return b, err
			}
			endOp()
			return out, nil
		case in.Status != intentCanceled:
			// Cancelled under one key, so that a cancel retried after a stop is answered again.
			if _, err := s.intents.CancelIntent(ctx, b.AccountID, b.PropertyID, co.IntentID, "checkout-"+co.ID+"-cancel"); err != nil {
				endOp()
				return b, fmt.Errorf("%w: %w", ErrGateway, err)
			}
			faults.At(ctx, "intent-cancelled")
		}
	}
	if err := s.checkouts.EndCheckout(ctx, b.AccountID, b.BookingID, outcome); err != nil {
		return b, err
	}
	faults.At(ctx, "ended")
	stay := ledger.Stay{Account: b.AccountID, PropertyID: b.PropertyID, Dates: b.Nights}
	if err := s.ledger.Release(ctx, stay, bookingOwner(b.BookingID)); err != nil {
		return b, err // the op stays: the janitor frees the nights
	}
	faults.At(ctx, "released")
	_ = s.checkouts.DropHold(ctx, co.ID)
	endOp()
	out, err := s.store.Booking(ctx, b.AccountID, b.BookingID)
	if err != nil {
		return b, err
	}
	return out, nil
}

// CancelCheckout ends a held checkout at once and frees its nights. A cancelled one is
// answered as it is; a booked one is CheckoutBookedError (a live checkout whose
// PaymentIntent succeeded is booked, not cancelled: the guest paid).
func (s *Service) CancelCheckout(ctx context.Context, account string, brand int64, id string) (Booking, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	ctx = s.steps(ctx, "cancel-checkout", account)
	return s.underOp(ctx, account, brand, id, func(ctx context.Context, b Booking, endOp func()) (Booking, error) {
		if b.Status == StatusHeld {
			out, err := s.endHeld(ctx, b, CheckoutCancelled, endOp)
			if err == nil && out.Status == StatusReserved {
				err = &CheckoutBookedError{ID: id, BookingID: out.BookingID}
			}
			return out, err
		}
		endOp()
		switch st := CheckoutStatus(b, s.now()); st {
		case CheckoutCancelled:
			return b, nil
		case CheckoutBooked:
			return b, &CheckoutBookedError{ID: id, BookingID: b.BookingID}
		default:
			return b, &CheckoutEndedError{ID: id, Outcome: st}
		}
	})
}

// ExpireCheckouts ends the checkouts whose window has ended (the janitor, at every pass):
// each, under its op, is expired and its nights freed, or booked if it is live and its
// PaymentIntent succeeded. A checkout another change holds, or whose gateway could not be
// asked, is left to the next pass. It returns how many it expired or booked.
func (s *Service) ExpireCheckouts(ctx context.Context) (int, error) {
	if s.checkouts == nil {
		return 0, nil
	}
	holds, err := s.checkouts.Holds(ctx, s.now())
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, h := range holds {
		done, err := s.expire(ctx, h)
		if err != nil {
			errs = append(errs, fmt.Errorf("checkout %s: %w", h.ID, err))
		}
		if done {
			n++
		}
	}
	return n, errors.Join(errs...)
}

func (s *Service) expire(ctx context.Context, h Hold) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	ctx = s.steps(ctx, "expire", h.AccountID)
	b, err := s.store.Booking(ctx, h.AccountID, h.BookingID)
	switch {
	case errors.Is(err, ErrNotFound):
		return false, s.checkouts.DropHold(ctx, h.ID)
	case err != nil:
		return false, err
	case b.Status == StatusPending:
		return false, nil // its creator, or the janitor's repair of it, decides it
	case b.Status != StatusHeld || b.Engine == nil:
		return false, s.checkouts.DropHold(ctx, h.ID)
	case s.now().Before(b.Engine.ExpiresAt):
		return false, nil
	}
	op := holdOp(b)
	if err := s.ledger.Begin(ctx, op); err != nil {
		if errors.Is(err, ledger.ErrBusy) {
			return false, nil // a confirm or a cancel is deciding it
		}
		return false, err
	}
	faults.At(ctx, "op")
	endOp := func() { _ = s.ledger.End(context.WithoutCancel(ctx), h.AccountID, op.Owner) }
	if b, err = s.store.Booking(ctx, h.AccountID, h.BookingID); err != nil || b.Status != StatusHeld {
		endOp()
		return false, err
	}
	if _, err := s.endHeld(ctx, b, CheckoutExpired, endOp); err != nil {
		return false, err
	}
	return true, nil
}
