package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/stripemock"
)

// The guest booking engine end to end (docs/booking-engine.md): every request goes to edge's
// public booking API (/widget/api/v1/{owner_token}/…) as a browser on the brand's website
// sends it, with an Origin header, through http.DefaultClient (so every answer is checked
// against edge/openapi/booking-engine.yaml); edge forwards to catalog-svc and booking-svc.
// The engine's limits are off in this stack (stack.Options.Engine zero): TestEngineTenants
// sends many checkouts from one address.

// The card numbers the engine's tests pay with, drawn for this run (Luhn-valid, so the test
// gateway approves them; not one of its declined numbers): no vros log or store may hold
// them (TestEngineNoCardKept), so they must be found nowhere else.
var (
	engineCard     = luhnCard("4")
	engineLiveCard = luhnCard("5")
)

// clientSecretRE matches a Stripe PaymentIntent's client secret: no log line may hold one.
var clientSecretRE = regexp.MustCompile(`pi_[A-Za-z0-9]+_secret_[A-Za-z0-9]+`)

// luhnCard is a 16-digit card number starting with prefix, random, with its Luhn digit.
func luhnCard(prefix string) string {
	digits := []byte(prefix)
	for len(digits) < 15 {
		n, _ := rand.Int(rand.Reader, big.NewInt(10))
		digits = append(digits, byte('0'+n.Int64()))
	}
	sum := 0
	for i := range digits { // from the right, the check digit's neighbour doubled first
		d := int(digits[len(digits)-1-i] - '0')
		if i%2 == 0 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return string(digits) + strconv.Itoa((10-sum%10)%10)
}

// webSite is an account's brand as a website sees the booking API: its owner token and
// origin. Its answers are kept, for the secret scan.
type webSite struct {
	acc    account
	origin string
	brand  int
	props  []int

	mu      sync.Mutex
	answers []apitest.Response
}

// send sends a public API request with the site's origin (or origin, when given) and
// keeps the answer. It never fails t: goroutines use it.
func (s *webSite) send(method, path string, headers map[string]string, body string) (response, error) {
	h := map[string]string{"Origin": s.origin}
	for k, v := range headers {
		h[k] = v
	}
	r, err := apitest.Send(http.DefaultClient, method, st.EdgeURL+"/widget/api/v1/"+s.acc.OwnerToken+path, h, body)
	if err == nil {
		s.mu.Lock()
		s.answers = append(s.answers, r)
		s.mu.Unlock()
	}
	return response(r), err
}

func (s *webSite) call(t *testing.T, method, path string, headers map[string]string, body any) response {
	t.Helper()
	text := ""
	if body != nil {
		text = jsonText(body)
	}
	r, err := s.send(method, path, headers, text)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// engineQuote is the public API's Quote.
type engineQuote struct {
	PropertyID int64  `json:"property_id"`
	Arrival    string `json:"arrival"`
	Departure  string `json:"departure"`
	Nights     int    `json:"nights"`
	Currency   string `json:"currency"`
	Lines      []struct {
		Kind, Label string
		Amount      decimal.Decimal
	} `json:"lines"`
	Total    decimal.Decimal `json:"total"`
	DueNow   decimal.Decimal `json:"due_now"`
	Schedule []struct {
		DueDate string          `json:"due_date"`
		Amount  decimal.Decimal `json:"amount"`
	} `json:"schedule"`
}

// engineCheckout is the public API's Checkout.
type engineCheckout struct {
	ID         string      `json:"id"`
	Status     string      `json:"status"`
	ExpiresAt  time.Time   `json:"expires_at"`
	PropertyID int64       `json:"property_id"`
	Arrival    string      `json:"arrival"`
	Departure  string      `json:"departure"`
	Quote      engineQuote `json:"quote"`
	Guest      *struct {
		FirstName string `json:"first_name"`
	} `json:"guest"`
	Payment struct {
		Gateway        string          `json:"gateway"`
		Amount         decimal.Decimal `json:"amount"`
		Currency       string          `json:"currency"`
		PublishableKey string          `json:"publishable_key"`
		ClientSecret   string          `json:"client_secret"`
	} `json:"payment"`
	Booking *struct {
		ID int64 `json:"id"`
	} `json:"booking"`
}

// engineError is the public API's refusal.
type engineError struct {
	Error struct {
		Code, Field, Message string
	} `json:"error"`
}

// data decodes a success answer's data, asserting the status.
func (r response) data(t *testing.T, status int, v any) {
	t.Helper()
	r.status(t, status)
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	r.decode(t, &env)
	if err := json.Unmarshal(env.Data, v); err != nil {
		t.Fatalf("data of %s: %v", r.Body, err)
	}
}

// refusal asserts a refusal with status and code, and answers it.
func (r response) refusal(t *testing.T, status int, code string) engineError {
	t.Helper()
	r.status(t, status)
	var e engineError
	r.decode(t, &e)
	if e.Error.Code != code {
		t.Fatalf("code %q, want %q: %s", e.Error.Code, code, r.Body)
	}
	return e
}

// stay is a quote's or checkout's body: two adults, from day a to day d.
func stay(pid, a, d int) obj {
	return obj{"property": pid, "arrival": day(a), "departure": day(d), "adults": 2, "children": 0, "lang": "en"}
}

// guestBody is a checkout's guest.
func guestBody(last string) obj {
	return obj{"first_name": "Ada", "last_name": last, "email": "ada@example.com", "phone": "+44 20 7946 0000", "country": "GB",
		"notes": "Arriving late"}
}

// cardBody is a sandbox confirm's body.
func cardBody(number string) obj {
	return obj{"card": obj{"number": number, "name": "Ada Lovelace", "exp_month": 12, "exp_year": time.Now().Year() + 3, "cvc": "123"}}
}

// newKey is a fresh Idempotency-Key.
func newKey() map[string]string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return map[string]string{"Idempotency-Key": hex.EncodeToString(b[:])}
}

// newWebSite makes a brand of acc selling codes' properties (bookable, made here), allowed
// from origin, and waits until the booking API sells them: catalog-svc lists them on the
// site (its views and edge's origins are fed by events) and booking-svc quotes them (its
// view of the brands too).
func newWebSite(t *testing.T, acc account, origin string, codes ...string) *webSite {
	t.Helper()
	s := &webSite{acc: acc, origin: origin}
	for _, c := range codes {
		s.props = append(s.props, bookable(t, acc, c))
	}
	s.brand = brandID(t, acc, obj{"name": "Villas " + codes[0], "origins": []string{origin}, "properties": codes})
	eventually(t, "the booking API sells the brand's properties", func() bool {
		r, err := s.send(http.MethodGet, "/site?lang=en", nil, "")
		if err != nil || r.Code != http.StatusOK {
			return false
		}
		var site struct {
			Data struct {
				Brand struct {
					ID int `json:"id"`
				} `json:"brand"`
				Properties []struct {
					ID int `json:"id"`
				} `json:"properties"`
			} `json:"data"`
		}
		if json.Unmarshal(r.Body, &site) != nil || site.Data.Brand.ID != s.brand || len(site.Data.Properties) != len(s.props) {
			return false
		}
		for _, p := range site.Data.Properties {
			if !slices.Contains(s.props, p.ID) {
				t.Fatalf("site of brand %d lists property %d, not one of %v: %s", s.brand, p.ID, s.props, r.Body)
			}
		}
		q, err := s.send(http.MethodPost, "/quote", nil, jsonText(stay(s.props[0], 300, 301)))
		return err == nil && q.Code == http.StatusOK
	})
	return s
}

// secretsOf are what no answer of the public API may carry for acc: its credentials (key
// and pass, Basic credentials, service key and pass), the admin token, the stack's internal
// keys and encryption key, and extra (a Stripe secret key, a card number).
func secretsOf(acc account, extra ...string) map[string]string {
	out := map[string]string{
		"key": acc.Key, "pass": acc.Pass, "basic password": acc.BasicPassword,
		"basic credentials": acc.BasicUser + ":" + acc.BasicPassword,
		"basic header":      base64.StdEncoding.EncodeToString([]byte(acc.BasicUser + ":" + acc.BasicPassword)),
		"servicekey":        acc.ServiceKey, "servicepass": acc.ServicePass, "admin token": adminToken,
		"edge's internal key": internalKeys.Edge.Reveal(), "booking-svc's internal key": internalKeys.Booking.Reveal(),
		"integration-svc's internal key": internalKeys.Integration.Reveal(), "encryption key": encryptionKey,
	}
	for i, e := range extra {
		out["secret "+strconv.Itoa(i)] = e
	}
	return out
}

// scanSecrets fails t for every answer the site received that holds one of secrets, in
// its body or a header.
func (s *webSite) scanSecrets(t *testing.T, secrets map[string]string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.answers) == 0 {
		t.Fatal("no answer to scan")
	}
	for _, r := range s.answers {
		var head bytes.Buffer
		_ = r.Header.Write(&head)
		for name, v := range secrets {
			if len(v) < 8 {
				t.Fatalf("secret %s %q is too short to scan for", name, v)
			}
			if bytes.Contains(r.Body, []byte(v)) || bytes.Contains(head.Bytes(), []byte(v)) {
				t.Errorf("an answer of the booking API holds the %s: HTTP %d %s", name, r.Code, r.Body)
			}
		}
	}
	t.Logf("%d answers of the booking API hold none of %d secrets", len(s.answers), len(secrets))
}

