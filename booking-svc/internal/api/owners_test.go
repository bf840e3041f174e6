package api

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/journal"
	"github.com/vros/vros/booking-svc/internal/owners"
	"github.com/vros/vros/booking-svc/internal/owners/ownerstore"
	"github.com/vros/vros/booking-svc/internal/propertyview"
	"github.com/vros/vros/booking-svc/internal/store"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
)

// touches records the sources the owners domain touches, as the journal would sync them.
type touches struct {
	mu  sync.Mutex
	got []string
}

func (t *touches) Mark(context.Context, string, string) error { return nil }

func (t *touches) Touch(_ context.Context, account, source string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.got = append(t.got, account+"|"+source)
	return nil
}

func (t *touches) count(account, source string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, g := range t.got {
		if g == account+"|"+source {
			n++
		}
	}
	return n
}

// ownersServer is a booking-svc API serving the owner resources over the test database, with
// its own owners service (a clock tests set) and the touches it makes.
type ownersServer struct {
	*server
	books   *owners.Service
	records *ownerstore.Store
	touched *touches
	clock   time.Time
	mu      sync.Mutex
}

func newOwnersServer(t *testing.T) *ownersServer {
	t.Helper()
	s := &ownersServer{server: newServer(t), touched: &touches{}, clock: time.Date(2027, 3, 15, 10, 0, 0, 0, time.UTC)}
	var err error
	if s.records, err = ownerstore.New(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	s.books = owners.New(s.records, propertyview.NewReader(s.vw), s.box)
	s.books.SetJournal(s.touched)
	s.books.SetClock(func() time.Time { s.mu.Lock(); defer s.mu.Unlock(); return s.clock })
	// The routes again, with the owner resources (newServer's app serves the rest).
	tel, err := telemetry.Setup(context.Background(), "booking-owners-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	s.app = httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: 9 << 20})
	routes := New(s.svc, s.feeds, booking.NewUsers(s.st, 4), s.keys)
	routes.RefuseErased(s.marks.Known)
	routes.SetOwners(s.books)
	routes.Register(s.app, tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerEdge, Key: testKey}))
	return s
}

// call posts body to /internal/a/<resource> for account and answers the status and data (or
// the whole error answer).
func (s *ownersServer) call(t *testing.T, account, resource, body string) (int, map[string]any) {
	t.Helper()
	code, out := s.do(t, account, http.MethodPost, "/internal/a/"+resource, body)
	var ans map[string]any
	if err := json.Unmarshal(out, &ans); err != nil {
		t.Fatalf("%s %s: answer %q: %v", resource, body, out, err)
	}
	if code == 200 {
		data, _ := ans["data"].(map[string]any)
		return code, data
	}
	return code, ans
}

// must is call expecting 200.
func (s *ownersServer) must(t *testing.T, account, resource, body string) map[string]any {
	t.Helper()
	code, data := s.call(t, account, resource, body)
	if code != 200 {
		t.Fatalf("%s %s: %d %v", resource, body, code, data)
	}
	return data
}

func idOf(t *testing.T, m map[string]any, name string) int64 {
	t.Helper()
	f, ok := m[name].(float64)
	if !ok {
		t.Fatalf("no %s in %v", name, m)
	}
	return int64(f)
}

// accountCurrency applies account settings with a currency to the view.
func accountCurrency(t *testing.T, s *server, account, code string) {
	t.Helper()
	data := fmt.Sprintf(`{"account_id":%q,"version":1,"currency":%q,"timezone":"UTC","languages":["en"]}`, account, code)
	v, err := events.Encode("/test", contract.SettingsUpdated, account, time.Now(), json.RawMessage(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.consumer.Apply(context.Background(), kafka.Message{Key: []byte(account + ":settings"), Value: v}); err != nil {
		t.Fatal(err)
	}
}

// ownersAccount is a new account with properties P1 and P2 (EUR).
func (s *ownersServer) ownersAccount(t *testing.T) string {
	t.Helper()
	acct := newAccount("own")
	accountCurrency(t, s.server, acct, "EUR")
	priceable(t, s.server, acct, 1)
	priceable(t, s.server, acct, 2)
	return acct
}

const (
	testIBAN   = "DE89 3704 0044 0532 0130 00"
	testHolder = "Hieronymus Quellbrunn"
)

var (
	pngBytes  = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{7}, 64)...)
	jpegBytes = append([]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), bytes.Repeat([]byte{9}, 64)...)
	pdfBytes  = []byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestOwnerFieldRules: every field rule of the four resources, each a 400 naming the JSON
