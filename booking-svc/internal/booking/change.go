package booking

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/booking-svc/internal/faults"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/booking-svc/internal/store"
	"github.com/vros/vros/libs/pricing"
)

// StayOf is a booking's stored stay, with its service lines.
func StayOf(b store.BookingRec) Stay {
	in, _ := pricing.ParseDate(b.Checkin)
	out, _ := pricing.ParseDate(b.Checkout)
	lines := LinesOf(b.ServiceLines)
	return Stay{PropertyID: b.PropertyID, Checkin: in, Checkout: out, Adults: b.Adults, Children: b.Children, Services: &lines}
}

// reserved returns a booking that can change: reserved, of this account.
func (s *Service) reserved(ctx context.Context, account string, id int64) (store.BookingRec, error) {
	b, err := s.store.Booking(ctx, account, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return b, ErrNoBooking
	case err != nil:
		return b, err
	case b.Status == store.StatusCancelled:
		return b, ErrCancelled
	case b.Status != store.StatusReserved:
		return b, ErrNoBooking // a pending or failed attempt is not a booking
	}
	return b, nil
}

// PartyOf is a booking's stored party.
func PartyOf(b store.BookingRec) Party {
	return Party{Guest: b.Guest, UserID: b.UserID, BrandID: b.BrandID, LeadSourceID: b.LeadSourceID, CSADamage: b.CSADamage,
		CSATravel: b.CSATravel, PromotionCode: b.PromotionCode}
}

// errChanged: the booking changed between the read a change was planned from and the claim
// of its op; the change is planned again.
var errChanged = errors.New("booking changed while its change began")

// replans is how many times a change is planned again before it answers ErrBusy.
const replans = 3

// Update changes booking id to the stay and party given in full (the caller merged the
// request onto the stored booking). st.Services nil means the property's default services.
// New nights are held before the booking changes and old ones freed after, so the booking
// never holds fewer nights than its document says.
func (s *Service) Update(ctx context.Context, account string, id int64, st Stay, party Party, pay Payment) (store.BookingRec, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	ctx = s.steps(ctx, "update", account)
	for try := 0; ; try++ {
		res, err := s.update(ctx, account, id, st, party, pay)
		if !errors.Is(err, errChanged) {
			return res, err
		}
		if try == replans {
			return res, ErrBusy
		}
	}
}

// begin claims the op of a change planned from cur, then reads the booking again: a change
// that completed between the first read and the op would make the plan wrong (releasing
// nights the booking no longer holds). Then it ends the op and answers errChanged.
func (s *Service) begin(ctx context.Context, cur store.BookingRec, op ledger.Op) error {
	faults.At(ctx, "planned")
	if err := s.ledger.Begin(ctx, op); err != nil {
		if errors.Is(err, ledger.ErrBusy) {
			return ErrBusy
		}
		return err
	}
	faults.At(ctx, "op")
	now, err := s.store.Booking(ctx, cur.AccountID, cur.BookingID)
	if err == nil && now.Version == cur.Version {
		return nil
	}
	if eerr := s.ledger.End(context.WithoutCancel(ctx), op.Account, op.Owner); eerr != nil {
		return errors.Join(err, eerr) // the janitor ends it
	}
	if err != nil {
		return err
	}
	return errChanged
}

