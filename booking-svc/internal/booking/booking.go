// Package booking is booking-svc's domain: it prices stays with the shared engine, holds
// nights in the ledger so that no night is ever sold twice, takes payments through the
// gateway and keeps bookings, blocks, payments, arrival forms and guest users.
//
// Its types carry no storage or wire format, and it declares what it needs of the world
// (ports.go); MongoDB, Kafka and HTTP stay in the adapters that satisfy those interfaces.
package booking

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/faults"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/libs/seal"
)

// Errors of the domain; the API maps each to an interface B status.
var (
	ErrNoProperty = errors.New("property does not exist")
	ErrNoBooking  = errors.New("booking id does not exist")
	ErrCancelled  = errors.New("booking is cancelled")
	ErrBusy       = errors.New("another change of this booking is in progress; retry")
	// ErrNotFound is what repositories answer for a document that does not exist.
	ErrNotFound = errors.New("not found")
)

// UnavailableError: a night of the stay is held by another booking or a block.
type UnavailableError struct{ Date string }

func (e *UnavailableError) Error() string {
	return "requested dates are not available: the night of " + e.Date + " is taken"
}

// FieldError is a request that the domain refuses for one field (a rule of the stay, an
// unknown lead source, a currency the property does not use).
type FieldError struct{ Field, Message string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// PaymentError is a failed charge; Requires3DS marks a card the interface cannot complete.
type PaymentError struct {
	Reason      string
	Requires3DS bool
}

func (e *PaymentError) Error() string { return "payment did not succeed: " + e.Reason }

// Check-in and check-out times of every property (the spec takes them "from the property",
// whose fields do not include them; docs/booking.md).
const (
	CheckinTime  = "15:00:00"
	CheckoutTime = "11:00:00"
)

// Deps are what the domain service works with.
type Deps struct {
	PropertyView PropertyView
	Bookings     Repository
	Blocks       Blocks
	Users        UserRepository
	Accounts     AccountRecords
	Ledger       Ledger
	Gateway      Gateway
	// Checkouts finds the booking engine's checkouts; Intents takes their live payments
	// (nil: live accounts' checkouts that have something to pay are refused).
	Checkouts Checkouts
	Intents   Intents
	// Channel maps channel reservations to their bookings (nil: ApplyChannel refuses).
	Channel ChannelReservations
	// Box seals the cards kept for later charges.
	Box *seal.Box
	// Payments counts the payments recorded by the owner (addbookingpayment) as gateway
	// manual; card charges are counted by the Gateway (nil: none).
	Payments *cardpay.Payments
	// Refunder refunds card charges (nil: the Gateway, when it refunds); RefundsDue indexes
	// the refunds with parts to attempt (nil: Bookings, when it does). refund.go.
	Refunder   Refunder
	RefundsDue RefundsDue
}

// Service is the booking domain.
type Service struct {
	propertyView PropertyView
	store        Repository
	blocks       Blocks
	users        UserRepository
	records      AccountRecords
	ledger       Ledger
	gateway      Gateway
	checkouts    Checkouts
	intents      Intents
	channel      ChannelReservations
	box          *seal.Box
	// payments counts the recorded payments (nil: none).
	payments *cardpay.Payments
	refunder Refunder
	refunds  RefundsDue
	// RefundRetry is the wait before each retry of a refund part whose attempt failed
	// (nil: DefaultRefundRetry).
	RefundRetry []time.Duration
	// Deadline bounds every change, so that one can never outlive the janitor's lease.
	Deadline time.Duration
	// Lease is how old an unfinished change must be before the janitor repairs it.
	Lease time.Duration
	// CheckoutWindow is how long a booking engine's checkout holds its nights; at least
	// Lease, so that the janitor can repair a checkout whose creator stopped before it ends.
	CheckoutWindow time.Duration
	// Crash, in tests only, is called at each step of a change with the step's name
	// ("create:claimed", "cancel:intent"…) and the account; it may stop the change there
	// for good, as if the process died (systest/crash). Nil in production.
	Crash func(step, account string)
	now   func() time.Time
	// deposit is what damage-deposit holds work with (deposit.go).
	deposit depositDeps
}

// New returns the domain service.
func New(d Deps) *Service {
	s := &Service{propertyView: d.PropertyView, store: d.Bookings, blocks: d.Blocks, users: d.Users, records: d.Accounts, ledger: d.Ledger, gateway: d.Gateway,
		checkouts: d.Checkouts, intents: d.Intents, channel: d.Channel, box: d.Box, payments: d.Payments, refunder: d.Refunder, refunds: d.RefundsDue, Deadline: 25 * time.Second, Lease: 2 * time.Minute,
		CheckoutWindow: DefaultCheckoutWindow, now: time.Now, deposit: depositDepsOf(d)}
	if d.Ledger != nil {
		d.Ledger.OnPublish(s.published)
	}
	return s
}

// published makes sure the change of owner is published before a repair ends its publish op
// (createPlain): a booking written reserved gets an outbox intent, so that its event is
// published even though the op that stood for it is gone.
func (s *Service) published(ctx context.Context, account, owner string) error {
	kind, id, err := parseOwner(owner)
	if err != nil || kind != "booking" {
		return nil
	}
	b, err := s.store.Booking(ctx, account, id)
	if errors.Is(err, ErrNotFound) {
		return nil // never written: nothing to publish
	}
	if err != nil {
		return err
	}
	if b.Status == StatusPending || b.Status == StatusFailed {
		return nil
	}
	return s.store.Republish(ctx, account, id)
}

// SetClock makes now the service's clock (time.Now by default): today for its quotes and
// charges, and the time a feed sync measures its deadline on, so that a test decides when a
// sync runs out of time. Set it before the service is used.
func (s *Service) SetClock(now func() time.Time) { s.now = now }

// steps returns ctx carrying the Crash hook for a change named change of account.
func (s *Service) steps(ctx context.Context, change, account string) context.Context {
	if s.Crash == nil {
		return ctx
	}
	crash := s.Crash
	return faults.With(ctx, func(step string) { crash(change+":"+step, account) })
}

// Stay is what is priced: a property, dates, guests and service lines (nil: the property's
// default services; empty: none), the currency asked for, the rate plan (0: the standard
// plan) and the channel the price is quoted for ("": none).
type Stay struct {
	PropertyID        int64
	Checkin, Checkout pricing.Date
	Adults, Children  int
	Services          *[]pricing.ServiceLine
	Currency          string
	RatePlanID        int64
	Channel           string
}

// Quote prices a stay of account (getinfo) for brand (0: none; with no channel either, a
// direct sale), with the promotion code asked for ("" none), which must have uses left. It
// refuses what create would refuse, in create's order: the brand, the plan and where it is
// sold, the stay's rules, then a night already held (available), then a used-up code. When
// the property has derived plans, the answer lists every plan sold there that accepts the
// stay (Priced.Offers).
func (s *Service) Quote(ctx context.Context, account string, st Stay, promotionCode string, brand int64) (Property, Priced, error) {
	p, err := s.property(ctx, account, st.PropertyID)
	if err != nil {
		return p, Priced{}, err
	}
	set, err := s.propertyView.Settings(ctx, account)
	if err != nil {
		return p, Priced{}, err
	}
	if brand != 0 {
		if _, ok := set.Brands[int(brand)]; !ok {
			return p, Priced{}, &FieldError{Field: "brandId", Message: "is not a brand of this account"}
		}
		if err := checkBrand(set, brand, p.PropertyID); err != nil {
			return p, Priced{}, err
		}
	}
	o := sale{code: promotionCode, brand: brand, offers: true}
	pr, err := s.price(set, p, st, o)
	if err != nil {
		return p, pr, err
	}
	if err := s.available(ctx, account, st); err != nil {
		return p, Priced{}, err
	}
	return p, pr, s.checkUsesLeft(ctx, account, pr.Promotion)
}

func (s *Service) property(ctx context.Context, account string, pid int64) (Property, error) {
	return s.propertyView.Property(ctx, account, pid)
}

// Priced is a stay priced for a request: the engine's result in the currency asked for,
// converted at Rate from the account's currency, the promotion it applied and the terms of
// the plan priced; Offers are the bookable plans of a quote (nil: the property has no
// derived plans, or the caller did not ask).
type Priced struct {
	Result    pricing.Result
	Rate      decimal.Decimal
	Promotion *Promotion
	Terms     Terms
	Offers    []PlanOffer
}

// Quote is the price as a booking keeps it.
func (p Priced) Quote() Quote {
	q := QuoteOf(p.Result)
	q.ExchangeRate = p.Rate.String()
	return q
}

// sale is how a stay is sold: the promotion code asked for (held: the booking's own, kept
// with its booked terms when the code is unchanged), the brand selling it, and what the
// engine skips. ignoreRules skips the stay rules (an update whose stay does not change);
// skipSoldOn skips where the plan is sold (an update that keeps the plan, the channel and
// the brand it was booked with). offers asks for the bookable plans (getinfo).
type sale struct {
	code        string
	held        *Promotion
	brand       int64
	ignoreRules bool
	skipSoldOn  bool
	offers      bool
}

// price runs the engine with the account's settings set (read once by the caller): the
// promotion, the plan and the channel of the stay, then the conversion into the currency
// asked for. A rule the stay breaks (the engine's RuleError: a stay rule, a plan unknown or
// not sold where asked) is a FieldError naming its field.
func (s *Service) price(set Settings, p Property, st Stay, o sale) (Priced, error) {
	var err error
	out := Priced{Rate: decimal.NewFromInt(1)}
	if st.Currency != "" && st.Currency != p.Pricing.Currency {
		rate, ok := set.ExchangeRates[st.Currency]
		if !ok {
			return Priced{}, &FieldError{Field: "currency", Message: "no exchange rate is configured for " + st.Currency}
		}
		out.Rate = rate
	}
	if out.Promotion, err = promotionFor(set, o.code, o.held, p.PropertyID, st.Checkin, st.Checkout); err != nil {
		return Priced{}, err
	}
	req := pricing.Request{Checkin: st.Checkin, Checkout: st.Checkout, Adults: st.Adults, Children: st.Children,
		Services: st.Services, Now: s.now(), IgnoreRules: o.ignoreRules, Promotion: out.Promotion.engine(),
		Plan: st.RatePlanID, Channel: st.Channel, Brand: o.brand, SkipSoldOn: o.skipSoldOn}
	r, err := pricing.Quote(p.Pricing, req)
	var re *pricing.RuleError
	if errors.As(err, &re) {
		return Priced{}, &FieldError{Field: re.Field, Message: re.Message}
	}
	if err != nil {
		return Priced{}, err
	}
	out.Result, out.Terms = s.convert(st, out.Rate, r), termsOf(r)
	if o.offers && len(p.Pricing.Plans) > 0 {
		out.Offers = s.offers(p, st, out.Rate, req)
	}
	return out, nil
}

// convert is r in the currency the stay asks for, at rate.
func (s *Service) convert(st Stay, rate decimal.Decimal, r pricing.Result) pricing.Result {
	if st.Currency != "" && st.Currency != r.Currency {
		return pricing.Convert(r, st.Currency, rate)
	}
	return r
}

// Location is the time zone a booking of property pid shows its timestamps in: the
// property's own, else the account's (also for a property that no longer exists); UTC when
// neither is known.
func (s *Service) Location(ctx context.Context, account string, pid int64) *time.Location {
	if p, err := s.property(ctx, account, pid); err == nil && p.Pricing.Location != nil {
		return p.Pricing.Location
	}
	if st, err := s.propertyView.Settings(ctx, account); err == nil && st.Location != nil {
		return st.Location
	}
	return time.UTC
}

// nights lists the nights of a stay as the ledger stores them.
func nights(checkin, checkout pricing.Date) []string {
	n := pricing.DaysBetween(checkin, checkout)
	out := make([]string, 0, n)
	for d := checkin; d.Before(checkout); d = d.AddDays(1) {
		out = append(out, d.String())
	}
	return out
}

func bookingOwner(id int64) string { return "booking:" + strconv.FormatInt(id, 10) }

// BlockOwner is who holds the nights of block id in the ledger: every change of a block's
// nights (an owner's, or an iCal feed sync's, package feedsync) claims them under this name,
// and Current answers for it.
func BlockOwner(id int64) string { return "block:" + strconv.FormatInt(id, 10) }

// sealCard encrypts a card for storage (never the CVC) under the account and booking.
func (s *Service) sealCard(account string, bookingID int64, c card.Card) (*SealedCard, error) {
	b, err := json.Marshal(c.Storable())
	if err != nil {
		return nil, fmt.Errorf("seal card: %w", err)
	}
	return &SealedCard{Sealed: s.box.Seal(string(b), cardContext(account, bookingID)), Masked: c.Masked(), Brand: c.Brand(),
		Expiry: c.Expiry()}, nil
}

func cardContext(account string, bookingID int64) string {
	return account + ":booking:" + strconv.FormatInt(bookingID, 10) + ":card"
}

// charge takes amount (in the booking's currency) from c through the gateway of the
// booking's account and property.
func (s *Service) charge(ctx context.Context, b Booking, amount string, c card.Card, key string) (cardpay.Charge, error) {
	amt, err := decimal.NewFromString(amount)
	if err != nil {
		return cardpay.Charge{}, fmt.Errorf("charge amount %q: %w", amount, err)
	}
	ch, err := s.gateway.Charge(ctx, cardpay.ChargeRequest{Amount: amt, Currency: b.Quote.Currency, Card: c, Description: key,
		IdempotencyKey: key, AccountID: b.AccountID, Sandbox: b.Sandbox, PropertyID: b.PropertyID})
	if err == nil {
		return ch, nil
	}
	if errors.Is(err, cardpay.ErrRequires3DS) {
		return ch, &PaymentError{Reason: err.Error(), Requires3DS: true}
	}
	if reason, ok := cardpay.Declined(err); ok {
		return ch, &PaymentError{Reason: reason}
	}
	return ch, fmt.Errorf("card gateway: %w", err)
}
