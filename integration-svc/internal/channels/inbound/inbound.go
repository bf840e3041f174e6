package inbound

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
)

// Processor applies the revisions of channel reservations. Every method is safe for
// concurrent use; one processor per connection at a time works (Leases), in this replica or
// another.
type Processor struct {
	Connections channel.Connections
	Log         channel.Log
	Conflicts   channel.Conflicts
	Revisions   Revisions
	Leases      Leases
	Booking     Booking
	Hooks       Emitter
	// Adapters by name (channel.Channex, channel.OpenTravel).
	Adapters map[string]channel.Adapter
	Logger   *slog.Logger
	// Lease is a processor's hold on a connection: longer than one pull with its applies
	// and acks. Holder names this replica's processor.
	Lease  time.Duration
	Holder string
	// Wait is how long a pushed message waits for the connection's processor to be free.
	Wait time.Duration
	// Crash, in tests only, is called at each step of a revision ("applied", "acked") with
	// its id; it may stop the processor there for good, as if the process died.
	Crash func(step, revision string)
	Now   func() time.Time
}

func (p *Processor) now() time.Time {
	if p.Now != nil {
		return p.Now().UTC()
	}
	return time.Now().UTC()
}

func (p *Processor) logger() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.Default()
}

func (p *Processor) at(step, revision string) {
	if p.Crash != nil {
		p.Crash(step, revision)
	}
}

// ErrBusy: another processor holds the connection.
var ErrBusy = errors.New("another processor holds the connection")

// hold takes the connection's lease, waiting up to wait for it (0: one try), and returns
// its release.
func (p *Processor) hold(ctx context.Context, c channel.Connection, wait time.Duration) (func(), error) {
	deadline := time.Now().Add(wait)
	pause := 10 * time.Millisecond
	holder := p.Holder + ":" + rand.Text() // each hold its own, even in one replica
	for {
		ok, err := p.Leases.Take(ctx, c.Account, c.ID, holder, time.Now().Add(p.Lease))
		if err != nil {
			return nil, err
		}
		if ok {
			// Renewed every third of the lease while held, so that a long pull keeps it.
			stop := make(chan struct{})
			renewed := make(chan struct{})
			go func() {
				defer close(renewed)
				tick := time.NewTicker(p.Lease / 3)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-ctx.Done():
						return
					case <-tick.C:
						if mine, err := p.Leases.Renew(ctx, c.Account, c.ID, holder, time.Now().Add(p.Lease)); err != nil || !mine {
							p.logger().Warn("channel: renewing a connection's lease", "account", c.Account, "connection", c.ID, "held", mine, "err", err)
						}
					}
				}
			}()
			return func() {
				close(stop)
				<-renewed
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				if err := p.Leases.Release(rctx, c.Account, c.ID, holder); err != nil {
					p.logger().Warn("channel: releasing a connection's lease", "account", c.Account, "connection", c.ID, "err", err)
				}
			}, nil
		}
		if !time.Now().Add(pause).Before(deadline) {
			return nil, ErrBusy
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 200*time.Millisecond)
	}
}

// Receive processes the revisions a message pushed to c's inbound route carries, in their
// order, and answers what became of each (for the adapter's Reply). An error: the message
// could not be processed now (nothing was acknowledged; the sender sends it again).
func (p *Processor) Receive(ctx context.Context, c channel.Connection, revs []channel.Revision) ([]channel.Applied, error) {
	release, err := p.hold(ctx, c, p.Wait)
	if err != nil {
		return nil, err
	}
	defer release()
	out, err := p.process(ctx, c, revs)
	if err != nil {
		return nil, err
	}
	for _, a := range out {
		if a.RevisionID == "" {
			return nil, errors.New("a revision of the message could not be applied now")
		}
	}
	return out, nil
}

// Pull reads c's revisions feed, applies what it serves and acknowledges each revision
// whose outcome is durable. ErrBusy: another processor holds the connection.
func (p *Processor) Pull(ctx context.Context, c channel.Connection) error {
	a, ok := p.Adapters[c.Adapter]
	if !ok {
		return fmt.Errorf("connection %d: no adapter %q", c.ID, c.Adapter)
	}
	release, err := p.hold(ctx, c, 0)
	if err != nil {
		return err
	}
	defer release()
	revs, err := a.PullRevisions(ctx, c, p.recorder(ctx, c))
	if err != nil {
		return fmt.Errorf("connection %d: reading the revisions feed: %w", c.ID, err)
	}
	out, err := p.process(ctx, c, revs)
	if err != nil {
		return err
	}
	var failed error
	for i, r := range revs {
		if out[i].RevisionID == "" {
			failed = errors.Join(failed, fmt.Errorf("revision %s: not applied yet", r.RevisionID))
			continue // not durable: served again by the next pull
		}
		if err := a.Ack(ctx, c, r, p.recorder(ctx, c)); err != nil {
			failed = errors.Join(failed, fmt.Errorf("revision %s: %w", r.RevisionID, err))
			continue
		}
		p.at("acked", r.RevisionID)
	}
	return failed
}

