package booking

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/faults"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/libs/pricing"
)

// Refunds on cancellation (docs/money.md, "Refunds"). A cancellation decides its refund in
// the write that cancels the booking: the policy's amount of the grand total, never more than
// was paid (or the owner's override), split over the payments most recent first. A recorded
// (manual) payment's part is recorded at once; a card part is refunded through the gateway
// that took the charge, right after the write and then by the money worker on the retry
// schedule, each part under its own gateway idempotency key and with its refund's payment id
// reserved beforehand, so that it is refunded and recorded once whatever stops where.

// Refunder refunds card charges (package cardpay); the Gateway a Service charges through is
// used when it is one and Deps.Refunder is nil (cardpay.Test, route.Router).
type Refunder interface {
	Refund(ctx context.Context, req cardpay.RefundRequest) (cardpay.Refund, error)
}

// RefundsDue keeps the index of the bookings whose refund has parts to attempt,
// `refunds_due` (`_id` "<account>:<booking>", a small collection of its own), and each one's
// refund lease: the one process attempting its parts at a time.
type RefundsDue interface {
	// MarkRefundDue records booking id as having (or about to have) parts to attempt, at at.
	MarkRefundDue(ctx context.Context, account string, id int64, at time.Time) error
	// RefundsDue lists the bookings marked.
	RefundsDue(ctx context.Context) ([]DueRefund, error)
	// TakeRefundLease makes holder the only process attempting booking id's parts until until
	// (a lease whose time is up at now is taken over); ErrBusy while another holds it,
	// ErrNotFound when the booking is not marked.
	TakeRefundLease(ctx context.Context, account string, id int64, holder string, now, until time.Time) error
	// EndRefundLease gives holder's lease up, and removes the mark when dropMarkedBefore is
	// set and the booking was marked before it.
	EndRefundLease(ctx context.Context, account string, id int64, holder string, dropMarkedBefore time.Time) error
}

// DueRefund is a booking marked in RefundsDue.
type DueRefund struct {
	AccountID string
	BookingID int64
	MarkedAt  time.Time
}

// DefaultRefundRetry is the wait before each retry of a card part whose attempt failed
// (VROS_BOOKING_REFUND_RETRY_SCHEDULE); after the last the part is failed.
var DefaultRefundRetry = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 12 * time.Hour}

// MaxRefundReason is the longest refundReason, in characters.
const MaxRefundReason = 500

// CancelOptions are what a cancel asks of its refund: RefundAmount, when set, overrides the
// policy's amount (0 ≤ amount ≤ net paid), with RefundReason (required with it).
type CancelOptions struct {
	RefundAmount *decimal.Decimal
	RefundReason string
}

// refusedPrefix starts the LastError of a part the gateway refused (not one that ran out of
// retries): retried by retryrefund under a new key, since the gateway keeps the refusal of
// the old one.
const refusedPrefix = "refused: "

// refundPolicy is the policy a booking's refund follows: the one recorded on it, with its
// tiers as booked (nil: flexible, as Plan answers for a booking made before rate plans).
func refundPolicy(c *Cancellation) pricing.Cancellation {
	if c == nil {
		return pricing.Cancellation{Policy: pricing.CancelFlexible}
	}
	if len(c.Tiers) == 0 {
		return pricing.Cancellation{Policy: c.Policy} // a named policy's tiers by its name; custom with none: 0 %
	}
	out := pricing.Cancellation{Policy: pricing.CancelCustom}
	for _, t := range c.Tiers {
		p, _ := decimal.NewFromString(t.Percent)
		out.Tiers = append(out.Tiers, pricing.CancellationTier{DaysBefore: t.DaysBefore, Percent: p})
	}
	return out
}

// dec reads a stored amount ("" or invalid: 0).
func dec(s string) decimal.Decimal {
	d, _ := decimal.NewFromString(s)
	return d
}

// netPaid is what the booking's payments add up to: payments received and card charges, less
// refunds (negative payments); a captured damage deposit is not paid for the stay.
func netPaid(b Booking) decimal.Decimal {
	sum := decimal.Zero
	for _, p := range b.Payments {
		if p.Kind != KindDepositCapture {
			sum = sum.Add(dec(p.Amount))
		}
	}
	return sum
}

