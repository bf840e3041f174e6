package panel_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/edge/internal/panel"
	"github.com/vros/vros/edge/internal/panelauth"
	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
)

// services stands in for the services behind the gateway in the money pages' tests: it
// records each call the panel makes (interface, name, body) and answers it with what the
// test set for that name (and action), in the interface's envelope. Everything else of the
// panel is real: its users and accounts on the embedded database, its sessions, CSRF and
// rendering.
type services struct {
	mu      sync.Mutex
	calls   []sent
	answers map[string]reply
}

type sent struct {
	iface gateway.Interface
	name  string
	body  map[string]any
}

type reply struct {
	status int
	body   string
}

func (s *services) Call(_ context.Context, _ account.Caller, iface gateway.Interface, name string, body []byte, _ string) (gateway.Answer, error) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return gateway.Answer{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, sent{iface, name, m})
	key := name
	if a, ok := m["action"].(string); ok && iface == gateway.InterfaceA {
		key += " " + a
	}
	r, ok := s.answers[key]
	if !ok {
		r, ok = s.answers[name]
	}
	if !ok {
		return gateway.Answer{Status: 404, Body: []byte(`{"code":404,"error_type":"not_found","error_message":"not found"}`)}, nil
	}
	return gateway.Answer{Status: r.status, Body: []byte(r.body)}, nil
}

func (s *services) set(key string, status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[key] = reply{status, body}
}

// last is the body of the last call of name (and, for interface A, action), as JSON.
func (s *services) last(t *testing.T, name, action string) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.calls) - 1; i >= 0; i-- {
		c := s.calls[i]
		if c.name == name && (action == "" || c.body["action"] == action) {
			js, _ := json.Marshal(c.body)
			return string(js)
		}
	}
	t.Fatalf("no call of %s %s", name, action)
	return ""
}

// moneyPanel serves a panel on svc (and the statement links on links) and signs an owner in.
func moneyPanel(t *testing.T, svc *services, links func(ctx context.Context, path, requestID string) (gateway.Answer, error)) (*browser, string) {
	t.Helper()
	tel, err := telemetry.Setup(context.Background(), "panel-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: 25 << 20})
	p, err := panel.New(panel.Config{Users: users, Accounts: accounts, Gateway: svc, Failures: throttle.NewFailures(1, 100),
		Log: tel.Logger, Statements: links})
	if err != nil {
		t.Fatal(err)
	}
	p.Register(app)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		_ = app.Shutdown()
	})
	base := "http://" + ln.Addr().String()
	acc, _, err := accounts.Create(context.Background(), "money", false)
	if err != nil {
		t.Fatal(err)
	}
	email := newEmail("owner")
	if _, err := users.CreateUser(context.Background(), email, "", "a long password", panelauth.Owner, acc.ID); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(base, "192.0.2.150")
	if code := b.login(t, email, "a long password"); code != http.StatusSeeOther {
		t.Fatalf("sign in: HTTP %d", code)
	}
	return b, base
}

func wants(t *testing.T, what, page string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("%s lacks %s", what, w)
		}
	}
}

const cancelledBooking = `{"status":0,"data":{"totalRecords":1,"listBooking":[{"bookingId":7,"firstName":"Ada","lastName":"Lovelace",
"propertyId":3,"propertyName":"Sea view","checkin":"2027-07-01","checkout":"2027-07-08","createdDate":"2027-01-02 10:00:00",
"cancellationDate":"2027-06-01 09:00:00","currency":"EUR","grandTotal":"1000.00","damageDeposit":"300.00",
"payments":[{"paymentId":"3","amount":"450.00","currency":"EUR","method":"card","time":"2027-01-02 10:00:00"},
 {"paymentId":"9","amount":"-225.00","currency":"EUR","method":"card","kind":"refund","refund_of":3,"time":"2027-06-01 09:00:00"}],
"refund":{"status":"failed","policy":"moderate","percent":"50","policy_amount":"500.00","net_paid":"450.00","amount":"450.00",
 "refunded":"225.00","currency":"EUR","override":false,
 "parts":[{"of":3,"payment_id":9,"amount":"225.00","method":"card","status":"succeeded","attempts":1,"refund_id":"re_1"},
  {"refundOf":"2","paymentId":"10","amount":"225.00","method":"card","status":"failed","attempts":5,"lastError":"card_declined: <the bank said no>","nextAttemptAt":null}]},
"depositHold":{"status":"held","amount":"300.00","currency":"EUR","due_date":"2027-06-30","held_at":"2027-06-30T10:00:00Z",
 "authorization_id":"pi_hold_1","reauthorizations":1,"release_on":"2027-07-15"}}]}}`

