package statement_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/booking-svc/internal/journal"
	"github.com/vros/vros/booking-svc/internal/statement"
	"github.com/vros/vros/booking-svc/internal/store"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

// The statements are kept on the embedded FerretDB (or VROS_MONGO_URI's server), their
// entries posted by the ledger's Sync into its store there.
func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "statement_test", &db, nil) }

var accounts atomic.Int64

// clock is a test clock: it moves only when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// world is a ledger and the statements over the test database, for a fresh account.
type world struct {
	ledger  *journal.Service
	svc     *statement.Service
	clock   *clock
	account string
}

func newWorld(t *testing.T) world {
	t.Helper()
	ctx := context.Background()
	js, err := store.NewJournal(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := store.NewStatements(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{now: time.Date(2027, 4, 1, 9, 30, 0, 0, time.UTC)}
	ledger := journal.New(js)
	ledger.Now = clk.Now
	names := func(_ context.Context, _ string, id int64) (string, bool, error) {
		if id == owner {
			return "Maria Rossi", true, nil
		}
		return "", false, nil
	}
	return world{ledger: ledger, clock: clk, account: fmt.Sprintf("st%d_%d", time.Now().UnixNano()%1e6, accounts.Add(1)),
		svc: &statement.Service{Ledger: ledger, Store: ss, Owners: names, Now: clk.Now, Stays: stays}}
}

// stays shows booking 12 (a channel booking) with its stay; the others are unknown.
func stays(_ context.Context, _ string, id int64) (statement.Stay, bool, error) {
	if id == 12 {
		return statement.Stay{PropertyName: "Villa Ζωή", Checkin: "2027-03-10", Checkout: "2027-03-15", Channel: "airbnb", Status: "reserved"}, true, nil
	}
	return statement.Stay{}, false, nil
}

// post syncs every source of es into the ledger, as their documents' resolvers would: each
// source's postings whole.
func (w world) post(t *testing.T, es []journal.Entry) {
	t.Helper()
	bySource := map[string][]journal.Posting{}
	var order []string
	for _, e := range es {
		if _, ok := bySource[e.Source]; !ok {
			order = append(order, e.Source)
		}
		bySource[e.Source] = append(bySource[e.Source], e.Postings...)
	}
	for _, src := range order {
		if _, err := w.ledger.Sync(context.Background(), w.account, src, bySource[src]); err != nil {
			t.Fatalf("sync %s: %v", src, err)
		}
	}
}

// files renders a revision in every format.
func files(t *testing.T, r statement.Revision) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range statement.Formats {
		file, err := statement.Render(r, f)
		if err != nil {
			t.Fatalf("render %s: %v", f, err)
		}
		out[f] = file.Body
	}
	return out
}

// TestStatementOfAMonth is the statement test: a month with a direct booking and a
// channel booking with commission, a cancellation with a refund, an expense, a fee and a
// payout, posted through the ledger's Sync; the statement's lines and totals are the
// hand-computed table (build_test.go), pdftotext reads its totals, and generating it again is
// the same bytes in every format until an entry dated in the month is posted late.
func TestStatementOfAMonth(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	w.post(t, handEntries(t, w.clock.Now()))
	req := statement.Request{OwnerID: owner, From: "2027-03-01", To: "2027-03-31"} // currency: the owner's only one

	w.clock.Add(time.Hour)
	r1, created, err := w.svc.Generate(ctx, w.account, req)
	if err != nil || !created || r1.Revision != 1 || r1.StatementID != "7-EUR-20270301-20270331" {
		t.Fatalf("generate: %+v created %v, %v", r1.StatementID, created, err)
	}
	st, err := statement.Parse(r1.JSON)
	if err != nil {
		t.Fatal(err)
	}
	checkHand(t, st)
	for _, b := range st.Bookings {
		want := statement.Booking{}
		if b.BookingID == 12 {
			want = statement.Booking{PropertyName: "Villa Ζωή", Checkin: "2027-03-10", Checkout: "2027-03-15", Channel: "airbnb", Status: "reserved"}
		}
		if b.PropertyName != want.PropertyName || b.Checkin != want.Checkin || b.Checkout != want.Checkout || b.Channel != want.Channel || b.Status != want.Status {
			t.Errorf("booking %d shows its stay as %+v, want %+v", b.BookingID, b, want)
		}
	}
	if st.Owner.Name != "Maria Rossi" || st.CreatedAt != "2027-04-01T10:30:00Z" || len(st.Changes) != 0 {
		t.Errorf("owner %+v created %s changes %v", st.Owner, st.CreatedAt, st.Changes)
	}
	f1 := files(t, r1)
	if text := PDFText(t, f1["pdf"]); text != "" {
		for _, want := range []string{"Closing balance (net due)", handClosing, "Opening balance", handOpening, "Net of the period", handNet,
			"Total rent", "1800.00", "Total channel_commission", "-150.00", "Total cancellation_fee", "100.00", "Total payout", "-500.00",
			"Booking 12, Villa Ζωή, 2027-03-10 to 2027-03-15, airbnb", "Booking 11, property"} {
			if !strings.Contains(text, want) {
				t.Errorf("pdftotext does not show %q:\n%s", want, text)
			}
		}
	}

	// Again, a day later, and after an entry of April: the same revision, the same bytes.
	w.clock.Add(24 * time.Hour)
	w.post(t, []journal.Entry{entry(t, "payout:8", 1, "2027-04-03", w.clock.Now(),
		post{journal.Owner, "100.00", journal.LinePayout, "April payout", 0}, post{journal.Cash, "-100.00", journal.LinePayout, "", 0})})
	r1b, created, err := w.svc.Generate(ctx, w.account, req)
	if err != nil || created || r1b.Revision != 1 {
		t.Fatalf("generate again: revision %d created %v, %v", r1b.Revision, created, err)
	}
	f1b := files(t, r1b)
	for _, f := range statement.Formats {
		if !bytes.Equal(f1[f], f1b[f]) {
			t.Errorf("%s regenerated differs", f)
		}
	}

	// A late expense dated in March: a new revision that lists it.
	w.clock.Add(24 * time.Hour)
	late := w.clock.Now()
	w.post(t, []journal.Entry{entry(t, "expense:9", 1, "2027-03-25", late,
		post{journal.Owner, "80.00", journal.LineExpense, "Late invoice: plumber", 0}, post{journal.Cash, "-80.00", journal.LineExpense, "", 0})})
	r2, created, err := w.svc.Generate(ctx, w.account, req)
	if err != nil || !created || r2.Revision != 2 {
		t.Fatalf("generate after a late entry: revision %d created %v, %v", r2.Revision, created, err)
	}
	st2, _ := statement.Parse(r2.JSON)
	want := statement.Change{EntryID: w.account + ":expense:9:1", Date: "2027-03-25", PostedAt: late.Format(time.RFC3339),
		Line: "expense", Label: "Late invoice: plumber", Amount: "-80.00"}
	if len(st2.Changes) != 1 || st2.Changes[0] != want {
		t.Errorf("changes %+v, want [%+v]", st2.Changes, want)
	}
	if st2.ClosingBalance != "1065.00" || st2.Totals[7] != (statement.Total{Line: "expense", Amount: "-200.00"}) {
		t.Errorf("revision 2: closing %s expense total %+v", st2.ClosingBalance, st2.Totals[7])
	}
	if text := PDFText(t, files(t, r2)["pdf"]); text != "" && !strings.Contains(text, "Late invoice: plumber") {
		t.Errorf("the PDF of revision 2 does not list the change:\n%s", text)
	}
	// Revision 1 is kept as it was; generate answers revision 2 from now on.
	old, err := w.svc.Get(ctx, w.account, r1.StatementID, 1)
	if err != nil || !bytes.Equal(old.JSON, r1.JSON) {
		t.Errorf("revision 1 afterwards: %v", err)
	}
	r2b, created, err := w.svc.Generate(ctx, w.account, req)
	if err != nil || created || r2b.Revision != 2 || !bytes.Equal(r2b.JSON, r2.JSON) {
		t.Errorf("generate after revision 2: %d %v %v", r2b.Revision, created, err)
	}
	heads, err := w.svc.List(ctx, w.account, owner)
	if err != nil || len(heads) != 1 || heads[0].Revision != 2 {
		t.Errorf("list: %+v %v", heads, err)
	}
}

// TestStatementsAreTheAccountsOwn: another account finds neither the statement nor, through
// its own statements, anything of the first; a link opens its own account's statement only,
// for 90 days.
func TestStatementsAreTheAccountsOwn(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	w.post(t, handEntries(t, w.clock.Now()))
	r, _, err := w.svc.Generate(ctx, w.account, statement.Request{OwnerID: owner, From: "2027-03-01", To: "2027-03-31", Currency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	other := w.account + "_other"
	if _, err := w.svc.Get(ctx, other, r.StatementID, 0); !errors.Is(err, statement.ErrNotFound) {
		t.Errorf("another account's get: %v", err)
	}
	if _, err := w.svc.Get(ctx, other, r.StatementID, 1); !errors.Is(err, statement.ErrNotFound) {
		t.Errorf("another account's get of revision 1: %v", err)
	}
	if _, _, err := w.svc.Link(ctx, other, r.StatementID); !errors.Is(err, statement.ErrNotFound) {
		t.Errorf("another account's link: %v", err)
	}
	if hs, err := w.svc.List(ctx, other, 0); err != nil || len(hs) != 0 {
		t.Errorf("another account's list: %v %v", hs, err)
	}
	// The other account's generate of the same owner id sees its own (empty) ledger.
	if _, _, err := w.svc.Generate(ctx, other, statement.Request{OwnerID: owner, From: "2027-03-01", To: "2027-03-31"}); err == nil ||
		!strings.Contains(err.Error(), "no postings") {
		t.Errorf("another account's generate without currency: %v", err)
	}

	token, l, err := w.svc.Link(ctx, w.account, r.StatementID)
	if err != nil || !statement.ValidToken(token) || l.Hash != statement.TokenHash(token) || !l.ExpiresAt.Equal(w.clock.Now().AddDate(0, 0, 90)) {
		t.Fatalf("link %q %+v %v", token, l, err)
	}
	got, err := w.svc.ByToken(ctx, token)
	if err != nil || !bytes.Equal(got.JSON, r.JSON) {
		t.Errorf("by token: %v", err)
	}
	for _, bad := range []string{token[:42] + "A", "x", ""} {
		if bad == token {
			continue
		}
		if _, err := w.svc.ByToken(ctx, bad); !errors.Is(err, statement.ErrNotFound) {
			t.Errorf("by token %q: %v", bad, err)
		}
	}
	w.clock.Add(90 * 24 * time.Hour)
	if _, err := w.svc.ByToken(ctx, token); !errors.Is(err, statement.ErrNotFound) {
		t.Errorf("by token after 90 days: %v", err)
	}
}

// TestGenerateNeedsACurrencyAndAnOwner: an owner with postings in two currencies names one;
// an unknown owner is refused.
func TestGenerateNeedsACurrencyAndAnOwner(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	w.post(t, handEntries(t, w.clock.Now()))
	usd := entry(t, "payout:20", 1, "2027-03-02", w.clock.Now(), post{journal.Owner, "10.00", journal.LinePayout, "USD payout", 0},
		post{journal.Cash, "-10.00", journal.LinePayout, "", 0})
	usd.Currency = "USD"
	for i := range usd.Postings {
		usd.Postings[i].Currency = "USD"
	}
	w.post(t, []journal.Entry{usd})
	_, _, err := w.svc.Generate(ctx, w.account, statement.Request{OwnerID: owner, From: "2027-03-01", To: "2027-03-31"})
	var ce *statement.CurrencyError
	if !errors.As(err, &ce) || fmt.Sprint(ce.Currencies) != "[EUR USD]" {
		t.Errorf("without currency: %v", err)
	}
	r, _, err := w.svc.Generate(ctx, w.account, statement.Request{OwnerID: owner, From: "2027-03-01", To: "2027-03-31", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := statement.Parse(r.JSON)
	if st.ClosingBalance != "-10.00" || st.OpeningBalance != "0.00" || len(st.Payouts) != 1 || len(st.Bookings) != 0 {
		t.Errorf("USD statement: %+v", st)
	}
	if _, _, err := w.svc.Generate(ctx, w.account, statement.Request{OwnerID: 99, From: "2027-03-01", To: "2027-03-31"}); !errors.Is(err, statement.ErrNoOwner) {
		t.Errorf("unknown owner: %v", err)
	}
}

// TestConcurrentGeneratesMakeOneRevision: generates of one statement at once store one
// revision, and every one of them answers its bytes.
func TestConcurrentGeneratesMakeOneRevision(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	w.post(t, handEntries(t, w.clock.Now()))
	req := statement.Request{OwnerID: owner, From: "2027-03-01", To: "2027-03-31", Currency: "EUR"}
	// Each generate reads another second, so that a loser's own revision would differ from
	// the one stored.
	var tick atomic.Int64
	w.svc.Now = func() time.Time { return w.clock.Now().Add(time.Duration(tick.Add(1)) * time.Second) }
	const n = 6
	revs := make([]statement.Revision, n)
	made := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			revs[i], made[i], errs[i] = w.svc.Generate(ctx, w.account, req)
		}()
	}
	wg.Wait()
	created := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("generate %d: %v", i, errs[i])
		}
		if made[i] {
			created++
		}
		if revs[i].Revision != 1 || !bytes.Equal(revs[i].JSON, revs[0].JSON) {
			t.Errorf("generate %d answered revision %d:\n%s\nothers:\n%s", i, revs[i].Revision, revs[i].JSON, revs[0].JSON)
		}
	}
	if created != 1 {
		t.Errorf("%d generates stored a revision, want 1", created)
	}
	if r, err := w.svc.Get(ctx, w.account, revs[0].StatementID, 2); !errors.Is(err, statement.ErrNotFound) {
		t.Errorf("revision 2 exists: %d %v", r.Revision, err)
	}
}
