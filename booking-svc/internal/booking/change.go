package booking

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vros/vros/booking-svc/internal/faults"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/libs/pricing"
)

// errChanged: the booking changed between the read a change was planned from and the claim
// of its op; the change is planned again.
var errChanged = errors.New("booking changed while its change began")

// replans is how many times a change is planned again before it answers ErrBusy.
const replans = 3

// plan turns the stored booking into the draft it should become.
type plan func(cur Booking) (Draft, error)

// Update changes booking id by patch: the fields it sent are laid over the stored booking
// and the result is checked and priced as a whole. New nights are held before the booking
// changes and old ones freed after, so the booking never holds fewer nights than its
// document says.
func (s *Service) Update(ctx context.Context, account string, id int64, patch Patch) (Booking, error) {
	return s.change(ctx, account, id, func(cur Booking) (Draft, error) {
		d := patch.Apply(cur.Draft())
		if err := d.Check(); err != nil {
			return d, err
		}
		// A derived plan's id names a plan of its property only: moving a booking on one to
		// another property names the plan it takes there.
		if d.PropertyID != cur.PropertyID && patch.RatePlanID == nil && cur.RatePlanID != 0 {
			return d, &FieldError{Field: "ratePlanId", Message: fmt.Sprintf(
				"is required to move a booking on rate plan %d to another property (rate plan ids are per property)", cur.RatePlanID)}
		}
		return d, nil
	})
}

// InsertServices adds service lines to a booking and prices it again.
func (s *Service) InsertServices(ctx context.Context, account string, id int64, lines []pricing.ServiceLine) (Booking, error) {
	return s.change(ctx, account, id, func(cur Booking) (Draft, error) {
		d := cur.Draft()
		all := append(append([]pricing.ServiceLine{}, cur.ServiceLines...), lines...)
		d.Services = &all // in the booking's currency, at the account's current rate
		return d, nil
	})
}

// change runs a change of booking id, planned again if the booking changed meanwhile.
func (s *Service) change(ctx context.Context, account string, id int64, p plan) (Booking, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	ctx = s.steps(ctx, "update", account)
	for try := 0; ; try++ {
		res, err := s.update(ctx, account, id, p)
		if !errors.Is(err, errChanged) {
			return res, err
		}
		if try == replans {
			return res, ErrBusy
		}
	}
}

// reserved returns a booking that can change: reserved, of this account.
func (s *Service) reserved(ctx context.Context, account string, id int64) (Booking, error) {
	b, err := s.booked(ctx, account, id)
	if err == nil && b.Status == StatusCancelled {
		return b, ErrCancelled
	}
	return b, err
}

