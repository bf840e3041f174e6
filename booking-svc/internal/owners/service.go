package owners

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/libs/seal"
)

// Service is the owners domain.
type Service struct {
	store      Store
	properties Properties
	box        *seal.Box
	// journal, when set, is touched after every write of a source of postings.
	journal Toucher
	// bookings, when set, lists the bookings an agreement's change touches.
	bookings Bookings
	now      func() time.Time
	log      *slog.Logger
}

// New returns the service.
func New(s Store, p Properties, box *seal.Box) *Service {
	return &Service{store: s, properties: p, box: box, now: time.Now, log: slog.Default()}
}

// SetJournal makes every write of an expense, payout or agreement sync its postings.
func (s *Service) SetJournal(t Toucher) { s.journal = t }

// SetBookings makes a change of an agreement touch the bookings of its property that it
// covers, whose postings follow it.
func (s *Service) SetBookings(b Bookings) { s.bookings = b }

// SetClock sets the clock the monthly fees follow (tests).
func (s *Service) SetClock(now func() time.Time) { s.now = now }

// SetLogger sets where failures to touch the journal are logged.
func (s *Service) SetLogger(l *slog.Logger) {
	if l != nil {
		s.log = l
	}
}

// Store is the service's store (export and erasure).
func (s *Service) Store() Store { return s.store }

// mark records, before a write, that sources are about to change: a write whose mark failed
// is not made, so that no write escapes the ledger's repair (docs/money.md, "The ledger").
func (s *Service) mark(ctx context.Context, account string, sources ...string) error {
	if s.journal == nil {
		return nil
	}
	for _, src := range sources {
		if err := s.journal.Mark(ctx, account, src); err != nil {
			return fmt.Errorf("mark %s: %w", src, err)
		}
	}
	return nil
}

// touch syncs sources after a write. The write stands whatever the journal answers: a
// failure is logged, and the mark made before the write has the ledger's repair pass sync
// the source later.
func (s *Service) touch(ctx context.Context, account string, sources ...string) {
	if s.journal == nil {
		return
	}
	for _, src := range sources {
		if err := s.journal.Touch(ctx, account, src); err != nil {
			s.log.ErrorContext(ctx, "journal touch failed", "account", account, "source", src, "err", err)
		}
	}
}

// Sources of postings (docs/money.md, "The ledger").
func ExpenseSource(id int64) string { return "expense:" + strconv.FormatInt(id, 10) }
func PayoutSource(id int64) string  { return "payout:" + strconv.FormatInt(id, 10) }
func FeeSource(agreement int64, month string) string {
	return "fee:" + strconv.FormatInt(agreement, 10) + ":" + month
}

func payoutContext(account string, owner int64) string {
	return account + ":owner:" + strconv.FormatInt(owner, 10) + ":payout"
}

// OwnerWrite is an owner as written: Payout nil keeps the stored details, ClearPayout drops
// them.
type OwnerWrite struct {
	Owner
	Details     *PayoutDetails
	ClearPayout bool
}

// CreateOwner stores a new owner.
func (s *Service) CreateOwner(ctx context.Context, account string, w OwnerWrite) (Owner, error) {
	id, err := s.store.NextID(ctx, KindOwner)
	if err != nil {
		return Owner{}, err
	}
	o := w.Owner
	o.AccountID, o.OwnerID = account, id
	o.CreatedAt = s.now().UTC().Truncate(time.Millisecond)
	o.UpdatedAt = o.CreatedAt
	o.Payout = nil
	if w.Details != nil {
		o.Payout = s.sealPayout(account, id, *w.Details)
	}
	return o, s.store.PutOwner(ctx, o)
}

// UpdateOwner replaces an owner's fields; its payout details stay unless sent or cleared.
func (s *Service) UpdateOwner(ctx context.Context, account string, w OwnerWrite) (Owner, error) {
	var out Owner
	err := s.store.Locked(ctx, account, func() error {
		cur, err := s.Owner(ctx, account, w.OwnerID)
		if err != nil {
			return err
		}
		o := w.Owner
		o.AccountID, o.CreatedAt, o.Payout = account, cur.CreatedAt, cur.Payout
		o.UpdatedAt = s.now().UTC().Truncate(time.Millisecond)
		switch {
		case w.Details != nil:
			o.Payout = s.sealPayout(account, o.OwnerID, *w.Details)
		case w.ClearPayout:
			o.Payout = nil
		}
		out = o
		return s.store.PutOwner(ctx, o)
	})
	return out, err
}

// Owner returns an owner of account.
func (s *Service) Owner(ctx context.Context, account string, id int64) (Owner, error) {
	o, err := s.store.Owner(ctx, account, id)
	if errors.Is(err, ErrNotFound) {
		return o, notFound("owner %d", id)
	}
	return o, err
}

// OwnerName answers an owner's name, found false when the account has no such owner
// (statements' headers: statement.OwnerNames).
func (s *Service) OwnerName(ctx context.Context, account string, id int64) (string, bool, error) {
	o, err := s.store.Owner(ctx, account, id)
	if errors.Is(err, ErrNotFound) {
		return "", false, nil
	}
	return o.Name, err == nil, err
}

