package booking

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/faults"
	"github.com/vros/vros/booking-svc/internal/ledger"
)

// NewBooking is a create request.
type NewBooking struct {
	Stay
	Party
	PaymentRequest
	// ID is the booking id to use, reserved beforehand (NewBookingID) so that a retry of
	// the request can find what this attempt did; 0 allocates one.
	ID int64
	// ChargeKey, when set, is the gateway's idempotency key of the charge at booking, so
	// that a retried request never charges the card twice.
	ChargeKey string
	// Sandbox is the account's mode: a sandbox account's charges reach only the test gateway.
	Sandbox bool
}

// NewBookingID allocates a booking id.
func (s *Service) NewBookingID(ctx context.Context) (int64, error) { return s.store.NextBookingID(ctx) }

// Create books a stay. The nights are held before anything is charged or published; a
// night already held answers UnavailableError and leaves nothing behind.
func (s *Service) Create(ctx context.Context, account string, nb NewBooking) (Booking, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	ctx = s.steps(ctx, "create", account)
	p, err := s.property(ctx, account, nb.PropertyID)
	if err != nil {
		return Booking{}, err
	}
	set, err := s.checkParty(ctx, account, nb.Party, nb.PaymentRequest)
	if err != nil {
		return Booking{}, err
	}
	if err := checkBrand(set, nb.BrandID, p.PropertyID); err != nil {
		return Booking{}, err
	}
	if nb.LeadSourceID == 0 {
		// The brand's lead source first, then the account's default (docs/brands.md).
		nb.LeadSourceID = int64(set.DefaultLeadSource)
		if b := set.Brands[int(nb.BrandID)]; nb.BrandID != 0 && b.LeadSource != 0 {
			nb.LeadSourceID = int64(b.LeadSource)
		}
	}
	q, err := s.price(set, p, nb.Stay, sale{code: nb.PromotionCode, brand: nb.BrandID})
	if err != nil {
		return Booking{}, err
	}
	id := nb.ID
	if id == 0 {
		if id, err = s.store.NextBookingID(ctx); err != nil {
			return Booking{}, err
		}
	}
	now := s.store.Now()
	b := Booking{AccountID: account, BookingID: id, CreatedAt: now, UpdatedAt: now}
	s.apply(&b, p, nb.Stay, nb.Party, q)
	b.PaymentAuto, b.Sandbox = nb.Auto, nb.Sandbox
	if nb.Card != nil {
		if b.Card, err = s.sealCard(account, id, *nb.Card); err != nil {
			return Booking{}, err
		}
	}

	owner := bookingOwner(id)
	stay := ledger.Stay{Account: account, PropertyID: p.PropertyID, Dates: b.Nights}
	// The op lists every use of a limited promotion code, so that the one this create takes
	// is given back if it stops before the booking is reserved.
	uses := candidateUses(account, b.Promotion)
	if len(uses.Dates) == 0 && !(nb.Charge && nb.Card != nil) {
		return s.createPlain(ctx, b, stay)
	}
	if err := s.ledger.Begin(ctx, ledger.Op{Owner: owner, Account: account, Claim: []ledger.Stay{stay, uses}}); err != nil {
		return Booking{}, err
	}
	faults.At(ctx, "op")
	// From here on the op is ended only on a clean outcome; otherwise the janitor finishes it.
	if err := s.store.InsertPending(ctx, b); err != nil {
		return Booking{}, err
	}
	faults.At(ctx, "pending")
	fail := func(cause error) (Booking, error) {
		if err := s.store.MarkFailed(context.WithoutCancel(ctx), account, id); err == nil {
			_ = s.ledger.End(context.WithoutCancel(ctx), account, owner)
		}
		return Booking{}, cause
	}
	// release gives back the nights and the use taken, before fail.
	release := func(cause error) (Booking, error) {
		for _, st := range []ledger.Stay{stay, useStay(account, b.Promotion)} {
			if rerr := s.ledger.Release(context.WithoutCancel(ctx), st, owner); rerr != nil {
				return Booking{}, errors.Join(cause, rerr) // the op stays: the janitor finishes
			}
		}
		return fail(cause)
	}
	if err := s.ledger.Claim(ctx, stay, owner); err != nil {
		var te *ledger.TakenError
		if errors.As(err, &te) {
			return fail(&UnavailableError{Date: te.Date})
		}
		return Booking{}, err
	}
	faults.At(ctx, "claimed")
	if err := s.takeUse(ctx, account, b.Promotion, owner); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return release(err)
		}
		return Booking{}, err
	}
	if b.Promotion != nil && b.Promotion.Slot > 0 {
		faults.At(ctx, "promotion")
	}
	var pay *Payment
	if nb.Charge && nb.Card != nil {
		pay, err = s.chargeDue(ctx, b, *nb.Card, now, nb.ChargeKey)
		if err != nil {
			return release(err)
		}
		faults.At(ctx, "charged")
	}
	if ctx.Err() != nil {
		return Booking{}, ctx.Err() // past the deadline: the janitor will undo it
	}
	promo := b.Promotion
	// The damage-deposit hold it schedules is noted in the index before the booking says so.
	deposit := b
	if err := s.planDeposit(ctx, &deposit); err != nil {
		return Booking{}, err
	}
	out, err := s.store.Update(ctx, account, id, Reserved, func(b *Booking) error {
		b.Status = StatusReserved
		b.Promotion = promo // with the use it holds
		b.Deposit = deposit.Deposit
		addPayment(b, pay)
		return nil
	})
	if err != nil {
		return out, err
	}
	faults.At(ctx, "reserved")
	_ = s.ledger.End(ctx, account, owner)
	return out, nil
}

