// Package derive turns the topics' snapshots into webhook events by comparing each snapshot
// with the last one kept of its key (docs/webhooks.md, "Events"). It is pure: the consumer
// (consumer.go) reads and keeps the snapshots and records the deliveries.
package derive

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/ifaceb"
)

// Change is one snapshot of key and the one kept before it (Old nil: first seen).
type Change struct {
	Key     string
	Account string
	Type    string // the CloudEvent type
	At      time.Time
	Old     []byte
	New     []byte
}

// Events derives the webhook events of c. Message ids depend only on the key, the new
// version and the event (and payment), so deriving again gives the same ids.
func Events(c Change) ([]webhook.Event, error) {
	switch {
	case c.Type == contract.BlockCreated || c.Type == contract.BlockUpdated || c.Type == contract.BlockDeleted:
		return blockEvents(c)
	case len(c.Type) > len(contract.BookingTypePrefix) && c.Type[:len(contract.BookingTypePrefix)] == contract.BookingTypePrefix:
		return bookingEvents(c)
	case len(c.Type) > len(contract.PropertyTypePrefix) && c.Type[:len(contract.PropertyTypePrefix)] == contract.PropertyTypePrefix:
		return propertyEvents(c)
	}
	return nil, nil
}

type builder struct {
	c       Change
	version int64
	out     []webhook.Event
}

func (b *builder) add(typ string, property, brand, booking int64, extra string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	b.out = append(b.out, webhook.Event{ID: webhook.MessageID(b.c.Key, b.version, typ, extra), Account: b.c.Account,
		Type: typ, PropertyID: property, BrandID: brand, BookingID: booking, At: b.c.At, Seq: len(b.out), Data: raw})
	return nil
}

func decode[T any](raw []byte) (*T, error) {
	if raw == nil {
		return nil, nil
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("decode snapshot: %w", err)
	}
	return &v, nil
}

// ---- bookings ----

