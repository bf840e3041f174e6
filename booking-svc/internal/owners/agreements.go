package owners

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/journal"
)

// CreateAgreement stores a new agreement of a property (InternalCode, or PropertyID when no
// code) with an owner of the account.
func (s *Service) CreateAgreement(ctx context.Context, account string, a Agreement) (Agreement, error) {
	id, err := s.store.NextID(ctx, KindAgreement)
	if err != nil {
		return Agreement{}, err
	}
	a.AgreementID = id
	return s.writeAgreement(ctx, account, a, false)
}

// UpdateAgreement replaces an agreement whole.
func (s *Service) UpdateAgreement(ctx context.Context, account string, a Agreement) (Agreement, error) {
	return s.writeAgreement(ctx, account, a, true)
}

func (s *Service) writeAgreement(ctx context.Context, account string, a Agreement, update bool) (Agreement, error) {
	p, err := s.property(ctx, account, a.InternalCode, a.PropertyID)
	if err != nil {
		return a, err
	}
	a.AccountID, a.PropertyID, a.InternalCode, a.Currency = account, p.PropertyID, p.InternalCode, currencyOf(p)
	for i, f := range a.MonthlyFees {
		if err := checkScale(fmt.Sprintf("agreement.monthly_fees[%d].amount", i), f.Amount, a.Currency); err != nil {
			return a, err
		}
	}
	// The fee months it may change are marked first (of the agreement as it stands, too), so
	// that the ledger's repair posts them even if this stops right after the write.
	var before *Agreement
	if update {
		if cur, err := s.Agreement(ctx, account, a.AgreementID); err == nil {
			before = &cur
		}
	}
	if err := s.mark(ctx, account, s.feeSources(a, before)...); err != nil {
		return a, err
	}
	var old *Agreement
	err = s.store.Locked(ctx, account, func() error {
		now := s.now().UTC().Truncate(time.Millisecond)
		a.CreatedAt, a.UpdatedAt = now, now
		if update {
			cur, err := s.Agreement(ctx, account, a.AgreementID)
			if err != nil {
				return err
			}
			old, a.CreatedAt = &cur, cur.CreatedAt
		}
		if _, err := s.Owner(ctx, account, a.OwnerID); err != nil {
			return err
		}
		all, err := s.store.Agreements(ctx, account)
		if err != nil {
			return err
		}
		for _, b := range all {
			if b.AgreementID != a.AgreementID && b.PropertyID == a.PropertyID && a.overlaps(b) {
				return &ConflictError{Message: fmt.Sprintf("agreement %d of property %q runs %s: a property's agreements never overlap",
					b.AgreementID, a.InternalCode, span(b))}
			}
		}
		return s.store.PutAgreement(ctx, a)
	})
	if err != nil {
		return a, err
	}
	s.touch(ctx, account, s.feeSources(a, old)...)
	s.touch(ctx, account, s.bookingSources(ctx, a, old)...)
	return a, nil
}

// maxBookingTouches bounds how many bookings one change of an agreement touches at once;
// any others post under it at their next event or the journal's repair.
const maxBookingTouches = 2000

// bookingSources are the booking sources of the property (of a, and of old when it named
// another) whose stays overlap what a or old covers: their commission and owner follow the
// agreement (journal.BookingResolver). Without SetBookings, none.
func (s *Service) bookingSources(ctx context.Context, a Agreement, old *Agreement) []string {
	if s.bookings == nil {
		return nil
	}
	var out []string
	seen := map[int64]bool{}
	for _, x := range []*Agreement{&a, old} {
		if x == nil || x.PropertyID == 0 || x.StartDate == "" {
			continue
		}
		f := booking.ListFilter{PropertyID: x.PropertyID, From: x.StartDate, Limit: maxBookingTouches}
		if x.EndDate != "" {
			if end, err := time.Parse(time.DateOnly, x.EndDate); err == nil {
				f.To = end.AddDate(0, 0, 1).Format(time.DateOnly)
			}
		}
		bs, _, err := s.bookings.List(ctx, x.AccountID, f)
		if err != nil {
			s.log.ErrorContext(ctx, "bookings of an agreement's property", "account", x.AccountID, "property", x.PropertyID, "err", err)
			continue
		}
		for _, b := range bs {
			if !seen[b.BookingID] {
				seen[b.BookingID] = true
				out = append(out, journal.BookingSource(b.BookingID))
			}
		}
	}
	return out
}

func span(a Agreement) string {
	if a.EndDate == "" {
		return "from " + a.StartDate + " on"
	}
	return "from " + a.StartDate + " to " + a.EndDate
}

// Agreement returns an agreement of account.
func (s *Service) Agreement(ctx context.Context, account string, id int64) (Agreement, error) {
	a, err := s.store.Agreement(ctx, account, id)
	if errors.Is(err, ErrNotFound) {
		return a, notFound("agreement %d", id)
	}
	return a, err
}

