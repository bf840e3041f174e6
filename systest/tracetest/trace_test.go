package tracetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/devstack/jaeger"
	"github.com/vros/vros/systest/apitest"
)

// within bounds how long a test waits for an event-fed view, or for Jaeger to hold a trace.
const within = time.Minute

// The guest of the traced booking: none of it may reach a span or a log line of its trace.
const (
	firstName = "Zephyrine"
	lastName  = "Quillfeather"
	phone     = "+44 20 7946 0312"
)

// TestBookingTrace makes a booking through edge's interface B with a known W3C trace
// context and reads its trace back from Jaeger: one trace links edge's server span, edge's
// client span to booking-svc, booking-svc's server span, its MongoDB commands, the Kafka
// produce of the booking's event, catalog-svc's processing of that event and the MongoDB
// write it applies, each with OpenTelemetry's semantic-convention attributes; no span holds
// the guest's personal data or a credential; the request log lines of edge and booking-svc
// carry the trace id and their server spans' ids.
func TestBookingTrace(t *testing.T) {
	if skip != "" {
		t.Skip(skip)
	}
	started := time.Now()
	acc, pid := newProperty(t)
	email := "zq-" + strings.ToLower(acc.AccountID) + "@example.com"
	idemKey := "trace-order-" + acc.AccountID

	// The booking, with the trace context of a caller's span: trace id known, sampled.
	var traceID, callerSpan string
	var bookingID int64
	deadline := time.Now().Add(within)
	for {
		traceID, callerSpan = randomHex(16), randomHex(8)
		body := acc.BBody("create", map[string]any{"propertyId": pid, "firstName": firstName, "lastName": lastName,
			"email": email, "phone1": phone, "numberofadults": 2, "leadsourceId": 1, "checkin": apitest.Day(40), "checkout": apitest.Day(43)})
		r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/vros/external-booking",
			map[string]string{"traceparent": "00-" + traceID + "-" + callerSpan + "-01", "Idempotency-Key": idemKey}, body)
		if err != nil {
			t.Fatal(err)
		}
		var a struct {
			Status  int    `json:"status"`
			Message string `json:"message"`
			Data    struct {
				BookingID int64 `json:"bookingId"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &a); err != nil {
			t.Fatalf("create: HTTP %d %s", r.Code, r.Body)
		}
		if a.Status == 0 && a.Data.BookingID != 0 {
			bookingID = a.Data.BookingID
			break
		}
		// 16, or no rates: booking-svc's view has not the property's events yet. The next try
		// is another trace (and, the first having failed, the key is free again).
		if (a.Status != 16 && !strings.Contains(a.Message, "no rates")) || time.Now().After(deadline) {
			t.Fatalf("create: HTTP %d %s", r.Code, r.Body)
		}
		idemKey += "x"
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("booking %d, trace %s", bookingID, traceID)

	// catalog-svc applied the booking's event.
	want := acc.AccountID + "_" + strconv.FormatInt(bookingID, 10)
	eventually(t, "the booking in catalog-svc's getreservations", func() bool {
		r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/vros/external-booking", nil,
			acc.BBody("getreservations", map[string]any{"propertyId": acc.AccountID + "_" + strconv.Itoa(pid)}))
		if err != nil || r.Code != http.StatusOK {
			return false
		}
		var a struct {
			Data struct {
				Reservations []struct {
					ID string `json:"id"`
				} `json:"reservations"`
			} `json:"data"`
		}
		return json.Unmarshal(r.Body, &a) == nil && slices.ContainsFunc(a.Data.Reservations, func(x struct {
			ID string `json:"id"`
		}) bool {
			return x.ID == want
		})
	})

	// The trace, once Jaeger holds all of it.
	var tr *jaeger.Trace
	var c chain
	var missing error
	deadline = time.Now().Add(within)
	for {
		var err error
		tr, err = jg.Trace(context.Background(), traceID)
		switch {
		case errors.Is(err, jaeger.ErrNotFound):
			missing = err
		case err != nil:
			t.Fatal(err)
		default:
			if c, missing = link(tr, callerSpan); missing == nil {
				missing = dangling(tr, c.edgeServer)
			}
		}
		if missing == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace %s: %v\n%s", traceID, missing, dump(tr))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("trace %s: %d spans, %d services\n%s", traceID, len(tr.Spans), len(tr.Processes), dump(tr))

	// One trace (dangling, above): every span's parent is in it, but for edge's, whose parent
	// is the caller's, and no span refers to another trace.
	for _, s := range tr.Spans {
		for _, r := range s.References {
			if r.TraceID != traceID {
				t.Errorf("span %q of %s refers to trace %s", s.OperationName, tr.Service(s), r.TraceID)
			}
		}
	}

	// The semantic conventions of each. A booking's events are keyed <account>:booking:<id>.
	key := acc.AccountID + ":booking:" + strconv.FormatInt(bookingID, 10)
	has(t, c.edgeServer, map[string]string{"http.route": "/vros/external-booking", "http.response.status_code": "200"})
	has(t, c.edgeClient, map[string]string{"http.request.method": "POST", "url.template": "/internal/b/create",
		"url.full": strings.TrimSuffix(st.BookingURL, "/") + "/internal/b/create", "server.address": "127.0.0.1",
		"server.port": st.BookingURL[strings.LastIndexByte(st.BookingURL, ':')+1:], "http.response.status_code": "200",
		"vros.upstream": "booking-svc"})
	has(t, c.bookingServer, map[string]string{"http.route": "/internal/b/create", "http.response.status_code": "200"})
	for _, s := range c.bookingDB {
		want := map[string]string{"db.system.name": "mongodb", "db.namespace": "vros_booking", "db.operation.name": "*",
			"db.collection.name": "*", "server.address": "*", "server.port": "*"}
		if op, _ := s.Tag("db.operation.name"); databaseCommands[op] {
			// A command on the database names no collection (the ledger lists the collections
			// once, before it creates an account's first journal).
			delete(want, "db.collection.name")
		}
		has(t, s, want)
	}
	has(t, c.produce, map[string]string{"messaging.system": "kafka", "messaging.operation.type": "send",
		"messaging.operation.name": "send", "messaging.destination.name": "vros.booking.v1",
		"messaging.kafka.message.key": key})
	has(t, c.process, map[string]string{"messaging.system": "kafka", "messaging.operation.type": "process",
		"messaging.destination.name": "vros.booking.v1", "messaging.consumer.group.name": "catalog-svc",
		"messaging.destination.partition.id": "*", "messaging.kafka.offset": "*",
		"messaging.kafka.message.key": key})
	has(t, c.catalogWrite, map[string]string{"db.system.name": "mongodb", "db.namespace": "vros_catalog",
		"db.operation.name": "*", "db.collection.name": "*", "server.address": "*", "server.port": "*"})

	// No personal data, no credential: in no span name, attribute, event or resource.
	secrets := map[string]string{"first name": firstName, "last name": lastName, "email": email, "phone": phone,
		"phone digits": "442079460312", "key": acc.Key, "pass": acc.Pass, "owner token": acc.OwnerToken,
		"Basic password": acc.BasicPassword, "servicepass": acc.ServicePass, "Idempotency-Key": idemKey}
	for _, s := range tr.Spans {
		texts := []string{s.OperationName}
		for _, kv := range s.Tags {
			texts = append(texts, kv.Key+"="+fmt.Sprint(kv.Value))
		}
		for _, l := range s.Logs {
			for _, kv := range l.Fields {
				texts = append(texts, kv.Key+"="+fmt.Sprint(kv.Value))
			}
		}
		for _, kv := range tr.Processes[s.ProcessID].Tags {
			texts = append(texts, kv.Key+"="+fmt.Sprint(kv.Value))
		}
		for _, text := range texts {
			for what, secret := range secrets {
				if secret != "" && strings.Contains(text, secret) {
					t.Errorf("span %q of %s holds the %s: %s", s.OperationName, tr.Service(s), what, text)
				}
			}
		}
	}

	// Logs carry the same trace id: the request lines of edge and booking-svc, each with its
	// server span's id; none of the trace's lines holds the guest's data or a credential.
	lines, raw := logs.withTrace(traceID)
	for _, want := range []struct {
		service string
		span    jaeger.Span
	}{{"edge", c.edgeServer}, {"booking-svc", c.bookingServer}} {
		found := false
		for _, l := range lines {
			if l.str("service") == want.service && l.str("msg") == "request" && l.str("span_id") == want.span.SpanID {
				found = true
			}
		}
		if !found {
			t.Errorf("no request log line of %s with trace_id %s and span_id %s; the trace's lines:\n%s",
				want.service, traceID, want.span.SpanID, strings.Join(raw, "\n"))
		}
	}
	for _, line := range raw {
		for what, secret := range secrets {
			if secret != "" && strings.Contains(line, secret) {
				t.Errorf("a log line of the trace holds the %s: %s", what, line)
			}
		}
	}
	t.Logf("booking to trace checked in %s", time.Since(started).Round(time.Millisecond))
}

// chain is the path of a booking through vros, as spans of one trace.
// databaseCommands are MongoDB commands on a database rather than a collection: their spans
// carry no db.collection.name (OpenTelemetry's database conventions set it only for an
// operation on a collection).
var databaseCommands = map[string]bool{"listCollections": true}

type chain struct {
	edgeServer, edgeClient, bookingServer jaeger.Span
	bookingDB                             []jaeger.Span
	produce, process, catalogWrite        jaeger.Span
}

// link finds the chain in tr, whose caller's span is callerSpan; the error names the first
// link missing.
func link(tr *jaeger.Trace, callerSpan string) (chain, error) {
	var c chain
	byID := map[string]jaeger.Span{}
	for _, s := range tr.Spans {
		byID[s.SpanID] = s
	}
	under := func(s jaeger.Span, ancestor string) bool {
		for p, n := s.Parent(), 0; p != "" && n < len(tr.Spans); n++ {
			if p == ancestor {
				return true
			}
			p = byID[p].Parent()
		}
		return false
	}
	find := func(what string, ok func(s jaeger.Span) bool) (jaeger.Span, error) {
		for _, s := range tr.Spans {
			if ok(s) {
				return s, nil
			}
		}
		return jaeger.Span{}, errors.New("no " + what)
	}
	of := func(s jaeger.Span, service, kind string) bool { return tr.Service(s) == service && s.Kind() == kind }
	tag := func(s jaeger.Span, key string) string { v, _ := s.Tag(key); return v }
	var err error
	if c.edgeServer, err = find("server span of edge, child of the caller's", func(s jaeger.Span) bool {
		return of(s, "edge", "server") && s.Parent() == callerSpan
	}); err != nil {
		return c, err
	}
	if c.bookingServer, err = find("server span of booking-svc under edge's", func(s jaeger.Span) bool {
		return of(s, "booking-svc", "server") && under(s, c.edgeServer.SpanID)
	}); err != nil {
		return c, err
	}
	if c.edgeClient, err = find("client span of edge to booking-svc, parent of booking-svc's server span", func(s jaeger.Span) bool {
		return of(s, "edge", "client") && s.SpanID == c.bookingServer.Parent() && under(s, c.edgeServer.SpanID)
	}); err != nil {
		return c, err
	}
	for _, s := range tr.Spans {
		if of(s, "booking-svc", "client") && tag(s, "db.system.name") == "mongodb" && under(s, c.bookingServer.SpanID) {
			c.bookingDB = append(c.bookingDB, s)
		}
	}
	// The booking's writes: its ledger op, which stands for its event as an outbox intent
	// would (docs/booking.md, "What a booking costs the store"), and the booking itself.
	for _, coll := range []string{"ledger_ops", "bookings"} {
		if !slices.ContainsFunc(c.bookingDB, func(s jaeger.Span) bool { return tag(s, "db.collection.name") == coll }) {
			return c, fmt.Errorf("no MongoDB span of booking-svc on %s under its server span (%d MongoDB spans there)", coll, len(c.bookingDB))
		}
	}
	if c.produce, err = find("Kafka produce span of booking-svc to vros.booking.v1 under its server span", func(s jaeger.Span) bool {
		return of(s, "booking-svc", "producer") && tag(s, "messaging.destination.name") == "vros.booking.v1" && under(s, c.bookingServer.SpanID)
	}); err != nil {
		return c, err
	}
	if c.process, err = find("process span of catalog-svc, child of the produce span", func(s jaeger.Span) bool {
		return of(s, "catalog-svc", "consumer") && s.Parent() == c.produce.SpanID
	}); err != nil {
		return c, err
	}
	if c.catalogWrite, err = find("MongoDB write of catalog-svc under its process span", func(s jaeger.Span) bool {
		return of(s, "catalog-svc", "client") && tag(s, "db.system.name") == "mongodb" && s.Parent() == c.process.SpanID &&
			slices.Contains([]string{"insert", "update", "findAndModify", "delete"}, tag(s, "db.operation.name"))
	}); err != nil {
		return c, err
	}
	return c, nil
}

// dangling names a span of tr whose parent is not in tr (a span not exported yet, or one
// that starts a trace of its own), but for root, the span of the trace's first service.
func dangling(tr *jaeger.Trace, root jaeger.Span) error {
	ids := map[string]bool{}
	for _, s := range tr.Spans {
		ids[s.SpanID] = true
	}
	for _, s := range tr.Spans {
		if p := s.Parent(); s.SpanID != root.SpanID && (p == "" || !ids[p]) {
			return fmt.Errorf("span %q of %s has parent %q, not a span of the trace", s.OperationName, tr.Service(s), p)
		}
	}
	return nil
}

// has asserts s's attributes: each key with its value, "*" meaning any.
func has(t *testing.T, s jaeger.Span, want map[string]string) {
	t.Helper()
	for k, v := range want {
		got, ok := s.Tag(k)
		switch {
		case !ok:
			t.Errorf("span %q: no attribute %s", s.OperationName, k)
		case v != "*" && got != v:
			t.Errorf("span %q: %s = %q, want %q", s.OperationName, k, got, v)
		}
	}
}

// dump is the span tree of tr, for failure messages.
func dump(tr *jaeger.Trace) string {
	if tr == nil {
		return "(no trace)"
	}
	return tr.Tree()
}

// newProperty creates a sandbox account with the demo property (its own code) and its rates.
func newProperty(t *testing.T) (demo.Account, int) {
	t.Helper()
	acc, err := apitest.NewAccount(http.DefaultClient, st.EdgeURL, adminToken, "Trace Owner")
	if err != nil {
		t.Fatal(err)
	}
	code := "TR" + acc.AccountID
	prop := strings.Replace(demo.Property, `"DEMO1"`, `"`+code+`"`, 1)
	var created struct {
		Data struct {
			PropertyID string `json:"property_id"`
		} `json:"data"`
	}
	interfaceA(t, acc, "property", `{"action":"create","property":`+prop+`}`, &created)
	pid, err := strconv.Atoi(created.Data.PropertyID)
	if err != nil {
		t.Fatalf("property id %q", created.Data.PropertyID)
	}
	interfaceA(t, acc, "property-rate", strings.Replace(demo.Rates, `"DEMO1"`, `"`+code+`"`, 1), nil)
	return acc, pid
}

// interfaceA sends an interface A request as acc and decodes its answer into out (nil: only
// checked).
func interfaceA(t *testing.T, acc demo.Account, resource, body string, out any) {
	t.Helper()
	r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/api/"+resource, acc.AHeaders(), body)
	if err != nil || r.Code != http.StatusOK {
		t.Fatalf("%s: %v %d %s", resource, err, r.Code, r.Body)
	}
	if out != nil {
		if err := json.Unmarshal(r.Body, out); err != nil {
			t.Fatal(err)
		}
	}
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
