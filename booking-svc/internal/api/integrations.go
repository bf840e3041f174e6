package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/feedsync"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/pricing"
)

// The internal routes integration-svc calls with the account's signed tenant
// (docs/booking.md, "Integrations"): plain JSON answers, errors in interface A's shape.

// hookBookingJSON is the booking object of interface B (bookingOf, the code that answers
// create, update and listbooking) without the card: CreditCard shadows the embedded field
// of the same JSON name and is always nil, so the key is absent. No card number, masked or
// not, and no card token (the sealed card is never in the booking object) reaches a
// webhook.
type hookBookingJSON struct {
	bookingJSON
	CreditCard *struct{} `json:"creditCard,omitempty"`
}

// hookBooking: GET /internal/hooks/booking/{id} → {"booking": …}; 404 for an id the account
// has no (reserved or cancelled) booking with.
func (a *API) hookBooking(c *fiber.Ctx) error {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id < 1 {
		return httpapi.InvalidField("id", "must be a booking id (a positive integer)")
	}
	b, err := a.bookings.Booking(c.UserContext(), account(c), id)
	if err != nil {
		return domainError(err)
	}
	return c.JSON(fiber.Map{"booking": hookBookingJSON{bookingJSON: a.bookingOf(c, b)}})
}

// icalProperty: GET /internal/ical/property?internal_code=V1 → {"property_id": N} from the
// property view; 404 for a code the account has no property with.
func (a *API) icalProperty(c *fiber.Ctx) error {
	code := c.Query("internal_code")
	if code == "" {
		return httpapi.InvalidField("internal_code", "is required")
	}
	p, err := a.bookings.PropertyByCode(c.UserContext(), account(c), code)
	if errors.Is(err, booking.ErrNoProperty) {
		return httpapi.NotFound(httpapi.StatusNoProperty, "property with internal code "+strconv.Quote(code)+" does not exist")
	}
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"property_id": p.PropertyID})
}

// decodeFeedSync reads the body of /internal/ical/sync; every rule names its field
// (docs/booking.md, "iCal import").
func decodeFeedSync(body []byte) (feedsync.Request, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	pid, _ := o.Int("property_id", fields.Int{Required: true, Min: 1})
	feed, _ := o.Int("feed_id", fields.Int{Required: true, Min: 1})
	name, _ := o.String("name", fields.Str{Max: feedsync.MaxName})
	final, _ := o.Bool("final", false)
	r := feedsync.Request{PropertyID: int64(pid), FeedID: int64(feed), Name: name, Events: []feedsync.Event{}, Final: final}
	events, _ := o.Array("events", fields.List{Required: !final, Max: feedsync.MaxEvents})
	if final && len(events) > 0 {
		v.Add("events", "must be empty when final is true")
		return r, v.Err()
	}
	nights := 0
	for i, e := range events {
		if e == nil {
			continue
		}
		uid, okU := e.String("uid", fields.Str{Required: true, Min: 1, Max: feedsync.MaxUIDLength})
		start, okS := e.Date("start", true)
		end, okE := e.Date("end", true)
		if !okU || !okS || !okE {
			continue
		}
		field := fields.Path(fields.Index("events", i), "end")
		switch n := pricing.DaysBetween(pricing.DateOf(start), pricing.DateOf(end)); {
		case n < 1:
			v.Add(field, "must be after start")
		case n > booking.MaxBlockNights:
			v.Add(field, fmt.Sprintf("must be at most %d nights after start", booking.MaxBlockNights))
		default:
			r.Events = append(r.Events, feedsync.Event{UID: uid, Start: pricing.DateOf(start), End: pricing.DateOf(end)})
			nights += n
		}
	}
	if nights > feedsync.MaxNights {
		v.Add("events", fmt.Sprintf("must hold at most %d nights in all (each event's nights counted), not %d", feedsync.MaxNights, nights))
	}
	return r, v.Err()
}