// TestEngineEndToEnd: a sandbox account's website books through edge: the site lists the
// brand's property, the calendar shows its nights, a quote prices the stay (its lines add up
// to the total, due now and the schedule too), a checkout holds it (201), the same
// Idempotency-Key answers the same checkout and another body under it is refused, a second
// checkout of the same nights is dates_taken, the guest is taken, and a confirm with a test
// card books it: listbooking shows the booking with the website's lead source (1, Website),
// the brand and the payment of due now, and the calendar shows the nights taken. A wrong
// Origin is refused 403 without CORS headers and changes nothing (no checkout, no booking).
// No answer holds a secret of the account or the stack, or the card number.
func TestEngineEndToEnd(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	site := newWebSite(t, acc, "https://villas-e2e.example", "ENG1")
	pid := site.props[0]

	var cal struct {
		PropertyID int `json:"property_id"`
		Days       []struct {
			Date      string `json:"date"`
			Available bool   `json:"available"`
			Arrival   bool   `json:"arrival"`
		} `json:"days"`
	}
	calendar := func() map[string]bool {
		site.call(t, http.MethodGet, fmt.Sprintf("/calendar?property=%d&from=%s&months=1", pid, day(20)), nil, nil).data(t, http.StatusOK, &cal)
		free := map[string]bool{}
		for _, d := range cal.Days {
			free[d.Date] = d.Available
		}
		return free
	}
	if free := calendar(); cal.PropertyID != pid || !free[day(20)] || !free[day(21)] || !free[day(22)] {
		t.Fatalf("calendar before: %+v", cal)
	}

	var q engineQuote
	site.call(t, http.MethodPost, "/quote", nil, stay(pid, 20, 23)).data(t, http.StatusOK, &q)
	sum, later := decimal.Zero, decimal.Zero
	for _, l := range q.Lines {
		sum = sum.Add(l.Amount)
	}
	for _, s := range q.Schedule {
		later = later.Add(s.Amount)
	}
	if q.Nights != 3 || !q.Total.IsPositive() || !sum.Equal(q.Total) || !q.DueNow.Add(later).Equal(q.Total) {
		t.Fatalf("quote: %+v (lines add up to %s, due now and the schedule to %s)", q, sum, q.DueNow.Add(later))
	}

	// A wrong origin: refused before anything is held, with no CORS header.
	for _, origin := range []string{"https://evil.example", "http://villas-e2e.example", "https://villas-e2e.example:8443"} {
		r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/widget/api/v1/"+acc.OwnerToken+"/checkouts",
			map[string]string{"Origin": origin, "Idempotency-Key": "wrong-origin"}, jsonText(stay(pid, 20, 23)))
		if err != nil {
			t.Fatal(err)
		}
		response(r).refusal(t, http.StatusForbidden, "origin_not_allowed")
		if h := r.Header.Get("Access-Control-Allow-Origin"); h != "" {
			t.Errorf("Origin %s refused with Access-Control-Allow-Origin %q", origin, h)
		}
	}

	key := newKey()
	var co engineCheckout
	created := site.call(t, http.MethodPost, "/checkouts", key, stay(pid, 20, 23))
	created.data(t, http.StatusCreated, &co)
	if co.Status != "held" || !strings.HasPrefix(co.ID, "co_") || co.Payment.Gateway != "test" || !co.Payment.Amount.Equal(q.DueNow) ||
		co.Payment.Currency != q.Currency || co.Payment.ClientSecret != "" || co.Quote.Total.String() != q.Total.String() {
		t.Fatalf("checkout: %s (quote %+v)", created.Body, q)
	}
	if left := time.Until(co.ExpiresAt); left < 10*time.Minute || left > 16*time.Minute {
		t.Fatalf("expires_at %v: %v from now, want the 15 min window", co.ExpiresAt, left)
	}
	if h := created.Header.Get("Access-Control-Allow-Origin"); h != site.origin {
		t.Fatalf("Access-Control-Allow-Origin %q, want %q", h, site.origin)
	}
	// The same key: the same checkout, replayed; another body under it: refused.
	var again engineCheckout
	r := site.call(t, http.MethodPost, "/checkouts", key, stay(pid, 20, 23))
	r.data(t, http.StatusCreated, &again)
	if again.ID != co.ID || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("same Idempotency-Key: %s (replayed %q), want checkout %s", r.Body, r.Header.Get("Idempotent-Replayed"), co.ID)
	}
	site.call(t, http.MethodPost, "/checkouts", key, stay(pid, 24, 26)).refusal(t, http.StatusUnprocessableEntity, "idempotency_key_reused")
	// Another guest, the same nights (or one of them): taken.
	site.call(t, http.MethodPost, "/checkouts", newKey(), stay(pid, 22, 25)).refusal(t, http.StatusConflict, "dates_taken")
	site.call(t, http.MethodPost, "/quote", nil, stay(pid, 19, 21)).refusal(t, http.StatusConflict, "dates_taken")

	// A confirm from another origin changes nothing.
	if r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/widget/api/v1/"+acc.OwnerToken+"/checkouts/"+co.ID+"/confirm",
		map[string]string{"Origin": "https://evil.example"}, jsonText(cardBody(engineCard))); err != nil {
		t.Fatal(err)
	} else {
		response(r).refusal(t, http.StatusForbidden, "origin_not_allowed")
	}

	var withGuest engineCheckout
	site.call(t, http.MethodPost, "/checkouts/"+co.ID+"/guest", nil, guestBody("Engine")).data(t, http.StatusOK, &withGuest)
	if withGuest.Status != "held" || withGuest.Guest == nil || withGuest.Guest.FirstName != "Ada" {
		t.Fatalf("guest: %+v", withGuest)
	}
	var none struct {
		Total int `json:"totalRecords"`
	}
	acc.b(t, "listbooking", obj{"propertyId": pid}).ok(t, &none)
	if none.Total != 0 {
		t.Fatalf("a held checkout is listed: %d bookings", none.Total)
	}

	var booked engineCheckout
	site.call(t, http.MethodPost, "/checkouts/"+co.ID+"/confirm", nil, cardBody(engineCard)).data(t, http.StatusOK, &booked)
	if booked.Status != "booked" || booked.Booking == nil || booked.Booking.ID == 0 {
		t.Fatalf("confirm: %+v", booked)
	}
	var twice engineCheckout
	site.call(t, http.MethodPost, "/checkouts/"+co.ID+"/confirm", nil, cardBody(engineCard)).data(t, http.StatusOK, &twice)
	if twice.Booking == nil || twice.Booking.ID != booked.Booking.ID {
		t.Fatalf("a second confirm: %+v, want booking %d", twice, booked.Booking.ID)
	}

	var list struct {
		Total int `json:"totalRecords"`
		List  []struct {
			bookingData
			BrandID      int `json:"brandId"`
			LeadSourceID int `json:"leadsourceId"`
		} `json:"listBooking"`
	}
	acc.b(t, "listbooking", obj{"propertyId": pid}).ok(t, &list)
	if list.Total != 1 || len(list.List) != 1 {
		t.Fatalf("listbooking: %d bookings, want the one booked: %+v", list.Total, list.List)
	}
	b := list.List[0]
	if b.BookingID != booked.Booking.ID || b.Status != "reserved" || b.BrandID != site.brand || b.LeadSourceID != 1 ||
		b.Checkin[:10] != day(20) || b.Checkout[:10] != day(23) || !b.GrandTotal.Equal(q.Total) {
		t.Fatalf("booking %+v, want %d reserved from %s to %s, brand %d, lead source 1 (Website), total %s",
			b, booked.Booking.ID, day(20), day(23), site.brand, q.Total)
	}
	if len(b.Payments) != 1 || !b.Payments[0].Amount.Equal(q.DueNow) || b.Payments[0].Method != "card" {
		t.Fatalf("payments %+v, want one card payment of due now %s", b.Payments, q.DueNow)
	}
	eventually(t, "the calendar shows the booked nights taken", func() bool {
		free := calendar()
		return !free[day(20)] && !free[day(21)] && !free[day(22)] && free[day(23)]
	})
	site.scanSecrets(t, secretsOf(acc, engineCard))
}

