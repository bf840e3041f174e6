package feedsync_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/feedsync"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/booking-svc/internal/ledger/nightstore"
	"github.com/vros/vros/libs/pricing"
)

func ev(uid, start, end string) feedsync.Event {
	s, _ := pricing.ParseDate(start)
	e, _ := pricing.ParseDate(end)
	return feedsync.Event{UID: uid, Start: s, End: e}
}

// blk is a wanted block: uid and first and last night.
type blk struct{ uid, start, end string }

func blocksOf(res feedsync.Result) []blk {
	out := []blk{}
	for _, b := range res.Blocks {
		out = append(out, blk{b.UID, b.StartDate, b.EndDate})
	}
	return out
}

// datesFrom lists the nights first..last.
func datesFrom(first, last string) []string {
	f, _ := pricing.ParseDate(first)
	l, _ := pricing.ParseDate(last)
	var out []string
	for d := f; !d.After(l); d = d.AddDays(1) {
		out = append(out, d.String())
	}
	return out
}

// checkFeed asserts that the feed's stored blocks are res's and that the ledger holds
// exactly: each block's nights by that block, each extra owner's nights by it, nothing else
// in 2027-01-01..2027-03-31; and that no ledger op of the account is left.
func (f fixture) checkFeed(t *testing.T, account string, pid, feed int64, res feedsync.Result, extra map[string]string) {
	t.Helper()
	f.checkFeedIn(t, account, pid, feed, res, "2027-01-01", "2027-03-31", extra)
}

// checkFeedIn is checkFeed over the nights first..last.
func (f fixture) checkFeedIn(t *testing.T, account string, pid, feed int64, res feedsync.Result, first, last string, extras ...map[string]string) {
	t.Helper()
	var extra map[string]string
	if len(extras) > 0 {
		extra = extras[0]
	}
	ctx := context.Background()
	stored, err := f.st.FeedBlocks(ctx, account, pid, feed)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for k, v := range extra {
		want[k] = v
	}
	seen := map[string]bool{}
	for _, b := range stored {
		if seen[b.UID+b.StartDate] {
			t.Errorf("duplicate block of %s at %s", b.UID, b.StartDate)
		}
		seen[b.UID+b.StartDate] = true
		if !slices.ContainsFunc(res.Blocks, func(r feedsync.Block) bool {
			return r.BlockID == b.BlockID && r.StartDate == b.StartDate && r.EndDate == b.EndDate && r.UID == b.UID
		}) {
			t.Errorf("stored block %+v is not in the answer %+v", b, res.Blocks)
		}
		if b.Memo != "Imported from Test feed" || b.FeedID != feed {
			t.Errorf("block %d: memo %q feed %d", b.BlockID, b.Memo, b.FeedID)
		}
		for _, d := range datesFrom(b.StartDate, b.EndDate) {
			want[d] = "block:" + strconv.FormatInt(b.BlockID, 10)
		}
	}
	if len(stored) != len(res.Blocks) {
		t.Errorf("%d stored blocks, answer has %d", len(stored), len(res.Blocks))
	}
	got, err := f.led.Owners(ctx, account, pid, first, last)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ledger holds\n%v\nwant\n%v", got, want)
	}
	n, err := db.Collection(nightstore.CollOps).CountDocuments(ctx, bson.D{{Key: "account_id", Value: account}})
	if err != nil || n != 0 {
		t.Errorf("%d ledger ops left (%v)", n, err)
	}
}