// TestBookingMoneyPage: the booking page shows the refund (status, policy, amount, parts
// with their attempts and errors), a refund payment as such and the deposit hold; cancel
// sends the override, retry, capture and release send their interface B actions, and a
// refused capture shows the service's message at its field.
func TestBookingMoneyPage(t *testing.T) {
	svc := &services{answers: map[string]reply{}}
	svc.set("listbooking", 200, cancelledBooking)
	b, _ := moneyPanel(t, svc, nil)
	resp, page := b.do(t, http.MethodGet, "/panel/bookings/7", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("booking page: HTTP %d %.300s", resp.StatusCode, page)
	}
	wants(t, "the booking page", page, `<td class="refund-status"><strong>failed</strong>`, `moderate · 50 % refunded · 500.00 of the grand total`,
		`<td class="refund-amount"><strong>450.00</strong> EUR`, `<td class="refunded">225.00</td>`, `<tr data-part="2"><td>2</td><td>225.00</td><td>card</td><td class="part-status">failed</td><td>5</td>`,
		`card_declined: &lt;the bank said no&gt;`, `id="retry-refund"`, `<tr data-payment="9" class="refund"><td>9</td><td>-225.00 EUR</td>`,
		`Refund of payment 3 (card)`, `<td class="deposit-status"><strong>held</strong>`, `authorization pi_hold_1`, `Re-authorizations`,
		`id="capture-deposit"`, `id="release-deposit"`)
	if strings.Contains(page, `name="paymentId" value="9"`) {
		t.Error("a refund can be removed like a payment")
	}

	tok := b.token(t, "/panel/bookings/7")
	for _, tc := range []struct {
		path, action, want string
		form               url.Values
	}{
		{"/panel/bookings/7/refund/retry", "retryrefund", `{"bookingId":7}`, nil},
		{"/panel/bookings/7/deposit/capture", "capturedeposit", `{"amount":"120.50","bookingId":7,"reason":"Broken lamp"}`,
			url.Values{"captureAmount": {"120.50"}, "captureReason": {"Broken lamp"}}},
		{"/panel/bookings/7/deposit/release", "releasedeposit", `{"bookingId":7}`, nil},
		{"/panel/bookings/7/cancel", "cancel", `{"bookingId":7,"refundAmount":"100","refundReason":"Goodwill"}`,
			url.Values{"refundAmount": {"100"}, "refundReason": {"Goodwill"}}},
	} {
		svc.set(tc.action, 200, `{"status":0,"data":{}}`)
		f := url.Values{"_csrf": {tok}}
		for k, v := range tc.form {
			f[k] = v
		}
		resp, page := b.post(t, tc.path, f)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: HTTP %d %.300s", tc.path, resp.StatusCode, page)
		}
		if got := svc.last(t, tc.action, ""); got != tc.want {
			t.Errorf("%s sent %s, want %s", tc.action, got, tc.want)
		}
	}

	// A refused capture: the service's message at the form's own amount field.
	svc.set("capturedeposit", 200, `{"status":2,"message":"request has 1 invalid field","errors":[{"field":"amount","message":"must be at most 300.00, what is held"}]}`)
	_, page = b.post(t, "/panel/bookings/7/deposit/capture", url.Values{"_csrf": {tok}, "captureAmount": {"999"}, "captureReason": {"x"}})
	wants(t, "the refused capture", page, `<p class="error" id="f-captureAmount-err">must be at most 300.00, what is held</p>`,
		`name="captureAmount" type="number" value="999"`)
	if strings.Contains(page, `id="f-amount-err"`) {
		t.Error("the capture's violation is shown at the payment's amount too")
	}
	// A refused override: at the cancel form's field.
	svc.set("listbooking", 200, strings.Replace(cancelledBooking, `"cancellationDate":"2027-06-01 09:00:00"`, `"cancellationDate":null`, 1))
	svc.set("cancel", 200, `{"status":2,"message":"request has 1 invalid field","errors":[{"field":"refundAmount","message":"must be at most 450.00, what was paid"}]}`)
	_, page = b.post(t, "/panel/bookings/7/cancel", url.Values{"_csrf": {tok}, "refundAmount": {"500"}, "refundReason": {"x"}})
	wants(t, "the refused cancel", page, `<p class="error" id="f-refundAmount-err">must be at most 450.00, what was paid</p>`,
		`name="refundAmount" type="number" value="500"`, `name="refundReason" type="text" value="x"`)
}