// refundSplit is the part of a refund taken from one payment.
type refundSplit struct {
	of     Payment
	amount decimal.Decimal
}

// splitRefund splits amount over b's payments received, most recent first (by time, then
// id), each at most what remains of it (its amount less what was refunded of it).
func splitRefund(b Booking, amount decimal.Decimal) []refundSplit {
	refunded := map[int64]decimal.Decimal{}
	var paid []Payment
	for _, p := range b.Payments {
		switch {
		case p.Kind == KindRefund && p.RefundOf != 0:
			refunded[p.RefundOf] = refunded[p.RefundOf].Sub(dec(p.Amount)) // refunds are negative
		case p.Kind == KindPayment && dec(p.Amount).IsPositive():
			paid = append(paid, p)
		}
	}
	slices.SortFunc(paid, func(a, b Payment) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return cmp.Compare(b.PaymentID, a.PaymentID)
	})
	var out []refundSplit
	left := amount
	for _, p := range paid {
		if !left.IsPositive() {
			break
		}
		remains := dec(p.Amount).Sub(refunded[p.PaymentID])
		if !remains.IsPositive() {
			continue
		}
		part := decimal.Min(remains, left)
		out = append(out, refundSplit{of: p, amount: part})
		left = left.Sub(part)
	}
	return out
}

// planRefund decides the figures of the refund of b cancelled on on (a date in the
// property's zone) and how it splits: Parts is left empty. An override out of bounds is a
// *FieldError.
func planRefund(b Booking, on pricing.Date, o CancelOptions) (Refund, []refundSplit, error) {
	scale := pricing.Scale(b.Quote.Currency)
	pol := refundPolicy(b.Cancellation)
	in, _ := pricing.ParseDate(b.Checkin)
	percent, policyAmount := pol.Refund(dec(b.Quote.GrandTotal), scale, in, on)
	paid := decimal.Max(netPaid(b), decimal.Zero)
	amount := decimal.Max(decimal.Min(policyAmount, paid), decimal.Zero)
	r := Refund{Policy: cmp.Or(pol.Policy, pricing.CancelFlexible), Percent: percent.String(), PolicyAmount: policyAmount.StringFixed(scale),
		NetPaid: paid.StringFixed(scale)}
	if b.Cancellation != nil && b.Cancellation.Policy != "" {
		r.Policy = b.Cancellation.Policy
	}
	if o.RefundAmount != nil {
		x := *o.RefundAmount
		switch {
		case x.IsNegative():
			return r, nil, &FieldError{Field: "refundAmount", Message: "must be 0 or more"}
		case !x.Equal(x.Round(scale)):
			return r, nil, &FieldError{Field: "refundAmount", Message: fmt.Sprintf("must have at most %d decimals, as %s has", scale, b.Quote.Currency)}
		case x.GreaterThan(paid):
			return r, nil, &FieldError{Field: "refundAmount", Message: "must be at most " + paid.StringFixed(scale) + ", what was paid"}
		}
		amount, r.Override, r.Reason = x, true, o.RefundReason
	}
	r.Amount = amount.StringFixed(scale)
	return r, splitRefund(b, amount), nil
}

// refundKey is the gateway's idempotency key of the refund of payment of on booking id
// (docs/money.md): n is the refund's number on the booking (1: the cancellation's); a part
// retried after a refusal takes the retry's number as a suffix.
func refundKey(account string, id, of int64, n, retry int) string {
	k := "refund-" + account + "-" + strconv.FormatInt(id, 10) + "-" + strconv.FormatInt(of, 10) + "-" + strconv.Itoa(n)
	if retry > 0 {
		k += "-retry" + strconv.Itoa(retry)
	}
	return k
}

