package booking

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/faults"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/booking-svc/internal/store"
	"github.com/vros/vros/booking-svc/internal/view"
	"github.com/vros/vros/libs/pricing"
)

// Party is the booking's contact data and bookkeeping fields.
type Party struct {
	Guest         store.GuestRec
	UserID        int64
	BrandID       int64
	LeadSourceID  int64
	CSADamage     int
	CSATravel     int
	PromotionCode string
}

// Payment asks for a card charge at booking time.
type Payment struct {
	Charge bool       // paymentCharge: charge what the schedule makes due at booking
	Auto   bool       // paymentAuto: keep the card for the later installments
	Card   *card.Card // required with Charge or Auto
}

// NewBooking is a create request.
type NewBooking struct {
	Stay
	Party
	Payment
	// ID is the booking id to use, reserved beforehand (NewBookingID) so that a retry of
	// the request can find what this attempt did; 0 allocates one.
	ID int64
	// ChargeKey, when set, is the gateway's idempotency key of the charge at booking, so
	// that a retried request never charges the card twice.
	ChargeKey string
}

// NewBookingID allocates a booking id.
func (s *Service) NewBookingID(ctx context.Context) (int64, error) { return s.store.NextBookingID(ctx) }

// Create books a stay. The nights are held before anything is charged or published; a
// night already held answers UnavailableError and leaves nothing behind.
func (s *Service) Create(ctx context.Context, account string, nb NewBooking) (store.BookingRec, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	ctx = s.steps(ctx, "create", account)
	p, err := s.property(ctx, account, nb.PropertyID)
	if err != nil {
		return store.BookingRec{}, err
	}
	if err := s.checkParty(ctx, account, nb.Party, nb.Payment); err != nil {
		return store.BookingRec{}, err
	}
	q, err := s.price(p, nb.Stay, false)
	if err != nil {
		return store.BookingRec{}, err
	}
	id := nb.ID
	if id == 0 {
		if id, err = s.store.NextBookingID(ctx); err != nil {
			return store.BookingRec{}, err
		}
	}
	now := s.store.Now()
	rec := store.BookingRec{AccountID: account, BookingID: id, CreatedAt: now, UpdatedAt: now}
	s.apply(&rec, p, nb.Stay, nb.Party, q)
	rec.PaymentAuto = nb.Auto
	if nb.Card != nil {
		if rec.Card, err = s.sealCard(account, id, *nb.Card); err != nil {
			return store.BookingRec{}, err
		}
	}

	owner := bookingOwner(id)
	stay := ledger.Stay{Account: account, PropertyID: p.PropertyID, Dates: rec.Nights}
	if err := s.ledger.Begin(ctx, ledger.Op{Owner: owner, Account: account, Claim: []ledger.Stay{stay}}); err != nil {
		return store.BookingRec{}, err
	}
	faults.At(ctx, "op")
	// From here on the op is ended only on a clean outcome; otherwise the janitor finishes it.
	if err := s.store.InsertPending(ctx, rec); err != nil {
		return store.BookingRec{}, err
	}
	faults.At(ctx, "pending")
	fail := func(cause error) (store.BookingRec, error) {
		if err := s.store.MarkFailed(context.WithoutCancel(ctx), account, id); err == nil {
			_ = s.ledger.End(context.WithoutCancel(ctx), account, owner)
		}
		return store.BookingRec{}, cause
	}
	if err := s.ledger.Claim(ctx, stay, owner); err != nil {
		var te *ledger.TakenError
		if errors.As(err, &te) {
			return fail(&UnavailableError{Date: te.Date})
		}
		return store.BookingRec{}, err
	}
	faults.At(ctx, "claimed")
	set := bson.D{{Key: "status", Value: store.StatusReserved}}
	if nb.Charge && nb.Card != nil {
		pay, err := s.chargeDue(ctx, rec, *nb.Card, now, nb.ChargeKey)
		if err != nil {
			if rerr := s.ledger.Release(context.WithoutCancel(ctx), stay, owner); rerr != nil {
				return store.BookingRec{}, errors.Join(err, rerr)
			}
			return fail(err)
		}
		if pay != nil {
			set = append(set, bson.E{Key: "payments." + strconv.FormatInt(pay.PaymentID, 10), Value: *pay})
		}
		faults.At(ctx, "charged")
	}
	if ctx.Err() != nil {
		return store.BookingRec{}, ctx.Err() // past the deadline: the janitor will undo it
	}
	out, err := s.store.UpdateBooking(ctx, account, id, store.BookingReserved, set)
	if err != nil {
		return out, err
	}
	faults.At(ctx, "reserved")
	_ = s.ledger.End(ctx, account, owner)
	return out, nil
}

