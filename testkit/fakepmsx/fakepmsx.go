// Package fakepmsx is a fake SiteMinder pmsXchange for the tests, built from its published
// contract (docs/channels.md, OpenTravel (pmsXchange)): it takes the ARI messages a PMS sends
// (OTA_HotelAvailNotifRQ, OTA_HotelRateAmountNotifRQ) in SOAP 1.1 envelopes with a
// WS-Security UsernameToken, validates every one against the OpenTravel 2015A schemas
// (testkit/otaschema) and against what pmsXchange documents, answers schema-valid RS
// messages, keeps the ARI state per date, injects faults, and pushes reservations
// (OTA_HotelResNotifRQ, OTA_HotelResModifyNotifRQ) to a PMS's inbound URL.
package fakepmsx

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vros/vros/testkit/otaschema"
)

// Call is one request the fake received.
type Call struct {
	Seq  int    // the order of arrival, from 1
	Root string // the message's element (OTA_HotelAvailNotifRQ, …), "" when unreadable
	// Kind: "availability", "restrictions", "rates", "test" (an AvailNotif without
	// AvailStatusMessages: a check of the credentials), "" when unreadable.
	Kind     string
	Body     []byte // the request as received
	Response []byte
	Status   int // the HTTP status answered
	Accepted bool
	// Refused says why a request was not accepted (a schema error, bad credentials, an
	// injected fault, …).
	Refused string
	// Fault is the injected fault answered instead ("" none).
	Fault string
	At    time.Time
	// Updates are what an accepted ARI message set, one per date and field, in the
	// message's order.
	Updates []Update
}

// Update is one field of one date an accepted message set: Plan "" for a room type's
// availability; Field as in Day ("Availability", "Rate", "Currency", "MinLOS", "MinStay",
// "MaxLOS", "Master", "Arrival", "Departure"); Value "" for a removed length of stay.
type Update struct {
	Hotel, Room, Plan, Date string
	Field, Value            string
}

// Fault is an injected failure of the next requests.
type Fault string

const (
	Fault500  Fault = "http500"    // HTTP 500 with a plain body
	Fault503  Fault = "http503"    // HTTP 503 with Retry-After: 1
	Fault429  Fault = "http429"    // HTTP 429 with Retry-After: 1
	FaultSOAP Fault = "soap_fault" // HTTP 500 with a SOAP Fault
	FaultSlow Fault = "slow"       // the answer held until the request is abandoned or Release
)

// Limits are pmsXchange's throttle on a connection; a request beyond them is answered the
// SOAP Fault "Throttle limit reached, please try again later..." (HTTP 500). Zero fields: no
// limit.
type Limits struct {
	RequestsPerMinute int // requests arriving in one clock minute (00.000 to 59.999)
	Concurrent        int // requests at once
	MaxMessages       int // AvailStatusMessage or RateAmountMessage elements per request
	MaxBytes          int // bytes per request
}

// DocumentedLimits are the throttle parameters pmsXchange documents for a certified PMS
// ("Throttle Handling"): 40 requests a minute, 3 at once, 500 messages per request, 2 MB.
var DocumentedLimits = Limits{RequestsPerMinute: 40, Concurrent: 3, MaxMessages: 500, MaxBytes: 2 << 20}

// Server is a running fake pmsXchange. Safe for concurrent use.
type Server struct {
	URL string // where the PMS sends its ARI messages

	srv       *httptest.Server
	validator *otaschema.Validator
	username  string
	password  string

	mu       sync.Mutex
	calls    []Call
	seq      int // accepted messages
	state    map[key]*Day
	history  map[key]map[field][]Value
	faults   []Fault
	held     int
	limits   Limits
	inflight int
	maxIn    int
	minute   time.Time
	inMinute int
	changed  chan struct{}
	released chan struct{}
}

// New starts a fake taking the credentials username and password, within DocumentedLimits
// (SetLimits changes them); every message is checked with v (the caller keeps it and closes
// it).
func New(v *otaschema.Validator, username, password string) *Server {
	s := &Server{
		validator: v, username: username, password: password,
		state: map[key]*Day{}, history: map[key]map[field][]Value{}, limits: DocumentedLimits,
		changed: make(chan struct{}), released: make(chan struct{}),
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/webservices/VROS"
	return s
}

// Close stops the server (releasing held answers first).
func (s *Server) Close() {
	s.Release()
	s.srv.Close()
}

// SetLimits sets the throttle (Limits{}: none).
func (s *Server) SetLimits(l Limits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits = l
}

// MaxInFlight is the most requests the fake has been handling at once.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxIn
}

