package ledger_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/booking-svc/internal/ledger/nightstore"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "ledger_test", &db, nil) }

func newLedger(t *testing.T) *ledger.Ledger {
	t.Helper()
	st, err := nightstore.New(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return ledger.New(st)
}

func dates(from string, n int) []string {
	d, _ := time.Parse(time.DateOnly, from)
	out := make([]string, n)
	for i := range out {
		out[i] = d.AddDate(0, 0, i).Format(time.DateOnly)
	}
	return out
}

func owners(t *testing.T, l *ledger.Ledger, account string, pid int64, ds []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range ds {
		o, err := l.Owner(context.Background(), account, pid, d)
		if err != nil {
			t.Fatal(err)
		}
		out[d] = o
	}
	return out
}

// TestConcurrentIdenticalClaims: 50 owners claim the same week at once; exactly one gets
// it, the others are told which night is taken, and the week belongs to the winner alone.
func TestConcurrentIdenticalClaims(t *testing.T) {
	l := newLedger(t)
	week := dates("2027-03-01", 7)
	var wg sync.WaitGroup
	results := make([]error, 50)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = l.Claim(context.Background(), ledger.Stay{Account: "a1", PropertyID: 1, Dates: week}, fmt.Sprintf("booking:%d", i))
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range results {
		switch {
		case err == nil:
			if winner >= 0 {
				t.Fatalf("owners %d and %d both claimed the week", winner, i)
			}
			winner = i
		case !ledger.IsTaken(err):
			t.Fatalf("owner %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("nobody got the week")
	}
	for d, o := range owners(t, l, "a1", 1, week) {
		if o != fmt.Sprintf("booking:%d", winner) {
			t.Fatalf("night %s held by %q, want booking:%d", d, o, winner)
		}
	}
}

// TestOverlappingClaims: stays that overlap partly never share a night, and a loser leaves
// nothing behind.
func TestOverlappingClaims(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	all := dates("2027-04-01", 40)
	var wg sync.WaitGroup
	for i := 0; i < 30; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := i % 30
			_ = l.Claim(ctx, ledger.Stay{Account: "a1", PropertyID: 2, Dates: all[start : start+5+i%6]}, fmt.Sprintf("booking:%d", i))
		}()
	}
	wg.Wait()
	// Each owner holds either all of its stay or none of it.
	held := map[string][]string{}
	for d, o := range owners(t, l, "a1", 2, all) {
		if o != "" {
			held[o] = append(held[o], d)
		}
	}
	for i := 0; i < 30; i++ {
		o := fmt.Sprintf("booking:%d", i)
		start := i % 30
		want := len(all[start : start+5+i%6])
		if got := len(held[o]); got != 0 && got != want {
			t.Fatalf("%s holds %d of its %d nights", o, got, want)
		}
	}
	if len(held) == 0 {
		t.Fatal("no stay succeeded")
	}
}

func TestClaimOtherAccountOrProperty(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	week := dates("2027-05-01", 3)
	if err := l.Claim(ctx, ledger.Stay{Account: "a1", PropertyID: 3, Dates: week}, "booking:1"); err != nil {
		t.Fatal(err)
	}
	// Same dates: another property of the account, and the same property id in another
	// account, are free.
	if err := l.Claim(ctx, ledger.Stay{Account: "a1", PropertyID: 4, Dates: week}, "booking:2"); err != nil {
		t.Fatal(err)
	}
	if err := l.Claim(ctx, ledger.Stay{Account: "a2", PropertyID: 3, Dates: week}, "booking:3"); err != nil {
		t.Fatal(err)
	}
	err := l.Claim(ctx, ledger.Stay{Account: "a1", PropertyID: 3, Dates: dates("2027-04-30", 3)}, "booking:4")
	if te, ok := err.(*ledger.TakenError); !ok || te.Date != "2027-05-01" {
		t.Fatalf("claim over a held night: %v", err)
	}
	if o := owners(t, l, "a1", 3, []string{"2027-04-30"}); o["2027-04-30"] != "" {
		t.Fatal("failed claim left its first night behind")
	}
}

// TestRepair: a change that crashed after claiming new nights but before its document
// moved leaves them held; the janitor releases them and keeps what the document says.
func TestRepair(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	old, moved := dates("2027-06-01", 3), dates("2027-06-10", 3)
	if err := l.Claim(ctx, ledger.Stay{Account: "a1", PropertyID: 5, Dates: old}, "booking:9"); err != nil {
		t.Fatal(err)
	}
	op := ledger.Op{Owner: "booking:9", Account: "a1", Claim: []ledger.Stay{{PropertyID: 5, Dates: moved}}, Release: []ledger.Stay{{PropertyID: 5, Dates: old}}}
	if err := l.Begin(ctx, op); err != nil {
		t.Fatal(err)
	}
	if err := l.Begin(ctx, op); err != ledger.ErrBusy {
		t.Fatalf("second op of one owner: %v", err)
	}
	if err := l.Claim(ctx, ledger.Stay{Account: "a1", PropertyID: 5, Dates: moved}, "booking:9"); err != nil {
		t.Fatal(err)
	}
	// …crash: the booking document still says "old".
	current := func(context.Context, string, string) ([]ledger.Stay, error) {
		return []ledger.Stay{{Account: "a1", PropertyID: 5, Dates: old}}, nil
	}
	if n, err := l.Repair(ctx, time.Hour, current); err != nil || n != 0 {
		t.Fatalf("repair before the lease: %d, %v", n, err)
	}
	l.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if n, err := l.Repair(ctx, time.Hour, current); err != nil || n != 1 {
		t.Fatalf("repair: %d, %v", n, err)
	}
	for d, o := range owners(t, l, "a1", 5, append(old, moved...)) {
		want := ""
		if d < "2027-06-05" {
			want = "booking:9"
		}
		if o != want {
			t.Fatalf("after repair night %s held by %q, want %q", d, o, want)
		}
	}
	if err := l.Begin(ctx, op); err != nil {
		t.Fatalf("op not removed by repair: %v", err)
	}
}

// TestReleaseFreesOnlyTheOwnersNights: a release planned from a stale read cannot free a
// night another owner holds now.
func TestReleaseFreesOnlyTheOwnersNights(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	mine, theirs := dates("2027-07-01", 2), dates("2027-07-03", 2)
	if err := l.Claim(ctx, ledger.Stay{Account: "a1", PropertyID: 6, Dates: mine}, "booking:1"); err != nil {
		t.Fatal(err)
	}
	if err := l.Claim(ctx, ledger.Stay{Account: "a1", PropertyID: 6, Dates: theirs}, "booking:2"); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, ledger.Stay{Account: "a1", PropertyID: 6, Dates: append(append([]string{}, mine...), theirs...)}, "booking:1"); err != nil {
		t.Fatal(err)
	}
	for d, o := range owners(t, l, "a1", 6, append(append([]string{}, mine...), theirs...)) {
		want := "booking:2"
		if d < "2027-07-03" {
			want = ""
		}
		if o != want {
			t.Fatalf("night %s held by %q, want %q", d, o, want)
		}
	}
}