// TestEngineScriptsHoldNoSecret: the widget's files edge serves (its four script names, the
// 365villas plugin's among them, and its own files) answer 200 as scripts and styles, and
// none holds an account's credentials or a secret of the stack.
func TestEngineScriptsHoldNoSecret(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	secrets := secretsOf(acc)
	for _, c := range []struct{ name, kind string }{
		{"vros-booking.js", "javascript"}, {"general-olb.js", "javascript"}, {"bcalendar.js", "javascript"},
		{"bcalendar-more.js", "javascript"}, {"engine.js", "javascript"}, {"engine.css", "text/css"},
	} {
		r := do(t, http.MethodGet, "/widget/"+c.name, nil, "")
		r.status(t, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); !strings.Contains(ct, c.kind) || len(r.Body) < 1000 {
			t.Errorf("/widget/%s: %s, %d bytes", c.name, ct, len(r.Body))
		}
		var head bytes.Buffer
		_ = r.Header.Write(&head)
		for what, v := range secrets {
			if bytes.Contains(r.Body, []byte(v)) || bytes.Contains(head.Bytes(), []byte(v)) {
				t.Errorf("/widget/%s holds the %s", c.name, what)
			}
		}
	}
}

// TestEngineConcurrentConfirms: twenty confirms of one checkout at once (a guest's double
// clicks and retries) book it once: every answer is the same booking, listbooking shows one
// booking with one payment.
func TestEngineConcurrentConfirms(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	site := newWebSite(t, acc, "https://villas-race.example", "ENG2")
	pid := site.props[0]
	var co engineCheckout
	site.call(t, http.MethodPost, "/checkouts", newKey(), stay(pid, 30, 33)).data(t, http.StatusCreated, &co)
	site.call(t, http.MethodPost, "/checkouts/"+co.ID+"/guest", nil, guestBody("Race")).status(t, http.StatusOK)

	const n = 20
	answers := make([]response, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i], errs[i] = site.send(http.MethodPost, "/checkouts/"+co.ID+"/confirm", nil, jsonText(cardBody(engineCard)))
		}()
	}
	close(start)
	wg.Wait()
	ids := map[int64]int{}
	for i, r := range answers {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		var c engineCheckout
		r.data(t, http.StatusOK, &c)
		if c.Status != "booked" || c.Booking == nil {
			t.Fatalf("confirm %d: %s", i, r.Body)
		}
		ids[c.Booking.ID]++
	}
	if len(ids) != 1 {
		t.Fatalf("%d confirms answered bookings %v, want one", n, ids)
	}
	var list struct {
		Total int           `json:"totalRecords"`
		List  []bookingData `json:"listBooking"`
	}
	acc.b(t, "listbooking", obj{"propertyId": pid}).ok(t, &list)
	if list.Total != 1 || len(list.List[0].Payments) != 1 {
		t.Fatalf("after %d confirms: %d bookings %+v, want one with one payment", n, list.Total, list.List)
	}
	site.scanSecrets(t, secretsOf(acc, engineCard))
}