// TestFeedSync: the sync table. One feed of one property goes through every kind of change,
// each step checked against the stored blocks and the ledger.
func TestFeedSync(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	account := fmt.Sprintf("feed-%d", time.Now().UnixNano())
	const pid, feed = 31, 7
	f.priceable(t, account, pid)
	// A booking on 01-25 and an owner's block on 02-05 (and another feed's block on 02-10).
	f.reserve(t, account, 900001, pid, []string{"2027-01-25"})
	owner, err := f.svc.CreateBlock(ctx, account, booking.BlockRequest{InternalCode: "P31", Start: day("2027-02-05"), End: day("2027-02-05")})
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: 8, Name: "Test feed", Events: []feedsync.Event{ev("o", "2027-02-10", "2027-02-11")}})
	if err != nil {
		t.Fatal(err)
	}
	extra := map[string]string{"2027-01-25": "booking:900001", "2027-02-05": "block:" + strconv.FormatInt(owner.BlockID, 10),
		"2027-02-10": "block:" + strconv.FormatInt(other.Blocks[0].BlockID, 10)}

	var lastA int64
	for _, step := range []struct {
		name      string
		events    []feedsync.Event
		blocks    []blk
		conflicts []feedsync.Conflict
		sameA     bool // uid A keeps its block id
	}{
		{name: "new events", events: []feedsync.Event{ev("A", "2027-01-10", "2027-01-13"), ev("B", "2027-01-20", "2027-01-22")},
			blocks: []blk{{"A", "2027-01-10", "2027-01-12"}, {"B", "2027-01-20", "2027-01-21"}}},
		{name: "repeat", events: []feedsync.Event{ev("A", "2027-01-10", "2027-01-13"), ev("B", "2027-01-20", "2027-01-22")},
			blocks: []blk{{"A", "2027-01-10", "2027-01-12"}, {"B", "2027-01-20", "2027-01-21"}}, sameA: true},
		{name: "moved with overlap", events: []feedsync.Event{ev("A", "2027-01-11", "2027-01-15"), ev("B", "2027-01-20", "2027-01-22")},
			blocks: []blk{{"A", "2027-01-11", "2027-01-14"}, {"B", "2027-01-20", "2027-01-21"}}, sameA: true},
		{name: "shrunk", events: []feedsync.Event{ev("A", "2027-01-12", "2027-01-14"), ev("B", "2027-01-20", "2027-01-22")},
			blocks: []blk{{"A", "2027-01-12", "2027-01-13"}, {"B", "2027-01-20", "2027-01-21"}}, sameA: true},
		{name: "moved without overlap keeps its block", events: []feedsync.Event{ev("A", "2027-01-15", "2027-01-17"), ev("B", "2027-01-20", "2027-01-22")},
			blocks: []blk{{"A", "2027-01-15", "2027-01-16"}, {"B", "2027-01-20", "2027-01-21"}}, sameA: true},
		{name: "split by a booking", events: []feedsync.Event{ev("A", "2027-01-15", "2027-01-17"), ev("B", "2027-01-20", "2027-01-22"), ev("C", "2027-01-23", "2027-01-28")},
			blocks:    []blk{{"A", "2027-01-15", "2027-01-16"}, {"B", "2027-01-20", "2027-01-21"}, {"C", "2027-01-23", "2027-01-24"}, {"C", "2027-01-26", "2027-01-27"}},
			conflicts: []feedsync.Conflict{{UID: "C", StartDate: "2027-01-25", EndDate: "2027-01-25", BookingIDs: []int64{900001}}}, sameA: true},
		{name: "other blocks left alone", events: []feedsync.Event{ev("A", "2027-01-15", "2027-01-17"), ev("D", "2027-02-04", "2027-02-12")},
			blocks: []blk{{"A", "2027-01-15", "2027-01-16"}, {"D", "2027-02-04", "2027-02-04"}, {"D", "2027-02-06", "2027-02-09"}, {"D", "2027-02-11", "2027-02-11"}}, sameA: true},
		{name: "removed event", events: []feedsync.Event{ev("D", "2027-02-04", "2027-02-12")},
			blocks: []blk{{"D", "2027-02-04", "2027-02-04"}, {"D", "2027-02-06", "2027-02-09"}, {"D", "2027-02-11", "2027-02-11"}}},
		{name: "overlapping events of one feed", events: []feedsync.Event{ev("E", "2027-01-01", "2027-01-05"), ev("F", "2027-01-03", "2027-01-08")},
			blocks: []blk{{"E", "2027-01-01", "2027-01-04"}, {"F", "2027-01-05", "2027-01-07"}}},
		{name: "empty events", events: []feedsync.Event{}, blocks: []blk{}},
	} {
		t.Run(step.name, func(t *testing.T) {
			res, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed", Events: step.events})
			if err != nil {
				t.Fatal(err)
			}
			if got := blocksOf(res); !reflect.DeepEqual(got, step.blocks) {
				t.Errorf("blocks %v, want %v", got, step.blocks)
			}
			if !reflect.DeepEqual(res.Conflicts, step.conflicts) {
				t.Errorf("conflicts %+v, want %+v", res.Conflicts, step.conflicts)
			}
			n := 0
			for _, b := range step.blocks {
				n += len(datesFrom(b.start, b.end))
			}
			if res.NightsBlocked != n {
				t.Errorf("nights_blocked %d, want %d", res.NightsBlocked, n)
			}
			for _, b := range res.Blocks {
				if b.UID == "A" {
					if step.sameA && b.BlockID != lastA {
						t.Errorf("A's block is %d, was %d", b.BlockID, lastA)
					}
					lastA = b.BlockID
				}
			}
			f.checkFeed(t, account, pid, feed, res, extra)
		})
	}
	if _, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: 99, FeedID: feed, Events: []feedsync.Event{}}); !errors.Is(err, booking.ErrNoProperty) {
		t.Errorf("unknown property: %v", err)
	}
	// An imported block cannot be deleted as an owner's block.
	if err := f.svc.DeleteBlock(ctx, account, other.Blocks[0].BlockID); !errors.Is(err, booking.ErrImportedBlock) {
		t.Errorf("delete of an imported block: %v", err)
	}
}

// TestFeedMoveNeverFreesKeptNights: while a feed event moves back and forth between two
// overlapping date ranges, another owner keeps trying to take the nights both ranges hold;
// it never gets one (the move claims the new nights before it releases the old ones).
func TestFeedMoveNeverFreesKeptNights(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	account := fmt.Sprintf("feedmove-%d", time.Now().UnixNano())
	const pid, feed = 32, 1
	f.priceable(t, account, pid)
	// Each step of the move pauses, so that the other owner's attempts land inside it.
	f.feeds.Crash = func(step, acct string) {
		if acct == account && strings.HasPrefix(step, "icalsync:move:") {
			time.Sleep(5 * time.Millisecond)
		}
	}
	kept := datesFrom("2027-01-12", "2027-01-18") // held by both 01-10..01-18 and 01-12..01-21
	resync := func(start, end string) feedsync.Result {
		res, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed", Events: []feedsync.Event{ev("A", start, end)}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := resync("2027-01-10", "2027-01-19")
	var stop atomic.Bool
	var taken, tries atomic.Int64
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				d := kept[(n+i)%len(kept)]
				intruder := "booking:" + strconv.Itoa(800000+i)
				err := f.led.Claim(ctx, ledger.Stay{Account: account, PropertyID: pid, Dates: []string{d}}, intruder)
				tries.Add(1)
				if err == nil {
					taken.Add(1)
					_ = f.led.Release(ctx, ledger.Stay{Account: account, PropertyID: pid, Dates: []string{d}}, intruder)
				}
			}
		}()
	}
	var last feedsync.Result
	for i := range 10 {
		if i%2 == 0 {
			last = resync("2027-01-12", "2027-01-22")
		} else {
			last = resync("2027-01-10", "2027-01-19")
		}
		if last.Blocks[0].BlockID != first.Blocks[0].BlockID {
			t.Fatalf("the move made a new block %d (was %d)", last.Blocks[0].BlockID, first.Blocks[0].BlockID)
		}
	}
	stop.Store(true)
	wg.Wait()
	if taken.Load() != 0 || tries.Load() < 10 {
		t.Errorf("another owner took a kept night %d times in %d tries", taken.Load(), tries.Load())
	}
	f.feeds.Crash = nil
	f.checkFeed(t, account, pid, feed, last, nil)
}

// TestConcurrentFeedSyncs: two replicas (two services on one database, each with its own
// process-local locks) sync the same feed many times at once; one block per run results,
// never two, and the ledger holds exactly their nights.
func TestConcurrentFeedSyncs(t *testing.T) {
	f1, f2 := newFixture(t), newFixture(t)
	ctx := context.Background()
	account := fmt.Sprintf("feedconc-%d", time.Now().UnixNano())
	const pid, feed = 33, 3
	f1.priceable(t, account, pid)
	events := []feedsync.Event{ev("A", "2027-01-10", "2027-01-13"), ev("B", "2027-01-20", "2027-01-25"), ev("C", "2027-02-01", "2027-02-03")}
	var wg sync.WaitGroup
	results := make(chan feedsync.Result, 8)
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := f1
			if i%2 == 1 {
				f = f2
			}
			res, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed", Events: events})
			if err != nil {
				errs <- err
				return
			}
			results <- res
		}()
	}
	wg.Wait()
	close(errs)
	close(results)
	for err := range errs {
		t.Error(err)
	}
	var last feedsync.Result
	for r := range results {
		if got := blocksOf(r); !reflect.DeepEqual(got, []blk{{"A", "2027-01-10", "2027-01-12"}, {"B", "2027-01-20", "2027-01-24"}, {"C", "2027-02-01", "2027-02-02"}}) {
			t.Errorf("a sync answered %v", got)
		}
		if last.Blocks != nil && !reflect.DeepEqual(last, r) {
			t.Errorf("two syncs answered different blocks: %+v and %+v", last, r)
		}
		last = r
	}
	f1.checkFeed(t, account, pid, feed, last, nil)
}

