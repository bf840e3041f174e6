// Package chantest is what the channel system tests share (systest/channels,
// systest/chancrash, systest/bench): an account's interface A and B calls for channel
// distribution through edge, a recording proxy in front of a fake channel manager that keeps
// every request it passed and can hold one, and the ARI a channel manager was sent, read
// back from those requests per date (docs/channels.md). Nothing here calls testing.T.Fatal:
// every function may be called from any goroutine and answers an error.
package chantest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/systest/apitest"
)

// Obj is a JSON object under construction.
type Obj = map[string]any

// Account is a tenant and the edge it is reached through.
type Account struct {
	demo.Account
	Client     *http.Client
	Edge       string
	AdminToken string
}

// NewAccount opens a sandbox account through edge's admin API and lets it name loopback
// addresses (the fakes listen there; a connection's endpoint is checked like a webhook
// target).
func NewAccount(c *http.Client, edge, adminToken, name string) (Account, error) {
	a, err := apitest.NewAccount(c, edge, adminToken, name)
	if err != nil {
		return Account{}, err
	}
	if err := apitest.AllowPrivateTargets(c, edge, adminToken, a.AccountID, true); err != nil {
		return Account{}, err
	}
	return Account{Account: a, Client: c, Edge: edge, AdminToken: adminToken}, nil
}

// send sends one request through edge; a 429 (the account's rate limit) is retried when its
// Retry-After says, as a client does.
func (a Account) send(method, path string, headers map[string]string, body string) (apitest.Response, error) {
	for try := 0; ; try++ {
		r, err := apitest.Send(a.Client, method, a.Edge+path, headers, body)
		if err != nil || r.Code != http.StatusTooManyRequests || try == 30 {
			return r, err
		}
		wait, _ := strconv.Atoi(r.Header.Get("Retry-After"))
		time.Sleep(time.Duration(max(wait, 1)) * time.Second)
	}
}

// AError is an interface A answer other than 200.
type AError struct {
	Resource string
	Code     int
	Body     []byte
}

func (e *AError) Error() string {
	return fmt.Sprintf("%s: HTTP %d %s", e.Resource, e.Code, e.Body)
}

