package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/journal"
	"github.com/vros/vros/booking-svc/internal/statement"
	"github.com/vros/vros/booking-svc/internal/store"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
)

// statementServer is booking-svc's routes with the owner statements over the test database.
type statementServer struct {
	app    *fiber.App
	ledger *journal.Service
}

func newStatementServer(t *testing.T) *statementServer {
	t.Helper()
	s := newServer(t)
	ctx := context.Background()
	js, err := store.NewJournal(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := store.NewStatements(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	ledger := journal.New(js)
	routes := New(s.svc, s.feeds, booking.NewUsers(s.st, 4), s.keys)
	routes.SetStatements(&statement.Service{Ledger: ledger, Store: ss,
		Owners: func(_ context.Context, _ string, id int64) (string, bool, error) {
			return fmt.Sprintf("Owner %d", id), id < 100, nil
		}})
	tel, err := telemetry.Setup(ctx, "booking-api-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: 1 << 20})
	routes.Register(app, tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerEdge, Key: testKey}))
	return &statementServer{app: app, ledger: ledger}
}

// a sends an owner-statement request of account, as edge forwards it.
func (s *statementServer) a(t *testing.T, account, body string) (int, map[string]any, []byte) {
	t.Helper()
	const path = "/internal/a/owner-statement"
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(publicURLHeader, "https://edge.example.com")
	tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: account}, http.MethodPost, path, []byte(body), time.Now())
	resp, err := s.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s: not JSON: %s", body, out)
	}
	return resp.StatusCode, m, out
}