// process stores revs (for c), applies every reservation they touch and answers, per
// revision, its outcome: RevisionID "" when it is not durable yet (a transient failure;
// left for the next time), a booking, a conflict, or BookingID 0 without a conflict when it
// is held (stored: it waits for its reservation's new revision) or cancels a reservation
// that never became a booking. An error: the revisions could not even be stored.
func (p *Processor) process(ctx context.Context, c channel.Connection, revs []channel.Revision) ([]channel.Applied, error) {
	var reservations []string
	for i := range revs {
		revs[i].ConnectionID = c.ID
		r := revs[i]
		st, added, err := p.Revisions.Add(ctx, c.Account, r, p.now())
		if err != nil {
			return nil, fmt.Errorf("store revision %s: %w", r.RevisionID, err)
		}
		if !added {
			p.append(ctx, c, r, 0, channel.StatusDuplicate, "revision "+r.RevisionID+" was received before ("+st.State+")", "")
		}
		if !slices.Contains(reservations, r.ReservationID) {
			reservations = append(reservations, r.ReservationID)
		}
	}
	for _, res := range reservations {
		if err := p.applyReservation(ctx, c, res); err != nil {
			// Transient: the reservation's revisions stay as they are, for the next time.
			p.logger().Warn("channel: applying a reservation", "account", c.Account, "connection", c.ID, "reservation", res, "err", err)
		}
	}
	out := make([]channel.Applied, len(revs))
	for i, r := range revs {
		st, err := p.Revisions.Get(ctx, c.Account, c.ID, r.RevisionID)
		if err != nil {
			return nil, err
		}
		switch st.State {
		case StateApplied:
			out[i] = channel.Applied{RevisionID: r.RevisionID, BookingID: st.BookingID}
		case StateHeld:
			out[i] = channel.Applied{RevisionID: r.RevisionID}
		case StateConflict:
			k, err := p.Conflicts.Get(ctx, c.Account, st.ConflictID)
			if err != nil {
				return nil, err
			}
			out[i] = channel.Applied{RevisionID: r.RevisionID, Conflict: &k}
		}
	}
	return out, nil
}

// applyReservation applies the pending revisions of a reservation in order until one fails
// for now.
func (p *Processor) applyReservation(ctx context.Context, c channel.Connection, reservation string) error {
	pending, err := p.Revisions.Pending(ctx, c.Account, c.ID, reservation)
	if err != nil {
		return err
	}
	for _, s := range pending {
		if err := p.apply(ctx, c, s); err != nil {
			return err
		}
	}
	return nil
}

// apply applies one stored revision and records its outcome.
func (p *Processor) apply(ctx context.Context, c channel.Connection, s Stored) error {
	r := s.Revision
	req := Request{ConnectionID: c.ID, Channel: r.Channel, ReservationID: r.ReservationID, RevisionID: r.RevisionID, Order: r.Order,
		Status: r.Status, Checkin: r.Checkin, Checkout: r.Checkout, Adults: r.Adults, Children: r.Children, Currency: r.Currency,
		Total: r.Total, Commission: r.Commission, Guest: r.Guest, Notes: r.Notes}
	if r.Status != channel.RevisionCancelled {
		m, err := p.Connections.MappingByRoom(ctx, c.Account, c.ID, r.RemotePropertyID, r.RoomTypeID)
		if errors.Is(err, channel.ErrNotFound) {
			return p.conflict(ctx, c, s, 0, &Refusal{Reason: channel.ReasonUnknownRoomType, Message: fmt.Sprintf(
				"no property is mapped to room type %q of property %q", r.RoomTypeID, r.RemotePropertyID)})
		}
		if err != nil {
			return err
		}
		req.PropertyID = m.PropertyID
		// A rate plan not mapped books the standard plan: the channel sold the stay, and
		// the booking must hold its nights whatever the plan.
		req.RatePlanID, _ = m.LocalPlan(r.RemoteRatePlanID)
	}
	res, err := p.Booking.Apply(ctx, c.Account, req)
	var ref *Refusal
	switch {
	case errors.As(err, &ref):
		return p.conflict(ctx, c, s, req.PropertyID, ref)
	case errors.Is(err, ErrReservationUnknown):
		if s.State == StateHeld {
			return nil
		}
		if err := p.Revisions.Settle(ctx, c.Account, c.ID, r.RevisionID, StateHeld, 0, 0); err != nil {
			return err
		}
		p.append(ctx, c, r, req.PropertyID, channel.StatusHeld, "", "the reservation has no booking yet: held until its new revision is applied")
		return nil
	case err != nil:
		p.append(ctx, c, r, req.PropertyID, channel.StatusError, "", err.Error())
		return err
	}
	p.at("applied", r.RevisionID)
	if err := p.Revisions.Settle(ctx, c.Account, c.ID, r.RevisionID, StateApplied, res.BookingID, 0); err != nil {
		return err
	}
	answer, _ := json.Marshal(map[string]any{"booking_id": res.BookingID, "status": res.Status, "version": res.Version, "applied": res.Applied})
	p.append(ctx, c, r, req.PropertyID, channel.StatusOK, string(answer), "")
	return nil
}