// Fail makes the next n requests answer f instead of being processed.
func (s *Server) Fail(n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults = append(s.faults, f)
	}
}

// Release lets the held (FaultSlow) answers go, and the later ones too.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.released:
	default:
		close(s.released)
	}
}

func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Held is the number of requests held by FaultSlow now.
func (s *Server) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// Calls lists the requests received so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CallsSince lists the requests received after the first n (n: a len(Calls()) read before).
func (s *Server) CallsSince(n int) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n > len(s.calls) {
		return nil
	}
	return append([]Call(nil), s.calls[n:]...)
}

// Accepted lists the accepted requests of a kind ("" any).
func (s *Server) Accepted(kind string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Accepted && (kind == "" || c.Kind == kind) {
			out = append(out, c)
		}
	}
	return out
}

// Availability is a room type's date's last BookingLimit ("" none received).
func (s *Server) Availability(hotel, room, date string) string {
	return s.Day(hotel, room, "", date).Availability
}

// Day is the state of a date: of a room type's availability when plan is "", else of a
// rate plan's rate and restrictions.
func (s *Server) Day(hotel, room, plan, date string) Day {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.state[key{hotel, room, plan, date}]; d != nil {
		return *d
	}
	return Day{}
}

// Dates lists the dates that received any value for hotel, room and plan ("" the room
// type's availability), sorted.
func (s *Server) Dates(hotel, room, plan string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.state {
		if k.hotel == hotel && k.room == room && k.plan == plan {
			out = append(out, k.date)
		}
	}
	sort.Strings(out)
	return out
}

// History lists every value a date's field received (name as in Day: "Availability",
// "Rate", "MinLOS", …), in the order of the accepted messages.
func (s *Server) History(hotel, room, plan, date, name string) []Value {
	s.mu.Lock()
	defer s.mu.Unlock()
	for f, n := range fieldNames {
		if n == name {
			return append([]Value(nil), s.history[key{hotel, room, plan, date}][field(f)]...)
		}
	}
	return nil
}