// flakyBlocks fails the n-th write of the feed's blocks and lease (counting from 1).
type flakyBlocks struct {
	booking.Blocks
	n, calls *atomic.Int64
}

var errWrite = errors.New("write failed (test)")

func (b flakyBlocks) fail() error {
	if b.calls.Add(1) == b.n.Load() {
		return errWrite
	}
	return nil
}

func (b flakyBlocks) InsertBlock(ctx context.Context, blk booking.Block) (booking.Block, error) {
	if err := b.fail(); err != nil {
		return blk, err
	}
	return b.Blocks.InsertBlock(ctx, blk)
}

func (b flakyBlocks) MoveBlock(ctx context.Context, account string, id int64, start, end string) (booking.Block, error) {
	if err := b.fail(); err != nil {
		return booking.Block{}, err
	}
	return b.Blocks.MoveBlock(ctx, account, id, start, end)
}

func (b flakyBlocks) DeleteBlock(ctx context.Context, account string, id int64) (booking.Block, error) {
	if err := b.fail(); err != nil {
		return booking.Block{}, err
	}
	return b.Blocks.DeleteBlock(ctx, account, id)
}

func (b flakyBlocks) NoteFeedBlock(ctx context.Context, account string, feed int64, holder string, ids ...int64) error {
	if err := b.fail(); err != nil {
		return err
	}
	return b.Blocks.NoteFeedBlock(ctx, account, feed, holder, ids...)
}

// flakyLedger fails the n-th ledger write (shared count with flakyBlocks).
type flakyLedger struct {
	booking.Ledger
	b flakyBlocks
}

func (l flakyLedger) Begin(ctx context.Context, op ledger.Op) error {
	if err := l.b.fail(); err != nil {
		return err
	}
	return l.Ledger.Begin(ctx, op)
}

func (l flakyLedger) Claim(ctx context.Context, s ledger.Stay, owner string) error {
	if err := l.b.fail(); err != nil {
		return err
	}
	return l.Ledger.Claim(ctx, s, owner)
}

func (l flakyLedger) Release(ctx context.Context, s ledger.Stay, owner string) error {
	if err := l.b.fail(); err != nil {
		return err
	}
	return l.Ledger.Release(ctx, s, owner)
}

func (l flakyLedger) Transfer(ctx context.Context, s ledger.Stay, from, to string) ([]string, error) {
	if err := l.b.fail(); err != nil {
		return nil, err
	}
	return l.Ledger.Transfer(ctx, s, from, to)
}

func (l flakyLedger) RepairStopped(ctx context.Context, account, owner string, current ledger.Current) (bool, error) {
	if err := l.b.fail(); err != nil {
		return false, err
	}
	return l.Ledger.RepairStopped(ctx, account, owner, current)
}

func (l flakyLedger) End(ctx context.Context, account, owner string) error {
	if err := l.b.fail(); err != nil {
		return err
	}
	return l.Ledger.End(ctx, account, owner)
}

