package statement_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/journal"
	"github.com/vros/vros/booking-svc/internal/statement"
)

const (
	acct     = "acc1"
	owner    = int64(7)
	property = int64(101)
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// post is one posting: ledger account, amount, line, label, booking.
type post struct {
	account, amount, line, label string
	booking                      int64
}

// entry makes an entry of the owner's property, checking that it balances.
func entry(t *testing.T, source string, seq int64, date string, posted time.Time, ps ...post) journal.Entry {
	t.Helper()
	e := journal.Entry{ID: fmt.Sprintf("%s:%s:%d", acct, source, seq), AccountID: acct, Source: source, Seq: seq, Date: date,
		Currency: "EUR", PostedAt: posted}
	sum := decimal.Zero
	for _, p := range ps {
		jp := journal.Posting{Date: date, Currency: "EUR", Account: p.account, Amount: d(p.amount), PropertyID: property,
			BookingID: p.booking, Line: p.line, Label: p.label}
		if p.account == journal.Owner {
			jp.OwnerID = owner
		}
		sum = sum.Add(jp.Amount)
		e.Postings = append(e.Postings, jp)
	}
	if !sum.IsZero() {
		t.Fatalf("entry %s does not balance: %s", e.ID, sum)
	}
	return e
}

// handEntries is the month of the statement test, as the ledger posts it (docs/money.md
// section 4), for an owner whose agreement takes 20 % of rent less discounts:
//
//	February: booking 1 earned 500.00 rent, commission 100.00          → opening 400.00
//	2027-03-01 monthly fee 25.00
//	2027-03-08 booking 11 (direct) earned: rent 800.00, discount 50.00, cleaning 60.00,
//	           tax 40.00 (not the owner's), commission 20 % × 750.00 = 150.00
//	2027-03-05 booking 13 paid 300.00 (cash and guest funds: not the owner's)
//	2027-03-10 booking 13 cancelled: 200.00 refunded, 100.00 kept, commission 20 % × 100.00
//	           = 20.00 (the kept amount bears the agreement's commission, as the ledger posts)
//	2027-03-12 expense (maintenance) 120.00 borne by the owner
//	2027-03-15 booking 12 (channel) earned: rent 1000.00, channel commission 150.00,
//	           commission 20 % × 1000.00 = 200.00
//	2027-03-20 payout 500.00
//	2027-04-02 booking 14 earned (after the period: left out)
func handEntries(t *testing.T, posted time.Time) []journal.Entry {
	o, g, c := journal.Owner, journal.GuestFunds, journal.Cash
	return []journal.Entry{
		entry(t, "booking:1", 1, "2027-02-20", posted,
			post{g, "500.00", journal.LineRent, "", 1}, post{o, "-500.00", journal.LineRent, "Rent", 1},
			post{o, "100.00", journal.LineCommission, "Commission 20%", 1}, post{journal.ManagementIncome, "-100.00", journal.LineCommission, "", 1}),
		entry(t, "fee:5:2027-03", 1, "2027-03-01", posted,
			post{o, "25.00", journal.LineFee, "Management fee", 0}, post{journal.ManagementIncome, "-25.00", journal.LineFee, "", 0}),
		entry(t, "booking:11", 2, "2027-03-08", posted,
			post{g, "850.00", journal.LineRent, "", 11},
			post{o, "-800.00", journal.LineRent, "Rent", 11}, post{o, "50.00", journal.LineDiscount, "Early bird", 11},
			post{o, "-60.00", journal.LineService, "Cleaning", 11}, post{journal.TaxPayable, "-40.00", journal.LineTax, "City tax", 11},
			post{o, "150.00", journal.LineCommission, "Commission 20%", 11}, post{journal.ManagementIncome, "-150.00", journal.LineCommission, "", 11}),
		entry(t, "booking:13", 1, "2027-03-05", posted,
			post{c, "300.00", journal.LinePayment, "Card payment", 13}, post{g, "-300.00", journal.LinePayment, "Card payment", 13}),
		entry(t, "booking:13", 2, "2027-03-10", posted,
			post{g, "200.00", journal.LineRefund, "Refund", 13}, post{c, "-200.00", journal.LineRefund, "Refund", 13},
			post{g, "100.00", journal.LineCancellationFee, "", 13}, post{o, "-100.00", journal.LineCancellationFee, "Kept on cancellation", 13},
			post{o, "20.00", journal.LineCommission, "Commission 20%", 13}, post{journal.ManagementIncome, "-20.00", journal.LineCommission, "", 13}),
		entry(t, "expense:3", 1, "2027-03-12", posted,
			post{o, "120.00", journal.LineExpense, "Maintenance: boiler", 0}, post{c, "-120.00", journal.LineExpense, "", 0}),
		entry(t, "booking:12", 2, "2027-03-15", posted,
			post{g, "1000.00", journal.LineRent, "", 12}, post{o, "-1000.00", journal.LineRent, "Rent", 12},
			post{o, "150.00", journal.LineChannelCommission, "Channel commission", 12}, post{g, "-150.00", journal.LineChannelCommission, "", 12},
			post{o, "200.00", journal.LineCommission, "Commission 20%", 12}, post{journal.ManagementIncome, "-200.00", journal.LineCommission, "", 12}),
		entry(t, "payout:4", 1, "2027-03-20", posted,
			post{o, "500.00", journal.LinePayout, "Bank transfer", 0}, post{c, "-500.00", journal.LinePayout, "", 0}),
		entry(t, "booking:14", 2, "2027-04-02", posted,
			post{g, "300.00", journal.LineRent, "", 14}, post{o, "-300.00", journal.LineRent, "Rent", 14}),
	}
}

// handTotals is the hand-computed table of the month: what each line owes the owner.
var handTotals = []statement.Total{
	{Line: "rent", Amount: "1800.00"},               // 800 + 1000
	{Line: "discount", Amount: "-50.00"},            // booking 11
	{Line: "service", Amount: "60.00"},              // cleaning, booking 11
	{Line: "commission", Amount: "-370.00"},         // 150 + 20 + 200
	{Line: "channel_commission", Amount: "-150.00"}, // booking 12
	{Line: "cancellation_fee", Amount: "100.00"},    // 300 paid − 200 refunded
	{Line: "deposit_capture", Amount: "0.00"},
	{Line: "expense", Amount: "-120.00"},
	{Line: "fee", Amount: "-25.00"},
	{Line: "payout", Amount: "-500.00"},
}

const (
	handOpening = "400.00"  // 500 − 100 in February
	handNet     = "745.00"  // the sum of handTotals
	handClosing = "1145.00" // 400 + 745
)

func TestBuildMatchesTheHandComputedTable(t *testing.T) {
	created := time.Date(2027, 4, 1, 9, 30, 0, 0, time.UTC)
	st := statement.Build(statement.Input{StatementID: "7-EUR-20270301-20270331", Revision: 1, CreatedAt: created,
		OwnerID: owner, OwnerName: "Maria Rossi", Currency: "EUR", From: "2027-03-01", To: "2027-03-31",
		Entries: handEntries(t, created)})
	checkHand(t, st)
	if got := fmt.Sprint(statement.PeriodEntryIDs(handEntries(t, created), owner, "EUR", "2027-03-01", "2027-03-31")); got !=
		"[acc1:booking:11:2 acc1:booking:12:2 acc1:booking:13:2 acc1:expense:3:1 acc1:fee:5:2027-03:1 acc1:payout:4:1]" {
		t.Errorf("period entries %s", got)
	}
}

// checkHand compares a statement of the month with the hand-computed table.
func checkHand(t *testing.T, st statement.Statement) {
	t.Helper()
	if st.OpeningBalance != handOpening || st.Net != handNet || st.ClosingBalance != handClosing {
		t.Errorf("opening %s net %s closing %s, want %s %s %s", st.OpeningBalance, st.Net, st.ClosingBalance, handOpening, handNet, handClosing)
	}
	if fmt.Sprint(st.Totals) != fmt.Sprint(handTotals) {
		t.Errorf("totals\n%v\nwant\n%v", st.Totals, handTotals)
	}
	// The bookings in the order of their first posting, each with its lines and net.
	want := []struct {
		id    int64
		lines string
		net   string
	}{
		{11, "rent 800.00, discount -50.00, service 60.00, commission -150.00", "660.00"},
		{13, "commission -20.00, cancellation_fee 100.00", "80.00"},
		{12, "rent 1000.00, commission -200.00, channel_commission -150.00", "650.00"},
	}
	if len(st.Bookings) != len(want) {
		t.Fatalf("%d bookings, want %d: %+v", len(st.Bookings), len(want), st.Bookings)
	}
	for i, w := range want {
		b := st.Bookings[i]
		var lines []string
		for _, l := range b.Lines {
			lines = append(lines, l.Line+" "+l.Amount)
		}
		if b.BookingID != w.id || strings.Join(lines, ", ") != w.lines || b.Net != w.net {
			t.Errorf("booking %d: %d %s net %s, want %d %s net %s", i, b.BookingID, strings.Join(lines, ", "), b.Net, w.id, w.lines, w.net)
		}
	}
	item := func(its []statement.Item) string {
		var s []string
		for _, it := range its {
			s = append(s, it.Date+" "+it.Amount)
		}
		return strings.Join(s, ", ")
	}
	if item(st.Expenses) != "2027-03-12 -120.00" || item(st.Fees) != "2027-03-01 -25.00" || item(st.Payouts) != "2027-03-20 -500.00" ||
		len(st.Other) != 0 {
		t.Errorf("expenses %s fees %s payouts %s other %v", item(st.Expenses), item(st.Fees), item(st.Payouts), st.Other)
	}
}

func TestRenderersAreReproducibleAndReadable(t *testing.T) {
	created := time.Date(2027, 4, 1, 9, 30, 0, 0, time.UTC)
	in := statement.Input{StatementID: "7-EUR-20270301-20270331", Revision: 1, CreatedAt: created,
		OwnerID: owner, OwnerName: "Maria Rossi-Müller Ζωή Жукова", Currency: "EUR", From: "2027-03-01", To: "2027-03-31"}
	render := func() (j, c, p []byte) {
		in.Entries = handEntries(t, created)
		st := statement.Build(in)
		var err error
		if j, err = st.JSON(); err != nil {
			t.Fatal(err)
		}
		// Every format from the stored JSON, as the service does.
		back, err := statement.Parse(j)
		if err != nil {
			t.Fatal(err)
		}
		if c, err = statement.CSV(back); err != nil {
			t.Fatal(err)
		}
		if p, err = statement.PDF(back); err != nil {
			t.Fatal(err)
		}
		return j, c, p
	}
	j1, c1, p1 := render()
	j2, c2, p2 := render()
	if !bytes.Equal(j1, j2) || !bytes.Equal(c1, c2) || !bytes.Equal(p1, p2) {
		t.Fatal("the same statement rendered twice differs")
	}
	rows, err := csv.NewReader(bytes.NewReader(c1)).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v", err)
	}
	found := map[string]string{}
	for _, r := range rows {
		if r[0] == "total" || r[0] == "closing_balance" || r[0] == "opening_balance" {
			found[r[0]+" "+r[4]] = r[6]
		}
	}
	for _, tot := range handTotals {
		if found["total "+tot.Line] != tot.Amount {
			t.Errorf("CSV total %s = %q, want %s", tot.Line, found["total "+tot.Line], tot.Amount)
		}
	}
	if found["closing_balance "] != handClosing || found["opening_balance "] != handOpening {
		t.Errorf("CSV balances %v", found)
	}
	if !bytes.HasPrefix(p1, []byte("%PDF-")) {
		t.Fatalf("not a PDF: %q", p1[:min(20, len(p1))])
	}
	text := PDFText(t, p1)
	if text == "" {
		return
	}
	// The name as written, in scripts outside Windows-1252 too.
	for _, want := range []string{"Owner statement", "Maria Rossi-Müller Ζωή Жукова", "2027-03-01 to 2027-03-31",
		"Closing balance (net due)", handClosing, "Total commission", "-370.00", "Total rent", "1800.00", "-120.00"} {
		if !strings.Contains(text, want) {
			t.Errorf("pdftotext does not show %q:\n%s", want, text)
		}
	}
}

// PDFText is the text pdftotext reads from pdf ("" when the test was skipped: pdftotext is
// absent and VROS_REQUIRE_PDFTOTEXT is not set, as `make test-go` sets it).
func PDFText(t *testing.T, pdf []byte) string {
	t.Helper()
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("VROS_REQUIRE_PDFTOTEXT") != "" {
			t.Fatalf("pdftotext is required (VROS_REQUIRE_PDFTOTEXT) and absent: make poppler installs it")
		}
		t.Skip("pdftotext is absent (make poppler installs it)")
		return ""
	}
	path := filepath.Join(t.TempDir(), "statement.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-layout", "-enc", "UTF-8", path, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v: %s", err, out)
	}
	return string(out)
}
