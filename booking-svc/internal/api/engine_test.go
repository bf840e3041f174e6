package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/cardpay/route"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/testkit/stripemock"
)

// switchIntents passes the booking engine's PaymentIntents to the gateway a test sets (none:
// cardpay.ErrNoIntents).
type switchIntents struct {
	mu sync.Mutex
	to booking.Intents
}

func (s *switchIntents) set(to booking.Intents) {
	s.mu.Lock()
	s.to = to
	s.mu.Unlock()
}

func (s *switchIntents) get() booking.Intents {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.to
}

func (s *switchIntents) CreateIntent(ctx context.Context, req cardpay.IntentRequest) (cardpay.Intent, error) {
	if to := s.get(); to != nil {
		return to.CreateIntent(ctx, req)
	}
	return cardpay.Intent{}, cardpay.ErrNoIntents
}

func (s *switchIntents) Intent(ctx context.Context, account string, pid int64, id string) (cardpay.Intent, error) {
	if to := s.get(); to != nil {
		return to.Intent(ctx, account, pid, id)
	}
	return cardpay.Intent{}, cardpay.ErrNoIntents
}

func (s *switchIntents) CancelIntent(ctx context.Context, account string, pid int64, id, key string) (cardpay.Intent, error) {
	if to := s.get(); to != nil {
		return to.CancelIntent(ctx, account, pid, id, key)
	}
	return cardpay.Intent{}, cardpay.ErrNoIntents
}

// stripeMethods are the properties' Stripe methods (route.Methods).
type stripeMethods map[int64]route.StripeMethod

func (m stripeMethods) Stripe(_ context.Context, _ string, pid int64) (route.StripeMethod, bool, error) {
	k, ok := m[pid]
	return k, ok, nil
}

// engineCall is one call of the booking engine's routes as edge makes it.
type engineCall struct {
	path, body, key string
	sandbox         bool
}

type engineAnswer struct {
	code  int
	body  []byte
	data  map[string]any
	error map[string]any
	retry string
}

// engine sends c on behalf of account, signed as edge signs it.
func (s *server) engine(t *testing.T, account string, c engineCall) engineAnswer {
	t.Helper()
	path := "/internal/engine/" + c.path
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(c.body))
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("Idempotency-Key", c.key)
	}
	tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: account, Sandbox: c.sandbox},
		http.MethodPost, path, []byte(c.body), time.Now())
	resp, err := s.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := engineAnswer{code: resp.StatusCode, retry: resp.Header.Get("Retry-After")}
	out.body, _ = io.ReadAll(resp.Body)
	var env struct {
		Data  map[string]any `json:"data"`
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(out.body, &env); err != nil {
		t.Fatalf("%s: answer is not JSON: %s", path, out.body)
	}
	out.data, out.error = env.Data, env.Error
	return out
}

