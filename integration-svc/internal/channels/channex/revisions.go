package channex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
)

// feedItem is one booking revision of the feed (docs.channex.io
// api-v.1-documentation/bookings-collection). Read leniently: Channex adds fields; the
// guarantee (the card) is never decoded.
type feedItem struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Attributes json.RawMessage `json:"attributes"`
}

type revisionAttrs struct {
	ID                 string      `json:"id"`
	BookingID          string      `json:"booking_id"`
	PropertyID         string      `json:"property_id"`
	Status             string      `json:"status"`
	OTAName            string      `json:"ota_name"`
	OTAReservationCode string      `json:"ota_reservation_code"`
	ArrivalDate        string      `json:"arrival_date"`
	DepartureDate      string      `json:"departure_date"`
	Currency           string      `json:"currency"`
	Amount             json.Number `json:"amount"`
	// OTACommission is what the OTA keeps of Amount (a decimal, as a number or a string;
	// null when the OTA does not say).
	OTACommission json.RawMessage `json:"ota_commission"`
	Notes         *string         `json:"notes"`
	InsertedAt    string          `json:"inserted_at"`
	Occupancy     *occupancy      `json:"occupancy"`
	Customer      *struct {
		Name    *string `json:"name"`
		Surname *string `json:"surname"`
		Mail    *string `json:"mail"`
		Phone   *string `json:"phone"`
		Country *string `json:"country"`
	} `json:"customer"`
	Rooms []struct {
		RoomTypeID   string      `json:"room_type_id"`
		RatePlanID   string      `json:"rate_plan_id"`
		CheckinDate  string      `json:"checkin_date"`
		CheckoutDate string      `json:"checkout_date"`
		Occupancy    *occupancy  `json:"occupancy"`
		Amount       json.Number `json:"amount"`
	} `json:"rooms"`
}

type occupancy struct {
	Adults   int `json:"adults"`
	Children int `json:"children"`
	Infants  int `json:"infants"`
}

type feedAnswer struct {
	Data []feedItem `json:"data"`
	Meta struct {
		Total int `json:"total"`
		Page  int `json:"page"`
		Limit int `json:"limit"`
	} `json:"meta"`
}

// PullRevisions reads every page of the booking revisions feed (the revisions not
// acknowledged yet, oldest first) and answers them in the feed's order.
func (a *Adapter) PullRevisions(ctx context.Context, c channel.Connection, record func(channel.Exchange)) ([]channel.Revision, error) {
	var out []channel.Revision
	seen := map[string]bool{}
	for page := 1; ; page++ {
		q := url.Values{"pagination[page]": {fmt.Sprint(page)}, "pagination[limit]": {fmt.Sprint(feedPage)}}
		_, body, err := a.do(ctx, c, request{kind: channel.KindRevisionsFeed, method: http.MethodGet,
			path: "/api/v1/booking_revisions/feed?" + q.Encode()}, record)
		if err != nil {
			return nil, err
		}
		var p feedAnswer
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, &channel.RemoteError{Status: http.StatusOK, Retryable: true, Message: "the feed's answer is not a page of revisions: " + err.Error()}
		}
		for _, it := range p.Data {
			if it.ID == "" || seen[it.ID] {
				continue // without an id a revision can be neither stored nor acknowledged
			}
			seen[it.ID] = true
			r, err := revision(c, it)
			if err != nil {
				return nil, &channel.RemoteError{Status: http.StatusOK, Retryable: true, Message: err.Error()}
			}
			out = append(out, r)
		}
		limit := p.Meta.Limit
		if limit <= 0 {
			limit = feedPage
		}
		if len(p.Data) == 0 || page*limit >= p.Meta.Total || page >= 1000 {
			return out, nil
		}
	}
}

