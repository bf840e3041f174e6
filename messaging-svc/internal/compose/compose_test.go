package compose

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	netmail "net/mail"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/messaging-svc/internal/bookingsvc"
	"github.com/vros/vros/messaging-svc/internal/mail"
	"github.com/vros/vros/messaging-svc/internal/outbox"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/template"
	"github.com/vros/vros/messaging-svc/internal/trigger"
	"github.com/vros/vros/testkit/smtpcatcher"
	"github.com/vros/vros/testkit/testinfra"
)

// The composer over the real store (FerretDB), booking-svc's route as its verifier checks
// messaging-svc's key (answering booking-svc's booking object, testdata/booking.json, the
// shape systest/stacktest reads from a real booking-svc), and a real SMTP server.

var testDB *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "messaging_compose", &testDB, nil) }

const messagingKey = "compose-test-messaging-key-0123"

var accounts atomic.Int64

// fixture is a composer's world: an account with views, settings, a booking at the fake
// booking-svc, the operator's catcher.
type fixture struct {
	account  string
	c        *Composer
	views    *store.Views
	settings *store.Settings
	tpls     *store.Templates
	snaps    *store.Snapshots
	box      *seal.Box
	operator *smtpcatcher.Catcher
	booking  string // the booking JSON booking-svc answers for id 42 ("" → 404)
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{account: fmt.Sprintf("compose-%d-%d", time.Now().UnixNano()%1e6, accounts.Add(1))}
	raw, err := os.ReadFile("../bookingsvc/testdata/booking.json")
	if err != nil {
		t.Fatal(err)
	}
	f.booking = string(raw)
	v := tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerMessaging, Key: messagingKey, Routes: []string{"GET /internal/hooks/booking/:id"}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, tenant, err := v.Verify(r.Header.Get, r.Method, r.URL.Path, r.URL.RawQuery, body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		if tenant.AccountID != f.account || r.URL.Path != "/internal/hooks/booking/42" || f.booking == "" {
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
			return
		}
		_, _ = io.WriteString(w, f.booking)
	}))
	t.Cleanup(srv.Close)
	if f.views, err = store.NewViews(ctx, testDB); err != nil {
		t.Fatal(err)
	}
	if f.settings, err = store.NewSettings(ctx, testDB); err != nil {
		t.Fatal(err)
	}
	if f.tpls, err = store.NewTemplates(ctx, testDB); err != nil {
		t.Fatal(err)
	}
	if f.snaps, err = store.NewSnapshots(ctx, testDB); err != nil {
		t.Fatal(err)
	}
	if f.box, err = seal.New(seal.NewKey()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.views.SaveAccount(ctx, store.AccountView{Account: f.account, Name: "Riviera Stays", Timezone: "Europe/Rome",
		Languages: []string{"en", "it"}, Brands: []store.BrandView{{ID: 3, Name: "Villa Aurora Direct", Website: "https://aurora.example", Language: "it"}},
		Version: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.views.SaveProperty(ctx, store.PropertyView{Account: f.account, ID: 41, Name: "Villa Aurora", Address: "Via del Mare 1",
		City: "Sanremo", Postcode: "18038", Country: "IT", CheckinTime: "16:00", CheckoutTime: "10:00", Timezone: "Europe/Rome", Version: 1}, false); err != nil {
		t.Fatal(err)
	}
	f.operator = smtpcatcher.Start(t, smtpcatcher.NoAuth())
	f.c, err = New(Options{Bookings: bookingsvc.New(srv.URL, tenancy.NewSigner(tenancy.CallerMessaging, messagingKey), 5*time.Second),
		Views: f.views, Templates: f.tpls, Settings: f.settings, Snapshots: f.snaps, Box: f.box,
		From: netmail.Address{Name: "vros", Address: "mail@vros.example"},
		SMTP: &mail.SMTPConfig{Host: f.operator.Host(), Port: f.operator.Port(), TLS: mail.TLSNone, Timeout: 10 * time.Second},
		Now:  func() time.Time { return time.Date(2027, 1, 5, 23, 30, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// message is a message of the log about booking 42.
func (f *fixture) message(trig, occurrence string) store.Message {
	def, _ := trigger.Lookup(trig)
	lang := trigger.LangBooking
	if def.To == trigger.Owner {
		lang = trigger.LangAccount
	}
	return store.Message{ID: trigger.ID(f.account, trig, 42, occurrence), Account: f.account, Trigger: trig, BookingID: 42,
		PropertyID: 41, BrandID: 3, Occurrence: occurrence, To: def.To, Lang: lang, Scheduled: def.Scheduled()}
}

// send sends what Compose answered, as the outbox does, and answers what the server got.
func send(t *testing.T, c outbox.Composed, id string, catcher *smtpcatcher.Catcher) smtpcatcher.Message {
	t.Helper()
	before := len(catcher.Messages())
	c.Mail.MessageID = mail.MessageID(id, "vros.example")
	if _, err := c.Transport.Send(context.Background(), c.Mail); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := catcher.Wait(ctx, smtpcatcher.Count(before+1))
	if err != nil {
		t.Fatal(err)
	}
	return got[before]
}

func wantSkip(t *testing.T, what string, err error, status store.Status, reason string) {
	t.Helper()
	var s *outbox.Skip
	if !errors.As(err, &s) || s.Status != status || !strings.Contains(s.Reason, reason) {
		t.Errorf("%s: %v, want a skip %s %q", what, err, status, reason)
	}
}

// TestGuestConfirmation: booking.confirmed goes to the guest from the operator's address
// under the brand's name, in the brand's language (Italian: vros's Italian default), with
// the booking's figures, through the operator's server; a transactional message carries no
// List-Unsubscribe; the rate key is the account.
func TestGuestConfirmation(t *testing.T) {
	f := newFixture(t)
	m := f.message(trigger.BookingConfirmed, trigger.Once)
	c, err := f.c.Compose(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	if c.RateKey != f.account || c.Language != "it" || c.Mail.ListUnsubscribe != "" || len(c.Mail.Headers) != 0 {
		t.Errorf("composed: rate key %q, language %q, unsubscribe %q %v", c.RateKey, c.Language, c.Mail.ListUnsubscribe, c.Mail.Headers)
	}
	got := send(t, c, m.ID, f.operator)
	if got.EnvelopeFrom != "mail@vros.example" || len(got.From) != 1 || got.From[0].Name != "Villa Aurora Direct" ||
		len(got.To) != 1 || got.To[0].Address != "anna@example.com" || got.To[0].Name != "Anna Rossi" || len(got.ReplyTo) != 0 {
		t.Errorf("headers: from %v %v, to %v, reply-to %v", got.EnvelopeFrom, got.From, got.To, got.ReplyTo)
	}
	for _, want := range []string{"Anna", "Villa Aurora", "1.452,50"} {
		if !strings.Contains(got.Text, want) || !strings.Contains(got.HTML, want) {
			t.Errorf("the message lacks %q:\nsubject %s\n%s", want, got.Subject, got.Text)
		}
	}
	if got.Subject == "" || got.ListUnsubscribe != "" {
		t.Errorf("subject %q, List-Unsubscribe %q", got.Subject, got.ListUnsubscribe)
	}
}

// TestAccountTemplateAndSender: the account's own template (narrowed to the property) wins
// over vros's default; the account's sender, name and reply address are used; a reminder
// carries List-Unsubscribe to the reply address and List-Unsubscribe-Post.
func TestAccountTemplateAndSender(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.tpls.Create(ctx, f.account, template.Template{Trigger: trigger.StayArrival, Language: "it", PropertyID: 41,
		Subject: "Arrivo a {{.Property.Name}}", HTML: "<p>Ciao {{.Guest.FirstName}}, check-in dalle {{.Property.CheckinTime}} del {{.Booking.Checkin}}.</p>"},
		time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.settings.SetDelivery(ctx, f.account, store.Delivery{FromName: "Aurora Desk", FromAddress: "desk@aurora.example",
		ReplyTo: "reply@aurora.example", Notify: []string{"owner@aurora.example"}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	m := f.message(trigger.StayArrival, "2027-04-07T10:00")
	c, err := f.c.Compose(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	got := send(t, c, m.ID, f.operator)
	if got.Subject != "Arrivo a Villa Aurora" || !strings.Contains(got.Text, "Ciao Anna, check-in dalle 16:00 del 2027-04-10.") {
		t.Errorf("the account's template: %q %q", got.Subject, got.Text)
	}
	if got.EnvelopeFrom != "desk@aurora.example" || got.From[0].Name != "Aurora Desk" || len(got.ReplyTo) != 1 || got.ReplyTo[0].Address != "reply@aurora.example" {
		t.Errorf("sender %s %v reply-to %v", got.EnvelopeFrom, got.From, got.ReplyTo)
	}
	if got.ListUnsubscribe != "<mailto:reply@aurora.example?subject=unsubscribe>" || got.Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe %q, -Post %q", got.ListUnsubscribe, got.Header.Get("List-Unsubscribe-Post"))
	}
}

// TestOwnerNotice: an owner notice goes to the first notification address alone, in the
// account's first language, with the operator's address replying to that address; without
// a notification address it is cancelled.
func TestOwnerNotice(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	m := f.message(trigger.OwnerBooking, trigger.Once)
	_, err := f.c.Compose(ctx, m)
	wantSkip(t, "no notification address", err, store.StatusCancelled, "no notification address")

	if _, err := f.settings.SetDelivery(ctx, f.account, store.Delivery{Notify: []string{"owner@aurora.example", "partner@aurora.example"}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	c, err := f.c.Compose(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if c.Language != "en" {
		t.Errorf("language %q, want the account's first, en", c.Language)
	}
	got := send(t, c, m.ID, f.operator)
	if len(got.EnvelopeTo) != 1 || got.EnvelopeTo[0] != "owner@aurora.example" || len(got.ReplyTo) != 1 || got.ReplyTo[0].Address != "owner@aurora.example" {
		t.Errorf("to %v reply-to %v", got.EnvelopeTo, got.ReplyTo)
	}
	if !strings.Contains(got.Text, "Anna") {
		t.Errorf("the notice does not name the guest: %s", got.Text)
	}
}

// TestSkips: what must not be sent ends as its status says, and a booking-svc that does not
// answer is a temporary error.
func TestSkips(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	m := f.message(trigger.BookingConfirmed, trigger.Once)

	f.booking = ""
	_, err := f.c.Compose(ctx, m)
	wantSkip(t, "booking erased", err, store.StatusCancelled, "the booking no longer exists")

	raw, _ := os.ReadFile("../bookingsvc/testdata/booking.json")
	f.booking = strings.Replace(string(raw), `"email":"anna@example.com"`, `"email":""`, 1)
	_, err = f.c.Compose(ctx, m)
	wantSkip(t, "no guest address", err, store.StatusFailed, "the guest has no email address")
	f.booking = string(raw)

	none, err := New(Options{Bookings: f.c.o.Bookings, Views: f.views, Templates: f.tpls, Settings: f.settings})
	if err != nil {
		t.Fatal(err)
	}
	_, err = none.Compose(ctx, m)
	wantSkip(t, "no sender", err, store.StatusFailed, "no sender address")
	if _, err := f.settings.SetDelivery(ctx, f.account, store.Delivery{FromAddress: "desk@aurora.example"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err = none.Compose(ctx, m)
	wantSkip(t, "no mail server", err, store.StatusFailed, "no mail server")

	down, err := New(Options{Bookings: bookingsvc.New("http://127.0.0.1:1", tenancy.NewSigner(tenancy.CallerMessaging, messagingKey), time.Second),
		Views: f.views, Templates: f.tpls, Settings: f.settings, SMTP: f.c.o.SMTP, From: f.c.o.From})
	if err != nil {
		t.Fatal(err)
	}
	_, err = down.Compose(ctx, m)
	var s *outbox.Skip
	if err == nil || errors.As(err, &s) {
		t.Errorf("booking-svc down: %v, want a temporary error", err)
	}
}

// TestAccountSMTP: an account with its own server sends through it, authenticated with its
// password opened from the seal; the operator's server gets nothing.
func TestAccountSMTP(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	own := smtpcatcher.Start(t, smtpcatcher.StartTLS(), smtpcatcher.Credentials("aurora", "s3cret"))
	f.c.o.AccountSMTP = func(c *mail.SMTPConfig) {
		c.TLSConfig = &tls.Config{RootCAs: own.RootCAs(), ServerName: own.Host()}
		c.Timeout = 10 * time.Second
	}
	if _, err := f.settings.SetDelivery(ctx, f.account, store.Delivery{FromAddress: "desk@aurora.example",
		SMTP: &store.SMTPSettings{Host: own.Host(), Port: own.Port(), Username: "aurora", Password: store.SealSMTPPassword(f.box, f.account, "s3cret"),
			TLS: mail.TLSStartTLS}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	m := f.message(trigger.PaymentReceived, "901")
	c, err := f.c.Compose(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	got := send(t, c, m.ID, own)
	if got.AuthUser != "aurora" || got.EnvelopeFrom != "desk@aurora.example" || !strings.Contains(got.Text, "400,00") {
		t.Errorf("through the account's server: auth %q from %q\n%s", got.AuthUser, got.EnvelopeFrom, got.Text)
	}
	if n := len(f.operator.Messages()); n != 0 {
		t.Errorf("the operator's server got %d messages", n)
	}
	// A password sealed for another account does not open here.
	if _, err := f.settings.SetDelivery(ctx, f.account, store.Delivery{FromAddress: "desk@aurora.example",
		SMTP: &store.SMTPSettings{Host: own.Host(), Port: own.Port(), Username: "aurora", Password: store.SealSMTPPassword(f.box, "another", "s3cret"),
			TLS: mail.TLSStartTLS}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err = f.c.Compose(ctx, m)
	wantSkip(t, "another account's password", err, store.StatusFailed, "does not open")
}

// TestPaymentFailedAndConflict: payment.failed shows the refused charge of the booking's
// snapshot; owner.channel_conflict the channel and reason its source carried.
func TestPaymentFailedAndConflict(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.snaps.Save(ctx, contract.Booking{AccountID: f.account, BookingID: 42, PropertyID: 41, Status: "reserved", Version: 3,
		Currency: "EUR", ChargeFailures: []contract.BookingChargeFailure{{ID: "2027-03-01-1052.50", Amount: "1052.5", Currency: "EUR",
			At: time.Date(2027, 3, 1, 23, 30, 0, 0, time.UTC), Reason: "card declined"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.tpls.Create(ctx, f.account, template.Template{Trigger: trigger.PaymentFailed, Language: "it",
		Subject: "Pagamento non riuscito", HTML: "<p>{{.Message.Payment.Amount}} {{.Message.Payment.Date}} {{.Message.Reason}} {{.Message.Installment.DueDate}}</p>"},
		time.Now()); err != nil {
		t.Fatal(err)
	}
	c, err := f.c.Compose(ctx, f.message(trigger.PaymentFailed, "2027-03-01-1052.50"))
	if err != nil {
		t.Fatal(err)
	}
	// 23:30 UTC on March 1st is March 2nd in Rome; the unpaid installment is the balance.
	if !strings.Contains(c.Mail.Text, "1052.50 2027-03-02 card declined 2027-04-10") {
		t.Errorf("payment.failed: %q", c.Mail.Text)
	}

	if _, err := f.settings.SetDelivery(ctx, f.account, store.Delivery{Notify: []string{"owner@aurora.example"}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	m := f.message(trigger.OwnerChannelConflict, "77")
	m.Detail = map[string]string{"Channel": "airbnb", "Reason": "the night of 2027-04-11 is taken"}
	c, err = f.c.Compose(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Mail.Text, "airbnb") || !strings.Contains(c.Mail.Text, "the night of 2027-04-11 is taken") {
		t.Errorf("owner.channel_conflict: %q", c.Mail.Text)
	}
	// A conflict that names no booking is composed from the account alone.
	m.BookingID, m.ID = 0, trigger.ID(f.account, trigger.OwnerChannelConflict, 0, "78")
	if c, err = f.c.Compose(ctx, m); err != nil || !strings.Contains(c.Mail.Text, "airbnb") {
		t.Errorf("a conflict without a booking: %v %q", err, c.Mail.Text)
	}
}

// TestData: the preview's data of a real booking (the booking object's figures, the views,
// the last payment and the first unpaid installment), and ErrNoBooking for one booking-svc
// does not have.
func TestData(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	d, err := f.c.Data(ctx, f.account, 42, trigger.BookingConfirmed, "en")
	if err != nil {
		t.Fatal(err)
	}
	b := d.Booking
	if d.Guest.FullName != "Anna Rossi" || d.Guest.Phone != "+39 333 1234567" || b.ID != 42 || b.Checkin != "2027-04-10" || b.Checkout != "2027-04-14" ||
		b.Nights != 4 || b.Adults != 2 || b.Children != 1 || b.GrandTotal != "1452.50" || b.AmountPaid != "400.00" || b.BalanceDue != "1052.50" ||
		len(b.Payments) != 1 || b.Payments[0].ID != 901 || b.Payments[0].Date != "2027-01-05" || len(b.Schedule) != 2 || !b.Schedule[0].Paid ||
		b.Schedule[1].Paid || b.Deposit.Status != "held" || b.Deposit.Amount != "300.00" || b.RatePlan != "Standard" ||
		b.CancellationPolicy.Name != "moderate" || len(b.CancellationPolicy.Tiers) != 2 || b.CancellationPolicy.Tiers[1].Percent != "50" {
		t.Errorf("booking %+v", b)
	}
	if d.Property.Name != "Villa Aurora" || d.Property.CheckinTime != "16:00" || d.Brand.Name != "Villa Aurora Direct" ||
		d.Account.Name != "Riviera Stays" || d.Message.Trigger != trigger.BookingConfirmed || d.Message.Language != "en" ||
		d.Message.SentDate != "2027-01-06" || d.Message.Payment.ID != 901 || d.Message.Installment.DueDate != "2027-04-10" {
		t.Errorf("data %+v %+v %+v %+v", d.Property, d.Brand, d.Account, d.Message)
	}
	if _, err := template.Render(ctx, template.Template{Trigger: trigger.BookingConfirmed, Language: "en", Subject: "{{.Booking.ID}}",
		HTML: "<p>{{.Guest.FirstName}}</p>"}, d); err != nil {
		t.Error(err)
	}
	if _, err := f.c.Data(ctx, f.account, 43, trigger.BookingConfirmed, "en"); !errors.Is(err, ErrNoBooking) {
		t.Errorf("booking 43: %v, want ErrNoBooking", err)
	}
}

// TestTest: messaging-settings' test sends through the account's transport now and answers
// the acceptance; without a sender it answers why.
func TestTest(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	answer, err := f.c.Test(ctx, f.account, "someone@aurora.example")
	if err != nil || !strings.HasPrefix(answer, "accepted") {
		t.Fatalf("test: %q %v", answer, err)
	}
	got := f.operator.Messages()
	if len(got) != 1 || got[0].EnvelopeTo[0] != "someone@aurora.example" || got[0].Subject != "vros test message" {
		t.Errorf("the test message: %+v", got)
	}
	none, _ := New(Options{Bookings: f.c.o.Bookings, Views: f.views, Templates: f.tpls, Settings: f.settings})
	if _, err := none.Test(ctx, f.account, "someone@aurora.example"); err == nil || !strings.Contains(err.Error(), "no sender address") {
		t.Errorf("no sender: %v", err)
	}
	if _, err := f.c.Test(ctx, f.account, "not an address"); err == nil {
		t.Error("a broken address: no error")
	}
}

// TestNamesWithoutBrand: a booking of no brand, in an account whose view has no name, names
// the property (the template's .Account.Name and the sender), never an empty name.
func TestNamesWithoutBrand(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.views.SaveAccount(ctx, store.AccountView{Account: f.account, Timezone: "Europe/Rome", Languages: []string{"en"}, Version: 2}); err != nil {
		t.Fatal(err)
	}
	m := f.message(trigger.BookingConfirmed, trigger.Once)
	m.BrandID = 0
	f.booking = strings.Replace(f.booking, `"brandId":3`, `"brandId":0`, 1)
	c, err := f.c.Compose(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mail.From.Name != "Villa Aurora" || !strings.Contains(c.Mail.Text, "booking with Villa Aurora") {
		t.Errorf("from %q\n%s", c.Mail.From.Name, c.Mail.Text)
	}
}