type feedBlockJSON struct {
	UID       string `json:"uid"`
	BlockID   int64  `json:"block_id"`
	StartDate string `json:"start_date"`
	EndDate   string `json:"end_date"`
}

type feedConflictJSON struct {
	UID        string  `json:"uid"`
	StartDate  string  `json:"start_date"`
	EndDate    string  `json:"end_date"`
	BookingIDs []int64 `json:"booking_ids"`
}

type feedSyncJSON struct {
	Blocks           []feedBlockJSON    `json:"blocks"`
	BlocksOmitted    int                `json:"blocks_omitted"`
	NightsBlocked    int                `json:"nights_blocked"`
	Conflicts        []feedConflictJSON `json:"conflicts"`
	ConflictsOmitted int                `json:"conflicts_omitted"`
	Complete         bool               `json:"complete"`
}

// maxSyncAnswer bounds the bytes of the blocks and conflicts one sync answers (the answer's
// other members are a few dozen more): integration-svc reads at most 8 MiB of it. Tests lower
// it.
var maxSyncAnswer = 4 << 20

// jsonSize is the length of v in JSON, with the comma that separates it from the next.
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b) + 1
}

// icalSync: POST /internal/ical/sync → the feed's blocks and conflicts after the sync, and
// whether it is complete: a sync that stopped early (its deadline) answers 200 with
// "complete": false, and the same request sent again goes on.
func (a *API) icalSync(c *fiber.Ctx) error {
	r, err := decodeFeedSync(c.Body())
	if err != nil {
		return err
	}
	res, err := a.feeds.Sync(c.UserContext(), account(c), r)
	switch {
	case errors.Is(err, booking.ErrNoProperty):
		return httpapi.NotFound(httpapi.StatusNoProperty, fmt.Sprintf("property %d does not exist", r.PropertyID))
	case errors.Is(err, feedsync.ErrGone):
		return &httpapi.Error{HTTP: http.StatusGone, Type: "gone", Status: httpapi.StatusNotFound,
			Message: fmt.Sprintf("feed %d was deleted; it cannot be synced again", r.FeedID)}
	case errors.Is(err, booking.ErrBusy):
		return httpapi.Conflict(httpapi.StatusConflict, "another sync of feed "+strconv.FormatInt(r.FeedID, 10)+" is in progress; try again")
	case err != nil:
		return domainError(err)
	}
	// Conflicts first (integration-svc raises them as webhook events), then blocks, as many
	// as fit in the budget; the rest are counted.
	out := feedSyncJSON{Blocks: []feedBlockJSON{}, NightsBlocked: res.NightsBlocked, Conflicts: []feedConflictJSON{},
		ConflictsOmitted: res.ConflictsOmitted, Complete: res.Complete}
	budget := maxSyncAnswer
	var omitted int
	out.Conflicts, omitted = fit(out.Conflicts, res.Conflicts, &budget, func(k feedsync.Conflict) feedConflictJSON {
		return feedConflictJSON{UID: k.UID, StartDate: k.StartDate, EndDate: k.EndDate, BookingIDs: k.BookingIDs}
	})
	out.ConflictsOmitted += omitted
	out.Blocks, out.BlocksOmitted = fit(out.Blocks, res.Blocks, &budget, func(b feedsync.Block) feedBlockJSON {
		return feedBlockJSON{UID: b.UID, BlockID: b.BlockID, StartDate: b.StartDate, EndDate: b.EndDate}
	})
	return c.JSON(out)
}

// fit appends to out the JSON form of each item while its size fits in budget (which it
// spends), and counts the items left out.
func fit[T, J any](out []J, items []T, budget *int, form func(T) J) ([]J, int) {
	omitted := 0
	for _, it := range items {
		j := form(it)
		if n := jsonSize(j); n <= *budget {
			*budget -= n
			out = append(out, j)
			continue
		}
		omitted++
	}
	return out, omitted
}