// TestFeedSyncCutAtEveryStep: a sync is cut at each of its steps — its context cancelled
// there, or its n-th write failing — and then synced again: the blocks are exactly the
// wanted ones, the ledger holds exactly their nights (none held by nobody), no block is
// duplicated and no ledger op is left. Two syncs are cut: one that creates, moves and
// deletes blocks; one whose nights pass between blocks of one uid (a deleted block's nights
// taken by another, two blocks that need each other's nights, one shrinking first).
func TestFeedSyncCutAtEveryStep(t *testing.T) {
	base := newFixture(t)
	// A stopped sync's lease outlives it (StoppedFeedLease, a second) for a write it sent that
	// may still land. Here none can: a cut comes between two steps and a failing write is
	// never sent, and each retry begins after the cut sync returned. So the retries wait for
	// no such write.
	base.st.StoppedFeedLease = 10 * time.Millisecond
	ctx := context.Background()
	for si, sc := range []struct {
		name          string
		before, after []feedsync.Event
		want          []blk
		steps         []string
	}{
		{name: "changes",
			before: []feedsync.Event{ev("A", "2027-01-10", "2027-01-13"), ev("B", "2027-01-20", "2027-01-23"), ev("C", "2027-02-01", "2027-02-03")},
			after:  []feedsync.Event{ev("A", "2027-01-11", "2027-01-16"), ev("C", "2027-02-01", "2027-02-03"), ev("D", "2027-02-10", "2027-02-12")},
			want:   []blk{{"A", "2027-01-11", "2027-01-15"}, {"C", "2027-02-01", "2027-02-02"}, {"D", "2027-02-10", "2027-02-11"}},
			steps: []string{"leased", "noted", "delete:begun", "delete:written", "delete:released", "move:begun", "move:claimed", "move:written",
				"move:released", "create:begun", "create:claimed", "create:written", "create:released"}},
		{name: "hand-overs",
			before: []feedsync.Event{ev("u", "2027-01-01", "2027-01-03"), ev("u", "2027-01-05", "2027-01-13"),
				ev("v", "2027-02-01", "2027-02-03"), ev("v", "2027-02-05", "2027-02-08")},
			after: []feedsync.Event{ev("u", "2027-01-01", "2027-01-09"), ev("u", "2027-01-10", "2027-01-13"),
				ev("v", "2027-02-01", "2027-02-08"), ev("w", "2027-03-01", "2027-03-02")},
			want: []blk{{"u", "2027-01-01", "2027-01-08"}, {"u", "2027-01-10", "2027-01-12"}, {"v", "2027-02-01", "2027-02-07"}, {"w", "2027-03-01", "2027-03-01"}},
			steps: []string{"noted", "delete:begun", "delete:written", "delete:released", "move:begun", "move:shrunk", "move:claimed", "move:handed",
				"move:written", "move:released", "create:written"}},
	} {
		// A service whose n-th write (counted in calls) fails; n 0: none.
		flakySvc := func() (*feedsync.Syncer, *atomic.Int64, *atomic.Int64) {
			var n, calls atomic.Int64
			flaky := flakyBlocks{Blocks: base.st, n: &n, calls: &calls}
			return base.syncer(flaky, flakyLedger{Ledger: base.led, b: flaky}), &n, &calls
		}
		prepare := func(t *testing.T, name string, pid int64) string {
			account := fmt.Sprintf("feedcut-%s-%s-%d", sc.name, strings.ReplaceAll(name, ":", "-"), time.Now().UnixNano())
			base.priceable(t, account, pid)
			if _, err := base.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: 1, Name: "Test feed", Events: sc.before}); err != nil {
				t.Fatal(err)
			}
			return account
		}
		finish := func(t *testing.T, account string, pid int64) {
			res, err := base.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: 1, Name: "Test feed", Events: sc.after})
			if err != nil || !res.Complete {
				t.Fatal(res.Complete, err)
			}
			if got := blocksOf(res); !reflect.DeepEqual(got, sc.want) {
				t.Errorf("after the retry: %v, want %v", got, sc.want)
			}
			base.checkFeed(t, account, pid, 1, res, nil)
		}
		// How many writes the sync makes, uncut.
		svc, _, calls := flakySvc()
		account := prepare(t, "count", int64(99+100*si))
		if _, err := svc.Sync(ctx, account, feedsync.Request{PropertyID: int64(99 + 100*si), FeedID: 1, Name: "Test feed", Events: sc.after}); err != nil {
			t.Fatal(err)
		}
		writes := calls.Load()
		t.Logf("%s: %d writes", sc.name, writes)
		if writes > 49 {
			t.Fatalf("%s: %d writes", sc.name, writes)
		}
		// The cases mostly wait for the cut sync's lease to expire: they run side by side (t.Run
		// may be called from several goroutines), eight at a time.
		t.Run(sc.name, func(t *testing.T) {
			var wg sync.WaitGroup
			slots := make(chan struct{}, 8)
			side := func(name string, fn func(t *testing.T)) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					slots <- struct{}{}
					defer func() { <-slots }()
					t.Run(name, fn)
				}()
			}
			for i, step := range sc.steps {
				side("cancelled at "+step, func(t *testing.T) {
					pid := int64(100 + 100*si + i)
					account := prepare(t, step, pid)
					svc, _, _ := flakySvc()
					cctx, cancel := context.WithCancel(ctx)
					defer cancel()
					var reached atomic.Bool
					svc.Crash = func(s, acct string) {
						if acct == account && s == "icalsync:"+step && reached.CompareAndSwap(false, true) {
							cancel()
						}
					}
					if _, err := svc.Sync(cctx, account, feedsync.Request{PropertyID: pid, FeedID: 1, Name: "Test feed", Events: sc.after}); err == nil {
						t.Errorf("the cut sync succeeded")
					}
					if !reached.Load() {
						t.Fatalf("step %s never reached", step)
					}
					finish(t, account, pid)
				})
			}
			// Every write of the sync failing in turn.
			for k := int64(1); k <= writes; k++ {
				side("write "+strconv.FormatInt(k, 10)+" failing", func(t *testing.T) {
					pid := int64(150+100*si) + k
					account := prepare(t, "write-"+strconv.FormatInt(k, 10), pid)
					svc, n, calls := flakySvc()
					n.Store(k)
					_, err := svc.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: 1, Name: "Test feed", Events: sc.after})
					if calls.Load() < k || !errors.Is(err, errWrite) {
						t.Errorf("write %d of %d: %d writes made, the sync answered %v", k, writes, calls.Load(), err)
					}
					finish(t, account, pid)
				})
			}
			wg.Wait()
		})
	}
}

// TestFeedSyncProcessStopped: a sync stopped for good in the middle of a move (the process
// died there, holding its lease): the janitor's repair leaves the ledger exactly as the
// stored blocks say, and the next sync, once the stopped one's lease is up, converges.
func TestFeedSyncProcessStopped(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	account := fmt.Sprintf("feedstop-%d", time.Now().UnixNano())
	const pid, feed = 34, 2
	f.priceable(t, account, pid)
	syncFeed := func(svc *feedsync.Syncer, events ...feedsync.Event) (feedsync.Result, error) {
		return svc.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed", Events: events})
	}
	before, err := syncFeed(f.feeds, ev("A", "2027-01-10", "2027-01-13"))
	if err != nil {
		t.Fatal(err)
	}
	dying := f.syncer(f.st, f.led)
	dying.Deadline = time.Second
	dying.LeaseMargin = 100 * time.Millisecond // it never writes again: the next sync need not wait 5 s more
	reached := make(chan struct{})
	dying.Crash = func(step, acct string) {
		if acct == account && step == "icalsync:move:claimed" {
			close(reached)
			select {} // the process died here
		}
	}
	go func() { _, _ = syncFeed(dying, ev("A", "2027-01-11", "2027-01-16")) }()
	<-reached
	f.repair(t)
	// The block still says 01-10..01-12; the nights the stopped move claimed are free again.
	f.checkFeed(t, account, pid, feed, before, nil)
	after, err := syncFeed(f.feeds, ev("A", "2027-01-11", "2027-01-16"))
	if err != nil {
		t.Fatal(err)
	}
	if got := blocksOf(after); !reflect.DeepEqual(got, []blk{{"A", "2027-01-11", "2027-01-15"}}) || after.Blocks[0].BlockID != before.Blocks[0].BlockID {
		t.Errorf("after the stopped sync: %+v (was %+v)", after.Blocks, before.Blocks)
	}
	f.checkFeed(t, account, pid, feed, after, nil)
}