// Wait returns once cond holds, checking it after each request the fake receives (cond may
// call the Server's methods), or ctx's error.
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
			return fmt.Errorf("fakepmsx: waiting: %w", ctx.Err())
		}
	}
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.Seq = len(s.calls) + 1
	c.At = time.Now()
	s.calls = append(s.calls, c)
	s.notify()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	c := Call{Body: body}
	answer := func(status int, b []byte, refused string) {
		c.Status, c.Response = status, b
		c.Refused = refused
		c.Accepted = refused == "" && c.Fault == ""
		s.record(c)
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.WriteHeader(status)
		w.Write(b)
	}
	if err != nil {
		answer(http.StatusBadRequest, []byte("unreadable body"), "unreadable body")
		return
	}
	s.mu.Lock()
	s.inflight++
	s.maxIn = max(s.maxIn, s.inflight)
	defer func() {
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
	}()
	var throttled string
	if m := time.Now().Truncate(time.Minute); !m.Equal(s.minute) {
		s.minute, s.inMinute = m, 0
	}
	s.inMinute++
	switch lim := s.limits; {
	case lim.RequestsPerMinute > 0 && s.inMinute > lim.RequestsPerMinute:
		throttled = fmt.Sprintf("throttle: more than %d requests in the minute", lim.RequestsPerMinute)
	case lim.Concurrent > 0 && s.inflight > lim.Concurrent:
		throttled = fmt.Sprintf("throttle: more than %d requests at once", lim.Concurrent)
	case lim.MaxBytes > 0 && len(body) > lim.MaxBytes:
		throttled = fmt.Sprintf("throttle: more than %d bytes", lim.MaxBytes)
	case lim.MaxMessages > 0 && messages(body) > lim.MaxMessages:
		throttled = fmt.Sprintf("throttle: more than %d messages", lim.MaxMessages)
	}
	var fault Fault
	if len(s.faults) > 0 && throttled == "" {
		fault, s.faults = s.faults[0], s.faults[1:]
	}
	released := s.released
	s.mu.Unlock()
	if throttled != "" {
		answer(http.StatusInternalServerError, soapFault("Server", "Throttle limit reached, please try again later..."), throttled)
		return
	}
	switch fault {
	case Fault500:
		c.Fault = string(fault)
		answer(http.StatusInternalServerError, []byte("internal error"), "")
		return
	case Fault503, Fault429:
		c.Fault = string(fault)
		w.Header().Set("Retry-After", "1")
		status := http.StatusServiceUnavailable
		if fault == Fault429 {
			status = http.StatusTooManyRequests
		}
		answer(status, []byte("try again later"), "")
		return
	case FaultSOAP:
		c.Fault = string(fault)
		answer(http.StatusInternalServerError, soapFault("Server", "injected failure"), "")
		return
	case FaultSlow:
		c.Fault = string(fault)
		s.mu.Lock()
		s.held++
		s.notify()
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.held--
			s.notify()
			s.mu.Unlock()
		}()
		select {
		case <-r.Context().Done():
			c.Refused = "abandoned by the client"
			s.record(c)
			return
		case <-released:
		}
		c.Fault = ""
	}
	if r.Method != http.MethodPost {
		answer(http.StatusMethodNotAllowed, []byte("POST only"), "method "+r.Method)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "text/xml" {
		answer(http.StatusUnsupportedMediaType, soapFault("Client", "Content-Type must be text/xml; charset=utf-8"), "Content-Type "+r.Header.Get("Content-Type"))
		return
	}
	user, pass, passType, hasToken, root, payload, err := readEnvelope(body)
	if err != nil {
		answer(http.StatusInternalServerError, soapFault("Client", err.Error()), err.Error())
		return
	}
	c.Root = root.Local
	rsRoot := strings.TrimSuffix(root.Local, "RQ") + "RS"
	if root.Space != NSOTA || (root.Local != "OTA_HotelAvailNotifRQ" && root.Local != "OTA_HotelRateAmountNotifRQ") {
		answer(http.StatusInternalServerError, soapFault("Client", "unsupported message "+root.Local), "unsupported message "+root.Local)
		return
	}
	echo := echoToken(payload)
	refuse := func(typ, code, text string) {
		b := Envelope("", "", rs(rsRoot, echo, []OTAError{{Type: typ, Code: code, Text: text}}, ""))
		if err := s.validator.Validate(b); err != nil {
			panic("fakepmsx: its own answer is not schema-valid: " + err.Error())
		}
		answer(http.StatusOK, b, text)
	}
	if !hasToken || user != s.username || pass != s.password || passType != PasswordTx {
		refuse("4", "497", "Invalid WS-Security credentials")
		return
	}
	if err := s.validator.Validate(body); err != nil {
		refuse("10", "", err.Error())
		return
	}
	var changes []change
	if root.Local == "OTA_HotelAvailNotifRQ" {
		c.Kind, _, changes, err = readAvail(payload)
	} else {
		c.Kind = "rates"
		_, changes, err = readRates(payload)
	}
	if err != nil {
		refuse("3", "450", err.Error())
		return
	}
	b := Envelope("", "", rs(rsRoot, echo, nil, ""))
	if err := s.validator.Validate(b); err != nil {
		panic("fakepmsx: its own answer is not schema-valid: " + err.Error())
	}
	for _, ch := range changes {
		c.Updates = append(c.Updates, Update{Hotel: ch.k.hotel, Room: ch.k.room, Plan: ch.k.plan, Date: ch.k.date,
			Field: fieldNames[ch.f], Value: ch.v})
	}
	s.mu.Lock()
	s.seq++
	for _, ch := range changes {
		d := s.state[ch.k]
		if d == nil {
			d = &Day{}
			s.state[ch.k] = d
		}
		d.set(ch.f, ch.v)
		h := s.history[ch.k]
		if h == nil {
			h = map[field][]Value{}
			s.history[ch.k] = h
		}
		h[ch.f] = append(h[ch.f], Value{Seq: s.seq, Value: ch.v})
	}
	s.mu.Unlock()
	answer(http.StatusOK, b, "")
}

// messages counts a request's AvailStatusMessage and RateAmountMessage elements.
func messages(body []byte) int {
	return bytes.Count(body, []byte("<AvailStatusMessage>")) + bytes.Count(body, []byte("<AvailStatusMessage ")) +
		bytes.Count(body, []byte("<RateAmountMessage>")) + bytes.Count(body, []byte("<RateAmountMessage "))
}

func echoToken(payload []byte) string {
	var m struct {
		EchoToken string `xml:"EchoToken,attr"`
	}
	xml.Unmarshal(payload, &m)
	return m.EchoToken
}