// TestEngineTenants: two accounts whose websites share one origin run the whole flow at once,
// each from many goroutines (a stay each): every flow books, each account lists exactly its
// own bookings, and neither sees the other: a checkout id of one used with the other's owner
// token is not_found on every checkout route (and the checkout is untouched), a property of
// one only is not_found through the other's site, and each site lists its own properties.
func TestEngineTenants(t *testing.T) {
	t.Parallel()
	const origin = "https://shared-host.example"
	a, b := newAccount(t), newAccount(t)
	sites := []*webSite{
		newWebSite(t, a, origin, "TENA1", "TENA2"),
		newWebSite(t, b, origin, "TENB1"),
	}
	const flows = 6
	type result struct {
		site    int
		co      engineCheckout
		booking int64
	}
	results := make(chan result, 2*flows)
	failures := make(chan string, 4*flows)
	var wg sync.WaitGroup
	for si, s := range sites {
		for g := range flows {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fail := func(format string, args ...any) {
					failures <- fmt.Sprintf("site %d flow %d: ", si, g) + fmt.Sprintf(format, args...)
				}
				want := func(r response, err error, status int, v any) bool {
					if err != nil {
						fail("%v", err)
						return false
					}
					if r.Code != status {
						fail("HTTP %d, want %d: %s", r.Code, status, r.Body)
						return false
					}
					var env struct {
						Data json.RawMessage `json:"data"`
					}
					if json.Unmarshal(r.Body, &env) != nil || (v != nil && json.Unmarshal(env.Data, v) != nil) {
						fail("answer %s", r.Body)
						return false
					}
					return true
				}
				var site struct {
					Properties []struct {
						ID int `json:"id"`
					} `json:"properties"`
				}
				r, err := s.send(http.MethodGet, "/site", nil, "")
				if !want(r, err, http.StatusOK, &site) {
					return
				}
				for _, p := range site.Properties {
					if !slices.Contains(s.props, p.ID) {
						fail("the site lists property %d, not one of its own %v", p.ID, s.props)
					}
				}
				pid := s.props[g%len(s.props)]
				body := jsonText(stay(pid, 40+3*g, 42+3*g))
				if r, err = s.send(http.MethodPost, "/quote", nil, body); !want(r, err, http.StatusOK, nil) {
					return
				}
				var co engineCheckout
				if r, err = s.send(http.MethodPost, "/checkouts", newKey(), body); !want(r, err, http.StatusCreated, &co) {
					return
				}
				if r, err = s.send(http.MethodPost, "/checkouts/"+co.ID+"/guest", nil, jsonText(guestBody(fmt.Sprintf("Tenant%d", si)))); !want(r, err, http.StatusOK, nil) {
					return
				}
				var booked engineCheckout
				if r, err = s.send(http.MethodPost, "/checkouts/"+co.ID+"/confirm", nil, jsonText(cardBody(engineCard))); !want(r, err, http.StatusOK, &booked) {
					return
				}
				if booked.Booking == nil {
					fail("confirm: no booking")
					return
				}
				results <- result{si, co, booked.Booking.ID}
			}()
		}
	}
	wg.Wait()
	close(results)
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	if t.Failed() {
		t.FailNow()
	}
	booked := [2]map[int64]bool{{}, {}}
	var checkouts [2][]string
	for r := range results {
		booked[r.site][r.booking] = true
		checkouts[r.site] = append(checkouts[r.site], r.co.ID)
	}
	for si, s := range sites {
		var list struct {
			Total int           `json:"totalRecords"`
			List  []bookingData `json:"listBooking"`
		}
		s.acc.b(t, "listbooking", obj{"limit": 100}).ok(t, &list)
		if list.Total != flows || len(booked[si]) != flows {
			t.Errorf("account %d: %d bookings listed, %d booked, want %d", si, list.Total, len(booked[si]), flows)
		}
		for _, bk := range list.List {
			if !booked[si][bk.BookingID] || !slices.Contains(s.props, int(bk.PropertyID)) {
				t.Errorf("account %d lists booking %d of property %d, not one of its flows'", si, bk.BookingID, bk.PropertyID)
			}
		}
	}

	// Across: each site with the other's checkouts and properties.
	for si, s := range sites {
		other := sites[1-si]
		for _, id := range checkouts[1-si][:2] {
			for _, c := range []struct{ method, path, body string }{
				{http.MethodGet, "/checkouts/" + id, ""},
				{http.MethodPost, "/checkouts/" + id + "/guest", jsonText(guestBody("Intruder"))},
				{http.MethodPost, "/checkouts/" + id + "/confirm", jsonText(cardBody(engineCard))},
				{http.MethodPost, "/checkouts/" + id + "/cancel", ""},
			} {
				r, err := s.send(c.method, c.path, nil, c.body)
				if err != nil {
					t.Fatal(err)
				}
				r.refusal(t, http.StatusNotFound, "not_found")
			}
			var still engineCheckout
			other.call(t, http.MethodGet, "/checkouts/"+id, nil, nil).data(t, http.StatusOK, &still)
			if still.Status != "booked" || still.Guest == nil {
				t.Errorf("checkout %s after the other account's requests: %+v", id, still)
			}
		}
		for _, p := range other.props {
			if slices.Contains(s.props, p) {
				continue // the same id in both accounts: its own property
			}
			s.call(t, http.MethodPost, "/quote", nil, stay(p, 80, 82)).refusal(t, http.StatusNotFound, "not_found")
			s.call(t, http.MethodPost, "/checkouts", newKey(), stay(p, 80, 82)).refusal(t, http.StatusNotFound, "not_found")
			s.call(t, http.MethodGet, fmt.Sprintf("/calendar?property=%d", p), nil, nil).refusal(t, http.StatusNotFound, "not_found")
		}
	}
	for _, s := range sites {
		s.scanSecrets(t, secretsOf(s.acc, engineCard))
	}
}