// TestFeedSyncRacesBookings: bookings take nights of the feed's events while syncs run (a
// sync's claim then loses a night it planned as free, and plans again); the last sync, after
// the bookings stopped, gives the feed exactly the wanted nights no booking holds, the rest
// as conflicts, and the ledger holds each night once.
func TestFeedSyncRacesBookings(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	account := fmt.Sprintf("feedrace-%d", time.Now().UnixNano())
	const pid, feed = 35, 4
	f.priceable(t, account, pid)
	events := []feedsync.Event{ev("A", "2027-01-01", "2027-01-20"), ev("B", "2027-02-01", "2027-02-15")}
	wanted := append(datesFrom("2027-01-01", "2027-01-19"), datesFrom("2027-02-01", "2027-02-14")...)
	var stop atomic.Bool
	var wg sync.WaitGroup
	booked := sync.Map{} // date → owner
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				d := wanted[(n*7+i*11)%len(wanted)]
				owner := "booking:" + strconv.Itoa(700000+i*1000+n)
				if f.led.Claim(ctx, ledger.Stay{Account: account, PropertyID: pid, Dates: []string{d}}, owner) == nil {
					booked.Store(d, owner)
				}
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	for start := time.Now(); time.Since(start) < 400*time.Millisecond; {
		if _, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed", Events: events}); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	res, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed", Events: events})
	if err != nil || !res.Complete {
		t.Fatal(res.Complete, err)
	}
	extra := map[string]string{}
	booked.Range(func(k, v any) bool { extra[k.(string)] = v.(string); return true })
	if len(extra) == 0 {
		t.Fatal("no booking got a night")
	}
	f.checkFeed(t, account, pid, feed, res, extra)
	conflicted := 0
	for _, c := range res.Conflicts {
		conflicted += len(datesFrom(c.StartDate, c.EndDate))
	}
	if res.NightsBlocked+conflicted != len(wanted) || conflicted != len(extra) {
		t.Errorf("%d nights blocked + %d in conflict, want %d wanted nights (%d booked)", res.NightsBlocked, conflicted, len(wanted), len(extra))
	}
}

// syncClock is a clock for a service whose feed syncs spend their time in writes alone: it
// stands still until a sync writes a block (its "create:written" step), and each block moves it
// on by one perBlock. A sync then runs out of time after a number of blocks fixed by its
// deadline, however fast the machine is.
type syncClock struct {
	mu       sync.Mutex
	now      time.Time
	perBlock time.Duration
}

// on makes c the clock of svc, moved on by the blocks svc's syncs of account write.
func (c *syncClock) on(svc *feedsync.Syncer, account string) {
	c.now = time.Now()
	svc.SetClock(c.Now)
	svc.Crash = func(step, acct string) {
		if acct == account && step == "icalsync:create:written" {
			c.mu.Lock()
			c.now = c.now.Add(c.perBlock)
			c.mu.Unlock()
		}
	}
}

func (c *syncClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// TestFeedSyncLargeImportGoesOn: a first import with more blocks than one request's time
// allows stops cleanly before its deadline (not Complete, nothing half done, the blocks made
// so far answered), and each retry goes on from there until the feed is complete. The sync's
// clock moves on by a hundredth of its deadline per block written (syncClock): a request has
// time for about 80 of the 300 blocks, on any machine; the deadline itself (a minute of real
// time) only guards against a hang.
func TestFeedSyncLargeImportGoesOn(t *testing.T) {
	f := newFixture(t)
	f.feeds.Deadline = time.Minute
	ctx := context.Background()
	account := fmt.Sprintf("feedlarge-%d", time.Now().UnixNano())
	(&syncClock{perBlock: f.feeds.Deadline / 100}).on(f.feeds, account)
	const pid, feed = 36, 9
	f.priceable(t, account, pid)
	var events []feedsync.Event
	first := day("2027-01-01")
	for i := range 300 {
		s := first.AddDays(i % 45 * 2)
		if i >= 45 {
			s = day("2028-01-01").AddDays(i * 2)
		}
		events = append(events, feedsync.Event{UID: "u" + strconv.Itoa(i), Start: s, End: s.AddDays(1)})
	}
	incomplete, last := 0, 0
	for {
		res, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed", Events: events})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Complete && incomplete < 20 {
			incomplete++
			n, _ := db.Collection(nightstore.CollOps).CountDocuments(ctx, bson.D{{Key: "account_id", Value: account}})
			if n != 0 {
				t.Fatalf("a stopped sync left %d ledger ops", n)
			}
			stored, err := f.st.FeedBlocks(ctx, account, pid, feed)
			if err != nil || len(stored) != len(res.Blocks) || res.NightsBlocked != len(res.Blocks) {
				t.Fatalf("a stopped sync answered %d blocks (%d nights), %d stored (%v)", len(res.Blocks), res.NightsBlocked, len(stored), err)
			}
			if len(res.Blocks) <= last {
				t.Fatalf("request %d stopped with %d blocks, the one before with %d: it did not go on", incomplete, len(res.Blocks), last)
			}
			last = len(res.Blocks)
			continue
		}
		if !res.Complete {
			t.Fatal("never complete")
		}
		if len(res.Blocks) != 300 || res.NightsBlocked != 300 {
			t.Fatalf("%d blocks, %d nights", len(res.Blocks), res.NightsBlocked)
		}
		f.checkFeedIn(t, account, pid, feed, res, "2027-01-01", "2029-12-31")
		break
	}
	if incomplete < 3 {
		t.Errorf("the import took %d stopped requests and a complete one, want at least 3 stopped (about 80 blocks of 300 each)", incomplete)
	}
}

