package messaging

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/smtpcatcher"
)

type obj = map[string]any

// account is a tenant created through edge's admin API, with a name the templates show.
type account struct {
	demo.Account
	name string
	n    int64
}

var accounts atomic.Int64

// newAccount makes a sandbox account named name; settings, when not nil, are its
// /api/account-settings (languages, currency, time zone).
func newAccount(t *testing.T, name string, settings obj) account {
	t.Helper()
	n := accounts.Add(1)
	name = fmt.Sprintf("%s %d", name, n)
	a, err := apitest.NewAccountOf(client, st.EdgeURL, adminToken, name, true)
	if err != nil {
		t.Fatal(err)
	}
	acc := account{Account: a, name: name, n: n}
	acc.EdgeURL = st.EdgeURL
	if settings != nil {
		acc.a(t, "account-settings", settings).ok(t)
	}
	return acc
}

// property is a property of an account, as the tests book it.
type property struct {
	id       int
	code     string
	name     string
	timezone string
}

// newProperty makes a property of acc priced 100 a night, any stay, in the IANA zone tz, and
// waits until booking-svc prices it and messaging-svc's view of it has its zone.
func (acc account) newProperty(t *testing.T, code, tz string) property {
	t.Helper()
	p := property{code: fmt.Sprintf("%s%d", code, acc.n), name: "Villa Aurora by the Sea " + code, timezone: tz}
	var out struct {
		PropertyID json.Number `json:"property_id"`
	}
	acc.a(t, "property", obj{"action": "create", "property": obj{
		"internal_code": p.code, "name": p.name, "type": "Villa", "brief": strings.Repeat("Quiet by the sea. ", 30),
		"maxguest": 6, "bedrooms": 3, "bathrooms": 2, "kitchens": 1, "floor": "Ground",
		"space": obj{"value": 140, "unit": "meters"}, "phone": "3055550100", "address": "1 Ocean Drive",
		"city": "Portofino", "state": "GE", "postcode": "16034", "country": "IT", "latitude": 44.30, "longitude": 9.21,
		"allowchildren": true, "allowpet": false, "allowsmoking": false, "timezone": tz,
	}}).ok(t).data(t, &out)
	id, err := strconv.Atoi(out.PropertyID.String())
	if err != nil {
		t.Fatalf("property_id %q", out.PropertyID)
	}
	p.id = id
	acc.a(t, "property-rate", obj{"internal_code": p.code, "rate": obj{"daily_price": 100, "minimum_stay": 1},
		"setting": obj{"standard_occupants": 6, "accept_booking_upto": 12, "advanced_notice_booking_from": "0"}}).ok(t)
	acc.waitViews(t, p)
	return p
}

// waitViews waits until booking-svc's view of p has the property's latest version and
// messaging-svc's has its time zone: a booking planned before would take another zone.
func (acc account) waitViews(t *testing.T, p property) {
	t.Helper()
	ctx := context.Background()
	id := acc.AccountID + ":" + strconv.Itoa(p.id)
	var prop bson.M
	if err := mongoDB.Database("vros_property").Collection("properties").FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&prop); err != nil {
		t.Fatal(err)
	}
	eventually.Holds(t, "booking-svc prices property "+id, within, func() bool {
		var doc bson.M
		err := mongoDB.Database("vros_booking").Collection("view_properties").FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc)
		return err == nil && doc["version"] == prop["version"]
	})
	eventually.Holds(t, "messaging-svc has property "+id+" in "+p.timezone, within, func() bool {
		n, err := mongoDB.Database("vros_messaging").Collection("property_views").CountDocuments(ctx,
			bson.D{{Key: "account", Value: acc.AccountID}, {Key: "property_id", Value: int64(p.id)}, {Key: "timezone", Value: p.timezone}})
		return err == nil && n > 0
	})
}

// waitLanguages waits until messaging-svc's view of the account has its languages, langs.
func (acc account) waitLanguages(t *testing.T, langs ...string) {
	t.Helper()
	eventually.Holds(t, "messaging-svc has the languages of "+acc.AccountID, within, func() bool {
		var doc struct {
			Languages []string `bson:"languages"`
		}
		err := mongoDB.Database("vros_messaging").Collection("account_views").FindOne(context.Background(),
			bson.D{{Key: "account", Value: acc.AccountID}}).Decode(&doc)
		return err == nil && slices.Equal(doc.Languages, langs)
	})
}

// response is an HTTP answer.
type response struct {
	apitest.Response
	what string
}

