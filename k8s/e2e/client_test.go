//go:build e2e

package e2e

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The request shapes below follow ../shared/spec/vros-spec.md, docs/interface-b.md and the
// local end-to-end tests (systest/e2e, systest/apitest), which this module must not import.

// account is the data of POST /admin/v1/accounts: the tenant's id and its three credential
// kinds.
type account struct {
	AccountID     string `json:"account_id"`
	BasicUser     string `json:"basic_user"`
	BasicPassword string `json:"basic_password"`
	ServiceKey    string `json:"servicekey"`
	ServicePass   string `json:"servicepass"`
	Key           string `json:"key"`
	Pass          string `json:"pass"`
	OwnerToken    string `json:"owner_token"`
}

// interfaceA returns the headers of an interface A call: Basic credentials plus the service pair.
func (a account) interfaceA() http.Header {
	req, _ := http.NewRequest(http.MethodPost, "/", nil)
	req.SetBasicAuth(a.BasicUser, a.BasicPassword)
	h := http.Header{}
	h.Set("Authorization", req.Header.Get("Authorization"))
	h.Set("servicekey", a.ServiceKey)
	h.Set("servicepass", a.ServicePass)
	return h
}

// bBody is the JSON body of an interface B action: key, pass and action, plus fields. A
// retry under an Idempotency-Key must send these very bytes (another body is HTTP 422).
func (a account) bBody(action string, fields map[string]any) []byte {
	body := map[string]any{"key": a.Key, "pass": a.Pass, "action": action}
	for k, v := range fields {
		body[k] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		panic(fmt.Sprintf("interface B body of %s does not encode: %v", action, err))
	}
	return b
}

// composite is the `<user_id>_<property_id>` form getcalendar and getreservations take.
func (a account) composite(pid int) string { return a.AccountID + "_" + strconv.Itoa(pid) }

// validProperty is an A1 property inside every bound of the specification.
func validProperty(internalCode string) map[string]any {
	return map[string]any{
		"internal_code": internalCode,
		"name":          "Seaside villa with pool and garden",
		"type":          "Villa",
		"maxguest":      6,
		"bedrooms":      3,
		"bathrooms":     2,
		"kitchens":      1,
		"floor":         "Ground",
		"space":         map[string]any{"value": 180, "unit": "meters"},
		"phone":         "351210000000",
		"address":       "Rua do Mar 1",
		"city":          "Cascais",
		"state":         "Lisboa",
		"postcode":      "2750-001",
		"country":       "PT",
		"latitude":      38.6979,
		"longitude":     -9.4215,
		"allowchildren": true,
		"allowpet":      false,
		"allowsmoking":  false,
	}
}

// rates is an A4 body: dailyPrice every night (no weekend price, no surcharge, no tax), any
// stay of a night or more, bookable from today up to 12 months ahead. A one-night quote is
// then exactly dailyPrice, which is what the scenarios read back.
func rates(internalCode string, dailyPrice int) map[string]any {
	return map[string]any{"internal_code": internalCode,
		"rate":    map[string]any{"daily_price": dailyPrice, "minimum_stay": 1},
		"setting": map[string]any{"standard_occupants": 6, "accept_booking_upto": 12, "advanced_notice_booking_from": "0"}}
}

// guest is a B1 create body for one stay; email tells the scenarios' attempts apart.
func guest(pid int, checkin, checkout, email string) map[string]any {
	return map[string]any{"propertyId": pid, "firstName": "Ada", "lastName": "Lovelace", "email": email,
		"numberofadults": 2, "leadsourceId": 1, "checkin": checkin, "checkout": checkout}
}

// day is the date n days from today (UTC), as YYYY-MM-DD.
func day(n int) string { return time.Now().UTC().AddDate(0, 0, n).Format(time.DateOnly) }

// client talks to edge (or, with signed headers, to one service pod). Its methods that
// return an error instead of failing the test are safe from any goroutine.
type client struct {
	base string
	http *http.Client
}

// newClient is an ordinary keep-alive HTTP client, as an integrator would use.
func newClient(base string) *client {
	return &client{base: base, http: &http.Client{Timeout: 30 * time.Second}}
}

// answer is an HTTP answer, read whole.
type answer struct {
	code   int
	header http.Header
	body   []byte
}

// send sends body (JSON) and reads the whole answer.
func (c *client) send(method, path string, header http.Header, body []byte) (answer, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return answer{}, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	return answer{code: resp.StatusCode, header: resp.Header, body: b}, nil
}

// a sends an interface A request (POST /api/{resource}).
func (c *client) a(acc account, resource string, body any) (answer, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return answer{}, err
	}
	return c.send(http.MethodPost, "/api/"+resource, acc.interfaceA(), b)
}

// b sends an interface B action body (POST /vros/external-booking).
func (c *client) b(body []byte, header http.Header) (answer, error) {
	return c.send(http.MethodPost, "/vros/external-booking", header, body)
}