// TestFeedLeaseGivenUpAfterFailedRepair: a sync that takes over a stopped sync's lease and
// then fails while repairing what it left (the repair's write fails) gives the lease up as it
// returns, so that the next sync goes on a moment later instead of waiting for the failed
// one's deadline.
func TestFeedLeaseGivenUpAfterFailedRepair(t *testing.T) {
	base := newFixture(t)
	ctx := context.Background()
	account := fmt.Sprintf("feedrepairfail-%d", time.Now().UnixNano())
	const pid, feed = 37, 11
	base.priceable(t, account, pid)
	var n, calls atomic.Int64
	flaky := flakyBlocks{Blocks: base.st, n: &n, calls: &calls}
	svc := base.syncer(flaky, flakyLedger{Ledger: base.led, b: flaky})
	syncFeed := func(svc *feedsync.Syncer, events ...feedsync.Event) (feedsync.Result, error) {
		return svc.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed", Events: events})
	}
	if _, err := syncFeed(base.feeds, ev("A", "2027-01-10", "2027-01-13")); err != nil {
		t.Fatal(err)
	}
	// A move stopped after its claim (its ledger op left): the lease keeps the block noted.
	svc.Crash = func(step, acct string) {
		if acct == account && step == "icalsync:move:claimed" {
			n.Store(calls.Load() + 1) // the next write fails
		}
	}
	if _, err := syncFeed(svc, ev("A", "2027-01-11", "2027-01-16")); !errors.Is(err, errWrite) {
		t.Fatalf("the stopped sync answered %v", err)
	}
	svc.Crash = nil
	// The next sync takes the lease over and fails at its first write, inside the repair.
	calls.Store(0)
	n.Store(1)
	if _, err := syncFeed(svc, ev("A", "2027-01-11", "2027-01-16")); !errors.Is(err, errWrite) {
		t.Fatalf("the sync whose repair failed answered %v", err)
	}
	if calls.Load() != 1 {
		t.Fatalf("%d writes counted, want the repair's one", calls.Load())
	}
	n.Store(0)
	// A sync with a few seconds to spare gets the lease: the failed one gave it up.
	quick := base.syncer(base.st, base.led)
	quick.Deadline = 3 * time.Second
	res, err := syncFeed(quick, ev("A", "2027-01-11", "2027-01-16"))
	if err != nil {
		t.Fatalf("the sync after the failed repair: %v", err)
	}
	base.checkFeed(t, account, pid, feed, res, nil)
}

// leaseWaits is Blocks that reports on busy (without waiting) each time a sync finds its
// feed's lease taken.
type leaseWaits struct {
	booking.Blocks
	busy chan<- struct{}
}

func (b leaseWaits) TakeFeedLease(ctx context.Context, account string, feed int64, holder string, until time.Time) ([]int64, error) {
	left, err := b.Blocks.TakeFeedLease(ctx, account, feed, holder, until)
	if errors.Is(err, booking.ErrBusy) {
		select {
		case b.busy <- struct{}{}:
		default:
		}
	}
	return left, err
}

// TestFinalSyncStopsALatePoll: a sync of the feed that waits for the lease while the feed's
// final sync holds it (a poll that outlived its lease) finds the feed tombstoned once it gets
// the lease, and creates nothing; a final sync again changes nothing; an imported block of a
// tombstoned feed is its owner's to delete.
func TestFinalSyncStopsALatePoll(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	account := fmt.Sprintf("feedfinal-%d", time.Now().UnixNano())
	const pid, feed = 38, 12
	f.priceable(t, account, pid)
	events := []feedsync.Event{ev("A", "2027-01-10", "2027-01-13")}
	if _, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed", Events: events}); err != nil {
		t.Fatal(err)
	}
	fin := f.syncer(f.st, f.led)
	leased, proceed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	fin.Crash = func(step, acct string) {
		if acct == account && step == "icalsync:leased" {
			once.Do(func() { close(leased); <-proceed })
		}
	}
	finalErr := make(chan error, 1)
	go func() {
		res, err := fin.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Final: true})
		if err == nil && (!res.Complete || len(res.Blocks) != 0) {
			err = fmt.Errorf("final sync answered %+v", res)
		}
		finalErr <- err
	}()
	<-leased
	lateErr := make(chan error, 1)
	busy := make(chan struct{}, 1)
	late := f.syncer(leaseWaits{Blocks: f.st, busy: busy}, f.led)
	go func() {
		_, err := late.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed",
			Events: append(events, ev("B", "2027-02-01", "2027-02-03"))})
		lateErr <- err
	}()
	select { // the late sync waits for the lease
	case <-busy:
	case err := <-lateErr:
		t.Fatalf("the late sync answered %v before it waited for the lease", err)
	case <-time.After(30 * time.Second): // a hang, not a slow machine
		t.Fatal("the late sync never found the lease taken")
	}
	close(proceed)
	if err := <-finalErr; err != nil {
		t.Fatal(err)
	}
	if err := <-lateErr; !errors.Is(err, feedsync.ErrGone) {
		t.Errorf("the late sync answered %v, want ErrFeedGone", err)
	}
	f.checkFeed(t, account, pid, feed, feedsync.Result{}, nil)
	res, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Final: true})
	if err != nil || !res.Complete || len(res.Blocks) != 0 {
		t.Errorf("a final sync again: %+v %v", res, err)
	}
	if _, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Events: []feedsync.Event{}}); !errors.Is(err, feedsync.ErrGone) {
		t.Errorf("an empty sync of the tombstoned feed: %v", err)
	}
	// Another feed's block: the owner deletes it once that feed is tombstoned, not before.
	other, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed + 1, Name: "Test feed", Events: events})
	if err != nil || len(other.Blocks) != 1 {
		t.Fatal(other, err)
	}
	if err := f.svc.DeleteBlock(ctx, account, other.Blocks[0].BlockID); !errors.Is(err, booking.ErrImportedBlock) {
		t.Errorf("delete of a live feed's block: %v", err)
	}
	if err := f.st.BuryFeed(ctx, account, feed+1); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.DeleteBlock(ctx, account, other.Blocks[0].BlockID); err != nil {
		t.Errorf("delete of a tombstoned feed's block: %v", err)
	}
	f.checkFeed(t, account, pid, feed+1, feedsync.Result{}, nil)
}

