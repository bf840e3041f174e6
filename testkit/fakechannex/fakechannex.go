// Package fakechannex is a fake Channex PMS API (docs.channex.io) for tests, built from the
// published contract and strict about it: every request is checked (the user-api-key
// header, the method, the path, JSON with no unknown field and the right types, required
// fields, valid dates, ids the key owns, the documented rate limits, the 10 MB body limit),
// and every call, accepted or refused, is recorded with what it carried.
//
// What it serves (docs/channels.md, "Channex", names the doc pages):
//   - POST /api/v1/availability and POST /api/v1/restrictions: ARI change objects
//     ({"values":[…]}), applied in order to an ARI state per (property, room type or rate
//     plan, date) that keeps every change it received; answered 200 with one task per
//     property. A change object that fails a value check (an unknown id, a bad date, a range
//     in the past) is left out and reported under meta.warnings, as Channex does; a body
//     that is not the documented shape (unknown field, wrong type, no values) is refused
//     whole with 422.
//   - 10 availability and 10 restrictions requests per property per minute (a sliding
//     window on the fake's clock, Options.Now); the next one is answered 429 with Channex's
//     body and no Retry-After header (Channex documents none).
//   - GET /api/v1/booking_revisions/feed (the revisions not acknowledged yet, oldest first,
//     pagination[page] and pagination[limit] ≤ 100), GET /api/v1/booking_revisions/{id},
//     POST /api/v1/booking_revisions/{id}/ack (removes it from the feed).
//   - GET /api/v1/properties (the key's properties), the cheap authenticated read.
//
// Tests drive it with Go methods: AddKey, AddProperty, EnqueueRevision (duplicates and
// out-of-order revisions are the caller's order), FailNext (429 with Retry-After, 5xx,
// slow answers), PostWebhook (Channex's booking webhook to a URL), and read it back with
// Calls, Availability, Restriction, History, Acks and Wait (a channel-based wait for a
// condition, never a sleep).
package fakechannex

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Documented limits (docs.channex.io api-v.1-documentation/rate-limits and
// guides/best-practices-guide).
const (
	// MaxBody is the largest request body Channex takes ("less than 10mb").
	MaxBody = 10_000_000
	// RequestsPerWindow is the number of availability requests, and separately of
	// restrictions and price requests, a property may make per Window.
	RequestsPerWindow = 10
	// Window is the rate limits' period.
	Window = time.Minute
	// MaxPageLimit is the largest pagination[limit] the fake serves.
	MaxPageLimit = 100
)

// Kinds of ARI request, for the rate limits and the calls.
const (
	KindAvailability = "availability"
	KindRestrictions = "restrictions"
)

// Options change the fake's clock and limits; zero fields take the documented values.
type Options struct {
	// Now is the fake's clock (rate limits, inserted_at, past dates); default time.Now.
	Now func() time.Time
	// Window and PerWindow are the rate limits (default Window and RequestsPerWindow).
	Window    time.Duration
	PerWindow int
	// MaxBody is the largest body accepted (default MaxBody).
	MaxBody int64
	// NoRateLimit turns the rate limits off (benchmarks of the sender's throughput).
	NoRateLimit bool
}

// Property is a Channex property a key owns, with its room types and their rate plans
// (ids are UUIDs, as Channex's).
type Property struct {
	ID       string
	Title    string
	Currency string
	// Timezone is the property's IANA zone: its "today" bounds the dates taken (default
	// UTC-12, the earliest, so that no date a client thinks today is refused).
	Timezone  string
	RoomTypes []RoomType
}

// RoomType is a room type of a property and its rate plans' ids.
type RoomType struct {
	ID        string
	Title     string
	RatePlans []string
}

// Server is a running fake. Its methods are safe for concurrent use.
type Server struct {
	opts Options
	http *http.Server
	ln   net.Listener
	url  string

	mu         sync.Mutex
	changed    chan struct{}
	keys       map[string]bool
	props      map[string]*propState // by property id
	seq        int
	calls      []Call
	faults     []Fault
	sent       map[string][]time.Time // rate limit: "kind|property" → accepted request times
	feed       []Revision             // not acknowledged, in serving order
	revisions  map[string]Revision    // every revision enqueued, by id
	acks       []Ack
	avail      map[ariKey][]Change
	restrict   map[ariKey][]Change
	webhookCli *http.Client
}

type propState struct {
	key       string
	prop      Property
	roomTypes map[string]bool
	ratePlans map[string]string // rate plan → room type
}

type ariKey struct{ Property, ID, Date string }

// Call is one request the fake received.
type Call struct {
	Seq    int
	At     time.Time // on the fake's clock
	Method string
	Path   string
	Query  url.Values
	Kind   string // KindAvailability, KindRestrictions, "feed", "revision", "ack", "properties", ""
	// Status is the HTTP status answered; Refused is true for every non-2xx answer, Reason
	// says why (the error's title and details).
	Status  int
	Refused bool
	Reason  string
	Body    []byte
	Values  []Value  // the ARI change objects the request carried, as parsed
	Applied []int    // indexes into Values that were applied
	Warn    []string // the warnings answered (one per change object left out)
	Fault   bool     // answered by an injected fault
}

// Value is one ARI change object as the fake read it. Exactly one of Date or
// DateFrom/DateTo is set. Fields absent from the object are nil.
type Value struct {
	PropertyID        string   `json:"property_id"`
	RoomTypeID        string   `json:"room_type_id,omitempty"`
	RatePlanID        string   `json:"rate_plan_id,omitempty"`
	Date              string   `json:"date,omitempty"`
	DateFrom          string   `json:"date_from,omitempty"`
	DateTo            string   `json:"date_to,omitempty"`
	Days              []string `json:"days,omitempty"`
	Availability      *int     `json:"availability,omitempty"`
	Rate              *string  `json:"rate,omitempty"` // normalised to a decimal string
	MinStayArrival    *int     `json:"min_stay_arrival,omitempty"`
	MinStayThrough    *int     `json:"min_stay_through,omitempty"`
	MinStay           *int     `json:"min_stay,omitempty"`
	MaxStay           *int     `json:"max_stay,omitempty"`
	ClosedToArrival   *bool    `json:"closed_to_arrival,omitempty"`
	ClosedToDeparture *bool    `json:"closed_to_departure,omitempty"`
	StopSell          *bool    `json:"stop_sell,omitempty"`
}

// Change is one value applied to one date: the call that carried it and the fields it set.
type Change struct {
	Seq   int
	At    time.Time
	Value Value // Date set to the date changed, DateFrom/DateTo empty
}

// Ack is one acknowledgement received.
type Ack struct {
	Seq        int
	RevisionID string
	At         time.Time
	Known      bool // the revision was in the feed (false: acknowledged before, answered 200)
}

// Fault is an answer forced on the next matching requests.
type Fault struct {
	// Path, when set, limits the fault to requests whose path starts with it.
	Path string
	// Status is the status answered (0: the request is served normally after Delay).
	Status int
	// RetryAfter, when > 0, is sent as the Retry-After header (whole seconds).
	RetryAfter time.Duration
	// Delay holds the answer this long (real time) before answering.
	Delay time.Duration
	n     int
}

// Start starts a fake on 127.0.0.1 and stops it when tb ends.
func Start(tb testing.TB, opts ...Options) *Server {
	tb.Helper()
	s, err := New(opts...)
	if err != nil {
		tb.Fatalf("fakechannex: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// New starts a fake on 127.0.0.1 (for a TestMain or a benchmark); Close stops it.
func New(opts ...Options) (*Server, error) {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Window <= 0 {
		o.Window = Window
	}
	if o.PerWindow <= 0 {
		o.PerWindow = RequestsPerWindow
	}
	if o.MaxBody <= 0 {
		o.MaxBody = MaxBody
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:       o,
		ln:         ln,
		url:        "http://" + ln.Addr().String(),
		changed:    make(chan struct{}),
		keys:       map[string]bool{},
		props:      map[string]*propState{},
		sent:       map[string][]time.Time{},
		revisions:  map[string]Revision{},
		avail:      map[ariKey][]Change{},
		restrict:   map[ariKey][]Change{},
		webhookCli: &http.Client{Timeout: 30 * time.Second},
	}
	s.http = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.http.Serve(ln) }()
	return s, nil
}

// Close stops the fake.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.http.Shutdown(ctx)
}

// URL is the fake's base URL (a connection's endpoint): http://127.0.0.1:port.
func (s *Server) URL() string { return s.url }

// NewID returns a random UUID (version 4), the form of every Channex id.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// AddKey makes key an API key the fake accepts.
func (s *Server) AddKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[key] = true
}

// AddProperty gives key (added if new) the property p, its room types and rate plans.
// Every id must be a UUID (NewID); a zero ID is given one. It answers p with its ids.
func (s *Server) AddProperty(key string, p Property) Property {
	if p.ID == "" {
		p.ID = NewID()
	}
	if p.Currency == "" {
		p.Currency = "USD"
	}
	st := &propState{key: key, roomTypes: map[string]bool{}, ratePlans: map[string]string{}}
	rts := make([]RoomType, len(p.RoomTypes))
	for i, rt := range p.RoomTypes {
		if rt.ID == "" {
			rt.ID = NewID()
		}
		plans := append([]string(nil), rt.RatePlans...)
		for j := range plans {
			if plans[j] == "" {
				plans[j] = NewID()
			}
			st.ratePlans[plans[j]] = rt.ID
		}
		rt.RatePlans = plans
		st.roomTypes[rt.ID] = true
		rts[i] = rt
	}
	p.RoomTypes = rts
	st.prop = p
	for _, id := range append([]string{p.ID}, keysOf(st.roomTypes, st.ratePlans)...) {
		if !uuidRE.MatchString(id) {
			panic("fakechannex: id " + id + " is not a lower-case UUID")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[key] = true
	s.props[p.ID] = st
	return p
}

func keysOf(a map[string]bool, b map[string]string) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		out = append(out, k)
	}
	return out
}

// CertificationProperty adds for key the property of Channex's PMS certification tests
// (docs.channex.io api-v.1-documentation/pms-certification-tests): USD, a Twin Room and a
// Double Room, each with a Best Available Rate and a Bed & Breakfast Rate.
func (s *Server) CertificationProperty(key string) Property {
	return s.AddProperty(key, Property{Title: "Test Property - vros", Currency: "USD", RoomTypes: []RoomType{
		{Title: "Twin Room", RatePlans: []string{"", ""}},
		{Title: "Double Room", RatePlans: []string{"", ""}},
	}})
}

// FailNext forces f on the next n requests that match f.Path.
func (s *Server) FailNext(n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f.n = n
	s.faults = append(s.faults, f)
}

// Calls returns every request received so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Count answers the number of calls of one kind ("" for all) without copying them.
func (s *Server) Count(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if kind == "" {
		return len(s.calls)
	}
	n := 0
	for _, c := range s.calls {
		if c.Kind == kind {
			n++
		}
	}
	return n
}

// CallsOf returns the calls of one kind (KindAvailability, KindRestrictions, "feed", "ack", …).
func (s *Server) CallsOf(kind string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	return out
}

// Problems returns the calls refused or answered with warnings, injected faults excepted:
// what a correct client never causes.
func (s *Server) Problems() []Call {
	var out []Call
	for _, c := range s.Calls() {
		if !c.Fault && (c.Refused || len(c.Warn) > 0) {
			out = append(out, c)
		}
	}
	return out
}

// Wait returns when cond answers true, checking it again after every change of the fake's
// state (a request, a revision, an ack), or ctx's error. cond may call the Server's methods.
func (s *Server) Wait(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// notify wakes the waiters; called with mu held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Availability answers the availability of a room type on date and the change that set it.
func (s *Server) Availability(property, roomType, date string) (int, Change, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.avail[ariKey{property, roomType, date}]
	if len(h) == 0 {
		return 0, Change{}, false
	}
	return *h[len(h)-1].Value.Availability, h[len(h)-1], true
}

// Restrictions is the state of a rate plan on a date: every field as last set (nil: never).
type Restrictions = Value

// Restriction answers the rates and restrictions of a rate plan on date, each field as the
// latest change that carried it left it.
func (s *Server) Restriction(property, ratePlan, date string) (Restrictions, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.restrict[ariKey{property, ratePlan, date}]
	if len(h) == 0 {
		return Restrictions{}, false
	}
	st := Restrictions{PropertyID: property, RatePlanID: ratePlan, Date: date}
	for _, c := range h {
		v := c.Value
		merge(&st, v)
	}
	return st, true
}

func merge(st *Value, v Value) {
	if v.Rate != nil {
		st.Rate = v.Rate
	}
	if v.MinStayArrival != nil {
		st.MinStayArrival = v.MinStayArrival
	}
	if v.MinStayThrough != nil {
		st.MinStayThrough = v.MinStayThrough
	}
	if v.MinStay != nil {
		st.MinStay = v.MinStay
	}
	if v.MaxStay != nil {
		st.MaxStay = v.MaxStay
	}
	if v.ClosedToArrival != nil {
		st.ClosedToArrival = v.ClosedToArrival
	}
	if v.ClosedToDeparture != nil {
		st.ClosedToDeparture = v.ClosedToDeparture
	}
	if v.StopSell != nil {
		st.StopSell = v.StopSell
	}
}

// History answers every change applied to one date of a room type's availability (id a
// room type) or of a rate plan (id a rate plan), oldest first: with each change's call
// sequence, a test checks that no older value arrived after a newer one.
func (s *Server) History(property, id, date string) []Change {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := ariKey{property, id, date}
	if h, ok := s.avail[k]; ok {
		return append([]Change(nil), h...)
	}
	return append([]Change(nil), s.restrict[k]...)
}

// Acks returns every acknowledgement received, in order.
func (s *Server) Acks() []Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ack(nil), s.acks...)
}

