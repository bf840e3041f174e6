package fakechannex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Revision is a booking revision the feed serves (docs.channex.io
// api-v.1-documentation/bookings-collection, "Booking Revision"). Zero fields are given
// defaults by EnqueueRevision.
type Revision struct {
	ID                 string // the revision's id (default NewID())
	BookingID          string // the booking's id, the same for all its revisions (default NewID())
	PropertyID         string
	Status             string // new (default), modified, cancelled
	OTAName            string // default "BookingCom"
	OTAReservationCode string // default derived from BookingID
	ArrivalDate        string
	DepartureDate      string
	Currency           string // default the property's
	Amount             string // decimal string, default "100.00"
	// OTACommission is the OTA's commission (ota_commission) as sent: a decimal string, or
	// "" for null (the OTA did not say).
	OTACommission string
	Notes         string
	Customer      Customer
	Rooms         []Room // default one room: the property's first room type and rate plan
	// Guarantee is the card sent with the booking; default a test Visa card with its CVV, so
	// that tests see it never stored or logged. NoGuarantee leaves it out.
	Guarantee   *Guarantee
	NoGuarantee bool
	InsertedAt  time.Time // default the fake's clock, strictly after the previous revision's
}

// Customer is a revision's guest.
type Customer struct {
	Name, Surname, Mail, Phone, Country string
}

// Room is one room of a revision.
type Room struct {
	RoomTypeID, RatePlanID    string
	CheckinDate, CheckoutDate string // default the revision's dates
	Amount                    string // default the revision's amount
	Adults, Children, Infants int    // default 2 adults
}

// Guarantee is the card of a revision.
type Guarantee struct {
	CardNumber, CardType, CardholderName, CVV, ExpirationDate string
}

// TestCard is the default guarantee: a card number and CVV that must never be stored.
var TestCard = Guarantee{CardNumber: "4111111111111111", CardType: "visa", CardholderName: "Test Guest",
	CVV: "737", ExpirationDate: "12/2030"}

// EnqueueRevision adds r at the end of the feed (its defaults filled) and answers it. The
// feed serves revisions in the order they were enqueued: enqueue a modification before its
// booking for an out-of-order feed, or the same revision twice for a duplicate.
func (s *Server) EnqueueRevision(r Revision) Revision {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.ID == "" {
		r.ID = NewID()
	}
	if r.BookingID == "" {
		r.BookingID = NewID()
	}
	if r.Status == "" {
		r.Status = "new"
	}
	if r.OTAName == "" {
		r.OTAName = "BookingCom"
	}
	if r.OTAReservationCode == "" {
		r.OTAReservationCode = "BDC-" + strings.ToUpper(r.BookingID[:8])
	}
	p := s.props[r.PropertyID]
	if r.Currency == "" && p != nil {
		r.Currency = p.prop.Currency
	}
	if r.Amount == "" {
		r.Amount = "100.00"
	}
	if len(r.Rooms) == 0 && p != nil && len(p.prop.RoomTypes) > 0 {
		rt := p.prop.RoomTypes[0]
		room := Room{RoomTypeID: rt.ID}
		if len(rt.RatePlans) > 0 {
			room.RatePlanID = rt.RatePlans[0]
		}
		r.Rooms = []Room{room}
	}
	for i := range r.Rooms {
		rm := &r.Rooms[i]
		if rm.CheckinDate == "" {
			rm.CheckinDate = r.ArrivalDate
		}
		if rm.CheckoutDate == "" {
			rm.CheckoutDate = r.DepartureDate
		}
		if rm.Amount == "" {
			rm.Amount = r.Amount
		}
		if rm.Adults == 0 {
			rm.Adults = 2
		}
	}
	if r.Guarantee == nil && !r.NoGuarantee {
		g := TestCard
		r.Guarantee = &g
	}
	if r.InsertedAt.IsZero() {
		r.InsertedAt = s.opts.Now().UTC()
		for _, o := range s.revisions {
			if !r.InsertedAt.After(o.InsertedAt) {
				r.InsertedAt = o.InsertedAt.Add(time.Microsecond)
			}
		}
	}
	s.revisions[r.ID] = r
	s.feed = append(s.feed, r)
	s.notify()
	return r
}

// Redeliver puts a revision already enqueued (acknowledged or not) at the end of the feed
// again: a duplicate delivery.
func (s *Server) Redeliver(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.revisions[id]
	if !ok {
		panic("fakechannex: Redeliver of unknown revision " + id)
	}
	s.feed = append(s.feed, r)
	s.notify()
}

// Revision answers an enqueued revision.
func (s *Server) Revision(id string) (Revision, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.revisions[id]
	return r, ok
}

// wire is the revision as the API answers it: {"id","type":"booking_revision","attributes"}.
func (r Revision) wire() map[string]any {
	rooms := make([]map[string]any, len(r.Rooms))
	for i, rm := range r.Rooms {
		rooms[i] = map[string]any{
			"room_type_id": rm.RoomTypeID, "rate_plan_id": rm.RatePlanID,
			"checkin_date": rm.CheckinDate, "checkout_date": rm.CheckoutDate, "amount": rm.Amount,
			"occupancy": map[string]int{"adults": rm.Adults, "children": rm.Children, "infants": rm.Infants},
		}
	}
	var adults, children, infants int
	for _, rm := range r.Rooms {
		adults, children, infants = adults+rm.Adults, children+rm.Children, infants+rm.Infants
	}
	attrs := map[string]any{
		"id": r.ID, "booking_id": r.BookingID, "property_id": r.PropertyID,
		"unique_id": "BDC-" + r.OTAReservationCode, "system_id": r.ID,
		"ota_reservation_code": r.OTAReservationCode, "ota_name": r.OTAName, "status": r.Status,
		"arrival_date": r.ArrivalDate, "departure_date": r.DepartureDate, "arrival_hour": nil,
		"amount": r.Amount, "currency": r.Currency, "notes": r.Notes, "ota_commission": nil,
		"payment_collect": "property", "payment_type": "credit_card",
		"occupancy": map[string]int{"adults": adults, "children": children, "infants": infants},
		"customer": map[string]any{"name": r.Customer.Name, "surname": r.Customer.Surname, "mail": r.Customer.Mail,
			"phone": r.Customer.Phone, "country": r.Customer.Country, "address": nil, "city": nil, "zip": nil, "language": nil},
		"rooms": rooms, "services": []any{},
		"inserted_at": r.InsertedAt.UTC().Format("2006-01-02T15:04:05.000000"),
	}
	if r.OTACommission != "" {
		attrs["ota_commission"] = r.OTACommission
	}
	if r.Guarantee != nil {
		attrs["guarantee"] = map[string]any{"card_number": r.Guarantee.CardNumber, "card_type": r.Guarantee.CardType,
			"cardholder_name": r.Guarantee.CardholderName, "cvv": r.Guarantee.CVV,
			"expiration_date": r.Guarantee.ExpirationDate, "is_virtual": false}
	} else {
		attrs["guarantee"] = nil
	}
	return map[string]any{"id": r.ID, "type": "booking_revision", "attributes": attrs,
		"relationships": map[string]any{"property": map[string]any{"data": map[string]string{"id": r.PropertyID, "type": "property"}}}}
}

func (s *Server) owns(key, property string) bool {
	p, ok := s.props[property]
	return ok && p.key == key
}

func (s *Server) serveFeed(key string, r *http.Request,
	answer func(int, []byte, map[string]string), refuse func(int, string, string, any)) {
	q := r.URL.Query()
	page, limit, ok := pagination(q)
	if !ok {
		refuse(http.StatusBadRequest, "bad_request", "Bad Request", []string{"pagination[page] and pagination[limit] are positive integers, limit ≤ 100"})
		return
	}
	for k := range q {
		if strings.HasPrefix(k, "filter[") && k != "filter[property_id]" {
			refuse(http.StatusBadRequest, "bad_request", "Bad Request", []string{"unknown filter " + k})
			return
		}
	}
	only := q.Get("filter[property_id]")
	s.mu.Lock()
	var mine []Revision
	for _, rv := range s.feed {
		if s.owns(key, rv.PropertyID) && (only == "" || rv.PropertyID == only) {
			mine = append(mine, rv)
		}
	}
	s.mu.Unlock()
	data := []map[string]any{}
	for i := (page - 1) * limit; i < len(mine) && i < page*limit; i++ {
		data = append(data, mine[i].wire())
	}
	b, _ := json.Marshal(map[string]any{"data": data, "meta": map[string]any{
		"page": page, "limit": limit, "total": len(mine), "order_by": "inserted_at", "order_direction": "asc"}})
	answer(http.StatusOK, b, nil)
}

func (s *Server) serveRevision(key, id string,
	answer func(int, []byte, map[string]string), refuse func(int, string, string, any)) {
	s.mu.Lock()
	rv, ok := s.revisions[id]
	ok = ok && s.owns(key, rv.PropertyID)
	s.mu.Unlock()
	if !ok {
		refuse(http.StatusNotFound, "not_found", "Not Found", nil)
		return
	}
	b, _ := json.Marshal(map[string]any{"data": rv.wire()})
	answer(http.StatusOK, b, nil)
}

func (s *Server) serveAck(key, id string, body []byte, call *Call,
	commit func(int, []byte, map[string]string, func(int)), refuse func(int, string, string, any)) {
	if b := bytes.TrimSpace(body); len(b) > 0 && !bytes.Equal(b, []byte("{}")) {
		refuse(http.StatusUnprocessableEntity, "validation_error", "Validation Error", map[string][]string{"body": {"an ack carries no body, or {}"}})
		return
	}
	s.mu.Lock()
	rv, ok := s.revisions[id]
	if !ok || !s.owns(key, rv.PropertyID) {
		s.mu.Unlock()
		refuse(http.StatusNotFound, "not_found", "Not Found", nil)
		return
	}
	s.mu.Unlock()
	// Out of the feed with the call recorded (commit), the ack numbered like its call.
	commit(http.StatusOK, []byte(`{"meta":{"message":"Success"}}`), nil, func(seq int) {
		known := false
		feed := s.feed[:0:0]
		for _, f := range s.feed {
			if f.ID == id {
				known = true
				continue
			}
			feed = append(feed, f)
		}
		s.feed = feed
		s.acks = append(s.acks, Ack{Seq: seq, RevisionID: id, At: call.At, Known: known})
	})
}

// PostWebhook posts Channex's webhook for a revision to url (the connection's inbound URL)
// as Channex does for event ("booking", "booking_new", "booking_modification",
// "booking_cancellation", …), and answers the status and body of the reply.
func (s *Server) PostWebhook(ctx context.Context, url, event, revisionID string) (int, []byte, error) {
	s.mu.Lock()
	rv, ok := s.revisions[revisionID]
	now := s.opts.Now()
	s.mu.Unlock()
	if !ok {
		return 0, nil, fmt.Errorf("fakechannex: no revision %s", revisionID)
	}
	body, _ := json.Marshal(map[string]any{
		"event":       event,
		"payload":     map[string]string{"booking_id": rv.BookingID, "property_id": rv.PropertyID, "revision_id": rv.ID},
		"property_id": rv.PropertyID,
		"timestamp":   now.UTC().Format(time.RFC3339Nano),
		"user_id":     nil,
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.webhookCli.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}