// Agreements returns account's agreements by id.
func (s *Service) Agreements(ctx context.Context, account string) ([]Agreement, error) {
	return s.store.Agreements(ctx, account)
}

// DeleteAgreement deletes an agreement; its monthly fees are reversed in the ledger.
func (s *Service) DeleteAgreement(ctx context.Context, account string, id int64) error {
	cur, err := s.Agreement(ctx, account, id)
	if err != nil {
		return err
	}
	if err := s.mark(ctx, account, s.feeSources(cur, nil)...); err != nil {
		return err
	}
	var old Agreement
	err = s.store.Locked(ctx, account, func() error {
		var err error
		if old, err = s.Agreement(ctx, account, id); err != nil {
			return err
		}
		return s.store.DeleteAgreement(ctx, account, id)
	})
	if err != nil {
		return err
	}
	s.touch(ctx, account, s.feeSources(old, nil)...)
	s.touch(ctx, account, s.bookingSources(ctx, old, nil)...)
	return nil
}

// AgreementInForce returns the agreement of a property in force on date (YYYY-MM-DD); ok
// false when none is (the property is then the account's own on that day).
func (s *Service) AgreementInForce(ctx context.Context, account string, property int64, date string) (Agreement, bool, error) {
	all, err := s.store.Agreements(ctx, account)
	if err != nil {
		return Agreement{}, false, err
	}
	for _, a := range all {
		if a.PropertyID == property && a.Covers(date) {
			return a, true, nil
		}
	}
	return Agreement{}, false, nil
}

// AgreementOn is the journal's Agreements port: the agreement in force, as the booking
// resolver reads it (nil: none).
func (s *Service) AgreementOn(ctx context.Context, account string, property int64, date string) (*journal.Agreement, error) {
	a, ok, err := s.AgreementInForce(ctx, account, property, date)
	if err != nil || !ok {
		return nil, err
	}
	return &journal.Agreement{ID: a.AgreementID, OwnerID: a.OwnerID, CommissionPercent: a.CommissionPercent,
		Basis: a.CommissionBasis, Components: slices.Clone(a.CommissionComponents)}, nil
}

var _ journal.Agreements = (*Service)(nil)

// OwnerAgreements returns an owner's agreements by id (statements' headers).
func (s *Service) OwnerAgreements(ctx context.Context, account string, owner int64) ([]Agreement, error) {
	all, err := s.store.Agreements(ctx, account)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(a Agreement) bool { return a.OwnerID != owner }), nil
}

// maxFeeMonths bounds how many months back a change of an agreement re-syncs its fees.
const maxFeeMonths = 240

// feeSources are the fee sources of the months, up to the current one, whose 1st a or old
// (either may be empty) covered: a change of the agreement may change what they post.
func (s *Service) feeSources(a Agreement, old *Agreement) []string {
	covers := func(d string) bool { return a.AgreementID != 0 && a.Covers(d) || old != nil && old.Covers(d) }
	start := a.StartDate
	if old != nil && (start == "" || old.StartDate < start) {
		start = old.StartDate
	}
	t, err := time.Parse(time.DateOnly, start)
	if err != nil {
		return nil
	}
	cur := Month(s.now())
	m := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	if m.Format(time.DateOnly) < start {
		m = m.AddDate(0, 1, 0)
	}
	var out []string
	id := a.AgreementID
	if id == 0 && old != nil {
		id = old.AgreementID
	}
	for n := 0; n < maxFeeMonths && m.Format("2006-01") <= cur; n++ {
		if d := m.Format(time.DateOnly); covers(d) {
			out = append(out, FeeSource(id, m.Format("2006-01")))
		}
		m = m.AddDate(0, 1, 0)
	}
	return out
}

// Month is t's month, YYYY-MM (UTC).
func Month(t time.Time) string { return t.UTC().Format("2006-01") }

// FeePass touches the fee source of the current month (by the service's clock) of every
// agreement in force on its 1st: the ledger posts each month's fees once, however often it
// runs.
func (s *Service) FeePass(ctx context.Context) error {
	if s.journal == nil {
		return nil
	}
	now := s.now().UTC()
	month := Month(now)
	first := month + "-01"
	accounts, err := s.store.AgreementAccounts(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, acct := range accounts {
		all, err := s.store.Agreements(ctx, acct)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, a := range all {
			if !a.Covers(first) || len(a.MonthlyFees) == 0 {
				continue
			}
			if err := s.journal.Touch(ctx, acct, FeeSource(a.AgreementID, month)); err != nil {
				errs = append(errs, fmt.Errorf("fee of agreement %d of %s: %w", a.AgreementID, acct, err))
			}
		}
	}
	return errors.Join(errs...)
}

// RunFees runs FeePass every interval until ctx ends, logging its failures.
func (s *Service) RunFees(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := s.FeePass(ctx); err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "monthly fee pass failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