// engineAccount is an account whose brand 1 sells every property and brand 2 property 2
// only, with property 1 priceable (100 a night, paid in full at booking).
func engineAccount(t *testing.T, s *server, prefix string) string {
	t.Helper()
	account := newAccount(prefix)
	settings := contract.Settings{AccountID: account, Version: 1, DefaultLeadSource: 3,
		Brands: []contract.Brand{{ID: 1, Name: "All", LeadSource: 5}, {ID: 2, Name: "Two", Properties: []int64{2}}}}.WithDefaults()
	data, err := json.Marshal(settings)
	if err != nil {
		t.Fatal(err)
	}
	v, err := events.Encode("/test", contract.SettingsUpdated, account, time.Now(), json.RawMessage(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.consumer.Apply(context.Background(), kafka.Message{Key: []byte(account + ":settings"), Value: v}); err != nil {
		t.Fatal(err)
	}
	priceable(t, s, account, 1)
	return account
}

func stayBody(brand, pid int, arrival time.Time, nights int, extra string) string {
	return fmt.Sprintf(`{"brand_id":%d,"property":%d,"arrival":%q,"departure":%q,"adults":2,"children":0,"lang":"en"%s}`, brand, pid,
		arrival.Format(time.DateOnly), arrival.AddDate(0, 0, nights).Format(time.DateOnly), extra)
}

const engineCard = `"card":{"number":"4242 4242 4242 4242","name":"Ada Lovelace","exp_month":12,"exp_year":2040,"cvc":"123"}`

// TestEngineRoutes: the booking engine's routes answer the public API's envelope: a quote
// whose lines add up, a checkout made once per Idempotency-Key, its guest, its confirm with
// the test gateway, its cancel, and every refusal with its code, status and field.
func TestEngineRoutes(t *testing.T) {
	var log syncBuffer
	s := newServerLogging(t, &log)
	account := engineAccount(t, s, "eng")
	arrival := time.Now().UTC().AddDate(0, 0, 30)
	stay := stayBody(1, 1, arrival, 3, "")

	q := s.engine(t, account, engineCall{path: "quote", body: stay})
	if q.code != http.StatusOK || q.data["currency"] != "USD" || q.data["nights"] != float64(3) || q.data["total"] != "300.00" ||
		q.data["due_now"] != "300.00" || q.data["property_id"] != float64(1) {
		t.Fatalf("quote: %d %s", q.code, q.body)
	}
	sum := decimal.Zero
	for _, l := range q.data["lines"].([]any) {
		line := l.(map[string]any)
		d, _ := decimal.NewFromString(line["amount"].(string))
		sum = sum.Add(d)
		if line["kind"] == "rent" && line["label"] != "Rent, 3 nights" {
			t.Fatalf("rent line %v", line)
		}
	}
	if sum.StringFixed(2) != q.data["total"] {
		t.Fatalf("lines add up to %s: %s", sum, q.body)
	}

	created := s.engine(t, account, engineCall{path: "checkout/create", body: stay, key: "k1", sandbox: true})
	if created.code != http.StatusCreated || created.data["status"] != "held" || created.data["guest"] != nil || created.data["booking"] != nil {
		t.Fatalf("create: %d %s", created.code, created.body)
	}
	id := created.data["id"].(string)
	pay := created.data["payment"].(map[string]any)
	if !booking.ValidCheckoutID(id) || pay["gateway"] != "test" || pay["amount"] != "300.00" || pay["currency"] != "USD" ||
		pay["client_secret"] != nil {
		t.Fatalf("checkout: %s", created.body)
	}
	if exp, err := time.Parse(time.RFC3339, created.data["expires_at"].(string)); err != nil || time.Until(exp) > booking.DefaultCheckoutWindow ||
		time.Until(exp) < booking.DefaultCheckoutWindow-time.Minute {
		t.Fatalf("expires_at %v: %v", created.data["expires_at"], err)
	}
	again := s.engine(t, account, engineCall{path: "checkout/create", body: stay, key: "k1", sandbox: true})
	if again.code != http.StatusCreated || again.data["id"] != id {
		t.Fatalf("the same key: %d %s", again.code, again.body)
	}
	ref := func(extra string) string { return fmt.Sprintf(`{"brand_id":1,"checkout_id":%q%s}`, id, extra) }
	guest := `,"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","phone":"+44 20 7946 0000","country":"gb","notes":"late arrival"`

	for _, c := range []struct {
		name         string
		account      string
		call         engineCall
		code         int
		errCode      string
		field        string
		msgHas       string
		retryAfterOK bool
	}{
		{"quote without a property", account, engineCall{path: "quote", body: `{"brand_id":1,"arrival":"2030-01-01","departure":"2030-01-03","adults":2}`},
			400, "bad_request", "property", "property: is required", false},
		{"quote departing before arriving", account, engineCall{path: "quote", body: `{"brand_id":1,"property":1,"arrival":"2030-01-05","departure":"2030-01-03","adults":2}`},
			400, "bad_request", "departure", "departure: must be after arrival", false},
		{"quote in a bad language", account, engineCall{path: "quote", body: stayBody(1, 1, arrival, 3, `,"lang":"!!"`)},
			400, "bad_request", "lang", "lang: ", false},
		{"quote of a property the brand does not sell", account, engineCall{path: "quote", body: stayBody(2, 1, arrival, 3, "")},
			404, "not_found", "property", "property: ", false},
		{"quote of held nights", account, engineCall{path: "quote", body: stayBody(1, 1, arrival.AddDate(0, 0, 1), 3, "")},
			409, "dates_taken", "", arrival.AddDate(0, 0, 1).Format(time.DateOnly), false},
		{"create without an Idempotency-Key", account, engineCall{path: "checkout/create", body: stay, sandbox: true},
			400, "bad_request", "Idempotency-Key", "Idempotency-Key: is required", false},
		{"the same key with another body", account, engineCall{path: "checkout/create", body: stayBody(1, 1, arrival, 4, ""), key: "k1", sandbox: true},
			422, "idempotency_key_reused", "", "", false},
		{"create over held nights", account, engineCall{path: "checkout/create", body: stayBody(1, 1, arrival.AddDate(0, 0, 2), 3, ""), key: "k2", sandbox: true},
			409, "dates_taken", "", "the night of " + arrival.AddDate(0, 0, 2).Format(time.DateOnly) + " is taken", false},
		{"get of an unknown checkout", account, engineCall{path: "checkout/get", body: `{"brand_id":1,"checkout_id":"co_00000000000000000000000000000000"}`},
			404, "not_found", "", "checkout does not exist", false},
		{"get of another account's checkout", newAccount("eng-other"), engineCall{path: "checkout/get", body: ref("")},
			404, "not_found", "", "", false},
		{"get through another brand", account, engineCall{path: "checkout/get", body: fmt.Sprintf(`{"brand_id":2,"checkout_id":%q}`, id)},
			404, "not_found", "", "", false},
		{"guest without a first name", account, engineCall{path: "checkout/guest", body: ref(strings.Replace(guest, `"first_name":"Ada",`, "", 1))},
			400, "bad_request", "first_name", "first_name: is required", false},
		{"guest with a bad email", account, engineCall{path: "checkout/guest", body: ref(strings.Replace(guest, "ada@example.com", "ada@", 1))},
			400, "bad_request", "email", "email: ", false},
		{"guest with a bad country", account, engineCall{path: "checkout/guest", body: ref(strings.Replace(guest, `"gb"`, `"UK"`, 1))},
			400, "bad_request", "country", "country: must be an ISO 3166-1 alpha-2 country code", false},
		{"confirm before the guest", account, engineCall{path: "checkout/confirm", body: ref("," + engineCard)},
			400, "bad_request", "guest", "guest: must be given", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := s.engine(t, c.account, c.call)
			if a.code != c.code || a.error["code"] != c.errCode || fmt.Sprint(a.error["field"]) != map[bool]string{true: "<nil>", false: c.field}[c.field == ""] ||
				!strings.HasPrefix(a.error["message"].(string), c.msgHas) && !strings.Contains(a.error["message"].(string), c.msgHas) {
				t.Fatalf("%d %s", a.code, a.body)
			}
		})
	}

	g := s.engine(t, account, engineCall{path: "checkout/guest", body: ref(guest)})
	if g.code != http.StatusOK || g.data["guest"].(map[string]any)["country"] != "GB" || g.data["guest"].(map[string]any)["notes"] != "late arrival" {
		t.Fatalf("guest: %d %s", g.code, g.body)
	}
	for _, c := range []struct {
		name    string
		body    string
		code    int
		errCode string
		field   string
	}{
		{"confirm without a card", ref(""), 400, "bad_request", "card"},
		{"confirm with a number that is no card's", ref(strings.Replace(","+engineCard, "4242 4242 4242 4242", "4242 4242 4242 4241", 1)), 400, "bad_request", "card.number"},
		{"confirm with an expired card", ref(strings.Replace(","+engineCard, "2040", "2020", 1)), 400, "bad_request", "card.exp_year"},
		{"confirm with a declined card", ref(strings.Replace(","+engineCard, "4242 4242 4242 4242", "4000000000000002", 1)), 402, "payment_declined", "card.number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := s.engine(t, account, engineCall{path: "checkout/confirm", body: c.body})
			if a.code != c.code || a.error["code"] != c.errCode || a.error["field"] != c.field {
				t.Fatalf("%d %s", a.code, a.body)
			}
		})
	}
	if n := len(s.gw.Charges()); n != 0 {
		t.Fatalf("%d charges before the confirm", n)
	}
	confirmed := s.engine(t, account, engineCall{path: "checkout/confirm", body: ref("," + engineCard)})
	if confirmed.code != http.StatusOK || confirmed.data["status"] != "booked" || confirmed.data["booking"] == nil {
		t.Fatalf("confirm: %d %s", confirmed.code, confirmed.body)
	}
	bid := int64(confirmed.data["booking"].(map[string]any)["id"].(float64))
	if again := s.engine(t, account, engineCall{path: "checkout/confirm", body: ref("," + engineCard)}); again.code != http.StatusOK ||
		fmt.Sprint(again.data["booking"]) != fmt.Sprint(map[string]any{"id": float64(bid)}) || len(s.gw.Charges()) != 1 {
		t.Fatalf("second confirm: %d %s, %d charges", again.code, again.body, len(s.gw.Charges()))
	}
	listed := s.listed(t, account, bid)
	if listed["leadsourceId"] != float64(5) || listed["brandId"] != float64(1) || listed["firstName"] != "Ada" {
		t.Fatalf("listbooking: %v", listed)
	}
	if pub := s.published(t, account, bid, 1); len(pub.Payments) != 1 || pub.Payments[0].Amount != "300.00" {
		t.Fatalf("published %+v", pub)
	}
	if c := s.engine(t, account, engineCall{path: "checkout/cancel", body: ref("")}); c.code != http.StatusConflict || c.error["code"] != "checkout_booked" {
		t.Fatalf("cancel of a booked checkout: %d %s", c.code, c.body)
	}

	// Cancel frees the nights at once; a cancelled checkout cannot be confirmed.
	other := s.engine(t, account, engineCall{path: "checkout/create", body: stayBody(1, 1, arrival.AddDate(0, 0, 10), 2, ""), key: "k3", sandbox: true})
	oref := fmt.Sprintf(`{"brand_id":1,"checkout_id":%q}`, other.data["id"])
	if c := s.engine(t, account, engineCall{path: "checkout/cancel", body: oref}); c.code != http.StatusOK || c.data["status"] != "cancelled" {
		t.Fatalf("cancel: %d %s", c.code, c.body)
	}
	if c := s.engine(t, account, engineCall{path: "checkout/confirm", body: oref}); c.code != http.StatusConflict || c.error["code"] != "checkout_expired" {
		t.Fatalf("confirm of a cancelled checkout: %d %s", c.code, c.body)
	}
	if q := s.engine(t, account, engineCall{path: "quote", body: stayBody(1, 1, arrival.AddDate(0, 0, 10), 2, "")}); q.code != http.StatusOK {
		t.Fatalf("quote of cancelled nights: %d %s", q.code, q.body)
	}

	// The card was used for its charge only: in no store, in no log line.
	for _, number := range []string{"4242424242424242", "4242 4242 4242 4242"} {
		if in := holding(t, nil, number); len(in) > 0 {
			t.Errorf("the card number is stored in %v", in)
		}
		if strings.Contains(log.String(), number) {
			t.Errorf("the card number is in the log:\n%s", log.String())
		}
	}
	if !strings.Contains(log.String(), `"msg":"request"`) {
		t.Fatalf("the log holds no request line: the test shows nothing")
	}

	// Unsigned: refused in the engine's envelope.
	req := httptest.NewRequest(http.MethodPost, "/internal/engine/quote", strings.NewReader(stay))
	resp, err := s.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), `"error":{"code":"unauthorized"`) {
		t.Fatalf("unsigned: %d %s", resp.StatusCode, body)
	}
}