func send(t *testing.T, method, u string, headers map[string]string, body string, what string) response {
	t.Helper()
	r, err := apitest.Send(client, method, u, headers, body)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return response{r, what}
}

// a sends an interface A request through edge.
func (acc account) a(t *testing.T, resource string, body any) response {
	t.Helper()
	return send(t, http.MethodPost, st.EdgeURL+"/api/"+resource, acc.AHeaders(), apitest.JSON(body), resource)
}

// b sends an interface B action through edge.
func (acc account) b(t *testing.T, action string, fields obj) response {
	t.Helper()
	return send(t, http.MethodPost, st.EdgeURL+"/vros/external-booking", nil, acc.BBody(action, fields), action)
}

// ok asserts success: interface B's status 0, or interface A's HTTP 200.
func (r response) ok(t *testing.T) response {
	t.Helper()
	var b struct {
		Status *int `json:"status"`
	}
	_ = json.Unmarshal(r.Body, &b)
	if r.Code != http.StatusOK || (b.Status != nil && *b.Status != 0) {
		t.Fatalf("%s: HTTP %d %s", r.what, r.Code, r.Body)
	}
	return r
}

// data decodes the answer's data into v.
func (r response) data(t *testing.T, v any) {
	t.Helper()
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Fatalf("%s: %s: %v", r.what, r.Body, err)
	}
	if err := json.Unmarshal(env.Data, v); err != nil {
		t.Fatalf("%s: data %s: %v", r.what, env.Data, err)
	}
}

// guest is who books: the address is the test's own, so that the catcher's messages to it
// are the test's.
type guest struct{ first, last, email string }

func (acc account) guest(first, last string) guest {
	return guest{first: first, last: last, email: fmt.Sprintf("guest%d@%s", guests.Add(1), acc.mailDomain())}
}

var guests atomic.Int64

// mailDomain is the domain of the account's guests' addresses.
func (acc account) mailDomain() string { return fmt.Sprintf("a%d.guests.example", acc.n) }

// stay is an interface B create body: g with two adults at p from check-in to check-out
// (YYYY-MM-DD), nothing charged.
func stay(p property, g guest, checkin, checkout string) obj {
	return obj{"propertyId": p.id, "firstName": g.first, "lastName": g.last, "email": g.email,
		"numberofadults": 2, "checkin": checkin, "checkout": checkout}
}

// book creates the booking and answers its id.
func (acc account) book(t *testing.T, body obj) int64 {
	t.Helper()
	var b struct {
		BookingID int64 `json:"bookingId"`
	}
	acc.b(t, "create", body).ok(t).data(t, &b)
	if b.BookingID < 1 {
		t.Fatalf("create answered booking id %d", b.BookingID)
	}
	return b.BookingID
}

// day is the date n days from today (UTC).
func day(n int) string { return apitest.Day(n) }

// natural is a message's natural id (docs/messaging.md, "Exactly once").
func (acc account) natural(trigger string, booking int64, occurrence string) string {
	return acc.AccountID + ":" + trigger + ":" + strconv.FormatInt(booking, 10) + ":" + occurrence
}

// messageID is the Message-ID header docs/messaging.md derives from a natural id:
// <vros.<the first 128 bits of its SHA-256, hex>@<domain>>.
func messageID(natural string) string {
	sum := sha256.Sum256([]byte(natural))
	return "<vros." + hex.EncodeToString(sum[:16]) + "@" + domain + ">"
}

// logMessage is a message of /api/message-log.
type logMessage struct {
	MessageID     string `json:"message_id"`
	Trigger       string `json:"trigger"`
	BookingID     int64  `json:"booking_id"`
	PropertyID    int64  `json:"property_id"`
	To            string `json:"to"`
	Address       string `json:"address"`
	Language      string `json:"language"`
	Subject       string `json:"subject"`
	Status        string `json:"status"`
	Attempts      int    `json:"attempts"`
	SendAt        string `json:"send_at"`
	SentAt        string `json:"sent_at"`
	Answer        string `json:"answer"`
	SMTPMessageID string `json:"smtp_message_id"`
}

// sendAt is the message's due instant.
func (m logMessage) sendAt(t *testing.T) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, m.SendAt)
	if err != nil {
		t.Fatalf("message %s: send_at %q: %v", m.MessageID, m.SendAt, err)
	}
	return at.UTC()
}

