// Package intake turns events into planned messages (docs/messaging.md, "Intake"): the
// consumer handlers of vros.booking.v1 (each booking snapshot planned against the last one
// applied, trigger.Plan) and vros.property.v1 (the property and account views, and account
// erasure), the event triggers whose sources are not booking snapshots (Event), and the
// re-plan of a settings change (Replan).
//
// A booking event is applied in this order, under the booking's planning lease:
//
//  1. read the snapshot last applied (prev); an event not newer plans nothing;
//  2. plan (trigger.Plan) under the account's trigger settings, in the property's zone;
//  3. insert the messages to create (insert-once by natural id);
//  4. cancel the scheduled ones the plan names, and every scheduled one when it asks;
//  5. save the event's snapshot (kept only if newer);
//  6. if the account was erased meanwhile, erase what 3 and 5 wrote (afterErasure).
//
// The snapshot is the record that a version was planned, so it is written last: a crash at
// any step before 5 leaves prev as it was, and the redelivered event is planned again against
// it into the same ids (ids depend on the snapshots, the settings and the zone, never on the
// clock), which 3 and 4 apply as no-ops where done. Saving first would lose the messages of a
// crash between 5 and 3: the redelivery would find its own version applied and plan nothing.
// A crash after 5 leaves everything done; the redelivery plans nothing.
package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/trigger"
)

// Deps are what intake works with. An account's erasure empties every store named here.
type Deps struct {
	Messages     *store.Messages
	Suppressions *store.Suppressions
	Views        *store.Views
	Snapshots    *store.Snapshots
	// Settings answers an account's messaging settings (the api's *store.Settings: its
	// defaults when the account saved none), and erases them with the account.
	Settings interface {
		Get(ctx context.Context, account string) (store.AccountSettings, error)
		Erase(ctx context.Context, account string) error
	}
	// Templates are the accounts' templates, erased with the account.
	Templates *store.Templates
	Now       func() time.Time // nil: time.Now
}

// Intake applies events to the messages.
type Intake struct {
	d     Deps
	zones sync.Map // IANA name → *time.Location (nil: not a zone)
	// crash, in tests only, is called after each step of a booking's plan ("inserted",
	// "cancelled", "saved"); an error it returns stops the handler there, as a crash would.
	crash func(step string) error
}

func (in *Intake) at(step string) error {
	if in.crash == nil {
		return nil
	}
	return in.crash(step)
}

// New returns the intake of d.
func New(d Deps) *Intake {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Intake{d: d}
}

// Booking is the events.Handler of vros.booking.v1: each booking snapshot is planned against
// the last one applied (the package's doc gives the order of the steps). Blocks are not
// messaged; a booking's tombstone (its account erased) erases the booking's messages and
// snapshot.
func (in *Intake) Booking(ctx context.Context, m kafka.Message) error {
	if events.IsTombstone(m) {
		return in.forgetBookingKey(ctx, string(m.Key))
	}
	var data json.RawMessage
	e, err := events.Decode(m.Value, &data)
	if err != nil {
		return events.Permanent(err)
	}
	if !strings.HasPrefix(e.Type(), contract.BookingTypePrefix) {
		return nil // a block
	}
	var b contract.Booking
	if err := json.Unmarshal(data, &b); err != nil {
		return events.Permanent(fmt.Errorf("booking snapshot: %w", err))
	}
	if b.AccountID == "" || b.BookingID == 0 {
		return events.Permanent(errors.New("booking snapshot without identity"))
	}
	return in.ApplyBooking(ctx, b)
}

// ApplyBooking plans one booking snapshot (what Booking does with an event's).
func (in *Intake) ApplyBooking(ctx context.Context, next contract.Booking) error {
	account, id := next.AccountID, next.BookingID
	if gone, err := in.d.Views.Erased(ctx, account); err != nil || gone {
		return err
	}
	err := in.d.Snapshots.Planning(ctx, account, id, func() error {
		prev, err := in.d.Snapshots.Get(ctx, account, id)
		if err != nil {
			return err
		}
		if prev != nil && next.Version <= prev.Version {
			return nil // a replay, or older than what was applied: nothing to plan
		}
		set, err := in.d.Settings.Get(ctx, account)
		if err != nil {
			return fmt.Errorf("messaging settings: %w", err)
		}
		loc, err := in.location(ctx, account, next.PropertyID)
		if err != nil {
			return err
		}
		now := in.d.Now()
		p := trigger.Plan(prev, next, set.Triggers, loc, now)
		if err := in.apply(ctx, account, id, p, now); err != nil {
			return err
		}
		if _, err = in.d.Snapshots.Save(ctx, next); err != nil {
			return err
		}
		return in.at("saved")
	})
	if err != nil {
		return fmt.Errorf("plan booking %d: %w", id, err)
	}
	return in.afterErasure(ctx, account)
}

