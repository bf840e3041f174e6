package booking

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/faults"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/libs/pricing"
)

// Channel reservations (docs/channels.md, "Reservations in"): integration-svc hands each
// revision of a reservation a channel manager sold to ApplyChannel, which makes it a booking
// through the ledger like any other — so a night can never be sold twice — once per
// (account, connection, reservation) and once per revision.

// Revision statuses.
const (
	ChannelNew       = "new"
	ChannelModified  = "modified"
	ChannelCancelled = "cancelled"
)

// ChannelRevision is one state of a channel reservation, whole.
type ChannelRevision struct {
	ConnectionID  int64
	Channel       string // the selling channel as the channel manager names it
	ReservationID string
	RevisionID    string
	// Order orders the revisions of one reservation (0: unknown); an older one than the last
	// applied is not applied.
	Order             int64
	Status            string
	PropertyID        int64
	RatePlanID        int64
	Checkin, Checkout pricing.Date
	Adults, Children  int
	Currency          string
	Total             decimal.Decimal
	// Commission is what the channel keeps of Total (zero: none reported); the booking
	// keeps it as ChannelCommission, which the ledger charges to the owner.
	Commission decimal.Decimal
	Guest      Guest
	Notes      string
}

// ChannelReservation is what a channel booking records of its reservation: the connection,
// the channel manager's reservation id, the revisions applied (the newest last, at most
// keptRevisions) and the order of the newest.
type ChannelReservation struct {
	ConnectionID  int64
	ReservationID string
	Revisions     []string
	Order         int64
}

// keptRevisions bounds the revision ids a booking keeps; older ones are also refused by
// their order.
const keptRevisions = 50

// applied tells whether r (or a newer revision) was applied to the booking.
func (c *ChannelReservation) applied(r ChannelRevision) bool {
	if c == nil {
		return false
	}
	return slices.Contains(c.Revisions, r.RevisionID) || r.Order != 0 && r.Order < c.Order
}

// record notes r as applied.
func (c *ChannelReservation) record(r ChannelRevision) {
	c.Revisions = append(slices.Clone(c.Revisions), r.RevisionID)
	if n := len(c.Revisions); n > keptRevisions {
		c.Revisions = c.Revisions[n-keptRevisions:]
	}
	c.Order = max(c.Order, r.Order)
}

// ChannelResult is what became of a revision: the booking (BookingID 0: a cancellation of a
// reservation that never became a booking) and whether this call changed it.
type ChannelResult struct {
	Booking Booking
	Applied bool
}

// ErrReservationUnknown: a modification or cancellation of a reservation booking-svc has no
// booking for (integration-svc holds it until its new revision is applied).
var ErrReservationUnknown = errors.New("reservation_unknown")

// ChannelConflictError: nights of the revision are held by other bookings or blocks; nothing
// changed. BookingIDs are the bookings holding them.
type ChannelConflictError struct {
	Nights     []string
	BookingIDs []int64
}

func (e *ChannelConflictError) Error() string {
	return "nights taken: " + strings.Join(e.Nights, ", ")
}

// ChannelReservations maps channel reservations to their bookings.
type ChannelReservations interface {
	// ReservationBooking returns the booking id of a reservation (ErrNotFound: none).
	ReservationBooking(ctx context.Context, account string, connection int64, reservation string) (int64, error)
	// AddReservation records id as the booking of a reservation unless one is recorded
	// already (insert-once), and answers the id recorded.
	AddReservation(ctx context.Context, account string, connection int64, reservation string, id int64) (int64, error)
	// Revive rewrites failed booking b.BookingID, never published, in place as pending with
	// b's content: a new attempt at the same reservation under the same id.
	Revive(ctx context.Context, b Booking) error
}

// channelPoll is how often a revision waits for another change of its booking to end.
const channelPoll = 20 * time.Millisecond