// begin claims the op of a change planned from cur, then reads the booking again: a change
// that completed between the first read and the op would make the plan wrong (releasing
// nights the booking no longer holds). Then it ends the op and answers errChanged.
func (s *Service) begin(ctx context.Context, cur Booking, op ledger.Op) error {
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

func (s *Service) update(ctx context.Context, account string, id int64, plan plan) (Booking, error) {
	// A cancelled booking is refused after its draft is checked, as the request is judged
	// first.
	cur, err := s.booked(ctx, account, id)
	if err != nil {
		return cur, err
	}
	d, err := plan(cur)
	if err != nil {
		return cur, err
	}
	if cur.Status == StatusCancelled {
		return cur, ErrCancelled
	}
	moved := d.PropertyID != cur.PropertyID
	p, err := s.property(ctx, account, d.PropertyID)
	if err != nil {
		return cur, err
	}
	set, err := s.checkParty(ctx, account, d.Party, PaymentRequest{Charge: d.Charge, Card: d.Card})
	if err != nil {
		return cur, err
	}
	// A booking keeps its brand and property when the brand's properties change later:
	// only a change of either is checked.
	if moved || d.BrandID != cur.BrandID {
		if err := checkBrand(set, d.BrandID, d.PropertyID); err != nil {
			return cur, err
		}
	}
	// A booking keeps its plan, and the plan's terms as booked, unless the update names
	// another. Where the plan is sold is judged again only when the plan, the channel or the
	// brand changes (as the brand rule above), the stay rules only when the stay does — or
	// when a derived plan is sold anew (another channel or brand): the engine's IgnoreRules
	// skips both. The standard plan is sold everywhere, so a change of its channel or brand
	// alone is judged as before rate plans.
	samePlan := !moved && d.RatePlanID == cur.RatePlanID
	if samePlan && !hasPlan(p, d.RatePlanID) {
		return cur, &FieldError{Field: "ratePlanId", Message: fmt.Sprintf(
			"the booking's rate plan %d no longer exists: send ratePlanId to move the booking to another plan", d.RatePlanID)}
	}
	saleKept := samePlan && d.Channel == cur.Channel && d.BrandID == cur.BrandID
	same := samePlan && d.Checkin.String() == cur.Checkin && d.Checkout.String() == cur.Checkout &&
		d.Adults == cur.Adults && d.Children == cur.Children && (saleKept || d.RatePlanID == 0)
	// A code stored before promotions were applied (a booking with a code and no promotion)
	// was never a discount: a change that keeps it keeps it as text, unapplied.
	code, legacy := d.PromotionCode, cur.Promotion == nil && cur.PromotionCode != "" && strings.EqualFold(d.PromotionCode, cur.PromotionCode)
	if legacy {
		code = ""
	}
	q, err := s.price(set, p, d.Stay, sale{code: code, held: cur.Promotion, brand: d.BrandID, ignoreRules: same, skipSoldOn: saleKept})
	if err != nil {
		return cur, err
	}
	next := cur
	s.apply(&next, p, d.Stay, d.Party, q)
	if samePlan {
		next.RatePlanName, next.Cancellation = cur.RatePlanName, cur.Cancellation
	}
	if legacy {
		next.PromotionCode = cur.PromotionCode
	}

	add, drop := next.Nights, cur.Nights
	if !moved {
		add, drop = DatesNotIn(next.Nights, cur.Nights), DatesNotIn(cur.Nights, next.Nights)
	}
	claim := ledger.Stay{Account: account, PropertyID: next.PropertyID, Dates: add}
	release := ledger.Stay{Account: account, PropertyID: cur.PropertyID, Dates: drop}
	// A promotion code removed or changed moves the use: a new code's use is taken like a
	// night (the op lists every candidate), the old one given back once the booking says so.
	keepsUse := next.Promotion != nil && cur.Promotion != nil && next.Promotion.Slot > 0 && next.Promotion.Slot == cur.Promotion.Slot &&
		strings.EqualFold(next.Promotion.Code, cur.Promotion.Code)
	oldUse := useStay(account, cur.Promotion)
	if keepsUse {
		oldUse.Dates = nil
	}
	uses := candidateUses(account, next.Promotion)
	owner := bookingOwner(cur.BookingID)
	if err := s.begin(ctx, cur, ledger.Op{Owner: owner, Account: account, Claim: []ledger.Stay{claim, uses},
		Release: []ledger.Stay{release, oldUse}}); err != nil {
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
	undo := func(cause error) (Booking, error) {
		for _, st := range []ledger.Stay{claim, useStay(account, next.Promotion)} {
			if keepsUse && st.PropertyID == usePropertyID && len(st.Dates) > 0 {
				continue // the booking's own use: it keeps it
			}
			if rerr := s.ledger.Release(context.WithoutCancel(ctx), st, owner); rerr != nil {
				return cur, cause // the op stays: the janitor finishes
			}
		}
		_ = s.ledger.End(context.WithoutCancel(ctx), account, owner)
		return cur, cause
	}
	if err := s.takeUse(ctx, account, next.Promotion, owner); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return undo(err)
		}
		return cur, err
	}
	if d.Auto && d.Card == nil && cur.Card == nil {
		return undo(&FieldError{Field: "creditCard", Message: "is required with paymentAuto: the booking has no card"})
	}
	var sealed *SealedCard
	var pay *Payment
	if d.Card != nil {
		if sealed, err = s.sealCard(account, cur.BookingID, *d.Card); err != nil {
			return cur, err
		}
		if d.Charge {
			if due := outstanding(next, s.now().UTC().Format(time.DateOnly)); due.IsPositive() {
				if pay, err = s.chargeAmount(ctx, next, *d.Card, due, "update", ""); err != nil {
					return undo(err)
				}
				faults.At(ctx, "charged")
			}
		}
	}
	if ctx.Err() != nil {
		return cur, ctx.Err()
	}
	// The damage-deposit hold follows the new price and stay: noted in the index first.
	deposit := next
	if sealed != nil {
		deposit.Card = sealed
	}
	if err := s.planDeposit(ctx, &deposit); err != nil {
		return undo(err)
	}
	res, err := s.store.Update(ctx, account, cur.BookingID, Updated, func(b *Booking) error {
		setStay(b, next) // with the promotion's use taken above
		b.PaymentAuto, b.AutopayError = d.Auto, ""
		if sealed != nil {
			b.Card = sealed
		}
		s.scheduleDeposit(b)
		addPayment(b, pay)
		return nil
	})
	if err != nil {
		return cur, err
	}
	faults.At(ctx, "updated")
	for _, st := range []ledger.Stay{release, oldUse} {
		if err := s.ledger.Release(ctx, st, owner); err != nil {
			return res, nil // the booking changed; the janitor frees the rest
		}
	}
	faults.At(ctx, "released")
	_ = s.ledger.End(ctx, account, owner)
	return res, nil
}