// Owners returns account's owners by id.
func (s *Service) Owners(ctx context.Context, account string) ([]Owner, error) {
	return s.store.Owners(ctx, account)
}

// DeleteOwner deletes an owner without agreements or payouts.
func (s *Service) DeleteOwner(ctx context.Context, account string, id int64) error {
	return s.store.Locked(ctx, account, func() error {
		if _, err := s.Owner(ctx, account, id); err != nil {
			return err
		}
		ags, err := s.store.Agreements(ctx, account)
		if err != nil {
			return err
		}
		pays, err := s.store.Payouts(ctx, account)
		if err != nil {
			return err
		}
		var uses []string
		var aids, pids []int64
		for _, a := range ags {
			if a.OwnerID == id {
				aids = append(aids, a.AgreementID)
			}
		}
		for _, p := range pays {
			if p.OwnerID == id {
				pids = append(pids, p.PayoutID)
			}
		}
		if len(aids) > 0 {
			uses = append(uses, plural("agreement", aids))
		}
		if len(pids) > 0 {
			uses = append(uses, plural("payout", pids))
		}
		if len(uses) > 0 {
			return &ConflictError{Message: fmt.Sprintf("owner %d has %s: delete them first", id, strings.Join(uses, " and "))}
		}
		return s.store.DeleteOwner(ctx, account, id)
	})
}

// plural names ids of a kind: "agreement 4", "agreements 4, 7".
func plural(kind string, ids []int64) string {
	slices.Sort(ids)
	parts := make([]string, 0, len(ids))
	for i, id := range ids {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("and %d more", len(ids)-10))
			break
		}
		parts = append(parts, strconv.FormatInt(id, 10))
	}
	if len(ids) > 1 {
		kind += "s"
	}
	return kind + " " + strings.Join(parts, ", ")
}

// sealPayout seals details bound to the account and owner, with their summary.
func (s *Service) sealPayout(account string, owner int64, d PayoutDetails) *SealedPayout {
	raw, _ := json.Marshal(d)
	return &SealedPayout{Sealed: s.box.Seal(string(raw), payoutContext(account, owner)), Summary: Summary(d)}
}

// PayoutDetailsOf opens an owner's payout details (for paying them; never answered).
func (s *Service) PayoutDetailsOf(o Owner) (PayoutDetails, error) {
	var d PayoutDetails
	if o.Payout == nil {
		return d, notFound("payout details of owner %d", o.OwnerID)
	}
	plain, err := s.box.Open(o.Payout.Sealed, payoutContext(o.AccountID, o.OwnerID))
	if err != nil {
		return d, err
	}
	return d, json.Unmarshal([]byte(plain), &d)
}

// Summary is what answers show of payout details: the method's kind and the last four
// characters of the account's number ("IBAN •••• 4432", "PayPal j•••@example.com").
func Summary(d PayoutDetails) string {
	last4 := func(s string) string {
		s = strings.ReplaceAll(s, " ", "")
		r := []rune(s)
		if len(r) <= 4 {
			return "••••"
		}
		return "•••• " + string(r[len(r)-4:])
	}
	switch {
	case d.IBAN != "":
		return "IBAN " + last4(d.IBAN)
	case d.AccountNumber != "":
		return "Account " + last4(d.AccountNumber)
	case d.Email != "":
		local, domain, ok := strings.Cut(d.Email, "@")
		r := []rune(local)
		if !ok || len(r) == 0 {
			return methodName(d.Method)
		}
		return methodName(d.Method) + " " + string(r[0]) + "•••@" + domain
	}
	return methodName(d.Method)
}

func methodName(m string) string {
	switch m {
	case "bank_transfer":
		return "Bank transfer"
	case "paypal":
		return "PayPal"
	}
	return "Other"
}

// property finds the property an agreement or expense names: by internal code, else by id.
func (s *Service) property(ctx context.Context, account, code string, pid int64) (booking.Property, error) {
	var p booking.Property
	var err error
	if code != "" {
		p, err = s.properties.PropertyByCode(ctx, account, code)
		if errors.Is(err, booking.ErrNoProperty) {
			return p, notFound("property with internal_code %q", code)
		}
	} else {
		p, err = s.properties.Property(ctx, account, pid)
		if errors.Is(err, booking.ErrNoProperty) {
			return p, notFound("property %d", pid)
		}
	}
	return p, err
}

func currencyOf(p booking.Property) string {
	return cmp.Or(p.Pricing.Currency, pricing.DefaultCurrency)
}

// checkScale refuses an amount with more decimals than currency has.
func checkScale(field string, d decimal.Decimal, currency string) error {
	if sc := pricing.Scale(currency); !d.Equal(d.Truncate(sc)) {
		if sc == 0 {
			return &FieldError{Field: field, Message: "must be a whole number in " + currency}
		}
		return &FieldError{Field: field, Message: fmt.Sprintf("must have at most %d decimal places in %s", sc, currency)}
	}
	return nil
}