func bookingEvents(c Change) ([]webhook.Event, error) {
	old, err := decode[contract.Booking](c.Old)
	if err != nil {
		return nil, err
	}
	cur, err := decode[contract.Booking](c.New)
	if err != nil {
		return nil, err
	}
	b := &builder{c: c, version: cur.Version}
	head := func() map[string]any {
		m := map[string]any{"booking_id": cur.BookingID, "property_id": cur.PropertyID, "status": cur.Status, "version": cur.Version}
		if cur.BrandID > 0 {
			m["brand_id"] = cur.BrandID
		}
		return m
	}
	// avail raises availability.changed for the nights of property; extra tells apart the
	// event of the property a booking moved away from (the new one's has "").
	avail := func(property int64, nights []string, extra string) error {
		if len(nights) == 0 {
			return nil
		}
		slices.Sort(nights)
		return b.add(webhook.AvailabilityChanged, property, cur.BrandID, 0, extra, map[string]any{
			"property_id": property, "start_date": nights[0], "end_date": nights[len(nights)-1],
			"reason": "booking", "booking_id": cur.BookingID})
	}
	var oldPays []contract.BookingPayment
	oldForm := false
	if old != nil {
		oldPays, oldForm = old.Payments, old.ArrivalFormCompleted
	}
	// paymentsAdded raises payment.added for the payments cur has and old had not. A
	// snapshot that also cancels the booking may hold payments made before the cancel (the
	// relay publishes the current state, so a payment and a cancel right after it coalesce):
	// with beforeCancel, only those not made after the cancellation, which are then reported
	// before booking.cancelled, in the order they happened.
	emitted := map[int64]bool{}
	paymentsAdded := func(beforeCancel bool) error {
		for _, p := range cur.Payments {
			if emitted[p.PaymentID] || slices.ContainsFunc(oldPays, func(o contract.BookingPayment) bool { return o.PaymentID == p.PaymentID }) ||
				beforeCancel && cur.CancelledAt != nil && p.CreatedAt.After(*cur.CancelledAt) {
				continue
			}
			emitted[p.PaymentID] = true
			if err := b.add(webhook.PaymentAdded, cur.PropertyID, cur.BrandID, cur.BookingID, strconv.FormatInt(p.PaymentID, 10), payment(cur, p)); err != nil {
				return err
			}
		}
		return nil
	}
	switch {
	case old == nil && cur.Status == "cancelled":
		// Created and cancelled before a snapshot of it was seen (the relay publishes the
		// current state, so a cancel right after the create coalesces with it): only a
		// reserved booking is ever cancelled, so it derives what both changes would have —
		// created, its nights taken, cancelled, its nights released — in that order.
		stay, err := stayNights(cur.Checkin, cur.Checkout)
		if err != nil {
			return nil, err
		}
		if err := b.add(webhook.BookingCreated, cur.PropertyID, cur.BrandID, cur.BookingID, "", head()); err != nil {
			return nil, err
		}
		if err := avail(cur.PropertyID, slices.Clone(stay), "taken"); err != nil {
			return nil, err
		}
		if err := paymentsAdded(true); err != nil {
			return nil, err
		}
		if err := b.add(webhook.BookingCancelled, cur.PropertyID, cur.BrandID, cur.BookingID, "", head()); err != nil {
			return nil, err
		}
		if err := avail(cur.PropertyID, stay, ""); err != nil {
			return nil, err
		}
	case old == nil:
		if err := b.add(webhook.BookingCreated, cur.PropertyID, cur.BrandID, cur.BookingID, "", head()); err != nil {
			return nil, err
		}
		if err := avail(cur.PropertyID, slices.Clone(cur.Nights), ""); err != nil {
			return nil, err
		}
	default:
		if old.Status != "cancelled" && cur.Status == "cancelled" {
			if err := paymentsAdded(true); err != nil {
				return nil, err
			}
			if err := b.add(webhook.BookingCancelled, cur.PropertyID, cur.BrandID, cur.BookingID, "", head()); err != nil {
				return nil, err
			}
		} else if rest(*old) != rest(*cur) {
			if err := b.add(webhook.BookingUpdated, cur.PropertyID, cur.BrandID, cur.BookingID, "", head()); err != nil {
				return nil, err
			}
		}
		if old.PropertyID != cur.PropertyID {
			// moved to another property: the old one's nights are freed, the new one's taken
			// (a cancelled booking holds none).
			if old.Status != "cancelled" {
				if err := avail(old.PropertyID, slices.Clone(old.Nights), "from:"+strconv.FormatInt(old.PropertyID, 10)); err != nil {
					return nil, err
				}
			}
			if cur.Status != "cancelled" {
				if err := avail(cur.PropertyID, slices.Clone(cur.Nights), ""); err != nil {
					return nil, err
				}
			}
		} else if err := avail(cur.PropertyID, symmetric(old.Nights, cur.Nights), ""); err != nil {
			return nil, err
		}
	}
	if err := paymentsAdded(false); err != nil {
		return nil, err
	}
	for _, p := range oldPays {
		if !slices.ContainsFunc(cur.Payments, func(o contract.BookingPayment) bool { return o.PaymentID == p.PaymentID }) {
			if err := b.add(webhook.PaymentRemoved, cur.PropertyID, cur.BrandID, cur.BookingID, strconv.FormatInt(p.PaymentID, 10), payment(cur, p)); err != nil {
				return nil, err
			}
		}
	}
	if !oldForm && cur.ArrivalFormCompleted {
		if err := b.add(webhook.ArrivalFormCompleted, cur.PropertyID, cur.BrandID, cur.BookingID, "",
			map[string]any{"booking_id": cur.BookingID, "property_id": cur.PropertyID}); err != nil {
			return nil, err
		}
	}
	for _, t := range moneyEvents(old, cur) {
		data := map[string]any{"booking_id": cur.BookingID, "property_id": cur.PropertyID}
		if t == webhook.RefundSucceeded || t == webhook.RefundFailed {
			data["refund"] = cur.Refund
		} else {
			data["deposit"] = cur.Deposit
		}
		if err := b.add(t, cur.PropertyID, cur.BrandID, cur.BookingID, "", data); err != nil {
			return nil, err
		}
	}
	return b.out, nil
}

