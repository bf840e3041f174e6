// Package bookingclient is inbound.Booking over booking-svc's POST
// /internal/channel/reservation (docs/channels.md), signed as integration-svc
// (internal/bookingsvc).
package bookingclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/vros/vros/integration-svc/internal/bookingsvc"
	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/channels/inbound"
)

// Path is the route.
const Path = "/internal/channel/reservation"

// Client applies revisions through booking-svc.
type Client struct{ C *bookingsvc.Client }

var _ inbound.Booking = Client{}

type guestJSON struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Email     string `json:"email"`
	Phone     string `json:"phone"`
	Country   string `json:"country"`
}

type requestJSON struct {
	ConnectionID  int64     `json:"connection_id"`
	Channel       string    `json:"channel"`
	ReservationID string    `json:"reservation_id"`
	RevisionID    string    `json:"revision_id"`
	Order         int64     `json:"order"`
	Status        string    `json:"status"`
	PropertyID    int64     `json:"property_id,omitempty"`
	RatePlanID    int64     `json:"rate_plan_id"`
	Checkin       string    `json:"checkin,omitempty"`
	Checkout      string    `json:"checkout,omitempty"`
	Adults        int       `json:"adults,omitempty"`
	Children      int       `json:"children"`
	Currency      string    `json:"currency,omitempty"`
	Total         string    `json:"total,omitempty"`
	Commission    string    `json:"commission,omitempty"`
	Guest         guestJSON `json:"guest"`
	Notes         string    `json:"notes,omitempty"`
}

// Body is the request body of r.
func Body(r inbound.Request) ([]byte, error) {
	g := r.Guest
	return json.Marshal(requestJSON{ConnectionID: r.ConnectionID, Channel: r.Channel, ReservationID: r.ReservationID,
		RevisionID: r.RevisionID, Order: r.Order, Status: r.Status, PropertyID: r.PropertyID, RatePlanID: r.RatePlanID,
		Checkin: r.Checkin, Checkout: r.Checkout, Adults: r.Adults, Children: r.Children, Currency: r.Currency, Total: r.Total,
		Commission: r.Commission, Guest: guestJSON{FirstName: g.FirstName, LastName: g.LastName, Email: g.Email, Phone: g.Phone, Country: g.Country}, Notes: r.Notes})
}

// Apply implements inbound.Booking.
func (c Client) Apply(ctx context.Context, account string, r inbound.Request) (inbound.Result, error) {
	body, err := Body(r)
	if err != nil {
		return inbound.Result{}, err
	}
	status, data, err := c.C.Do(ctx, account, http.MethodPost, Path, "", body)
	if err != nil {
		return inbound.Result{}, err
	}
	return Answer(status, data)
}

// Answer reads booking-svc's answer: a Result, a *inbound.Refusal (409, 422),
// inbound.ErrReservationUnknown (its 404) or a transient error.
func Answer(status int, data []byte) (inbound.Result, error) {
	var out struct {
		BookingID int64  `json:"booking_id"`
		Status    string `json:"status"`
		Version   int64  `json:"version"`
		Applied   bool   `json:"applied"`
		Conflict  *struct {
			Reason     string   `json:"reason"`
			Nights     []string `json:"nights"`
			BookingIDs []int64  `json:"booking_ids"`
		} `json:"conflict"`
		Error json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(data, &out)
	var e struct {
		Code    string `json:"code"`
		Field   string `json:"field"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(out.Error, &e)
	switch {
	case status == http.StatusOK && out.Status != "":
		return inbound.Result{BookingID: out.BookingID, Status: out.Status, Version: out.Version, Applied: out.Applied}, nil
	case status == http.StatusConflict && out.Conflict != nil:
		return inbound.Result{}, &inbound.Refusal{Reason: channel.ReasonNightsTaken, Nights: out.Conflict.Nights, BookingIDs: out.Conflict.BookingIDs,
			Message: fmt.Sprintf("%d nights are held by other bookings or blocks", len(out.Conflict.Nights))}
	case status == http.StatusNotFound && e.Code == "reservation_unknown":
		return inbound.Result{}, inbound.ErrReservationUnknown
	case status == http.StatusUnprocessableEntity && e.Code == "unknown_property":
		return inbound.Result{}, &inbound.Refusal{Reason: channel.ReasonUnknownProperty, Field: e.Field, Message: e.Message}
	case status == http.StatusUnprocessableEntity && e.Code == "invalid":
		return inbound.Result{}, &inbound.Refusal{Reason: channel.ReasonInvalid, Field: e.Field, Message: e.Message}
	}
	// Anything else (a 5xx, busy, a route missing during a rolling deploy, a proxy's
	// answer) is tried again later: never taken for a refusal.
	msg := e.Message
	if msg == "" {
		msg = string(data)
		if len(msg) > 200 {
			msg = msg[:200]
		}
	}
	return inbound.Result{}, fmt.Errorf("booking-svc answered %d: %s", status, msg)
}