// decideRefund is the refund of b cancelled on on at now, its parts' payment ids taken in
// order from ids (errChanged when they are too few: the booking gained payments since they
// were reserved), and the payment entries of its manual parts, recorded at once.
func decideRefund(b Booking, on pricing.Date, now time.Time, o CancelOptions, ids []int64) (Refund, []Payment, error) {
	r, splits, err := planRefund(b, on, o)
	if err != nil {
		return r, nil, err
	}
	if len(splits) > len(ids) {
		return r, nil, errChanged
	}
	r.DecidedAt = now
	scale := pricing.Scale(b.Quote.Currency)
	var manual []Payment
	for i, sp := range splits {
		part := RefundPart{Of: sp.of.PaymentID, PaymentID: ids[i], Amount: sp.amount.StringFixed(scale), Method: sp.of.Method,
			Key: refundKey(b.AccountID, b.BookingID, sp.of.PaymentID, 1, 0), Status: RefundPending, NextAttemptAt: now}
		if part.Method != MethodCard {
			part.Method, part.Status, part.DoneAt, part.NextAttemptAt = MethodManual, RefundSucceeded, &now, time.Time{}
			manual = append(manual, refundPayment(b, part, "", now))
		}
		r.Parts = append(r.Parts, part)
	}
	r.Status = refundStatus(r.Parts)
	return r, manual, nil
}

// refundPayment is the payment entry of a part that succeeded: a negative payment linked to
// the payment it refunds, with the gateway's refund id.
func refundPayment(b Booking, p RefundPart, refundID string, at time.Time) Payment {
	return Payment{PaymentID: p.PaymentID, Amount: dec(p.Amount).Neg().StringFixed(pricing.Scale(b.Quote.Currency)), Currency: b.Quote.Currency,
		Description: "refund of payment " + strconv.FormatInt(p.Of, 10), Time: at, Method: p.Method, ChargeID: refundID, CreatedAt: at,
		Kind: KindRefund, RefundOf: p.Of}
}

// refundStatus is a refund's status from its parts: none without parts, pending while one
// waits for an attempt, failed when one failed, else succeeded.
func refundStatus(parts []RefundPart) string {
	if len(parts) == 0 {
		return RefundNone
	}
	st := RefundSucceeded
	for _, p := range parts {
		switch p.Status {
		case RefundPending:
			return RefundPending
		case RefundFailed:
			st = RefundFailed
		}
	}
	return st
}

// hasPending tells whether r has card parts waiting for an attempt.
func hasPending(r *Refund) bool {
	if r == nil {
		return false
	}
	for _, p := range r.Parts {
		if p.Status == RefundPending {
			return true
		}
	}
	return false
}

// refundPrep is what a cancellation prepares of its refund before its write: the date it is
// cancelled on in the property's zone, the options, and the payment ids reserved (and
// indexed) for its parts.
type refundPrep struct {
	on   pricing.Date
	now  time.Time
	opts CancelOptions
	ids  []int64
}