// ApplyChannel applies revision r of a channel reservation to account's ledger and bookings:
// new → a reserved booking, modified → the booking's stay, guests and total changed,
// cancelled → cancelled with its nights released. A revision applied before (or older than
// the newest applied) answers the booking with Applied false; nights held by others answer
// a *ChannelConflictError and change nothing; a modification or cancellation of an unknown
// reservation answers ErrReservationUnknown. Concurrent calls for one reservation take turns
// on the booking's ledger op, so the same new revision sent many times makes one booking.
func (s *Service) ApplyChannel(ctx context.Context, account string, r ChannelRevision) (ChannelResult, error) {
	if s.channel == nil {
		return ChannelResult{}, errors.New("channel reservations are not set up")
	}
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	ctx = s.steps(ctx, "channel", account)
	var p Property
	var set Settings
	if r.Status != ChannelCancelled {
		var err error
		if p, err = s.property(ctx, account, r.PropertyID); err != nil {
			return ChannelResult{}, err
		}
		if !hasPlan(p, r.RatePlanID) {
			return ChannelResult{}, &FieldError{Field: "rate_plan_id", Message: fmt.Sprintf("property %d has no rate plan %d", r.PropertyID, r.RatePlanID)}
		}
		if set, err = s.propertyView.Settings(ctx, account); err != nil {
			return ChannelResult{}, err
		}
	}
	id, err := s.channel.ReservationBooking(ctx, account, r.ConnectionID, r.ReservationID)
	switch {
	case errors.Is(err, ErrNotFound) && r.Status != ChannelNew:
		return ChannelResult{}, ErrReservationUnknown
	case errors.Is(err, ErrNotFound):
		if id, err = s.store.NextBookingID(ctx); err != nil {
			return ChannelResult{}, err
		}
		if id, err = s.channel.AddReservation(ctx, account, r.ConnectionID, r.ReservationID, id); err != nil {
			return ChannelResult{}, err
		}
	case err != nil:
		return ChannelResult{}, err
	}
	for {
		res, err := s.applyChannel(ctx, account, id, r, p, set)
		switch {
		case errors.Is(err, errChanged):
		case errors.Is(err, ErrBusy):
			// Another change of the booking holds its op (a concurrent call, or one that
			// stopped: settled once its deadline is past).
			if serr := s.Settle(ctx, account, id); serr != nil && !errors.Is(serr, ErrBusy) {
				return res, serr
			}
			select {
			case <-ctx.Done():
				return res, ErrBusy
			case <-time.After(channelPoll):
			}
		default:
			return res, err
		}
		if ctx.Err() != nil {
			return res, ErrBusy
		}
	}
}

func (s *Service) applyChannel(ctx context.Context, account string, id int64, r ChannelRevision, p Property, set Settings) (ChannelResult, error) {
	cur, err := s.store.Booking(ctx, account, id)
	exists := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return ChannelResult{}, err
	}
	if exists && (cur.Status == StatusPending || cur.Status == StatusHeld) {
		return ChannelResult{}, ErrBusy // an attempt under way, or one that stopped
	}
	live := exists && (cur.Status == StatusReserved || cur.Status == StatusCancelled)
	switch {
	case live && cur.ChannelRes.applied(r):
		return ChannelResult{Booking: cur}, nil
	case !live && r.Status == ChannelCancelled:
		// The reservation never became a booking (its new revision was a conflict).
		return ChannelResult{Booking: Booking{AccountID: account, Status: StatusCancelled}}, nil
	case !live:
		return s.channelCreate(ctx, account, id, cur, exists, r, p, set)
	case cur.Status == StatusCancelled:
		return ChannelResult{Booking: cur}, nil // a cancelled reservation stays cancelled
	case r.Status == ChannelCancelled:
		return s.channelCancel(ctx, account, cur, r)
	}
	return s.channelModify(ctx, account, cur, r, p, set)
}