// afterErasure closes the race of a write with the account's erasure: the erasure marks the
// account first, then deletes; a writer writes, then looks for the mark, and if it is there
// deletes again what the account's messages and snapshots hold. One of the two sides sees the
// other, so nothing written survives an erasure.
func (in *Intake) afterErasure(ctx context.Context, account string) error {
	if gone, err := in.d.Views.Erased(ctx, account); err != nil || !gone {
		return err
	}
	if err := in.d.Messages.Erase(ctx, account); err != nil {
		return err
	}
	return in.d.Snapshots.Erase(ctx, account)
}

// apply writes a plan: the messages to create, then the cancels. Plan's creates and cancels
// never share an id, and a cancelled booking creates no scheduled message, so their order
// does not change the end state; creating first never leaves a moment with neither the old
// reminder nor the new one.
func (in *Intake) apply(ctx context.Context, account string, booking int64, p trigger.Planned, now time.Time) error {
	if len(p.Create) > 0 {
		if _, err := in.d.Messages.Insert(ctx, p.Create, nil, now); err != nil {
			return err
		}
	}
	if err := in.at("inserted"); err != nil {
		return err
	}
	if len(p.Cancel) > 0 {
		if err := in.d.Messages.Cancel(ctx, account, p.Cancel, now); err != nil {
			return err
		}
	}
	if p.CancelScheduled {
		if err := in.d.Messages.CancelScheduled(ctx, account, booking, nil, now); err != nil {
			return err
		}
	}
	return in.at("cancelled")
}

// location is the zone a booking's messages are scheduled in: the property's, else the
// account's, else UTC (as booking-svc's). A name that is not a zone is passed over.
func (in *Intake) location(ctx context.Context, account string, property int64) (*time.Location, error) {
	p, ok, err := in.d.Views.Property(ctx, account, property)
	if err != nil {
		return nil, err
	}
	if loc := in.zone(p.Timezone); ok && loc != nil {
		return loc, nil
	}
	a, ok, err := in.d.Views.Account(ctx, account)
	if err != nil {
		return nil, err
	}
	if loc := in.zone(a.Timezone); ok && loc != nil {
		return loc, nil
	}
	return time.UTC, nil
}

func (in *Intake) zone(name string) *time.Location {
	if name == "" || name == "Local" {
		return nil
	}
	if l, ok := in.zones.Load(name); ok {
		return l.(*time.Location)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		loc = nil
	}
	in.zones.Store(name, loc)
	return loc
}

// forgetBookingKey applies a tombstone of vros.booking.v1: "<account>:booking:<id>" erases
// the booking's messages and snapshot; a block's key held nothing here.
func (in *Intake) forgetBookingKey(ctx context.Context, key string) error {
	parts := strings.Split(key, ":")
	if len(parts) != 3 || parts[0] == "" || parts[1] != "booking" {
		return nil
	}
	id, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return nil
	}
	return in.eraseBooking(ctx, parts[0], id)
}

// eraseBooking deletes a booking's messages, then its snapshot: a crash between leaves the
// snapshot, and the tombstone's redelivery erases both.
func (in *Intake) eraseBooking(ctx context.Context, account string, booking int64) error {
	if err := in.d.Messages.EraseBooking(ctx, account, booking); err != nil {
		return err
	}
	return in.d.Snapshots.Delete(ctx, account, booking)
}

// Property is the events.Handler of vros.property.v1: it keeps the property and account
// views (newest version only; a deleted property is kept as deleted), and an account's
// erasure erases the account's messages, suppressions, views and snapshots. A tombstone
// forgets its key's view.
func (in *Intake) Property(ctx context.Context, m kafka.Message) error {
	if events.IsTombstone(m) {
		return in.forgetPropertyKey(ctx, string(m.Key))
	}
	var data json.RawMessage
	e, err := events.Decode(m.Value, &data)
	if err != nil {
		return events.Permanent(err)
	}
	switch t := e.Type(); {
	case t == contract.AccountErased:
		var d contract.AccountErasure
		if err := json.Unmarshal(data, &d); err != nil || d.AccountID == "" {
			return events.Permanent(fmt.Errorf("account erasure: %v", err))
		}
		return in.EraseAccount(ctx, d.AccountID, d.ErasedAt)
	case t == contract.SettingsUpdated:
		var s contract.Settings
		if err := json.Unmarshal(data, &s); err != nil || s.AccountID == "" {
			return events.Permanent(fmt.Errorf("settings snapshot: %v", err))
		}
		_, err := in.d.Views.SaveAccount(ctx, store.AccountOf(s))
		return err
	case strings.HasPrefix(t, contract.PropertyTypePrefix):
		var p contract.Property
		if err := json.Unmarshal(data, &p); err != nil || p.AccountID == "" || p.PropertyID == 0 {
			return events.Permanent(fmt.Errorf("property snapshot: %v", err))
		}
		_, err := in.d.Views.SaveProperty(ctx, store.PropertyOf(p), p.Deleted)
		return err
	}
	return nil
}

