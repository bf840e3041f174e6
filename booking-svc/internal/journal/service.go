package journal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/faults"
)

// ErrUnbalanced refuses postings of one date and currency that do not sum to zero: nothing
// is posted.
var ErrUnbalanced = errors.New("journal: postings do not balance")

// maxRounds bounds the rounds of one Sync that lost a race for an entry's id to another
// writer of the same source (each lost round means another writer posted).
const maxRounds = 100

// Service posts the sources' entries (Sync, Touch), repairs the ones a crash left
// (Repair) and answers what is posted (Entries, Balance).
type Service struct {
	Store Store
	// Now stamps entries' PostedAt and ages marks (time.Now when nil).
	Now func() time.Time
	// Lease is how old a mark must be before Repair touches its source again: longer than
	// any Touch runs (default 2 minutes).
	Lease time.Duration
	Log   *slog.Logger
	// Erased, when set, tells the erased accounts: Touch leaves their sources alone (a
	// booking event replayed after the account's erasure posts nothing and keeps no mark).
	Erased func(ctx context.Context, account string) (bool, error)

	mu        sync.RWMutex
	resolvers map[string]Resolver
}

// New returns a Service over st.
func New(st Store) *Service {
	return &Service{Store: st, Lease: 2 * time.Minute, resolvers: map[string]Resolver{}}
}

// Register sets the resolver of the sources of kind ("booking" for "booking:12").
func (s *Service) Register(kind string, r Resolver) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resolvers == nil {
		s.resolvers = map[string]Resolver{}
	}
	s.resolvers[kind] = r
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// EntryID is the id of a source's seq-th entry.
func EntryID(account, source string, seq int64) string {
	return fmt.Sprintf("%s:%s:%d", account, source, seq)
}

// key is what postings are summed by: two postings of one key are the same amount's parts.
type key struct {
	Date, Currency, Account  string
	Owner, Property, Booking int64
	Line, Label              string
}

func keyOf(p Posting) key {
	return key{p.Date, p.Currency, p.Account, p.OwnerID, p.PropertyID, p.BookingID, p.Line, p.Label}
}

func (k key) posting(amount decimal.Decimal) Posting {
	return Posting{Date: k.Date, Currency: k.Currency, Account: k.Account, Amount: amount, OwnerID: k.Owner,
		PropertyID: k.Property, BookingID: k.Booking, Line: k.Line, Label: k.Label}
}

func compareKeys(a, b key) int {
	return cmp.Or(cmp.Compare(a.Date, b.Date), cmp.Compare(a.Currency, b.Currency), cmp.Compare(a.Account, b.Account),
		cmp.Compare(a.Owner, b.Owner), cmp.Compare(a.Property, b.Property), cmp.Compare(a.Booking, b.Booking),
		cmp.Compare(a.Line, b.Line), cmp.Compare(a.Label, b.Label))
}

// Sums adds postings up per key (date, currency, ledger account, owner, property, booking,
// line, label), leaving out the keys that sum to zero.
func sums(ps []Posting) map[key]decimal.Decimal {
	m := map[key]decimal.Decimal{}
	for _, p := range ps {
		k := keyOf(p)
		m[k] = m[k].Add(p.Amount)
	}
	for k, v := range m {
		if v.IsZero() {
			delete(m, k)
		}
	}
	return m
}

// Check refuses postings that are incomplete or whose (date, currency) groups do not sum
// to zero.
func Check(want []Posting) error {
	totals := map[[2]string]decimal.Decimal{}
	for _, p := range want {
		if len(p.Date) != len("2006-01-02") || p.Currency == "" || p.Account == "" {
			return fmt.Errorf("journal: posting %+v lacks its date, currency or account", p)
		}
		g := [2]string{p.Date, p.Currency}
		totals[g] = totals[g].Add(p.Amount)
	}
	for g, t := range totals {
		if !t.IsZero() {
			return fmt.Errorf("%w: %s %s sums to %s", ErrUnbalanced, g[0], g[1], t)
		}
	}
	return nil
}

// Same tells whether two sets of postings sum to the same amounts per key.
func Same(a, b []Posting) bool {
	x, y := sums(a), sums(b)
	if len(x) != len(y) {
		return false
	}
	for k, v := range x {
		if w, ok := y[k]; !ok || !w.Equal(v) {
			return false
		}
	}
	return true
}

