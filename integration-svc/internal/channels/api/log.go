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

// Log list limits.
const (
	MaxLogLimit     = 200
	DefaultLogLimit = 50
)

var (
	logKinds = []string{channel.KindAvailability, channel.KindRestrictions, channel.KindRates, channel.KindRevisionsFeed,
		channel.KindAck, channel.KindReservation, channel.KindWebhook, channel.KindTest}
	logStatuses = []string{channel.StatusOK, channel.StatusError, channel.StatusRetrying, channel.StatusHeld,
		channel.StatusConflict, channel.StatusDuplicate}
)

func (a *API) log(c *fiber.Ctx) error {
	ctx := c.UserContext()
	account := tenancyfiber.From(c).AccountID
	var v fields.Violations
	o := fields.Parse(c.Body(), "", &v)
	action, _ := o.String("action", fields.Str{Required: true, OneOf: []string{"list", "get"}})
	if err := v.Err(); err != nil {
		return err
	}
	if action == "get" {
		f := o.Object("log", true)
		id, _ := f.Int("log_id", idRule)
		if err := v.Err(); err != nil {
			return err
		}
		e, err := a.Log.Get(ctx, account, int64(id))
		if errors.Is(err, channel.ErrNotFound) {
			return httpapi.NotFound(httpapi.StatusNotFound, "log entry "+strconv.Itoa(id)+" does not exist")
		}
		if err != nil {
			return err
		}
		return httpapi.A(c, toLogJSON(e, true))
	}
	f := o.Object("log", false)
	var lf channel.LogFilter
	n, _ := f.Int("connection_id", fields.Int{Min: 1, Max: 1 << 53})
	lf.ConnectionID = int64(n)
	n, _ = f.Int("property_id", fields.Int{Min: 1, Max: 1 << 53})
	lf.PropertyID = int64(n)
	lf.Kind, _ = f.String("kind", fields.Str{OneOf: logKinds})
	lf.Status, _ = f.String("status", fields.Str{OneOf: logStatuses})
	from, to := timeField(f, "from"), timeField(f, "to")
	if from != nil && to != nil && !to.After(*from) {
		f.Add("to", "must be after from")
	}
	if from != nil {
		lf.From = *from
	}
	if to != nil {
		lf.To = *to
	}
	lf.Q, _ = f.String("q", fields.Str{Max: MaxQuery})
	limit, ok := f.Int("limit", fields.Int{Min: 1, Max: MaxLogLimit})
	if !ok {
		limit = DefaultLogLimit
	}
	lf.Limit = limit
	cur, _ := f.Int("cursor", fields.Int{Min: 1, Max: 1 << 62})
	lf.Cursor = int64(cur)
	if err := v.Err(); err != nil {
		return err
	}
	list, err := a.Log.List(ctx, account, lf)
	if err != nil {
		return err
	}
	out := make([]logJSON, 0, len(list))
	for _, e := range list {
		out = append(out, toLogJSON(e, false))
	}
	var next *int64
	if len(list) == limit {
		last := list[len(list)-1].ID
		next = &last
	}
	return httpapi.A(c, fiber.Map{"entries": out, "next_cursor": next})
}

// timeField reads an RFC 3339 time (blank: none).
func timeField(o *fields.Object, name string) *time.Time {
	if !o.Has(name) {
		return nil
	}
	s, ok := o.String(name, fields.Str{})
	if !ok || s == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		o.Add(name, "must be an RFC 3339 time (2027-01-10T12:00:00Z)")
		return nil
	}
	t = t.UTC()
	return &t
}

type logJSON struct {
	LogID        int64     `json:"log_id"`
	ConnectionID int64     `json:"connection_id"`
	PropertyID   int64     `json:"property_id"`
	Direction    string    `json:"direction"`
	Kind         string    `json:"kind"`
	Status       string    `json:"status"`
	HTTPStatus   int       `json:"http_status"`
	Error        string    `json:"error"`
	From         *string   `json:"from"`
	To           *string   `json:"to"`
	At           time.Time `json:"at"`
	DurationMS   int64     `json:"duration_ms"`
	Truncated    bool      `json:"truncated"`
	// Request and Response only in get's answer.
	Request  *string `json:"request,omitempty"`
	Response *string `json:"response,omitempty"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toLogJSON(e channel.LogEntry, bodies bool) logJSON {
	j := logJSON{LogID: e.ID, ConnectionID: e.ConnectionID, PropertyID: e.PropertyID, Direction: e.Direction, Kind: e.Kind,
		Status: e.Status, HTTPStatus: e.HTTPStatus, Error: e.Error, From: nullable(e.From), To: nullable(e.To),
		At: e.At.UTC().Truncate(time.Millisecond), DurationMS: e.Duration.Milliseconds(), Truncated: e.Truncated}
	if bodies {
		req, resp := e.Request, e.Response
		j.Request, j.Response = &req, &resp
	}
	return j
}
