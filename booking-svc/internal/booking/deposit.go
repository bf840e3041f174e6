package booking

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
	"golang.org/x/text/currency"

	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/faults"
	"github.com/vros/vros/libs/pricing"
)

// Damage-deposit holds (docs/money.md, "Damage-deposit holds"). A booking whose quote has a
// damage deposit and a card on file holds the deposit on the card on its due date, renews
// the hold before the card network lets it lapse, and releases it some days after check-out
// (or at once when cancelled), unless the owner captures all or part of it.
//
// Each gateway step is recorded as begun (Deposit.Pending, with Step, which makes its key)
// before the gateway is asked, and as done after: a process stopped in between leaves the
// step pending, and the next pass repeats it under the same key, so the gateway does it
// once. The bookings with a step to come are listed in a small index (DepositsDue), written
// before the booking write that schedules them; the pass reads that index, never the
// bookings.

// Defaults of the deposit's timings (VROS_BOOKING_DEPOSIT_…).
const (
	DefaultDepositReleaseDays      = 7
	DefaultDepositReauthorizeAfter = 144 * time.Hour
)

// Pending steps of a hold.
const (
	depositStepHold        = "hold"
	depositStepReauthorize = "reauthorize"
	depositStepRelease     = "release"
	depositStepCapture     = "capture"
)

// HoldGateway places, captures and releases authorizations (package cardpay).
type HoldGateway interface {
	Authorize(ctx context.Context, req cardpay.AuthorizeRequest) (cardpay.Authorization, error)
	Capture(ctx context.Context, req cardpay.CaptureRequest) (cardpay.Captured, error)
	Release(ctx context.Context, req cardpay.ReleaseRequest) error
}

// DepositDue is an entry of the deposits' index: booking BookingID of AccountID has a step
// due at At (or later: an entry may be early, never late). Seq tells the write read.
type DepositDue struct {
	AccountID string
	BookingID int64
	At        time.Time
	Seq       int64
}

// DepositsDue keeps the index of the bookings whose hold has a step to come.
type DepositsDue interface {
	// ScheduleDeposit records a step of booking id due at at, or keeps an earlier time.
	ScheduleDeposit(ctx context.Context, account string, id int64, at time.Time) error
	// DepositsDue lists every entry.
	DepositsDue(ctx context.Context) ([]DepositDue, error)
	// SetDepositDue and DropDepositDue change or drop entry e as read, unless it was
	// written since.
	SetDepositDue(ctx context.Context, e DepositDue, at time.Time) error
	DropDepositDue(ctx context.Context, e DepositDue) error
}

// depositDeps are the hold's ports and timings, found among the service's Deps: the
// Gateway that also holds (the Router, the test gateway) and the Repository that also keeps
// the index (the store).
type depositDeps struct {
	gateway          HoldGateway
	due              DepositsDue
	releaseDays      int
	reauthorizeAfter time.Duration
}

func depositDepsOf(d Deps) depositDeps {
	out := depositDeps{releaseDays: DefaultDepositReleaseDays, reauthorizeAfter: DefaultDepositReauthorizeAfter}
	out.gateway, _ = d.Gateway.(HoldGateway)
	out.due, _ = d.Bookings.(DepositsDue)
	return out
}

// SetDepositTimes sets how many days after check-out a hold is released and at what age it
// is renewed. Set them before the service is used.
func (s *Service) SetDepositTimes(releaseDays int, reauthorizeAfter time.Duration) {
	s.deposit.releaseDays, s.deposit.reauthorizeAfter = releaseDays, reauthorizeAfter
}

// depositKey is the gateway's idempotency key of step kind of the n-th authorization.
func depositKey(b Booking, n int, kind string) string {
	return "deposit-" + b.AccountID + "-" + strconv.FormatInt(b.BookingID, 10) + "-" + strconv.Itoa(n) + "-" + kind
}

// DepositDueDate is the date the deposit of q falls due: its schedule's deposit installment
// (booking, arrival, check-out or X days before arrival, in the property's zone, as the
// engine dated it); "" when q has no deposit.
func DepositDueDate(q Quote) string {
	amt, err := decimal.NewFromString(q.DamageDeposit)
	if err != nil || !amt.IsPositive() {
		return ""
	}
	for _, in := range q.Schedule {
		if in.Label == pricing.LabelDeposit {
			return in.Due
		}
	}
	return ""
}