// bEnvelope is interface B's answer: {status, message, data}.
type bEnvelope struct {
	Status  int             `json:"status"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// envelope decodes an interface B answer; status -1 when the body is not one.
func (a answer) envelope() bEnvelope {
	e := bEnvelope{Status: -1}
	if err := json.Unmarshal(a.body, &e); err != nil {
		e.Status = -1
	}
	return e
}

// bOK reports an interface B success (HTTP 200, status 0) and decodes data into v.
func (a answer) bOK(v any) bool {
	e := a.envelope()
	if a.code != http.StatusOK || e.Status != 0 {
		return false
	}
	return v == nil || json.Unmarshal(e.Data, v) == nil
}

// aOK reports an interface A success: HTTP 200 and code 200.
func (a answer) aOK() bool {
	var e struct {
		Code int `json:"code"`
	}
	return a.code == http.StatusOK && json.Unmarshal(a.body, &e) == nil && e.Code == 200
}

// failure describes a request that failed the way a rollout, a dead pod or an outage makes
// requests fail: no answer at all (connection refused or reset, timeout), or a 5xx (edge
// answers 503 when the service behind it is unreachable). "" for any other answer.
func failure(a answer, err error) string {
	switch {
	case err != nil:
		return "transport: " + err.Error()
	case a.code >= 500:
		return fmt.Sprintf("HTTP %d: %s", a.code, short(a.body))
	}
	return ""
}

func (a answer) String() string { return fmt.Sprintf("HTTP %d: %s", a.code, short(a.body)) }

// short trims a body for a message.
func short(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// do sends a request from the test's goroutine, failing the test when there is no answer.
func (c *client) do(t *testing.T, method, path string, header http.Header, body any) (int, []byte) {
	t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	a, err := c.send(method, path, header, b)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return a.code, a.body
}

// eventually retries until the path answers want: the NodePort and readiness take a moment.
func (c *client) eventually(t *testing.T, method, path string, want int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		a, err := c.send(method, path, nil, nil)
		if err == nil && a.code == want {
			return
		}
		if err != nil {
			last = err.Error()
		} else {
			last = a.String()
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("%s %s never answered %d within %s; last: %s", method, path, want, within, last)
}

// newAccount creates a sandbox account through edge's admin API (card payments reach only
// the test gateway).
func (c *client) newAccount(t *testing.T, adminToken, name string) account {
	t.Helper()
	status, body := c.do(t, http.MethodPost, "/admin/v1/accounts",
		http.Header{"Authorization": {"Bearer " + adminToken}}, map[string]any{"name": name, "sandbox": true})
	if status != http.StatusCreated {
		t.Fatalf("create account: status %d: %s, want 201", status, body)
	}
	var created struct {
		Data account `json:"data"`
	}
	if err := json.Unmarshal(body, &created); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	a := created.Data
	if a.AccountID == "" || a.BasicUser == "" || a.BasicPassword == "" || a.ServiceKey == "" || a.ServicePass == "" ||
		a.Key == "" || a.Pass == "" || a.OwnerToken == "" {
		t.Fatalf("account lacks credentials: %s", body)
	}
	return a
}

// newProperty creates a property with rates(dailyPrice) through interface A and waits until
// booking-svc prices it: its view is fed by events, and until then getinfo answers status 16
// (docs/booking.md, "The pricing view"). Returns the property id.
func (c *client) newProperty(t *testing.T, acc account, code string, dailyPrice int) int {
	t.Helper()
	a, err := c.a(acc, "property", map[string]any{"action": "create", "property": validProperty(code)})
	if err != nil || !a.aOK() {
		t.Fatalf("create property %s: %v %v", code, err, a)
	}
	var created struct {
		Data struct {
			PropertyID string `json:"property_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(a.body, &created); err != nil {
		t.Fatalf("create property %s: %s: %v", code, a.body, err)
	}
	pid, err := strconv.Atoi(created.Data.PropertyID)
	if err != nil || pid <= 0 {
		t.Fatalf("create property %s: property_id %q", code, created.Data.PropertyID)
	}
	if a, err := c.a(acc, "property-rate", rates(code, dailyPrice)); err != nil || !a.aOK() {
		t.Fatalf("rates of %s: %v %v", code, err, a)
	}
	// Several answers in a row: with more than one booking-svc replica behind edge, one
	// replica's success says little about the other's.
	deadline := time.Now().Add(2 * time.Minute)
	quote := acc.bBody("getinfo", map[string]any{"propertyId": pid, "numberofadults": 2, "checkin": day(300), "checkout": day(301)})
	for inRow := 0; inRow < 5; {
		a, err := c.b(quote, nil)
		if err == nil && a.bOK(nil) {
			inRow++
			continue
		}
		inRow = 0
		if time.Now().After(deadline) {
			t.Fatalf("property %s (%d) never became bookable: %v %v", code, pid, err, a)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return pid
}

// booking is the part of a B2 booking object the scenarios read.
type booking struct {
	BookingID        int64   `json:"bookingId"`
	Status           string  `json:"status"`
	PropertyID       int64   `json:"propertyId"`
	Email            string  `json:"email"`
	Checkin          string  `json:"checkin"` // YYYY-MM-DD HH:MM:SS
	Checkout         string  `json:"checkout"`
	CancellationDate *string `json:"cancellationDate"`
}

// stay is the booking's dates, YYYY-MM-DD.
func (b booking) stay() (checkin, checkout string) { return dateOnly(b.Checkin), dateOnly(b.Checkout) }

func dateOnly(s string) string {
	if len(s) >= len(time.DateOnly) {
		return s[:len(time.DateOnly)]
	}
	return s
}

// nights are the nights a stay holds: [checkin, checkout).
func nights(checkin, checkout string) []string {
	from, err1 := time.Parse(time.DateOnly, checkin)
	to, err2 := time.Parse(time.DateOnly, checkout)
	if err1 != nil || err2 != nil {
		return nil
	}
	var out []string
	for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
		out = append(out, d.Format(time.DateOnly))
	}
	return out
}