// TestEngineCheckoutsOfTwoTenants: two accounts' guests book at once through the engine,
// each racing for one stay with ten checkouts and confirming the winner ten times: each
// account gets one booking, charged once, and never sees the other's checkout.
func TestEngineCheckoutsOfTwoTenants(t *testing.T) {
	s := newServer(t)
	arrival := time.Now().UTC().AddDate(0, 0, 20)
	accounts := []string{engineAccount(t, s, "engt-a"), engineAccount(t, s, "engt-b")}
	var mu sync.Mutex
	won := map[string][]string{}
	var wg sync.WaitGroup
	for _, a := range accounts {
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := s.engine(t, a, engineCall{path: "checkout/create", body: stayBody(1, 1, arrival.AddDate(0, 0, i%3), 3, ""),
					key: fmt.Sprintf("race-%d", i), sandbox: true})
				switch {
				case c.code == http.StatusCreated:
					mu.Lock()
					won[a] = append(won[a], c.data["id"].(string))
					mu.Unlock()
				case c.code != http.StatusConflict || c.error["code"] != "dates_taken":
					t.Errorf("%s: %d %s", a, c.code, c.body)
				}
			}()
		}
	}
	wg.Wait()
	for _, a := range accounts {
		if len(won[a]) != 1 {
			t.Fatalf("%s: %d checkouts hold", a, len(won[a]))
		}
		ref := fmt.Sprintf(`{"brand_id":1,"checkout_id":%q`, won[a][0])
		if g := s.engine(t, a, engineCall{path: "checkout/guest", body: ref + `,"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com"}`}); g.code != 200 {
			t.Fatalf("guest: %d %s", g.code, g.body)
		}
	}
	booked := map[string][]any{}
	for _, a := range accounts {
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				other := accounts[0]
				if other == a {
					other = accounts[1]
				}
				c := s.engine(t, a, engineCall{path: "checkout/confirm", body: fmt.Sprintf(`{"brand_id":1,"checkout_id":%q,%s}`, won[a][0], engineCard)})
				if c.code != http.StatusOK {
					t.Errorf("%s confirm: %d %s", a, c.code, c.body)
					return
				}
				mu.Lock()
				booked[a] = append(booked[a], c.data["booking"].(map[string]any)["id"])
				mu.Unlock()
				if g := s.engine(t, other, engineCall{path: "checkout/get", body: fmt.Sprintf(`{"brand_id":1,"checkout_id":%q}`, won[a][0])}); g.code != http.StatusNotFound {
					t.Errorf("%s sees %s's checkout: %d %s", other, a, g.code, g.body)
				}
			}()
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if n := len(s.gw.Charges()); n != 2 {
		t.Fatalf("%d charges for two checkouts", n)
	}
	for _, a := range accounts {
		for _, id := range booked[a] {
			if id != booked[a][0] {
				t.Fatalf("%s: confirms answered bookings %v", a, booked[a])
			}
		}
	}
	if booked[accounts[0]][0] == booked[accounts[1]][0] {
		t.Fatal("two accounts share a booking")
	}
}