// scheduleDeposit sets b.Deposit from its quote and card, as a reservation or a repricing
// leaves it: a hold not begun follows the price (scheduled, or no_card without a card; none
// when the deposit went); a hold placed keeps its amount and follows the check-out for its
// release. It reports whether b has a step to come.
func (s *Service) scheduleDeposit(b *Booking) bool {
	d := b.Deposit
	releaseOn := ""
	if co, err := pricing.ParseDate(b.Checkout); err == nil {
		releaseOn = co.AddDays(s.deposit.releaseDays).String()
	}
	if d != nil && (d.Pending != "" || (d.Status != DepositScheduled && d.Status != DepositNoCard)) {
		if d.Status == DepositHeld && d.ReleaseOn != releaseOn {
			next := *d
			next.ReleaseOn = releaseOn
			b.Deposit = &next
		}
		return depositActive(b.Deposit)
	}
	due := DepositDueDate(b.Quote)
	if due == "" || s.deposit.gateway == nil {
		b.Deposit = nil
		return false
	}
	next := DepositHold{Status: DepositScheduled, Amount: b.Quote.DamageDeposit, Currency: b.Quote.Currency, DueDate: due, ReleaseOn: releaseOn}
	if d != nil {
		next.Step = d.Step
	}
	if b.Card == nil {
		next.Status = DepositNoCard
	}
	b.Deposit = &next
	return next.Status == DepositScheduled
}

// depositActive tells whether a hold has a step to come.
func depositActive(d *DepositHold) bool {
	return d != nil && (d.Pending != "" || d.Status == DepositScheduled || d.Status == DepositHeld)
}

// planDeposit schedules b's damage-deposit hold (scheduleDeposit) and notes when its next
// step is due in the index, before the booking that says so is written.
func (s *Service) planDeposit(ctx context.Context, b *Booking) error {
	s.scheduleDeposit(b)
	return s.noteDeposit(ctx, *b, s.depositAt(*b, s.now(), s.Location(ctx, b.AccountID, b.PropertyID)))
}

// noteDeposit records in the index that booking b, about to be written with its Deposit,
// may have a step due from at on (before the write: an entry too early only costs a read).
func (s *Service) noteDeposit(ctx context.Context, b Booking, at time.Time) error {
	if s.deposit.due == nil || !depositActive(b.Deposit) {
		return nil
	}
	return s.deposit.due.ScheduleDeposit(ctx, b.AccountID, b.BookingID, at)
}

// depositAt is when the next step of b's hold is due (the zero time: none), with today's
// date and now in the property's zone loc.
func (s *Service) depositAt(b Booking, now time.Time, loc *time.Location) time.Time {
	d := b.Deposit
	if !depositActive(d) {
		return time.Time{}
	}
	if d.Pending != "" {
		// Its beginner works on it until its deadline; then a pass repeats it.
		if at := d.PendingAt.Add(s.Deadline); at.After(now) {
			return at
		}
		return now
	}
	if b.Status == StatusCancelled {
		return now
	}
	midnight := func(date string) time.Time {
		t, err := time.ParseInLocation(time.DateOnly, date, loc)
		if err != nil {
			return now
		}
		return t
	}
	if d.Status == DepositScheduled {
		return midnight(d.DueDate)
	}
	at := midnight(d.ReleaseOn)
	if d.HeldAt != nil {
		if r := d.HeldAt.Add(s.deposit.reauthorizeAfter); r.Before(at) {
			at = r
		}
	}
	return at
}

// nextDepositStep is the gateway step b's hold needs now ("" none): the one begun, else a
// hold on or after its due date, a release after check-out's days or of a cancelled
// booking, a renewal of a hold grown old before its release date.
func (s *Service) nextDepositStep(b Booking, now time.Time, loc *time.Location) string {
	d := b.Deposit
	if d == nil {
		return ""
	}
	if d.Pending != "" {
		return d.Pending
	}
	today := now.In(loc).Format(time.DateOnly)
	switch d.Status {
	case DepositScheduled:
		if b.Status == StatusReserved && today >= d.DueDate {
			return depositStepHold
		}
	case DepositHeld:
		switch {
		case b.Status == StatusCancelled || today >= d.ReleaseOn:
			return depositStepRelease
		case d.HeldAt != nil && !now.Before(d.HeldAt.Add(s.deposit.reauthorizeAfter)):
			return depositStepReauthorize
		}
	}
	return ""
}