// channelContent lays revision r over b: the stay, the guest, the channel's total (never
// quoted again: the channel sold it), the plan's terms when the plan changes.
func (s *Service) channelContent(b *Booking, r ChannelRevision, p Property, set Settings) {
	samePlan := b.BookingID != 0 && b.Status != StatusFailed && b.RatePlanID == r.RatePlanID && b.PropertyID == r.PropertyID &&
		b.Cancellation != nil
	b.PropertyID, b.PropertyName = p.PropertyID, p.Name
	b.Checkin, b.Checkout = r.Checkin.String(), r.Checkout.String()
	b.CheckinTime, b.CheckoutTime = CheckinTime, CheckoutTime
	b.Nights = nights(r.Checkin, r.Checkout)
	b.Adults, b.Children = r.Adults, r.Children
	g := r.Guest
	g.PhoneCountryCode = phoneCode(g.Country)
	g.Other = r.Notes
	b.Guest = g
	b.Quote = channelQuote(r, b.Nights, p, set)
	b.ChannelCommission = ""
	if c := r.Commission.Round(pricing.Scale(r.Currency)); !c.IsZero() {
		b.ChannelCommission = c.StringFixed(pricing.Scale(r.Currency))
	}
	b.ServiceLines = []pricing.ServiceLine{}
	b.Channel = strings.ToLower(r.Channel)
	if !samePlan {
		t := planTerms(p, r.RatePlanID)
		b.RatePlanID, b.RatePlanName, b.Cancellation = r.RatePlanID, t.Name, &t.Cancellation
	}
	if b.LeadSourceID == 0 {
		b.LeadSourceID = int64(set.DefaultLeadSource)
	}
	res := ChannelReservation{ConnectionID: r.ConnectionID, ReservationID: r.ReservationID}
	if b.ChannelRes != nil {
		res = *b.ChannelRes
	}
	b.ChannelRes = &res
}

// channelQuote is the channel's total as a booking's price: all rent, spread over the
// nights (the last takes the remainder).
func channelQuote(r ChannelRevision, dates []string, p Property, set Settings) Quote {
	scale := pricing.Scale(r.Currency)
	f := func(d decimal.Decimal) string { return d.StringFixed(scale) }
	total := r.Total.Round(scale)
	zero := f(decimal.Zero)
	q := Quote{Currency: r.Currency, TotalRent: f(total), TaxTotal: zero, ServiceTotal: zero, DiscountTotal: zero, GrandTotal: f(total),
		DamageDeposit: zero, Nightly: map[string]string{}, Taxes: []Amount{}, Services: []ServiceAmount{}, Discounts: []Discount{},
		Schedule: []Installment{}}
	switch rate, ok := set.ExchangeRates[r.Currency]; {
	case r.Currency == p.Pricing.Currency:
		q.ExchangeRate = "1"
	case ok:
		q.ExchangeRate = rate.String()
	}
	if n := int64(len(dates)); n > 0 {
		each := total.DivRound(decimal.NewFromInt(n), scale)
		last := total.Sub(each.Mul(decimal.NewFromInt(n - 1)))
		for i, d := range dates {
			q.Nightly[d] = f(each)
			if i == len(dates)-1 {
				q.Nightly[d] = f(last)
			}
		}
		q.MinNightly, q.MaxNightly = f(decimal.Min(each, last)), f(decimal.Max(each, last))
	}
	return q
}

// planTerms are the terms of plan id of p as they are now (the standard plan for 0).
func planTerms(p Property, id int64) Terms {
	var t pricing.PlanTerms
	if id == 0 {
		if p.Pricing.Standard != nil {
			t = *p.Pricing.Standard
		}
		if t.Name == "" {
			t.Name = "Standard"
		}
	}
	for _, pl := range p.Pricing.Plans {
		if pl.ID == id {
			t = pl.PlanTerms
		}
	}
	return Terms{ID: id, Name: t.Name, Inclusions: t.Inclusions, Cancellation: cancellationOf(t.Cancellation.Resolved())}
}

