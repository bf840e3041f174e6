package owners

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vros/vros/booking-svc/internal/journal"
)

// What expenses, payouts and monthly fees post (docs/money.md, "The ledger"): each resolver
// answers the postings its source should have now, nothing once it is deleted, so that the
// journal reverses what it posted.

// Resolvers are the journal's resolvers of the sources this package makes, by kind.
func (s *Service) Resolvers() map[string]journal.Resolver {
	return map[string]journal.Resolver{"expense": s.ResolveExpense, "payout": s.ResolvePayout, "fee": s.ResolveFee}
}

// sourceID reads the id of "<kind>:<id>".
func sourceID(source, kind string) (int64, error) {
	rest, ok := strings.CutPrefix(source, kind+":")
	id, err := strconv.ParseInt(rest, 10, 64)
	if !ok || err != nil || id < 1 {
		return 0, fmt.Errorf("source %q is not %s:<id>", source, kind)
	}
	return id, nil
}

// ResolveExpense: an expense E borne by the owner posts owner +E / cash −E; by the manager,
// management_expense +E / cash −E; on its date, in the property's currency.
func (s *Service) ResolveExpense(ctx context.Context, account, source string) ([]journal.Posting, error) {
	id, err := sourceID(source, "expense")
	if err != nil {
		return nil, err
	}
	e, err := s.store.Expense(ctx, account, id)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	label := e.Category
	if e.Description != "" {
		label += ": " + e.Description
	}
	debit := journal.Posting{Account: journal.ManagementExpense}
	if e.BorneBy == "owner" && e.OwnerID != 0 {
		debit = journal.Posting{Account: journal.Owner, OwnerID: e.OwnerID}
	}
	debit.Amount = e.Amount
	credit := journal.Posting{Account: journal.Cash, Amount: e.Amount.Neg()}
	out := []journal.Posting{debit, credit}
	for i := range out {
		out[i].Date, out[i].Currency, out[i].PropertyID, out[i].Line, out[i].Label = e.Date, e.Currency, e.PropertyID, journal.LineExpense, label
	}
	return out, nil
}

// ResolvePayout: a payout X posts owner +X / cash −X on its date, in its currency.
func (s *Service) ResolvePayout(ctx context.Context, account, source string) ([]journal.Posting, error) {
	id, err := sourceID(source, "payout")
	if err != nil {
		return nil, err
	}
	p, err := s.store.Payout(ctx, account, id)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	label := p.Method
	if p.Reference != "" {
		label += ": " + p.Reference
	}
	return []journal.Posting{
		{Date: p.Date, Currency: p.Currency, Account: journal.Owner, Amount: p.Amount, OwnerID: p.OwnerID, Line: journal.LinePayout, Label: label},
		{Date: p.Date, Currency: p.Currency, Account: journal.Cash, Amount: p.Amount.Neg(), OwnerID: 0, Line: journal.LinePayout, Label: label},
	}, nil
}

// ResolveFee: source "fee:<agreement>:<YYYY-MM>" posts, for each monthly fee F of the
// agreement when it is in force on the month's 1st, owner +F / management_income −F dated
// the 1st, in the agreement's currency; nothing otherwise (deleted, or not in force).
func (s *Service) ResolveFee(ctx context.Context, account, source string) ([]journal.Posting, error) {
	rest, ok := strings.CutPrefix(source, "fee:")
	idText, month, ok2 := strings.Cut(rest, ":")
	id, err := strconv.ParseInt(idText, 10, 64)
	_, merr := time.Parse("2006-01", month)
	if !ok || !ok2 || err != nil || id < 1 || merr != nil {
		return nil, fmt.Errorf("source %q is not fee:<agreement>:<YYYY-MM>", source)
	}
	a, err := s.store.Agreement(ctx, account, id)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	first := month + "-01"
	if !a.Covers(first) {
		return nil, nil
	}
	var out []journal.Posting
	for _, f := range a.MonthlyFees {
		if f.Amount.IsZero() {
			continue
		}
		out = append(out,
			journal.Posting{Date: first, Currency: a.Currency, Account: journal.Owner, Amount: f.Amount, OwnerID: a.OwnerID,
				PropertyID: a.PropertyID, Line: journal.LineFee, Label: f.Name},
			journal.Posting{Date: first, Currency: a.Currency, Account: journal.ManagementIncome, Amount: f.Amount.Neg(),
				PropertyID: a.PropertyID, Line: journal.LineFee, Label: f.Name})
	}
	return out, nil
}
