// Package api serves interface A's ical-feed resource (POST /internal/a/ical-feed,
// docs/ical.md, "Import"): an account's iCal feeds, their settings and their status.
package api

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/integration-svc/internal/ical/feed"
	"github.com/vros/vros/integration-svc/internal/ical/poller"
	"github.com/vros/vros/integration-svc/internal/targets"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
)

// API serves the resource.
type API struct {
	Store     feed.Repository
	Poller    *poller.Poller
	Booking   poller.Booking
	Policy    poller.Policy
	AllowHTTP bool
	Now       func() time.Time
	// Wait and Budget: SyncWait and Budget when 0.
	Wait, Budget time.Duration
}

// Register mounts the resource behind the signature check.
func (a *API) Register(app *fiber.App, auth *tenancy.Verifier) {
	g := app.Group("/internal/a", httpapi.Use(httpapi.EnvelopeA), tenancyfiber.Require(auth))
	g.Post("/ical-feed", a.handle)
}

func (a *API) now() time.Time {
	if a.Now != nil {
		return a.Now().UTC()
	}
	return time.Now().UTC()
}

// Time limits of the actions that poll (sync, delete, an update of url). Edge gives up on
// a request after 30 s, and a poll may take a 20 s fetch plus a booking-svc sync of up to
// its own deadline (25 s), so an action answers within Budget whatever the poll does: a
// poll not done by then goes on in the background and records its outcome.
const (
	// SyncWait is how long a sync waits for a poll of the feed already running.
	SyncWait = 10 * time.Second
	// Budget bounds the whole action.
	Budget = 24 * time.Second
)

func (a *API) limits() (wait, budget time.Duration) {
	wait, budget = SyncWait, Budget
	if a.Wait > 0 {
		wait = a.Wait
	}
	if a.Budget > 0 {
		budget = a.Budget
	}
	return wait, budget
}

var idRule = fields.Int{Required: true, Min: 1, Max: 1 << 53}

func (a *API) handle(c *fiber.Ctx) error {
	ctx := c.UserContext()
	start := time.Now()
	wait, budget := a.limits()
	// left is what remains of the budget for the poll (a little kept for the answer).
	left := func() time.Duration { return max(budget-time.Since(start), time.Millisecond) }
	account := tenancyfiber.From(c).AccountID
	var v fields.Violations
	o := fields.Parse(c.Body(), "", &v)
	action, _ := o.String("action", fields.Str{Required: true, OneOf: []string{"create", "list", "get", "update", "delete", "sync"}})
	if err := v.Err(); err != nil {
		return err
	}
	switch action {
	case "create":
		return a.create(c, ctx, account, o, &v)
	case "list":
		f := o.Object("feed", false)
		code, _ := f.String("internal_code", fields.Str{Max: 10})
		if err := v.Err(); err != nil {
			return err
		}
		var pid int64
		if code != "" {
			id, err := a.property(ctx, account, code)
			if err != nil {
				return err
			}
			pid = id
		}
		list, err := a.Store.List(ctx, account, pid)
		if err != nil {
			return err
		}
		out := make([]feedJSON, 0, len(list))
		for i := range list {
			out = append(out, toJSON(&list[i]))
		}
		return httpapi.A(c, fiber.Map{"feeds": out})
	}
	f := o.Object("feed", true)
	id, _ := f.Int("feed_id", idRule)
	if action != "update" {
		if err := v.Err(); err != nil {
			return err
		}
	}
	switch action {
	case "get":
		fd, err := a.Store.Get(ctx, account, int64(id))
		if err != nil {
			return notFound(err, id)
		}
		return httpapi.A(c, toJSON(fd))
	case "delete":
		if err := a.Poller.Delete(ctx, account, int64(id), left()); err != nil {
			return notFound(err, id)
		}
		return httpapi.A(c, fiber.Map{"feed_id": id, "deleted": true})
	case "sync":
		fd, err := a.Poller.PollNow(ctx, account, int64(id), wait, left())
		if errors.Is(err, poller.ErrBusy) {
			return httpapi.Conflict(httpapi.StatusConflict, "feed "+strconv.Itoa(id)+" is still being polled; try again in a moment")
		}
		if err != nil {
			return notFound(err, id)
		}
		return httpapi.A(c, toJSON(fd))
	}
	return a.update(c, ctx, account, f, id, &v, left)
}

