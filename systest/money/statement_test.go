package money

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/eventually"
)

// statementOut is the A answer of owner-statement generate and get (docs/money.md, 5).
type statementOut struct {
	StatementID    string `json:"statement_id"`
	Revision       int    `json:"revision"`
	Currency       string `json:"currency"`
	From           string `json:"from"`
	To             string `json:"to"`
	OpeningBalance string `json:"opening_balance"`
	Bookings       []struct {
		BookingID int64     `json:"booking_id"`
		Lines     []lineOut `json:"lines"`
		Net       string    `json:"net"`
	} `json:"bookings"`
	Expenses []lineOut `json:"expenses"`
	Fees     []lineOut `json:"fees"`
	Payouts  []lineOut `json:"payouts"`
	Other    []lineOut `json:"other"`
	Totals   []struct {
		Line   string `json:"line"`
		Amount string `json:"amount"`
	} `json:"totals"`
	Net            string `json:"net"`
	ClosingBalance string `json:"closing_balance"`
}

type lineOut struct {
	Date   string `json:"date"`
	Line   string `json:"line"`
	Amount string `json:"amount"`
}

// channelBooking books stay from..to of acc's property as a channel manager's reservation,
// the way integration-svc applies one (booking-svc's POST /internal/channel/reservation,
// signed as integration-svc): total in USD, commission what the channel keeps.
func (acc account) channelBooking(t *testing.T, from, to, total, commission string) int64 {
	t.Helper()
	const path = "/internal/channel/reservation"
	body := apitest.JSON(obj{"connection_id": 1, "channel": "BookingCom", "reservation_id": "R-" + acc.AccountID,
		"revision_id": "R-" + acc.AccountID + "-1", "order": 1, "status": "new", "property_id": acc.pid, "rate_plan_id": 0,
		"checkin": from, "checkout": to, "adults": 2, "currency": "USD", "total": total, "commission": commission,
		"guest": obj{"first_name": "Chan", "last_name": "Nel", "email": "chan@example.com", "country": "NL"}})
	h := map[string]string{}
	tenancy.NewSigner(tenancy.CallerIntegration, keys.Integration.Reveal()).SetHeaders(func(k, v string) { h[k] = v },
		tenancy.Tenant{AccountID: acc.AccountID, Sandbox: !acc.live}, http.MethodPost, path, []byte(body), time.Now())
	r := send(t, http.MethodPost, st.BookingURL+path, h, body, "channel reservation")
	var out struct {
		BookingID int64 `json:"booking_id"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil || r.Code != http.StatusOK || out.BookingID == 0 {
		t.Fatalf("channel reservation: HTTP %d %s", r.Code, r.Body)
	}
	return out.BookingID
}

// idOf reads the id field named key of an A answer's data.
func idOf(t *testing.T, r response, key string) int64 {
	t.Helper()
	var m map[string]any
	r.data(t, &m)
	switch v := m[key].(type) {
	case float64:
		return int64(v)
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil {
			return n
		}
	}
	t.Fatalf("%s: no %s in %s", r.what, key, r.Body)
	return 0
}

// TestOwnerStatement: a month M of a property its owner lets the account manage (20 % of
// the rent, a 50.00 monthly fee): a direct booking paid by card, a channel booking whose
// channel keeps 30.00, a booking cancelled on M-02 with 100.00 of its 300.00 refunded (the
// owner's override), an expense the owner bears and a payout. The statement generated
// through edge has the lines and totals of the hand-computed table below; its PDF, read by
// pdftotext, shows the totals; generated again it is the same revision, byte for byte in
// every format; the ledger balances.
func TestOwnerStatement(t *testing.T) {
	acc := newAccount(t, false)
	// M is a month wholly ahead (its first day 36 to 66 days from now).
	first := time.Now().UTC().AddDate(0, 0, 35)
	first = time.Date(first.Year(), first.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	m := func(d int) string { return first.AddDate(0, 0, d-1).Format(time.DateOnly) }
	last := first.AddDate(0, 1, -1).Format(time.DateOnly)
	ahead := func(date string) int { // days from today (day(n)) to date
		d, _ := time.Parse(time.DateOnly, date)
		return int(d.Sub(time.Now().UTC().Truncate(24*time.Hour)).Hours() / 24)
	}

	owner := idOf(t, acc.a(t, "owner", obj{"action": "create", "owner": obj{"name": "Olga Owner", "kind": "person",
		"email": "olga@example.com", "payout": obj{"method": "bank_transfer", "account_holder": "Olga Owner",
			"iban": "DE89370400440532013000"}}}).ok(t), "owner_id")
	acc.a(t, "owner-agreement", obj{"action": "create", "agreement": obj{"internal_code": acc.code, "owner_id": owner,
		"start_date": m(1), "end_date": last, "commission_percent": 20, "commission_basis": "rent",
		"monthly_fees": []obj{{"name": "Management fee", "amount": 50}}}}).ok(t)

	direct := acc.create(t, ahead(m(5)), ahead(m(8)), "Direct")
	channel := acc.channelBooking(t, m(10), m(12), "200.00", "30.00")
	cancelled := acc.create(t, ahead(m(20)), ahead(m(23)), "Cancelled")
	// The ledger posts a booking as it is when it reads it: the stay earned is posted before
	// the cancellation reverses it, so that the statement is the same whatever the timing.
	posted(t, acc, "the cancelled booking's stay", func(p posting) bool { return p.BookingID == cancelled.BookingID && p.Line == "rent" })
	advanceTo(t, m(2))
	var c bookingOut
	acc.b(t, "cancel", obj{"bookingId": cancelled.BookingID, "refundAmount": "100.00", "refundReason": "Guest fell ill"}).ok(t).data(t, &c)
	if c.Refund == nil || !c.Refund.Amount.Equal(decimal.NewFromInt(100)) || !c.Refund.Override {
		t.Fatalf("the cancel's refund: %+v, want the override's 100.00", c.Refund)
	}
	acc.refund(t, cancelled.BookingID, "succeeded", func(r *refundOut) bool { return r.Status == "succeeded" })
	acc.a(t, "owner-expense", obj{"action": "create", "expense": obj{"internal_code": acc.code, "date": m(15), "amount": "80.00",
		"category": "cleaning", "description": "Deep clean", "borne_by": "owner"}}).ok(t)
	acc.a(t, "owner-payout", obj{"action": "create", "payout": obj{"owner_id": owner, "date": m(25), "amount": "250.00",
		"currency": "USD", "method": "bank_transfer", "reference": "TR-0001"}}).ok(t)
	// The refund's entry is the last of the period: a statement generated before it would be
	// revised.
	posted(t, acc, "the refund", func(p posting) bool { return p.BookingID == cancelled.BookingID && p.Line == "refund" })

	// The hand-computed table: signed as the owner sees it (owed to the owner positive).
	type want struct {
		booking    int64
		date, line string
		amount     string
	}
	// The cancelled booking's stay, earned on its check-out day, was posted and is reversed on
	// that day; its kept 200.00 bears the agreement's commission (docs/money.md, 6, example 3).
	lines := []want{
		{direct.BookingID, m(8), "rent", "300.00"}, {direct.BookingID, m(8), "commission", "-60.00"},
		{channel, m(12), "rent", "200.00"}, {channel, m(12), "commission", "-40.00"}, {channel, m(12), "channel_commission", "-30.00"},
		{cancelled.BookingID, m(2), "cancellation_fee", "200.00"}, {cancelled.BookingID, m(2), "commission", "-40.00"},
		{cancelled.BookingID, m(23), "rent", "300.00"}, {cancelled.BookingID, m(23), "commission", "-60.00"},
		{cancelled.BookingID, m(23), "rent", "-300.00"}, {cancelled.BookingID, m(23), "commission", "60.00"},
	}
	nets := map[int64]string{direct.BookingID: "240.00", channel: "130.00", cancelled.BookingID: "160.00"}
	totals := map[string]string{"rent": "500.00", "commission": "-140.00", "channel_commission": "-30.00",
		"cancellation_fee": "200.00", "expense": "-80.00", "fee": "-50.00", "payout": "-250.00"}
	const closing = "150.00" // 240 + 130 + 160 − 80 − 50 − 250

	gen := obj{"action": "generate", "statement": obj{"owner_id": owner, "from": m(1), "to": last}}
	var s statementOut
	var raw []byte
	eventually.Holds(t, "the statement has every booking, the expense, the fee and the payout", within, func() bool {
		r := acc.a(t, "owner-statement", gen).ok(t)
		if !bytes.Equal(r.Body, raw) {
			t.Logf("generated: %s", r.Body) // shown when the wait fails
		}
		s, raw = statementOut{}, r.Body
		r.data(t, &s)
		return len(s.Bookings) == 3 && len(s.Expenses) == 1 && len(s.Fees) == 1 && len(s.Payouts) == 1 && s.ClosingBalance == closing
	})
	var got, exp []string
	for _, b := range s.Bookings {
		for _, l := range b.Lines {
			got = append(got, fmt.Sprintf("%d %s %s %s", b.BookingID, l.Date, l.Line, l.Amount))
		}
		if b.Net != nets[b.BookingID] {
			t.Fatalf("booking %d's net %s, want %s", b.BookingID, b.Net, nets[b.BookingID])
		}
	}
	for _, w := range lines {
		exp = append(exp, fmt.Sprintf("%d %s %s %s", w.booking, w.date, w.line, w.amount))
	}
	slices.Sort(got)
	slices.Sort(exp)
	if !slices.Equal(got, exp) {
		t.Fatalf("the statement's booking lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(exp, "\n"))
	}
	if e := s.Expenses[0]; e.Date != m(15) || e.Amount != "-80.00" {
		t.Fatalf("expense %+v", e)
	}
	if f := s.Fees[0]; f.Date != m(1) || f.Amount != "-50.00" {
		t.Fatalf("fee %+v", f)
	}
	if p := s.Payouts[0]; p.Date != m(25) || p.Amount != "-250.00" {
		t.Fatalf("payout %+v", p)
	}
	gotTotals := map[string]string{}
	for _, x := range s.Totals {
		if x.Amount != "0.00" {
			gotTotals[x.Line] = x.Amount
		}
	}
	if fmt.Sprint(gotTotals) != fmt.Sprint(totals) || s.OpeningBalance != "0.00" || s.Net != closing {
		t.Fatalf("totals %v, opening %s, net %s; want %v, 0.00, %s", gotTotals, s.OpeningBalance, s.Net, totals, closing)
	}

	// The PDF opens and shows the totals.
	pdf := statementFile(t, acc, s.StatementID, "pdf")
	cmd := exec.Command("pdftotext", "-layout", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	text, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	for _, want := range []string{"500.00", "-140.00", "-30.00", "200.00", "-80.00", "-50.00", "-250.00", closing} {
		if !strings.Contains(string(text), want) {
			t.Fatalf("the PDF's text lacks %s:\n%s", want, text)
		}
	}
	csv := statementFile(t, acc, s.StatementID, "csv")

	// Generated again: the same revision, the same bytes.
	again := acc.a(t, "owner-statement", gen).ok(t)
	if !bytes.Equal(again.Body, raw) {
		t.Fatalf("generated again:\n%s\nwant\n%s", again.Body, raw)
	}
	if !bytes.Equal(statementFile(t, acc, s.StatementID, "pdf"), pdf) || !bytes.Equal(statementFile(t, acc, s.StatementID, "csv"), csv) {
		t.Fatal("the PDF or CSV changed when generated again")
	}
	ledgerBalances(t, acc)
}

// statementFile is statement id in format (pdf, csv), through owner-statement get.
func statementFile(t *testing.T, acc account, id, format string) []byte {
	t.Helper()
	var out struct {
		File string `json:"file"`
	}
	acc.a(t, "owner-statement", obj{"action": "get", "statement": obj{"statement_id": id, "format": format}}).ok(t).data(t, &out)
	b, err := base64.StdEncoding.DecodeString(out.File)
	if err != nil || len(b) == 0 {
		t.Fatalf("statement %s as %s: %v (%d bytes)", id, format, err, len(b))
	}
	return b
}