// TestFeedSyncManyEventsOnTheSameNights: 5000 events of distinct uids all want the same ten
// nights (50 000 nights in all, the bound), half of them booked: the sync completes within a
// tight deadline (planning is linear in the nights, not quadratic in the uids), the five free
// nights go to the smallest uid, and of the 5000 conflicts 1000 are listed and the rest
// counted. The deadline is counted in work, not in the machine's time: each reading of the
// service's clock (one per 4096 steps of planning, one per change's check) moves it on by a
// thousandth of the deadline, so that a sync has about 800 readings, some 3 million steps;
// planning quadratic in the uids would take 25 million. The deadline itself, a minute of real
// time, only guards against a hang.
func TestFeedSyncManyEventsOnTheSameNights(t *testing.T) {
	f := newFixture(t)
	f.feeds.Deadline = time.Minute
	var readings atomic.Int64
	t0 := time.Now()
	f.feeds.SetClock(func() time.Time { return t0.Add(time.Duration(readings.Add(1)) * (time.Minute / 1000)) })
	ctx := context.Background()
	account := fmt.Sprintf("feedmany-%d", time.Now().UnixNano())
	const pid, feed = 39, 13
	f.priceable(t, account, pid)
	f.reserve(t, account, 900002, pid, datesFrom("2027-01-15", "2027-01-19"))
	events := make([]feedsync.Event, feedsync.MaxEvents)
	for i := range events {
		events[i] = ev(fmt.Sprintf("uid-%05d", i), "2027-01-10", "2027-01-20")
	}
	res, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed", Events: events})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete {
		t.Fatalf("the sync did not complete within its deadline (%d readings of the clock)", readings.Load())
	}
	t.Logf("the sync read the clock %d times, of about 800 its deadline allows", readings.Load())
	if got := blocksOf(res); !reflect.DeepEqual(got, []blk{{"uid-00000", "2027-01-10", "2027-01-14"}}) {
		t.Errorf("blocks %v", got)
	}
	if len(res.Conflicts) != feedsync.MaxConflicts || res.ConflictsOmitted != 5000-feedsync.MaxConflicts {
		t.Errorf("%d conflicts listed, %d omitted; want %d and %d", len(res.Conflicts), res.ConflictsOmitted, feedsync.MaxConflicts, 5000-feedsync.MaxConflicts)
	}
	if c := res.Conflicts[0]; c.UID != "uid-00000" || c.StartDate != "2027-01-15" || c.EndDate != "2027-01-19" || !slices.Equal(c.BookingIDs, []int64{900002}) {
		t.Errorf("first conflict %+v", c)
	}
	f.checkFeed(t, account, pid, feed, res, map[string]string{"2027-01-15": "booking:900002", "2027-01-16": "booking:900002",
		"2027-01-17": "booking:900002", "2027-01-18": "booking:900002", "2027-01-19": "booking:900002"})
	// One night more than the bound is refused, naming events.
	events = append(events[:4999], ev("uid-x", "2027-01-10", "2027-01-21"))
	var fe *booking.FieldError
	if _, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed", Events: events}); !errors.As(err, &fe) || fe.Field != "events" {
		t.Errorf("50 001 nights: %v", err)
	}
}

// watchNights checks, at every step of the feed's syncs (the Crash hook) and from a goroutine
// polling the ledger meanwhile, that every night of dates is held by one of the feed's
// blocks; it returns the hook and a stop that reports what it saw.
func (f fixture) watchNights(t *testing.T, account string, pid int64, dates []string) (func(step, acct string), func()) {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	var seen []string
	check := func(where string) {
		owners, err := f.led.Owners(ctx, account, pid, dates[0], dates[len(dates)-1])
		if err != nil {
			return
		}
		for _, d := range dates {
			if !strings.HasPrefix(owners[d], "block:") {
				mu.Lock()
				seen = append(seen, fmt.Sprintf("%s: night %s held by %q", where, d, owners[d]))
				mu.Unlock()
			}
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			check("polled")
		}
	}()
	hook := func(step, acct string) {
		if acct == account {
			check("at " + step)
		}
	}
	return hook, func() {
		stop.Store(true)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for i, s := range seen {
			if i == 10 {
				t.Errorf("… and %d more", len(seen)-10)
				break
			}
			t.Error(s)
		}
	}
}

// TestFeedMoveLosingAGainedNightKeepsItsBlock: a block holds 01-10..01-18 and its event now
// wants 01-12..01-21; while the move claims the nights it gains, a booking takes one of them
// (01-20). The move is planned again (01-20 a conflict, 01-21 a block of its own): the block
// keeps its id, and the nights both dates hold (01-12..01-18) are never free — checked at
// every step of the sync and by a goroutine polling the ledger throughout.
func TestFeedMoveLosingAGainedNightKeepsItsBlock(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	account := fmt.Sprintf("feedlose-%d", time.Now().UnixNano())
	const pid, feed = 40, 14
	f.priceable(t, account, pid)
	syncFeed := func(start, end string) (feedsync.Result, error) {
		return f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed", Events: []feedsync.Event{ev("A", start, end)}})
	}
	before, err := syncFeed("2027-01-10", "2027-01-19")
	if err != nil {
		t.Fatal(err)
	}
	watch, stop := f.watchNights(t, account, pid, datesFrom("2027-01-12", "2027-01-18"))
	var once sync.Once
	f.feeds.Crash = func(step, acct string) {
		watch(step, acct)
		if acct == account && step == "icalsync:move:begun" {
			once.Do(func() {
				if err := f.led.Claim(ctx, ledger.Stay{Account: account, PropertyID: pid, Dates: []string{"2027-01-20"}}, "booking:800100"); err != nil {
					t.Errorf("the intruder: %v", err)
				}
			})
		}
	}
	after, err := syncFeed("2027-01-12", "2027-01-22")
	f.feeds.Crash = nil
	stop()
	if err != nil || !after.Complete {
		t.Fatal(after, err)
	}
	if got := blocksOf(after); !reflect.DeepEqual(got, []blk{{"A", "2027-01-12", "2027-01-19"}, {"A", "2027-01-21", "2027-01-21"}}) {
		t.Errorf("blocks %v", got)
	}
	if after.Blocks[0].BlockID != before.Blocks[0].BlockID {
		t.Errorf("the block was made again: %d, was %d", after.Blocks[0].BlockID, before.Blocks[0].BlockID)
	}
	want := []feedsync.Conflict{{UID: "A", StartDate: "2027-01-20", EndDate: "2027-01-20", BookingIDs: []int64{800100}}}
	if !reflect.DeepEqual(after.Conflicts, want) {
		t.Errorf("conflicts %+v", after.Conflicts)
	}
	f.checkFeed(t, account, pid, feed, after, map[string]string{"2027-01-20": "booking:800100"})
}