// TestEngineStripe: a live account's website pays through Stripe (stripe-mock here, started
// with the PaymentIntent amount and currency of the stay's due now). The checkout holds a
// PaymentIntent: booking-svc asked Stripe, with the property's secret key, for due now in
// minor units and the quote's currency; the checkout shows gateway stripe, the property's
// publishable key and a client secret. The test confirms the intent at stripe-mock as
// Stripe.js would (a card PaymentMethod, then the intent's confirm: the card number goes to
// Stripe alone), then calls confirm: booked, booking-svc having read the intent back, and
// the payment recorded with due now.
func TestEngineStripe(t *testing.T) {
	t.Parallel()
	live, err := apitest.NewAccountOf(http.DefaultClient, st.EdgeURL, adminToken, "Live Engine Owner", false)
	if err != nil {
		t.Fatal(err)
	}
	acc := account{live}
	secret, publishable := "sk_test_engine"+randHex(12), "pk_test_engine"+randHex(12)
	site := newWebSite(t, acc, "https://villas-live.example", "LIVE1")
	pid := site.props[0]
	acc.a(t, "property-method", obj{"internal_code": "LIVE1", "stripe": obj{"secret_key": secret, "public_key": publishable}}).status(t, http.StatusOK)
	co, intent, mock := stripeCheckout(t, site, secret, pid, 20, 24)
	if co.Payment.Gateway != "stripe" || co.Payment.ClientSecret == "" || co.Payment.PublishableKey != publishable {
		t.Fatalf("checkout payment %+v, want stripe with the client secret and the publishable key %s", co.Payment, publishable)
	}
	site.call(t, http.MethodPost, "/checkouts/"+co.ID+"/guest", nil, guestBody("Stripe")).status(t, http.StatusOK)

	// The browser: Stripe.js turns the card into a PaymentMethod and confirms the intent.
	payAtStripe(t, mock, secret, intent, co.Payment.ClientSecret, engineLiveCard)

	var booked engineCheckout
	site.call(t, http.MethodPost, "/checkouts/"+co.ID+"/confirm", nil, obj{}).data(t, http.StatusOK, &booked)
	if booked.Status != "booked" || booked.Booking == nil {
		t.Fatalf("confirm: %+v", booked)
	}
	if booked.Payment.ClientSecret != "" {
		t.Errorf("a booked checkout still shows its client secret")
	}
	read := false
	for _, c := range stripes.calls(secret) {
		read = read || (c.Method == http.MethodGet && c.Path == "/v1/payment_intents/"+intent)
	}
	if !read {
		t.Errorf("booking-svc booked without reading the PaymentIntent back: %+v", stripes.calls(secret))
	}
	var list struct {
		List []bookingData `json:"listBooking"`
	}
	acc.b(t, "listbooking", obj{"bookingId": booked.Booking.ID}).ok(t, &list)
	if len(list.List) != 1 || len(list.List[0].Payments) != 1 || !list.List[0].Payments[0].Amount.Equal(co.Quote.DueNow) {
		t.Fatalf("booking %+v, want one payment of due now %s", list.List, co.Quote.DueNow)
	}
	site.scanSecrets(t, secretsOf(acc, secret, engineLiveCard))
}