// Pending returns the ids of the revisions in the feed (not acknowledged), in feed order.
func (s *Server) Pending() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.feed))
	for i, r := range s.feed {
		out[i] = r.ID
	}
	return out
}

// record appends c, numbering it; called with mu held.
func (s *Server) record(c Call) Call {
	s.seq++
	c.Seq = s.seq
	s.calls = append(s.calls, c)
	s.notify()
	return c
}

// errorBody is Channex's error answer: {"errors":{"code","title","details"?}}.
func errorBody(code, title string, details any) []byte {
	e := map[string]any{"code": code, "title": title}
	if details != nil {
		e["details"] = details
	}
	b, _ := json.Marshal(map[string]any{"errors": e})
	return b
}

var (
	rateRE = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]{1,2})?$`)
	days   = map[string]bool{"mo": true, "tu": true, "we": true, "th": true, "fr": true, "sa": true, "su": true}
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	now := s.opts.Now()
	body, readErr := io.ReadAll(io.LimitReader(r.Body, s.opts.MaxBody+1))
	call := Call{At: now, Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: body}
	// commit records the call and answers it; apply, when set, changes the fake's state in
	// the same hold of mu, given the call's number: what a request changed is never seen
	// before the request is in Calls, nor numbered like another.
	commit := func(status int, b []byte, h map[string]string, apply func(seq int)) {
		call.Status = status
		call.Refused = status < 200 || status > 299
		s.mu.Lock()
		if apply != nil {
			apply(s.seq + 1)
		}
		s.record(call)
		s.mu.Unlock()
		for k, v := range h {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(b)
	}
	answer := func(status int, b []byte, h map[string]string) { commit(status, b, h, nil) }
	refuse := func(status int, code, title string, details any) {
		call.Reason = title
		if details != nil {
			d, _ := json.Marshal(details)
			call.Reason += ": " + string(d)
		}
		answer(status, errorBody(code, title, details), nil)
	}
	call.Kind = kindOf(r.Method, r.URL.Path)

	// Injected faults first: they stand for Channex failing whatever the request says.
	if f, ok := s.takeFault(r.URL.Path); ok {
		if f.Delay > 0 {
			select {
			case <-time.After(f.Delay):
			case <-r.Context().Done():
			}
		}
		if f.Status != 0 {
			call.Fault = true
			h := map[string]string{}
			if f.RetryAfter > 0 {
				h["Retry-After"] = strconv.Itoa(int((f.RetryAfter + time.Second - 1) / time.Second))
			}
			var b []byte
			switch {
			case f.Status == http.StatusTooManyRequests:
				b = errorBody("http_too_many_requests", "Too Many Requests", nil)
			case f.Status >= 500:
				b = errorBody("internal_server_error", "Internal Server Error", nil)
			default:
				b = errorBody("validation_error", "Unprocessable Entity", map[string]any{"values": []string{"injected refusal"}})
			}
			call.Reason = "injected fault"
			answer(f.Status, b, h)
			return
		}
	}

	key := r.Header.Get("user-api-key")
	s.mu.Lock()
	known := s.keys[key]
	s.mu.Unlock()
	if key == "" || !known {
		refuse(http.StatusUnauthorized, "unauthorized", "Unauthorized", nil)
		return
	}
	if readErr != nil {
		refuse(http.StatusBadRequest, "bad_request", "Bad Request", []string{readErr.Error()})
		return
	}
	if int64(len(body)) > s.opts.MaxBody {
		refuse(http.StatusRequestEntityTooLarge, "payload_too_large", "Payload Too Large", nil)
		return
	}

	path := r.URL.Path
	switch {
	case path == "/api/v1/availability" || path == "/api/v1/restrictions":
		if r.Method != http.MethodPost {
			refuse(http.StatusMethodNotAllowed, "method_not_allowed", "Method Not Allowed", nil)
			return
		}
		s.serveARI(key, call.Kind, r, body, &call, commit, refuse)
	case path == "/api/v1/booking_revisions/feed":
		if r.Method != http.MethodGet {
			refuse(http.StatusMethodNotAllowed, "method_not_allowed", "Method Not Allowed", nil)
			return
		}
		s.serveFeed(key, r, answer, refuse)
	case strings.HasPrefix(path, "/api/v1/booking_revisions/") && strings.HasSuffix(path, "/ack"):
		if r.Method != http.MethodPost {
			refuse(http.StatusMethodNotAllowed, "method_not_allowed", "Method Not Allowed", nil)
			return
		}
		id := strings.TrimSuffix(strings.TrimPrefix(path, "/api/v1/booking_revisions/"), "/ack")
		s.serveAck(key, id, body, &call, commit, refuse)
	case strings.HasPrefix(path, "/api/v1/booking_revisions/"):
		if r.Method != http.MethodGet {
			refuse(http.StatusMethodNotAllowed, "method_not_allowed", "Method Not Allowed", nil)
			return
		}
		s.serveRevision(key, strings.TrimPrefix(path, "/api/v1/booking_revisions/"), answer, refuse)
	case path == "/api/v1/properties":
		if r.Method != http.MethodGet {
			refuse(http.StatusMethodNotAllowed, "method_not_allowed", "Method Not Allowed", nil)
			return
		}
		s.serveProperties(key, r, answer, refuse)
	default:
		refuse(http.StatusNotFound, "not_found", "Not Found", nil)
	}
}

func kindOf(method, path string) string {
	switch {
	case path == "/api/v1/availability":
		return KindAvailability
	case path == "/api/v1/restrictions":
		return KindRestrictions
	case path == "/api/v1/booking_revisions/feed":
		return "feed"
	case strings.HasPrefix(path, "/api/v1/booking_revisions/") && strings.HasSuffix(path, "/ack"):
		return "ack"
	case strings.HasPrefix(path, "/api/v1/booking_revisions/"):
		return "revision"
	case path == "/api/v1/properties":
		return "properties"
	}
	return ""
}

func (s *Server) takeFault(path string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.faults {
		f := &s.faults[i]
		if f.n > 0 && strings.HasPrefix(path, f.Path) {
			f.n--
			out := *f
			if f.n == 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
			return out, true
		}
	}
	return Fault{}, false
}

// wireValue is a change object as sent: pointers tell absent from zero, and json.Number
// keeps the rate's type (string or integer) for the check.
type wireValue struct {
	PropertyID        *string         `json:"property_id"`
	RoomTypeID        *string         `json:"room_type_id"`
	RatePlanID        *string         `json:"rate_plan_id"`
	Date              *string         `json:"date"`
	DateFrom          *string         `json:"date_from"`
	DateTo            *string         `json:"date_to"`
	Days              []string        `json:"days"`
	Availability      *int            `json:"availability"`
	Rate              json.RawMessage `json:"rate"`
	MinStayArrival    *int            `json:"min_stay_arrival"`
	MinStayThrough    *int            `json:"min_stay_through"`
	MinStay           *int            `json:"min_stay"`
	MaxStay           *int            `json:"max_stay"`
	ClosedToArrival   *bool           `json:"closed_to_arrival"`
	ClosedToDeparture *bool           `json:"closed_to_departure"`
	StopSell          *bool           `json:"stop_sell"`
}

func (s *Server) serveARI(key, kind string, r *http.Request, body []byte, call *Call,
	commit func(int, []byte, map[string]string, func(int)), refuse func(int, string, string, any)) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		refuse(http.StatusUnsupportedMediaType, "unsupported_media_type", "Unsupported Media Type", []string{"Content-Type " + ct})
		return
	}
	var req struct {
		Values []json.RawMessage `json:"values"`
	}
	if err := strictDecode(body, &req); err != nil {
		refuse(http.StatusUnprocessableEntity, "validation_error", "Validation Error", map[string][]string{"body": {err.Error()}})
		return
	}
	if len(req.Values) == 0 {
		refuse(http.StatusUnprocessableEntity, "validation_error", "Validation Error", map[string][]string{"values": {"can't be blank"}})
		return
	}
	// Shape first: any change object of the wrong shape refuses the request.
	wires := make([]wireValue, len(req.Values))
	for i, raw := range req.Values {
		if err := strictDecode(raw, &wires[i]); err != nil {
			refuse(http.StatusUnprocessableEntity, "validation_error", "Validation Error",
				map[string][]string{fmt.Sprintf("values[%d]", i): {err.Error()}})
			return
		}
		w := wires[i]
		var missing []string
		if w.PropertyID == nil {
			missing = append(missing, "property_id")
		}
		if kind == KindAvailability {
			if w.RoomTypeID == nil {
				missing = append(missing, "room_type_id")
			}
			if w.Availability == nil {
				missing = append(missing, "availability")
			}
			if w.RatePlanID != nil || w.Rate != nil || w.MinStayArrival != nil || w.MinStayThrough != nil || w.MinStay != nil ||
				w.MaxStay != nil || w.ClosedToArrival != nil || w.ClosedToDeparture != nil || w.StopSell != nil {
				refuse(http.StatusUnprocessableEntity, "validation_error", "Validation Error",
					map[string][]string{fmt.Sprintf("values[%d]", i): {"only property_id, room_type_id, dates, days and availability are availability fields"}})
				return
			}
		} else {
			if w.RatePlanID == nil {
				missing = append(missing, "rate_plan_id")
			}
			if w.RoomTypeID != nil || w.Availability != nil {
				refuse(http.StatusUnprocessableEntity, "validation_error", "Validation Error",
					map[string][]string{fmt.Sprintf("values[%d]", i): {"room_type_id and availability are not restriction fields"}})
				return
			}
		}
		if len(missing) > 0 {
			refuse(http.StatusUnprocessableEntity, "validation_error", "Validation Error",
				map[string][]string{fmt.Sprintf("values[%d]", i): {"missing " + strings.Join(missing, ", ")}})
			return
		}
	}

	now := s.opts.Now()
	values := make([]Value, len(wires))
	todays := make([]string, len(wires))
	valid := make([]bool, len(wires))
	var warns []string
	warn := func(i int, msg string) {
		warns = append(warns, fmt.Sprintf("values[%d]: %s", i, msg))
	}
	s.mu.Lock()
	for i, w := range wires {
		v, today, msg := s.checkValue(key, kind, w, now)
		values[i], todays[i] = v, today
		if msg != "" {
			warn(i, msg)
			continue
		}
		valid[i] = true
	}
	// Rate limits: per property named by the request, per kind.
	props := map[string]bool{}
	for i, v := range values {
		if valid[i] {
			props[v.PropertyID] = true
		}
	}
	if !s.opts.NoRateLimit {
		for p := range props {
			k := kind + "|" + p
			times := s.sent[k][:0:0]
			for _, t := range s.sent[k] {
				if now.Sub(t) < s.opts.Window {
					times = append(times, t)
				}
			}
			s.sent[k] = times
			if len(times) >= s.opts.PerWindow {
				s.mu.Unlock()
				call.Values = values
				refuse(http.StatusTooManyRequests, "http_too_many_requests", "Too Many Requests", nil)
				return
			}
		}
		for p := range props {
			s.sent[kind+"|"+p] = append(s.sent[kind+"|"+p], now)
		}
	}
	s.mu.Unlock()
	// Applied with the call recorded (commit): a later object overrides an earlier one on
	// the dates they share; the changes carry the call's number.
	apply := func(seq int) {
		for i, v := range values {
			if !valid[i] {
				continue
			}
			call.Applied = append(call.Applied, i)
			for _, d := range expand(v, todays[i]) {
				c := v
				c.Date, c.DateFrom, c.DateTo, c.Days = d, "", "", nil
				if kind == KindAvailability {
					k := ariKey{v.PropertyID, v.RoomTypeID, d}
					s.avail[k] = append(s.avail[k], Change{Seq: seq, At: now, Value: c})
				} else {
					k := ariKey{v.PropertyID, v.RatePlanID, d}
					s.restrict[k] = append(s.restrict[k], Change{Seq: seq, At: now, Value: c})
				}
			}
		}
	}

	call.Values = values
	call.Warn = warns
	var data []map[string]string
	ps := make([]string, 0, len(props))
	for p := range props {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	for range ps {
		data = append(data, map[string]string{"id": NewID(), "type": "task"})
	}
	meta := map[string]any{"message": "Success"}
	if len(warns) > 0 {
		ws := make([]map[string]string, len(warns))
		for i, w := range warns {
			ws[i] = map[string]string{"warning": w}
		}
		meta["warnings"] = ws
	}
	if data == nil {
		data = []map[string]string{}
	}
	b, _ := json.Marshal(map[string]any{"data": data, "meta": meta})
	commit(http.StatusOK, b, nil, apply)
}

// today is the date at now in the property's time zone; a property without one takes the
// earliest zone on Earth (UTC-12), so that no client's "today" is ever in its past.
func (p *propState) today(now time.Time) string {
	loc := time.FixedZone("UTC-12", -12*3600)
	if p.prop.Timezone != "" {
		if l, err := time.LoadLocation(p.prop.Timezone); err == nil {
			loc = l
		}
	}
	return now.In(loc).Format("2006-01-02")
}

// checkValue checks one change object's values (ids owned by key, dates from the
// property's today, ranges); called with mu held. It answers the value, the property's
// today and, when the object is left out, why.
func (s *Server) checkValue(key, kind string, w wireValue, now time.Time) (Value, string, string) {
	today := ""
	v := Value{
		PropertyID: *w.PropertyID, Days: w.Days, Availability: w.Availability,
		MinStayArrival: w.MinStayArrival, MinStayThrough: w.MinStayThrough, MinStay: w.MinStay, MaxStay: w.MaxStay,
		ClosedToArrival: w.ClosedToArrival, ClosedToDeparture: w.ClosedToDeparture, StopSell: w.StopSell,
	}
	if w.RoomTypeID != nil {
		v.RoomTypeID = *w.RoomTypeID
	}
	if w.RatePlanID != nil {
		v.RatePlanID = *w.RatePlanID
	}
	if w.Date != nil {
		v.Date = *w.Date
	}
	if w.DateFrom != nil {
		v.DateFrom = *w.DateFrom
	}
	if w.DateTo != nil {
		v.DateTo = *w.DateTo
	}
	if w.Rate != nil {
		rate, msg := parseRate(w.Rate)
		if msg != "" {
			return v, today, msg
		}
		v.Rate = &rate
	}
	p, ok := s.props[v.PropertyID]
	if !ok || p.key != key {
		return v, today, "property_id " + v.PropertyID + " is unknown"
	}
	today = p.today(now)
	if kind == KindAvailability {
		if !p.roomTypes[v.RoomTypeID] {
			return v, today, "room_type_id " + v.RoomTypeID + " is not a room type of the property"
		}
		if *v.Availability < 0 {
			return v, today, "availability must be 0 or more"
		}
	} else {
		if _, ok := p.ratePlans[v.RatePlanID]; !ok {
			return v, today, "rate_plan_id " + v.RatePlanID + " is not a rate plan of the property"
		}
		if v.Rate == nil && v.MinStayArrival == nil && v.MinStayThrough == nil && v.MinStay == nil && v.MaxStay == nil &&
			v.ClosedToArrival == nil && v.ClosedToDeparture == nil && v.StopSell == nil {
			return v, today, "no rate or restriction to change"
		}
		for name, n := range map[string]*int{"min_stay_arrival": v.MinStayArrival, "min_stay_through": v.MinStayThrough, "min_stay": v.MinStay} {
			if n != nil && *n < 1 {
				return v, today, name + " must be 1 or more"
			}
		}
		if v.MaxStay != nil && *v.MaxStay < 0 {
			return v, today, "max_stay must be 0 (none) or more"
		}
	}
	switch {
	case w.Date != nil && (w.DateFrom != nil || w.DateTo != nil):
		return v, today, "both date and date_from/date_to"
	case w.Date != nil:
		if !validDate(v.Date) {
			return v, today, "date " + v.Date + " is not a YYYY-MM-DD date"
		}
		if v.Date < today {
			return v, today, "date " + v.Date + " is in the past"
		}
	case w.DateFrom != nil && w.DateTo != nil:
		if !validDate(v.DateFrom) || !validDate(v.DateTo) {
			return v, today, "date_from/date_to are not YYYY-MM-DD dates"
		}
		if v.DateFrom > v.DateTo {
			return v, today, "date_from after date_to"
		}
		if v.DateTo < today {
			return v, today, "date_to " + v.DateTo + " is in the past"
		}
	default:
		return v, today, "neither date nor date_from and date_to"
	}
	for _, d := range v.Days {
		if !days[d] {
			return v, today, "days: unknown day " + d
		}
	}
	return v, today, ""
}

// parseRate reads a rate: a decimal string ("120.00") or an integer in minor units
// (12000), the two forms Channex takes; answers it as a decimal string with 2 decimals.
func parseRate(raw json.RawMessage) (string, string) {
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		if !rateRE.MatchString(str) {
			return "", "rate " + str + " is not a decimal amount"
		}
		whole, frac, _ := strings.Cut(str, ".")
		for len(frac) < 2 {
			frac += "0"
		}
		return whole + "." + frac, ""
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&n); err == nil {
		i, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil || i < 0 {
			return "", "rate " + n.String() + " is not an amount in minor units"
		}
		return fmt.Sprintf("%d.%02d", i/100, i%100), ""
	}
	return "", "rate must be a decimal string or an integer"
}

func validDate(d string) bool {
	if len(d) != 10 {
		return false
	}
	_, err := time.Parse("2006-01-02", d)
	return err == nil
}

var weekdays = [...]string{"su", "mo", "tu", "we", "th", "fr", "sa"}

// expand lists the dates a valid change object sets, from today on.
func expand(v Value, today string) []string {
	from, to := v.Date, v.Date
	if v.Date == "" {
		from, to = v.DateFrom, v.DateTo
	}
	if from < today {
		from = today // Channex clamps a range that starts in the past to today
	}
	only := map[string]bool{}
	for _, d := range v.Days {
		only[d] = true
	}
	var out []string
	t, _ := time.Parse("2006-01-02", from)
	end, _ := time.Parse("2006-01-02", to)
	for ; !t.After(end); t = t.AddDate(0, 0, 1) {
		if len(only) > 0 && !only[weekdays[t.Weekday()]] {
			continue
		}
		out = append(out, t.Format("2006-01-02"))
	}
	return out
}

// strictDecode decodes one JSON value into v refusing unknown fields and trailing data.
func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func (s *Server) serveProperties(key string, r *http.Request,
	answer func(int, []byte, map[string]string), refuse func(int, string, string, any)) {
	page, limit, ok := pagination(r.URL.Query())
	if !ok {
		refuse(http.StatusBadRequest, "bad_request", "Bad Request", []string{"pagination[page] and pagination[limit] are positive integers, limit ≤ 100"})
		return
	}
	s.mu.Lock()
	var mine []Property
	for _, p := range s.props {
		if p.key == key {
			mine = append(mine, p.prop)
		}
	}
	s.mu.Unlock()
	sort.Slice(mine, func(i, j int) bool { return mine[i].ID < mine[j].ID })
	total := len(mine)
	data := []map[string]any{}
	for i := (page - 1) * limit; i < total && i < page*limit; i++ {
		p := mine[i]
		data = append(data, map[string]any{"id": p.ID, "type": "property", "attributes": map[string]any{
			"id": p.ID, "title": p.Title, "currency": p.Currency,
		}})
	}
	b, _ := json.Marshal(map[string]any{"data": data, "meta": map[string]any{"page": page, "limit": limit, "total": total}})
	answer(http.StatusOK, b, nil)
}

// pagination reads pagination[page] (default 1) and pagination[limit] (default 10, ≤ 100);
// any other query parameter than filters and those is refused.
func pagination(q url.Values) (page, limit int, ok bool) {
	page, limit = 1, 10
	for k, vs := range q {
		if len(vs) != 1 {
			return 0, 0, false
		}
		switch {
		case k == "pagination[page]":
			n, err := strconv.Atoi(vs[0])
			if err != nil || n < 1 {
				return 0, 0, false
			}
			page = n
		case k == "pagination[limit]":
			n, err := strconv.Atoi(vs[0])
			if err != nil || n < 1 || n > MaxPageLimit {
				return 0, 0, false
			}
			limit = n
		case strings.HasPrefix(k, "filter["):
		default:
			return 0, 0, false
		}
	}
	return page, limit, true
}
