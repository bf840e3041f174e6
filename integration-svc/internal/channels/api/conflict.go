package api

import (
	"errors"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
)

func (a *API) conflict(c *fiber.Ctx) error {
	ctx := c.UserContext()
	account := tenancyfiber.From(c).AccountID
	var v fields.Violations
	o := fields.Parse(c.Body(), "", &v)
	action, _ := o.String("action", fields.Str{Required: true, OneOf: []string{"list", "get", "resolve"}})
	if err := v.Err(); err != nil {
		return err
	}
	if action == "list" {
		f := o.Object("conflict", false)
		openOnly, _ := f.Bool("open_only", false)
		if err := v.Err(); err != nil {
			return err
		}
		list, err := a.Conflicts.List(ctx, account, openOnly)
		if err != nil {
			return err
		}
		out := make([]conflictJSON, 0, len(list))
		for _, x := range list {
			out = append(out, toConflictJSON(x))
		}
		return httpapi.A(c, fiber.Map{"conflicts": out})
	}
	f := o.Object("conflict", true)
	n, _ := f.Int("conflict_id", idRule)
	id := int64(n)
	var note string
	if action == "resolve" {
		note, _ = f.String("note", fields.Str{Max: MaxNote})
	}
	if err := v.Err(); err != nil {
		return err
	}
	var x channel.Conflict
	var err error
	if action == "get" {
		x, err = a.Conflicts.Get(ctx, account, id)
	} else {
		x, err = a.Conflicts.Resolve(ctx, account, id, note, a.now())
	}
	if errors.Is(err, channel.ErrNotFound) {
		return httpapi.NotFound(httpapi.StatusNotFound, "conflict "+strconv.FormatInt(id, 10)+" does not exist")
	}
	if err != nil {
		return err
	}
	return httpapi.A(c, toConflictJSON(x))
}

type conflictJSON struct {
	ConflictID    int64      `json:"conflict_id"`
	ConnectionID  int64      `json:"connection_id"`
	ReservationID string     `json:"reservation_id"`
	RevisionID    string     `json:"revision_id"`
	Channel       string     `json:"channel"`
	PropertyID    int64      `json:"property_id"`
	Checkin       string     `json:"checkin"`
	Checkout      string     `json:"checkout"`
	Reason        string     `json:"reason"`
	Message       string     `json:"message"`
	Nights        []string   `json:"nights"`
	BookingIDs    []int64    `json:"booking_ids"`
	GuestName     string     `json:"guest_name"`
	Total         string     `json:"total"`
	Currency      string     `json:"currency"`
	Open          bool       `json:"open"`
	CreatedAt     time.Time  `json:"created_at"`
	ResolvedAt    *time.Time `json:"resolved_at"`
	Note          string     `json:"note"`
}

func toConflictJSON(x channel.Conflict) conflictJSON {
	j := conflictJSON{ConflictID: x.ID, ConnectionID: x.ConnectionID, ReservationID: x.ReservationID, RevisionID: x.RevisionID,
		Channel: x.Channel, PropertyID: x.PropertyID, Checkin: x.Checkin, Checkout: x.Checkout, Reason: x.Reason,
		Message: x.Message, Nights: x.Nights, BookingIDs: x.BookingIDs, GuestName: x.GuestName, Total: x.Total,
		Currency: x.Currency, Open: x.ResolvedAt == nil, CreatedAt: x.CreatedAt.UTC().Truncate(time.Second), Note: x.Note}
	if j.Nights == nil {
		j.Nights = []string{}
	}
	if j.BookingIDs == nil {
		j.BookingIDs = []int64{}
	}
	if x.ResolvedAt != nil {
		t := x.ResolvedAt.UTC().Truncate(time.Second)
		j.ResolvedAt = &t
	}
	return j
}
