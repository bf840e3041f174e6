// Package statement builds an owner's statement for a period from the ledger's entries
// (docs/money.md, "Statements"): the opening balance, the bookings with their lines and net,
// the expenses, fees and payouts, the totals per line and the closing balance (the net due),
// and renders it as JSON, CSV and PDF. Build and the renderers are pure: the same entries
// make the same bytes. Service (service.go) keeps each statement's revisions, so that a
// statement generated again is the same bytes unless an entry of its period was posted since.
package statement

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/text/currency"

	"github.com/vros/vros/booking-svc/internal/journal"
)

// Statement is one revision of an owner's statement: the JSON of docs/money.md section 5.
// Every amount is a decimal string with the currency's digits, signed as the owner sees it:
// positive is owed to the owner (rent), negative is owed by the owner or paid to them
// (commission, expenses, fees, payouts).
type Statement struct {
	StatementID    string    `json:"statement_id"`
	Revision       int       `json:"revision"`
	CreatedAt      string    `json:"created_at"` // RFC 3339, UTC, seconds
	Owner          Owner     `json:"owner"`
	Currency       string    `json:"currency"`
	From           string    `json:"from"`
	To             string    `json:"to"`
	OpeningBalance string    `json:"opening_balance"`
	Bookings       []Booking `json:"bookings"`
	Expenses       []Item    `json:"expenses"`
	Fees           []Item    `json:"fees"`
	Payouts        []Item    `json:"payouts"`
	Other          []Item    `json:"other"`
	Totals         []Total   `json:"totals"`
	Net            string    `json:"net"`             // the period's movement: the sum of Totals
	ClosingBalance string    `json:"closing_balance"` // opening + net: the net due
	Changes        []Change  `json:"changes"`
}

// Owner is whom the statement is for.
type Owner struct {
	OwnerID int64  `json:"owner_id"`
	Name    string `json:"name"`
}

// Booking is a booking with its lines in the period and their sum.
type Booking struct {
	BookingID  int64 `json:"booking_id"`
	PropertyID int64 `json:"property_id"`
	// The stay, as the booking was when the revision was made (absent: the booking is gone).
	PropertyName string `json:"property_name,omitempty"`
	Checkin      string `json:"checkin,omitempty"`
	Checkout     string `json:"checkout,omitempty"`
	Channel      string `json:"channel,omitempty"` // "direct" or the channel that sold it
	Status       string `json:"status,omitempty"`  // reserved or cancelled
	Lines        []Item `json:"lines"`
	Net          string `json:"net"`
}

// Stay is what a statement shows of a booking besides its postings.
type Stay struct {
	PropertyName, Checkin, Checkout, Channel, Status string
}

// Item is one posting on the owner's account.
type Item struct {
	Date       string `json:"date"`
	Line       string `json:"line"`
	Label      string `json:"label"`
	Amount     string `json:"amount"`
	PropertyID int64  `json:"property_id,omitempty"`
	EntryID    string `json:"entry_id"`
}

// Total is the sum of one line over the period.
type Total struct {
	Line   string `json:"line"`
	Amount string `json:"amount"`
}

// Change is a posting of an entry added since the previous revision.
type Change struct {
	EntryID   string `json:"entry_id"`
	Date      string `json:"date"`
	PostedAt  string `json:"posted_at"`
	Line      string `json:"line"`
	Label     string `json:"label"`
	Amount    string `json:"amount"`
	BookingID int64  `json:"booking_id,omitempty"`
}

// LineOpening is the line of the change a different opening balance makes (an entry dated
// before the period, posted since the previous revision).
const LineOpening = "opening_balance"

// bookingLines are the lines of a booking, in the order the totals list them; the lines of
// expenses, fees and payouts follow.
var totalLines = []string{
	journal.LineRent, journal.LineDiscount, journal.LineService, journal.LineCommission,
	journal.LineChannelCommission, journal.LineCancellationFee, journal.LineDepositCapture,
	journal.LineExpense, journal.LineFee, journal.LinePayout,
}

// Input is what a statement is built from.
type Input struct {
	StatementID string
	Revision    int
	CreatedAt   time.Time
	OwnerID     int64
	OwnerName   string
	Currency    string
	From, To    string // YYYY-MM-DD, both included
	// Entries are the owner's entries of any date up to To (later ones and postings of other
	// owners, ledger accounts and currencies are left out).
	Entries []journal.Entry
	Changes []Change
	// Stays are the bookings' stays, by booking id (a booking without one shows its ids only).
	Stays map[int64]Stay
}

// posting is an owner posting with its entry.
type posting struct {
	entry *journal.Entry
	index int
	p     journal.Posting
}

// ownerPostings returns the postings of in's owner and currency dated up to to, by date,
// entry id, then line (in the totals' order), label and place in the entry: the ledger keeps
// an entry's postings in an order of its own.
func ownerPostings(entries []journal.Entry, owner int64, cur, to string) []posting {
	var out []posting
	for i := range entries {
		e := &entries[i]
		for j, p := range e.Postings {
			date := cmp.Or(p.Date, e.Date)
			cu := cmp.Or(p.Currency, e.Currency)
			if p.Account != journal.Owner || p.OwnerID != owner || cu != cur || date > to {
				continue
			}
			p.Date, p.Currency = date, cu
			out = append(out, posting{entry: e, index: j, p: p})
		}
	}
	slices.SortStableFunc(out, func(a, b posting) int {
		return cmp.Or(cmp.Compare(a.p.Date, b.p.Date), cmp.Compare(a.entry.ID, b.entry.ID), cmp.Compare(lineRank(a.p.Line), lineRank(b.p.Line)),
			cmp.Compare(a.p.Line, b.p.Line), cmp.Compare(a.p.Label, b.p.Label), cmp.Compare(a.index, b.index))
	})
	return out
}