// path and the rule.
func TestOwnerFieldRules(t *testing.T) {
	s := newOwnersServer(t)
	acct := s.ownersAccount(t)
	long := func(n int) string { return strings.Repeat("x", n) }
	big := b64(append(slices.Clone(pngBytes), make([]byte, owners.MaxReceipt)...))
	cases := []struct {
		name, resource, body, field, message string
	}{
		{"not json", "owner", `{`, "body", "must be valid JSON"},
		{"action missing", "owner", `{}`, "action", "is required"},
		{"action unknown", "owner", `{"action":"rotate"}`, "action", "must be one of"},
		{"owner object missing", "owner", `{"action":"create"}`, "owner", "is required"},
		{"name missing", "owner", `{"action":"create","owner":{"kind":"person"}}`, "owner.name", "is required"},
		{"name 201", "owner", `{"action":"create","owner":{"name":"` + long(201) + `","kind":"person"}}`, "owner.name", "at most 200"},
		{"kind other", "owner", `{"action":"create","owner":{"name":"A","kind":"trust"}}`, "owner.kind", "must be one of"},
		{"email bad", "owner", `{"action":"create","owner":{"name":"A","kind":"person","email":"nope"}}`, "owner.email", "email"},
		{"phone letters", "owner", `{"action":"create","owner":{"name":"A","kind":"person","phone":"call me"}}`, "owner.phone", "digits"},
		{"address 501", "owner", `{"action":"create","owner":{"name":"A","kind":"person","address":"` + long(501) + `"}}`, "owner.address", "at most 500"},
		{"tax_id 51", "owner", `{"action":"create","owner":{"name":"A","kind":"person","tax_id":"` + long(51) + `"}}`, "owner.tax_id", "at most 50"},
		{"language bad", "owner", `{"action":"create","owner":{"name":"A","kind":"person","language":"english!"}}`, "owner.language", "language tag"},
		{"payout not object", "owner", `{"action":"create","owner":{"name":"A","kind":"person","payout":"x"}}`, "owner.payout", "must be an object"},
		{"payout method missing", "owner", `{"action":"create","owner":{"name":"A","kind":"person","payout":{"iban":"` + testIBAN + `"}}}`, "owner.payout.method", "is required"},
		{"payout method other", "owner", `{"action":"create","owner":{"name":"A","kind":"person","payout":{"method":"cash"}}}`, "owner.payout.method", "must be one of"},
		{"iban check digits", "owner", `{"action":"create","owner":{"name":"A","kind":"person","payout":{"method":"bank_transfer","iban":"DE88370400440532013000"}}}`, "owner.payout.iban", "valid IBAN"},
		{"bank without account", "owner", `{"action":"create","owner":{"name":"A","kind":"person","payout":{"method":"bank_transfer"}}}`, "owner.payout.iban", "is required"},
		{"paypal without email", "owner", `{"action":"create","owner":{"name":"A","kind":"person","payout":{"method":"paypal"}}}`, "owner.payout.email", "is required"},
		{"bic bad", "owner", `{"action":"create","owner":{"name":"A","kind":"person","payout":{"method":"bank_transfer","iban":"` + testIBAN + `","bic":"XX"}}}`, "owner.payout.bic", "BIC"},
		{"routing letters", "owner", `{"action":"create","owner":{"name":"A","kind":"person","payout":{"method":"bank_transfer","account_number":"123","routing_number":"abc"}}}`, "owner.payout.routing_number", "digits"},
		{"note 501", "owner", `{"action":"create","owner":{"name":"A","kind":"person","payout":{"method":"other","note":"` + long(501) + `"}}}`, "owner.payout.note", "at most 500"},
		{"owner_id missing on get", "owner", `{"action":"get","owner":{}}`, "owner.owner_id", "is required"},
		{"owner_id 0", "owner", `{"action":"delete","owner":{"owner_id":0}}`, "owner.owner_id", "between 1"},
		{"page 0", "owner", `{"action":"list","page":0}`, "page", "between 1"},
		{"limit 101", "owner", `{"action":"list","limit":101}`, "limit", "between 1 and 100"},

		{"agreement property missing", "owner-agreement", `{"action":"create","agreement":{"owner_id":1,"start_date":"2027-01-01","commission_percent":10,"commission_basis":"rent"}}`, "agreement.internal_code", "is required"},
		{"agreement code 11", "owner-agreement", `{"action":"create","agreement":{"internal_code":"` + long(11) + `","owner_id":1,"start_date":"2027-01-01","commission_percent":10,"commission_basis":"rent"}}`, "agreement.internal_code", "at most 10"},
		{"agreement owner missing", "owner-agreement", `{"action":"create","agreement":{"internal_code":"P1","start_date":"2027-01-01","commission_percent":10,"commission_basis":"rent"}}`, "agreement.owner_id", "is required"},
		{"agreement start missing", "owner-agreement", `{"action":"create","agreement":{"internal_code":"P1","owner_id":1,"commission_percent":10,"commission_basis":"rent"}}`, "agreement.start_date", "is required"},
		{"agreement start bad", "owner-agreement", `{"action":"create","agreement":{"internal_code":"P1","owner_id":1,"start_date":"2027-02-30","commission_percent":10,"commission_basis":"rent"}}`, "agreement.start_date", "valid date"},
		{"agreement end before start", "owner-agreement", `{"action":"create","agreement":{"internal_code":"P1","owner_id":1,"start_date":"2027-02-01","end_date":"2027-01-31","commission_percent":10,"commission_basis":"rent"}}`, "agreement.end_date", "not be before start_date"},
		{"commission 100.01", "owner-agreement", `{"action":"create","agreement":{"internal_code":"P1","owner_id":1,"start_date":"2027-01-01","commission_percent":"100.01","commission_basis":"rent"}}`, "agreement.commission_percent", "between 0 and 100"},
		{"commission 3 decimals", "owner-agreement", `{"action":"create","agreement":{"internal_code":"P1","owner_id":1,"start_date":"2027-01-01","commission_percent":"12.125","commission_basis":"rent"}}`, "agreement.commission_percent", "at most 2 decimal places"},
		{"commission negative", "owner-agreement", `{"action":"create","agreement":{"internal_code":"P1","owner_id":1,"start_date":"2027-01-01","commission_percent":-1,"commission_basis":"rent"}}`, "agreement.commission_percent", "between 0 and 100"},
		{"basis other", "owner-agreement", `{"action":"create","agreement":{"internal_code":"P1","owner_id":1,"start_date":"2027-01-01","commission_percent":10,"commission_basis":"net"}}`, "agreement.commission_basis", "must be one of"},
		{"components missing", "owner-agreement", `{"action":"create","agreement":{"internal_code":"P1","owner_id":1,"start_date":"2027-01-01","commission_percent":10,"commission_basis":"components"}}`, "agreement.commission_components", "is required when commission_basis is components"},
		{"component unknown", "owner-agreement", `{"action":"create","agreement":{"internal_code":"P1","owner_id":1,"start_date":"2027-01-01","commission_percent":10,"commission_basis":"components","commission_components":["rent","fees"]}}`, "agreement.commission_components[1]", "must be one of"},
		{"component twice", "owner-agreement", `{"action":"create","agreement":{"internal_code":"P1","owner_id":1,"start_date":"2027-01-01","commission_percent":10,"commission_basis":"components","commission_components":["rent","rent"]}}`, "agreement.commission_components", "listed twice"},
		{"components without basis", "owner-agreement", `{"action":"create","agreement":{"internal_code":"P1","owner_id":1,"start_date":"2027-01-01","commission_percent":10,"commission_basis":"rent","commission_components":["rent"]}}`, "agreement.commission_components", "must be empty"},
		{"fees 11", "owner-agreement", `{"action":"create","agreement":{"internal_code":"P1","owner_id":1,"start_date":"2027-01-01","commission_percent":10,"commission_basis":"rent","monthly_fees":[` + strings.TrimSuffix(strings.Repeat(`{"name":"f","amount":1},`, 11), ",") + `]}}`, "agreement.monthly_fees", "at most 10"},
		{"fee name missing", "owner-agreement", `{"action":"create","agreement":{"internal_code":"P1","owner_id":1,"start_date":"2027-01-01","commission_percent":10,"commission_basis":"rent","monthly_fees":[{"amount":1}]}}`, "agreement.monthly_fees[0].name", "is required"},
		{"fee amount 0", "owner-agreement", `{"action":"create","agreement":{"internal_code":"P1","owner_id":1,"start_date":"2027-01-01","commission_percent":10,"commission_basis":"rent","monthly_fees":[{"name":"f","amount":1},{"name":"g","amount":0}]}}`, "agreement.monthly_fees[1].amount", "greater than 0"},
		{"agreement_id missing on update", "owner-agreement", `{"action":"update","agreement":{"internal_code":"P1","owner_id":1,"start_date":"2027-01-01","commission_percent":10,"commission_basis":"rent"}}`, "agreement.agreement_id", "is required"},

		{"expense date missing", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","amount":5,"category":"cleaning","borne_by":"manager"}}`, "expense.date", "is required"},
		{"expense amount 0", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":0,"category":"cleaning","borne_by":"manager"}}`, "expense.amount", "greater than 0"},
		{"expense amount text", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":"lots","category":"cleaning","borne_by":"manager"}}`, "expense.amount", "must be a number"},
		{"expense amount cents of cents", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":"1.005","category":"cleaning","borne_by":"manager"}}`, "expense.amount", "at most 2 decimal places in EUR"},
		{"expense amount huge", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":2147483648,"category":"cleaning","borne_by":"manager"}}`, "expense.amount", "at most 2147483647"},
		{"category other", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":5,"category":"parties","borne_by":"manager"}}`, "expense.category", "must be one of"},
		{"description 1001", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":5,"category":"cleaning","borne_by":"manager","description":"` + long(1001) + `"}}`, "expense.description", "at most 1000"},
		{"borne_by missing", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":5,"category":"cleaning"}}`, "expense.borne_by", "is required"},
		{"borne by owner without agreement", "owner-expense", `{"action":"create","expense":{"internal_code":"P2","date":"2027-01-05","amount":5,"category":"cleaning","borne_by":"owner"}}`, "expense.borne_by", "no owner agreement on 2027-01-05"},
		{"receipt type other", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":5,"category":"cleaning","borne_by":"manager","receipt":{"content_type":"image/gif","data":"` + b64(pngBytes) + `"}}}`, "expense.receipt.content_type", "must be one of"},
		{"receipt data missing", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":5,"category":"cleaning","borne_by":"manager","receipt":{"content_type":"image/png"}}}`, "expense.receipt.data", "is required"},
		{"receipt not base64", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":5,"category":"cleaning","borne_by":"manager","receipt":{"content_type":"image/png","data":"%%%"}}}`, "expense.receipt.data", "must be base64"},
		{"receipt content not its type", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":5,"category":"cleaning","borne_by":"manager","receipt":{"content_type":"image/png","data":"` + b64(jpegBytes) + `"}}}`, "expense.receipt.data", "its content is image/jpeg"},
		{"receipt text", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":5,"category":"cleaning","borne_by":"manager","receipt":{"content_type":"application/pdf","data":"` + b64([]byte("hello, not a pdf")) + `"}}}`, "expense.receipt.data", "neither a JPEG, a PNG nor a PDF"},
		{"receipt over 5 MiB", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":5,"category":"cleaning","borne_by":"manager","receipt":{"content_type":"image/png","data":"` + big + `"}}}`, "expense.receipt.data", "at most 5242880 bytes"},
		{"expense list to before from", "owner-expense", `{"action":"list","from":"2027-02-01","to":"2027-01-01"}`, "to", "not be before from"},

		{"payout owner missing", "owner-payout", `{"action":"create","payout":{"date":"2027-01-31","amount":10,"currency":"EUR","method":"bank_transfer"}}`, "payout.owner_id", "is required"},
		{"payout amount negative", "owner-payout", `{"action":"create","payout":{"owner_id":1,"date":"2027-01-31","amount":-10,"currency":"EUR","method":"bank_transfer"}}`, "payout.amount", "greater than 0"},
		{"payout yen cents", "owner-payout", `{"action":"create","payout":{"owner_id":1,"date":"2027-01-31","amount":"10.5","currency":"jpy","method":"bank_transfer"}}`, "payout.amount", "at most 0 decimal places in JPY"},
		{"payout currency bad", "owner-payout", `{"action":"create","payout":{"owner_id":1,"date":"2027-01-31","amount":10,"currency":"EURO","method":"bank_transfer"}}`, "payout.currency", "ISO 4217"},
		{"payout method missing", "owner-payout", `{"action":"create","payout":{"owner_id":1,"date":"2027-01-31","amount":10,"currency":"EUR"}}`, "payout.method", "is required"},
		{"payout reference 201", "owner-payout", `{"action":"create","payout":{"owner_id":1,"date":"2027-01-31","amount":10,"currency":"EUR","method":"other","reference":"` + long(201) + `"}}`, "payout.reference", "at most 200"},
		{"payout update refused", "owner-payout", `{"action":"update","payout":{"payout_id":1}}`, "action", "must be one of"},
	}
	// An owner and an agreement on P1 for the rules that need one (borne_by).
	own := s.must(t, acct, "owner", `{"action":"create","owner":{"name":"Rule Owner","kind":"person"}}`)
	s.must(t, acct, "owner-agreement", fmt.Sprintf(`{"action":"create","agreement":{"internal_code":"P1","owner_id":%d,"start_date":"2026-01-01","commission_percent":10,"commission_basis":"rent"}}`, idOf(t, own, "owner_id")))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, ans := s.call(t, acct, tc.resource, tc.body)
			if code != 400 {
				t.Fatalf("status %d, want 400: %v", code, ans)
			}
			errs, _ := ans["errors"].([]any)
			for _, e := range errs {
				m := e.(map[string]any)
				if m["field"] == tc.field && strings.Contains(m["message"].(string), tc.message) {
					return
				}
			}
			t.Fatalf("no violation %s: …%s… in %v", tc.field, tc.message, ans)
		})
	}
}

// TestOwnerResources: create, update, get, list and delete of each resource; unknown ids
// 404; overlapping agreements 409 naming the other; an owner in use 409.
func TestOwnerResources(t *testing.T) {
	s := newOwnersServer(t)
	acct := s.ownersAccount(t)

	// Owners.
	o := s.must(t, acct, "owner", `{"action":"create","owner":{"name":"Ada Owner","kind":"PERSON","email":"ada@example.com","language":"it",
		"payout":{"method":"bank_transfer","account_holder":"`+testHolder+`","iban":"`+testIBAN+`"}}}`)
	oid := idOf(t, o, "owner_id")
	if o["kind"] != "person" || o["payout_set"] != true || o["payout_summary"] != "IBAN •••• 3000" || o["language"] != "it" {
		t.Fatalf("created owner %v", o)
	}
	o = s.must(t, acct, "owner", fmt.Sprintf(`{"action":"update","owner":{"owner_id":%d,"name":"Ada Owner-Lovelace","kind":"company"}}`, oid))
	if o["name"] != "Ada Owner-Lovelace" || o["kind"] != "company" || o["email"] != "" || o["payout_summary"] != "IBAN •••• 3000" {
		t.Fatalf("updated owner (payout kept, email cleared) %v", o)
	}
	o = s.must(t, acct, "owner", fmt.Sprintf(`{"action":"update","owner":{"owner_id":%d,"name":"Ada","kind":"person","payout":{"method":"paypal","email":"ada@pay.example"}}}`, oid))
	if o["payout_summary"] != "PayPal a•••@pay.example" {
		t.Fatalf("payout replaced %v", o)
	}
	o2 := s.must(t, acct, "owner", `{"action":"create","owner":{"name":"Bo","kind":"company"}}`)
	oid2 := idOf(t, o2, "owner_id")
	if o2["payout_set"] != false || o2["payout_summary"] != "" {
		t.Fatalf("owner without payout %v", o2)
	}
	if g := s.must(t, acct, "owner", fmt.Sprintf(`{"action":"get","owner":{"owner_id":%d}}`, oid)); g["name"] != "Ada" {
		t.Fatalf("get %v", g)
	}
	l := s.must(t, acct, "owner", `{"action":"list","limit":1,"page":2}`)
	if l["total"] != 2.0 || len(l["owners"].([]any)) != 1 || idOf(t, l["owners"].([]any)[0].(map[string]any), "owner_id") != oid2 {
		t.Fatalf("list page 2 %v", l)
	}
	if code, ans := s.call(t, acct, "owner", `{"action":"get","owner":{"owner_id":999999999}}`); code != 404 || !strings.Contains(ans["error_message"].(string), "owner 999999999 does not exist") {
		t.Fatalf("unknown owner %d %v", code, ans)
	}

	// Agreements.
	agBody := func(action string, extra string) string {
		return fmt.Sprintf(`{"action":%q,"agreement":{%s"internal_code":"P1","owner_id":%d,"start_date":"2027-01-01","end_date":"2027-06-30",
			"commission_percent":"15.5","commission_basis":"components","commission_components":["taxes","rent"],
			"monthly_fees":[{"name":"Management","amount":"50"},{"name":"Software","amount":"9.99"}]}}`, action, extra, oid)
	}
	ag := s.must(t, acct, "owner-agreement", agBody("create", ""))
	agID := idOf(t, ag, "agreement_id")
	if ag["commission_percent"] != "15.50" || ag["currency"] != "EUR" || fmt.Sprint(ag["commission_components"]) != "[rent taxes]" ||
		fmt.Sprint(ag["monthly_fees"]) != "[map[amount:50.00 name:Management] map[amount:9.99 name:Software]]" || idOf(t, ag, "property_id") != 1 {
		t.Fatalf("agreement %v", ag)
	}
	// Overlap: another agreement of P1 touching 2027-06-30.
	code, ans := s.call(t, acct, "owner-agreement", fmt.Sprintf(`{"action":"create","agreement":{"property_id":1,"owner_id":%d,"start_date":"2027-06-30",
		"commission_percent":10,"commission_basis":"total"}}`, oid2))
	if code != 409 || !strings.Contains(ans["error_message"].(string), fmt.Sprintf(`agreement %d of property "P1" runs from 2027-01-01 to 2027-06-30`, agID)) {
		t.Fatalf("overlap %d %v", code, ans)
	}
	// The day after is free; an open-ended one then overlaps anything later.
	ag2 := s.must(t, acct, "owner-agreement", fmt.Sprintf(`{"action":"create","agreement":{"property_id":1,"owner_id":%d,"start_date":"2027-07-01",
		"commission_percent":10,"commission_basis":"total"}}`, oid2))
	ag2ID := idOf(t, ag2, "agreement_id")
	// Extending the first over the second is refused; its update otherwise replaces it whole.
	if code, _ := s.call(t, acct, "owner-agreement", strings.Replace(agBody("update", fmt.Sprintf(`"agreement_id":%d,`, agID)), "2027-06-30", "2027-07-01", 1)); code != 409 {
		t.Fatalf("update into overlap: %d", code)
	}
	up := s.must(t, acct, "owner-agreement", fmt.Sprintf(`{"action":"update","agreement":{"agreement_id":%d,"internal_code":"P1","owner_id":%d,
		"start_date":"2027-01-01","end_date":"2027-05-31","commission_percent":20,"commission_basis":"rent"}}`, agID, oid))
	if up["end_date"] != "2027-05-31" || len(up["monthly_fees"].([]any)) != 0 || len(up["commission_components"].([]any)) != 0 {
		t.Fatalf("update %v", up)
	}
	// Other properties are apart.
	s.must(t, acct, "owner-agreement", fmt.Sprintf(`{"action":"create","agreement":{"internal_code":"P2","owner_id":%d,"start_date":"2027-01-01",
		"commission_percent":10,"commission_basis":"rent"}}`, oid))
	if l := s.must(t, acct, "owner-agreement", fmt.Sprintf(`{"action":"list","owner_id":%d}`, oid2)); l["total"] != 1.0 {
		t.Fatalf("list by owner %v", l)
	}
	if l := s.must(t, acct, "owner-agreement", `{"action":"list","internal_code":"P1"}`); l["total"] != 2.0 {
		t.Fatalf("list by property %v", l)
	}
	if code, _ := s.call(t, acct, "owner-agreement", `{"action":"create","agreement":{"internal_code":"NOPE","owner_id":1,"start_date":"2027-01-01","commission_percent":1,"commission_basis":"rent"}}`); code != 404 {
		t.Fatalf("unknown property %d", code)
	}
	if code, _ := s.call(t, acct, "owner-agreement", `{"action":"create","agreement":{"internal_code":"P2","owner_id":999999999,"start_date":"2030-01-01","commission_percent":1,"commission_basis":"rent"}}`); code != 404 {
		t.Fatalf("unknown owner %d", code)
	}

	// Expenses.
	ex := s.must(t, acct, "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-02-03","amount":"120.5",
		"category":"Repairs","description":"Boiler","borne_by":"owner"}}`)
	exID := idOf(t, ex, "expense_id")
	if ex["amount"] != "120.50" || ex["category"] != "repairs" || idOf(t, ex, "owner_id") != oid || ex["receipt"] != nil || ex["currency"] != "EUR" {
		t.Fatalf("expense %v", ex)
	}
	ex = s.must(t, acct, "owner-expense", fmt.Sprintf(`{"action":"update","expense":{"expense_id":%d,"internal_code":"P2","date":"2027-02-04","amount":7,
		"category":"supplies","borne_by":"manager"}}`, exID))
	if ex["internal_code"] != "P2" || ex["amount"] != "7.00" || ex["description"] != "" {
		t.Fatalf("updated expense %v", ex)
	}
	if l := s.must(t, acct, "owner-expense", `{"action":"list","internal_code":"P2","from":"2027-02-04","to":"2027-02-04"}`); l["total"] != 1.0 {
		t.Fatalf("list expenses %v", l)
	}
	if l := s.must(t, acct, "owner-expense", `{"action":"list","from":"2027-02-05"}`); l["total"] != 0.0 {
		t.Fatalf("list expenses after %v", l)
	}

	// Payouts.
	po := s.must(t, acct, "owner-payout", fmt.Sprintf(`{"action":"create","payout":{"owner_id":%d,"date":"2027-02-28","amount":"1000","currency":"eur",
		"method":"bank_transfer","reference":"Feb"}}`, oid))
	poID := idOf(t, po, "payout_id")
	if po["amount"] != "1000.00" || po["currency"] != "EUR" {
		t.Fatalf("payout %v", po)
	}
	if g := s.must(t, acct, "owner-payout", fmt.Sprintf(`{"action":"get","payout":{"payout_id":%d}}`, poID)); g["reference"] != "Feb" {
		t.Fatalf("get payout %v", g)
	}
	if code, _ := s.call(t, acct, "owner-payout", `{"action":"create","payout":{"owner_id":999999999,"date":"2027-02-28","amount":1,"currency":"EUR","method":"other"}}`); code != 404 {
		t.Fatalf("payout to an unknown owner %d", code)
	}

	// An owner in use is not deleted.
	code, ans = s.call(t, acct, "owner", fmt.Sprintf(`{"action":"delete","owner":{"owner_id":%d}}`, oid))
	if code != 409 || !strings.Contains(ans["error_message"].(string), fmt.Sprintf("owner %d has agreements", oid)) ||
		!strings.Contains(ans["error_message"].(string), fmt.Sprintf("and payout %d", poID)) {
		t.Fatalf("delete owner in use %d %v", code, ans)
	}
	// Deletes.
	s.must(t, acct, "owner-payout", fmt.Sprintf(`{"action":"delete","payout":{"payout_id":%d}}`, poID))
	s.must(t, acct, "owner-expense", fmt.Sprintf(`{"action":"delete","expense":{"expense_id":%d}}`, exID))
	s.must(t, acct, "owner-agreement", fmt.Sprintf(`{"action":"delete","agreement":{"agreement_id":%d}}`, ag2ID))
	if code, _ := s.call(t, acct, "owner-agreement", fmt.Sprintf(`{"action":"get","agreement":{"agreement_id":%d}}`, ag2ID)); code != 404 {
		t.Fatalf("deleted agreement %d", code)
	}
	if code, _ := s.call(t, acct, "owner-expense", fmt.Sprintf(`{"action":"delete","expense":{"expense_id":%d}}`, exID)); code != 404 {
		t.Fatalf("deleted twice %d", code)
	}
	s.must(t, acct, "owner", fmt.Sprintf(`{"action":"delete","owner":{"owner_id":%d}}`, oid2))
	if l := s.must(t, acct, "owner", `{"action":"list"}`); l["total"] != 1.0 {
		t.Fatalf("owners left %v", l)
	}
}

// TestOwnerPayoutDetailsSealed: the payout details appear in no answer, no list, no export
// and in no stored document in clear; they open only for their account and owner.
func TestOwnerPayoutDetailsSealed(t *testing.T) {
	s := newOwnersServer(t)
	acct := s.ownersAccount(t)
	o := s.must(t, acct, "owner", `{"action":"create","owner":{"name":"Sealed Owner","kind":"person",
		"payout":{"method":"bank_transfer","account_holder":"`+testHolder+`","iban":"`+testIBAN+`","bic":"COBADEFFXXX","note":"zq-secret-note"}}}`)
	oid := idOf(t, o, "owner_id")
	secrets := []string{"370400440532013000", "3704 0044 0532", testHolder, "COBADEFF", "zq-secret-note"}
	answers := [][]byte{}
	for _, body := range []string{fmt.Sprintf(`{"action":"get","owner":{"owner_id":%d}}`, oid), `{"action":"list"}`} {
		_, out := s.do(t, acct, http.MethodPost, "/internal/a/owner", body)
		answers = append(answers, out)
	}
	_, exp := s.do(t, acct, http.MethodGet, "/internal/account/export", "")
	answers = append(answers, exp)
	for _, a := range answers {
		for _, sec := range secrets {
			if bytes.Contains(a, []byte(sec)) {
				t.Fatalf("answer holds %q: %s", sec, a)
			}
		}
	}
	if got := holding(t, nil, secrets...); len(got) != 0 {
		t.Fatalf("stored in clear: %v", got)
	}
	stored, err := s.records.Owner(context.Background(), acct, oid)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.books.PayoutDetailsOf(stored)
	if err != nil || d.IBAN != testIBAN || d.AccountHolder != testHolder {
		t.Fatalf("details open to %+v, %v", d, err)
	}
	other := stored
	other.AccountID = acct + "x"
	if _, err := s.books.PayoutDetailsOf(other); err == nil {
		t.Fatal("details opened under another account")
	}
}

// TestExpenseReceipts: a receipt round-trips through the receipt action; an update without
// one keeps it, `{}` removes it; the content must be what its type says.
func TestExpenseReceipts(t *testing.T) {
	s := newOwnersServer(t)
	acct := s.ownersAccount(t)
	for _, r := range []struct {
		ct   string
		data []byte
	}{{"image/png", pngBytes}, {"IMAGE/JPEG", jpegBytes}, {"application/pdf", pdfBytes}} {
		ex := s.must(t, acct, "owner-expense", fmt.Sprintf(`{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":5,
			"category":"cleaning","borne_by":"manager","receipt":{"content_type":%q,"data":%q}}}`, r.ct, b64(r.data)))
		id := idOf(t, ex, "expense_id")
		want := strings.ToLower(r.ct)
		if rc := ex["receipt"].(map[string]any); rc["content_type"] != want || rc["size"] != float64(len(r.data)) {
			t.Fatalf("receipt info %v", ex)
		}
		got := s.must(t, acct, "owner-expense", fmt.Sprintf(`{"action":"receipt","expense":{"expense_id":%d}}`, id))
		if got["content_type"] != want || got["data"] != b64(r.data) {
			t.Fatalf("receipt %v", got)
		}
		kept := s.must(t, acct, "owner-expense", fmt.Sprintf(`{"action":"update","expense":{"expense_id":%d,"internal_code":"P1","date":"2027-01-06",
			"amount":6,"category":"cleaning","borne_by":"manager"}}`, id))
		if kept["receipt"] == nil {
			t.Fatalf("update without receipt dropped it: %v", kept)
		}
		gone := s.must(t, acct, "owner-expense", fmt.Sprintf(`{"action":"update","expense":{"expense_id":%d,"internal_code":"P1","date":"2027-01-06",
			"amount":6,"category":"cleaning","borne_by":"manager","receipt":{}}}`, id))
		if gone["receipt"] != nil {
			t.Fatalf("receipt {} kept it: %v", gone)
		}
		if code, _ := s.call(t, acct, "owner-expense", fmt.Sprintf(`{"action":"receipt","expense":{"expense_id":%d}}`, id)); code != 404 {
			t.Fatalf("removed receipt answered %d", code)
		}
	}
	// Largest receipt: exactly 5 MiB.
	full := append(slices.Clone(pngBytes), make([]byte, owners.MaxReceipt-len(pngBytes))...)
	ex := s.must(t, acct, "owner-expense", fmt.Sprintf(`{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":5,
		"category":"cleaning","borne_by":"manager","receipt":{"content_type":"image/png","data":%q}}}`, b64(full)))
	got := s.must(t, acct, "owner-expense", fmt.Sprintf(`{"action":"receipt","expense":{"expense_id":%d}}`, idOf(t, ex, "expense_id")))
	if got["size"] != float64(owners.MaxReceipt) {
		t.Fatalf("5 MiB receipt size %v", got["size"])
	}
}

// TestOwnersOfTwoAccounts: two accounts, each creating and reading 20 owners and expenses at
// once, see only their own; an id of the other is 404 to each.
func TestOwnersOfTwoAccounts(t *testing.T) {
	s := newOwnersServer(t)
	accts := []string{s.ownersAccount(t), s.ownersAccount(t)}
	const n = 20
	ids := make([][]int64, 2)
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for i, acct := range accts {
		for j := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, out := s.do(t, acct, http.MethodPost, "/internal/a/owner",
					fmt.Sprintf(`{"action":"create","owner":{"name":"%s owner %d","kind":"person"}}`, acct, j))
				var ans struct {
					Data ownerAnswer `json:"data"`
				}
				if code != 200 || json.Unmarshal(out, &ans) != nil {
					errs <- fmt.Errorf("create: %d %s", code, out)
					return
				}
				// Read it back at once, and the whole list.
				code, out = s.do(t, acct, http.MethodPost, "/internal/a/owner", fmt.Sprintf(`{"action":"get","owner":{"owner_id":%d}}`, ans.Data.OwnerID))
				if code != 200 || !strings.Contains(string(out), acct+" owner") {
					errs <- fmt.Errorf("get: %d %s", code, out)
				}
				code, out = s.do(t, acct, http.MethodPost, "/internal/a/owner", `{"action":"list","limit":100}`)
				if code != 200 || strings.Contains(string(out), accts[1-i]) {
					errs <- fmt.Errorf("list of %s: %d %s", acct, code, out)
				}
				code, out = s.do(t, acct, http.MethodPost, "/internal/a/owner-expense", fmt.Sprintf(`{"action":"create","expense":{"internal_code":"P1",
					"date":"2027-01-05","amount":%d,"category":"cleaning","borne_by":"manager","description":%q}}`, j+1, acct))
				if code != 200 {
					errs <- fmt.Errorf("expense: %d %s", code, out)
				}
				mu.Lock()
				ids[i] = append(ids[i], ans.Data.OwnerID)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, acct := range accts {
		l := s.must(t, acct, "owner", `{"action":"list","limit":100}`)
		if l["total"] != float64(n) || strings.Contains(fmt.Sprint(l), accts[1-i]) {
			t.Fatalf("%s lists %v", acct, l["total"])
		}
		if l := s.must(t, acct, "owner-expense", `{"action":"list","limit":100}`); l["total"] != float64(n) || strings.Contains(fmt.Sprint(l), accts[1-i]) {
			t.Fatalf("%s lists expenses %v", acct, l["total"])
		}
		for _, id := range ids[1-i] {
			if code, _ := s.call(t, acct, "owner", fmt.Sprintf(`{"action":"get","owner":{"owner_id":%d}}`, id)); code != 404 {
				t.Fatalf("%s read owner %d of the other account: %d", acct, id, code)
			}
			if code, _ := s.call(t, acct, "owner", fmt.Sprintf(`{"action":"delete","owner":{"owner_id":%d}}`, id)); code != 404 {
				t.Fatalf("%s deleted owner %d of the other account: %d", acct, id, code)
			}
		}
	}
}

// sum is the total of postings (it must be zero) and the balance of each ledger account.
func sum(ps []journal.Posting) (decimal.Decimal, map[string]string) {
	total := decimal.Zero
	out := map[string]string{}
	for _, p := range ps {
		total = total.Add(p.Amount)
		k := p.Account
		if p.OwnerID != 0 {
			k += ":" + strconv.FormatInt(p.OwnerID, 10)
		}
		out[k] = p.Amount.String()
	}
	return total, out
}

// TestOwnerLedgerSources: what an expense (borne by the owner, by the manager), a payout and
// a month's fees post; each write touches its source; once deleted, each resolves to nothing
// (the journal reverses what it posted); the fee pass touches the current month of each
// agreement in force on its 1st, again and again without changing what it resolves.
func TestOwnerLedgerSources(t *testing.T) {
	s := newOwnersServer(t)
	ctx := context.Background()
	acct := newAccount("ledg")
	accountCurrency(t, s.server, acct, "JPY")
	priceable(t, s.server, acct, 1)
	o := s.must(t, acct, "owner", `{"action":"create","owner":{"name":"Ledger Owner","kind":"person"}}`)
	oid := idOf(t, o, "owner_id")
	ag := s.must(t, acct, "owner-agreement", fmt.Sprintf(`{"action":"create","agreement":{"internal_code":"P1","owner_id":%d,"start_date":"2027-01-15",
		"commission_percent":10,"commission_basis":"rent","monthly_fees":[{"name":"Management","amount":5000},{"name":"Phone","amount":800}]}}`, oid))
	agID := idOf(t, ag, "agreement_id")
	// The service's clock is 2027-03-15: February and March are due (January's 1st is before the start).
	for _, m := range []string{"2027-02", "2027-03"} {
		if s.touched.count(acct, owners.FeeSource(agID, m)) != 1 {
			t.Fatalf("fee %s not touched: %v", m, s.touched.got)
		}
	}
	if s.touched.count(acct, owners.FeeSource(agID, "2027-01")) != 0 || s.touched.count(acct, owners.FeeSource(agID, "2027-04")) != 0 {
		t.Fatalf("fees outside the agreement or in the future touched: %v", s.touched.got)
	}
	fee, err := s.books.ResolveFee(ctx, acct, owners.FeeSource(agID, "2027-03"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fee) != 4 {
		t.Fatalf("fee postings %+v", fee)
	}
	for i, p := range fee {
		wantAcct, wantAmt := journal.Owner, []string{"5000", "800"}[i/2]
		if i%2 == 1 {
			wantAcct, wantAmt = journal.ManagementIncome, "-"+wantAmt
		}
		if p.Account != wantAcct || p.Amount.String() != wantAmt || p.Date != "2027-03-01" || p.Currency != "JPY" || p.Line != journal.LineFee ||
			p.PropertyID != 1 || (p.Account == journal.Owner) != (p.OwnerID == oid) {
			t.Fatalf("fee posting %d: %+v", i, p)
		}
	}
	if none, _ := s.books.ResolveFee(ctx, acct, owners.FeeSource(agID, "2027-01")); len(none) != 0 {
		t.Fatalf("fee before the start: %+v", none)
	}

	// Expenses.
	exO := s.must(t, acct, "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-02-10","amount":12000,"category":"repairs","borne_by":"owner"}}`)
	exM := s.must(t, acct, "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-02-11","amount":3000,"category":"cleaning","borne_by":"manager"}}`)
	for _, tc := range []struct {
		ex   map[string]any
		want map[string]string
	}{
		{exO, map[string]string{"owner:" + strconv.FormatInt(oid, 10): "12000", journal.Cash: "-12000"}},
		{exM, map[string]string{journal.ManagementExpense: "3000", journal.Cash: "-3000"}},
	} {
		src := owners.ExpenseSource(idOf(t, tc.ex, "expense_id"))
		if s.touched.count(acct, src) != 1 {
			t.Fatalf("%s not touched", src)
		}
		ps, err := s.books.ResolveExpense(ctx, acct, src)
		if err != nil {
			t.Fatal(err)
		}
		total, bal := sum(ps)
		if !total.IsZero() || fmt.Sprint(bal) != fmt.Sprint(tc.want) || ps[0].Date != tc.ex["date"] || ps[0].Currency != "JPY" || ps[0].Line != journal.LineExpense {
			t.Fatalf("%s posts %+v", src, ps)
		}
	}
	// Payout.
	po := s.must(t, acct, "owner-payout", fmt.Sprintf(`{"action":"create","payout":{"owner_id":%d,"date":"2027-02-28","amount":"250.50","currency":"USD","method":"other"}}`, oid))
	psrc := owners.PayoutSource(idOf(t, po, "payout_id"))
	ps, err := s.books.ResolvePayout(ctx, acct, psrc)
	if err != nil {
		t.Fatal(err)
	}
	if total, bal := sum(ps); !total.IsZero() || fmt.Sprint(bal) != fmt.Sprint(map[string]string{"owner:" + strconv.FormatInt(oid, 10): "250.5", journal.Cash: "-250.5"}) ||
		ps[0].Currency != "USD" || ps[0].Date != "2027-02-28" {
		t.Fatalf("payout posts %+v", ps)
	}

	// The fee pass: this month's fee, once per run, same postings.
	before := s.touched.count(acct, owners.FeeSource(agID, "2027-03"))
	for range 3 {
		if err := s.books.FeePass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.touched.count(acct, owners.FeeSource(agID, "2027-03")); got != before+3 {
		t.Fatalf("fee pass touched March %d times, want 3", got-before)
	}
	again, _ := s.books.ResolveFee(ctx, acct, owners.FeeSource(agID, "2027-03"))
	if fmt.Sprint(again) != fmt.Sprint(fee) {
		t.Fatalf("fee changed between passes: %+v", again)
	}
	// April: the pass follows the clock.
	s.mu.Lock()
	s.clock = time.Date(2027, 4, 1, 0, 5, 0, 0, time.UTC)
	s.mu.Unlock()
	if err := s.books.FeePass(ctx); err != nil {
		t.Fatal(err)
	}
	if s.touched.count(acct, owners.FeeSource(agID, "2027-04")) != 1 {
		t.Fatal("April's fee not touched")
	}

	// Deletes: each source touched again, resolving to nothing.
	s.must(t, acct, "owner-expense", fmt.Sprintf(`{"action":"delete","expense":{"expense_id":%d}}`, idOf(t, exO, "expense_id")))
	s.must(t, acct, "owner-expense", fmt.Sprintf(`{"action":"delete","expense":{"expense_id":%d}}`, idOf(t, exM, "expense_id")))
	s.must(t, acct, "owner-payout", fmt.Sprintf(`{"action":"delete","payout":{"payout_id":%d}}`, idOf(t, po, "payout_id")))
	s.must(t, acct, "owner-agreement", fmt.Sprintf(`{"action":"delete","agreement":{"agreement_id":%d}}`, agID))
	for _, src := range []string{owners.ExpenseSource(idOf(t, exO, "expense_id")), owners.ExpenseSource(idOf(t, exM, "expense_id")), psrc,
		owners.FeeSource(agID, "2027-02"), owners.FeeSource(agID, "2027-04")} {
		if s.touched.count(acct, src) < 2 {
			t.Fatalf("%s not touched after its delete", src)
		}
		kind, _, _ := strings.Cut(src, ":")
		got, err := s.books.Resolvers()[kind](ctx, acct, src)
		if err != nil || len(got) != 0 {
			t.Fatalf("deleted %s resolves to %+v, %v", src, got, err)
		}
	}
	if _, err := s.books.ResolveExpense(ctx, acct, "expense:x"); err == nil {
		t.Fatal("a malformed source resolved")
	}
}

// TestAgreementOn: the agreement in force on a date, both ends included; none outside.
func TestAgreementOn(t *testing.T) {
	s := newOwnersServer(t)
	ctx := context.Background()
	acct := s.ownersAccount(t)
	oid := idOf(t, s.must(t, acct, "owner", `{"action":"create","owner":{"name":"On","kind":"person"}}`), "owner_id")
	a1 := idOf(t, s.must(t, acct, "owner-agreement", fmt.Sprintf(`{"action":"create","agreement":{"internal_code":"P1","owner_id":%d,"start_date":"2027-01-01","end_date":"2027-01-31","commission_percent":10,"commission_basis":"rent"}}`, oid)), "agreement_id")
	a2 := idOf(t, s.must(t, acct, "owner-agreement", fmt.Sprintf(`{"action":"create","agreement":{"internal_code":"P1","owner_id":%d,"start_date":"2027-02-01","commission_percent":10,"commission_basis":"rent"}}`, oid)), "agreement_id")
	for date, want := range map[string]int64{"2026-12-31": 0, "2027-01-01": a1, "2027-01-31": a1, "2027-02-01": a2, "2099-01-01": a2} {
		a, ok, err := s.books.AgreementInForce(ctx, acct, 1, date)
		if err != nil || ok != (want != 0) || a.AgreementID != want {
			t.Fatalf("%s: %d %v %v, want %d", date, a.AgreementID, ok, err, want)
		}
	}
	if _, ok, _ := s.books.AgreementInForce(ctx, acct, 2, "2027-01-15"); ok {
		t.Fatal("agreement of P1 found for P2")
	}
	if ags, _ := s.books.OwnerAgreements(ctx, acct, oid); len(ags) != 2 {
		t.Fatalf("owner's agreements %v", ags)
	}
}

// TestOwnerExportAndErasure: the export holds the account's owner records and receipts; the
// account's erasure leaves none of them.
func TestOwnerExportAndErasure(t *testing.T) {
	s := newOwnersServer(t)
	acct := s.ownersAccount(t)
	oid := idOf(t, s.must(t, acct, "owner", `{"action":"create","owner":{"name":"Export zqOwner","kind":"person","payout":{"method":"paypal","email":"x@pay.example"}}}`), "owner_id")
	agID := idOf(t, s.must(t, acct, "owner-agreement", fmt.Sprintf(`{"action":"create","agreement":{"internal_code":"P1","owner_id":%d,"start_date":"2027-01-01","commission_percent":10,"commission_basis":"rent"}}`, oid)), "agreement_id")
	exID := idOf(t, s.must(t, acct, "owner-expense", fmt.Sprintf(`{"action":"create","expense":{"internal_code":"P1","date":"2027-01-05","amount":5,"category":"cleaning","borne_by":"owner","description":"zqExpense","receipt":{"content_type":"application/pdf","data":%q}}}`, b64(pdfBytes))), "expense_id")
	poID := idOf(t, s.must(t, acct, "owner-payout", fmt.Sprintf(`{"action":"create","payout":{"owner_id":%d,"date":"2027-01-31","amount":1,"currency":"EUR","method":"paypal"}}`, oid)), "payout_id")

	code, body := s.do(t, acct, http.MethodGet, "/internal/account/export", "")
	if code != 200 {
		t.Fatalf("export %d %s", code, body)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		r, _ := f.Open()
		files[f.Name], _ = io.ReadAll(r)
		r.Close()
	}
	var man manifestJSON
	if err := json.Unmarshal(files["booking-svc/manifest.json"], &man); err != nil {
		t.Fatal(err)
	}
	for coll, id := range map[string]int64{"owners": oid, "owner_agreements": agID, "owner_expenses": exID, "owner_payouts": poID, "receipts": exID} {
		if fmt.Sprint(man.Records[coll]) != fmt.Sprintf("[%d]", id) {
			t.Fatalf("manifest %s: %v", coll, man.Records[coll])
		}
	}
	if !bytes.Contains(files["booking-svc/owners.json"], []byte("Export zqOwner")) || !bytes.Contains(files["booking-svc/owner_expenses.json"], []byte("zqExpense")) {
		t.Fatalf("export files %v", slices.Sorted(func(yield func(string) bool) {
			for k := range files {
				if !yield(k) {
					return
				}
			}
		}))
	}
	if !bytes.Equal(files[fmt.Sprintf("booking-svc/receipts/%d.pdf", exID)], pdfBytes) {
		t.Fatal("the receipt is not in the export")
	}

	if got := holding(t, nil, "zqOwner", "zqExpense"); len(got) == 0 {
		t.Fatal("the search finds nothing before the erasure")
	}
	// Erasure: the owners part deletes everything of the account.
	if err := s.records.EraseAccount(context.Background(), acct); err != nil {
		t.Fatal(err)
	}
	if err := s.records.EraseAccount(context.Background(), acct); err != nil {
		t.Fatalf("erasing again: %v", err)
	}
	if got := holding(t, nil, "zqOwner", "zqExpense", "%PDF-1.4"); len(got) != 0 {
		t.Fatalf("left after erasure: %v", got)
	}
	if got := holdingAll(t, acct); len(got) != 0 {
		for coll := range got {
			if strings.HasPrefix(coll, "owner") {
				t.Fatalf("owner records of the account left in %s", coll)
			}
		}
	}
	accts, _ := s.records.AgreementAccounts(context.Background())
	if slices.Contains(accts, acct) {
		t.Fatal("the erased account is still visited by the fee pass")
	}
}

// TestOwnerLedgerThroughTheJournal: with booking-svc's journal over the test database, an
// agreement made after a booking moves its earnings to the owner with the commission; an
// expense (borne by the owner, by the manager), a payout and a month's fees post their
// entries, their deletions reverse them, the fee pass posts each month once, and the ledger
// balances to zero after every step.
func TestOwnerLedgerThroughTheJournal(t *testing.T) {
	s := newOwnersServer(t)
	ctx := context.Background()
	jst, err := store.NewJournal(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	books := journal.New(jst)
	books.Register("booking", journal.BookingResolver(s.st, s.books))
	for kind, r := range s.books.Resolvers() {
		books.Register(kind, r)
	}
	s.books.SetJournal(books)
	s.books.SetBookings(s.st)
	acct := s.ownersAccount(t)
	bal := func(q journal.Query) string {
		t.Helper()
		q.Currency = "EUR"
		d, err := books.Balance(ctx, acct, q)
		if err != nil {
			t.Fatal(err)
		}
		return d.StringFixed(2)
	}
	balanced := func(step string) {
		t.Helper()
		if b := bal(journal.Query{}); b != "0.00" {
			t.Fatalf("%s: the ledger sums to %s", step, b)
		}
	}
	bk := s.book(t, acct, 1, "2027-02-10", 3, booking.Guest{FirstName: "Ledger", LastName: "Guest", Email: "lg@example.com"}, 0)
	if err := books.Touch(ctx, acct, journal.BookingSource(bk.BookingID)); err != nil {
		t.Fatal(err)
	}
	balanced("booking")
	if b := bal(journal.Query{LedgerAccount: journal.RentalIncome, BookingID: bk.BookingID}); b == "0.00" {
		t.Fatal("a booking without agreement earned nothing for the account")
	}
	oid := idOf(t, s.must(t, acct, "owner", `{"action":"create","owner":{"name":"Journal Owner","kind":"person"}}`), "owner_id")
	ag := s.must(t, acct, "owner-agreement", fmt.Sprintf(`{"action":"create","agreement":{"internal_code":"P1","owner_id":%d,"start_date":"2027-01-15",
		"commission_percent":10,"commission_basis":"rent","monthly_fees":[{"name":"Management","amount":"50"}]}}`, oid))
	agID := idOf(t, ag, "agreement_id")
	balanced("agreement")
	// The booking was touched again: its earnings are the owner's now, less the commission.
	if b := bal(journal.Query{LedgerAccount: journal.RentalIncome, BookingID: bk.BookingID}); b != "0.00" {
		t.Fatalf("rental income left on the booking after its agreement: %s", b)
	}
	if b := bal(journal.Query{LedgerAccount: journal.ManagementIncome, BookingID: bk.BookingID}); b == "0.00" {
		t.Fatal("no commission on the booking")
	}
	ownerQ := journal.Query{LedgerAccount: journal.Owner, OwnerID: oid}
	// Fees: February and March (the clock is 2027-03-15), 50 each.
	feeSum := func() string {
		t.Helper()
		es, err := books.Entries(ctx, acct, journal.Query{LedgerAccount: journal.ManagementIncome})
		if err != nil {
			t.Fatal(err)
		}
		total := decimal.Zero
		for _, e := range es {
			for _, p := range e.Postings {
				if p.Account == journal.ManagementIncome && p.Line == journal.LineFee {
					total = total.Add(p.Amount)
				}
			}
		}
		return total.StringFixed(2)
	}
	if b := feeSum(); b != "-100.00" {
		t.Fatalf("fees of February and March: %s", b)
	}
	for range 2 {
		if err := s.books.FeePass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if b := feeSum(); b != "-100.00" {
		t.Fatalf("fees after two passes: %s", b)
	}
	balanced("fees")

	step := func(what, resource, body string, q journal.Query, want string) int64 {
		t.Helper()
		before := dec(bal(q))
		data := s.must(t, acct, resource, body)
		balanced(what)
		if got := dec(bal(q)).Sub(before).StringFixed(2); got != want {
			t.Fatalf("%s moved %+v by %s, want %s", what, q, got, want)
		}
		for k, v := range data {
			if strings.HasSuffix(k, "_id") && k != "owner_id" && k != "property_id" {
				return int64(v.(float64))
			}
		}
		t.Fatalf("no id in %v", data)
		return 0
	}
	cash := journal.Query{LedgerAccount: journal.Cash}
	exO := step("owner's expense", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-02-12","amount":"80.25","category":"repairs","borne_by":"owner"}}`, ownerQ, "80.25")
	exM := step("manager's expense", "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-02-12","amount":"19.75","category":"supplies","borne_by":"manager"}}`,
		journal.Query{LedgerAccount: journal.ManagementExpense}, "19.75")
	po := step("payout", "owner-payout", fmt.Sprintf(`{"action":"create","payout":{"owner_id":%d,"date":"2027-02-28","amount":"200","currency":"EUR","method":"bank_transfer"}}`, oid), cash, "-200.00")
	step("owner's expense deleted", "owner-expense", fmt.Sprintf(`{"action":"delete","expense":{"expense_id":%d}}`, exO), ownerQ, "-80.25")
	step("manager's expense deleted", "owner-expense", fmt.Sprintf(`{"action":"delete","expense":{"expense_id":%d}}`, exM), cash, "19.75")
	step("payout deleted", "owner-payout", fmt.Sprintf(`{"action":"delete","payout":{"payout_id":%d}}`, po), ownerQ, "-200.00")
	// The agreement deleted: its fees reversed, the booking the account's own again.
	s.must(t, acct, "owner-agreement", fmt.Sprintf(`{"action":"delete","agreement":{"agreement_id":%d}}`, agID))
	balanced("agreement deleted")
	if b := feeSum(); b != "0.00" {
		t.Fatalf("fees after the agreement's delete: %s", b)
	}
	if b := bal(ownerQ); b != "0.00" {
		t.Fatalf("the owner is owed %s after every source of theirs is gone", b)
	}
	if b := bal(journal.Query{LedgerAccount: journal.ManagementIncome, BookingID: bk.BookingID}); b != "0.00" {
		t.Fatalf("commission left after the agreement's delete: %s", b)
	}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// stopped is a ledger whose writer stops after its write, before it touches: its marks are
// made, its touches never happen.
type stopped struct{ *journal.Service }

func (stopped) Touch(context.Context, string, string) error {
	return errors.New("stopped before the touch")
}

// A write marks its source before it is made, so that an owner payout or expense whose
// writer stopped before touching the ledger is posted by the ledger's repair, not lost.
func TestOwnerWritesStoppedBeforeTheLedgerAreRepaired(t *testing.T) {
	s := newOwnersServer(t)
	ctx := context.Background()
	jst, err := store.NewJournal(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	books := journal.New(jst)
	for kind, r := range s.books.Resolvers() {
		books.Register(kind, r)
	}
	books.Lease = 0
	s.books.SetJournal(stopped{books})
	acct := s.ownersAccount(t)
	oid := idOf(t, s.must(t, acct, "owner", `{"action":"create","owner":{"name":"Stopped Owner","kind":"person"}}`), "owner_id")
	s.must(t, acct, "owner-payout", fmt.Sprintf(`{"action":"create","payout":{"owner_id":%d,"date":"2027-02-28","amount":"120","currency":"EUR","method":"bank_transfer"}}`, oid))
	s.must(t, acct, "owner-expense", `{"action":"create","expense":{"internal_code":"P1","date":"2027-02-12","amount":"19.75","category":"supplies","borne_by":"manager"}}`)
	cash := journal.Query{LedgerAccount: journal.Cash, Currency: "EUR"}
	if b, err := books.Balance(ctx, acct, cash); err != nil || !b.IsZero() {
		t.Fatalf("cash %s (%v) before the repair: the touches were stopped", b, err)
	}
	if err := books.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if b, err := books.Balance(ctx, acct, cash); err != nil || b.StringFixed(2) != "-139.75" {
		t.Fatalf("cash %s (%v) after the repair, want -139.75: the payout and the expense", b, err)
	}
}