func (s *Service) update(ctx context.Context, account string, id int64, st Stay, party Party, pay Payment) (store.BookingRec, error) {
	cur, err := s.reserved(ctx, account, id)
	if err != nil {
		return cur, err
	}
	moved := st.PropertyID != cur.PropertyID
	p, err := s.property(ctx, account, st.PropertyID)
	if err != nil {
		return cur, err
	}
	if err := s.checkParty(ctx, account, party, Payment{Charge: pay.Charge, Card: pay.Card}); err != nil {
		return cur, err
	}
	same := !moved && st.Checkin.String() == cur.Checkin && st.Checkout.String() == cur.Checkout &&
		st.Adults == cur.Adults && st.Children == cur.Children
	q, err := s.price(p, st, same)
	if err != nil {
		return cur, err
	}
	next := cur
	s.apply(&next, p, st, party, q)

	add, drop := next.Nights, cur.Nights
	if !moved {
		add, drop = diff(next.Nights, cur.Nights), diff(cur.Nights, next.Nights)
	}
	claim := ledger.Stay{Account: account, PropertyID: next.PropertyID, Dates: add}
	release := ledger.Stay{Account: account, PropertyID: cur.PropertyID, Dates: drop}
	owner := bookingOwner(cur.BookingID)
	if err := s.begin(ctx, cur, ledger.Op{Owner: owner, Account: account, Claim: []ledger.Stay{claim}, Release: []ledger.Stay{release}}); err != nil {
		return cur, err
	}
	if err := s.ledger.Claim(ctx, claim, owner); err != nil {
		var te *ledger.TakenError
		if errors.As(err, &te) {
			_ = s.ledger.End(context.WithoutCancel(ctx), account, owner)
			return cur, &UnavailableError{Date: te.Date}
		}
		return cur, err
	}
	faults.At(ctx, "claimed")
	if pay.Auto && pay.Card == nil && cur.Card == nil {
		if rerr := s.ledger.Release(context.WithoutCancel(ctx), claim, owner); rerr == nil {
			_ = s.ledger.End(context.WithoutCancel(ctx), account, owner)
		}
		return cur, &FieldError{Field: "creditCard", Message: "is required with paymentAuto: the booking has no card"}
	}
	set := stayFields(next)
	set = append(set, bson.E{Key: "payment_auto", Value: pay.Auto}, bson.E{Key: "autopay_error", Value: ""})
	if pay.Card != nil {
		sealed, err := s.sealCard(account, cur.BookingID, *pay.Card)
		if err != nil {
			return cur, err
		}
		set = append(set, bson.E{Key: "card", Value: sealed})
		if pay.Charge {
			due := outstanding(next, s.now().UTC().Format(time.DateOnly))
			if due.IsPositive() {
				p, err := s.chargeAmount(ctx, next, *pay.Card, due, "update", "")
				if err != nil {
					if rerr := s.ledger.Release(context.WithoutCancel(ctx), claim, owner); rerr == nil {
						_ = s.ledger.End(context.WithoutCancel(ctx), account, owner)
					}
					return cur, err
				}
				set = append(set, bson.E{Key: "payments." + strconv.FormatInt(p.PaymentID, 10), Value: *p})
				faults.At(ctx, "charged")
			}
		}
	}
	if ctx.Err() != nil {
		return cur, ctx.Err()
	}
	res, err := s.store.UpdateBooking(ctx, account, cur.BookingID, store.BookingUpdated, set)
	if err != nil {
		return cur, err
	}
	faults.At(ctx, "updated")
	if err := s.ledger.Release(ctx, release, owner); err != nil {
		return res, nil // the booking changed; the janitor frees the rest
	}
	faults.At(ctx, "released")
	_ = s.ledger.End(ctx, account, owner)
	return res, nil
}

// stayFields are the fields an update or a repricing writes.
func stayFields(b store.BookingRec) bson.D {
	return bson.D{
		{Key: "property_id", Value: b.PropertyID}, {Key: "property_name", Value: b.PropertyName},
		{Key: "user_id", Value: b.UserID}, {Key: "brand_id", Value: b.BrandID}, {Key: "leadsource_id", Value: b.LeadSourceID},
		{Key: "guest", Value: b.Guest}, {Key: "csa_damage_protection", Value: b.CSADamage}, {Key: "csa_travel_insurance", Value: b.CSATravel},
		{Key: "promotion_code", Value: b.PromotionCode},
		{Key: "checkin", Value: b.Checkin}, {Key: "checkout", Value: b.Checkout}, {Key: "nights", Value: b.Nights},
		{Key: "adults", Value: b.Adults}, {Key: "children", Value: b.Children},
		{Key: "quote", Value: b.Quote}, {Key: "service_lines", Value: b.ServiceLines},
	}
}

// Cancel cancels a booking and frees its nights.
func (s *Service) Cancel(ctx context.Context, account string, id int64) (store.BookingRec, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	ctx = s.steps(ctx, "cancel", account)
	for try := 0; ; try++ {
		res, err := s.cancel(ctx, account, id)
		if !errors.Is(err, errChanged) {
			return res, err
		}
		if try == replans {
			return res, ErrBusy
		}
	}
}