// public sends an unsigned GET, as edge forwards the owner's link.
func (s *statementServer) public(t *testing.T, path string) (*http.Response, []byte) {
	t.Helper()
	resp, err := s.app.Test(httptest.NewRequest(http.MethodGet, path, nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

// postMonth posts a rent and a commission of owner 7 on 2027-03-10, in EUR.
func (s *statementServer) postMonth(t *testing.T, account string) {
	t.Helper()
	d := decimal.RequireFromString
	ps := []journal.Posting{
		{Date: "2027-03-10", Currency: "EUR", Account: journal.GuestFunds, Amount: d("700.00"), BookingID: 5, PropertyID: 1, Line: journal.LineRent},
		{Date: "2027-03-10", Currency: "EUR", Account: journal.Owner, Amount: d("-700.00"), OwnerID: 7, BookingID: 5, PropertyID: 1, Line: journal.LineRent, Label: "Rent"},
		{Date: "2027-03-10", Currency: "EUR", Account: journal.Owner, Amount: d("70.00"), OwnerID: 7, BookingID: 5, PropertyID: 1, Line: journal.LineCommission, Label: "Commission 10%"},
		{Date: "2027-03-10", Currency: "EUR", Account: journal.ManagementIncome, Amount: d("-70.00"), BookingID: 5, PropertyID: 1, Line: journal.LineCommission},
	}
	if _, err := s.ledger.Sync(context.Background(), account, "booking:5", ps); err != nil {
		t.Fatal(err)
	}
}

// TestOwnerStatementRules: every violation names its field and rule, all at once.
func TestOwnerStatementRules(t *testing.T) {
	s := newStatementServer(t)
	acct := newAccount("strules")
	s.postMonth(t, acct)
	cases := []struct{ body, want string }{
		{`{}`, `action: is required`},
		{`{"action":"send"}`, `action: must be one of`},
		{`{"action":"generate"}`, `statement: is required`},
		{`{"action":"generate","statement":{}}`, `statement.owner_id: is required|statement.from: is required|statement.to: is required`},
		{`{"action":"generate","statement":{"owner_id":7,"from":"2027-03-31","to":"2027-03-01"}}`, `statement.to: must not be before from`},
		{`{"action":"generate","statement":{"owner_id":7,"from":"2027-01-01","to":"2028-01-02"}}`, `statement.to: must be at most 365 days after from`},
		{`{"action":"generate","statement":{"owner_id":7,"from":"2027-02-30","to":"2027-03-31","currency":"EURO"}}`, `statement.from: |statement.currency: `},
		{`{"action":"generate","statement":{"owner_id":7,"from":"2027-03-01","to":"2027-03-31","currency":"XYZ"}}`, `statement.currency: must be an ISO 4217 currency code`},
		{`{"action":"generate","statement":{"owner_id":8,"from":"2027-03-01","to":"2027-03-31"}}`, `statement.currency: is required: the owner has no postings`},
		{`{"action":"get","statement":{"statement_id":"x","format":"doc","revision":0}}`, `statement.format: must be one of|statement.revision: `},
		{`{"action":"link","statement":{}}`, `statement.statement_id: is required`},
	}
	for _, c := range cases {
		code, m, raw := s.a(t, acct, c.body)
		if code != http.StatusBadRequest || m["error_type"] != "validation_error" {
			t.Errorf("%s: %d %s", c.body, code, raw)
			continue
		}
		var got []string
		for _, e := range m["errors"].([]any) {
			e := e.(map[string]any)
			got = append(got, fmt.Sprintf("%s: %s", e["field"], e["message"]))
		}
		for _, w := range strings.Split(c.want, "|") {
			if !strings.Contains(strings.Join(got, "\n"), w) {
				t.Errorf("%s: %s, want %q", c.body, raw, w)
			}
		}
	}
	// A 366-day period is allowed.
	if code, _, raw := s.a(t, acct, `{"action":"generate","statement":{"owner_id":7,"from":"2027-01-01","to":"2028-01-01"}}`); code != 200 {
		t.Errorf("366 days: %d %s", code, raw)
	}
	if code, _, raw := s.a(t, acct, `{"action":"generate","statement":{"owner_id":100,"from":"2027-03-01","to":"2027-03-31","currency":"eur"}}`); code != 404 ||
		!strings.Contains(string(raw), "owner 100 does not exist") {
		t.Errorf("unknown owner: %d %s", code, raw)
	}
}

// TestOwnerStatementResource: generate, get in every format, list and link, and the link's
// unsigned read; another account finds none of it.
func TestOwnerStatementResource(t *testing.T) {
	s := newStatementServer(t)
	acct := newAccount("stres")
	s.postMonth(t, acct)
	gen := `{"action":"generate","statement":{"owner_id":"7","from":"2027-03-01","to":"2027-03-31"}}`
	code, m, raw := s.a(t, acct, gen)
	if code != 200 {
		t.Fatalf("generate: %d %s", code, raw)
	}
	first := raw
	data := m["data"].(map[string]any)
	id := data["statement_id"].(string)
	if id != "7-EUR-20270301-20270331" || data["closing_balance"] != "630.00" || data["revision"] != 1.0 {
		t.Fatalf("generate: %s", raw)
	}
	// Again: the same bytes.
	if _, _, again := s.a(t, acct, gen); !bytes.Equal(again, raw) {
		t.Errorf("generate again:\n%s\nfirst:\n%s", again, raw)
	}
	if _, _, got := s.a(t, acct, `{"action":"get","statement":{"statement_id":"`+id+`"}}`); !bytes.Equal(got, raw) {
		t.Errorf("get json:\n%s", got)
	}
	var files = map[string][]byte{}
	for _, f := range []string{"csv", "pdf"} {
		code, m, raw := s.a(t, acct, `{"action":"get","statement":{"statement_id":"`+id+`","revision":1,"format":"`+strings.ToUpper(f)+`"}}`)
		if code != 200 {
			t.Fatalf("get %s: %d %s", f, code, raw)
		}
		d := m["data"].(map[string]any)
		b, err := base64.StdEncoding.DecodeString(d["file"].(string))
		if err != nil || d["filename"] != "statement-"+id+"-r1."+f || d["format"] != f {
			t.Fatalf("get %s: %v %s", f, err, raw)
		}
		files[f] = b
	}
	if !bytes.HasPrefix(files["pdf"], []byte("%PDF-")) || !bytes.Contains(files["csv"], []byte("closing_balance,2027-03-31,,,,Closing balance (net due),630.00,")) {
		t.Errorf("files: %q…", files["csv"])
	}
	// By owner and period, with or without the currency.
	for _, ref := range []string{`"owner_id":7,"from":"2027-03-01","to":"2027-03-31"`, `"owner_id":7,"from":"2027-03-01","to":"2027-03-31","currency":"eur"`} {
		if _, _, got := s.a(t, acct, `{"action":"get","statement":{`+ref+`}}`); !bytes.Equal(got, raw) {
			t.Errorf("get by %s:\n%s", ref, got)
		}
	}
	for _, ref := range []string{`"owner_id":7,"from":"2027-03-01","to":"2027-03-30"`, `"owner_id":7,"from":"2027-03-01","to":"2027-03-31","currency":"USD"`} {
		if code, _, got := s.a(t, acct, `{"action":"get","statement":{`+ref+`}}`); code != 404 {
			t.Errorf("get by %s: %d %s", ref, code, got)
		}
	}
	if code, _, got := s.a(t, acct, `{"action":"link","statement":{"owner_id":7}}`); code != 400 ||
		!strings.Contains(string(got), `"statement.from","message":"is required"`) {
		t.Errorf("link by owner alone: %d %s", code, got)
	}
	if code, m, raw := s.a(t, acct, `{"action":"list"}`); code != 200 || len(m["data"].(map[string]any)["statements"].([]any)) != 1 {
		t.Errorf("list: %d %s", code, raw)
	}
	if code, m, raw := s.a(t, acct, `{"action":"list","statement":{"owner_id":8}}`); code != 200 || len(m["data"].(map[string]any)["statements"].([]any)) != 0 {
		t.Errorf("list of owner 8: %d %s", code, raw)
	}

	// The owner's link, and its read without credentials.
	code, m, raw = s.a(t, acct, `{"action":"link","statement":{"statement_id":"`+id+`"}}`)
	if code != 200 {
		t.Fatalf("link: %d %s", code, raw)
	}
	l := m["data"].(map[string]any)
	path := l["path"].(string)
	token := strings.TrimPrefix(path, "/statements/")
	if !statement.ValidToken(token) || l["url"] != "https://edge.example.com"+path || l["pdf_url"] != "https://edge.example.com"+path+"/statement.pdf" {
		t.Fatalf("link: %s", raw)
	}
	resp, body := s.public(t, "/internal/statements/"+token)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || !bytes.Equal(body, dataOf(t, first)) {
		t.Errorf("link read: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	for f, ct := range map[string]string{"pdf": "application/pdf", "csv": "text/csv; charset=utf-8"} {
		resp, body := s.public(t, "/internal/statements/"+token+"?format="+f)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ct || !bytes.Equal(body, files[f]) {
			t.Errorf("link read of %s: %d %s", f, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	for _, p := range []string{"/internal/statements/" + token + "?format=doc", "/internal/statements/short",
		"/internal/statements/" + strings.Repeat("A", 43)} {
		resp, body := s.public(t, p)
		if resp.StatusCode != 404 || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %d %s", p, resp.StatusCode, body)
		}
	}

	// Another account: nothing of the first.
	other := newAccount("stother")
	for _, body := range []string{`{"action":"get","statement":{"statement_id":"` + id + `"}}`,
		`{"action":"get","statement":{"statement_id":"` + id + `","revision":1,"format":"pdf"}}`,
		`{"action":"link","statement":{"statement_id":"` + id + `"}}`} {
		if code, _, raw := s.a(t, other, body); code != 404 {
			t.Errorf("another account's %s: %d %s", body, code, raw)
		}
	}
	if code, m, raw := s.a(t, other, `{"action":"list"}`); code != 200 || len(m["data"].(map[string]any)["statements"].([]any)) != 0 {
		t.Errorf("another account's list: %d %s", code, raw)
	}
}

// dataOf is the data of an A answer, as sent.
func dataOf(t *testing.T, answer []byte) []byte {
	t.Helper()
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(answer, &env); err != nil {
		t.Fatal(err)
	}
	return env.Data
}