// setStay copies what an update or a repricing changes: the stay, the party and the price.
func setStay(b *Booking, from Booking) {
	b.PropertyID, b.PropertyName = from.PropertyID, from.PropertyName
	b.UserID, b.BrandID, b.LeadSourceID = from.UserID, from.BrandID, from.LeadSourceID
	b.Guest, b.CSADamage, b.CSATravel, b.PromotionCode = from.Guest, from.CSADamage, from.CSATravel, from.PromotionCode
	b.Promotion = from.Promotion
	b.Checkin, b.Checkout, b.Nights = from.Checkin, from.Checkout, from.Nights
	b.Adults, b.Children = from.Adults, from.Children
	b.Quote, b.ServiceLines = from.Quote, from.ServiceLines
	b.RatePlanID, b.RatePlanName, b.Cancellation, b.Channel = from.RatePlanID, from.RatePlanName, from.Cancellation, from.Channel
}

// Cancel cancels a booking and frees its nights; its refund follows the policy.
func (s *Service) Cancel(ctx context.Context, account string, id int64) (Booking, error) {
	return s.CancelWith(ctx, account, id, CancelOptions{})
}

// CancelWith cancels a booking, frees its nights and decides its refund in the same write
// (refund.go): the policy's, or o's override.
func (s *Service) CancelWith(ctx context.Context, account string, id int64, o CancelOptions) (Booking, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	ctx = s.steps(ctx, "cancel", account)
	for try := 0; ; try++ {
		res, err := s.cancel(ctx, account, id, o)
		if !errors.Is(err, errChanged) {
			return res, err
		}
		if try == replans {
			return res, ErrBusy
		}
	}
}

func (s *Service) cancel(ctx context.Context, account string, id int64, o CancelOptions) (Booking, error) {
	cur, err := s.reserved(ctx, account, id)
	if err != nil {
		return cur, err
	}
	return s.cancelBooking(ctx, cur, o, nil)
}

// Current is the janitor's view of what an owner should hold: a reserved booking or a held
// checkout its nights, a live block its dates. The janitor only asks about ops older than the lease, whose
// writer is past its deadline, so a booking still pending then was abandoned.
func (s *Service) Current(ctx context.Context, account, owner string) ([]ledger.Stay, error) {
	kind, id, err := parseOwner(owner)
	if err != nil {
		return nil, nil // not ours to judge: release
	}
	switch kind {
	case "booking":
		b, err := s.store.Booking(ctx, account, id)
		if errors.Is(err, ErrNotFound) {
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
		case StatusReserved:
			return []ledger.Stay{{Account: account, PropertyID: b.PropertyID, Dates: b.Nights}, useStay(account, b.Promotion)}, nil
		case StatusHeld:
			// A booking engine's checkout holds its nights until it is confirmed or ended
			// (by a cancel, or by the janitor's expiry once its window is over).
			return []ledger.Stay{{Account: account, PropertyID: b.PropertyID, Dates: b.Nights}}, nil
		case StatusPending:
			// Its creator is past its deadline (the op is older than the lease): abandoned.
			return nil, s.store.MarkFailed(ctx, account, id)
		}
		return nil, nil
	case "block":
		b, err := s.blocks.Block(ctx, account, id)
		if errors.Is(err, ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []ledger.Stay{{Account: account, PropertyID: b.PropertyID, Dates: BlockNights(b.StartDate, b.EndDate)}}, nil
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
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if b.Status == StatusPending {
		if s.now().Before(b.CreatedAt.Add(2 * s.Deadline)) {
			return ErrBusy
		}
		return s.store.MarkFailed(ctx, account, id)
	}
	return nil
}

// BookingAnyStatus returns booking id of account whatever its status (pending, failed…).
func (s *Service) BookingAnyStatus(ctx context.Context, account string, id int64) (Booking, error) {
	b, err := s.store.Booking(ctx, account, id)
	if errors.Is(err, ErrNotFound) {
		return b, ErrNoBooking
	}
	return b, err
}

// PurgeFailed deletes the failed booking attempts older than retention.
func (s *Service) PurgeFailed(ctx context.Context, retention time.Duration) (int, error) {
	return s.store.PurgeFailed(ctx, s.now().UTC().Add(-retention))
}
