package panel

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Money after the booking (docs/money.md): the booking page's refund and deposit hold, and
// the shapes the owners' and statements' pages read. The services' answers are read with
// loose, which takes snake_case and camelCase keys alike (interface B's booking answer is
// camelCase, interface A's resources snake_case), so a page reads a field whichever way an
// interface spells it.

// text is a value shown as it was answered: a string, a number's literal (an amount, an
// id), true or false; null is "".
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*t = ""
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = text(s)
	default:
		*t = text(b)
	}
	return nil
}

func (t text) String() string { return string(t) }

// loose decodes data into out as json.Unmarshal does, with every object key's underscores
// dropped first: Go matches field names without regard to case, so a field PolicyAmount
// reads policy_amount and policyAmount alike.
func loose(data json.RawMessage, out any) error {
	if len(data) == 0 || string(data) == "null" {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return err
	}
	js, err := json.Marshal(squash(v))
	if err != nil {
		return err
	}
	return json.Unmarshal(js, out)
}

func squash(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[strings.ReplaceAll(k, "_", "")] = squash(e)
		}
		return m
	case []any:
		for i := range x {
			x[i] = squash(x[i])
		}
	}
	return v
}

// listOf decodes a list answer into out: the data itself when it is an array, else the
// first array among the data object's members ({"owners": [...], "total": 3}).
func listOf(data json.RawMessage, out any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return nil
	}
	if data[0] == '[' {
		return loose(data, out)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := bytes.TrimSpace(m[k]); len(v) > 0 && v[0] == '[' {
			return loose(v, out)
		}
	}
	return nil
}

// refundView is a booking's refund as interface B answers it (`refund`).
type refundView struct {
	Status, Policy, Percent, PolicyAmount, NetPaid, Amount, Refunded, Currency text
	Override                                                                   bool
	Reason, DecidedAt                                                          text
	Parts                                                                      []refundPartView
}

// refundPartView is the refund of one payment.
type refundPartView struct {
	// Of is the payment refunded (booking-svc answers it as refundOf).
	Of, RefundOf, PaymentID, Amount, Method, Status, Attempts text
	LastError, NextAttemptAt, RefundID, DoneAt                text
}

// depositView is a booking's damage-deposit hold as interface B answers it (`depositHold`).
type depositView struct {
	Status, Amount, Currency, DueDate, AuthorizationID, HeldAt, Reauthorizations text
	ReleaseOn, ReleasedAt, CapturedAmount, CaptureReason, CapturedAt, LastError  text
}

// payView is one payment of a booking: a payment received, a refund (a negative amount,
// RefundOf the payment it gives back) or a captured deposit.
type payView struct {
	PaymentID, Amount, Currency, Description, Time, Method, Kind, RefundOf text
}

// IsRefund says whether the payment is a refund (its kind, or a negative amount).
func (p payView) IsRefund() bool {
	return p.Kind == "refund" || strings.HasPrefix(string(p.Amount), "-")
}

// bookingPage is the booking page's data: the booking as listbooking answers it, with its
// refund, deposit hold and payments read.
type bookingPage struct {
	bookingItem
	Refund  *refundView
	Deposit *depositView
	Pays    []payView
}

func bookingPageOf(b bookingItem) (bookingPage, error) {
	d := bookingPage{bookingItem: b}
	if len(b.RefundRaw) > 0 && string(b.RefundRaw) != "null" {
		d.Refund = &refundView{}
		if err := loose(b.RefundRaw, d.Refund); err != nil {
			return d, err
		}
		for i, pt := range d.Refund.Parts {
			if pt.Of == "" {
				d.Refund.Parts[i].Of = pt.RefundOf
			}
		}
	}
	if len(b.DepositRaw) > 0 && string(b.DepositRaw) != "null" {
		d.Deposit = &depositView{}
		if err := loose(b.DepositRaw, d.Deposit); err != nil {
			return d, err
		}
	}
	for _, m := range b.Payments {
		js, err := json.Marshal(m)
		if err != nil {
			return d, err
		}
		var pv payView
		if err := loose(js, &pv); err != nil {
			return d, err
		}
		d.Pays = append(d.Pays, pv)
	}
	return d, nil
}