// TestRepairOwner: the op of a change still within its deadline (and one more deadline) is
// not touched; once past, it is repaired like the janitor would.
func TestRepairOwner(t *testing.T) {
	l := newLedger(t)
	moved := dates("2027-08-10", 2)
	// The ledger's clock stands still but when the test moves it: the op is within its
	// deadline however long the writes take (the deadline, a minute of real time, only
	// guards against a hang).
	t0 := time.Now()
	l.Now = func() time.Time { return t0 }
	ctx, cancel := context.WithDeadline(context.Background(), t0.Add(time.Minute))
	defer cancel()
	if err := l.Begin(ctx, ledger.Op{Owner: "booking:7", Account: "a1", Claim: []ledger.Stay{{PropertyID: 8, Dates: moved}}}); err != nil {
		t.Fatal(err)
	}
	if err := l.Claim(ctx, ledger.Stay{Account: "a1", PropertyID: 8, Dates: moved}, "booking:7"); err != nil {
		t.Fatal(err)
	}
	nothing := func(context.Context, string, string) ([]ledger.Stay, error) { return nil, nil }
	if _, err := l.RepairOwner(context.Background(), "a1", "booking:7", time.Second, time.Hour, nothing); err != ledger.ErrBusy {
		t.Fatalf("repair of a running change: %v, want ledger.ErrBusy", err)
	}
	l.Now = func() time.Time { return t0.Add(time.Minute + 3*time.Second) } // past the deadline and the margin
	if ok, err := l.RepairOwner(context.Background(), "a1", "booking:7", time.Second, time.Hour, nothing); err != nil || !ok {
		t.Fatalf("repair of a stopped change: %v, %v", ok, err)
	}
	for d, o := range owners(t, l, "a1", 8, moved) {
		if o != "" {
			t.Fatalf("night %s still held by %s", d, o)
		}
	}
	if ok, err := l.RepairOwner(context.Background(), "a1", "booking:7", time.Second, time.Hour, nothing); err != nil || ok {
		t.Fatalf("second repair: %v, %v (the op is gone)", ok, err)
	}
}

// TestTransfer: nights pass from one owner to another only where the first holds them; a
// night another owner holds and a free night are left as they are (and reported), and a
// transfer done again reports nothing missing.
func TestTransfer(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	account := fmt.Sprintf("transfer-%d", time.Now().UnixNano())
	week := dates("2027-04-01", 5)
	stay := func(ds ...string) ledger.Stay { return ledger.Stay{Account: account, PropertyID: 3, Dates: ds} }
	if err := l.Claim(ctx, stay(week[:3]...), "block:1"); err != nil {
		t.Fatal(err)
	}
	if err := l.Claim(ctx, stay(week[3]), "booking:9"); err != nil {
		t.Fatal(err)
	}
	missing, err := l.Transfer(ctx, stay(week...), "block:1", "block:2")
	if err != nil || !reflect.DeepEqual(missing, week[3:]) {
		t.Fatalf("Transfer: %v %v, want %v missing", missing, err, week[3:])
	}
	want := map[string]string{week[0]: "block:2", week[1]: "block:2", week[2]: "block:2", week[3]: "booking:9", week[4]: ""}
	if got := owners(t, l, account, 3, week); !reflect.DeepEqual(got, want) {
		t.Errorf("owners %v, want %v", got, want)
	}
	if missing, err := l.Transfer(ctx, stay(week[:3]...), "block:1", "block:2"); err != nil || len(missing) != 0 {
		t.Errorf("Transfer again: %v %v", missing, err)
	}
	if missing, err := l.Transfer(ctx, stay(week[:3]...), "block:1", "block:3"); err != nil || !reflect.DeepEqual(missing, week[:3]) {
		t.Errorf("Transfer from an owner that holds none: %v %v", missing, err)
	}
}