// errStepTaken: the hold changed since the step was planned (another pass took it); the
// step is left to it.
var errStepTaken = errors.New("the deposit hold changed since its step was planned")

// DepositPass runs every step of a hold that is due: the money worker calls it. It answers
// how many steps it completed; a step that failed for a transient reason stays begun and is
// repeated by the next pass.
func (s *Service) DepositPass(ctx context.Context) (int, error) {
	if s.deposit.due == nil || s.deposit.gateway == nil {
		return 0, nil
	}
	entries, err := s.deposit.due.DepositsDue(ctx)
	if err != nil {
		return 0, err
	}
	done := 0
	var errs []error
	for _, e := range entries {
		if s.now().Before(e.At) {
			continue
		}
		n, err := s.depositEntry(ctx, e)
		done += n
		if err != nil {
			errs = append(errs, fmt.Errorf("deposit of booking %d: %w", e.BookingID, err))
		}
	}
	return done, errors.Join(errs...)
}

// depositEntry runs the steps due of entry e's booking, then sets the entry to the next
// step's time, or drops it.
func (s *Service) depositEntry(ctx context.Context, e DepositDue) (int, error) {
	b, err := s.store.Booking(ctx, e.AccountID, e.BookingID)
	if errors.Is(err, ErrNotFound) {
		return 0, s.deposit.due.DropDepositDue(ctx, e)
	}
	if err != nil {
		return 0, err
	}
	loc := s.Location(ctx, e.AccountID, b.PropertyID)
	done := 0
	for range 4 { // a cancelled scheduled hold, a renewal then its release…: a few steps at most
		next, ran, err := s.depositStep(ctx, b, loc, false)
		if err != nil {
			return done, err
		}
		if !ran {
			break
		}
		done++
		b = next
	}
	at := s.depositAt(b, s.now(), loc)
	if at.IsZero() {
		return done, s.deposit.due.DropDepositDue(ctx, e)
	}
	return done, s.deposit.due.SetDepositDue(ctx, e, at)
}

// runDeposit runs what b's hold needs now, outside the pass (a cancel, an owner's action),
// and answers the booking as it then is; what it leaves begun the pass repeats.
func (s *Service) runDeposit(ctx context.Context, b Booking) (Booking, error) {
	loc := s.Location(ctx, b.AccountID, b.PropertyID)
	for range 4 {
		next, ran, err := s.depositStep(ctx, b, loc, true)
		if err != nil || !ran {
			return b, err
		}
		b = next
	}
	return b, nil
}