// TestOwnerPages: the owners list (payout details as their summary), an owner made and a
// refused one with the service's message at its field; payouts; a property's agreements
// and expenses (with a receipt sent as base64, and read back).
func TestOwnerPages(t *testing.T) {
	svc := &services{answers: map[string]reply{}}
	b, _ := moneyPanel(t, svc, nil)
	svc.set("owner list", 200, `{"code":200,"data":{"owners":[{"owner_id":4,"name":"Maria <Rossi>","kind":"person","email":"m@example.com",
		"payout_set":true,"payout_summary":"IBAN •••• 4432"}],"total":1}}`)
	resp, page := b.do(t, http.MethodGet, "/panel/owners", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("owners: HTTP %d %.300s", resp.StatusCode, page)
	}
	wants(t, "the owners page", page, `Maria &lt;Rossi&gt;`, `<td class="payout">IBAN •••• 4432</td>`, `aria-current="page">Owners`)
	_, page = b.do(t, http.MethodGet, "/panel/owners?edit=4", "", nil)
	wants(t, "the owner's edit form", page, `name="owner[name]" type="text" value="Maria &lt;Rossi&gt;"`, `Now: <strong>IBAN •••• 4432</strong>`)
	if strings.Contains(page, "4432\"") {
		t.Error("payout details drawn into an input")
	}

	tok := b.token(t, "/panel/owners")
	svc.set("owner create", 200, `{"code":200,"data":{"owner_id":5}}`)
	resp, _ = b.post(t, "/panel/owners", url.Values{"_csrf": {tok}, "do": {"create"}, "owner[name]": {"Luca"}, "owner[kind]": {"company"},
		"owner[payout][method]": {"bank_transfer"}, "owner[payout][iban]": {"IT60X0542811101000000123456"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("create owner: HTTP %d", resp.StatusCode)
	}
	if got, want := svc.last(t, "owner", "create"), `{"action":"create","owner":{"address":"","email":"","kind":"company","language":"","name":"Luca","payout":{"iban":"IT60X0542811101000000123456","method":"bank_transfer"},"phone":"","tax_id":""}}`; got != want {
		t.Errorf("create owner sent %s, want %s", got, want)
	}
	svc.set("owner create", 400, `{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field","errors":[{"field":"owner.payout.iban","message":"must be a valid IBAN"}]}`)
	resp, page = b.post(t, "/panel/owners", url.Values{"_csrf": {tok}, "do": {"create"}, "owner[name]": {"Luca"}, "owner[kind]": {"person"},
		"owner[payout][method]": {"bank_transfer"}, "owner[payout][iban]": {"IT00"}})
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("refused owner: HTTP %d", resp.StatusCode)
	}
	wants(t, "the refused owner", page, `<p class="error" id="f-owner-payout-iban-err">must be a valid IBAN</p>`, `value="Luca"`)
	if strings.Contains(page, `value="IT00"`) {
		t.Error("typed payout details drawn back into the page")
	}
	svc.set("owner delete", 409, `{"code":409,"error_type":"conflict","error_message":"owner 4 has agreements: 2"}`)
	resp, page = b.post(t, "/panel/owners", url.Values{"_csrf": {tok}, "do": {"delete"}, "owner[owner_id]": {"4"}})
	if resp.StatusCode != http.StatusConflict || !strings.Contains(page, "owner 4 has agreements: 2") {
		t.Fatalf("refused delete: HTTP %d", resp.StatusCode)
	}

	// Payouts.
	svc.set("owner get", 200, `{"code":200,"data":{"owner_id":4,"name":"Maria","kind":"person","payout_set":false}}`)
	svc.set("owner-payout list", 200, `{"code":200,"data":{"payouts":[{"payout_id":8,"owner_id":4,"date":"2027-08-05","amount":"1200.00","currency":"EUR","method":"bank_transfer","reference":"AUG"}]}}`)
	_, page = b.do(t, http.MethodGet, "/panel/owners/4", "", nil)
	wants(t, "the owner's page", page, `<tr data-payout="8"><td>8</td><td>2027-08-05</td><td>1200.00 EUR</td>`, `payout details: not set`)
	if got := svc.last(t, "owner", "list"); got != `{"action":"list","limit":100}` {
		t.Errorf("owners listed with %s", got)
	}
	if got := svc.last(t, "owner-payout", "list"); got != `{"action":"list","limit":100,"owner_id":4}` {
		t.Errorf("payouts listed with %s", got)
	}
	svc.set("owner-payout create", 200, `{"code":200,"data":{"payout_id":9}}`)
	resp, _ = b.post(t, "/panel/owners/4", url.Values{"_csrf": {tok}, "do": {"create"}, "payout[date]": {"2027-09-05"}, "payout[amount]": {"99.10"},
		"payout[currency]": {"EUR"}, "payout[method]": {"paypal"}, "payout[reference]": {""}})
	if got := svc.last(t, "owner-payout", "create"); resp.StatusCode != http.StatusSeeOther ||
		got != `{"action":"create","payout":{"amount":"99.10","currency":"EUR","date":"2027-09-05","method":"paypal","owner_id":4}}` {
		t.Errorf("payout: HTTP %d, sent %s", resp.StatusCode, got)
	}
	svc.set("owner-payout create", 400, `{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field","errors":[{"field":"payout.amount","message":"must be greater than 0"}]}`)
	_, page = b.post(t, "/panel/owners/4", url.Values{"_csrf": {tok}, "do": {"create"}, "payout[amount]": {"0"}})
	wants(t, "the refused payout", page, `<p class="error" id="f-payout-amount-err">must be greater than 0</p>`)

	// Agreements of a property.
	svc.set("owner-agreement list", 200, `{"code":200,"data":{"agreements":[{"agreement_id":2,"internal_code":"V1","owner_id":4,"start_date":"2027-01-01",
		"commission_percent":"20","commission_basis":"components","commission_components":["rent","services"],"monthly_fees":[{"name":"Pool","amount":"50.00"}]}]}}`)
	_, page = b.do(t, http.MethodGet, "/panel/properties/V1/owner", "", nil)
	wants(t, "the agreements page", page, `<td>Maria &lt;Rossi&gt;</td><td>2027-01-01</td><td>open</td>`, `20 % of rent, services`, `Pool 50.00`,
		`aria-current="page">Owner`, `<option value="4" >Maria &lt;Rossi&gt;</option>`)
	if got := svc.last(t, "owner-agreement", "list"); got != `{"action":"list","internal_code":"V1","limit":100}` {
		t.Errorf("agreements listed with %s", got)
	}
	_, page = b.do(t, http.MethodGet, "/panel/properties/V1/owner?edit=2", "", nil)
	wants(t, "the agreement's edit form", page, `name="agreement[agreement_id]" value="2"`, `value="services" checked`, `value="Pool"`)
	svc.set("owner-agreement update", 200, `{"code":200,"data":{}}`)
	resp, _ = b.post(t, "/panel/properties/V1/owner", url.Values{"_csrf": {tok}, "do": {"save"}, "agreement[agreement_id]": {"2"}, "agreement[owner_id]": {"4"},
		"agreement[start_date]": {"2027-01-01"}, "agreement[commission_percent]": {"18.5"}, "agreement[commission_basis]": {"components"},
		"agreement[commission_components][]": {"rent", "taxes"}, "agreement[monthly_fees][0][name]": {""}, "agreement[monthly_fees][1][name]": {"Pool"},
		"agreement[monthly_fees][1][amount]": {"50"}})
	if got, want := svc.last(t, "owner-agreement", "update"), `{"action":"update","agreement":{"agreement_id":2,"commission_basis":"components","commission_components":["rent","taxes"],"commission_percent":"18.5","internal_code":"V1","monthly_fees":[{"amount":"50","name":"Pool"}],"owner_id":4,"start_date":"2027-01-01"}}`; resp.StatusCode != http.StatusSeeOther || got != want {
		t.Errorf("agreement: HTTP %d, sent %s, want %s", resp.StatusCode, got, want)
	}
	svc.set("owner-agreement create", 409, `{"code":409,"error_type":"conflict","error_message":"overlaps agreement 2","errors":[{"field":"agreement.start_date","message":"overlaps agreement 2 (2027-01-01 to open)"}]}`)
	resp, page = b.post(t, "/panel/properties/V1/owner", url.Values{"_csrf": {tok}, "do": {"save"}, "agreement[owner_id]": {"4"},
		"agreement[start_date]": {"2027-03-01"}, "agreement[commission_percent]": {"10"}, "agreement[commission_basis]": {"rent"}})
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("overlapping agreement: HTTP %d", resp.StatusCode)
	}
	wants(t, "the refused agreement", page, `<p class="error" id="f-agreement-start_date-err">overlaps agreement 2 (2027-01-01 to open)</p>`, `value="2027-03-01"`)
	resp, page = b.post(t, "/panel/properties/V1/owner", url.Values{"_csrf": {tok}, "do": {"save"}, "agreement[commission_basis]": {"components"}})
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("agreement without owner: HTTP %d", resp.StatusCode)
	}
	wants(t, "the agreement checked by the panel", page, `id="f-agreement-owner_id-err">choose an owner`, `tick at least one component`)

	// Expenses of a property: the month filter, a receipt sent as base64, read back.
	svc.set("owner-expense list", 200, `{"code":200,"data":{"expenses":[{"expense_id":11,"internal_code":"V1","date":"2027-08-03","amount":"80.00",
		"category":"cleaning","description":"Deep clean","borne_by":"owner","receipt":{"content_type":"image/png","size":68}}]}}`)
	_, page = b.do(t, http.MethodGet, "/panel/properties/V1/expenses?month=2027-08", "", nil)
	wants(t, "the expenses page", page, `<tr data-expense="11"><td>11</td><td>2027-08-03</td><td>cleaning</td>`,
		`href="/panel/properties/V1/expenses/11/receipt"`, `name="month" type="month" value="2027-08"`, `enctype="multipart/form-data"`)
	if got := svc.last(t, "owner-expense", "list"); got != `{"action":"list","from":"2027-08-01","internal_code":"V1","limit":100,"to":"2027-08-31"}` {
		t.Errorf("expenses listed with %s", got)
	}
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range map[string]string{"_csrf": tok, "do": "create", "expense[date]": "2027-08-04", "expense[amount]": "12.30",
		"expense[category]": "supplies", "expense[borne_by]": "manager", "expense[description]": "Soap"} {
		_ = mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("receipt", "r.png")
	_, _ = fw.Write(png)
	_ = mw.Close()
	svc.set("owner-expense create", 200, `{"code":200,"data":{"expense_id":12}}`)
	resp, page = b.do(t, http.MethodPost, "/panel/properties/V1/expenses", mw.FormDataContentType(), bytes.NewReader(body.Bytes()))
	want := fmt.Sprintf(`{"action":"create","expense":{"amount":"12.30","borne_by":"manager","category":"supplies","date":"2027-08-04","description":"Soap","internal_code":"V1","receipt":{"content_type":"image/png","data":"%s"}}}`,
		base64.StdEncoding.EncodeToString(png))
	if got := svc.last(t, "owner-expense", "create"); resp.StatusCode != http.StatusSeeOther || got != want {
		t.Fatalf("expense: HTTP %d %.200s, sent %s, want %s", resp.StatusCode, page, got, want)
	}
	svc.set("owner-expense create", 400, `{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field","errors":[{"field":"expense.receipt.content_type","message":"must be image/jpeg, image/png or application/pdf"}]}`)
	resp, page = b.do(t, http.MethodPost, "/panel/properties/V1/expenses", mw.FormDataContentType(), bytes.NewReader(body.Bytes()))
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("refused expense: HTTP %d", resp.StatusCode)
	}
	wants(t, "the refused expense", page, `<p class="error" id="f-receipt-err">must be image/jpeg, image/png or application/pdf</p>`, `value="Soap"`)
	svc.set("owner-expense receipt", 200, fmt.Sprintf(`{"code":200,"data":{"content_type":"image/png","data":"%s"}}`, base64.StdEncoding.EncodeToString(png)))
	resp, got := b.do(t, http.MethodGet, "/panel/properties/V1/expenses/11/receipt", "", nil)
	if resp.StatusCode != http.StatusOK || got != string(png) || resp.Header.Get("Content-Type") != "image/png" ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("receipt: HTTP %d %q %v", resp.StatusCode, resp.Header.Get("Content-Type"), got == string(png))
	}
}