// lineRank orders the lines of one entry as the totals list them, other lines after.
func lineRank(line string) int {
	if i := slices.Index(totalLines, line); i >= 0 {
		return i
	}
	return len(totalLines)
}

// PeriodEntryIDs returns the ids of the entries with a posting of the owner's in currency
// dated from to to, sorted: what a revision is built from.
func PeriodEntryIDs(entries []journal.Entry, owner int64, cur, from, to string) []string {
	var ids []string
	for _, p := range ownerPostings(entries, owner, cur, to) {
		if p.p.Date >= from {
			ids = append(ids, p.entry.ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Opening returns what is owed to the owner before from: minus the sum of their postings
// dated before it.
func Opening(entries []journal.Entry, owner int64, cur, from string) decimal.Decimal {
	sum := decimal.Zero
	for _, p := range ownerPostings(entries, owner, cur, from) {
		if p.p.Date < from {
			sum = sum.Add(p.p.Amount)
		}
	}
	return sum.Neg()
}

// Build makes the statement of in. It is a function of in alone.
func Build(in Input) Statement {
	scale := Scale(in.Currency)
	f := func(d decimal.Decimal) string { return Format(d, scale) }
	st := Statement{
		StatementID: in.StatementID, Revision: in.Revision, CreatedAt: in.CreatedAt.UTC().Format(time.RFC3339),
		Owner: Owner{OwnerID: in.OwnerID, Name: in.OwnerName}, Currency: in.Currency, From: in.From, To: in.To,
		Bookings: []Booking{}, Expenses: []Item{}, Fees: []Item{}, Payouts: []Item{}, Other: []Item{},
		Changes: slices.Clone(in.Changes),
	}
	if st.Changes == nil {
		st.Changes = []Change{}
	}
	opening := Opening(in.Entries, in.OwnerID, in.Currency, in.From)
	totals := map[string]decimal.Decimal{}
	net := decimal.Zero
	type bk struct {
		b   Booking
		sum decimal.Decimal
	}
	var bookings []*bk
	byID := map[int64]*bk{}
	for _, p := range ownerPostings(in.Entries, in.OwnerID, in.Currency, in.To) {
		if p.p.Date < in.From {
			continue
		}
		amount := p.p.Amount.Neg() // owed to the owner
		net = net.Add(amount)
		totals[p.p.Line] = totals[p.p.Line].Add(amount)
		it := Item{Date: p.p.Date, Line: p.p.Line, Label: p.p.Label, Amount: f(amount), PropertyID: p.p.PropertyID, EntryID: p.entry.ID}
		switch {
		case p.p.BookingID != 0:
			b := byID[p.p.BookingID]
			if b == nil {
				b = &bk{b: Booking{BookingID: p.p.BookingID, PropertyID: p.p.PropertyID, Lines: []Item{}}}
				if stay, ok := in.Stays[p.p.BookingID]; ok {
					b.b.PropertyName, b.b.Checkin, b.b.Checkout, b.b.Channel, b.b.Status = stay.PropertyName, stay.Checkin,
						stay.Checkout, stay.Channel, stay.Status
				}
				byID[p.p.BookingID] = b
				bookings = append(bookings, b) // in the order of their first posting
			}
			it.PropertyID = 0 // the booking's
			b.b.Lines = append(b.b.Lines, it)
			b.sum = b.sum.Add(amount)
		case p.p.Line == journal.LineExpense:
			st.Expenses = append(st.Expenses, it)
		case p.p.Line == journal.LineFee:
			st.Fees = append(st.Fees, it)
		case p.p.Line == journal.LinePayout:
			st.Payouts = append(st.Payouts, it)
		default:
			st.Other = append(st.Other, it)
		}
	}
	for _, b := range bookings {
		b.b.Net = f(b.sum)
		st.Bookings = append(st.Bookings, b.b)
	}
	for _, l := range totalLines {
		st.Totals = append(st.Totals, Total{Line: l, Amount: f(totals[l])})
	}
	var others []string
	for l := range totals {
		if !slices.Contains(totalLines, l) {
			others = append(others, l)
		}
	}
	slices.Sort(others)
	for _, l := range others {
		st.Totals = append(st.Totals, Total{Line: l, Amount: f(totals[l])})
	}
	st.OpeningBalance = f(opening)
	st.Net = f(net)
	st.ClosingBalance = f(opening.Add(net))
	return st
}

// JSON is the statement's JSON, the bytes every format and revision is kept as.
func (s Statement) JSON() ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("statement %s: %w", s.StatementID, err)
	}
	return b, nil
}

// Parse reads a statement's JSON.
func Parse(b []byte) (Statement, error) {
	var s Statement
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("read a statement: %w", err)
	}
	return s, nil
}

// Scale is the number of minor digits of a currency (golang.org/x/text/currency's standard
// rounding, as card payments use); 2 for a code it does not know.
func Scale(code string) int32 {
	u, err := currency.ParseISO(code)
	if err != nil {
		return 2
	}
	scale, _ := currency.Standard.Rounding(u)
	return int32(scale)
}

// Format writes d with scale digits, rounded once, half away from zero.
func Format(d decimal.Decimal, scale int32) string {
	return d.Round(scale).StringFixed(scale)
}