// moneyEvents are the refund and deposit events of the change from old (nil: first seen)
// to cur, in the order they happen (docs/money.md): the refund's status becoming succeeded
// or failed; the deposit first held (its status becoming held, or a hold time first set,
// so that a hold and its release coalesced into one snapshot still report both), renewed
// (reauthorizations increased), then released, captured or failed.
func moneyEvents(old, cur *contract.Booking) []string {
	var out []string
	var oldRefund, oldDeposit string
	var oldHeld bool
	oldReauth := 0
	if old != nil && old.Refund != nil {
		oldRefund = old.Refund.Status
	}
	if old != nil && old.Deposit != nil {
		oldDeposit, oldHeld, oldReauth = old.Deposit.Status, old.Deposit.HeldAt != nil, old.Deposit.Reauthorizations
	}
	if f := cur.Refund; f != nil && f.Status != oldRefund {
		switch f.Status {
		case contract.RefundSucceeded:
			out = append(out, webhook.RefundSucceeded)
		case contract.RefundFailed:
			out = append(out, webhook.RefundFailed)
		}
	}
	d := cur.Deposit
	if d == nil {
		return out
	}
	if d.Status == contract.DepositHeld && oldDeposit != contract.DepositHeld || d.HeldAt != nil && !oldHeld && oldDeposit != contract.DepositHeld {
		out = append(out, webhook.DepositHeld)
	}
	if d.Reauthorizations > oldReauth {
		out = append(out, webhook.DepositReauthorized)
	}
	if d.Status != oldDeposit {
		switch d.Status {
		case contract.DepositReleased:
			out = append(out, webhook.DepositReleased)
		case contract.DepositCaptured:
			out = append(out, webhook.DepositCaptured)
		case contract.DepositFailed:
			out = append(out, webhook.DepositFailed)
		}
	}
	return out
}

// payment is a payment event's data: a refund (a negative amount) adds its kind and the
// payment it gives back, a captured deposit its kind.
func payment(bk *contract.Booking, p contract.BookingPayment) map[string]any {
	pm := map[string]any{"payment_id": p.PaymentID, "amount": p.Amount, "currency": p.Currency, "method": p.Method,
		"paid_at": p.PaidAt.UTC().Format(time.RFC3339)}
	if p.Kind != "" {
		pm["kind"] = p.Kind
	}
	if p.RefundOf != 0 {
		pm["refund_of"] = p.RefundOf
	}
	return map[string]any{"booking_id": bk.BookingID, "property_id": bk.PropertyID, "payment": pm}
}

// rest is the booking without what other events report (version, payments, form, refund,
// deposit), as JSON, so that any other difference is a booking.updated.
func rest(b contract.Booking) string {
	b.Version, b.Payments, b.ArrivalFormCompleted, b.Refund, b.Deposit = 0, nil, false, nil, nil
	raw, _ := json.Marshal(b)
	return string(raw)
}

// stayNights are the nights of a stay from checkin to the night before checkout.
func stayNights(checkin, checkout string) ([]string, error) {
	from, err := time.Parse(time.DateOnly, checkin)
	if err != nil {
		return nil, fmt.Errorf("booking checkin: %w", err)
	}
	to, err := time.Parse(time.DateOnly, checkout)
	if err != nil {
		return nil, fmt.Errorf("booking checkout: %w", err)
	}
	var out []string
	for d := from; d.Before(to) && len(out) < 3660; d = d.AddDate(0, 0, 1) {
		out = append(out, d.Format(time.DateOnly))
	}
	return out, nil
}

