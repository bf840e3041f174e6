package statement

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/journal"
)

// Errors of the Service.
var (
	// ErrNotFound: no such statement, revision or link (or another account's).
	ErrNotFound = errors.New("statement: not found")
	// ErrNoOwner: the owner does not exist.
	ErrNoOwner = errors.New("statement: no such owner")
	// ErrExists: Store.Insert of a revision another writer stored first.
	ErrExists = errors.New("statement: revision exists")
)

// CurrencyError says that a statement needs its currency: the owner has postings in several
// (Currencies) or in none.
type CurrencyError struct{ Currencies []string }

func (e *CurrencyError) Error() string {
	if len(e.Currencies) == 0 {
		return "is required: the owner has no postings to take it from"
	}
	return "is required: the owner has postings in " + strings.Join(e.Currencies, ", ")
}

// LinkDays is how long an owner's link works.
const LinkDays = 90

// Ledger reads the journal (journal.Service and journal.Store answer it).
type Ledger interface {
	Entries(ctx context.Context, account string, q journal.Query) ([]journal.Entry, error)
}

// Stays answers what a statement shows of booking id of account (found false: none).
type Stays func(ctx context.Context, account string, id int64) (stay Stay, found bool, err error)

// OwnerNames answers an owner's name (found false: no such owner).
type OwnerNames func(ctx context.Context, account string, ownerID int64) (name string, found bool, err error)

// Revision is one stored revision of a statement: what it was built from and its JSON.
type Revision struct {
	StatementID string
	Revision    int
	OwnerID     int64
	Currency    string
	From, To    string
	// EntryIDs are the ids of the entries dated in the period it was built from, sorted.
	EntryIDs []string
	// Opening is its opening balance, as written.
	Opening   string
	JSON      []byte
	CreatedAt time.Time
}