// depositStep runs the step b's hold needs now, if any: it records the step begun, asks the
// gateway and records the outcome. ran is false when nothing was due or another pass took
// the step. own says the caller began the step b has pending (a cancel, an owner's action);
// a pass repeats a step another began only once that beginner's deadline is past, so that
// the gateway is never asked twice while its first caller still works on it.
func (s *Service) depositStep(ctx context.Context, b Booking, loc *time.Location, own bool) (out Booking, ran bool, err error) {
	now := s.now()
	kind := s.nextDepositStep(b, now, loc)
	d := b.Deposit
	if kind != "" && d.Pending != "" && !own && now.Before(d.PendingAt.Add(s.Deadline)) {
		return b, false, nil
	}
	if kind == "" {
		if d != nil && d.Status == DepositScheduled && d.Pending == "" && b.Status == StatusCancelled {
			// Cancelled before its hold: nothing to release at the gateway.
			out, err := s.store.Update(ctx, b.AccountID, b.BookingID, Updated, func(x *Booking) error {
				if x.Deposit == nil || x.Deposit.Status != DepositScheduled || x.Deposit.Pending != "" {
					return errStepTaken
				}
				at := now.UTC()
				x.Deposit.Status, x.Deposit.ReleasedAt = DepositReleased, &at
				dropCard(x)
				return nil
			})
			return stepOutcome(b, out, err)
		}
		return b, false, nil
	}
	ctx = s.steps(ctx, "deposit", b.AccountID)
	if d.Pending == "" {
		// Begin: recorded with its key's step before the gateway is asked.
		seen := *d
		b, err = s.store.Update(ctx, b.AccountID, b.BookingID, Updated, func(x *Booking) error {
			if x.Deposit == nil || x.Deposit.Pending != "" || x.Deposit.Status != seen.Status || x.Deposit.Step != seen.Step {
				return errStepTaken
			}
			x.Deposit.Pending, x.Deposit.PendingAt = kind, now.UTC()
			if kind == depositStepHold || kind == depositStepReauthorize {
				x.Deposit.Step++
			}
			return nil
		})
		if errors.Is(err, errStepTaken) {
			return b, false, nil
		}
		if err != nil {
			return b, false, err
		}
		faults.At(ctx, "begun")
		d = b.Deposit
	}
	result, err := s.depositGateway(ctx, b, kind)
	if err != nil {
		return b, false, err // transient: begun, repeated by the next pass
	}
	faults.At(ctx, "answered")
	pending, step := d.Pending, d.Step
	out, err = s.store.Update(ctx, b.AccountID, b.BookingID, Updated, func(x *Booking) error {
		if x.Deposit == nil || x.Deposit.Pending != pending || x.Deposit.Step != step {
			return errStepTaken
		}
		result(x)
		if x.Deposit.Pending == "" {
			x.Deposit.PendingAt = time.Time{}
		}
		return nil
	})
	out, ran, err = stepOutcome(b, out, err)
	if ran {
		faults.At(ctx, "recorded")
	}
	return out, ran, err
}

func stepOutcome(b, out Booking, err error) (Booking, bool, error) {
	if errors.Is(err, errStepTaken) {
		return b, false, nil
	}
	if err != nil {
		return b, false, err
	}
	return out, true, nil
}

// depositGateway asks the gateway for step kind of b's hold and answers how to record its
// outcome. A refusal is an outcome (failed, with its reason); an error is not: the step
// stays begun.
func (s *Service) depositGateway(ctx context.Context, b Booking, kind string) (func(*Booking), error) {
	d := *b.Deposit
	now := s.now().UTC()
	failed := func(reason string) func(*Booking) {
		return func(x *Booking) {
			x.Deposit.Pending, x.Deposit.Status, x.Deposit.LastError = "", DepositFailed, reason
			dropCard(x)
		}
	}
	amount, err := decimal.NewFromString(d.Amount)
	if err != nil {
		return nil, fmt.Errorf("deposit amount %q: %w", d.Amount, err)
	}
	switch kind {
	case depositStepHold, depositStepReauthorize:
		c, err := s.openCard(b)
		if err != nil {
			return failed("the card on file cannot be read: " + err.Error()), nil
		}
		a, err := s.deposit.gateway.Authorize(ctx, cardpay.AuthorizeRequest{Amount: amount, Currency: d.Currency, Card: c,
			Description: "damage deposit of booking " + strconv.FormatInt(b.BookingID, 10), IdempotencyKey: depositKey(b, d.Step, "hold"),
			AccountID: b.AccountID, Sandbox: b.Sandbox, PropertyID: b.PropertyID})
		if reason, refused := refusal(err); refused {
			if kind == depositStepReauthorize {
				// The old hold goes too: it would lapse unrenewed.
				if rerr := s.releaseAuthorization(ctx, b, d.AuthorizationID, d.Step-1); rerr != nil {
					return nil, rerr
				}
			}
			return failed(reason), nil
		}
		if err != nil {
			return nil, err
		}
		if kind == depositStepReauthorize {
			if err := s.releaseAuthorization(ctx, b, d.AuthorizationID, d.Step-1); err != nil {
				return nil, err
			}
		}
		return func(x *Booking) {
			x.Deposit.Pending, x.Deposit.Status, x.Deposit.AuthorizationID, x.Deposit.HeldAt, x.Deposit.LastError = "", DepositHeld, a.ID, &now, ""
			if kind == depositStepReauthorize {
				x.Deposit.Reauthorizations++
			}
		}, nil
	case depositStepRelease:
		if err := s.releaseAuthorization(ctx, b, d.AuthorizationID, d.Step); err != nil {
			if reason, refused := refusal(err); refused {
				return failed(reason), nil
			}
			return nil, err
		}
		return func(x *Booking) {
			x.Deposit.Pending, x.Deposit.Status, x.Deposit.ReleasedAt = "", DepositReleased, &now
			dropCard(x)
		}, nil
	case depositStepCapture:
		amt, err := decimal.NewFromString(d.CapturedAmount)
		if err != nil {
			return nil, fmt.Errorf("captured amount %q: %w", d.CapturedAmount, err)
		}
		c, err := s.deposit.gateway.Capture(ctx, cardpay.CaptureRequest{ID: d.AuthorizationID, Amount: amt, Currency: d.Currency,
			IdempotencyKey: depositKey(b, d.Step, "capture"), AccountID: b.AccountID, Sandbox: b.Sandbox, PropertyID: b.PropertyID})
		if reason, refused := refusal(err); refused {
			return failed(reason), nil
		}
		if err != nil {
			return nil, err
		}
		pid, err := s.store.NextPaymentID(ctx)
		if err != nil {
			return nil, err
		}
		if err := s.store.IndexPayment(ctx, b.AccountID, pid, b.BookingID); err != nil {
			return nil, fmt.Errorf("index payment %d: %w", pid, err)
		}
		p := Payment{PaymentID: pid, Amount: d.CapturedAmount, Currency: d.Currency, Description: "damage deposit captured: " + d.CaptureReason,
			Time: now, Method: MethodCard, ChargeID: c.ID, CreatedAt: now, Kind: KindDepositCapture}
		return func(x *Booking) {
			x.Deposit.Pending, x.Deposit.Status, x.Deposit.CapturedAt = "", DepositCaptured, &now
			addPayment(x, &p)
			dropCard(x)
		}, nil
	}
	return nil, fmt.Errorf("deposit step %q is unknown", kind)
}