// PostingsOf flattens entries.
func PostingsOf(es []Entry) []Posting {
	var ps []Posting
	for _, e := range es {
		ps = append(ps, e.Postings...)
	}
	return ps
}

// difference answers the entries (without ids) that bring posted to want: one per date and
// currency whose sums differ, its postings by key.
func difference(want []Posting, posted []Entry) []Entry {
	w, p := sums(want), sums(PostingsOf(posted))
	d := map[key]decimal.Decimal{}
	for k, v := range w {
		d[k] = v
	}
	for k, v := range p {
		d[k] = d[k].Sub(v)
	}
	keys := make([]key, 0, len(d))
	for k, v := range d {
		if !v.IsZero() {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareKeys)
	var out []Entry
	for _, k := range keys {
		if n := len(out); n == 0 || out[n-1].Date != k.Date || out[n-1].Currency != k.Currency {
			out = append(out, Entry{Date: k.Date, Currency: k.Currency})
		}
		e := &out[len(out)-1]
		e.Postings = append(e.Postings, k.posting(d[k]))
	}
	return out
}

// sameContent tells whether two entries post the same.
func sameContent(a, b Entry) bool {
	if a.Date != b.Date || a.Currency != b.Currency || len(a.Postings) != len(b.Postings) {
		return false
	}
	for i := range a.Postings {
		x, y := a.Postings[i], b.Postings[i]
		if keyOf(x) != keyOf(y) || !x.Amount.Equal(y.Amount) {
			return false
		}
	}
	return true
}

// Sync makes the entries of source post want: it compares want with what the source has
// posted, summed per key, and inserts one balanced entry per date and currency holding the
// difference, with the source's next ids. It answers the entries it inserted (none when
// the source already posts want). Entry k of a source is always computed from entries
// 1…k−1, so concurrent Syncs of one source never post twice: the one that loses an id
// to another reads the source again. A want whose date-and-currency groups do not sum to
// zero is refused (ErrUnbalanced) and nothing is posted.
func (s *Service) Sync(ctx context.Context, account, source string, want []Posting) ([]Entry, error) {
	if err := Check(want); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	var inserted []Entry
	for round := 0; round < maxRounds; round++ {
		posted, err := s.Store.Posted(ctx, account, source)
		if err != nil {
			return inserted, err
		}
		diff := difference(want, posted)
		if len(diff) == 0 {
			return inserted, nil
		}
		var seq int64
		for _, e := range posted {
			seq = max(seq, e.Seq)
		}
		ours := true // every entry of diff stored by this writer
		for _, e := range diff {
			seq++
			e.ID, e.AccountID, e.Source, e.Seq = EntryID(account, source, seq), account, source, seq
			e.PostedAt = s.now().Truncate(time.Millisecond)
			got, err := s.Store.Insert(ctx, e)
			if err != nil {
				return inserted, fmt.Errorf("%s: %w", source, err)
			}
			if !sameContent(got, e) {
				ours = false
				break // another writer took this id: read the source again
			}
			if got.PostedAt.Equal(e.PostedAt) {
				inserted = append(inserted, got)
			} else {
				ours = false
			}
			faults.At(ctx, "journal.inserted")
		}
		if ours {
			// posted and diff sum to want (difference is whole): nothing to read again. A
			// writer that stored after posted was read, with another want, is Touch's to
			// catch: it resolves again after the sync.
			return inserted, nil
		}
	}
	return inserted, fmt.Errorf("%s: still changing after %d rounds", source, maxRounds)
}

// kindOf is the kind of a source: "booking" of "booking:12".
func kindOf(source string) string {
	kind, _, _ := strings.Cut(source, ":")
	return kind
}

// Mark records that source is about to change (its writer marks it before the write), so
// that Repair syncs it if the writer stops before its Touch.
func (s *Service) Mark(ctx context.Context, account, source string) error {
	return s.Store.Mark(ctx, account, source)
}

// Touch brings source's entries up to date: it marks the source, asks its kind's resolver
// what it should post, syncs, and forgets the mark. A crash in between leaves the mark,
// which Repair finds. It resolves again after syncing until what it synced is still what
// the source should post, so a Touch that read the source before a change and synced after
// a newer Touch does not leave the older postings.
func (s *Service) Touch(ctx context.Context, account, source string) error {
	r, gone, err := s.resolverOf(ctx, account, source)
	switch {
	case err != nil:
		return err
	case gone:
		return s.Store.Unmark(ctx, account, source)
	}
	if err := s.Store.Mark(ctx, account, source); err != nil {
		return err
	}
	if err := s.follow(ctx, account, source, r); err != nil {
		return err
	}
	return s.Store.Unmark(ctx, account, source)
}

// Follow is Touch for a caller that calls it again until it returns nil, however it stopped:
// the journal consumer, whose message is committed only then. It takes no mark (the call
// that follows a stop is the repair) and leaves another writer's mark to Repair: two round
// trips less on every booking event.
func (s *Service) Follow(ctx context.Context, account, source string) error {
	r, gone, err := s.resolverOf(ctx, account, source)
	if err != nil || gone {
		return err
	}
	return s.follow(ctx, account, source, r)
}

// resolverOf answers the resolver of source's kind, and whether source's account is erased
// (its sources are then left alone).
func (s *Service) resolverOf(ctx context.Context, account, source string) (r Resolver, gone bool, err error) {
	s.mu.RLock()
	r = s.resolvers[kindOf(source)]
	s.mu.RUnlock()
	if r == nil {
		return nil, false, fmt.Errorf("journal: no resolver for %q", source)
	}
	if s.Erased != nil {
		gone, err = s.Erased(ctx, account)
	}
	return r, gone, err
}

// follow syncs source to what r says it should post, and resolves again after each sync
// until that is still what it synced.
func (s *Service) follow(ctx context.Context, account, source string, r Resolver) error {
	want, err := r(ctx, account, source)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	for round := 0; ; round++ {
		if _, err := s.Sync(ctx, account, source, want); err != nil {
			return err
		}
		again, err := r(ctx, account, source)
		if err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		if Same(want, again) {
			break
		}
		if round == maxRounds {
			return fmt.Errorf("%s: still changing after %d rounds", source, maxRounds)
		}
		want = again
	}
	faults.At(ctx, "journal.synced")
	return nil
}

// Repair touches again every source marked longer than Lease ago: a Touch that stopped
// between its mark and the end. It goes on past a source that fails, and answers the first
// failure.
func (s *Service) Repair(ctx context.Context) error {
	marks, err := s.Store.Marked(ctx, s.now().Add(-s.Lease))
	if err != nil {
		return err
	}
	var first error
	for _, m := range marks {
		if err := s.Touch(ctx, m[0], m[1]); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if s.Log != nil {
				s.Log.Warn("journal repair failed", "account", m[0], "source", m[1], "error", err)
			}
			first = cmp.Or(first, err)
		}
	}
	return first
}

