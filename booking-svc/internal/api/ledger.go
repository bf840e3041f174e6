package api

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"
	"golang.org/x/text/currency"

	"github.com/vros/vros/booking-svc/internal/journal"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
)

// The account's ledger (docs/money.md, "The ledger"): the interface A resource
// /api/account-ledger (POST /internal/a/account-ledger), actions entries and balances.

// SetLedger serves /api/account-ledger from l (nil: the resource answers 503).
func (a *API) SetLedger(l *journal.Service) { a.books = l }

type postingJSON struct {
	Account    string `json:"account"`
	Amount     string `json:"amount"`
	OwnerID    int64  `json:"owner_id,omitempty"`
	PropertyID int64  `json:"property_id,omitempty"`
	BookingID  int64  `json:"booking_id,omitempty"`
	Line       string `json:"line,omitempty"`
	Label      string `json:"label,omitempty"`
}

type entryJSON struct {
	EntryID  string        `json:"entry_id"`
	Date     string        `json:"date"`
	Currency string        `json:"currency"`
	Source   string        `json:"source"`
	PostedAt time.Time     `json:"posted_at"`
	Postings []postingJSON `json:"postings"`
}

type balanceJSON struct {
	Account string `json:"account"`
	OwnerID int64  `json:"owner_id,omitempty"`
	Amount  string `json:"amount"`
}

// ledgerCurrency reads an optional ISO 4217 code (any case).
func ledgerCurrency(o *fields.Object, required bool) string {
	cur, _ := o.String("currency", fields.Str{Required: required, Max: 3})
	cur = strings.ToUpper(cur)
	if cur != "" {
		if u, err := currency.ParseISO(cur); err != nil || u.String() != cur {
			o.Add("currency", "must be an ISO 4217 currency code such as EUR")
		}
	}
	return cur
}

// accountLedger: POST /internal/a/account-ledger.
//
//	entries  {from, to, owner_id?, booking_id?, currency?} → {"entries":[…]} by date then id
//	balances {as_of, currency} → {"as_of","currency","balances":[{account, owner_id?, amount}]}
func (a *API) accountLedger(c *fiber.Ctx) error {
	if a.books == nil {
		return &httpapi.Error{HTTP: fiber.StatusServiceUnavailable, Type: "unavailable", Status: httpapi.StatusNotFound,
			Message: "the ledger is not served here"}
	}
	var v fields.Violations
	o := fields.Parse(c.Body(), "", &v)
	action, _ := o.String("action", fields.Str{Required: true, OneOf: []string{"entries", "balances"}})
	l := o.Object("ledger", true)
	ctx, acct := c.UserContext(), account(c)
	switch action {
	case "entries":
		from, okF := l.Date("from", true)
		to, okT := l.Date("to", true)
		if okF && okT {
			switch n := int(to.Sub(from).Hours()/24) + 1; {
			case n < 1:
				l.Add("to", "must not be before from")
			case n > maxStatementDays:
				l.Addf("to", "must be at most %d days after from (a period of at most %d days)", maxStatementDays-1, maxStatementDays)
			}
		}
		owner, _ := l.Int("owner_id", fields.Int{Min: 1, Max: 1 << 53})
		bookingID, _ := l.Int("booking_id", fields.Int{Min: 1, Max: 1 << 53})
		cur := ledgerCurrency(l, false)
		if err := v.Err(); err != nil {
			return err
		}
		es, err := a.books.Entries(ctx, acct, journal.Query{OwnerID: int64(owner), BookingID: int64(bookingID), Currency: cur,
			From: from.Format(time.DateOnly), To: to.Format(time.DateOnly)})
		if err != nil {
			return err
		}
		out := make([]entryJSON, 0, len(es))
		for _, e := range es {
			ej := entryJSON{EntryID: e.ID, Date: e.Date, Currency: e.Currency, Source: e.Source, PostedAt: e.PostedAt, Postings: []postingJSON{}}
			scale := journal.Scale(e.Currency)
			for _, p := range e.Postings {
				ej.Postings = append(ej.Postings, postingJSON{Account: p.Account, Amount: p.Amount.StringFixed(scale), OwnerID: p.OwnerID,
					PropertyID: p.PropertyID, BookingID: p.BookingID, Line: p.Line, Label: p.Label})
			}
			out = append(out, ej)
		}
		return httpapi.A(c, fiber.Map{"entries": out})
	case "balances":
		asOf, _ := l.Date("as_of", true)
		cur := ledgerCurrency(l, true)
		if err := v.Err(); err != nil {
			return err
		}
		day := asOf.Format(time.DateOnly)
		q := journal.Query{Currency: cur, To: day}
		es, err := a.books.Entries(ctx, acct, q)
		if err != nil {
			return err
		}
		type key struct {
			account string
			owner   int64
		}
		sums := map[key]decimal.Decimal{}
		for _, e := range es {
			for _, p := range e.Postings {
				if q.Matches(e.Date, p) {
					k := key{p.Account, p.OwnerID}
					sums[k] = sums[k].Add(p.Amount)
				}
			}
		}
		keys := make([]key, 0, len(sums))
		for k := range sums {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(x, y key) int { return cmp.Or(cmp.Compare(x.account, y.account), cmp.Compare(x.owner, y.owner)) })
		scale := journal.Scale(cur)
		out := make([]balanceJSON, 0, len(keys))
		for _, k := range keys {
			out = append(out, balanceJSON{Account: k.account, OwnerID: k.owner, Amount: sums[k].StringFixed(scale)})
		}
		return httpapi.A(c, fiber.Map{"as_of": day, "currency": cur, "balances": out})
	}
	return v.Err()
}