// releaseAuthorization releases authorization id, the n-th, under its key.
func (s *Service) releaseAuthorization(ctx context.Context, b Booking, id string, n int) error {
	if id == "" {
		return nil
	}
	return s.deposit.gateway.Release(ctx, cardpay.ReleaseRequest{ID: id, IdempotencyKey: depositKey(b, n, "release"),
		AccountID: b.AccountID, Sandbox: b.Sandbox, PropertyID: b.PropertyID})
}

// refusal tells whether err is the gateway's final word on a step (the card's refusal, or a
// request the gateway will never accept), with its reason.
func refusal(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	if reason, ok := cardpay.Declined(err); ok {
		return reason, true
	}
	if errors.Is(err, cardpay.ErrRequires3DS) || errors.Is(err, cardpay.ErrInvalidRequest) {
		return err.Error(), true
	}
	return "", false
}

// dropCard removes the card kept for the hold once the hold ended, unless automatic
// payments still need it.
func dropCard(b *Booking) {
	if !b.PaymentAuto {
		b.Card = nil
	}
}

// cancelDeposit is what a cancellation does to the hold in its own write: a hold not yet
// placed ends (released, nothing at the gateway); one placed is released by the step that
// follows (releaseOnCancel).
func cancelDeposit(b *Booking, now time.Time) {
	if d := b.Deposit; d != nil && d.Pending == "" && d.Status == DepositScheduled {
		at := now.UTC()
		d.Status, d.ReleasedAt = DepositReleased, &at
		dropCard(b)
	}
}

// releaseOnCancel releases the hold of booking b, just cancelled, at once; what it cannot
// finish the pass does (the index says so: noted before the cancel's write).
func (s *Service) releaseOnCancel(ctx context.Context, b Booking) Booking {
	if !depositActive(b.Deposit) {
		return b
	}
	out, err := s.runDeposit(context.WithoutCancel(ctx), b)
	if err != nil {
		return b
	}
	return out
}

// CaptureInput is the owner's capture of a held deposit (capturedeposit).
type CaptureInput struct {
	Amount decimal.Decimal
	Reason string
}