// A sends an interface A request and decodes its data into out (nil: skip); an answer other
// than 200 is an *AError.
func (a Account) A(resource string, body any, out any) error {
	text, ok := body.(string)
	if !ok {
		text = apitest.JSON(body)
	}
	r, err := a.send(http.MethodPost, "/api/"+resource, a.AHeaders(), text)
	if err != nil {
		return fmt.Errorf("%s: %w", resource, err)
	}
	if r.Code != http.StatusOK {
		return &AError{Resource: resource + " " + text, Code: r.Code, Body: r.Body}
	}
	if out == nil {
		return nil
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil {
		return fmt.Errorf("%s: %s: %w", resource, r.Body, err)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("%s: data %s: %w", resource, env.Data, err)
	}
	return nil
}

// BReply is an interface B answer.
type BReply struct {
	HTTP    int             `json:"-"`
	Body    []byte          `json:"-"`
	Status  int             `json:"status"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// B sends an interface B action.
func (a Account) B(action string, fields Obj) (BReply, error) {
	r, err := a.send(http.MethodPost, "/vros/external-booking", nil, a.BBody(action, fields))
	if err != nil {
		return BReply{}, err
	}
	out := BReply{HTTP: r.Code, Body: r.Body}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		return out, fmt.Errorf("%s: HTTP %d %s: %w", action, r.Code, r.Body, err)
	}
	return out, nil
}

// BOK sends an action that must succeed and decodes its data into out (nil: skip).
func (a Account) BOK(action string, fields Obj, out any) error {
	r, err := a.B(action, fields)
	if err != nil {
		return err
	}
	if r.HTTP != http.StatusOK || r.Status != 0 {
		return fmt.Errorf("%s %v: HTTP %d %s", action, fields, r.HTTP, r.Body)
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			return fmt.Errorf("%s: data %s: %w", action, r.Data, err)
		}
	}
	return nil
}

// StatusTaken is interface B's status of a create or update whose nights are taken.
const StatusTaken = 8

// Booking is the part of a B2 booking object the channel tests read.
type Booking struct {
	BookingID  int64  `json:"bookingId"`
	Status     string `json:"status"`
	PropertyID int64  `json:"propertyId"`
	Checkin    string `json:"checkin"`  // the day, YYYY-MM-DD
	Checkout   string `json:"checkout"` // the day
	Channel    string `json:"channel"`
	FirstName  string `json:"firstName"`
	LastName   string `json:"lastName"`
}

// dateOnly cuts the B2 dates ("2027-01-10 15:00:00": the check-in and check-out hours) to
// the day.
func (b *Booking) dateOnly() {
	if len(b.Checkin) > 10 {
		b.Checkin = b.Checkin[:10]
	}
	if len(b.Checkout) > 10 {
		b.Checkout = b.Checkout[:10]
	}
}

// Cancelled tells whether a B2 booking is cancelled.
func (b Booking) Cancelled() bool { return strings.EqualFold(b.Status, "cancelled") }

// Guest is a create body for pid from checkin to checkout.
func Guest(pid int64, checkin, checkout string) Obj {
	return Obj{"propertyId": pid, "firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com",
		"numberofadults": 2, "leadsourceId": 1, "checkin": checkin, "checkout": checkout}
}

// Create books pid directly (interface B create): the booking, or the answer's status when
// it was refused (StatusTaken for taken nights).
func (a Account) Create(pid int64, checkin, checkout string) (Booking, int, error) {
	r, err := a.B("create", Guest(pid, checkin, checkout))
	if err != nil {
		return Booking{}, 0, err
	}
	if r.HTTP != http.StatusOK {
		return Booking{}, r.Status, fmt.Errorf("create: HTTP %d %s", r.HTTP, r.Body)
	}
	if r.Status != 0 {
		return Booking{}, r.Status, nil
	}
	var b Booking
	if err := json.Unmarshal(r.Data, &b); err != nil || b.BookingID == 0 {
		return b, 0, fmt.Errorf("create: data %s: %v", r.Data, err)
	}
	b.dateOnly()
	return b, 0, nil
}

// Bookings lists a property's bookings (listbooking), every status.
func (a Account) Bookings(pid int64) ([]Booking, error) {
	var out []Booking
	for page := 1; ; page++ {
		var list struct {
			Total int       `json:"totalRecords"`
			List  []Booking `json:"listBooking"`
		}
		if err := a.BOK("listbooking", Obj{"propertyId": pid, "page": page, "limit": 100}, &list); err != nil {
			return nil, err
		}
		for i := range list.List {
			list.List[i].dateOnly()
		}
		out = append(out, list.List...)
		if len(list.List) == 0 || len(out) >= list.Total {
			return out, nil
		}
	}
}

// Booking reads one booking (listbooking by id).
func (a Account) Booking(id int64) (Booking, error) {
	var list struct {
		List []Booking `json:"listBooking"`
	}
	if err := a.BOK("listbooking", Obj{"bookingId": id}, &list); err != nil {
		return Booking{}, err
	}
	if len(list.List) != 1 {
		return Booking{}, fmt.Errorf("listbooking %d: %d bookings", id, len(list.List))
	}
	list.List[0].dateOnly()
	return list.List[0], nil
}

// Sellable asks getinfo whether a stay is sold (status 0) and answers its status.
func (a Account) Sellable(pid int64, checkin, checkout string) (int, error) {
	r, err := a.B("getinfo", Obj{"propertyId": pid, "checkin": checkin, "checkout": checkout, "numberofadults": 2})
	if err != nil {
		return 0, err
	}
	return r.Status, nil
}

// Property creates a bookable property: code, 100 a night, any day in and out, minimum stay
// 1, standard occupancy 2, every future date open (a 500-day sync has a price each date).
func (a Account) Property(code string) (int64, error) {
	var created struct {
		PropertyID json.Number `json:"property_id"`
	}
	if err := a.A("property", Obj{"action": "create", "property": Obj{
		"internal_code": code, "name": "Channel Test Villa " + code, "type": "Villa", "brief": strings.Repeat("Sold on channels. ", 30),
		"maxguest": 4, "bedrooms": 2, "bathrooms": 1, "kitchens": 1, "floor": "Ground",
		"space": Obj{"value": 90, "unit": "meters"}, "phone": "3055550100", "address": "1 Ocean Drive",
		"city": "Miami Beach", "state": "FL", "postcode": "33139", "country": "US", "latitude": 25.79, "longitude": -80.13,
		"allowchildren": true, "allowpet": false, "allowsmoking": false,
	}}, &created); err != nil {
		return 0, err
	}
	pid, err := created.PropertyID.Int64()
	if err != nil {
		return 0, fmt.Errorf("property_id %q", created.PropertyID)
	}
	if err := a.A("property-rate", Obj{"internal_code": code, "rate": Obj{"daily_price": 100, "minimum_stay": 1},
		"setting": Obj{"standard_occupants": 2, "accept_booking_upto": 0, "advanced_notice_booking_from": "0"}}, nil); err != nil {
		return 0, err
	}
	return pid, a.priceable(pid)
}

// priceable waits until booking-svc can price property pid: it learns of a property from
// property-svc's events, so a booking made the moment the property is created may find it
// unknown (status 16) on a loaded machine.
func (a Account) priceable(pid int64) error {
	in, out := apitest.Day(30), apitest.Day(31)
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, err := a.Sellable(pid, in, out)
		switch {
		case err != nil:
			return err
		case status != 16:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("property %d: booking-svc did not learn of it within 30 s", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// PlanBB adds the derived plan "Bed & Breakfast", the standard price plus 20 (Channex's
// certification property: Best Available Rate 100, Bed & Breakfast 120), and answers its id.
func (a Account) PlanBB(code string) (int64, error) {
	var out struct {
		ID json.Number `json:"rate_plan_id"`
	}
	if err := a.A("property-rateplan", Obj{"action": "create", "internal_code": code, "rate_plan": Obj{
		"name": "Bed & Breakfast", "inclusions": "Breakfast", "adjustment": Obj{"type": "amount", "value": "20"},
		"cancellation": Obj{"policy": "flexible"}, "sold_on": Obj{"direct": true, "all_brands": true}}}, &out); err != nil {
		return 0, err
	}
	return out.ID.Int64()
}

// Restrict sends one /api/property-restriction request (plan 0: the property's level).
func (a Account) Restrict(code string, plan int64, from, to string, set Obj, clear []string) error {
	body := Obj{"internal_code": code, "dates": []Obj{{"start_date": from, "end_date": to}}}
	if plan != 0 {
		body["rate_plan_id"] = plan
	}
	if len(set) > 0 {
		body["set"] = set
	}
	if len(clear) > 0 {
		body["clear"] = clear
	}
	return a.A("property-restriction", body, nil)
}

// Connection is a channel-connection as interface A answers it.
type Connection struct {
	ConnectionID json.Number `json:"connection_id"`
	Adapter      string      `json:"adapter"`
	Endpoint     string      `json:"endpoint"`
	Channel      string      `json:"channel"`
	Enabled      bool        `json:"enabled"`
	InboundToken string      `json:"inbound_token"`
	InboundURL   string      `json:"inbound_url"`
	Days         int         `json:"days"`
}

// ID is the connection's id.
func (c Connection) ID() int64 { n, _ := c.ConnectionID.Int64(); return n }

// Connect creates a connection: adapter, its endpoint, its credentials (Channex: api_key;
// OpenTravel: username, password) and its ARI horizon.
func (a Account) Connect(adapter, endpoint string, credentials Obj, days int) (Connection, error) {
	var c Connection
	err := a.A("channel-connection", Obj{"action": "create", "connection": Obj{
		"adapter": adapter, "endpoint": endpoint, "credentials": credentials, "days": days, "enabled": true}}, &c)
	if err == nil && (c.ID() == 0 || c.InboundToken == "") {
		err = fmt.Errorf("channel-connection create answered %+v", c)
	}
	return c, err
}

// Plan maps a vros rate plan to the channel manager's id.
type Plan struct {
	RatePlanID       int64  `json:"rate_plan_id"`
	RemoteRatePlanID string `json:"remote_rate_plan_id"`
}

// Map creates the mapping of a property on a connection (which starts its full sync).
// integration-svc finds the property through booking-svc, whose view learns of a new
// property from its event: a 404 for it is asked again until the view has it (a minute).
func (a Account) Map(conn int64, code, remoteProperty, roomType string, plans ...Plan) error {
	body := Obj{"action": "create", "mapping": Obj{
		"connection_id": conn, "internal_code": code, "remote_property_id": remoteProperty,
		"room_type_id": roomType, "rate_plans": plans, "enabled": true}}
	return Eventually(time.Minute, func() error {
		err := a.A("channel-mapping", body, nil)
		var ae *AError
		if errors.As(err, &ae) && (ae.Code != http.StatusNotFound || !strings.Contains(string(ae.Body), "does not exist")) {
			return &permanent{err}
		}
		return err
	})
}

// permanent is an error Eventually answers at once.
type permanent struct{ error }

func (p *permanent) Unwrap() error { return p.error }

// Sync asks for a full sync of a mapped property now.
func (a Account) Sync(conn int64, code string) error {
	return a.A("channel-mapping", Obj{"action": "sync", "mapping": Obj{"connection_id": conn, "internal_code": code}}, nil)
}

// Conflict is a channel-conflict as interface A answers it.
type Conflict struct {
	ConflictID    json.Number `json:"conflict_id"`
	ConnectionID  json.Number `json:"connection_id"`
	ReservationID string      `json:"reservation_id"`
	RevisionID    string      `json:"revision_id"`
	PropertyID    json.Number `json:"property_id"`
	Checkin       string      `json:"checkin"`
	Checkout      string      `json:"checkout"`
	Reason        string      `json:"reason"`
	Nights        []string    `json:"nights"`
	BookingIDs    []int64     `json:"booking_ids"`
}

// Conflicts lists the account's conflicts, open first.
func (a Account) Conflicts() ([]Conflict, error) {
	var out struct {
		Conflicts []Conflict `json:"conflicts"`
	}
	err := a.A("channel-conflict", Obj{"action": "list"}, &out)
	return out.Conflicts, err
}

// LogEntry is a channel-log entry as interface A answers it.
type LogEntry struct {
	LogID        json.Number `json:"log_id"`
	ConnectionID json.Number `json:"connection_id"`
	PropertyID   json.Number `json:"property_id"`
	Direction    string      `json:"direction"`
	Kind         string      `json:"kind"`
	Status       string      `json:"status"`
	HTTPStatus   int         `json:"http_status"`
	Request      string      `json:"request"`
	Response     string      `json:"response"`
	Error        string      `json:"error"`
	From         string      `json:"from"`
	To           string      `json:"to"`
}

// Log lists the channel log with filters (connection_id, kind, status, …), newest first,
// every page.
func (a Account) Log(filter Obj) ([]LogEntry, error) {
	var all []LogEntry
	q := Obj{"limit": 200}
	for k, v := range filter {
		q[k] = v
	}
	for {
		var out struct {
			Entries []LogEntry  `json:"entries"`
			Logs    []LogEntry  `json:"logs"`
			Cursor  json.Number `json:"cursor"`
			Next    json.Number `json:"next_cursor"`
		}
		if err := a.A("channel-log", Obj{"action": "list", "log": q}, &out); err != nil {
			return nil, err
		}
		page := append(out.Entries, out.Logs...)
		all = append(all, page...)
		next := out.Next
		if next == "" {
			next = out.Cursor
		}
		if len(page) == 0 || next == "" || next == "0" {
			return all, nil
		}
		q["cursor"] = next
	}
}

// Eventually polls f every 20 ms until it answers nil, and answers its last error after
// within (never a fixed sleep as synchronisation: the wait ends when the condition holds).
func Eventually(within time.Duration, f func() error) error {
	deadline := time.Now().Add(within)
	for {
		err := f()
		if err == nil {
			return nil
		}
		var p *permanent
		if errors.As(err, &p) {
			return p.error
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v: %w", within, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ErrNotYet is a condition that does not hold yet.
var ErrNotYet = errors.New("not yet")