// revision maps a feed item to a channel.Revision: the card is dropped, Raw is the item
// without its guarantee, masked.
func revision(c channel.Connection, it feedItem) (channel.Revision, error) {
	var at revisionAttrs
	if err := json.Unmarshal(it.Attributes, &at); err != nil {
		return channel.Revision{}, fmt.Errorf("revision %s: %v", it.ID, err)
	}
	r := channel.Revision{
		ConnectionID:     c.ID,
		RevisionID:       it.ID,
		ReservationID:    at.BookingID,
		Channel:          at.OTAName,
		Status:           at.Status,
		RemotePropertyID: at.PropertyID,
		Checkin:          at.ArrivalDate,
		Checkout:         at.DepartureDate,
		Currency:         at.Currency,
		Total:            at.Amount.String(),
		Commission:       commission(at.OTACommission, at.Amount.String()),
		Notes:            str(at.Notes),
		Raw:              raw(it),
	}
	if t, ok := insertedAt(at.InsertedAt); ok {
		r.Order = t.UnixNano()
	}
	if len(at.Rooms) > 0 {
		rm := at.Rooms[0]
		r.RoomTypeID, r.RemoteRatePlanID = rm.RoomTypeID, rm.RatePlanID
		if r.Checkin == "" {
			r.Checkin, r.Checkout = rm.CheckinDate, rm.CheckoutDate
		}
		if rm.Occupancy != nil {
			r.Adults, r.Children = rm.Occupancy.Adults, rm.Occupancy.Children
		}
	}
	if at.Occupancy != nil && at.Occupancy.Adults > 0 { // the booking's total over its rooms
		r.Adults, r.Children = at.Occupancy.Adults, at.Occupancy.Children
	}
	if cu := at.Customer; cu != nil {
		r.Guest = channel.Guest{FirstName: str(cu.Name), LastName: str(cu.Surname), Email: str(cu.Mail),
			Phone: str(cu.Phone), Country: strings.ToUpper(str(cu.Country))}
	}
	return r, nil
}

// commission reads a revision's ota_commission: a decimal from 0 to the revision's amount, as
// a JSON number or string, kept as written; anything else (null, absent, negative, more than
// the amount, not a decimal) is "not reported", never a reason to refuse the booking.
func commission(raw json.RawMessage, amount string) string {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if len(raw) == 0 || d.Decode(&v) != nil {
		return ""
	}
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
	default:
		return ""
	}
	c, ok := new(big.Rat).SetString(s)
	if !decimalText.MatchString(s) || !ok {
		return ""
	}
	if a, ok := new(big.Rat).SetString(amount); ok && c.Cmp(a) > 0 {
		return ""
	}
	return s
}

// decimalText is a decimal ≥ 0 as channel managers write amounts.
var decimalText = regexp.MustCompile(`^[0-9]{1,12}(\.[0-9]{1,6})?$`)

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// insertedAt reads Channex's timestamps ("2027-01-05T10:00:00.000000", UTC, or RFC 3339).
func insertedAt(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// raw is the feed item as received without its guarantee, card data masked.
func raw(it feedItem) []byte {
	var attrs map[string]json.RawMessage
	if json.Unmarshal(it.Attributes, &attrs) == nil {
		if _, ok := attrs["guarantee"]; ok {
			attrs["guarantee"] = json.RawMessage(`null`)
		}
		a, _ := json.Marshal(attrs)
		it.Attributes = a
	}
	b, _ := json.Marshal(it)
	return Mask(b)
}

// Ack acknowledges r (POST /api/v1/booking_revisions/{id}/ack): Channex drops it from the
// feed.
func (a *Adapter) Ack(ctx context.Context, c channel.Connection, r channel.Revision, record func(channel.Exchange)) error {
	if r.RevisionID == "" || strings.ContainsAny(r.RevisionID, "/?#") {
		return &channel.RemoteError{Message: fmt.Sprintf("revision id %q cannot be acknowledged", r.RevisionID)}
	}
	_, _, err := a.do(ctx, c, request{kind: channel.KindAck, method: http.MethodPost,
		path: "/api/v1/booking_revisions/" + url.PathEscape(r.RevisionID) + "/ack"}, record)
	return err
}