// symmetric returns the nights in exactly one of a and b.
func symmetric(a, b []string) []string {
	var out []string
	for _, n := range a {
		if !slices.Contains(b, n) {
			out = append(out, n)
		}
	}
	for _, n := range b {
		if !slices.Contains(a, n) {
			out = append(out, n)
		}
	}
	return out
}

// ---- blocks ----

func blockEvents(c Change) ([]webhook.Event, error) {
	old, err := decode[contract.Block](c.Old)
	if err != nil {
		return nil, err
	}
	cur, err := decode[contract.Block](c.New)
	if err != nil {
		return nil, err
	}
	b := &builder{c: c, version: cur.Version}
	var start, end string
	switch {
	case (old == nil || old.Deleted) && !cur.Deleted:
		start, end = cur.StartDate, cur.EndDate
	case old != nil && !old.Deleted && cur.Deleted:
		start, end = old.StartDate, old.EndDate
	case old != nil && !old.Deleted && !cur.Deleted && (old.StartDate != cur.StartDate || old.EndDate != cur.EndDate):
		start, end = min(old.StartDate, cur.StartDate), max(old.EndDate, cur.EndDate)
	default:
		return nil, nil
	}
	return b.out, b.add(webhook.AvailabilityChanged, cur.PropertyID, 0, 0, "", map[string]any{
		"property_id": cur.PropertyID, "start_date": start, "end_date": end, "reason": "block", "block_id": cur.BlockID})
}

// ---- properties ----

func propertyEvents(c Change) ([]webhook.Event, error) {
	old, err := decode[contract.Property](c.Old)
	if err != nil {
		return nil, err
	}
	cur, err := decode[contract.Property](c.New)
	if err != nil {
		return nil, err
	}
	b := &builder{c: c, version: cur.Version}
	// Each event carries the property as of its version in interface B's shape: the
	// property's summary (getpropertyinfo) or its rate table (getratetable); a deletion only
	// its ids. Unlike a booking (read at send time), a property holds no guest data to keep
	// out of the store.
	add := func(t string) error {
		data := map[string]any{"property_id": cur.PropertyID, "internal_code": cur.InternalCode, "version": cur.Version, "name": cur.Content.Name}
		switch t {
		case webhook.PropertyCreated, webhook.PropertyUpdated:
			data["property"] = ifaceb.SummaryOf(c.Account, *cur)
		case webhook.RatesUpdated:
			data["rate_table"] = ifaceb.RateTableOf(*cur)
		}
		return b.add(t, cur.PropertyID, 0, 0, "", data)
	}
	switch {
	case cur.Deleted:
		if old == nil || !old.Deleted {
			if err := add(webhook.PropertyDeleted); err != nil {
				return nil, err
			}
		}
		return b.out, nil
	case old == nil || old.Deleted:
		return b.out, add(webhook.PropertyCreated)
	}
	if revenue(*old) != revenue(*cur) {
		if err := add(webhook.RatesUpdated); err != nil {
			return nil, err
		}
	}
	if propertyRest(*old) != propertyRest(*cur) {
		if err := add(webhook.PropertyUpdated); err != nil {
			return nil, err
		}
	}
	return b.out, nil
}

// revenue is what rates.updated reports a change of, as JSON: the rates, the per-date
// prices, the rate plans, the restrictions and the channel markups (docs/rate-plans.md).
func revenue(p contract.Property) string {
	raw, _ := json.Marshal([]any{p.Rates, p.Prices, p.StandardPlan, p.RatePlans, p.Restrictions, p.ChannelMarkups})
	return string(raw)
}

// propertyRest is the property without its version, times, revenue (above) and iCal link
// hash (a link rotation is not a change of the property), as JSON.
func propertyRest(p contract.Property) string {
	p.Version, p.UpdatedAt, p.Rates, p.Prices, p.ICalTokenSHA256 = 0, time.Time{}, nil, nil, ""
	p.StandardPlan, p.RatePlans, p.Restrictions, p.ChannelMarkups = nil, nil, nil, nil
	raw, _ := json.Marshal(p)
	return string(raw)
}