// checkParty validates what depends on the account's settings.
func (s *Service) checkParty(ctx context.Context, account string, p Party, pay Payment) error {
	st, err := s.view.Settings(ctx, account)
	if err != nil {
		return err
	}
	if p.LeadSourceID != 0 {
		if _, ok := st.LeadSources[int(p.LeadSourceID)]; !ok {
			return &FieldError{Field: "leadsourceId", Message: "is not a lead source of this account (see default-config's lead_source_list)"}
		}
	}
	if p.BrandID != 0 {
		if _, ok := st.Brands[int(p.BrandID)]; !ok {
			return &FieldError{Field: "brandId", Message: "is not a brand of this account"}
		}
	}
	if p.UserID != 0 {
		if _, err := s.store.User(ctx, account, p.UserID); errors.Is(err, store.ErrNotFound) {
			return &FieldError{Field: "userId", Message: "is not a user of this account"}
		} else if err != nil {
			return err
		}
	}
	if (pay.Charge || pay.Auto) && pay.Card == nil {
		return &FieldError{Field: "creditCard", Message: "is required with paymentCharge or paymentAuto"}
	}
	return nil
}

// chargeDue charges what the booking's schedule makes due by today; nil when nothing is due
// yet. A property without a payment schedule is paid in full at booking.
func (s *Service) chargeDue(ctx context.Context, rec store.BookingRec, c card.Card, now time.Time, key string) (*store.PaymentRec, error) {
	due := outstanding(rec, now.UTC().Format(time.DateOnly))
	if len(rec.Quote.Schedule) == 0 {
		due, _ = decimal.NewFromString(rec.Quote.GrandTotal)
	}
	if !due.IsPositive() {
		return nil, nil
	}
	return s.chargeAmount(ctx, rec, c, due, "booking", key)
}

// chargeAmount charges amount on c for the booking and returns the payment to record. key
// is the gateway's idempotency key; "" derives one from the booking and its version.
func (s *Service) chargeAmount(ctx context.Context, rec store.BookingRec, c card.Card, amount decimal.Decimal, when, key string) (*store.PaymentRec, error) {
	if key == "" {
		key = "booking-" + strconv.FormatInt(rec.BookingID, 10) + "-at-" + when + "-" + strconv.FormatInt(rec.Version, 10)
	}
	ch, err := s.charge(ctx, amount.StringFixed(2), rec.Quote.Currency, c, key)
	if err != nil {
		return nil, err
	}
	pid, err := s.store.NextPaymentID(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.store.IndexPayment(ctx, rec.AccountID, pid, rec.BookingID); err != nil {
		return nil, err
	}
	return &store.PaymentRec{PaymentID: pid, Amount: amount.StringFixed(2), Currency: rec.Quote.Currency, Description: "card charge at " + when,
		Time: ch.At, Method: "card", ChargeID: ch.ID, CreatedAt: s.store.Now()}, nil
}

// apply fills a booking from its stay, party and price.
func (s *Service) apply(rec *store.BookingRec, p view.Property, st Stay, party Party, q pricing.Result) {
	rec.PropertyID, rec.PropertyName = p.PropertyID, p.Name
	rec.UserID, rec.BrandID, rec.LeadSourceID = party.UserID, party.BrandID, party.LeadSourceID
	rec.Guest = party.Guest
	rec.CSADamage, rec.CSATravel, rec.PromotionCode = party.CSADamage, party.CSATravel, party.PromotionCode
	rec.Checkin, rec.Checkout = st.Checkin.String(), st.Checkout.String()
	rec.CheckinTime, rec.CheckoutTime = CheckinTime, CheckoutTime
	rec.Nights = nights(st.Checkin, st.Checkout)
	rec.Adults, rec.Children = st.Adults, st.Children
	rec.Quote = QuoteRec(q)
	rec.ServiceLines = lineRecs(resolvedLines(p.Pricing, st.Services))
}
