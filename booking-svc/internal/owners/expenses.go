package owners

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"time"
)

// ExpenseWrite is an expense as written: Receipt nil keeps the stored receipt (on update),
// ClearReceipt drops it.
type ExpenseWrite struct {
	Expense
	Receipt      *Receipt
	ClearReceipt bool
}

// Sniff answers the content type of a receipt's bytes, by their content: image/jpeg,
// image/png or application/pdf, else "" (refused).
func Sniff(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return "application/pdf"
	}
	switch t := http.DetectContentType(data); t {
	case "image/jpeg", "image/png":
		return t
	}
	return ""
}

// CreateExpense stores a new expense of a property.
func (s *Service) CreateExpense(ctx context.Context, account string, w ExpenseWrite) (Expense, error) {
	id, err := s.store.NextID(ctx, KindExpense)
	if err != nil {
		return Expense{}, err
	}
	w.ExpenseID = id
	return s.writeExpense(ctx, account, w, false)
}

// UpdateExpense replaces an expense whole (its receipt stays unless sent or cleared).
func (s *Service) UpdateExpense(ctx context.Context, account string, w ExpenseWrite) (Expense, error) {
	return s.writeExpense(ctx, account, w, true)
}

func (s *Service) writeExpense(ctx context.Context, account string, w ExpenseWrite, update bool) (Expense, error) {
	e := w.Expense
	p, err := s.property(ctx, account, e.InternalCode, e.PropertyID)
	if err != nil {
		return e, err
	}
	e.AccountID, e.PropertyID, e.InternalCode, e.Currency = account, p.PropertyID, p.InternalCode, currencyOf(p)
	if err := checkScale("expense.amount", e.Amount, e.Currency); err != nil {
		return e, err
	}
	a, ok, err := s.AgreementInForce(ctx, account, e.PropertyID, e.Date)
	if err != nil {
		return e, err
	}
	e.OwnerID = 0
	if ok {
		e.OwnerID = a.OwnerID
	} else if e.BorneBy == "owner" {
		return e, &FieldError{Field: "expense.borne_by", Message: "the property has no owner agreement on " + e.Date + ": only the manager can bear it"}
	}
	if err := s.mark(ctx, account, ExpenseSource(e.ExpenseID)); err != nil {
		return e, err
	}
	err = s.store.Locked(ctx, account, func() error {
		now := s.now().UTC().Truncate(time.Millisecond)
		e.CreatedAt, e.UpdatedAt = now, now
		if update {
			cur, err := s.Expense(ctx, account, e.ExpenseID)
			if err != nil {
				return err
			}
			e.CreatedAt, e.Receipt = cur.CreatedAt, cur.Receipt
		}
		switch {
		case w.Receipt != nil:
			// The receipt first: an expense never names a receipt that is not kept.
			if err := s.store.PutReceipt(ctx, account, e.ExpenseID, *w.Receipt); err != nil {
				return err
			}
			e.Receipt = &ReceiptInfo{ContentType: w.Receipt.ContentType, Size: int64(len(w.Receipt.Data))}
		case w.ClearReceipt:
			e.Receipt = nil
		}
		if err := s.store.PutExpense(ctx, e); err != nil {
			return err
		}
		if w.ClearReceipt {
			return s.store.DeleteReceipt(ctx, account, e.ExpenseID)
		}
		return nil
	})
	if err != nil {
		return e, err
	}
	s.touch(ctx, account, ExpenseSource(e.ExpenseID))
	return e, nil
}

// Expense returns an expense of account.
func (s *Service) Expense(ctx context.Context, account string, id int64) (Expense, error) {
	e, err := s.store.Expense(ctx, account, id)
	if errors.Is(err, ErrNotFound) {
		return e, notFound("expense %d", id)
	}
	return e, err
}

// Expenses returns account's expenses by id.
func (s *Service) Expenses(ctx context.Context, account string) ([]Expense, error) {
	return s.store.Expenses(ctx, account)
}

// ExpenseReceipt returns an expense's receipt.
func (s *Service) ExpenseReceipt(ctx context.Context, account string, id int64) (Receipt, error) {
	e, err := s.Expense(ctx, account, id)
	if err != nil {
		return Receipt{}, err
	}
	if e.Receipt == nil {
		return Receipt{}, notFound("a receipt of expense %d", id)
	}
	r, err := s.store.Receipt(ctx, account, id)
	if errors.Is(err, ErrNotFound) {
		return r, notFound("a receipt of expense %d", id)
	}
	return r, err
}

// DeleteExpense deletes an expense and its receipt; the ledger reverses its postings.
func (s *Service) DeleteExpense(ctx context.Context, account string, id int64) error {
	if err := s.mark(ctx, account, ExpenseSource(id)); err != nil {
		return err
	}
	err := s.store.Locked(ctx, account, func() error {
		if _, err := s.Expense(ctx, account, id); err != nil {
			return err
		}
		if err := s.store.DeleteExpense(ctx, account, id); err != nil {
			return err
		}
		return s.store.DeleteReceipt(ctx, account, id)
	})
	if err != nil {
		return err
	}
	s.touch(ctx, account, ExpenseSource(id))
	return nil
}

// CreatePayout records money paid to an owner.
func (s *Service) CreatePayout(ctx context.Context, account string, p Payout) (Payout, error) {
	if err := checkScale("payout.amount", p.Amount, p.Currency); err != nil {
		return p, err
	}
	id, err := s.store.NextID(ctx, KindPayout)
	if err != nil {
		return p, err
	}
	p.AccountID, p.PayoutID = account, id
	p.CreatedAt = s.now().UTC().Truncate(time.Millisecond)
	if err := s.mark(ctx, account, PayoutSource(id)); err != nil {
		return p, err
	}
	err = s.store.Locked(ctx, account, func() error {
		if _, err := s.Owner(ctx, account, p.OwnerID); err != nil {
			return err
		}
		return s.store.PutPayout(ctx, p)
	})
	if err != nil {
		return p, err
	}
	s.touch(ctx, account, PayoutSource(id))
	return p, nil
}

// Payout returns a payout of account.
func (s *Service) Payout(ctx context.Context, account string, id int64) (Payout, error) {
	p, err := s.store.Payout(ctx, account, id)
	if errors.Is(err, ErrNotFound) {
		return p, notFound("payout %d", id)
	}
	return p, err
}

// Payouts returns account's payouts by id.
func (s *Service) Payouts(ctx context.Context, account string) ([]Payout, error) {
	return s.store.Payouts(ctx, account)
}

// DeletePayout deletes a payout (a wrong one); the ledger reverses it.
func (s *Service) DeletePayout(ctx context.Context, account string, id int64) error {
	if _, err := s.Payout(ctx, account, id); err != nil {
		return err
	}
	if err := s.mark(ctx, account, PayoutSource(id)); err != nil {
		return err
	}
	if err := s.store.DeletePayout(ctx, account, id); err != nil {
		return err
	}
	s.touch(ctx, account, PayoutSource(id))
	return nil
}