func (a *API) create(c *fiber.Ctx, ctx context.Context, account string, o *fields.Object, v *fields.Violations) error {
	f := o.Object("feed", true)
	code, _ := f.String("internal_code", fields.Str{Required: true, Max: 10})
	rawURL, _ := f.String("url", fields.Str{Required: true})
	name, _ := f.String("name", fields.Str{Max: feed.MaxName})
	interval, okI := f.Int("interval_minutes", fields.Int{Min: feed.MinInterval, Max: feed.MaxInterval})
	if !okI {
		interval = feed.DefaultInterval
	}
	if f != nil && rawURL != "" {
		if err := a.checkURL(ctx, account, f, rawURL); err != nil {
			return err
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	pid, err := a.property(ctx, account, code)
	if err != nil {
		return err
	}
	now := a.now()
	fd := &feed.Feed{AccountID: account, PropertyID: pid, InternalCode: code, URL: rawURL, Name: name,
		IntervalMinutes: interval, Enabled: true, CreatedAt: now, UpdatedAt: now, Seen: []feed.SeenConflict{},
		Status: feed.Status{NextPollAt: now, Conflicts: []feed.Conflict{}}}
	if err := a.Store.Create(ctx, fd); err != nil {
		if errors.Is(err, feed.ErrTooMany) {
			return httpapi.InvalidField("feed", "a property may have at most "+strconv.Itoa(feed.MaxPerProperty)+" feeds")
		}
		return err
	}
	return httpapi.A(c, toJSON(fd))
}

func (a *API) update(c *fiber.Ctx, ctx context.Context, account string, f *fields.Object, id int, v *fields.Violations, left func() time.Duration) error {
	var ch feed.Change
	if f.Has("url") {
		u, ok := f.String("url", fields.Str{Required: true})
		if ok {
			if err := a.checkURL(ctx, account, f, u); err != nil {
				return err
			}
			ch.URL = &u
		}
	}
	if f.Has("name") {
		if n, ok := f.String("name", fields.Str{Max: feed.MaxName}); ok {
			ch.Name = &n
		}
	}
	if f.Has("interval_minutes") {
		if n, ok := f.Int("interval_minutes", fields.Int{Required: true, Min: feed.MinInterval, Max: feed.MaxInterval}); ok {
			ch.IntervalMinutes = &n
		}
	}
	if f.Has("enabled") {
		if b, ok := f.Bool("enabled", true); ok {
			ch.Enabled = &b
		}
	}
	for _, k := range f.Keys() {
		switch k {
		case "feed_id", "url", "name", "interval_minutes", "enabled":
		default:
			f.Add(k, "cannot be changed; an update takes url, name, interval_minutes and enabled")
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	before, err := a.Store.Get(ctx, account, int64(id))
	if err != nil {
		return notFound(err, id)
	}
	fd, err := a.Store.Update(ctx, account, int64(id), ch, a.now())
	if err != nil {
		return notFound(err, id)
	}
	if fd.Enabled && fd.URL != before.URL {
		// A new link is polled at once; when another poll holds the feed, the loop polls
		// it (it is due), and a poll not done within the budget goes on in the background:
		// the answer is then the feed as updated.
		polled, err := a.Poller.PollNow(ctx, account, int64(id), 0, left())
		switch {
		case err == nil:
			fd = polled
		case !errors.Is(err, poller.ErrBusy):
			return notFound(err, id)
		}
	}
	return httpapi.A(c, toJSON(fd))
}

// checkURL applies the link rules with the account's private-address switch.
func (a *API) checkURL(ctx context.Context, account string, f *fields.Object, raw string) error {
	allow, err := a.Policy.AllowsPrivate(ctx, account)
	if err != nil {
		return err
	}
	if msg := targets.Check(ctx, raw, targets.Rules{AllowHTTP: a.AllowHTTP, AllowPrivate: allow}); msg != "" {
		f.Add("url", msg)
	}
	return nil
}

func (a *API) property(ctx context.Context, account, code string) (int64, error) {
	id, err := a.Booking.PropertyID(ctx, account, code)
	if errors.Is(err, poller.ErrNoProperty) {
		return 0, httpapi.NotFound(httpapi.StatusNoProperty, "property with internal_code "+strconv.Quote(code)+" does not exist")
	}
	if err != nil {
		return 0, httpapi.Unavailable("booking-svc is unavailable: " + strings.TrimPrefix(err.Error(), "booking-svc: "))
	}
	return id, nil
}

func notFound(err error, id int) error {
	if errors.Is(err, feed.ErrNotFound) {
		return httpapi.NotFound(httpapi.StatusNotFound, "feed "+strconv.Itoa(id)+" does not exist")
	}
	return err
}

type statusJSON struct {
	LastPolledAt        *time.Time      `json:"last_polled_at"`
	LastSuccessAt       *time.Time      `json:"last_success_at"`
	LastError           string          `json:"last_error"`
	LastErrorAt         *time.Time      `json:"last_error_at"`
	ConsecutiveFailures int             `json:"consecutive_failures"`
	NextPollAt          *time.Time      `json:"next_poll_at"`
	EventsImported      int             `json:"events_imported"`
	NightsBlocked       int             `json:"nights_blocked"`
	EventsSkipped       int             `json:"events_skipped"`
	Conflicts           []feed.Conflict `json:"conflicts"`
	Note                string          `json:"note"`
}

type feedJSON struct {
	FeedID          int64      `json:"feed_id"`
	PropertyID      int64      `json:"property_id"`
	InternalCode    string     `json:"internal_code"`
	URL             string     `json:"url"`
	Name            string     `json:"name"`
	IntervalMinutes int        `json:"interval_minutes"`
	Enabled         bool       `json:"enabled"`
	Status          statusJSON `json:"status"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
}

func utc(t *time.Time) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	u := t.UTC().Truncate(time.Second)
	return &u
}

func toJSON(f *feed.Feed) feedJSON {
	s := f.Status
	conflicts := s.Conflicts
	if conflicts == nil {
		conflicts = []feed.Conflict{}
	}
	next := s.NextPollAt
	st := statusJSON{LastPolledAt: utc(s.LastPolledAt), LastSuccessAt: utc(s.LastSuccessAt), LastError: s.LastError,
		LastErrorAt: utc(s.LastErrorAt), ConsecutiveFailures: s.ConsecutiveFailures, EventsImported: s.EventsImported,
		NightsBlocked: s.NightsBlocked, EventsSkipped: s.EventsSkipped, Conflicts: conflicts, Note: s.Note}
	if f.Enabled {
		st.NextPollAt = utc(&next)
	}
	return feedJSON{FeedID: f.FeedID, PropertyID: f.PropertyID, InternalCode: f.InternalCode, URL: f.URL, Name: f.Name,
		IntervalMinutes: f.IntervalMinutes, Enabled: f.Enabled, Status: st,
		CreatedAt: f.CreatedAt.UTC().Truncate(time.Second), UpdatedAt: f.UpdatedAt.UTC().Truncate(time.Second)}
}
