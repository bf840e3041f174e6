package statement

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
)

// csvHeader is the CSV's one table: a row per line of the statement, its section first
// (docs/money.md section 5).
var csvHeader = []string{"section", "date", "booking_id", "property_id", "line", "label", "amount", "entry_id"}

// CSV renders s as one table (RFC 4180, CRLF line ends): a `statement` row naming it, the
// opening balance, each booking's lines and net, the expenses, fees, payouts and other
// postings, the totals per line, the net, the closing balance and the changes since the
// previous revision. Labels a spreadsheet would read as a formula start with a quote.
func CSV(s Statement) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.UseCRLF = true
	id := func(n int64) string {
		if n == 0 {
			return ""
		}
		return strconv.FormatInt(n, 10)
	}
	rows := [][]string{csvHeader,
		{"statement", s.CreatedAt[:min(10, len(s.CreatedAt))], "", "", "", text(fmt.Sprintf("Owner statement of %s (owner %d), %s to %s, %s, revision %d",
			s.Owner.Name, s.Owner.OwnerID, s.From, s.To, s.Currency, s.Revision)), "", s.StatementID},
		{"opening_balance", s.From, "", "", "", "Opening balance", s.OpeningBalance, ""},
	}
	for _, b := range s.Bookings {
		rows = append(rows, []string{"booking_stay", b.Checkin, id(b.BookingID), id(b.PropertyID), "stay", text(bookingTitle(b)), "", ""})
		for _, l := range b.Lines {
			rows = append(rows, []string{"booking", l.Date, id(b.BookingID), id(b.PropertyID), l.Line, text(l.Label), l.Amount, l.EntryID})
		}
		rows = append(rows, []string{"booking_net", "", id(b.BookingID), id(b.PropertyID), "net", "Booking net", b.Net, ""})
	}
	for _, sec := range []struct {
		name  string
		items []Item
	}{{"expense", s.Expenses}, {"fee", s.Fees}, {"payout", s.Payouts}, {"other", s.Other}} {
		for _, it := range sec.items {
			rows = append(rows, []string{sec.name, it.Date, "", id(it.PropertyID), it.Line, text(it.Label), it.Amount, it.EntryID})
		}
	}
	for _, t := range s.Totals {
		rows = append(rows, []string{"total", "", "", "", t.Line, "Total " + t.Line, t.Amount, ""})
	}
	rows = append(rows,
		[]string{"net", "", "", "", "", "Net of the period", s.Net, ""},
		[]string{"closing_balance", s.To, "", "", "", "Closing balance (net due)", s.ClosingBalance, ""})
	for _, c := range s.Changes {
		rows = append(rows, []string{"change", c.Date, id(c.BookingID), "", c.Line, text(c.Label + " (posted " + c.PostedAt + ")"), c.Amount, c.EntryID})
	}
	if err := w.WriteAll(rows); err != nil {
		return nil, fmt.Errorf("statement %s as CSV: %w", s.StatementID, err)
	}
	return buf.Bytes(), nil
}

// text keeps a free text from being read as a formula by a spreadsheet (OWASP's CSV
// injection advice): one starting with =, +, -, @, a tab or a carriage return gets a
// leading quote.
func text(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