// forgetPropertyKey applies a tombstone of vros.property.v1: "<account>:settings" forgets
// the account's view, "<account>:<property>" the property's.
func (in *Intake) forgetPropertyKey(ctx context.Context, key string) error {
	account, rest, ok := strings.Cut(key, ":")
	if !ok || account == "" {
		return nil
	}
	if rest == "settings" {
		return in.d.Views.ForgetAccount(ctx, account)
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	if err != nil {
		return nil // "<account>:account": the erasure event is never forgotten
	}
	return in.d.Views.ForgetProperty(ctx, account, id)
}

// EraseAccount forgets an erased account: marked erased first (its later events are then
// ignored, and a booking being planned at this moment erases what it wrote), then its
// messages, suppressions, snapshots, settings (with its SMTP credentials), templates and
// views deleted. Each step is idempotent: a crash midway and the event's redelivery finish
// the job.
func (in *Intake) EraseAccount(ctx context.Context, account string, at time.Time) error {
	if err := in.d.Views.EraseAccount(ctx, account, at); err != nil {
		return err
	}
	steps := []func(context.Context, string) error{in.d.Messages.Erase, in.d.Suppressions.Erase, in.d.Snapshots.Erase, in.d.Settings.Erase}
	if in.d.Templates != nil {
		steps = append(steps, in.d.Templates.Erase)
	}
	for _, erase := range steps {
		if err := erase(ctx, account); err != nil {
			return fmt.Errorf("erase account: %w", err)
		}
	}
	return nil
}

// Event inserts an event trigger's message (payment.failed, owner.channel_conflict) from its
// source, once per occurrence, unless the account switched the trigger off; detail is what
// the template shows of it. The booking's property and brand come from its snapshot when
// intake has one.
func (in *Intake) Event(ctx context.Context, account, trig string, booking int64, occurrence string, detail map[string]string) error {
	d, ok := trigger.Lookup(trig)
	if !ok || d.Scheduled() {
		return fmt.Errorf("intake: %q is not an event trigger", trig)
	}
	if account == "" || occurrence == "" {
		return errors.New("intake: an event needs its account and occurrence")
	}
	if gone, err := in.d.Views.Erased(ctx, account); err != nil || gone {
		return err
	}
	set, err := in.d.Settings.Get(ctx, account)
	if err != nil {
		return fmt.Errorf("messaging settings: %w", err)
	}
	now := in.d.Now()
	m, ok := trigger.Event(account, trig, booking, occurrence, set.Triggers, now)
	if !ok {
		return nil // switched off
	}
	if booking != 0 {
		b, err := in.d.Snapshots.Get(ctx, account, booking)
		if err != nil {
			return err
		}
		if b != nil {
			m.PropertyID, m.BrandID = b.PropertyID, b.BrandID
		}
	}
	if _, err := in.d.Messages.Insert(ctx, []trigger.Message{m}, detail, now); err != nil {
		return err
	}
	return in.afterErasure(ctx, account)
}

// Replan re-plans the scheduled messages of the account's live bookings after a change of its
// trigger settings: for each, under its planning lease, the stay's messages under the new
// settings (trigger.Schedule) are inserted — one past due is sent at once if the stay has
// not started, else skipped, as Plan does — then every pending scheduled message of the
// booking whose id is not among them is cancelled. A message whose id the change keeps is
// left as it is (never a second reminder beside the pending one). Inserting first never
// leaves a booking without its reminder; calling Replan again changes nothing.
func (in *Intake) Replan(ctx context.Context, account string) error {
	set, err := in.d.Settings.Get(ctx, account)
	if err != nil {
		return fmt.Errorf("messaging settings: %w", err)
	}
	var ids []int64
	if err := in.d.Snapshots.Bookings(ctx, account, func(b contract.Booking) error {
		ids = append(ids, b.BookingID)
		return nil
	}); err != nil {
		return err
	}
	for _, id := range ids {
		err := in.d.Snapshots.Planning(ctx, account, id, func() error {
			// Read again under the lease: an event may have moved or cancelled it since.
			b, err := in.d.Snapshots.Get(ctx, account, id)
			if err != nil || b == nil || b.Status != "reserved" {
				return err
			}
			loc, err := in.location(ctx, account, b.PropertyID)
			if err != nil {
				return err
			}
			now := in.d.Now()
			msgs := trigger.Schedule(*b, set.Triggers, loc)
			keep := make([]string, 0, len(msgs))
			create := make([]trigger.Message, 0, len(msgs))
			started := stayStarted(*b, loc, now)
			for _, m := range msgs {
				keep = append(keep, m.ID)
				if m.SendAt.Before(now) {
					if started {
						continue
					}
					m.SendAt = now
				}
				create = append(create, m)
			}
			if len(create) > 0 {
				if _, err := in.d.Messages.Insert(ctx, create, nil, now); err != nil {
					return err
				}
			}
			return in.d.Messages.CancelScheduled(ctx, account, id, keep, now)
		})
		if err != nil {
			return fmt.Errorf("re-plan booking %d: %w", id, err)
		}
	}
	return nil
}

// stayStarted: the property's local date is the check-in date or later (or the check-in
// cannot be read).
func stayStarted(b contract.Booking, loc *time.Location, now time.Time) bool {
	checkin, err := pricing.ParseDate(b.Checkin)
	return err != nil || !pricing.DateOf(now.In(loc)).Before(checkin)
}