func (s *Service) cancel(ctx context.Context, account string, id int64) (store.BookingRec, error) {
	cur, err := s.reserved(ctx, account, id)
	if err != nil {
		return cur, err
	}
	owner := bookingOwner(id)
	release := ledger.Stay{Account: account, PropertyID: cur.PropertyID, Dates: cur.Nights}
	if err := s.begin(ctx, cur, ledger.Op{Owner: owner, Account: account, Release: []ledger.Stay{release}}); err != nil {
		return cur, err
	}
	if ctx.Err() != nil {
		return cur, ctx.Err()
	}
	now := s.store.Now()
	res, err := s.store.UpdateBooking(ctx, account, id, store.BookingCancelled,
		bson.D{{Key: "status", Value: store.StatusCancelled}, {Key: "cancelled_at", Value: now}})
	if err != nil {
		return cur, err
	}
	faults.At(ctx, "cancelled")
	if err := s.ledger.Release(ctx, release, owner); err == nil {
		faults.At(ctx, "released")
		_ = s.ledger.End(ctx, account, owner)
	}
	return res, nil
}

// InsertServices adds service lines to a booking and prices it again.
func (s *Service) InsertServices(ctx context.Context, account string, id int64, lines []pricing.ServiceLine) (store.BookingRec, error) {
	cur, err := s.reserved(ctx, account, id)
	if err != nil {
		return cur, err
	}
	all := append(LinesOf(cur.ServiceLines), lines...)
	st := StayOf(cur)
	st.Services = &all
	return s.Update(ctx, account, id, st, PartyOf(cur), Payment{Auto: cur.PaymentAuto})
}

// Current is the janitor's view of what an owner should hold: a reserved booking its
// nights, a live block its dates. The janitor only asks about ops older than the lease, whose
// writer is past its deadline, so a booking still pending then was abandoned.
func (s *Service) Current(ctx context.Context, account, owner string) ([]ledger.Stay, error) {
	kind, id, err := parseOwner(owner)
	if err != nil {
		return nil, nil // not ours to judge: release
	}
	switch kind {
	case "booking":
		b, err := s.store.Booking(ctx, account, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		// Its list entry may be as stale as its nights (a writer stopped between the two).
		if err := s.store.Relist(ctx, b); err != nil {
			return nil, err
		}
		switch b.Status {
		case store.StatusReserved:
			return []ledger.Stay{{Account: account, PropertyID: b.PropertyID, Dates: b.Nights}}, nil
		case store.StatusPending:
			// Its creator is past its deadline (the op is older than the lease): abandoned.
			return nil, s.store.MarkFailed(ctx, account, id)
		}
		return nil, nil
	case "block":
		b, err := s.store.Block(ctx, account, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []ledger.Stay{{Account: account, PropertyID: b.PropertyID, Dates: blockNights(b.StartDate, b.EndDate)}}, nil
	}
	return nil, nil
}

// Settle finishes what a stopped change of booking id left (its op, once the change's
// deadline is past by a margin of one more deadline), as the janitor would later; a booking
// still pending with no op, created more than twice the deadline ago, is marked failed. It
// answers ErrBusy while a change may still be running. A retried request (idempotency)
// settles what its first attempt left before it runs again.
func (s *Service) Settle(ctx context.Context, account string, id int64) error {
	_, err := s.ledger.RepairOwner(ctx, account, bookingOwner(id), s.Deadline, s.Lease, s.Current)
	if errors.Is(err, ledger.ErrBusy) {
		return ErrBusy
	}
	if err != nil {
		return err
	}
	b, err := s.store.Booking(ctx, account, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if b.Status == store.StatusPending {
		if s.now().Before(b.CreatedAt.Add(2 * s.Deadline)) {
			return ErrBusy
		}
		return s.store.MarkFailed(ctx, account, id)
	}
	return nil
}

// BookingAnyStatus returns booking id of account whatever its status (pending, failed…).
func (s *Service) BookingAnyStatus(ctx context.Context, account string, id int64) (store.BookingRec, error) {
	b, err := s.store.Booking(ctx, account, id)
	if errors.Is(err, store.ErrNotFound) {
		return b, ErrNoBooking
	}
	return b, err
}

// PurgeFailed deletes the failed booking attempts older than retention.
func (s *Service) PurgeFailed(ctx context.Context, retention time.Duration) (int, error) {
	return s.store.PurgeFailed(ctx, s.now().UTC().Add(-retention))
}