func (p *Panel) retryRefund(c *fiber.Ctx) error { return p.bookingChange(c, "retryrefund", "retried") }
func (p *Panel) releaseDeposit(c *fiber.Ctx) error {
	return p.bookingChange(c, "releasedeposit", "released")
}

// captureDeposit captures all or part of the hold: the form's captureAmount and
// captureReason are capturedeposit's amount and reason (the page has another amount, the
// payment's).
func (p *Panel) captureDeposit(c *fiber.Ctx) error {
	return p.bookingChange(c, "capturedeposit", "captured", "captureAmount=amount", "captureReason=reason")
}

// statementView is an owner statement as /api/owner-statement and booking-svc's statement
// link answer it (docs/money.md, "Statements"; booking-svc/internal/statement.Statement).
type statementView struct {
	StatementID, Revision, CreatedAt, Currency, From, To text
	Owner                                                struct{ OwnerID, Name text }
	OwnerID                                              text // a list's statements name the owner so
	ManagerName                                          text
	OpeningBalance, Net, ClosingBalance                  text
	Bookings                                             []stmtBooking
	Expenses, Fees, Payouts, Other                       []stmtItem
	Totals                                               stmtTotals
	Changes                                              []stmtItem
}

type stmtBooking struct {
	BookingID, PropertyID, Net text
	Lines                      []stmtItem
}

// stmtItem is one posting on the owner's account (a line, an expense, a fee, a payout, a
// change since the previous revision).
type stmtItem struct {
	Date, Line, Label, Amount, PropertyID, EntryID, BookingID, PostedAt text
}

// stmtTotals are the totals per line: answered as an object {line: amount} (in the order
// of the lines) or as a list of lines.
type stmtTotals []stmtItem

// lineOrder is the order of a statement's lines.
var lineOrder = []string{"rent", "discount", "service", "commission", "channel_commission", "cancellation_fee", "deposit_capture",
	"expense", "fee", "payout"}

func (t *stmtTotals) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		*t = nil
		return nil
	}
	if b[0] == '[' {
		var l []stmtItem
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		*t = l
		return nil
	}
	var m map[string]text
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	rank := func(k string) int {
		for i, l := range lineOrder {
			if strings.ReplaceAll(l, "_", "") == k {
				return i
			}
		}
		return len(lineOrder)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if ri, rj := rank(keys[i]), rank(keys[j]); ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	out := make(stmtTotals, len(keys))
	for i, k := range keys {
		out[i] = stmtItem{Line: text(lineName(k)), Amount: m[k]}
	}
	*t = out
	return nil
}

// lineName is a line's name with its underscores back (loose drops them from keys).
func lineName(k string) string {
	for _, l := range lineOrder {
		if strings.ReplaceAll(l, "_", "") == k {
			return l
		}
	}
	return k
}

// lineLabel is how a statement line reads.
func lineLabel(l stmtItem) string {
	if l.Label != "" {
		return string(l.Label)
	}
	s := strings.ReplaceAll(string(l.Line), "_", " ")
	if s == "" {
		return ""
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// monthRange is the first and last day of a month YYYY-MM ("" when it is not one).
func monthRange(m string) (string, string) {
	if len(m) != 7 || m[4] != '-' {
		return "", ""
	}
	y, err1 := strconv.Atoi(m[:4])
	mo, err2 := strconv.Atoi(m[5:])
	if err1 != nil || err2 != nil || mo < 1 || mo > 12 || y < 1900 {
		return "", ""
	}
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[mo]
	if mo == 2 && (y%4 == 0 && y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return m + "-01", m + "-" + strconv.Itoa(days)
}