// CaptureDeposit captures amount of booking id's held deposit, with the owner's reason; the
// rest is released. The capture is recorded as a payment (kind deposit_capture).
func (s *Service) CaptureDeposit(ctx context.Context, account string, id int64, in CaptureInput) (Booking, error) {
	if n := utf8.RuneCountInString(in.Reason); n < 1 || n > 500 {
		return Booking{}, &FieldError{Field: "reason", Message: "is required: 1 to 500 characters"}
	}
	return s.ownerDepositStep(ctx, account, id, depositStepCapture, func(d *DepositHold) error {
		held, _ := decimal.NewFromString(d.Amount)
		scale := currencyDigits(d.Currency)
		switch {
		case !in.Amount.IsPositive():
			return &FieldError{Field: "amount", Message: "must be greater than 0"}
		case !in.Amount.Equal(in.Amount.Truncate(scale)):
			return &FieldError{Field: "amount", Message: fmt.Sprintf("must have at most %d decimal places for %s", scale, d.Currency)}
		case in.Amount.GreaterThan(held):
			return &FieldError{Field: "amount", Message: "must be at most " + d.Amount + ", the amount held"}
		}
		d.CapturedAmount, d.CaptureReason = in.Amount.StringFixed(scale), in.Reason
		return nil
	})
}

// ReleaseDeposit releases booking id's held deposit whole, at the owner's request.
func (s *Service) ReleaseDeposit(ctx context.Context, account string, id int64) (Booking, error) {
	return s.ownerDepositStep(ctx, account, id, depositStepRelease, func(*DepositHold) error { return nil })
}

// ownerDepositStep begins step kind of a held deposit (check validates and completes the
// hold's fields), notes it in the index, and runs it. A refusal leaves the hold failed with
// its reason (answered as a PaymentError); a transient failure stays begun for the pass.
func (s *Service) ownerDepositStep(ctx context.Context, account string, id int64, kind string, check func(*DepositHold) error) (Booking, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	b, err := s.booked(ctx, account, id)
	if err != nil {
		return b, err
	}
	if err := heldDeposit(b); err != nil {
		return b, err
	}
	if s.deposit.due != nil {
		if err := s.deposit.due.ScheduleDeposit(ctx, account, id, s.now()); err != nil {
			return b, err
		}
	}
	b, err = s.store.Update(ctx, account, id, Updated, func(x *Booking) error {
		if err := heldDeposit(*x); err != nil {
			return err
		}
		if err := check(x.Deposit); err != nil {
			return err
		}
		x.Deposit.Pending, x.Deposit.PendingAt = kind, s.now().UTC()
		return nil
	})
	if err != nil {
		return b, err
	}
	sctx := s.steps(ctx, "deposit", account)
	faults.At(sctx, "begun")
	out, err := s.runDeposit(ctx, b)
	if err != nil {
		return out, err
	}
	if d := out.Deposit; d != nil && d.Status == DepositFailed {
		return out, &PaymentError{Reason: d.LastError}
	}
	return out, nil
}

// heldDeposit refuses a booking whose deposit is not held (or has a step under way).
func heldDeposit(b Booking) error {
	d := b.Deposit
	switch {
	case d == nil:
		return &FieldError{Field: "bookingId", Message: "has no damage deposit"}
	case d.Pending != "":
		return &FieldError{Field: "bookingId", Message: "its damage deposit has a " + d.Pending + " under way; retry"}
	case d.Status != DepositHeld:
		return &FieldError{Field: "bookingId", Message: "its damage deposit is " + d.Status + ", not held"}
	}
	return nil
}

// openCard opens the card kept on b.
func (s *Service) openCard(b Booking) (card.Card, error) {
	if b.Card == nil {
		return card.Card{}, errors.New("no card on file")
	}
	plain, err := s.box.Open(b.Card.Sealed, cardContext(b.AccountID, b.BookingID))
	if err != nil {
		return card.Card{}, fmt.Errorf("open card: %w", err)
	}
	var st card.Stored
	if err := json.Unmarshal([]byte(plain), &st); err != nil {
		return card.Card{}, fmt.Errorf("read card: %w", err)
	}
	return st.Card(), nil
}

// currencyDigits is the minor digits of a currency (2 when unknown).
func currencyDigits(code string) int32 {
	u, err := currency.ParseISO(code)
	if err != nil {
		return 2
	}
	scale, _ := currency.Standard.Rounding(u)
	return int32(scale)
}