// createPlain books a stay that charges nothing at booking and takes no use of a limited
// promotion code, in four store round trips (docs/booking.md, "What a booking costs the
// store"): the op, which is also the attempt's record and stands for the booking's event
// until the relay has published it (ledger.Op.Publish); the nights; the booking, written
// reserved at once; its list entry. Whatever step a stop interrupts, the op's repair (the
// janitor's, or a retried request's) releases the nights the booking does not hold and
// makes sure that a booking written is published.
func (s *Service) createPlain(ctx context.Context, b Booking, stay ledger.Stay) (Booking, error) {
	account, owner := b.AccountID, bookingOwner(b.BookingID)
	if err := s.ledger.Begin(ctx, ledger.Op{Owner: owner, Account: account, Claim: []ledger.Stay{stay}, Publish: true}); err != nil {
		return Booking{}, err
	}
	faults.At(ctx, "op")
	// The op is the pending attempt: there is no pending booking to write.
	faults.At(ctx, "pending")
	if err := s.ledger.Claim(ctx, stay, owner); err != nil {
		var te *ledger.TakenError
		if errors.As(err, &te) {
			// Nothing was written: the attempt ends with its op.
			_ = s.ledger.EndPublish(context.WithoutCancel(ctx), account, owner)
			return Booking{}, &UnavailableError{Date: te.Date}
		}
		return Booking{}, err
	}
	faults.At(ctx, "claimed")
	if err := s.planDeposit(ctx, &b); err != nil {
		return Booking{}, err
	}
	if ctx.Err() != nil {
		return Booking{}, ctx.Err() // past the deadline: the op's repair releases the nights
	}
	// The op stands for the event from here on, as an outbox intent would.
	faults.At(ctx, "intent")
	b.Status = StatusReserved
	rel, key := s.ledger.Handoff(account, owner)
	out, err := s.store.InsertReserved(ctx, b, rel, key)
	if err != nil {
		return out, err
	}
	faults.At(ctx, "reserved")
	return out, nil
}

// addPayment records p on b; nil records nothing.
func addPayment(b *Booking, p *Payment) {
	if p == nil {
		return
	}
	if b.Payments == nil {
		b.Payments = map[int64]Payment{}
	}
	b.Payments[p.PaymentID] = *p
}

// checkParty validates what depends on the account's settings, and returns them.
func (s *Service) checkParty(ctx context.Context, account string, p Party, pay PaymentRequest) (Settings, error) {
	st, err := s.propertyView.Settings(ctx, account)
	if err != nil {
		return st, err
	}
	if p.LeadSourceID != 0 {
		if _, ok := st.LeadSources[int(p.LeadSourceID)]; !ok {
			return st, &FieldError{Field: "leadsourceId", Message: "is not a lead source of this account (see default-config's lead_source_list)"}
		}
	}
	if p.BrandID != 0 {
		if _, ok := st.Brands[int(p.BrandID)]; !ok {
			return st, &FieldError{Field: "brandId", Message: "is not a brand of this account"}
		}
	}
	if p.UserID != 0 {
		if _, err := s.users.User(ctx, account, p.UserID); errors.Is(err, ErrNotFound) {
			return st, &FieldError{Field: "userId", Message: "is not a user of this account"}
		} else if err != nil {
			return st, err
		}
	}
	if (pay.Charge || pay.Auto) && pay.Card == nil {
		return st, &FieldError{Field: "creditCard", Message: "is required with paymentCharge or paymentAuto"}
	}
	return st, nil
}