// TestEngineLiveCheckout: a live account's checkout answers the PaymentIntent the browser
// confirms (the property's publishable key and the intent's client secret, never a secret
// key), books once Stripe (stripe-mock) says it succeeded, and shows the client secret no
// more; a property without Stripe holds nothing.
func TestEngineLiveCheckout(t *testing.T) {
	s := newServer(t)
	s.intents.set(&route.Router{Methods: stripeMethods{1: {SecretKey: "sk_test_enginevilla", PublishableKey: "pk_test_enginevilla"}},
		StripeURL: stripemock.Start(t, "succeeded", stripemock.IntentAmount(30000, "usd"))})
	t.Cleanup(func() { s.intents.set(nil) })
	account := engineAccount(t, s, "englive")
	priceable(t, s, account, 2)
	arrival := time.Now().UTC().AddDate(0, 0, 30)
	var answers []string
	call := func(c engineCall) engineAnswer {
		a := s.engine(t, account, c)
		answers = append(answers, string(a.body))
		return a
	}
	created := call(engineCall{path: "checkout/create", body: stayBody(1, 1, arrival, 3, ""), key: "live-1"})
	pay, _ := created.data["payment"].(map[string]any)
	if created.code != http.StatusCreated || pay["gateway"] != "stripe" || pay["publishable_key"] != "pk_test_enginevilla" ||
		pay["client_secret"] == "" || pay["client_secret"] == nil || pay["amount"] != "300.00" {
		t.Fatalf("create: %d %s", created.code, created.body)
	}
	ref := fmt.Sprintf(`{"brand_id":1,"checkout_id":%q}`, created.data["id"])
	if g := call(engineCall{path: "checkout/guest", body: strings.Replace(ref, "}", `,"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com"}`, 1)}); g.code != http.StatusOK {
		t.Fatalf("guest: %d %s", g.code, g.body)
	}
	confirmed := call(engineCall{path: "checkout/confirm", body: ref})
	if confirmed.code != http.StatusOK || confirmed.data["status"] != "booked" {
		t.Fatalf("confirm: %d %s", confirmed.code, confirmed.body)
	}
	if p := confirmed.data["payment"].(map[string]any); p["client_secret"] != nil || p["publishable_key"] != "pk_test_enginevilla" {
		t.Fatalf("a booked checkout's payment: %v", p)
	}
	if len(s.gw.Charges()) != 0 {
		t.Fatal("a live checkout reached the test gateway")
	}
	noStripe := call(engineCall{path: "checkout/create", body: stayBody(1, 2, arrival, 3, ""), key: "live-2"})
	if noStripe.code != http.StatusConflict || noStripe.error["code"] != "payments_not_set_up" || noStripe.error["field"] != "property" {
		t.Fatalf("a property without Stripe: %d %s", noStripe.code, noStripe.body)
	}
	if q := call(engineCall{path: "quote", body: stayBody(1, 2, arrival, 3, "")}); q.code != http.StatusOK {
		t.Fatalf("its nights are held: %d %s", q.code, q.body)
	}
	for _, a := range answers {
		if strings.Contains(a, "sk_test") {
			t.Fatalf("an answer holds a secret key: %s", a)
		}
	}
	if in := holding(t, nil, "sk_test_enginevilla"); len(in) > 0 {
		t.Fatalf("the secret key is stored in %v", in)
	}
}