// taken answers the conflict of the nights of pid that owners other than owner hold, nil
// when all are free. Each night is read by its key.
func (s *Service) taken(ctx context.Context, account string, pid int64, dates []string, owner string) (*ChannelConflictError, error) {
	var out *ChannelConflictError
	seen := map[int64]bool{}
	for _, d := range dates {
		o, err := s.ledger.Owner(ctx, account, pid, d)
		if err != nil {
			return nil, err
		}
		if o == "" || o == owner {
			continue
		}
		if out == nil {
			out = &ChannelConflictError{Nights: []string{}, BookingIDs: []int64{}}
		}
		out.Nights = append(out.Nights, d)
		if kind, id, err := parseOwner(o); err == nil && kind == "booking" && !seen[id] {
			seen[id] = true
			out.BookingIDs = append(out.BookingIDs, id)
		}
	}
	if out != nil {
		slices.Sort(out.BookingIDs)
	}
	return out, nil
}

// conflict is the conflict to answer once the claim of dates lost te's night: the nights
// others hold now (at least that one).
func (s *Service) conflict(ctx context.Context, account string, pid int64, dates []string, owner string, te *ledger.TakenError) error {
	c, err := s.taken(context.WithoutCancel(ctx), account, pid, dates, owner)
	if err != nil || c == nil {
		c = &ChannelConflictError{Nights: []string{te.Date}, BookingIDs: []int64{}}
	}
	return c
}

// channelCreate makes reservation r's booking id (absent, or a failed attempt) reserved:
// create's steps — the op, a pending booking, the claim, the reserved write — under the id
// the reservation keeps for good.
func (s *Service) channelCreate(ctx context.Context, account string, id int64, cur Booking, exists bool, r ChannelRevision, p Property, set Settings) (ChannelResult, error) {
	owner := bookingOwner(id)
	now := s.store.Now()
	b := Booking{AccountID: account, BookingID: id, CreatedAt: now, UpdatedAt: now, Status: StatusPending}
	s.channelContent(&b, r, p, set)
	stay := ledger.Stay{Account: account, PropertyID: p.PropertyID, Dates: b.Nights}
	if c, err := s.taken(ctx, account, p.PropertyID, b.Nights, owner); err != nil || c != nil {
		if err != nil {
			return ChannelResult{}, err
		}
		return ChannelResult{}, c // nothing written
	}
	if err := s.ledger.Begin(ctx, ledger.Op{Owner: owner, Account: account, Claim: []ledger.Stay{stay}}); err != nil {
		if errors.Is(err, ledger.ErrBusy) {
			return ChannelResult{}, ErrBusy
		}
		return ChannelResult{}, err
	}
	faults.At(ctx, "op")
	// Another call may have finished between the read and the op: plan again.
	again, err := s.store.Booking(ctx, account, id)
	if (err == nil) != exists || err == nil && (again.Version != cur.Version || again.Status != cur.Status) ||
		err != nil && !errors.Is(err, ErrNotFound) {
		if eerr := s.ledger.End(context.WithoutCancel(ctx), account, owner); eerr != nil {
			return ChannelResult{}, eerr
		}
		return ChannelResult{}, errChanged
	}
	if exists {
		err = s.channel.Revive(ctx, b)
	} else {
		err = s.store.InsertPending(ctx, b)
	}
	if err != nil {
		return ChannelResult{}, err // the op stays: the janitor finishes
	}
	faults.At(ctx, "pending")
	if err := s.ledger.Claim(ctx, stay, owner); err != nil {
		var te *ledger.TakenError
		if errors.As(err, &te) {
			if err := s.store.MarkFailed(context.WithoutCancel(ctx), account, id); err == nil {
				_ = s.ledger.End(context.WithoutCancel(ctx), account, owner)
			}
			return ChannelResult{}, s.conflict(ctx, account, p.PropertyID, b.Nights, owner, te)
		}
		return ChannelResult{}, err
	}
	faults.At(ctx, "claimed")
	if ctx.Err() != nil {
		return ChannelResult{}, ctx.Err() // past the deadline: the janitor will undo it
	}
	out, err := s.store.Update(ctx, account, id, Reserved, func(b *Booking) error {
		b.Status = StatusReserved
		b.ChannelRes.record(r)
		return nil
	})
	if err != nil {
		return ChannelResult{}, err
	}
	faults.At(ctx, "reserved")
	_ = s.ledger.End(ctx, account, owner)
	return ChannelResult{Booking: out, Applied: true}, nil
}