// checkBrand refuses a booking through brand of a property the brand does not sell (when
// the brand lists its properties). The brand itself was checked by checkParty.
func checkBrand(st Settings, brand, pid int64) error {
	if brand == 0 {
		return nil
	}
	if b, ok := st.Brands[int(brand)]; ok && !b.Sells(pid) {
		return &FieldError{Field: "brandId", Message: fmt.Sprintf("brand %d does not sell property %d (it is not among the brand's properties)", brand, pid)}
	}
	return nil
}

// chargeDue charges what the booking's schedule makes due by today; nil when nothing is due
// yet. A property without a payment schedule is paid in full at booking.
func (s *Service) chargeDue(ctx context.Context, b Booking, c card.Card, now time.Time, key string) (*Payment, error) {
	due := outstanding(b, now.UTC().Format(time.DateOnly))
	if len(b.Quote.Schedule) == 0 {
		due, _ = decimal.NewFromString(b.Quote.GrandTotal)
	}
	if !due.IsPositive() {
		return nil, nil
	}
	return s.chargeAmount(ctx, b, c, due, "booking", key)
}

// chargeAmount charges amount on c for the booking and returns the payment to record. key
// is the gateway's idempotency key; "" derives one from the booking and its version.
func (s *Service) chargeAmount(ctx context.Context, b Booking, c card.Card, amount decimal.Decimal, when, key string) (*Payment, error) {
	if key == "" {
		key = "booking-" + strconv.FormatInt(b.BookingID, 10) + "-at-" + when + "-" + strconv.FormatInt(b.Version, 10)
	}
	ch, err := s.charge(ctx, b, amount.StringFixed(2), c, key)
	if err != nil {
		return nil, err
	}
	return s.cardPayment(ctx, b, amount, "card charge at "+when, ch.ID, ch.At)
}

// cardPayment is the payment that records a charge the gateway made (chargeID, at at) for
// the booking, indexed under a new payment id.
func (s *Service) cardPayment(ctx context.Context, b Booking, amount decimal.Decimal, description, chargeID string, at time.Time) (*Payment, error) {
	pid, err := s.store.NextPaymentID(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.store.IndexPayment(ctx, b.AccountID, pid, b.BookingID); err != nil {
		return nil, fmt.Errorf("index payment %d: %w", pid, err)
	}
	return &Payment{PaymentID: pid, Amount: amount.StringFixed(2), Currency: b.Quote.Currency, Description: description,
		Time: at, Method: MethodCard, ChargeID: chargeID, CreatedAt: s.store.Now()}, nil
}

// apply fills a booking from its stay, party and price, with the terms of the plan priced.
func (s *Service) apply(b *Booking, p Property, st Stay, party Party, q Priced) {
	b.PropertyID, b.PropertyName = p.PropertyID, p.Name
	b.UserID, b.BrandID, b.LeadSourceID = party.UserID, party.BrandID, party.LeadSourceID
	b.Guest = party.Guest
	b.Guest.PhoneCountryCode = phoneCode(b.Guest.Country)
	b.CSADamage, b.CSATravel = party.CSADamage, party.CSATravel
	b.PromotionCode, b.Promotion = "", q.Promotion
	if q.Promotion != nil {
		b.PromotionCode = q.Promotion.Code
	}
	b.Checkin, b.Checkout = st.Checkin.String(), st.Checkout.String()
	b.CheckinTime, b.CheckoutTime = CheckinTime, CheckoutTime
	b.Nights = nights(st.Checkin, st.Checkout)
	b.Adults, b.Children = st.Adults, st.Children
	b.Quote = q.Quote()
	b.ServiceLines = resolvedLines(p.Pricing, st.Services)
	// The plan's terms as they are now: the booking keeps them whatever the plan becomes.
	c := q.Terms.Cancellation
	b.RatePlanID, b.RatePlanName, b.Cancellation, b.Channel = q.Terms.ID, q.Terms.Name, &c, st.Channel
}