// prepareRefund checks o against cur and reserves the refund's payment ids; a refund with
// card parts is marked due before the cancellation is written, so that a crash anywhere
// leaves it findable.
func (s *Service) prepareRefund(ctx context.Context, cur Booking, o CancelOptions) (*refundPrep, error) {
	now := s.now().UTC()
	p := &refundPrep{on: pricing.DateOf(now.In(s.Location(ctx, cur.AccountID, cur.PropertyID))), now: now, opts: o}
	_, splits, err := planRefund(cur, p.on, o)
	if err != nil {
		return nil, err
	}
	card := false
	for range splits {
		id, err := s.store.NextPaymentID(ctx)
		if err != nil {
			return nil, err
		}
		if err := s.store.IndexPayment(ctx, cur.AccountID, id, cur.BookingID); err != nil {
			return nil, fmt.Errorf("index payment %d: %w", id, err)
		}
		p.ids = append(p.ids, id)
	}
	for _, sp := range splits {
		card = card || sp.of.Method == MethodCard
	}
	if card {
		if err := s.refundsDue().MarkRefundDue(ctx, cur.AccountID, cur.BookingID, now); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// apply decides the refund on b, the booking as the cancellation's write reads it.
func (p *refundPrep) apply(b *Booking) error {
	r, manual, err := decideRefund(*b, p.on, p.now, p.opts, p.ids)
	if err != nil {
		return err
	}
	b.Refund = &r
	for i := range manual {
		addPayment(b, &manual[i])
	}
	return nil
}

// cancelBooking cancels reserved booking cur (interface B's cancel, the panel, a channel
// manager's cancellation: every cancellation) and decides its refund in the same write;
// more, when set, changes the booking further in that write. The card parts are attempted
// right after.
func (s *Service) cancelBooking(ctx context.Context, cur Booking, o CancelOptions, more func(*Booking)) (Booking, error) {
	account, id := cur.AccountID, cur.BookingID
	prep, err := s.prepareRefund(ctx, cur, o)
	if err != nil {
		return cur, err
	}
	owner := bookingOwner(id)
	release := ledger.Stay{Account: account, PropertyID: cur.PropertyID, Dates: cur.Nights}
	use := useStay(account, cur.Promotion) // a cancelled booking gives its promotion's use back
	if err := s.begin(ctx, cur, ledger.Op{Owner: owner, Account: account, Release: []ledger.Stay{release, use}}); err != nil {
		return cur, err
	}
	if ctx.Err() != nil {
		return cur, ctx.Err()
	}
	// The cancellation's time is the one its refund was decided at (the service's clock):
	// the ledger dates the kept amount by it, and the policy's percent was read on its day.
	now := prep.now.Truncate(time.Millisecond)
	// A held deposit is released at once: noted in the index before the cancel's write.
	if err := s.noteDeposit(ctx, cur, s.now()); err != nil {
		return cur, err
	}
	res, err := s.store.Update(ctx, account, id, Cancelled, func(b *Booking) error {
		if b.Status != StatusReserved {
			return errChanged
		}
		b.Status, b.CancelledAt = StatusCancelled, &now
		cancelDeposit(b, s.now())
		if more != nil {
			more(b)
		}
		return prep.apply(b)
	})
	var fe *FieldError
	if errors.Is(err, errChanged) || errors.As(err, &fe) {
		_ = s.ledger.End(context.WithoutCancel(ctx), account, owner)
	}
	if err != nil {
		return cur, err
	}
	faults.At(ctx, "cancelled")
	if err := s.ledger.Release(ctx, release, owner); err == nil {
		if err := s.ledger.Release(ctx, use, owner); err == nil {
			faults.At(ctx, "released")
			_ = s.ledger.End(ctx, account, owner)
		}
	}
	if hasPending(res.Refund) {
		if b, err := s.attemptRefunds(ctx, account, id, true); err == nil {
			res = b
		} // else the worker attempts them: the cancellation stands
	}
	return s.releaseOnCancel(ctx, res), nil
}

// refundsDue is the index of refunds due: Deps.RefundsDue, else the repository when it is
// one.
func (s *Service) refundsDue() RefundsDue {
	if s.refunds != nil {
		return s.refunds
	}
	if rd, ok := s.store.(RefundsDue); ok {
		return rd
	}
	return noRefundsDue{}
}

// refunderOf is the gateway refunds go through: Deps.Refunder, else the Gateway when it
// refunds.
func (s *Service) refunderOf() Refunder {
	if s.refunder != nil {
		return s.refunder
	}
	if r, ok := s.gateway.(Refunder); ok {
		return r
	}
	return nil
}

// noRefundsDue is the index of a service without one: nothing is marked, no lease is held.
type noRefundsDue struct{}

func (noRefundsDue) MarkRefundDue(context.Context, string, int64, time.Time) error { return nil }
func (noRefundsDue) RefundsDue(context.Context) ([]DueRefund, error)               { return nil, nil }
func (noRefundsDue) TakeRefundLease(context.Context, string, int64, string, time.Time, time.Time) error {
	return nil
}
func (noRefundsDue) EndRefundLease(context.Context, string, int64, string, time.Time) error {
	return nil
}

// refundRetry is the retry schedule.
func (s *Service) refundRetry() []time.Duration {
	if s.RefundRetry != nil {
		return s.RefundRetry
	}
	return DefaultRefundRetry
}

// refundLease is how long an attempt of a booking's parts holds its lease: it outlasts the
// attempt (bounded by the deadline) by as much again.
func (s *Service) refundLease() time.Duration { return 2 * s.Deadline }

// attemptRefunds attempts the card parts of booking id that are due, under the booking's
// refund lease (another process holding it: nothing is attempted), and answers the booking
// as it is afterwards. The mark is removed once no part is pending and no marker can still
// write (its request's deadline is over).
//
// wait is set for a request (cancel, retryrefund), whose answer says what became of the
// refund: while another process (the money worker) holds the booking's refund lease, it waits
// for it (polling, up to the request's deadline) and then attempts what is still due, so that
// the answer never shows a part pending only because the worker happened to be looking. The
// worker does not wait: the holder does the work.
func (s *Service) attemptRefunds(ctx context.Context, account string, id int64, wait bool) (Booking, error) {
	ctx = s.steps(ctx, "refund", account)
	due := s.refundsDue()
	holder := rand.Text()
	var err error
	var now time.Time
	for {
		now = s.now().UTC()
		err = due.TakeRefundLease(ctx, account, id, holder, now, now.Add(s.refundLease()))
		if errors.Is(err, ErrNotFound) {
			// Not marked (a part made pending again, a mark removed early): mark it, then take it.
			if err = due.MarkRefundDue(ctx, account, id, now); err == nil {
				err = due.TakeRefundLease(ctx, account, id, holder, now, now.Add(s.refundLease()))
			}
		}
		if !errors.Is(err, ErrBusy) || !wait {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(channelPoll):
			continue
		}
		break
	}
	if errors.Is(err, ErrBusy) {
		b, rerr := s.store.Booking(context.WithoutCancel(ctx), account, id)
		return b, rerr
	}
	if err != nil {
		return Booking{}, err
	}
	drop := time.Time{}
	defer func() {
		_ = due.EndRefundLease(context.WithoutCancel(ctx), account, id, holder, drop)
	}()
	b, err := s.store.Booking(ctx, account, id)
	if errors.Is(err, ErrNotFound) {
		drop = now.Add(time.Nanosecond) // no booking (erased): nothing to refund
		return b, ErrNoBooking
	}
	if err != nil {
		return b, err
	}
	gw := s.refunderOf()
	var errs []error
	if b.Refund != nil {
		for _, part := range b.Refund.Parts {
			if part.Status != RefundPending || part.Method != MethodCard || part.NextAttemptAt.After(now) {
				continue
			}
			if ctx.Err() != nil {
				break
			}
			var rf cardpay.Refund
			var gerr error
			if gw == nil {
				gerr = &cardpay.RefusedError{Reason: "no card gateway refunds here"}
			} else {
				pay := b.Payments[part.Of]
				reason := b.Refund.Reason
				if reason == "" {
					reason = "cancellation, " + b.Refund.Policy + " policy (" + b.Refund.Percent + " %)"
				}
				rf, gerr = gw.Refund(ctx, cardpay.RefundRequest{AccountID: account, Sandbox: b.Sandbox, PropertyID: b.PropertyID,
					ChargeID: pay.ChargeID, Amount: dec(part.Amount), Currency: cmp.Or(pay.Currency, b.Quote.Currency),
					IdempotencyKey: part.Key, Reason: reason})
			}
			if gerr != nil && ctx.Err() != nil {
				break // the attempt was cut short: not the gateway's answer
			}
			faults.At(ctx, "answered")
			if err := s.recordRefund(ctx, account, id, part.PaymentID, rf, gerr); err != nil {
				errs = append(errs, err)
			}
		}
	}
	b, err = s.store.Booking(ctx, account, id)
	if err != nil {
		return b, errors.Join(append(errs, err)...)
	}
	if !hasPending(b.Refund) {
		drop = s.now().UTC().Add(-2 * s.Deadline)
	}
	return b, errors.Join(errs...)
}

// errRecorded: the part was recorded meanwhile; nothing to write.
var errRecorded = errors.New("refund part already recorded")

// recordRefund records the gateway's answer for part pid of booking id's refund: a refund
// made (the part succeeded, its negative payment recorded under the reserved id), a refusal
// (the part failed), or an error (retried on the schedule, failed after its last retry).
func (s *Service) recordRefund(ctx context.Context, account string, id, pid int64, rf cardpay.Refund, gerr error) error {
	now := s.now().UTC()
	retry := s.refundRetry()
	_, err := s.store.Update(ctx, account, id, Updated, func(b *Booking) error {
		if b.Refund == nil {
			return errRecorded
		}
		r := *b.Refund
		r.Parts = slices.Clone(r.Parts)
		i := slices.IndexFunc(r.Parts, func(p RefundPart) bool { return p.PaymentID == pid })
		if i < 0 || r.Parts[i].Status != RefundPending {
			return errRecorded
		}
		p := &r.Parts[i]
		p.Attempts++
		if reason, refused := cardpay.Refused(gerr); gerr == nil {
			p.Status, p.RefundID, p.DoneAt, p.LastError, p.NextAttemptAt = RefundSucceeded, rf.ID, &now, "", time.Time{}
			pay := refundPayment(*b, *p, rf.ID, now)
			addPayment(b, &pay)
		} else if refused {
			p.Status, p.LastError, p.NextAttemptAt = RefundFailed, refusedPrefix+reason, time.Time{}
		} else {
			p.LastError = gerr.Error()
			if p.Attempts <= len(retry) {
				p.NextAttemptAt = now.Add(retry[p.Attempts-1])
			} else {
				p.Status, p.NextAttemptAt = RefundFailed, time.Time{}
			}
		}
		r.Status = refundStatus(r.Parts)
		b.Refund = &r
		return nil
	})
	if errors.Is(err, errRecorded) {
		return nil
	}
	return err
}

// RefundPass attempts the refund parts due of every booking marked, and reports how many
// bookings it attempted. The money worker runs it.
func (s *Service) RefundPass(ctx context.Context) (int, error) {
	due, err := s.refundsDue().RefundsDue(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, d := range due {
		if ctx.Err() != nil {
			break
		}
		if _, err := s.attemptRefunds(ctx, d.AccountID, d.BookingID, false); err != nil && !errors.Is(err, ErrNoBooking) {
			errs = append(errs, fmt.Errorf("refund of booking %s/%d: %w", d.AccountID, d.BookingID, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// RetryRefund starts the failed parts of booking id's refund again (interface B
// `retryrefund`): each is pending, its attempts counted anew, attempted at once and then on
// the schedule. A part the gateway refused takes a new key (the gateway keeps the refusal of
// the old one); one that ran out of retries keeps its own, so that a refund the gateway made
// unseen is answered, not made twice.
func (s *Service) RetryRefund(ctx context.Context, account string, id int64) (Booking, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	b, err := s.booked(ctx, account, id)
	if err != nil {
		return b, err
	}
	failed := func(b *Booking) bool {
		return b.Refund != nil && slices.ContainsFunc(b.Refund.Parts, func(p RefundPart) bool { return p.Status == RefundFailed })
	}
	if !failed(&b) {
		return b, &FieldError{Field: "bookingId", Message: "has no failed refund to retry"}
	}
	now := s.now().UTC()
	if err := s.refundsDue().MarkRefundDue(ctx, account, id, now); err != nil {
		return b, err
	}
	_, err = s.store.Update(ctx, account, id, Updated, func(b *Booking) error {
		if !failed(b) {
			return errRecorded
		}
		r := *b.Refund
		r.Parts = slices.Clone(r.Parts)
		for i := range r.Parts {
			p := &r.Parts[i]
			if p.Status != RefundFailed {
				continue
			}
			if strings.HasPrefix(p.LastError, refusedPrefix) {
				p.Key = nextRefundKey(p.Key)
			}
			p.Status, p.Attempts, p.NextAttemptAt = RefundPending, 0, now
		}
		r.Status = refundStatus(r.Parts)
		b.Refund = &r
		return nil
	})
	if err != nil && !errors.Is(err, errRecorded) {
		return b, err
	}
	return s.attemptRefunds(ctx, account, id, true)
}

// nextRefundKey is key with its retry number moved on ("…-1" → "…-1-retry1" → "…-1-retry2").
func nextRefundKey(key string) string {
	base, k := key, 0
	if i := strings.LastIndex(key, "-retry"); i >= 0 {
		if n, err := strconv.Atoi(key[i+len("-retry"):]); err == nil {
			base, k = key[:i], n
		}
	}
	return base + "-retry" + strconv.Itoa(k+1)
}
