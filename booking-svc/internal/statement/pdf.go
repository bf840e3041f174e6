package statement

import (
	"bytes"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/go-pdf/fpdf"
)

// The statement's typeface: DejaVu Sans (fonts/LICENSE), embedded so that a name in any
// script it covers (Latin, Greek, Cyrillic, Armenian, Georgian, Hebrew, Arabic…) is written
// as it is, where a core PDF font (Windows-1252 only) would write '.' in its place. fpdf
// embeds only the glyphs a document uses.
var (
	//go:embed fonts/DejaVuSans.ttf
	fontRegular []byte
	//go:embed fonts/DejaVuSans-Bold.ttf
	fontBold []byte
)

// font is the family the document is written in.
const font = "dejavu"

// PDF renders s as an A4 document of text in an embedded Unicode font, so that a reader
// such as pdftotext finds the totals and the names as written. The same statement makes the same bytes: the
// document's dates are the revision's (CreatedAt), its objects are written in sorted order
// (SetCatalogSort) and nothing else in it varies.
func PDF(s Statement) ([]byte, error) {
	created, err := time.Parse(time.RFC3339, s.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("statement %s: created_at %q: %w", s.StatementID, s.CreatedAt, err)
	}
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCatalogSort(true)
	pdf.SetCreationDate(created)
	pdf.SetModificationDate(created)
	pdf.SetCompression(true)
	pdf.AddUTF8FontFromBytes(font, "", fontRegular)
	pdf.AddUTF8FontFromBytes(font, "B", fontBold)
	if err := pdf.Error(); err != nil {
		return nil, fmt.Errorf("statement %s: font: %w", s.StatementID, err)
	}
	pdf.SetTitle(fmt.Sprintf("Owner statement %s revision %d", s.StatementID, s.Revision), true)
	pdf.SetCreator("vros", false)
	pdf.SetAutoPageBreak(true, 15)
	pdf.AliasNbPages("")
	pdf.SetFooterFunc(func() {
		pdf.SetY(-12)
		pdf.SetFont(font, "", 8)
		pdf.CellFormat(0, 5, fmt.Sprintf("%s, revision %d, made %s. Page %d of {nb}", s.StatementID, s.Revision, s.CreatedAt, pdf.PageNo()),
			"", 0, "C", false, 0, "")
	})
	pdf.AddPage()

	pdf.SetFont(font, "B", 16)
	pdf.CellFormat(0, 9, "Owner statement", "", 1, "L", false, 0, "")
	pdf.SetFont(font, "", 10)
	line := func(label, value string) {
		pdf.SetFont(font, "B", 10)
		pdf.CellFormat(35, 6, label, "", 0, "L", false, 0, "")
		pdf.SetFont(font, "", 10)
		pdf.CellFormat(0, 6, value, "", 1, "L", false, 0, "")
	}
	line("Owner", fmt.Sprintf("%s (owner %d)", s.Owner.Name, s.Owner.OwnerID))
	line("Period", s.From+" to "+s.To)
	line("Currency", s.Currency)
	line("Statement", fmt.Sprintf("%s, revision %d", s.StatementID, s.Revision))
	pdf.Ln(3)

	// Columns: date, line, label, amount.
	const wDate, wLine, wAmount = 24.0, 38.0, 30.0
	wLabel := 190.0 - wDate - wLine - wAmount
	row := func(date, ln, label, amount string, bold bool) {
		style := ""
		if bold {
			style = "B"
		}
		pdf.SetFont(font, style, 9)
		pdf.CellFormat(wDate, 5.5, date, "", 0, "L", false, 0, "")
		pdf.CellFormat(wLine, 5.5, ln, "", 0, "L", false, 0, "")
		pdf.CellFormat(wLabel, 5.5, clip(label, 70), "", 0, "L", false, 0, "")
		pdf.CellFormat(wAmount, 5.5, amount, "", 1, "R", false, 0, "")
	}
	heading := func(title string) {
		pdf.Ln(2)
		pdf.SetFont(font, "B", 11)
		pdf.SetFillColor(235, 235, 235)
		pdf.CellFormat(0, 7, title, "", 1, "L", true, 0, "")
	}

	heading("Opening balance")
	row(s.From, "", "Owed to the owner at the start of the period", s.OpeningBalance, true)

	heading("Bookings")
	if len(s.Bookings) == 0 {
		row("", "", "No booking in the period", "", false)
	}
	for _, b := range s.Bookings {
		pdf.SetFont(font, "B", 9)
		pdf.CellFormat(0, 6, bookingTitle(b), "", 1, "L", false, 0, "")
		for _, l := range b.Lines {
			row(l.Date, l.Line, l.Label, l.Amount, false)
		}
		row("", "", "Booking net", b.Net, true)
	}
	for _, sec := range []struct {
		title string
		items []Item
	}{{"Expenses", s.Expenses}, {"Fees", s.Fees}, {"Payouts", s.Payouts}, {"Other", s.Other}} {
		if len(sec.items) == 0 && sec.title == "Other" {
			continue
		}
		heading(sec.title)
		if len(sec.items) == 0 {
			row("", "", "None", "", false)
		}
		for _, it := range sec.items {
			label := it.Label
			if it.PropertyID != 0 {
				label += " (property " + strconv.FormatInt(it.PropertyID, 10) + ")"
			}
			row(it.Date, it.Line, label, it.Amount, false)
		}
	}

	heading("Totals")
	for _, t := range s.Totals {
		row("", t.Line, "Total "+t.Line, t.Amount, false)
	}
	row("", "", "Net of the period", s.Net, true)
	row("", "", "Opening balance", s.OpeningBalance, true)
	row(s.To, "", "Closing balance (net due)", s.ClosingBalance, true)

	if len(s.Changes) > 0 {
		heading("Changes since the previous revision")
		for _, c := range s.Changes {
			row(c.Date, c.Line, c.Label+" (posted "+c.PostedAt+")", c.Amount, false)
		}
	}

	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("statement %s as PDF: %w", s.StatementID, err)
	}
	return buf.Bytes(), nil
}

// clip shortens s to at most n characters.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// bookingTitle names a booking: its ids, and its stay when the statement has it.
func bookingTitle(b Booking) string {
	t := fmt.Sprintf("Booking %d, property %d", b.BookingID, b.PropertyID)
	if b.PropertyName != "" {
		t = fmt.Sprintf("Booking %d, %s", b.BookingID, b.PropertyName)
	}
	if b.Checkin != "" {
		t += ", " + b.Checkin + " to " + b.Checkout
	}
	if b.Channel != "" {
		t += ", " + b.Channel
	}
	if b.Status != "" && b.Status != "reserved" {
		t += " (" + b.Status + ")"
	}
	return t
}
