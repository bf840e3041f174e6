package api

import (
	"context"
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
	"github.com/vros/vros/booking-svc/internal/store"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
)

// ledgerServer is booking-svc's routes with the account's ledger over the test database.
type ledgerServer struct {
	app    *fiber.App
	ledger *journal.Service
}

func newLedgerServer(t *testing.T) *ledgerServer {
	t.Helper()
	s := newServer(t)
	ctx := context.Background()
	js, err := store.NewJournal(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	l := journal.New(js)
	routes := New(s.svc, s.feeds, booking.NewUsers(s.st, 4), s.keys)
	routes.SetLedger(l)
	tel, err := telemetry.Setup(ctx, "booking-api-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: 1 << 20})
	routes.Register(app, tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerEdge, Key: testKey}))
	return &ledgerServer{app: app, ledger: l}
}

func (s *ledgerServer) a(t *testing.T, account, body string) (int, map[string]any, []byte) {
	t.Helper()
	const path = "/internal/a/account-ledger"
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
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

// TestAccountLedger: entries by period, owner, booking and currency; balances as of a day;
// every rule names its field; another account sees nothing.
func TestAccountLedger(t *testing.T) {
	s := newLedgerServer(t)
	acct := newAccount("ledger")
	d := decimal.RequireFromString
	ctx := context.Background()
	for _, src := range []struct {
		source string
		ps     []journal.Posting
	}{
		{"booking:5", []journal.Posting{
			{Date: "2027-03-01", Currency: "EUR", Account: journal.Cash, Amount: d("700"), BookingID: 5, PropertyID: 1, Line: journal.LinePayment, Label: "payment 1"},
			{Date: "2027-03-01", Currency: "EUR", Account: journal.GuestFunds, Amount: d("-700"), BookingID: 5, PropertyID: 1, Line: journal.LinePayment, Label: "payment 1"},
			{Date: "2027-03-10", Currency: "EUR", Account: journal.GuestFunds, Amount: d("700"), BookingID: 5, PropertyID: 1, Line: journal.LineRent},
			{Date: "2027-03-10", Currency: "EUR", Account: journal.Owner, Amount: d("-700"), OwnerID: 7, BookingID: 5, PropertyID: 1, Line: journal.LineRent},
			{Date: "2027-03-10", Currency: "EUR", Account: journal.Owner, Amount: d("70"), OwnerID: 7, BookingID: 5, PropertyID: 1, Line: journal.LineCommission},
			{Date: "2027-03-10", Currency: "EUR", Account: journal.ManagementIncome, Amount: d("-70"), BookingID: 5, PropertyID: 1, Line: journal.LineCommission},
		}},
		{"booking:6", []journal.Posting{
			{Date: "2027-03-05", Currency: "JPY", Account: journal.Cash, Amount: d("9000"), BookingID: 6, PropertyID: 2, Line: journal.LinePayment},
			{Date: "2027-03-05", Currency: "JPY", Account: journal.GuestFunds, Amount: d("-9000"), BookingID: 6, PropertyID: 2, Line: journal.LinePayment},
		}},
	} {
		if _, err := s.ledger.Sync(ctx, acct, src.source, src.ps); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(m map[string]any) string {
		var out []string
		for _, e := range m["data"].(map[string]any)["entries"].([]any) {
			out = append(out, strings.TrimPrefix(e.(map[string]any)["entry_id"].(string), acct+":"))
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct{ filter, want string }{
		{`"from":"2027-03-01","to":"2027-03-31"`, "booking:5:1 booking:6:1 booking:5:2"},
		{`"from":"2027-03-02","to":"2027-03-31","currency":"eur"`, "booking:5:2"},
		{`"from":"2027-03-01","to":"2027-03-31","owner_id":7`, "booking:5:2"},
		{`"from":"2027-03-01","to":"2027-03-31","booking_id":"6"`, "booking:6:1"},
		{`"from":"2027-04-01","to":"2027-04-30"`, ""},
	} {
		code, m, raw := s.a(t, acct, `{"action":"entries","ledger":{`+c.filter+`}}`)
		if code != 200 || ids(m) != c.want {
			t.Errorf("%s: %d %s, want %s", c.filter, code, raw, c.want)
		}
	}
	_, m, _ := s.a(t, acct, `{"action":"entries","ledger":{"from":"2027-03-10","to":"2027-03-10"}}`)
	e := m["data"].(map[string]any)["entries"].([]any)[0].(map[string]any)
	p := e["postings"].([]any)[0].(map[string]any)
	if e["date"] != "2027-03-10" || e["currency"] != "EUR" || e["source"] != "booking:5" || p["amount"] != "700.00" || p["account"] != "guest_funds" {
		t.Errorf("entry: %v", e)
	}

	for _, c := range []struct{ body, want string }{
		{`{"action":"balances","ledger":{"as_of":"2027-03-09","currency":"EUR"}}`, `[{"account":"cash","amount":"700.00"},{"account":"guest_funds","amount":"-700.00"}]`},
		{`{"action":"balances","ledger":{"as_of":"2027-03-31","currency":"EUR"}}`, `[{"account":"cash","amount":"700.00"},{"account":"guest_funds","amount":"0.00"},{"account":"management_income","amount":"-70.00"},{"account":"owner","amount":"-630.00","owner_id":7}]`},
		{`{"action":"balances","ledger":{"as_of":"2027-03-31","currency":"JPY"}}`, `[{"account":"cash","amount":"9000"},{"account":"guest_funds","amount":"-9000"}]`},
	} {
		code, m, raw := s.a(t, acct, c.body)
		got, _ := json.Marshal(m["data"].(map[string]any)["balances"])
		if code != 200 || string(got) != c.want {
			t.Errorf("%s: %d %s, want %s", c.body, code, raw, c.want)
		}
	}

	for _, c := range []struct{ body, want string }{
		{`{}`, `action: is required|ledger: is required`},
		{`{"action":"post","ledger":{}}`, `action: must be one of`},
		{`{"action":"entries","ledger":{}}`, `ledger.from: is required|ledger.to: is required`},
		{`{"action":"entries","ledger":{"from":"2027-03-31","to":"2027-03-01","owner_id":0,"currency":"EURO"}}`, `ledger.to: must not be before from|ledger.owner_id: |ledger.currency: `},
		{`{"action":"entries","ledger":{"from":"2027-01-01","to":"2028-01-02"}}`, `ledger.to: must be at most 365 days after from`},
		{`{"action":"balances","ledger":{"as_of":"2027-02-30"}}`, `ledger.as_of: |ledger.currency: is required`},
		{`{"action":"balances","ledger":{"as_of":"2027-02-28","currency":"XYZ"}}`, `ledger.currency: must be an ISO 4217 currency code`},
	} {
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

	// Another account's ledger is its own.
	if code, m, raw := s.a(t, newAccount("ledger2"), `{"action":"entries","ledger":{"from":"2027-03-01","to":"2027-03-31"}}`); code != 200 || ids(m) != "" {
		t.Errorf("another account: %d %s", code, raw)
	}
}