const aStatement = `{"statement_id":"st_41","revision":2,"created_at":"2027-09-01T08:00:00Z","owner":{"owner_id":4,"name":"Maria <Rossi>"},
"currency":"EUR","from":"2027-08-01","to":"2027-08-31","opening_balance":"100.00",
"bookings":[{"booking_id":7,"property_id":3,"lines":[{"date":"2027-08-08","line":"rent","label":"Rent","amount":"900.00","entry_id":"e1"},
 {"date":"2027-08-08","line":"commission","label":"Commission 20 %","amount":"-180.00","entry_id":"e1"}],"net":"720.00"}],
"expenses":[{"date":"2027-08-03","line":"expense","label":"Cleaning: Deep clean","amount":"-80.00","entry_id":"e2"}],
"fees":[{"date":"2027-08-01","line":"fee","label":"Pool","amount":"-50.00","entry_id":"e3"}],
"payouts":[{"date":"2027-08-05","line":"payout","label":"Payout AUG","amount":"-500.00","entry_id":"e4"}],
"other":[],"totals":[{"line":"rent","amount":"900.00"},{"line":"channel_commission","amount":"0.00"}],"net":"90.00","closing_balance":"190.00",
"changes":[{"entry_id":"e4","date":"2027-08-05","line":"payout","label":"Payout AUG","amount":"-500.00"}]}`