// stripeCheckout quotes a stay, starts a stripe-mock whose PaymentIntents read back as its
// due now, routes secret's calls there, and creates the checkout. It answers the checkout,
// the PaymentIntent booking-svc made for it and the stripe-mock's URL, having checked the
// intent's amount and currency as booking-svc sent them.
func stripeCheckout(t *testing.T, site *webSite, secret string, pid, from, to int) (engineCheckout, string, string) {
	t.Helper()
	var q engineQuote
	site.call(t, http.MethodPost, "/quote", nil, stay(pid, from, to)).data(t, http.StatusOK, &q)
	minor := q.DueNow.Shift(2) // USD and EUR: 2 minor digits
	if !minor.IsInteger() || !minor.IsPositive() {
		t.Fatalf("due now %s %s", q.DueNow, q.Currency)
	}
	mock := stripemock.Start(t, "succeeded", stripemock.IntentAmount(minor.IntPart(), q.Currency))
	stripes.route(secret, mock)
	var co engineCheckout
	site.call(t, http.MethodPost, "/checkouts", newKey(), stay(pid, from, to)).data(t, http.StatusCreated, &co)
	var made []stripeCall
	for _, c := range stripes.calls(secret) {
		if c.Method == http.MethodPost && c.Path == "/v1/payment_intents" {
			made = append(made, c)
		}
	}
	if len(made) != 1 {
		t.Fatalf("%d PaymentIntents made for one checkout: %+v", len(made), made)
	}
	in := made[0]
	if in.Form.Get("amount") != strconv.FormatInt(minor.IntPart(), 10) || in.Form.Get("currency") != strings.ToLower(q.Currency) {
		t.Fatalf("PaymentIntent of amount %s %s, want due now %s %s in minor units (%d)", in.Form.Get("amount"), in.Form.Get("currency"),
			q.DueNow, q.Currency, minor.IntPart())
	}
	var pi struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(in.Answer, &pi); err != nil || !strings.HasPrefix(pi.ID, "pi_") {
		t.Fatalf("PaymentIntent answer %s", in.Answer)
	}
	return co, pi.ID, mock
}