// Run repairs every interval until ctx ends.
func (s *Service) Run(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := s.Repair(ctx); err != nil && ctx.Err() == nil && s.Log != nil {
				s.Log.Warn("journal repair", "error", err)
			}
		}
	}
}

// Matches tells whether posting p of an entry dated date is selected by q.
func (q Query) Matches(date string, p Posting) bool {
	return (q.LedgerAccount == "" || p.Account == q.LedgerAccount) && (q.OwnerID == 0 || p.OwnerID == q.OwnerID) &&
		(q.PropertyID == 0 || p.PropertyID == q.PropertyID) && (q.BookingID == 0 || p.BookingID == q.BookingID) &&
		(q.Currency == "" || p.Currency == q.Currency) && (q.From == "" || date >= q.From) && (q.To == "" || date <= q.To)
}

// Entries answers account's entries with a posting q selects, whole (every posting), by
// date then id.
func (s *Service) Entries(ctx context.Context, account string, q Query) ([]Entry, error) {
	return s.Store.Entries(ctx, account, q)
}

// Balance sums the postings q selects. A balance "as of" a day is Query{To: day}: it counts
// every entry dated that day or before, whenever posted, and none dated later (a stay's
// earnings posted before its check-out belong to the check-out's day). q.Currency is
// required: amounts of two currencies are never added.
func (s *Service) Balance(ctx context.Context, account string, q Query) (decimal.Decimal, error) {
	if q.Currency == "" {
		return decimal.Zero, errors.New("journal: a balance needs its currency")
	}
	es, err := s.Store.Entries(ctx, account, q)
	if err != nil {
		return decimal.Zero, err
	}
	total := decimal.Zero
	for _, e := range es {
		for _, p := range e.Postings {
			if q.Matches(e.Date, p) {
				total = total.Add(p.Amount)
			}
		}
	}
	return total, nil
}
