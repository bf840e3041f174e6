package trigger

import (
	"math/big"
	"strconv"
	"time"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
)

// Once is the occurrence of a trigger a booking sends at most once (confirmed, cancelled,
// the owner's notices, the deposit's steps).
const Once = "once"

// Lang says where the sender finds a message's language: the snapshot carries none.
type Lang string

const (
	// LangBooking: the booking's language (the guest's, read at send time), else the
	// brand's default, else the account's first language.
	LangBooking Lang = "booking"
	// LangAccount: the account's first language (the owner's notices).
	LangAccount Lang = "account"
)

// Message is a message to create: inserted once under ID, sent at SendAt (UTC; the
// planning instant for an event trigger or a scheduled one already due).
type Message struct {
	ID         string // <account>:<trigger>:<booking>:<occurrence>
	Account    string
	Trigger    string
	BookingID  int64
	PropertyID int64
	BrandID    int64
	// Occurrence tells this message from the trigger's others for the booking: Once, a
	// payment id, a booking version, or the scheduled local date-time (2027-03-25T10:00).
	Occurrence string
	To         Recipient
	Lang       Lang
	Scheduled  bool
	SendAt     time.Time
}

// Planned is what one booking event asks for.
type Planned struct {
	Create []Message
	// Cancel are ids of scheduled messages no longer due (the stay moved, the balance was
	// paid, the booking was cancelled); cancelling one not pending changes nothing.
	Cancel []string
	// CancelScheduled: the booking is cancelled, every pending scheduled message of the
	// booking is cancelled whatever its id (one planned under settings since changed too).
	CancelScheduled bool
}

// ID is a message's natural id (docs/messaging.md, "Exactly once").
func ID(account, trigger string, booking int64, occurrence string) string {
	return account + ":" + trigger + ":" + strconv.FormatInt(booking, 10) + ":" + occurrence
}

// Plan answers the messages a booking event asks for: prev is the snapshot last applied (nil:
// none), next the event's, loc the property's time zone (nil: UTC), now the planning instant.
// An event not newer than prev (its version not higher) plans nothing. Planning next alone
// (prev nil) answers the ids planning it step by step did, so a replay inserts nothing new.
func Plan(prev *contract.Booking, next contract.Booking, s Settings, loc *time.Location, now time.Time) Planned {
	if prev != nil && next.Version <= prev.Version {
		return Planned{}
	}
	if loc == nil {
		loc = time.UTC
	}
	now = now.UTC()
	var p Planned
	event := func(trigger, occurrence string) {
		if m, ok := Event(next.AccountID, trigger, next.BookingID, occurrence, s, now); ok {
			m.PropertyID, m.BrandID = next.PropertyID, next.BrandID
			p.Create = append(p.Create, m)
		}
	}
	reserved := next.Status == "reserved"
	wasReserved := prev != nil && prev.Status == "reserved"
	switch {
	case reserved && !wasReserved:
		event(BookingConfirmed, Once)
		event(OwnerBooking, Once)
	case reserved && modified(*prev, next):
		event(BookingModified, strconv.FormatInt(next.Version, 10))
	case next.Status == "cancelled" && (prev == nil || prev.Status != "cancelled"):
		event(BookingCancelled, Once)
		event(OwnerCancellation, Once)
	}
	for _, id := range receivedPayments(prev, next) {
		event(PaymentReceived, strconv.FormatInt(id, 10))
	}
	for _, id := range failedCharges(prev, next) {
		event(PaymentFailed, id)
	}
	if depositHeld(prev, next) {
		event(DepositHeld, Once)
	}
	if depositReleased(prev, next) {
		event(DepositReleased, Once)
	}

	if !reserved {
		// Every scheduled message of the booking goes, those of the stay it had before too.
		p.CancelScheduled = true
		p.Cancel = occurrenceIDs(next, loc, s)
		if prev != nil && (prev.Checkin != next.Checkin || prev.Checkout != next.Checkout) {
			p.Cancel = append(p.Cancel, occurrenceIDs(*prev, loc, s)...)
		}
		return p
	}
	moved := prev != nil && (prev.Checkin != next.Checkin || prev.Checkout != next.Checkout)
	if !wasReserved || moved {
		checkin, err := pricing.ParseDate(next.Checkin)
		today := pricing.DateOf(now.In(loc))
		for _, m := range Schedule(next, s, loc) {
			if m.SendAt.Before(now) {
				// Past due when planned: sent at once if the stay has not started in the
				// property's zone, else never.
				if err != nil || !today.Before(checkin) {
					continue
				}
				m.SendAt = now
			}
			p.Create = append(p.Create, m)
		}
	}
	if moved {
		keep := make(map[string]bool)
		for _, id := range occurrenceIDs(next, loc, s) {
			keep[id] = true
		}
		for _, id := range occurrenceIDs(*prev, loc, s) {
			if !keep[id] {
				p.Cancel = append(p.Cancel, id)
			}
		}
	}
	if paid(next) && (prev == nil || !paid(*prev)) {
		if m, ok := scheduled(next, PaymentDueSoon, s, loc); ok {
			p.Cancel = append(p.Cancel, m.ID)
		}
	}
	return p
}