// payAtStripe does what Stripe.js does for the widget's Pay: the card becomes a PaymentMethod
// (POST /v1/payment_methods, the number sent to Stripe alone) and the PaymentIntent is
// confirmed with it (POST /v1/payment_intents/{id}/confirm). Stripe.js authenticates with the
// publishable key and the client secret; stripe-mock takes secret keys only, so the test
// sends the secret key.
func payAtStripe(t *testing.T, mock, secret, intent, clientSecret, number string) {
	t.Helper()
	post := func(path string, form url.Values) []byte {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, mock+path, strings.NewReader(form.Encode()))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stripe-mock %s: HTTP %d %s", path, resp.StatusCode, b)
		}
		return b
	}
	var pm struct {
		ID string `json:"id"`
	}
	body := post("/v1/payment_methods", url.Values{"type": {"card"}, "card[number]": {number}, "card[exp_month]": {"12"},
		"card[exp_year]": {strconv.Itoa(time.Now().Year() + 3)}, "card[cvc]": {"123"}})
	if err := json.Unmarshal(body, &pm); err != nil || pm.ID == "" {
		t.Fatalf("payment method: %s", body)
	}
	var pi struct {
		Status string `json:"status"`
	}
	body = post("/v1/payment_intents/"+intent+"/confirm", url.Values{"payment_method": {pm.ID}})
	if err := json.Unmarshal(body, &pi); err != nil || pi.Status != "succeeded" {
		t.Fatalf("confirm at Stripe: %s", body)
	}
	_ = clientSecret // Stripe.js would send it with the publishable key; stripe-mock checks neither
}

