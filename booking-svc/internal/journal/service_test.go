package journal_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/booking-svc/internal/faults"
	"github.com/vros/vros/booking-svc/internal/journal"
	"github.com/vros/vros/booking-svc/internal/store"
	"github.com/vros/vros/testkit/testinfra"
	"github.com/vros/vros/testkit/together"
)

var db *mongo.Database

// The ledger is tested on the embedded FerretDB (or VROS_MONGO_URI's server).
func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "journal_test", &db, nil) }

var accounts atomic.Int64

// newLedger is a ledger over the test database, and a fresh account.
func newLedger(t *testing.T) (*journal.Service, *store.Journal, string) {
	t.Helper()
	st, err := store.NewJournal(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return journal.New(st), st, fmt.Sprintf("acc%d_%d", time.Now().UnixNano()%1e6, accounts.Add(1))
}

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func pay(date, amount string, id int64) []journal.Posting {
	return []journal.Posting{
		{Date: date, Currency: "EUR", Account: journal.Cash, Amount: d(amount), BookingID: 1, Line: journal.LinePayment, Label: fmt.Sprint("payment ", id)},
		{Date: date, Currency: "EUR", Account: journal.GuestFunds, Amount: d(amount).Neg(), BookingID: 1, Line: journal.LinePayment, Label: fmt.Sprint("payment ", id)},
	}
}

// checkBalanced fails unless every entry of account sums to zero and the whole ledger sums
// to zero per currency.
func checkBalanced(t *testing.T, l *journal.Service, account string) []journal.Entry {
	t.Helper()
	es, err := l.Entries(context.Background(), account, journal.Query{})
	if err != nil {
		t.Fatal(err)
	}
	total := map[string]decimal.Decimal{}
	for _, e := range es {
		s := decimal.Zero
		for _, p := range e.Postings {
			s = s.Add(p.Amount)
			if p.Date != e.Date || p.Currency != e.Currency {
				t.Fatalf("entry %s: posting %+v of another date or currency", e.ID, p)
			}
		}
		if !s.IsZero() {
			t.Fatalf("entry %s sums to %s", e.ID, s)
		}
		total[e.Currency] = total[e.Currency].Add(s)
	}
	for c, s := range total {
		if !s.IsZero() {
			t.Fatalf("ledger in %s sums to %s", c, s)
		}
	}
	return es
}

func posted(t *testing.T, st journal.Store, account, source string) []journal.Posting {
	t.Helper()
	es, err := st.Posted(context.Background(), account, source)
	if err != nil {
		t.Fatal(err)
	}
	return journal.PostingsOf(es)
}

func TestSyncPostsTheDifferenceOnce(t *testing.T) {
	ctx := context.Background()
	l, st, acc := newLedger(t)
	want := pay("2026-03-01", "100.00", 1)
	es, err := l.Sync(ctx, acc, "booking:1", want)
	if err != nil || len(es) != 1 || es[0].ID != acc+":booking:1:1" {
		t.Fatalf("first sync: %v %+v", err, es)
	}
	if es, err := l.Sync(ctx, acc, "booking:1", want); err != nil || len(es) != 0 {
		t.Fatalf("second sync posted %+v (%v)", es, err)
	}
	// A second payment, and the first moved to another day: one entry per day, the first
	// reversing the payment on its old day.
	want2 := append(pay("2026-03-02", "100.00", 1), pay("2026-03-05", "50.00", 2)...)
	es, err = l.Sync(ctx, acc, "booking:1", want2)
	if err != nil || len(es) != 3 {
		t.Fatalf("third sync: %v %+v", err, es)
	}
	if es[0].Date != "2026-03-01" || es[1].Date != "2026-03-02" || es[2].Date != "2026-03-05" || es[0].Seq != 2 || es[2].Seq != 4 {
		t.Fatalf("entries %+v", es)
	}
	if !es[0].Postings[0].Amount.Equal(d("-100")) || es[0].Postings[0].Account != journal.Cash {
		t.Fatalf("reversal %+v", es[0])
	}
	if !journal.Same(posted(t, st, acc, "booking:1"), want2) {
		t.Fatal("posted differs from want")
	}
	checkBalanced(t, l, acc)
	// Nothing wanted: everything reversed (the 03-01 payment already was).
	if es, err = l.Sync(ctx, acc, "booking:1", nil); err != nil || len(es) != 2 {
		t.Fatalf("reversal: %v %+v", err, es)
	}
	if ps := posted(t, st, acc, "booking:1"); !journal.Same(ps, nil) {
		t.Fatalf("left %+v", ps)
	}
}

func TestSyncRefusesUnbalancedPostings(t *testing.T) {
	ctx := context.Background()
	l, st, acc := newLedger(t)
	want := pay("2026-03-01", "100.00", 1)
	want[1].Amount = d("-99.99")
	if _, err := l.Sync(ctx, acc, "booking:1", want); !errors.Is(err, journal.ErrUnbalanced) {
		t.Fatalf("unbalanced: %v", err)
	}
	// Balanced overall but not per day.
	want = pay("2026-03-01", "100.00", 1)
	want[1].Date = "2026-03-02"
	if _, err := l.Sync(ctx, acc, "booking:1", want); !errors.Is(err, journal.ErrUnbalanced) {
		t.Fatalf("unbalanced per day: %v", err)
	}
	if ps := posted(t, st, acc, "booking:1"); len(ps) != 0 {
		t.Fatalf("posted %+v", ps)
	}
}

func TestEntriesAndBalanceAsOf(t *testing.T) {
	ctx := context.Background()
	l, _, acc := newLedger(t)
	earn := func(date, amount string, owner int64) []journal.Posting {
		return []journal.Posting{
			{Date: date, Currency: "EUR", Account: journal.GuestFunds, Amount: d(amount), BookingID: 2, Line: journal.LineRent},
			{Date: date, Currency: "EUR", Account: journal.Owner, Amount: d(amount).Neg(), OwnerID: owner, BookingID: 2, Line: journal.LineRent},
		}
	}
	for _, s := range []struct {
		src  string
		want []journal.Posting
	}{
		{"booking:2", append(pay("2026-03-01", "100.00", 1), earn("2026-03-10", "300.00", 7)...)},
		{"booking:3", earn("2026-02-10", "40.00", 7)},
		{"booking:4", earn("2026-03-05", "10.00", 8)},
	} {
		if _, err := l.Sync(ctx, acc, s.src, s.want); err != nil {
			t.Fatal(err)
		}
	}
	es, err := l.Entries(ctx, acc, journal.Query{LedgerAccount: journal.Owner, OwnerID: 7, From: "2026-03-01", To: "2026-03-31"})
	if err != nil || len(es) != 1 || es[0].Date != "2026-03-10" {
		t.Fatalf("entries: %v %+v", err, es)
	}
	all, _ := l.Entries(ctx, acc, journal.Query{})
	var dates []string
	for _, e := range all {
		dates = append(dates, e.Date)
	}
	if fmt.Sprint(dates) != "[2026-02-10 2026-03-01 2026-03-05 2026-03-10]" {
		t.Fatalf("order %v", dates)
	}
	for _, c := range []struct {
		q    journal.Query
		want string
	}{
		{journal.Query{LedgerAccount: journal.Owner, OwnerID: 7, Currency: "EUR", To: "2026-03-09"}, "-40"},
		{journal.Query{LedgerAccount: journal.Owner, OwnerID: 7, Currency: "EUR", To: "2026-03-10"}, "-340"},
		{journal.Query{LedgerAccount: journal.Owner, Currency: "EUR"}, "-350"},
		{journal.Query{LedgerAccount: journal.Cash, Currency: "EUR", To: "2026-02-28"}, "0"},
		{journal.Query{Currency: "EUR"}, "0"},
	} {
		got, err := l.Balance(ctx, acc, c.q)
		if err != nil || !got.Equal(d(c.want)) {
			t.Errorf("balance %+v = %s (%v), want %s", c.q, got, err, c.want)
		}
	}
	if _, err := l.Balance(ctx, acc, journal.Query{}); err == nil {
		t.Error("a balance without currency was answered")
	}
}

// A Sync stopped after its first entry (a crash between two inserts, or between an insert
// and the mark's removal) is completed by the next Touch or by Repair, posting nothing twice.
func TestStoppedSyncIsCompletedOnce(t *testing.T) {
	l, st, acc := newLedger(t)
	var want atomic.Value
	want.Store(append(pay("2026-03-01", "100.00", 1), pay("2026-03-02", "20.00", 2)...))
	l.Register("booking", func(context.Context, string, string) ([]journal.Posting, error) {
		return want.Load().([]journal.Posting), nil
	})
	errStop := errors.New("stopped")
	stopAt := func(step string) (context.Context, func() error) {
		ctx, cancel := context.WithCancelCause(context.Background())
		return faults.With(ctx, func(s string) {
			if s == step {
				cancel(errStop)
			}
		}), func() error { return context.Cause(ctx) }
	}
	ctx, cause := stopAt("journal.inserted")
	if err := l.Touch(ctx, acc, "booking:1"); err == nil || cause() != errStop {
		t.Fatalf("touch went on: %v", err)
	}
	if ps := posted(t, st, acc, "booking:1"); len(ps) != 2 {
		t.Fatalf("after the stop: %+v", ps)
	}
	if err := l.Touch(context.Background(), acc, "booking:1"); err != nil {
		t.Fatal(err)
	}
	if ps := posted(t, st, acc, "booking:1"); !journal.Same(ps, want.Load().([]journal.Posting)) || len(ps) != 4 {
		t.Fatalf("after touching again: %+v", ps)
	}

	// Stopped after syncing, before unmarking: the mark stays, and Repair (past the lease)
	// touches the source again, which by then wants something else.
	ctx, _ = stopAt("journal.synced")
	want.Store(pay("2026-03-01", "100.00", 1))
	_ = l.Touch(ctx, acc, "booking:1")
	want.Store(pay("2026-03-03", "100.00", 1))
	marks, err := st.Marked(context.Background(), time.Now().Add(time.Hour))
	if err != nil || !containsMark(marks, acc, "booking:1") {
		t.Fatalf("marks %v (%v)", marks, err)
	}
	l.Lease = -time.Hour // every mark is past it
	if err := l.Repair(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ps := posted(t, st, acc, "booking:1"); !journal.Same(ps, want.Load().([]journal.Posting)) {
		t.Fatalf("after repair: %+v", ps)
	}
	marks, _ = st.Marked(context.Background(), time.Now().Add(time.Hour))
	if containsMark(marks, acc, "booking:1") {
		t.Fatal("repair left the mark")
	}
	checkBalanced(t, l, acc)
}

// Follow (the journal consumer's Touch) takes no mark: a Follow stopped between two inserts
// is completed by the next one, as the consumer calls it again, posting nothing twice.
func TestStoppedFollowIsCompletedByTheNext(t *testing.T) {
	l, st, acc := newLedger(t)
	want := append(pay("2026-03-01", "100.00", 1), pay("2026-03-02", "20.00", 2)...)
	l.Register("booking", func(context.Context, string, string) ([]journal.Posting, error) { return want, nil })
	ctx, cancel := context.WithCancelCause(context.Background())
	ctx = faults.With(ctx, func(s string) {
		if s == "journal.inserted" {
			cancel(errors.New("stopped"))
		}
	})
	if err := l.Follow(ctx, acc, "booking:1"); err == nil {
		t.Fatal("the stopped Follow answered nil")
	}
	marks, err := st.Marked(context.Background(), time.Now().Add(time.Hour))
	if err != nil || containsMark(marks, acc, "booking:1") {
		t.Fatalf("marks %v (%v): Follow marked", marks, err)
	}
	if err := l.Follow(context.Background(), acc, "booking:1"); err != nil {
		t.Fatal(err)
	}
	if ps := posted(t, st, acc, "booking:1"); !journal.Same(ps, want) || len(ps) != 4 {
		t.Fatalf("after the next Follow: %+v", ps)
	}
	checkBalanced(t, l, acc)
}

func containsMark(ms [][2]string, account, source string) bool {
	for _, m := range ms {
		if m == [2]string{account, source} {
			return true
		}
	}
	return false
}

// Twenty Touches of one source at once post it once.
func TestConcurrentTouchesPostOnce(t *testing.T) {
	l, st, acc := newLedger(t)
	want := append(pay("2026-03-01", "100.00", 1), pay("2026-03-02", "20.00", 2)...)
	want = append(want, pay("2026-03-03", "5.00", 3)...)
	l.Register("booking", func(context.Context, string, string) ([]journal.Posting, error) { return want, nil })
	touchAtOnce(t, 20, func(int) error { return l.Touch(context.Background(), acc, "booking:1") })
	es, err := st.Posted(context.Background(), acc, "booking:1")
	if err != nil || len(es) != 3 || !journal.Same(journal.PostingsOf(es), want) {
		t.Fatalf("posted %d entries: %+v (%v)", len(es), es, err)
	}
	checkBalanced(t, l, acc)
}

// Touches of one source while what it should post changes under them, half of them the
// consumer's Follow (no mark): once the last has returned, the source's entries sum to what
// it should post last.
func TestConcurrentTouchesOfAChangingSource(t *testing.T) {
	l, st, acc := newLedger(t)
	variants := [][]journal.Posting{
		pay("2026-03-01", "100.00", 1),
		append(pay("2026-03-01", "80.00", 1), pay("2026-03-02", "20.00", 2)...),
		pay("2026-03-04", "7.50", 3),
	}
	var now atomic.Int32
	l.Register("booking", func(context.Context, string, string) ([]journal.Posting, error) {
		return variants[now.Load()], nil
	})
	touchAtOnce(t, 30, func(i int) error { // each a change, then its Touch
		now.Store(int32(i % len(variants)))
		if i%2 == 0 {
			return l.Follow(context.Background(), acc, "booking:1")
		}
		return l.Touch(context.Background(), acc, "booking:1")
	})
	es, err := st.Posted(context.Background(), acc, "booking:1")
	if err != nil || !journal.Same(journal.PostingsOf(es), variants[now.Load()]) {
		t.Fatalf("posted %+v (%v), want the sums of %+v", es, err, variants[now.Load()])
	}
	checkBalanced(t, l, acc)
}

// touchAtOnce runs touch(0) … touch(n-1) at one moment and fails t on an error.
func touchAtOnce(t *testing.T, n int, touch func(i int) error) {
	t.Helper()
	errs := make([]error, n)
	together.Run(n, func(i int) { errs[i] = touch(i) })
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// An erased account's sources are left alone: a replayed booking event posts nothing and
// leaves no mark.
func TestErasedAccountIsLeftAlone(t *testing.T) {
	ctx := context.Background()
	l, st, acc := newLedger(t)
	l.Register("booking", func(context.Context, string, string) ([]journal.Posting, error) {
		return pay("2026-03-01", "1.00", 1), nil
	})
	l.Erased = func(_ context.Context, account string) (bool, error) { return account == acc, nil }
	if err := l.Touch(ctx, acc, "booking:1"); err != nil {
		t.Fatal(err)
	}
	if ps := posted(t, st, acc, "booking:1"); len(ps) != 0 {
		t.Fatalf("posted %+v", ps)
	}
	if marks, _ := st.Marked(ctx, time.Now().Add(time.Hour)); containsMark(marks, acc, "booking:1") {
		t.Fatal("a mark was left")
	}
}