// Event answers the message of an event trigger, unless the account switched it off; Plan
// uses it for the booking's triggers (payment.failed too: the snapshot's charge failures),
// and the source that is not a booking snapshot (owner.channel_conflict, from
// vros.integration.v1) calls it with its own occurrence, the conflict id.
func Event(account, trigger string, booking int64, occurrence string, s Settings, now time.Time) (Message, bool) {
	d, ok := Lookup(trigger)
	if !ok || d.Scheduled() || !s.For(trigger).Enabled {
		return Message{}, false
	}
	return Message{
		ID: ID(account, trigger, booking, occurrence), Account: account, Trigger: trigger,
		BookingID: booking, Occurrence: occurrence, To: d.To, Lang: langOf(d.To), SendAt: now.UTC(),
	}, true
}

// Schedule answers the scheduled messages of a reserved booking's stay that its account has
// switched on (payment.due_soon only while a balance is unpaid), at their instants whether
// past or not. A change of the settings re-plans with it: pending scheduled messages of the
// booking whose id is not in it are cancelled.
func Schedule(b contract.Booking, s Settings, loc *time.Location) []Message {
	if b.Status != "reserved" {
		return nil
	}
	if loc == nil {
		loc = time.UTC
	}
	var out []Message
	for _, d := range catalog {
		if !d.Scheduled() || !s.For(d.Name).Enabled || (d.Name == PaymentDueSoon && paid(b)) {
			continue
		}
		if m, ok := scheduled(b, d.Name, s, loc); ok {
			out = append(out, m)
		}
	}
	return out
}

// occurrenceIDs answers the ids every scheduled trigger would have for b's stay under s,
// switched on or not, paid or not: what to cancel when that stay goes.
func occurrenceIDs(b contract.Booking, loc *time.Location, s Settings) []string {
	var out []string
	for _, d := range catalog {
		if m, ok := scheduled(b, d.Name, s, loc); ok && d.Scheduled() {
			out = append(out, m.ID)
		}
	}
	return out
}

// scheduled answers a scheduled trigger's message for b's stay (false: no stay dates).
func scheduled(b contract.Booking, trigger string, s Settings, loc *time.Location) (Message, bool) {
	d, _ := Lookup(trigger)
	checkin, err1 := pricing.ParseDate(b.Checkin)
	checkout, err2 := pricing.ParseDate(b.Checkout)
	if err1 != nil || err2 != nil || !d.Scheduled() {
		return Message{}, false
	}
	set := s.For(trigger)
	var day pricing.Date
	switch d.Anchor {
	case AnchorCheckin, AnchorDue:
		// The snapshot carries no payment schedule: the balance is taken as due on
		// arrival, the latest any installment falls.
		day = checkin.AddDays(-set.Days)
	case AnchorCheckout:
		day = checkout.AddDays(-set.Days)
	case AnchorAfterOut:
		day = checkout.AddDays(set.Days)
	}
	occurrence := day.String() + "T" + set.At.String()
	return Message{
		ID: ID(b.AccountID, trigger, b.BookingID, occurrence), Account: b.AccountID,
		Trigger: trigger, BookingID: b.BookingID, PropertyID: b.PropertyID, BrandID: b.BrandID,
		Occurrence: occurrence, To: d.To, Lang: langOf(d.To), Scheduled: true,
		SendAt: LocalInstant(day, set.At, loc),
	}, true
}

