package api

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.opentelemetry.io/otel/metric"

	"github.com/vros/vros/booking-svc/internal/arrival"
	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/erasure"
	"github.com/vros/vros/booking-svc/internal/erasure/consumer"
	"github.com/vros/vros/booking-svc/internal/erasure/erasurestore"
	"github.com/vros/vros/booking-svc/internal/feedsync"
	"github.com/vros/vros/booking-svc/internal/guest"
	"github.com/vros/vros/booking-svc/internal/idempotency"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/booking-svc/internal/ledger/nightstore"
	"github.com/vros/vros/booking-svc/internal/propertyview"
	"github.com/vros/vros/booking-svc/internal/store"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/testkit/servers"
	"github.com/vros/vros/testkit/testinfra"
	"github.com/vros/vros/testkit/together"
)

var (
	db      *mongo.Database
	brokers []string
)

// The tests run against the servers VROS_MONGO_URI and VROS_KAFKA_BROKERS name (make
// test-real), else against embedded ones: the relay publishes to Kafka, and the erasure test
// reads the tombstones back from the topic.
func TestMain(m *testing.M) {
	ctx := context.Background()
	var infra *testinfra.Infra
	uri := ""
	if s := servers.FromEnv(); s != nil && s.MongoURI != "" && len(s.KafkaBrokers) > 0 {
		uri, brokers = s.MongoURI, s.KafkaBrokers
	} else {
		var err error
		if infra, err = testinfra.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		uri, brokers = infra.MongoURI, infra.KafkaBrokers
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	db = client.Database(fmt.Sprintf("bookingapi_test_%d", time.Now().UnixNano()))
	code := m.Run()
	_ = db.Drop(ctx)
	_ = client.Disconnect(ctx)
	if infra != nil {
		infra.Close()
	}
	os.Exit(code)
}

const testKey = "booking-api-test-key"

// integrationKey is integration-svc's key, accepted on IntegrationRoutes alone.
const integrationKey = "booking-api-integration-key"

// messagingKey is messaging-svc's key, accepted on MessagingRoutes alone.
const messagingKey = "booking-api-messaging-key"

var accounts atomic.Int64

// recorder is the relay's publisher: it publishes to Kafka and keeps what Kafka took, so that
// a test can wait for it.
type recorder struct {
	kafka *events.Publisher
	mu    sync.Mutex
	msgs  []events.Message
}

func (r *recorder) Publish(ctx context.Context, msgs ...events.Message) error {
	if err := r.kafka.Publish(ctx, msgs...); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, msgs...)
	return nil
}

// latest is the newest message of each key.
func (r *recorder) latest() map[string]events.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]events.Message{}
	for _, m := range r.msgs {
		out[m.Key] = m
	}
	return out
}

type server struct {
	app    *fiber.App
	st     *store.Store
	nights *nightstore.Store
	led    *ledger.Ledger
	vw     *propertyview.Store
	keys   *idempotency.Keys
	marks  *erasurestore.Marks
	eraser *erasure.Eraser
	// consumer is the handler of vros.property.v1 around eraser and the view.
	consumer *consumer.Handler
	pub      *recorder
	box      *seal.Box
	svc      *booking.Service
	feeds    *feedsync.Syncer
	gw       *cardpay.Test
	// intents are the live PaymentIntents (engine_test.go): none until a test sets them.
	intents switchIntents
}

func newServer(t *testing.T) *server { return newServerLogging(t, io.Discard) }

// newServerLogging is newServer writing its log (from the debug level on) to w.
func newServerLogging(t *testing.T, w io.Writer) *server { return newServerWith(t, w, nil) }

// newServerWith is newServerLogging whose routes, ledger and idempotency keys count in meter
// (nil: nothing).
func newServerWith(t *testing.T, w io.Writer, meter metric.Meter) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tel, err := telemetry.Setup(ctx, "booking-api-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	box, err := seal.New(seal.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	s := &server{pub: &recorder{kafka: events.NewPublisher(brokers)}, box: box}
	t.Cleanup(func() { _ = s.pub.kafka.Close() })
	if s.st, err = store.New(ctx, db); err != nil {
		t.Fatal(err)
	}
	ob := outbox.New(db, s.pub, s.st.Snapshot, outbox.Options{Lease: time.Minute, Sweep: time.Hour})
	s.st.Attach(ob)
	go func() { _ = ob.Run(ctx) }()
	if s.nights, err = nightstore.New(ctx, db); err != nil {
		t.Fatal(err)
	}
	s.led = ledger.New(s.nights)
	s.led.Instrument(meter)
	if s.vw, err = propertyview.New(ctx, db); err != nil {
		t.Fatal(err)
	}
	if s.keys, err = idempotency.New(ctx, db); err != nil {
		t.Fatal(err)
	}
	s.keys.Instrument(meter)
	if s.marks, err = erasurestore.NewMarks(ctx, db); err != nil {
		t.Fatal(err)
	}
	s.st.WatchErasures(s.marks)
	s.vw.IgnoreErased(s.marks.Is)
	s.gw = cardpay.NewTest(time.Now)
	svc := booking.New(booking.Deps{PropertyView: propertyview.NewReader(s.vw), Bookings: s.st, Blocks: s.st, Users: s.st, Accounts: s.st,
		Ledger: s.led, Gateway: s.gw, Checkouts: s.st, Intents: &s.intents, Channel: s.st, Box: box})
	s.svc = svc
	s.feeds = feedsync.New(feedsync.Deps{PropertyView: propertyview.NewReader(s.vw), Blocks: s.st, Ledger: s.led, Current: svc.Current})
	s.eraser = &erasure.Eraser{Marks: s.marks, View: erasure.Part{Name: "view", Erase: s.vw.EraseAccount}, Forget: s.vw.ForgetAccount,
		Parts: []erasure.Part{{Name: "bookings", Erase: s.st.EraseAccount}, {Name: "ledger", Erase: s.nights.EraseAccount},
			{Name: "idempotency", Erase: s.keys.EraseAccount}, erasurestore.ParkedEvents(db.Collection(events.ParkedCollection))},
		Settle: time.Hour}
	s.consumer = &consumer.Handler{Eraser: s.eraser, Next: s.vw.Apply}
	s.app = httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: 1 << 20})
	routes := New(svc, s.feeds, booking.NewUsers(s.st, 4), s.keys)
	routes.Instrument(meter)
	routes.RefuseErased(s.marks.Known)
	routes.Register(s.app, tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerEdge, Key: testKey},
		tenancy.Grant{Caller: tenancy.CallerIntegration, Key: integrationKey, Routes: IntegrationRoutes},
		tenancy.Grant{Caller: tenancy.CallerMessaging, Key: messagingKey, Routes: MessagingRoutes}))
	return s
}