// conflictData is the payload of the webhook event channel.conflict: ids, dates and money,
// never the guest (docs/webhooks.md).
type conflictData struct {
	ConflictID    int64    `json:"conflict_id"`
	ConnectionID  int64    `json:"connection_id"`
	ReservationID string   `json:"reservation_id"`
	RevisionID    string   `json:"revision_id"`
	Channel       string   `json:"channel"`
	PropertyID    int64    `json:"property_id"`
	Checkin       string   `json:"checkin"`
	Checkout      string   `json:"checkout"`
	Reason        string   `json:"reason"`
	Nights        []string `json:"nights"`
	BookingIDs    []int64  `json:"booking_ids"`
	Total         string   `json:"total"`
	Currency      string   `json:"currency"`
}

// conflict records revision s as a conflict: stored once, raised as channel.conflict (under
// an id of the revision's, so raising it again after a stop delivers it once), logged, and
// the revision settled.
func (p *Processor) conflict(ctx context.Context, c channel.Connection, s Stored, pid int64, ref *Refusal) error {
	r := s.Revision
	nights, ids := ref.Nights, ref.BookingIDs
	if nights == nil {
		nights = []string{}
	}
	if ids == nil {
		ids = []int64{}
	}
	msg := ref.Message
	if ref.Field != "" && !strings.HasPrefix(msg, ref.Field) {
		msg = ref.Field + ": " + msg
	}
	k, _, err := p.Conflicts.Record(ctx, channel.Conflict{Account: c.Account, ConnectionID: c.ID, ReservationID: r.ReservationID,
		RevisionID: r.RevisionID, Channel: r.Channel, PropertyID: pid, Checkin: r.Checkin, Checkout: r.Checkout, Reason: ref.Reason,
		Message: msg, Nights: nights, BookingIDs: ids, GuestName: strings.TrimSpace(r.Guest.FirstName + " " + r.Guest.LastName),
		Total: r.Total, Currency: r.Currency, CreatedAt: p.now()})
	if err != nil {
		return fmt.Errorf("record the conflict of revision %s: %w", r.RevisionID, err)
	}
	data, err := json.Marshal(conflictData{ConflictID: k.ID, ConnectionID: c.ID, ReservationID: r.ReservationID, RevisionID: r.RevisionID,
		Channel: r.Channel, PropertyID: k.PropertyID, Checkin: k.Checkin, Checkout: k.Checkout, Reason: k.Reason, Nights: k.Nights,
		BookingIDs: k.BookingIDs, Total: k.Total, Currency: k.Currency})
	if err != nil {
		return err
	}
	key := c.Account + ":channel:" + strconv.FormatInt(c.ID, 10)
	if err := p.Hooks.Emit(ctx, webhook.Event{ID: webhook.MessageID(key, 0, webhook.ChannelConflict, r.RevisionID), Account: c.Account,
		Type: webhook.ChannelConflict, PropertyID: k.PropertyID, At: k.CreatedAt, Data: data}); err != nil {
		return fmt.Errorf("raise the conflict of revision %s: %w", r.RevisionID, err)
	}
	if err := p.Revisions.Settle(ctx, c.Account, c.ID, r.RevisionID, StateConflict, 0, k.ID); err != nil {
		return err
	}
	p.append(ctx, c, r, pid, channel.StatusConflict, "", ref.Reason+": "+msg)
	return nil
}

// append logs one revision's outcome (the revision as received, card data masked by its
// adapter, as the request).
func (p *Processor) append(ctx context.Context, c channel.Connection, r channel.Revision, pid int64, status, response, errText string) {
	e := channel.LogEntry{Account: c.Account, ConnectionID: c.ID, PropertyID: pid, Direction: "in", Kind: channel.KindReservation,
		Status: status, Request: string(r.Raw), Response: response, Error: errText, At: p.now()}
	if e.Request == "" {
		e.Request = fmt.Sprintf(`{"revision_id":%q,"reservation_id":%q,"status":%q}`, r.RevisionID, r.ReservationID, r.Status)
	}
	if err := p.Log.Append(ctx, e); err != nil {
		p.logger().Warn("channel: writing the log", "account", c.Account, "connection", c.ID, "err", err)
	}
}

// recorder logs the requests an adapter makes for c.
func (p *Processor) recorder(ctx context.Context, c channel.Connection) func(channel.Exchange) {
	return func(x channel.Exchange) {
		e := channel.LogEntry{Account: c.Account, ConnectionID: c.ID, Direction: "out", Kind: x.Kind, Status: channel.StatusOK,
			HTTPStatus: x.HTTPStatus, Request: string(x.Request), Response: string(x.Response), At: p.now(), Duration: x.Duration}
		if x.Err != nil {
			e.Status, e.Error = channel.StatusError, x.Err.Error()
		}
		if err := p.Log.Append(ctx, e); err != nil {
			p.logger().Warn("channel: writing the log", "account", c.Account, "connection", c.ID, "err", err)
		}
	}
}