// LocalInstant answers the UTC instant of a local date and time of day in loc. A time the
// clocks skip (02:30 on the spring change) is the time after the jump (03:30); a time that
// happens twice (the autumn change) is what Go's time.Date answers, the second one.
func LocalInstant(d pricing.Date, at pricing.Clock, loc *time.Location) time.Time {
	y, m, dd := d.Civil()
	return time.Date(y, m, dd, int(at)/60, int(at)%60, 0, 0, loc).UTC()
}

func langOf(to Recipient) Lang {
	if to == Owner {
		return LangAccount
	}
	return LangBooking
}

// modified: the stay, the guests or the total changed.
func modified(prev, next contract.Booking) bool {
	return prev.Checkin != next.Checkin || prev.Checkout != next.Checkout ||
		prev.Adults != next.Adults || prev.Children != next.Children ||
		prev.Currency != next.Currency || !sameAmount(prev.GrandTotal, next.GrandTotal)
}

// receivedPayments answers the ids of payments received (not refunds, not captured
// deposits) of a positive amount in next and not in prev.
func receivedPayments(prev *contract.Booking, next contract.Booking) []int64 {
	had := make(map[int64]bool)
	if prev != nil {
		for _, p := range prev.Payments {
			had[p.PaymentID] = true
		}
	}
	var out []int64
	for _, p := range next.Payments {
		if had[p.PaymentID] || p.Kind != "" {
			continue
		}
		if a, ok := amount(p.Amount); ok && a.Sign() > 0 {
			out = append(out, p.PaymentID)
		}
	}
	return out
}

// failedCharges are the ids of the automatic charges the card refused that next lists and
// prev does not, while the booking is reserved (a failure first seen on a cancelled booking
// asks the guest for nothing).
func failedCharges(prev *contract.Booking, next contract.Booking) []string {
	if next.Status != "reserved" {
		return nil
	}
	had := make(map[string]bool)
	if prev != nil {
		for _, f := range prev.ChargeFailures {
			had[f.ID] = true
		}
	}
	var out []string
	for _, f := range next.ChargeFailures {
		if f.ID != "" && !had[f.ID] {
			had[f.ID] = true
			out = append(out, f.ID)
		}
	}
	return out
}

// ChargeFailure is the failed charge a payment.failed message of b names (its occurrence):
// what the sender shows as the attempt (amount, reason); false when b does not list it.
func ChargeFailure(b contract.Booking, occurrence string) (contract.BookingChargeFailure, bool) {
	for _, f := range b.ChargeFailures {
		if f.ID == occurrence {
			return f, true
		}
	}
	return contract.BookingChargeFailure{}, false
}

func depositStatus(b *contract.Booking) string {
	if b == nil || b.Deposit == nil {
		return ""
	}
	return b.Deposit.Status
}

// depositHeld: the hold was placed (a renewal keeps the status: no new message).
func depositHeld(prev *contract.Booking, next contract.Booking) bool {
	return depositStatus(&next) == contract.DepositHeld && depositStatus(prev) != contract.DepositHeld
}

// depositReleased: a hold placed ended, released or captured (the rest released). A hold
// never placed and released by a cancellation sends nothing.
func depositReleased(prev *contract.Booking, next contract.Booking) bool {
	ended := func(s string) bool { return s == contract.DepositReleased || s == contract.DepositCaptured }
	return ended(depositStatus(&next)) && next.Deposit.HeldAt != nil && !ended(depositStatus(prev))
}

// paid: the payments (refunds count, a captured deposit does not) cover the grand total.
func paid(b contract.Booking) bool {
	total, ok := amount(b.GrandTotal)
	if !ok {
		return false
	}
	sum := new(big.Rat)
	for _, p := range b.Payments {
		if p.Kind == contract.PaymentKindDepositCapture {
			continue
		}
		if a, ok := amount(p.Amount); ok {
			sum.Add(sum, a)
		}
	}
	return sum.Cmp(total) >= 0
}

func amount(s string) (*big.Rat, bool) {
	if s == "" {
		return nil, false
	}
	return new(big.Rat).SetString(s)
}

func sameAmount(a, b string) bool {
	x, ok1 := amount(a)
	y, ok2 := amount(b)
	if !ok1 || !ok2 {
		return a == b
	}
	return x.Cmp(y) == 0
}