// log lists the messages of booking (and of trigger, when not "") through /api/message-log.
func (acc account) log(t *testing.T, booking int64, trigger string) []logMessage {
	t.Helper()
	q := obj{"action": "list", "booking_id": booking, "limit": 100}
	if trigger != "" {
		q["trigger"] = trigger
	}
	var out struct {
		Total    int64        `json:"total"`
		Messages []logMessage `json:"messages"`
	}
	acc.a(t, "message-log", q).ok(t).data(t, &out)
	return out.Messages
}

// waitLog polls the log of booking's trigger messages until cond holds, and answers them.
func (acc account) waitLog(t *testing.T, what string, booking int64, trigger string, cond func([]logMessage) bool) []logMessage {
	t.Helper()
	var got []logMessage
	deadline := time.Now().Add(within)
	for {
		got = acc.log(t, booking, trigger)
		if cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s; the log has %+v", within, what, got)
		}
		time.Sleep(50 * time.Millisecond) // polling the log, not a synchronization
	}
}

// byID finds the log's message of natural id id.
func byID(msgs []logMessage, id string) (logMessage, bool) {
	for _, m := range msgs {
		if m.MessageID == id {
			return m, true
		}
	}
	return logMessage{}, false
}

// hasStatus is a waitLog condition: the message id is in the log with status.
func hasStatus(id, status string) func([]logMessage) bool {
	return func(msgs []logMessage) bool {
		m, ok := byID(msgs, id)
		return ok && m.Status == status
	}
}

// mailTo answers the catcher's messages whose envelope recipient is address.
func mailTo(msgs []smtpcatcher.Message, address string) []smtpcatcher.Message {
	var out []smtpcatcher.Message
	for _, m := range msgs {
		if slices.Contains(m.EnvelopeTo, address) {
			out = append(out, m)
		}
	}
	return out
}

// withID answers the messages whose Message-ID is id (with its angle brackets).
func withID(msgs []smtpcatcher.Message, id string) []smtpcatcher.Message {
	var out []smtpcatcher.Message
	for _, m := range msgs {
		if m.MessageID == id {
			out = append(out, m)
		}
	}
	return out
}

// waitMail waits until the catcher has received a message of Message-ID id, and answers it.
func waitMail(t *testing.T, what, id string) smtpcatcher.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	msgs, err := catcher.Wait(ctx, func(msgs []smtpcatcher.Message) bool { return len(withID(msgs, id)) > 0 })
	if err != nil {
		t.Fatalf("%s (Message-ID %s): %v", what, id, err)
	}
	m := withID(msgs, id)[0]
	if m.ParseErr != nil {
		t.Fatalf("%s: the catcher could not read it: %v\n%s", what, m.ParseErr, m.Raw)
	}
	return m
}

// untilPast moves messaging-svc's clock on until just past at (a minute), for the rest of t.
func untilPast(t *testing.T, at time.Time) {
	t.Helper()
	if d := at.Sub(clock.Now()) + time.Minute; d > 0 {
		clock.Advance(t, d)
	}
}

// localInstant is the local date's time of day hh:mm in zone tz, as a UTC instant.
func localInstant(t *testing.T, date string, hh, mm int, tz string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation(tz)
	if err != nil {
		t.Fatal(err)
	}
	d, err := time.Parse(time.DateOnly, date)
	if err != nil {
		t.Fatal(err)
	}
	return time.Date(d.Year(), d.Month(), d.Day(), hh, mm, 0, 0, loc).UTC()
}

// before is the date n days before date.
func before(t *testing.T, date string, n int) string {
	t.Helper()
	d, err := time.Parse(time.DateOnly, date)
	if err != nil {
		t.Fatal(err)
	}
	return d.AddDate(0, 0, -n).Format(time.DateOnly)
}

// longDate is the templates' `date` of a YYYY-MM-DD in English or Italian ("Friday 10 July
// 2026", "venerdì 10 luglio 2026"), written here from docs/messaging.md.
func longDate(t *testing.T, date, lang string) string {
	t.Helper()
	d, err := time.Parse(time.DateOnly, date)
	if err != nil {
		t.Fatal(err)
	}
	if lang == "it" {
		weekdays := []string{"domenica", "lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato"}
		months := []string{"gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto",
			"settembre", "ottobre", "novembre", "dicembre"}
		return fmt.Sprintf("%s %d %s %d", weekdays[d.Weekday()], d.Day(), months[d.Month()-1], d.Year())
	}
	return d.Format("Monday 2 January 2006")
}