// TestStatementPages: generate a statement for an owner and a month, see its lines,
// totals and changes, download it, and make the owner's link (shown once).
func TestStatementPages(t *testing.T) {
	svc := &services{answers: map[string]reply{}}
	b, _ := moneyPanel(t, svc, nil)
	svc.set("owner list", 200, `{"code":200,"data":{"owners":[{"owner_id":4,"name":"Maria"}]}}`)
	svc.set("owner-statement list", 200, `{"code":200,"data":{"statements":[{"statement_id":"st_41","owner_id":4,"currency":"EUR","from":"2027-08-01","to":"2027-08-31",
		"revision":2,"created_at":"2027-09-01T08:00:00Z"}]}}`)
	_, page := b.do(t, http.MethodGet, "/panel/statements?owner=4", "", nil)
	wants(t, "the statements page", page, `<option value="4" selected>Maria</option>`, `<tr data-statement="st_41"><td>Maria</td><td>2027-08-01 to 2027-08-31</td><td>EUR</td><td>2</td><td>2027-09-01T08:00:00Z</td>`,
		`aria-current="page">Statements`)
	tok := b.token(t, "/panel/statements")
	resp, page := b.post(t, "/panel/statements", url.Values{"_csrf": {tok}, "month": {"2027-13"}})
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("no owner: HTTP %d", resp.StatusCode)
	}
	wants(t, "the statement form checked", page, `id="f-statement-owner_id-err">choose an owner`, `id="f-month-err">must be a month YYYY-MM`)
	svc.set("owner-statement generate", 200, `{"code":200,"data":`+aStatement+`}`)
	resp, _ = b.post(t, "/panel/statements", url.Values{"_csrf": {tok}, "statement[owner_id]": {"4"}, "month": {"2027-02"}, "statement[currency]": {"eur"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/panel/statements/st_41" {
		t.Fatalf("generate: HTTP %d to %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got := svc.last(t, "owner-statement", "generate"); got != `{"action":"generate","statement":{"currency":"EUR","from":"2027-02-01","owner_id":4,"to":"2027-02-28"}}` {
		t.Errorf("generate sent %s", got)
	}
	svc.set("owner-statement generate", 400, `{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field","errors":[{"field":"statement.to","message":"must be on or after from"}]}`)
	_, page = b.post(t, "/panel/statements", url.Values{"_csrf": {tok}, "statement[owner_id]": {"4"}, "statement[from]": {"2027-02-10"}, "statement[to]": {"2027-02-01"}})
	wants(t, "the refused statement", page, `<p class="error" id="f-statement-to-err">must be on or after from</p>`)

	svc.set("owner-statement get", 200, `{"code":200,"data":`+aStatement+`}`)
	_, page = b.do(t, http.MethodGet, "/panel/statements/st_41", "", nil)
	wants(t, "the statement page", page, `for Maria &lt;Rossi&gt; · 2027-08-01 to 2027-08-31 · EUR · revision 2`, `<td id="net-due"><strong>190.00 EUR</strong>`,
		`<th scope="row">Commission 20 %</th><td>-180.00</td>`, `<strong>720.00</strong>`, `Cleaning: Deep clean`, `<th scope="row">Channel commission</th><td>0.00</td>`,
		`Changes since the previous revision`, `href="/panel/statements/st_41/statement.pdf"`, `id="statement-link"`)
	pdf := "%PDF-1.4 a statement"
	svc.set("owner-statement get", 200, fmt.Sprintf(`{"code":200,"data":{"file":"%s"}}`, base64.StdEncoding.EncodeToString([]byte(pdf))))
	resp, got := b.do(t, http.MethodGet, "/panel/statements/st_41/statement.pdf", "", nil)
	if resp.StatusCode != http.StatusOK || got != pdf || resp.Header.Get("Content-Type") != "application/pdf" ||
		!strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("pdf: HTTP %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), got)
	}
	if got := svc.last(t, "owner-statement", "get"); got != `{"action":"get","statement":{"format":"pdf","statement_id":"st_41"}}` {
		t.Errorf("the pdf asked with %s", got)
	}
	svc.set("owner-statement get", 200, `{"code":200,"data":`+aStatement+`}`)
	svc.set("owner-statement link", 200, `{"code":200,"data":{"url":"https://edge.example/statements/abcdefghijklmnopqrstuvwxyz012345","expires_at":"2027-12-01"}}`)
	resp, page = b.post(t, "/panel/statements/st_41/link", url.Values{"_csrf": {tok}})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("link: HTTP %d", resp.StatusCode)
	}
	wants(t, "the link's answer", page, `hx-history="false" id="owner-link"`, `https://edge.example/statements/abcdefghijklmnopqrstuvwxyz012345`)
	if _, page = b.do(t, http.MethodGet, "/panel/statements/st_41", "", nil); strings.Contains(page, "abcdefghijklmnopqrstuvwxyz012345") {
		t.Error("the owner's link is shown again")
	}
}

// TestPublicStatementPage: the owner's link opens the statement without signing in, with
// the panel's headers and links to its files; an unknown token is the not-found page,
// naming nothing of any account.
func TestPublicStatementPage(t *testing.T) {
	const good = "Z2Vvcmdlc3RhdGVtZW50dG9rZW4xMjM0NTY3ODkw"
	var mu sync.Mutex
	var asked []string
	links := func(_ context.Context, path, _ string) (gateway.Answer, error) {
		mu.Lock()
		asked = append(asked, path)
		mu.Unlock()
		switch path {
		case "/internal/statements/" + good:
			return gateway.Answer{Status: 200, Body: []byte(aStatement), ContentType: "application/json"}, nil
		case "/internal/statements/" + good + "?format=csv":
			return gateway.Answer{Status: 200, Body: []byte("line,amount\nrent,900.00\n"), ContentType: "text/csv"}, nil
		}
		return gateway.Answer{Status: 404, Body: []byte(`{"code":404,"error_message":"no such statement"}`)}, nil
	}
	svc := &services{answers: map[string]reply{}}
	_, base := moneyPanel(t, svc, links)
	anon := newBrowser(base, "192.0.2.151")
	resp, page := anon.do(t, http.MethodGet, "/statements/"+good, "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the link: HTTP %d %.300s", resp.StatusCode, page)
	}
	wants(t, "the public statement", page, `for Maria &lt;Rossi&gt;`, `<td id="net-due"><strong>190.00 EUR</strong>`, `Payout AUG`,
		`href="/statements/`+good+`/statement.pdf"`, `href="/statements/`+good+`/statement.csv"`)
	if strings.Contains(page, `name="_csrf"`) || strings.Contains(page, "Sign out") || strings.Contains(page, "statement-link") {
		t.Error("the public page carries the panel's forms")
	}
	for h, want := range map[string]string{"Content-Security-Policy": "default-src 'none'", "Cache-Control": "no-store", "X-Frame-Options": "DENY",
		"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
		if got := resp.Header.Get(h); !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	resp, csv := anon.do(t, http.MethodGet, "/statements/"+good+"/statement.csv", "", nil)
	if resp.StatusCode != http.StatusOK || csv != "line,amount\nrent,900.00\n" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") ||
		!strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("csv: HTTP %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), csv)
	}
	for _, path := range []string{"/statements/" + strings.ToLower(good), "/statements/short", "/statements/" + good + "/statement.exe",
		"/statements/" + strings.ToLower(good) + "/statement.pdf"} {
		resp, page := anon.do(t, http.MethodGet, path, "", nil)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(page, "This statement link is not valid") ||
			strings.Contains(page, "Maria") || strings.Contains(page, "/panel/\"") || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: HTTP %d %.300s", path, resp.StatusCode, page)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range asked {
		if strings.Contains(p, "short") || strings.Contains(p, ".exe") {
			t.Errorf("a malformed link was asked of booking-svc: %s", p)
		}
	}
}