// channelModify lays revision r over reserved booking cur: update's steps, the new nights
// claimed before the booking changes and the old ones released after.
func (s *Service) channelModify(ctx context.Context, account string, cur Booking, r ChannelRevision, p Property, set Settings) (ChannelResult, error) {
	next := cur
	next.ChannelRes = nil
	if cur.ChannelRes != nil {
		c := *cur.ChannelRes
		next.ChannelRes = &c
	}
	s.channelContent(&next, r, p, set)
	add, drop := next.Nights, cur.Nights
	if next.PropertyID == cur.PropertyID {
		add, drop = DatesNotIn(next.Nights, cur.Nights), DatesNotIn(cur.Nights, next.Nights)
	}
	owner := bookingOwner(cur.BookingID)
	if c, err := s.taken(ctx, account, next.PropertyID, add, owner); err != nil || c != nil {
		if err != nil {
			return ChannelResult{}, err
		}
		return ChannelResult{Booking: cur}, c
	}
	claim := ledger.Stay{Account: account, PropertyID: next.PropertyID, Dates: add}
	release := ledger.Stay{Account: account, PropertyID: cur.PropertyID, Dates: drop}
	if err := s.begin(ctx, cur, ledger.Op{Owner: owner, Account: account, Claim: []ledger.Stay{claim}, Release: []ledger.Stay{release}}); err != nil {
		return ChannelResult{}, err
	}
	if err := s.ledger.Claim(ctx, claim, owner); err != nil {
		var te *ledger.TakenError
		if errors.As(err, &te) {
			_ = s.ledger.End(context.WithoutCancel(ctx), account, owner)
			return ChannelResult{Booking: cur}, s.conflict(ctx, account, next.PropertyID, add, owner, te)
		}
		return ChannelResult{}, err
	}
	faults.At(ctx, "claimed")
	if ctx.Err() != nil {
		return ChannelResult{}, ctx.Err()
	}
	res, err := s.store.Update(ctx, account, cur.BookingID, Updated, func(b *Booking) error {
		setStay(b, next)
		b.ChannelRes, b.ChannelCommission = next.ChannelRes, next.ChannelCommission
		b.ChannelRes.record(r)
		return nil
	})
	if err != nil {
		return ChannelResult{}, err
	}
	faults.At(ctx, "updated")
	if err := s.ledger.Release(ctx, release, owner); err == nil {
		faults.At(ctx, "released")
		_ = s.ledger.End(ctx, account, owner)
	}
	return ChannelResult{Booking: res, Applied: true}, nil
}

// channelCancel cancels reserved booking cur for revision r: cancel's steps, its refund by
// the booking's policy included.
func (s *Service) channelCancel(ctx context.Context, account string, cur Booking, r ChannelRevision) (ChannelResult, error) {
	res, err := s.cancelBooking(ctx, cur, CancelOptions{}, func(b *Booking) {
		if b.ChannelRes == nil {
			b.ChannelRes = &ChannelReservation{ConnectionID: r.ConnectionID, ReservationID: r.ReservationID}
		} else {
			c := *b.ChannelRes
			b.ChannelRes = &c
		}
		b.ChannelRes.record(r)
	})
	if err != nil {
		return ChannelResult{}, err
	}
	return ChannelResult{Booking: res, Applied: true}, nil
}

// ChannelReservationKey names a reservation in the store: "<account>:<connection>:<id>".
func ChannelReservationKey(account string, connection int64, reservation string) string {
	return account + ":" + strconv.FormatInt(connection, 10) + ":" + reservation
}