// TestEngineNoCardKept: the card numbers of the engine's tests — a sandbox guest's, sent to
// confirm, and a live guest's, sent to Stripe alone — reach no vros log line and no document
// of any collection of any database; no log line holds a PaymentIntent's client secret or a
// Stripe secret key. It runs a sandbox and a live booking itself, so that it never scans
// before a card was used; the logs are every service's at debug level (serviceLogs).
func TestEngineNoCardKept(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	site := newWebSite(t, acc, "https://villas-nocard.example", "NOCARD1")
	var co engineCheckout
	site.call(t, http.MethodPost, "/checkouts", newKey(), stay(site.props[0], 50, 52)).data(t, http.StatusCreated, &co)
	site.call(t, http.MethodPost, "/checkouts/"+co.ID+"/guest", nil, guestBody("NoCard")).status(t, http.StatusOK)
	site.call(t, http.MethodPost, "/checkouts/"+co.ID+"/confirm", nil, cardBody(engineCard)).status(t, http.StatusOK)

	live, err := apitest.NewAccountOf(http.DefaultClient, st.EdgeURL, adminToken, "Live NoCard Owner", false)
	if err != nil {
		t.Fatal(err)
	}
	lacc := account{live}
	secret := "sk_test_nocard" + randHex(12)
	lsite := newWebSite(t, lacc, "https://villas-nocard-live.example", "NOCARD2")
	lacc.a(t, "property-method", obj{"internal_code": "NOCARD2", "stripe": obj{"secret_key": secret, "public_key": "pk_test_nocard"}}).status(t, http.StatusOK)
	lco, intent, mock := stripeCheckout(t, lsite, secret, lsite.props[0], 50, 52)
	lsite.call(t, http.MethodPost, "/checkouts/"+lco.ID+"/guest", nil, guestBody("NoCardLive")).status(t, http.StatusOK)
	payAtStripe(t, mock, secret, intent, lco.Payment.ClientSecret, engineLiveCard)
	lsite.call(t, http.MethodPost, "/checkouts/"+lco.ID+"/confirm", nil, obj{}).status(t, http.StatusOK)

	cards := map[string]string{"the sandbox guest's card number": engineCard, "the live guest's card number": engineLiveCard}
	// Every document of every database.
	ctx := context.Background()
	dbs, err := mongoDB.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	docs, vros := 0, 0
	for _, name := range dbs {
		if name == "admin" || name == "local" || name == "config" {
			continue
		}
		vros++
		db := mongoDB.Database(name)
		colls, err := db.ListCollectionNames(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range colls {
			cur, err := db.Collection(c).Find(ctx, bson.D{})
			if err != nil {
				t.Fatalf("%s.%s: %v", name, c, err)
			}
			for cur.Next(ctx) {
				docs++
				raw := []byte(cur.Current)
				for what, n := range cards {
					if bytes.Contains(raw, []byte(n)) {
						t.Errorf("%s is stored in %s.%s: %s", what, name, c, cur.Current)
					}
				}
			}
			if err := cur.Err(); err != nil {
				t.Fatalf("%s.%s: %v", name, c, err)
			}
			_ = cur.Close(ctx)
		}
	}
	if vros < 4 || docs == 0 {
		t.Fatalf("scanned %d documents of %d databases (%v)", docs, vros, dbs)
	}
	// Every log line so far: the engine's requests among them.
	lines, confirms, hits := serviceLogs.seen()
	for _, h := range hits {
		t.Error(h)
	}
	if confirms == 0 {
		t.Fatalf("%d log lines, none of booking-svc's confirm route: the scan reads no service's log", lines)
	}
	t.Logf("%d documents of %d databases and %d log lines (%d of booking-svc's confirms) hold no card number", docs, vros, lines, confirms)
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

// stripeCall is one request booking-svc sent to Stripe, and stripe-mock's answer.
type stripeCall struct {
	Method, Path, Key string
	Form              url.Values
	Answer            []byte
}

// stripeRoutes stands between booking-svc and stripe-mock (booking-svc's
// VROS_BOOKING_STRIPE_API_URL): it records every call, by the secret key it was made with,
// and sends the calls of a key a test routed to that test's stripe-mock (one started with
// the intent amount its checkout will ask), the others to the suite's.
type stripeRoutes struct {
	URL string

	srv  *httptest.Server
	def  string
	mu   sync.Mutex
	to   map[string]string
	seen map[string][]stripeCall
}

func newStripeRoutes(def string) *stripeRoutes {
	s := &stripeRoutes{def: def, to: map[string]string{}, seen: map[string][]stripeCall{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the proxy.
func (s *stripeRoutes) Close() { s.srv.Close() }

// route sends the calls made with secret key to upstream.
func (s *stripeRoutes) route(key, upstream string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.to[key] = upstream
}

// calls are the calls made with secret key so far.
func (s *stripeRoutes) calls(key string) []stripeCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen[key])
}

func (s *stripeRoutes) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	form, _ := url.ParseQuery(string(body))
	s.mu.Lock()
	upstream, ok := s.to[key]
	s.mu.Unlock()
	if !ok {
		upstream = s.def
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, upstream+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	s.mu.Lock()
	s.seen[key] = append(s.seen[key], stripeCall{Method: r.Method, Path: r.URL.Path, Key: key, Form: form, Answer: answer})
	s.mu.Unlock()
	for k, v := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

// logScan is the services' log (stack.Options.ServiceLog): it reads every line as it is
// written for the engine's card numbers, client secrets and Stripe secret keys (keeping the
// lines that hold one), counts the lines and booking-svc's confirms of a checkout, and
// passes the error lines on (to standard error, as the suite showed them before it read
// them).
type logScan struct {
	pass io.Writer

	mu       sync.Mutex
	lines    int
	confirms int
	hits     []string
}

func newLogScan(pass io.Writer) *logScan { return &logScan{pass: pass} }

// logNeedles are what no log line may hold.
var logNeedles = map[string]*regexp.Regexp{
	"a card number of the engine's tests": regexp.MustCompile(regexp.QuoteMeta(engineCard) + "|" + regexp.QuoteMeta(engineLiveCard)),
	"a PaymentIntent's client secret":     clientSecretRE,
	"a Stripe secret key":                 regexp.MustCompile(`[sr]k_(test|live)_[A-Za-z0-9]+`),
}

// Write takes one line: the services' JSON handlers write a line per call.
func (l *logScan) Write(p []byte) (int, error) {
	var hits []string
	for what, re := range logNeedles {
		if m := re.Find(p); m != nil {
			hits = append(hits, fmt.Sprintf("%s (%s) is logged: %s", what, m, bytes.TrimSpace(p)))
		}
	}
	confirm := bytes.Contains(p, []byte(`"service":"booking-svc"`)) && bytes.Contains(p, []byte(`"route":"/internal/engine/checkout/confirm"`))
	l.mu.Lock()
	l.lines++
	if confirm {
		l.confirms++
	}
	if len(l.hits) < 20 {
		l.hits = append(l.hits, hits...)
	}
	l.mu.Unlock()
	if bytes.Contains(p, []byte(`"level":"ERROR"`)) {
		_, _ = l.pass.Write(p)
	}
	return len(p), nil
}

// seen answers the lines read so far, booking-svc's confirms among them, and a message per
// line that holds a needle (the first 20).
func (l *logScan) seen() (lines, confirms int, hits []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines, l.confirms, slices.Clone(l.hits)
}