// listBookings reads every booking of a property with listbooking, a page (the maximum,
// 100) at a time; bookings are listed newest first, so the pages are stable while nothing is
// booked.
func (c *client) listBookings(acc account, pid int) ([]booking, error) {
	var all []booking
	for page := 1; ; page++ {
		a, err := c.b(acc.bBody("listbooking", map[string]any{"propertyId": pid, "page": page, "limit": 100}), nil)
		if err != nil {
			return nil, err
		}
		var data struct {
			Total int       `json:"totalRecords"`
			List  []booking `json:"listBooking"`
		}
		if !a.bOK(&data) {
			return nil, fmt.Errorf("listbooking property %d page %d: %v", pid, page, a)
		}
		all = append(all, data.List...)
		if len(data.List) == 0 || len(all) >= data.Total {
			return all, nil
		}
	}
}

// signedB sends an interface B action straight to one service pod (base is a port-forward),
// with the tenant context edge would add (libs/tenancy, reimplemented: this module does not
// depend on libs; docs/internal-auth.md): X-Vros-Caller edge, X-Vros-Account, X-Vros-Time,
// a random X-Vros-Nonce and X-Vros-Signature, the hex HMAC-SHA256 under edge's key of the
// lines scheme, caller, account, mode, max properties, time, nonce, method, path, query and
// the body's hex SHA-256, each ended by a newline. The body is the one edge forwards,
// credentials included.
func (c *client) signedB(edgeKey string, acc account, action string, fields map[string]any) (answer, error) {
	path := "/internal/b/" + action
	body := acc.bBody(action, fields)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	var n [16]byte
	if _, err := rand.Read(n[:]); err != nil {
		return answer{}, err
	}
	nonce := hex.EncodeToString(n[:])
	h := http.Header{}
	h.Set("X-Vros-Caller", "edge")
	h.Set("X-Vros-Account", acc.AccountID)
	h.Set("X-Vros-Time", ts)
	h.Set("X-Vros-Nonce", nonce)
	h.Set("X-Vros-Signature", edgeSignature(edgeKey, acc.AccountID, ts, nonce, http.MethodPost, path, body))
	return c.send(http.MethodPost, path, h, body)
}

// edgeSignature is libs/tenancy's signature of a live account's request without a query,
// signed as edge. libs/tenancy's TestSignatureIsStable holds the vector both must agree on:
// key "golden-key-0123456789", account acc1, time 1800000000, nonce
// 6848dec0d11952d5668bb588a4b6a216, POST /internal/b/getinfo, body {"action":"getinfo"}:
// 2e7c1a0dcaddccab2f067e9a5fb62a5a3f92ec19831962bf9ab5ac802a3c8f68.
func edgeSignature(key, account, ts, nonce, method, path string, body []byte) string {
	sum := sha256.Sum256(body)
	mac := hmac.New(sha256.New, []byte(key))
	for _, line := range []string{"vros-internal-2", "edge", account, "", "0", ts, nonce, method, path, "", hex.EncodeToString(sum[:])} {
		mac.Write([]byte(line + "\n"))
	}
	return hex.EncodeToString(mac.Sum(nil))
}

// pacer spaces the requests of all clients of a scenario: edge limits each account to
// edge.rateLimit (50 requests/s, burst 100, per replica) and answers 429 beyond it, which
// is not what the scenarios measure.
type pacer struct{ tick *time.Ticker }

func newPacer(perSecond int) *pacer {
	return &pacer{tick: time.NewTicker(time.Second / time.Duration(perSecond))}
}

// wait blocks until the next request may go. Call stop only once every client is done.
func (p *pacer) wait() { <-p.tick.C }
func (p *pacer) stop() { p.tick.Stop() }

// durations summarises lags and other durations.
type durations []time.Duration

func (d durations) sorted() durations {
	s := append(durations(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

func (d durations) max() time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d.sorted()[len(d)-1]
}

// p50 is the median (the lower middle of an even count).
func (d durations) p50() time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d.sorted()[(len(d)-1)/2]
}

// ms rounds a duration to milliseconds for the reports.
func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

// secs formats a duration in seconds with one decimal for the reports.
func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s" }
