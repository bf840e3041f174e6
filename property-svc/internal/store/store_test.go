package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/testinfra"
)

// The contract suite of property.Repository: every test drives a Store through the
// domain's interface, on a real MongoDB-wire server (an embedded FerretDB, or the server
// VROS_MONGO_URI names), and reads back what the domain and the consumers read: Find,
// Locate and Gateways, and the snapshot the outbox relay publishes (Store.Snapshot).

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "propstore_test", &db, nil) }

// harness is one store over the test database, wired as service.Run wires it, with a relay
// that publishes into a recorder when started.
type harness struct {
	st   *Store
	repo property.Repository
	ob   *outbox.Outbox
	pub  *recorder
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	box, err := seal.New(seal.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	st, err := New(context.Background(), db, box)
	if err != nil {
		t.Fatal(err)
	}
	pub := &recorder{}
	ob := outbox.New(db, pub, st.Snapshot, outbox.Options{Lease: time.Minute, Sweep: time.Hour})
	st.Attach(ob)
	return &harness{st: st, repo: st, ob: ob, pub: pub}
}

// relay runs the outbox relay until the test ends.
func (h *harness) relay(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.ob.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// recorder is a Publisher that keeps what it is given.
type recorder struct {
	mu   sync.Mutex
	msgs []events.Message
}

func (r *recorder) Publish(_ context.Context, msgs ...events.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, msgs...)
	return nil
}

// awaitVersion waits until the relay has published version v of the property with key (in any
// order: consumers keep the newer, mongostore.KeepNewer).
func (r *recorder) awaitVersion(t *testing.T, key string, v int64) {
	t.Helper()
	eventually.Holds(t, fmt.Sprintf("the relay publishes version %d", v), 10*time.Second, func() bool {
		for _, p := range r.published(t, key) {
			if p.Version == v {
				return true
			}
		}
		return false
	})
}

// published returns the property events published with key, decoded.
func (r *recorder) published(t *testing.T, key string) []contract.Property {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []contract.Property
	for _, m := range r.msgs {
		if m.Key != key {
			continue
		}
		var p contract.Property
		if _, err := events.Decode(m.Value, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

var accounts atomic.Int64

// newAccount is an account no other test uses.
func newAccount() string { return strconv.FormatInt(5000+accounts.Add(1), 10) }

var ctx = context.Background()

// state is the property as the relay publishes it now (deleted ones included).
func (h *harness) state(t *testing.T, account string, pid int64) contract.Property {
	t.Helper()
	msgs, err := h.st.Snapshot(ctx, recordID(account, pid))
	if err != nil {
		t.Fatalf("snapshot of %s:%d: %v", account, pid, err)
	}
	if len(msgs) != 1 {
		t.Fatalf("snapshot of %s:%d: %d messages", account, pid, len(msgs))
	}
	var p contract.Property
	if _, err := events.Decode(msgs[0].Value, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// raw is the stored document of a property, as MongoDB holds it.
func raw(t *testing.T, account string, pid int64) bson.Raw {
	t.Helper()
	r, err := db.Collection(collProperties).FindOne(ctx, bson.D{{Key: "_id", Value: recordID(account, pid)}}).Raw()
	if err != nil {
		t.Fatalf("raw document of %s:%d: %v", account, pid, err)
	}
	return r
}

// same fails the test when got and want do not encode to the same JSON.
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func isNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, property.ErrNotFound) {
		t.Errorf("%s: %v, want property.ErrNotFound", what, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Fixtures: valid domain values, as the decoders would build them.

var d = decimal.RequireFromString

func dp(s string) *decimal.Decimal { v := d(s); return &v }
func sp(s string) *string          { return &s }
func bp(b bool) *bool              { return &b }
func ip(i int) *int                { return &i }

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func villa(code string) property.Property {
	return property.Property{InternalCode: code, Name: "Villa Aurora on the hill", Type: property.TypeVilla, MaxGuest: 6,
		Bedrooms: 3, Bathrooms: 2, Kitchens: 1, Floor: sp("Ground"), Space: property.Space{Value: d("120.5"), Unit: property.Meters},
		Address: "Via Roma 1", City: "Lucca", Postcode: sp("55100"), Country: "IT", Latitude: d("43.84"), Longitude: d("10.5")}
}

func villaContent() contract.Content {
	return contract.Content{Name: "Villa Aurora on the hill", Type: "Villa", MaxGuest: 6, Bedrooms: 3, Bathrooms: 2, Kitchens: 1,
		Floor: "Ground", SpaceValue: "120.5", SpaceUnit: "meters", Address: "Via Roma 1", City: "Lucca", Postcode: "55100",
		Country: "IT", Latitude: "43.84", Longitude: "10.5"}
}

func policy() property.Policy {
	return property.Policy{PaymentType: property.PayPartial,
		DamageDeposit:    &property.Charge{Deadline: property.Deadline{Due: property.DueArrival}, AmountType: property.Flat, Amount: d("300")},
		FirstPayment:     &property.Charge{Deadline: property.Deadline{Due: property.DueBooking}, AmountType: property.PercentOfGrandTotal, Amount: d("30")},
		RemainingPayment: &property.Deadline{Due: property.DueXDayPriorArrival, XDay: 30}}
}

func rates(daily string) property.Rates {
	noon, err := pricing.ParseClock("14:00")
	if err != nil {
		panic(err)
	}
	return property.Rates{
		Rate: property.Rate{Prices: property.Prices{Daily: d(daily), Weekend: dp("120"), ExtraDaily: dp("20")}, MinimumStay: 2},
		LOS:  []property.LOSDiscount{{Days: 7, Discount: d("5")}},
		Setting: property.Setting{StandardOccupants: 2, AcceptBookingUpto: 12, ApplyWeekendPrice: true,
			DefaultCheckin: pricing.AllDays, DefaultCheckout: pricing.DaysOf(time.Friday, time.Saturday),
			FirstDaySurcharge: d("25.5"), SameDayBookingUntil: &noon},
		Seasons: []property.Season{{Name: "Summer", MinimumStay: 5, Start: day("2027-07-01"), End: day("2027-08-31"),
			Prices: property.Prices{Daily: d("150"), Weekly: dp("945.00")}, AllowCheckin: pricing.DaysOf(time.Saturday)}},
	}
}

func ratesPublished(daily string) *contract.Rates {
	return &contract.Rates{Rate: contract.Prices{Daily: daily, Weekend: "120", ExtraDaily: "20"}, MinimumStay: 2,
		LOS: []contract.LOS{{Days: 7, Discount: "5"}},
		Setting: contract.Setting{StandardOccupants: 2, AcceptBookingUpto: 12, ApplyWeekendPrice: true,
			DefaultAllowCheckin: "All", DefaultAllowCheckout: "Friday,Saturday", AllowSameDayBookingUntil: "14:00",
			FirstDaySurcharge: "25.5"},
		Seasons: []contract.Season{{Name: "Summer", MinimumStay: 5, StartDate: "2027-07-01", EndDate: "2027-08-31",
			Prices: contract.Prices{Daily: "150", Weekly: "945"}, AllowCheckin: "Saturday"}}}
}

// The secrets of methods(); none may be stored or published in the clear.
var secrets = []string{"sk_test_SECRET_one", "nexi-SECRET-two", "an-SECRET-login", "an-SECRET-txkey"}

func methods() property.Methods {
	return property.Methods{
		Stripe:       &property.StripeMethod{SecretKey: secrets[0], PublicKey: "pk_test_one", Description: "cards"},
		AuthorizeNet: &property.AuthorizeNetMethod{LoginID: secrets[2], TransactionKey: secrets[3]},
		PayPal:       &property.PayPalMethod{Email: "owner@example.com", Description: "PayPal"},
		Nexi:         &property.NexiMethod{Secure3D: true, MerchantID: "m-1", Password: secrets[1]},
		Cash:         &property.CashMethod{Description: "on arrival"},
	}
}

func taxes(name string) property.Taxes {
	return property.Taxes{Taxes: []property.Tax{
		{Name: name, Amount: d("10"), Type: property.TaxPercent, Calculation: property.TaxPerStay, Default: true},
		{Name: "City tax", Amount: d("1.5"), Type: property.TaxFixed, Calculation: property.TaxPerGuestPerNight},
	}}
}

func taxesPublished(name string) []contract.Tax {
	return []contract.Tax{{Name: name, Amount: "10", Type: 1, CalculationType: 1, Def: true},
		{Name: "City tax", Amount: "1.5", Type: 2, CalculationType: 3}}
}

func services() property.Services {
	return property.Services{Services: []property.Service{
		{Name: "Cleaning", Amount: d("50"), Type: property.ServiceFixed, Applicable: property.ServicePerStay, Unit: 1, Default: true,
			Taxes: []property.ServiceTax{{Name: "VAT", Percent: d("22")}}},
		{Name: "Breakfast", Amount: d("12.50"), Type: property.ServiceFixed, Applicable: property.ServicePerOccupantPerNight, Unit: 1,
			Taxes: []property.ServiceTax{}},
	}}
}

// img is a photo's renditions, as photo.Render would give them.
func img(tag string) *photo.Result {
	r := &photo.Result{Width: 1600, Height: 900, Renditions: map[string]photo.Rendition{}}
	for _, n := range photo.Names() {
		r.Renditions[n] = photo.Rendition{Name: n, Data: []byte(tag + "/" + n), ContentType: "image/jpeg"}
	}
	return r
}

// create stores villa(code) in account and returns its id.
func (h *harness) create(t *testing.T, account, code string) int64 {
	t.Helper()
	pid, err := h.repo.Create(ctx, account, villa(code), 0)
	if err != nil {
		t.Fatalf("create %s in %s: %v", code, account, err)
	}
	return pid
}

func ref(pid int64) property.PropertyRef { return property.PropertyRef{ID: int(pid)} }
func code(c string) property.PropertyRef { return property.PropertyRef{InternalCode: c} }

func count(t *testing.T, coll string, filter bson.D) int64 {
	t.Helper()
	n, err := db.Collection(coll).CountDocuments(ctx, filter)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// unchanged fails the test when a property's stored document changed.
func unchanged(t *testing.T, what string, before, after bson.Raw) {
	t.Helper()
	if !bytes.Equal(before, after) {
		t.Errorf("%s changed the property: version %v (%v) became %v (%v)", what,
			before.Lookup("version"), before.Lookup("last_change"), after.Lookup("version"), after.Lookup("last_change"))
	}
}