// Head is a statement: its identity and its latest revision's number (a hint: a revision
// stored after it may be newer, see Service.latest).
type Head struct {
	StatementID string
	OwnerID     int64
	Currency    string
	From, To    string
	Revision    int
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Link is an owner's link to a statement, kept by the SHA-256 of its token.
type Link struct {
	Hash        string // hex SHA-256 of the token
	AccountID   string
	StatementID string
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// Store keeps statements (per account) and links (by hash).
type Store interface {
	// Head answers the statement id of account (ErrNotFound).
	Head(ctx context.Context, account, id string) (Head, error)
	// Heads answers account's statements.
	Heads(ctx context.Context, account string) ([]Head, error)
	// Revision answers revision n of statement id (ErrNotFound).
	Revision(ctx context.Context, account, id string, n int) (Revision, error)
	// Insert stores r and makes it its statement's latest; ErrExists when that revision is
	// stored already.
	Insert(ctx context.Context, account string, r Revision) error
	// PutLink stores l; Link answers the link of a hash (ErrNotFound).
	PutLink(ctx context.Context, l Link) error
	Link(ctx context.Context, hash string) (Link, error)
}

// Service generates, keeps and answers owners' statements.
type Service struct {
	Ledger Ledger
	Store  Store
	// Owners names the owners (nil: statements without names, owners not checked).
	Owners OwnerNames
	// Stays shows each booking's stay (nil: bookings by their ids only).
	Stays Stays
	// Now is the clock of revisions and links (time.Now when nil).
	Now func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// ID is the id of the statement of owner in currency for from to to (dates YYYY-MM-DD):
// "7-EUR-20270301-20270331".
func ID(owner int64, currency, from, to string) string {
	return fmt.Sprintf("%d-%s-%s-%s", owner, currency, strings.ReplaceAll(from, "-", ""), strings.ReplaceAll(to, "-", ""))
}

// Request asks for the statement of an owner for a period (dates checked by the caller:
// YYYY-MM-DD, From ≤ To). Currency "" is the owner's only one.
type Request struct {
	OwnerID  int64
	From, To string
	Currency string
}

// Generate answers the latest revision of the statement req asks for when no entry dated in
// its period was posted since it was made (created false); otherwise it stores and answers a
// new revision whose changes list the postings of the entries added since.
func (s *Service) Generate(ctx context.Context, account string, req Request) (Revision, bool, error) {
	name := ""
	if s.Owners != nil {
		n, found, err := s.Owners(ctx, account, req.OwnerID)
		if err != nil {
			return Revision{}, false, err
		}
		if !found {
			return Revision{}, false, fmt.Errorf("owner %d: %w", req.OwnerID, ErrNoOwner)
		}
		name = n
	}
	entries, err := s.Ledger.Entries(ctx, account, journal.Query{LedgerAccount: journal.Owner, OwnerID: req.OwnerID, To: req.To})
	if err != nil {
		return Revision{}, false, err
	}
	cur := req.Currency
	if cur == "" {
		var curs []string
		for _, p := range journal.PostingsOf(entries) {
			if p.Account == journal.Owner && p.OwnerID == req.OwnerID && !slices.Contains(curs, p.Currency) {
				curs = append(curs, p.Currency)
			}
		}
		slices.Sort(curs)
		if len(curs) != 1 {
			return Revision{}, false, &CurrencyError{Currencies: curs}
		}
		cur = curs[0]
	}
	id := ID(req.OwnerID, cur, req.From, req.To)
	ids := PeriodEntryIDs(entries, req.OwnerID, cur, req.From, req.To)
	opening := Opening(entries, req.OwnerID, cur, req.From)
	scale := Scale(cur)
	for range 10 {
		prev, err := s.latest(ctx, account, id)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return Revision{}, false, err
		}
		n := 1
		var changes []Change
		if err == nil {
			if slices.Equal(prev.EntryIDs, ids) && prev.Opening == Format(opening, scale) {
				return prev, false, nil
			}
			n = prev.Revision + 1
			changes = changesSince(prev, entries, req.OwnerID, cur, req.From, ids, opening, scale)
		}
		created := s.now().Truncate(time.Second)
		stays, err := s.stays(ctx, account, entries, req.OwnerID, cur, req.From, req.To)
		if err != nil {
			return Revision{}, false, err
		}
		st := Build(Input{StatementID: id, Revision: n, CreatedAt: created, OwnerID: req.OwnerID, OwnerName: name,
			Currency: cur, From: req.From, To: req.To, Entries: entries, Changes: changes, Stays: stays})
		js, err := st.JSON()
		if err != nil {
			return Revision{}, false, err
		}
		r := Revision{StatementID: id, Revision: n, OwnerID: req.OwnerID, Currency: cur, From: req.From, To: req.To,
			EntryIDs: ids, Opening: st.OpeningBalance, JSON: js, CreatedAt: created}
		err = s.Store.Insert(ctx, account, r)
		if errors.Is(err, ErrExists) {
			continue // another generate stored this revision first: compare with it
		}
		if err != nil {
			return Revision{}, false, err
		}
		return r, true, nil
	}
	return Revision{}, false, fmt.Errorf("statement %s: still changing after 10 attempts", id)
}

// changesSince lists the owner's postings of the entries in ids that prev was not built
// from, and a change of the opening balance (an entry dated before the period posted since).
func changesSince(prev Revision, entries []journal.Entry, owner int64, cur, from string, ids []string, opening decimal.Decimal, scale int32) []Change {
	out := []Change{}
	if o := Format(opening, scale); o != prev.Opening {
		was, err := decimal.NewFromString(prev.Opening)
		if err != nil {
			was = decimal.Zero
		}
		out = append(out, Change{Date: from, Line: LineOpening, Label: "Opening balance was " + prev.Opening,
			Amount: Format(opening.Sub(was), scale)})
	}
	for _, p := range ownerPostings(entries, owner, cur, "9999-12-31") {
		if p.p.Date < from || slices.Contains(prev.EntryIDs, p.entry.ID) || !slices.Contains(ids, p.entry.ID) {
			continue
		}
		out = append(out, Change{EntryID: p.entry.ID, Date: p.p.Date, PostedAt: p.entry.PostedAt.UTC().Format(time.RFC3339),
			Line: p.p.Line, Label: p.p.Label, Amount: Format(p.p.Amount.Neg(), scale), BookingID: p.p.BookingID})
	}
	return out
}

// latest answers the newest stored revision of statement id: its head's, or a later one a
// writer stored before it could move the head.
func (s *Service) latest(ctx context.Context, account, id string) (Revision, error) {
	h, err := s.Store.Head(ctx, account, id)
	n := 0
	if err == nil {
		n = h.Revision
	} else if !errors.Is(err, ErrNotFound) {
		return Revision{}, err
	}
	var last Revision
	found := false
	if n > 0 {
		if last, err = s.Store.Revision(ctx, account, id, n); err == nil {
			found = true
		} else if !errors.Is(err, ErrNotFound) {
			return Revision{}, err
		}
	}
	for {
		r, err := s.Store.Revision(ctx, account, id, n+1)
		if errors.Is(err, ErrNotFound) {
			break
		}
		if err != nil {
			return Revision{}, err
		}
		last, found, n = r, true, n+1
	}
	if !found {
		return Revision{}, fmt.Errorf("statement %s: %w", id, ErrNotFound)
	}
	return last, nil
}

// Get answers revision n of statement id (0: the latest).
func (s *Service) Get(ctx context.Context, account, id string, n int) (Revision, error) {
	if n == 0 {
		return s.latest(ctx, account, id)
	}
	return s.Store.Revision(ctx, account, id, n)
}

// List answers the statements of an owner (0: every owner's), by owner, period start
// (newest first), period end and currency.
func (s *Service) List(ctx context.Context, account string, owner int64) ([]Head, error) {
	hs, err := s.Store.Heads(ctx, account)
	if err != nil {
		return nil, err
	}
	out := []Head{}
	for _, h := range hs {
		if owner == 0 || h.OwnerID == owner {
			if r, err := s.latest(ctx, account, h.StatementID); err == nil {
				h.Revision = r.Revision
			}
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b Head) int {
		switch {
		case a.OwnerID != b.OwnerID:
			return int(min(max(a.OwnerID-b.OwnerID, -1), 1))
		case a.From != b.From:
			return strings.Compare(b.From, a.From)
		case a.To != b.To:
			return strings.Compare(a.To, b.To)
		}
		return strings.Compare(a.Currency, b.Currency)
	})
	return out, nil
}

// Link makes a new link to statement id: a 256-bit random token, kept only as its SHA-256,
// working LinkDays days. It answers the token.
func (s *Service) Link(ctx context.Context, account, id string) (string, Link, error) {
	if _, err := s.latest(ctx, account, id); err != nil {
		return "", Link{}, err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", Link{}, err
	}
	token := base64.RawURLEncoding.EncodeToString(b[:])
	now := s.now().Truncate(time.Second)
	l := Link{Hash: TokenHash(token), AccountID: account, StatementID: id, CreatedAt: now, ExpiresAt: now.AddDate(0, 0, LinkDays)}
	if err := s.Store.PutLink(ctx, l); err != nil {
		return "", Link{}, err
	}
	return token, l, nil
}

// TokenHash is the hex SHA-256 of a link's token.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// ValidToken reports whether token could be a link's: 43 base64url characters.
func ValidToken(token string) bool {
	if len(token) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(token)
	return err == nil
}

// ByToken answers the latest revision of the statement a link's token opens (ErrNotFound for
// an unknown or expired link).
func (s *Service) ByToken(ctx context.Context, token string) (Revision, error) {
	if !ValidToken(token) {
		return Revision{}, ErrNotFound
	}
	l, err := s.Store.Link(ctx, TokenHash(token))
	if err != nil {
		return Revision{}, err
	}
	if !s.now().Before(l.ExpiresAt) {
		return Revision{}, fmt.Errorf("link expired: %w", ErrNotFound)
	}
	return s.latest(ctx, l.AccountID, l.StatementID)
}

// File is a revision rendered in a format.
type File struct {
	ContentType string
	Filename    string
	Body        []byte
}

// Formats are the formats a statement is rendered in.
var Formats = []string{"json", "csv", "pdf"}

// Render renders r in format (json, csv or pdf), from its stored JSON.
func Render(r Revision, format string) (File, error) {
	name := fmt.Sprintf("statement-%s-r%d.%s", r.StatementID, r.Revision, format)
	if format == "json" {
		return File{ContentType: "application/json", Filename: name, Body: r.JSON}, nil
	}
	st, err := Parse(r.JSON)
	if err != nil {
		return File{}, err
	}
	switch format {
	case "csv":
		b, err := CSV(st)
		return File{ContentType: "text/csv; charset=utf-8", Filename: name, Body: b}, err
	case "pdf":
		b, err := PDF(st)
		return File{ContentType: "application/pdf", Filename: name, Body: b}, err
	}
	return File{}, fmt.Errorf("statement: unknown format %q", format)
}

// stays reads the stays of the bookings with postings of owner in cur dated from to to.
func (s *Service) stays(ctx context.Context, account string, entries []journal.Entry, owner int64, cur, from, to string) (map[int64]Stay, error) {
	if s.Stays == nil {
		return nil, nil
	}
	out := map[int64]Stay{}
	for _, p := range journal.PostingsOf(entries) {
		if p.BookingID == 0 || p.Account != journal.Owner || p.OwnerID != owner || p.Currency != cur || p.Date < from || p.Date > to {
			continue
		}
		if _, done := out[p.BookingID]; done {
			continue
		}
		stay, found, err := s.Stays(ctx, account, p.BookingID)
		if err != nil {
			return nil, fmt.Errorf("booking %d: %w", p.BookingID, err)
		}
		if found {
			out[p.BookingID] = stay
		}
	}
	return out, nil
}