// TestFeedHandOverBetweenBlocksOfOneEvent: nights that pass from one block of the feed to
// another of the same uid are never free: they pass in the ledger by owner (the giver's
// document first stops listing them), never released and claimed again; no block is made
// again. Each case starts from two blocks of uid u, X (01-01..01-02) and Z (01-05..01-12),
// and checks at every step of the next sync, and from a goroutine polling the ledger, that
// every night u wanted before and wants after is held by a block of the feed.
//   - merged: the booking that split them goes; X is deleted and its nights go to Z;
//   - crossed: u's two events (a feed may repeat a uid) become 01-01..01-08 and
//     01-10..01-12: each block needs the other's nights; Z's document shrinks to 01-05..01-08
//     first, then X takes 01-10..01-12 and Z 01-01..01-02.
func TestFeedHandOverBetweenBlocksOfOneEvent(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after []feedsync.Event
		split         bool // a booking on 01-03..01-04 splits the first sync's nights
		want          []blk
		xKept         bool // X keeps a block (else it is deleted)
	}{
		{name: "merged", before: []feedsync.Event{ev("u", "2027-01-01", "2027-01-13")}, split: true,
			after: []feedsync.Event{ev("u", "2027-01-01", "2027-01-13")}, want: []blk{{"u", "2027-01-01", "2027-01-12"}}},
		{name: "crossed", before: []feedsync.Event{ev("u", "2027-01-01", "2027-01-03"), ev("u", "2027-01-05", "2027-01-13")},
			after: []feedsync.Event{ev("u", "2027-01-01", "2027-01-09"), ev("u", "2027-01-10", "2027-01-13")},
			want:  []blk{{"u", "2027-01-01", "2027-01-08"}, {"u", "2027-01-10", "2027-01-12"}}, xKept: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			account := fmt.Sprintf("feedhand-%s-%d", tc.name, time.Now().UnixNano())
			const pid, feed = 41, 15
			f.priceable(t, account, pid)
			stay := func(dates ...string) ledger.Stay { return ledger.Stay{Account: account, PropertyID: pid, Dates: dates} }
			if tc.split {
				if err := f.led.Claim(ctx, stay("2027-01-03", "2027-01-04"), "booking:800201"); err != nil {
					t.Fatal(err)
				}
			}
			before, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed", Events: tc.before})
			if err != nil || !reflect.DeepEqual(blocksOf(before), []blk{{"u", "2027-01-01", "2027-01-02"}, {"u", "2027-01-05", "2027-01-12"}}) {
				t.Fatal(blocksOf(before), err)
			}
			x, z := before.Blocks[0].BlockID, before.Blocks[1].BlockID
			if tc.split {
				if err := f.led.Release(ctx, stay("2027-01-03", "2027-01-04"), "booking:800201"); err != nil {
					t.Fatal(err)
				}
			}
			wanted := map[string]bool{}
			for _, e := range tc.after {
				for d := e.Start; d.Before(e.End); d = d.AddDays(1) {
					wanted[d.String()] = true
				}
			}
			var kept []string
			for _, b := range before.Blocks {
				for _, d := range datesFrom(b.StartDate, b.EndDate) {
					if wanted[d] {
						kept = append(kept, d)
					}
				}
			}
			watch, stop := f.watchNights(t, account, pid, kept)
			f.feeds.Crash = watch
			after, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed", Events: tc.after})
			f.feeds.Crash = nil
			stop()
			if err != nil || !after.Complete {
				t.Fatal(after, err)
			}
			if got := blocksOf(after); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("blocks %v, want %v", got, tc.want)
			}
			ids := []int64{}
			for _, b := range after.Blocks {
				ids = append(ids, b.BlockID)
			}
			wantIDs := []int64{z}
			if tc.xKept {
				wantIDs = append(wantIDs, x)
			}
			if !slices.Equal(ids, wantIDs) {
				t.Errorf("block ids %v, want %v (X %d, Z %d)", ids, wantIDs, x, z)
			}
			f.checkFeed(t, account, pid, feed, after, nil)
		})
	}
}

// TestFeedSyncReconcilesWithTheLedger: the sync plans from what the ledger shows the feed's
// blocks holding, not from their documents alone. A block whose document landed late (it says
// 01-13..01-15 while the ledger has it holding 01-10..01-12) gets the nights it lists claimed
// and the others released; a block holding nights its document does not list lets them go; a
// night its document lists that a booking holds is a conflict.
func TestFeedSyncReconcilesWithTheLedger(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	account := fmt.Sprintf("feedrecon-%d", time.Now().UnixNano())
	const pid, feed = 42, 16
	f.priceable(t, account, pid)
	stay := func(dates ...string) ledger.Stay { return ledger.Stay{Account: account, PropertyID: pid, Dates: dates} }
	syncFeed := func(events ...feedsync.Event) feedsync.Result {
		t.Helper()
		res, err := f.feeds.Sync(ctx, account, feedsync.Request{PropertyID: pid, FeedID: feed, Name: "Test feed", Events: events})
		if err != nil || !res.Complete {
			t.Fatal(res, err)
		}
		return res
	}
	first := syncFeed(ev("A", "2027-01-10", "2027-01-13"), ev("B", "2027-02-10", "2027-02-13"), ev("C", "2027-03-10", "2027-03-13"))
	a, b, c := first.Blocks[0].BlockID, first.Blocks[1].BlockID, first.Blocks[2].BlockID
	owner := func(id int64) string { return "block:" + strconv.FormatInt(id, 10) }
	// A: its move's write landed after the next sync's repair.
	if _, err := f.st.MoveBlock(ctx, account, a, "2027-01-13", "2027-01-15"); err != nil {
		t.Fatal(err)
	}
	// B: holds two nights more than its document lists.
	if err := f.led.Claim(ctx, stay("2027-02-13", "2027-02-14"), owner(b)); err != nil {
		t.Fatal(err)
	}
	// C: a night it lists is a booking's.
	if err := f.led.Release(ctx, stay("2027-03-11"), owner(c)); err != nil {
		t.Fatal(err)
	}
	if err := f.led.Claim(ctx, stay("2027-03-11"), "booking:800300"); err != nil {
		t.Fatal(err)
	}
	res := syncFeed(ev("A", "2027-01-13", "2027-01-16"), ev("B", "2027-02-10", "2027-02-13"), ev("C", "2027-03-10", "2027-03-13"))
	want := []blk{{"A", "2027-01-13", "2027-01-15"}, {"B", "2027-02-10", "2027-02-12"}, {"C", "2027-03-10", "2027-03-10"}, {"C", "2027-03-12", "2027-03-12"}}
	if got := blocksOf(res); !reflect.DeepEqual(got, want) {
		t.Errorf("blocks %v, want %v", got, want)
	}
	if res.Blocks[0].BlockID != a || res.Blocks[1].BlockID != b || res.Blocks[2].BlockID != c {
		t.Errorf("block ids %+v, want %d %d %d first", res.Blocks, a, b, c)
	}
	f.checkFeed(t, account, pid, feed, res, map[string]string{"2027-03-11": "booking:800300"})
}