func newAccount(prefix string) string {
	// Distinctive, so that a search of the database for it finds only its own documents.
	return fmt.Sprintf("%s-%d-zq%d", prefix, time.Now().UnixNano()%1e6, accounts.Add(1))
}

// do sends method path with body on behalf of account, signed as edge signs it.
func (s *server) do(t *testing.T, account, method, path, body string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: account}, method, path, []byte(body), time.Now())
	resp, err := s.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// book stores a reserved booking of g holding its nights in the ledger, as a create leaves
// it, with a recorded payment and a kept card.
func (s *server) book(t *testing.T, account string, pid int64, checkin string, nights int, g booking.Guest, userID int64) booking.Booking {
	t.Helper()
	ctx := context.Background()
	id, err := s.st.NextBookingID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start, _ := time.Parse(time.DateOnly, checkin)
	var dates []string
	for i := range nights {
		dates = append(dates, start.AddDate(0, 0, i).Format(time.DateOnly))
	}
	checkout := start.AddDate(0, 0, nights).Format(time.DateOnly)
	owner := "booking:" + strconv.FormatInt(id, 10)
	if err := s.led.Claim(ctx, ledger.Stay{Account: account, PropertyID: pid, Dates: dates}, owner); err != nil {
		t.Fatal(err)
	}
	sealed := s.box.Seal(`{"number":"4242424242424242","nameOnCard":"`+g.FirstName+` `+g.LastName+`"}`, account+":booking:"+strconv.FormatInt(id, 10)+":card")
	b := booking.Booking{AccountID: account, BookingID: id, PropertyID: pid, Checkin: checkin, Checkout: checkout, Nights: dates,
		CheckinTime: booking.CheckinTime, CheckoutTime: booking.CheckoutTime, Guest: g, UserID: userID, Adults: 2, Quote: booking.Quote{Currency: "EUR", TotalRent: "300.00", GrandTotal: "330.00"},
		Payments: map[int64]booking.Payment{}, Card: &booking.SealedCard{Sealed: sealed, Masked: "•••• 4242", Brand: "visa", Expiry: "12/2030"},
		CreatedAt: s.st.Now(), UpdatedAt: s.st.Now()}
	if err := s.st.InsertPending(ctx, b); err != nil {
		t.Fatal(err)
	}
	pay, _ := s.st.NextPaymentID(ctx)
	if err := s.st.IndexPayment(ctx, account, pay, id); err != nil {
		t.Fatal(err)
	}
	out, err := s.st.Update(ctx, account, id, booking.Reserved, func(b *booking.Booking) error {
		b.Status = booking.StatusReserved
		b.Payments[pay] = booking.Payment{PaymentID: pay, Amount: "100.00", Currency: "EUR", Method: booking.MethodManual,
			Description: "deposit from " + g.FirstName + " " + g.LastName, Time: s.st.Now(), CreatedAt: s.st.Now()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// storeAnswer keeps b's booking object as the stored answer of an idempotent create.
func (s *server) storeAnswer(t *testing.T, account string, b booking.Booking) {
	t.Helper()
	body, err := json.Marshal(storedAnswer{Status: 0, Message: "Success", Data: mustJSON(t, bookingOf(b, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Collection(idempotency.Collection).InsertOne(context.Background(), bson.D{
		{Key: "_id", Value: account + ":create:key-" + strconv.FormatInt(b.BookingID, 10)}, {Key: "hash", Value: "h"},
		{Key: "done", Value: true}, {Key: "status", Value: 200}, {Key: "content_type", Value: "application/json"},
		{Key: "body", Value: body}, {Key: "at", Value: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// holding lists, for each collection of the database, the documents that contain any of
// texts (any case) anywhere.
func holding(t *testing.T, skip map[string]bool, texts ...string) map[string]int {
	t.Helper()
	return search(t, skip, false, texts)
}

// holdingAll is holding for the documents that contain every one of texts.
func holdingAll(t *testing.T, texts ...string) map[string]int {
	t.Helper()
	return search(t, nil, true, texts)
}

func search(t *testing.T, skip map[string]bool, all bool, texts []string) map[string]int {
	t.Helper()
	ctx := context.Background()
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, n := range names {
		if skip[n] {
			continue
		}
		cur, err := db.Collection(n).Find(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		var docs []bson.Raw
		if err := cur.All(ctx, &docs); err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			text := strings.ToLower(docText(d))
			found := 0
			for _, x := range texts {
				if strings.Contains(text, strings.ToLower(x)) {
					found++
				}
			}
			if found == len(texts) || !all && found > 0 {
				out[n]++
			}
		}
	}
	return out
}

// docText is a document as text, with its binary values (stored answers) as text too.
func docText(d bson.Raw) string {
	var b strings.Builder
	b.WriteString(d.String())
	var walk func(v bson.RawValue)
	walk = func(v bson.RawValue) {
		switch v.Type {
		case bson.TypeBinary:
			_, data := v.Binary()
			b.WriteString(" ")
			b.Write(data)
		case bson.TypeEmbeddedDocument, bson.TypeArray:
			elems, _ := bson.Raw(v.Value).Elements()
			for _, e := range elems {
				walk(e.Value())
			}
		}
	}
	elems, _ := d.Elements()
	for _, e := range elems {
		walk(e.Value())
	}
	return b.String()
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestGuestErasureRequests: bad requests name the field and change nothing.
func TestGuestErasureRequests(t *testing.T) {
	s := newServer(t)
	acct := newAccount("ger")
	for _, r := range []struct {
		name, body string
		want       string
	}{
		{"no body", ``, `"validation_error"`},
		{"not JSON", `{"email":`, `"validation_error"`},
		{"email missing", `{}`, `"field":"email","message":"is required"`},
		{"email blank", `{"email":"  "}`, `"field":"email"`},
		{"not an email", `{"email":"ada.example.com"}`, `"field":"email"`},
		{"email a number", `{"email":12}`, `"field":"email"`},
	} {
		status, out := s.do(t, acct, http.MethodPost, "/internal/account/guests/erase", r.body)
		if status != 400 || !strings.Contains(string(out), r.want) {
			t.Errorf("%s: %d %s, want 400 with %s", r.name, status, out, r.want)
		}
	}
	if status, out := s.do(t, acct, http.MethodPost, "/internal/account/guests/erase", `{"email":"nobody@example.com"}`); status != 200 ||
		string(out) != `{"bookings":0,"users":0}` {
		t.Errorf("nobody matched: %d %s", status, out)
	}
}

// TestGuestErasure: the guest is anonymised in every record of the account — bookings (any
// case of the email, and the bookings of their user), another booking's arrival form, their
// user, stored answers, payment descriptions, the kept card — while money, dates, nights
// and another guest stay; a second request changes nothing.
func TestGuestErasure(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	acct := newAccount("ge")
	ada := booking.Guest{FirstName: "Adelheid", LastName: "Quorvath", Email: "Adelheid.Q@example.com", Phone1: "+49 30 1234567",
		Address: "Quorvathweg 12", City: "Berlin", Country: "DE", Other: "late arrival"}
	bob := booking.Guest{FirstName: "Bartholomew", LastName: "Zinnober", Email: "bart.z@example.com", Phone1: "+33 1 2345"}
	u, err := s.st.AddUser(ctx, acct, guest.User{Email: "adelheid.q@EXAMPLE.com", Name: "Adelheid Quorvath", Phone1: "+49 30 1234567",
		PasswordHash: "$2a$04$abcdefghijklmnopqrstuv"}, false)
	if err != nil {
		t.Fatal(err)
	}
	b1 := s.book(t, acct, 1, "2027-03-01", 3, ada, 0)
	// Booked by her user under another address.
	b2 := s.book(t, acct, 1, "2027-04-01", 2, booking.Guest{FirstName: "A.", LastName: "Quorvath", Email: "aq@work.example.com"}, int64(u.UserID))
	b3 := s.book(t, acct, 2, "2027-03-01", 4, bob, 0)
	// Bob's party lists her.
	if _, err := s.st.Update(ctx, acct, b3.BookingID, booking.Updated, func(b *booking.Booking) error {
		b.Arrival = &arrival.Arrival{Guests: []arrival.Guest{{Name: "Adelheid", Surname: "Quorvath", Email: "ADELHEID.Q@example.com"},
			{Name: "Bartholomew", Surname: "Zinnober"}}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.st.Update(ctx, acct, b1.BookingID, booking.Updated, func(b *booking.Booking) error {
		b.Arrival = &arrival.Arrival{TransportNumber: "LH 123", Guests: []arrival.Guest{{Name: "Adelheid", Surname: "Quorvath",
			Email: "adelheid.q@example.com", PhoneNumber: "+49 30 1234567"}}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	b1, _ = s.st.Booking(ctx, acct, b1.BookingID)
	b3, _ = s.st.Booking(ctx, acct, b3.BookingID)
	s.storeAnswer(t, acct, b1)
	s.storeAnswer(t, acct, b3)

	personal := []string{"Adelheid", "Quorvath", "adelheid.q@example.com", "1234567", "Quorvathweg"}
	if got := holding(t, nil, personal...); len(got) == 0 {
		t.Fatal("the setup holds none of her data")
	}
	status, out := s.do(t, acct, http.MethodPost, "/internal/account/guests/erase", `{"email":"ADELHEID.q@Example.com"}`)
	if status != 200 || string(out) != `{"bookings":3,"users":1}` {
		t.Fatalf("erase: %d %s", status, out)
	}
	// The relay's list entries and events follow the anonymised bookings.
	waitFor(t, "the events of the anonymised bookings", func() bool {
		m := s.pub.latest()[store.BookingAggregate(acct, b1.BookingID)]
		return m.Value != nil && !bytes.Contains(m.Value, []byte("Adelheid"))
	})
	if got := holding(t, nil, personal...); len(got) != 0 {
		t.Errorf("after the erasure her data is still in %v", got)
	}
	for _, want := range []struct {
		id    int64
		guest booking.Guest
		total string
		dates []string
	}{
		{b1.BookingID, booking.Guest{FirstName: "Erased", Email: "erased@invalid"}, "330.00", b1.Nights},
		{b2.BookingID, booking.Guest{FirstName: "Erased", Email: "erased@invalid"}, "330.00", b2.Nights},
		{b3.BookingID, bob, "330.00", b3.Nights},
	} {
		b, err := s.st.Booking(ctx, acct, want.id)
		if err != nil {
			t.Fatal(err)
		}
		if b.Guest != want.guest || b.Quote.GrandTotal != want.total || !slices.Equal(b.Nights, want.dates) || b.Status != booking.StatusReserved ||
			len(b.Payments) != 1 {
			t.Errorf("booking %d after the erasure: %+v", want.id, b)
		}
		for _, d := range want.dates {
			if owner, _ := s.led.Owner(ctx, acct, b.PropertyID, d); owner != "booking:"+strconv.FormatInt(want.id, 10) {
				t.Errorf("night %s of booking %d is held by %q", d, want.id, owner)
			}
		}
		if want.id == b3.BookingID && (b.Arrival.Guests[0].Name != "Erased" || b.Arrival.Guests[1].Name != "Bartholomew") {
			t.Errorf("Bob's party: %+v", b.Arrival.Guests)
		}
		if want.id != b3.BookingID {
			plain, err := s.box.Open(b.Card.Sealed, acct+":booking:"+strconv.FormatInt(want.id, 10)+":card")
			if err != nil || strings.Contains(plain, "Quorvath") || !strings.Contains(plain, "4242424242424242") {
				t.Errorf("kept card of booking %d: %v %s", want.id, err, plain)
			}
		}
	}
	// listbooking answers the anonymised guest, with the money and dates; a keyword search
	// for her name finds nothing.
	status, out = s.do(t, acct, http.MethodPost, "/internal/b/listbooking", fmt.Sprintf(`{"bookingId":%d}`, b1.BookingID))
	for _, want := range []string{`"firstName":"Erased","lastName":"","fullName":"Erased ","email":"erased@invalid"`, `"grandTotal":330.00`,
		`"checkin":"2027-03-01 15:00:00"`, `"description":"deposit from Erased"`} {
		if status != 200 || !strings.Contains(string(out), want) {
			t.Errorf("listbooking after the erasure: %d %s\nwant %s", status, out, want)
		}
	}
	if status, out := s.do(t, acct, http.MethodPost, "/internal/b/listbooking", `{"keyword":"quorvath"}`); status != 200 ||
		!strings.Contains(string(out), `"totalRecords":0`) {
		t.Errorf("keyword search for her name: %d %s", status, out)
	}
	if _, err := s.st.UserByEmail(ctx, acct, "adelheid.q@example.com"); !errors.Is(err, booking.ErrNotFound) {
		t.Errorf("her user is still found by her email: %v", err)
	}
	// Bob is untouched, in the records and in the stored answers.
	if got := holding(t, nil, "Bartholomew", "bart.z@example.com"); got["bookings"] != 1 || got[idempotency.Collection] != 1 {
		t.Errorf("Bob's data: %v", got)
	}
	if status, out := s.do(t, acct, http.MethodPost, "/internal/account/guests/erase", `{"email":"adelheid.q@example.com"}`); status != 200 ||
		string(out) != `{"bookings":0,"users":0}` {
		t.Errorf("again: %d %s", status, out)
	}
	// The placeholder is nobody's address (not even a valid one): the erased bookings are not
	// touched again.
	if status, out := s.do(t, acct, http.MethodPost, "/internal/account/guests/erase", `{"email":"Erased@Invalid"}`); status != 400 ||
		!strings.Contains(string(out), `"field":"email"`) {
		t.Errorf("the placeholder: %d %s", status, out)
	}
}

// TestAccountErasure: erasing an account, interrupted after each of its steps and applied
// again (as the consumer does), leaves no document of it in any collection and a tombstone as
// the latest message of every key it published, while another account books on untouched,
// also during the erasure; the account's later events are ignored.
func TestAccountErasure(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	parts := s.eraser.Parts
	for step := 0; step <= len(parts)+1; step++ {
		acct, other := newAccount("ea"), newAccount("eb")
		since := topicEnds(t, events.TopicBooking)
		priceable(t, s, acct, 1)
		var keys []string
		for i := range 3 {
			b := s.book(t, acct, 1, fmt.Sprintf("2027-0%d-01", i+1), 2, booking.Guest{FirstName: "Gwendolyn", Email: "g@example.com"}, 0)
			keys = append(keys, store.BookingAggregate(acct, b.BookingID))
			s.storeAnswer(t, acct, b)
		}
		blk := s.block(t, acct, 1, "2027-06-01")
		keys = append(keys, acct+":block:"+strconv.FormatInt(blk, 10))
		// A block imported from an iCal feed, and another feed's sync holding its lease.
		code, body := s.do(t, acct, http.MethodPost, "/internal/ical/sync",
			`{"property_id":1,"feed_id":3,"name":"Airbnb","events":[{"uid":"e@x","start":"2027-07-01","end":"2027-07-03"}]}`)
		var synced struct {
			Blocks []struct {
				BlockID int64 `json:"block_id"`
			} `json:"blocks"`
		}
		if err := json.Unmarshal(body, &synced); code != http.StatusOK || err != nil || len(synced.Blocks) != 1 {
			t.Fatalf("sync: %d %s", code, body)
		}
		keys = append(keys, acct+":block:"+strconv.FormatInt(synced.Blocks[0].BlockID, 10))
		if _, err := s.st.TakeFeedLease(ctx, acct, 4, "holder", time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.st.AddUser(ctx, acct, guest.User{Email: "g@example.com", Name: "Gwendolyn"}, false); err != nil {
			t.Fatal(err)
		}
		// An event of the account the view could not read, parked.
		bad := kafka.Message{Topic: events.TopicProperty, Partition: 1, Offset: int64(step), Key: []byte(acct + ":7"), Value: []byte("{")}
		if err := events.ParkIn(db.Collection(events.ParkedCollection))(ctx, bad, errors.New("not JSON")); err != nil {
			t.Fatal(err)
		}
		kept := s.book(t, other, 1, "2027-01-01", 2, booking.Guest{FirstName: "Other", Email: "o@example.com"}, 0)
		waitFor(t, "the account's events", func() bool { return s.pub.latest()[keys[0]].Value != nil })

		// Stopped after step (the marker, the view, each store): the event is applied again.
		failing := slices.Clone(parts)
		if step > 0 && step <= len(parts) {
			failing[step-1] = erasure.Part{Name: "crash", Erase: func(context.Context, string) error { return errors.New("killed") }}
		}
		s.eraser.Parts = failing
		ev := erasedEvent(t, acct)
		var wg sync.WaitGroup
		wg.Add(1)
		var during []booking.Booking
		go func() { // the other account books while the erasure runs
			defer wg.Done()
			for i := range 3 {
				during = append(during, s.book(t, other, 2, fmt.Sprintf("2027-0%d-10", i+1), 2, booking.Guest{FirstName: "Other"}, 0))
			}
		}()
		err := s.consumer.Apply(ctx, ev)
		wg.Wait()
		if step > 0 && step <= len(parts) && err == nil {
			t.Fatalf("step %d: the crash was not reported", step)
		}
		if step == len(parts)+1 {
			// Stopped by its context at ever later points (in the marker, the view, between
			// the bookings' intents and deletes…): each run starts over and gets further.
			for i := range 40 {
				cctx, cancel := context.WithTimeout(ctx, time.Duration(i*i)*20*time.Microsecond)
				_ = s.consumer.Apply(cctx, ev)
				cancel()
			}
		}
		s.eraser.Parts = parts
		if err := s.consumer.Apply(ctx, ev); err != nil {
			t.Fatalf("step %d: applied again: %v", step, err)
		}
		waitFor(t, "the tombstones", func() bool {
			latest := s.pub.latest()
			for _, k := range keys {
				if m := latest[k]; !m.Tombstone || m.Value != nil {
					return false
				}
			}
			return true
		})
		waitFor(t, "the outbox to drain", func() bool {
			return len(holding(t, map[string]bool{erasurestore.MarksCollection: true}, acct)) == 0
		})
		if got := holding(t, nil, acct); got[erasurestore.MarksCollection] != 1 || len(got) != 1 {
			t.Errorf("step %d: documents of the erased account: %v", step, got)
		}
		// On the compacted topic the latest message of every key of the account is a tombstone.
		onKafka := onTopic(t, events.TopicBooking, acct+":", since)
		for _, k := range keys {
			if m, ok := onKafka[k]; !ok || !events.IsTombstone(m) || m.Value != nil {
				t.Errorf("step %d: latest of %s on %s: %q (found %v), want a tombstone", step, k, events.TopicBooking, m.Value, ok)
			}
		}
		if len(onKafka) != len(keys) {
			t.Errorf("step %d: the account's keys on the topic: %d, want %d", step, len(onKafka), len(keys))
		}
		for _, b := range append(during, kept) {
			got, err := s.st.Booking(ctx, other, b.BookingID)
			if err != nil || got.Status != booking.StatusReserved || got.Guest.FirstName != "Other" {
				t.Errorf("step %d: the other account's booking %d: %v %+v", step, b.BookingID, err, got)
			}
		}
		if m := s.pub.latest()[store.BookingAggregate(other, kept.BookingID)]; m.Tombstone {
			t.Errorf("step %d: the other account's booking got a tombstone", step)
		}
		// A property event of the erased account arriving later is ignored.
		priceable(t, s, acct, 1)
		if got := holding(t, map[string]bool{erasurestore.MarksCollection: true}, acct); len(got) != 0 {
			t.Errorf("step %d: a later event stored %v", step, got)
		}
	}
}

// topicEnds are the end offsets of topic's partitions now: a test reads from them on
// (onTopic), so that on shared servers (make test-real) it never reads the topic's history.
func topicEnds(t *testing.T, topic string) map[int]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := kafka.DialContext(ctx, "tcp", brokers[0])
	if err != nil {
		t.Fatal(err)
	}
	parts, err := conn.ReadPartitions(topic)
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int64{}
	for _, p := range parts {
		lc, err := kafka.DialLeader(ctx, "tcp", brokers[0], topic, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		_, last, err := lc.ReadOffsets()
		lc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[p.ID] = last
	}
	return out
}

// onTopic reads topic from the offsets since (topicEnds) up to its end as of now and
// returns the latest message of each key that begins with prefix.
func onTopic(t *testing.T, topic, prefix string, since map[int]int64) map[string]kafka.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := map[string]kafka.Message{}
	for p, end := range topicEnds(t, topic) {
		first := since[p]
		if end <= first {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p, MaxWait: 50 * time.Millisecond})
		if err := r.SetOffset(first); err != nil {
			t.Fatal(err)
		}
		for {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				r.Close()
				t.Fatalf("read %s/%d: %v", topic, p, err)
			}
			if strings.HasPrefix(string(m.Key), prefix) {
				out[string(m.Key)] = m
			}
			if m.Offset+1 >= end {
				break
			}
		}
		r.Close()
	}
	return out
}

func erasedEvent(t *testing.T, account string) kafka.Message {
	t.Helper()
	v, err := events.Encode("/test", contract.AccountErased, events.AccountKey(account), time.Now(),
		contract.AccountErasure{AccountID: account, ErasedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return kafka.Message{Topic: events.TopicProperty, Key: []byte(events.AccountKey(account)), Value: v}
}

// priceable applies a property event of account to the view, as the consumer does.
func priceable(t *testing.T, s *server, account string, pid int64) {
	t.Helper()
	data := fmt.Sprintf(`{"account_id":%q,"property_id":%d,"internal_code":"P%d","version":1,"deleted":false,
	 "content":{"name":"Erasure test property","maxguest":6},
	 "rates":{"rate":{"daily_price":"100"},"minimum_stay":1,
	   "setting":{"standard_occupants":6,"accept_booking_upto":24,"default_allow_checkin":"All","default_allow_checkout":"All"}}}`,
		account, pid, pid)
	v, err := events.Encode("/test", "vros.property.rates.updated", account, time.Now(), json.RawMessage(data))
	if err != nil {
		t.Fatal(err)
	}
	key := account + ":" + strconv.FormatInt(pid, 10)
	if err := s.consumer.Apply(context.Background(), kafka.Message{Key: []byte(key), Value: v}); err != nil {
		t.Fatal(err)
	}
}

// block stores a block of one night through the ledger and the store, as a block create does.
func (s *server) block(t *testing.T, account string, pid int64, date string) int64 {
	t.Helper()
	ctx := context.Background()
	id, err := s.st.NextBlockID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.led.Claim(ctx, ledger.Stay{Account: account, PropertyID: pid, Dates: []string{date}}, "block:"+strconv.FormatInt(id, 10)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.st.InsertBlock(ctx, booking.Block{AccountID: account, BlockID: id, PropertyID: pid, StartDate: date, EndDate: date}); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestUsageAndExport: the usage figures count the account's own records over the period;
// bad periods name the field; the export lists every record in its manifest and holds no
// secret.
func TestUsageAndExport(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	acct, other := newAccount("ux"), newAccount("uy")
	g := booking.Guest{FirstName: "Ulla", LastName: "Export", Email: "ulla@example.com"}
	b1 := s.book(t, acct, 1, "2027-01-01", 3, g, 0)
	time.Sleep(5 * time.Millisecond) // b2 created strictly after b1
	b2 := s.book(t, acct, 1, "2027-02-01", 2, g, 0)
	if _, err := s.st.Update(ctx, acct, b2.BookingID, booking.Cancelled, func(b *booking.Booking) error {
		now := s.st.Now()
		b.Status, b.CancelledAt = booking.StatusCancelled, &now
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	blk := s.block(t, acct, 1, "2027-05-01")
	s.book(t, other, 1, "2027-01-01", 5, g, 0)
	u, err := s.st.AddUser(ctx, acct, guest.User{Email: "ulla@example.com", Name: "Ulla", PasswordHash: "$2a$04$secrethashsecrethash"}, false)
	if err != nil {
		t.Fatal(err)
	}

	from := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	to := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	past := time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)
	t1, t2 := b1.CreatedAt.Format(time.RFC3339Nano), b2.CreatedAt.Format(time.RFC3339Nano)
	for _, r := range []struct {
		name, query string
		status      int
		want        string
	}{
		{"this hour", "from=" + from + "&to=" + to, 200, `{"bookings":{"created":2,"cancelled":1,"nights":5},"blocks":{"created":1}}`},
		{"from included, to excluded: b1 only", "from=" + t1 + "&to=" + t2, 200, `{"bookings":{"created":1,"cancelled":0,"nights":3},"blocks":{"created":0}}`},
		{"from b2's creation on", "from=" + t2 + "&to=" + to, 200, `{"bookings":{"created":1,"cancelled":1,"nights":2},"blocks":{"created":1}}`},
		{"before", "from=" + past + "&to=" + from, 200, `{"bookings":{"created":0,"cancelled":0,"nights":0},"blocks":{"created":0}}`},
		{"from missing", "to=" + to, 400, `"field":"from","message":"is required"`},
		{"to missing", "from=" + from, 400, `"field":"to","message":"is required"`},
		{"from not a time", "from=2026-11-01&to=" + to, 400, `"field":"from","message":"must be an RFC 3339 time`},
		{"to before from", "from=" + to + "&to=" + from, 400, `"field":"to","message":"must be later than from"`},
		{"empty period", "from=" + from + "&to=" + from, 400, `"field":"to"`},
	} {
		status, out := s.do(t, acct, http.MethodGet, "/internal/account/usage?"+strings.ReplaceAll(r.query, "+", "%2B"), "")
		if status != r.status || !strings.Contains(string(out), r.want) {
			t.Errorf("%s: %d %s, want %d %s", r.name, status, out, r.status, r.want)
		}
	}

	status, out := s.do(t, acct, http.MethodGet, "/internal/account/export", "")
	if status != 200 {
		t.Fatalf("export: %d %s", status, out)
	}
	zr, err := zip.NewReader(bytes.NewReader(out), int64(len(out)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name], _ = io.ReadAll(rc)
		rc.Close()
		var v any
		if err := json.Unmarshal(files[f.Name], &v); err != nil {
			t.Errorf("%s is not JSON: %v", f.Name, err)
		}
		for _, secret := range []string{"4242424242424242", "secrethash", b1.Card.Sealed, other} {
			if bytes.Contains(files[f.Name], []byte(secret)) {
				t.Errorf("%s holds %q", f.Name, secret)
			}
		}
	}
	var m manifestJSON
	if err := json.Unmarshal(files["booking-svc/manifest.json"], &m); err != nil {
		t.Fatal(err)
	}
	ids := func(xs ...int64) []string {
		var out []string
		for _, x := range xs {
			out = append(out, strconv.FormatInt(x, 10))
		}
		slices.Sort(out)
		return out
	}
	p1, p2 := slices.Collect(maps.Keys(b1.Payments)), slices.Collect(maps.Keys(b2.Payments))
	want := map[string][]string{"bookings": ids(b1.BookingID, b2.BookingID), "blocks": ids(blk), "users": ids(int64(u.UserID)),
		"payments": ids(append(p1, p2...)...), "guests": {"ulla@example.com"}}
	if m.Service != "booking-svc" || m.AccountID != acct || fmt.Sprint(m.Records) != fmt.Sprint(want) {
		t.Errorf("manifest: %+v\nwant records %v", m, want)
	}
	for c := range want {
		if _, ok := files["booking-svc/"+c+".json"]; !ok {
			t.Errorf("no %s.json in %v", c, slices.Collect(maps.Keys(files)))
		}
	}
}

// TestErasureSweepFinishesLateWrites: a write of the account that was still running when its
// erasure ran (a booking landing after it) is published as a tombstone and erased by the
// janitor's sweep, which settles the erasure once it runs after Settle has passed.
func TestErasureSweepFinishesLateWrites(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	acct := newAccount("sw")
	s.book(t, acct, 1, "2027-01-01", 2, booking.Guest{FirstName: "Early"}, 0)
	if err := s.consumer.Apply(ctx, erasedEvent(t, acct)); err != nil {
		t.Fatal(err)
	}
	late := s.book(t, acct, 1, "2027-02-01", 2, booking.Guest{FirstName: "Late"}, 0)
	waitFor(t, "the late booking's tombstone", func() bool {
		return s.pub.latest()[store.BookingAggregate(acct, late.BookingID)].Tombstone
	})
	if got := holding(t, map[string]bool{erasurestore.MarksCollection: true, outbox.Collection: true}, acct); len(got) == 0 {
		t.Fatal("the late booking is not stored: the test shows nothing")
	}
	for _, r := range []struct {
		settle  time.Duration
		settled bool
	}{{time.Hour, false}, {0, true}} {
		s.eraser.Settle = r.settle
		if err := s.eraser.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		m, ok, err := s.marks.Get(ctx, acct)
		if err != nil || !ok || m.Settled != r.settled {
			t.Errorf("settle %v: marker %+v %v %v, want settled %v", r.settle, m, ok, err, r.settled)
		}
		if got := holding(t, map[string]bool{erasurestore.MarksCollection: true, outbox.Collection: true}, acct); len(got) != 0 {
			t.Errorf("settle %v: left %v", r.settle, got)
		}
	}
	// Applied again once settled (a replica reading the topic from the start): harmless.
	if err := s.consumer.Apply(ctx, erasedEvent(t, acct)); err != nil {
		t.Fatal(err)
	}
	// A request of the account that still reaches booking-svc changes nothing.
	for _, r := range []struct{ path, body string }{
		{"/internal/b/create", `{"propertyId":1}`},
		{"/internal/b/listbooking", `{}`},
		{"/internal/a/property-blockdate", `{"action":"create"}`},
	} {
		if status, out := s.do(t, acct, http.MethodPost, r.path, r.body); status != 401 || !strings.Contains(string(out), "the account does not exist") {
			t.Errorf("%s of the erased account: %d %s", r.path, status, out)
		}
	}
	if status, out := s.do(t, newAccount("live"), http.MethodPost, "/internal/b/listbooking", `{}`); status != 200 {
		t.Errorf("listbooking of a live account: %d %s", status, out)
	}
}

// flaky is the store as a guest erasure uses it, failing (as a killed process would stop)
// once n records were anonymised.
type flaky struct {
	booking.AccountRecords
	n, done int
	halfway bool // EraseUser writes the user, then stops
}

var errKilled = errors.New("killed")

func (f *flaky) Anonymise(ctx context.Context, account string, id int64, apply func(*booking.Booking) error) error {
	if f.done == f.n {
		return errKilled
	}
	f.done++
	return f.AccountRecords.Anonymise(ctx, account, id, apply)
}

func (f *flaky) EraseUser(ctx context.Context, account string, id int64, email string, anon guest.User) error {
	if f.done == f.n {
		return errKilled
	}
	f.done++
	if f.halfway {
		// Stopped between the user's write and the release of its email.
		_ = f.AccountRecords.EraseUser(ctx, account, id, "not-"+email, anon)
		return errKilled
	}
	return f.AccountRecords.EraseUser(ctx, account, id, email, anon)
}

// TestGuestErasureInterrupted: a guest erasure stopped before its stored answers were
// rewritten, or after each of its bookings and before its user, is finished by the request
// sent again.
func TestGuestErasureInterrupted(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	for n := -1; n <= 4; n++ { // -1: stopped while rewriting the stored answers; 4: inside the user's erasure
		acct := newAccount("gi")
		g := booking.Guest{FirstName: "Isolde", LastName: "Vandermeer", Email: fmt.Sprintf("iv%d@example.com", n+1), Phone1: "+31 20 7654321"}
		if _, err := s.st.AddUser(ctx, acct, guest.User{Email: g.Email, Name: "Isolde Vandermeer"}, false); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			b := s.book(t, acct, 1, fmt.Sprintf("2027-0%d-01", i+1), 2, g, 0)
			s.storeAnswer(t, acct, b)
		}
		svc := booking.New(booking.Deps{PropertyView: propertyview.NewReader(s.vw), Bookings: s.st, Blocks: s.st, Users: s.st,
			Accounts: &flaky{AccountRecords: s.st, n: min(max(n, 0), 3), halfway: n == 4}, Ledger: s.led, Gateway: cardpay.NewTest(time.Now), Box: s.box})
		forget := func(ctx context.Context, f booking.Forgotten) error {
			if n < 0 {
				return errKilled
			}
			return s.keys.RewriteAnswers(ctx, acct, func(body []byte) ([]byte, bool, error) { return eraseFromAnswer(body, f) })
		}
		if _, err := svc.EraseGuest(ctx, acct, g.Email, forget); !errors.Is(err, errKilled) {
			t.Fatalf("stopped after %d: %v", n, err)
		}
		status, out := s.do(t, acct, http.MethodPost, "/internal/account/guests/erase", fmt.Sprintf(`{"email":%q}`, g.Email))
		if status != 200 {
			t.Fatalf("stopped after %d, sent again: %d %s", n, status, out)
		}
		if got := holding(t, nil, "Isolde", "Vandermeer", g.Email, "7654321"); len(got) != 0 {
			t.Errorf("stopped after %d, sent again: her data is still in %v", n, got)
		}
		// Her address is free again.
		if _, err := s.st.AddUser(ctx, acct, guest.User{Email: strings.ToUpper(g.Email), Name: "New"}, false); err != nil {
			t.Errorf("stopped after %d: her address cannot sign up again: %v", n, err)
		}
	}
}

// TestConcurrentGuestErasures: four guests of one account, each listed in another's party,
// are erased at once, each by two requests (two edge replicas): none of their data is left,
// in the bookings, the stored answers or the users, and a fifth guest's own booking stays.
func TestConcurrentGuestErasures(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	acct := newAccount("gc")
	names := []string{"Perpetua", "Quillon", "Rosamund", "Saxby", "Theodric"}
	email := func(i int) string { return strings.ToLower(names[i]) + "@example.com" }
	for i, n := range names {
		for j := range 2 {
			b := s.book(t, acct, int64(i+1), fmt.Sprintf("2027-0%d-01", j+1), 2, booking.Guest{FirstName: n, LastName: n + "son", Email: email(i)}, 0)
			next := (i + 1) % len(names)
			if _, err := s.st.Update(ctx, acct, b.BookingID, booking.Updated, func(b *booking.Booking) error {
				b.Arrival = &arrival.Arrival{Guests: []arrival.Guest{{Name: n, Email: email(i)}, {Name: names[next], Email: email(next)}}}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			b, _ = s.st.Booking(ctx, acct, b.BookingID)
			s.storeAnswer(t, acct, b)
		}
		if _, err := s.st.AddUser(ctx, acct, guest.User{Email: email(i), Name: n}, false); err != nil {
			t.Fatal(err)
		}
	}
	together.Run(8, func(i int) {
		status, out := s.do(t, acct, http.MethodPost, "/internal/account/guests/erase", fmt.Sprintf(`{"email":%q}`, email(i%4)))
		if status != 200 {
			t.Errorf("erase %s: %d %s", email(i%4), status, out)
		}
	})
	if got := holding(t, nil, names[:4]...); len(got) != 0 {
		t.Errorf("left of the erased guests: %v", got)
		cur, _ := db.Collection(idempotency.Collection).Find(ctx, bson.D{})
		var docs []bson.Raw
		_ = cur.All(ctx, &docs)
		for _, d := range docs {
			for _, n := range names[:4] {
				if strings.Contains(docText(d), n) {
					t.Logf("%s: %s", n, docText(d))
				}
			}
		}
	}
	// Theodric's own bookings keep him; Saxby's party listed him, and went with Saxby's data.
	if got := holdingAll(t, "Theodricson", acct); got["bookings"] != 2 || got[idempotency.Collection] != 2 {
		t.Errorf("the fifth guest's records: %v", got)
	}
}

// TestGuestErasureWaitsForAChange: a change of the booking that holds its ledger op (an
// update planned with the guest's data, about to write it) finishes before the erasure
// rewrites the booking, so it cannot write the guest back over the erasure.
func TestGuestErasureWaitsForAChange(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	acct := newAccount("gw")
	g := booking.Guest{FirstName: "Wilhelmina", LastName: "Okonkwo", Email: "w.okonkwo@example.com"}
	b := s.book(t, acct, 1, "2027-01-01", 2, g, 0)
	owner := "booking:" + strconv.FormatInt(b.BookingID, 10)
	if err := s.led.Begin(ctx, ledger.Op{Owner: owner, Account: acct}); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		status, out := s.do(t, acct, http.MethodPost, "/internal/account/guests/erase", `{"email":"w.okonkwo@example.com"}`)
		done <- fmt.Sprintf("%d %s", status, out)
	}()
	time.Sleep(300 * time.Millisecond)
	// The change writes the guest it planned with, then ends its op.
	if _, err := s.st.Update(ctx, acct, b.BookingID, booking.Updated, func(x *booking.Booking) error {
		x.Guest = g
		x.Adults = 3
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		t.Fatalf("the erasure did not wait for the change: %s", got)
	default:
	}
	if err := s.led.End(ctx, acct, owner); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got != `200 {"bookings":1,"users":0}` {
		t.Fatalf("erase: %s", got)
	}
	cur, err := s.st.Booking(ctx, acct, b.BookingID)
	if err != nil || cur.Guest != (booking.Guest{FirstName: "Erased", Email: "erased@invalid"}) || cur.Adults != 3 {
		t.Errorf("after the change and the erasure: %v %+v", err, cur)
	}
	if op, _ := s.nights.Op(ctx, acct, owner, false); op != nil {
		t.Errorf("the erasure left its op: %+v", op)
	}
}

// gated publishes to Kafka once released: a relay of another replica that is still
// publishing a snapshot when the erasure runs.
type gated struct {
	kafka   *events.Publisher
	reached chan struct{}
	release chan struct{}
	once    sync.Once
}

func (g *gated) Publish(ctx context.Context, msgs ...events.Message) error {
	g.once.Do(func() {
		close(g.reached)
		<-g.release
	})
	return g.kafka.Publish(ctx, msgs...)
}

// TestErasureAfterAnotherReplicasWrite: another replica, which has not yet consumed the
// erasure event, wrote a booking just before it was erased, and its relay publishes the
// snapshot after the erasure's tombstone: the erasure records the tombstone again once that
// snapshot is published, so the key's latest message on the topic is a tombstone.
func TestErasureAfterAnotherReplicasWrite(t *testing.T) {
	s := newServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acct := newAccount("rw")
	since := topicEnds(t, events.TopicBooking)
	b := s.book(t, acct, 1, "2027-01-01", 2, booking.Guest{FirstName: "Replica"}, 0)
	key := store.BookingAggregate(acct, b.BookingID)
	waitFor(t, "the booking's event", func() bool { return s.pub.latest()[key].Value != nil })

	// The other replica: its own store, relay and memory of erased accounts.
	other, err := store.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	pub := &gated{kafka: events.NewPublisher(brokers), reached: make(chan struct{}), release: make(chan struct{})}
	defer pub.kafka.Close()
	ob := outbox.New(db, pub, other.Snapshot, outbox.Options{Lease: time.Minute, Sweep: time.Hour})
	other.Attach(ob)
	marks, err := erasurestore.NewMarks(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	other.WatchErasures(marks)
	go func() { _ = ob.Run(ctx) }()
	if _, err := other.Update(ctx, acct, b.BookingID, booking.Updated, func(x *booking.Booking) error {
		x.Adults = 4
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	<-pub.reached // its relay holds the snapshot

	go func() {
		time.Sleep(300 * time.Millisecond) // after the erasure's first tombstone
		close(pub.release)
	}()
	if err := s.consumer.Apply(ctx, erasedEvent(t, acct)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the outbox to drain", func() bool { return len(holding(t, map[string]bool{erasurestore.MarksCollection: true}, acct)) == 0 })
	m, ok := onTopic(t, events.TopicBooking, acct+":", since)[key]
	if !ok || !events.IsTombstone(m) {
		t.Errorf("latest of %s on the topic: %s, want a tombstone", key, m.Value)
	}
}

// syncBuffer is a log destination written by the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestNoGuestDataInTheLog: a guest's booking (also refused, and replayed), their user (also
// refused), a failed login and their erasure leave neither their name nor their email in
// booking-svc's log, at any level.
func TestNoGuestDataInTheLog(t *testing.T) {
	var log syncBuffer
	s := newServerLogging(t, &log)
	acct := newAccount("lg")
	priceable(t, s, acct, 1)
	in := time.Now().AddDate(0, 2, 0)
	create := fmt.Sprintf(`{"propertyId":1,"firstName":"Ottoline","lastName":"Fairweather","email":"ottoline.f@example.com","phone1":"+44 20 7946 0001",
		"numberofadults":2,"leadsourceId":1,"checkin":%q,"checkout":%q}`, in.Format(time.DateOnly), in.AddDate(0, 0, 3).Format(time.DateOnly))
	for _, r := range []struct {
		name, path, body, key string
		status                int
	}{
		{"create", "/internal/b/create", create, "k1", 200},
		{"create replayed", "/internal/b/create", create, "k1", 200},
		{"create on taken dates", "/internal/b/create", create, "", 409},
		{"create invalid", "/internal/b/create", `{"propertyId":1,"firstName":"Ottoline","email":"ottoline.f@"}`, "", 400},
		{"adduser", "/internal/b/adduser", `{"email":"ottoline.f@example.com","password":"s3cret!x","name":"Ottoline Fairweather"}`, "", 200},
		{"adduser again", "/internal/b/adduser", `{"email":"Ottoline.F@example.com","password":"s3cret!x","name":"Ottoline Fairweather"}`, "", 409},
		{"login refused", "/internal/b/login", `{"email":"ottoline.f@example.com","password":"wrong-one"}`, "", 401},
		{"listbooking by name", "/internal/b/listbooking", `{"keyword":"Fairweather"}`, "", 200},
		{"erase", "/internal/account/guests/erase", `{"email":"ottoline.f@example.com"}`, "", 200},
	} {
		req := httptest.NewRequest(http.MethodPost, r.path, strings.NewReader(r.body))
		req.Header.Set("Content-Type", "application/json")
		if r.key != "" {
			req.Header.Set(idempotency.Header, r.key)
		}
		tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: acct}, http.MethodPost, r.path, []byte(r.body), time.Now())
		resp, err := s.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != r.status {
			t.Errorf("%s: %d %s, want %d", r.name, resp.StatusCode, out, r.status)
		}
	}
	text := strings.ToLower(log.String())
	if !strings.Contains(text, `"msg":"request"`) {
		t.Fatalf("the log holds no request line: the test shows nothing\n%s", text)
	}
	// The phone number whole: four digits alone turn up in request ids and durations by chance.
	for _, personal := range []string{"ottoline", "fairweather", "20 7946 0001"} {
		if strings.Contains(text, personal) {
			t.Errorf("the log holds %q:\n%s", personal, text)
		}
	}
}

// TestConcurrentAccountErasures: every replica consumes the erasure event, so the erasure runs
// several times at once; together they leave what one leaves.
func TestConcurrentAccountErasures(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	acct := newAccount("ce")
	since := topicEnds(t, events.TopicBooking)
	var keys []string
	for i := range 4 {
		b := s.book(t, acct, int64(i+1), "2027-01-01", 2, booking.Guest{FirstName: "Concurrent"}, 0)
		keys = append(keys, store.BookingAggregate(acct, b.BookingID))
	}
	if _, err := s.st.AddUser(ctx, acct, guest.User{Email: "c@example.com", Name: "Concurrent"}, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the account's events", func() bool { return s.pub.latest()[keys[3]].Value != nil })
	ev := erasedEvent(t, acct)
	together.Run(3, func(int) {
		if err := s.consumer.Apply(ctx, ev); err != nil {
			t.Error(err)
		}
	})
	waitFor(t, "the outbox to drain", func() bool { return len(holding(t, map[string]bool{erasurestore.MarksCollection: true}, acct)) == 0 })
	if got := holding(t, nil, acct); got[erasurestore.MarksCollection] != 1 || len(got) != 1 {
		t.Errorf("documents of the erased account: %v", got)
	}
	onKafka := onTopic(t, events.TopicBooking, acct+":", since)
	for _, k := range keys {
		if m := onKafka[k]; !events.IsTombstone(m) {
			t.Errorf("latest of %s: %s, want a tombstone", k, m.Value)
		}
	}
}
