package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/together"
)

// newRelayedHarness is a harness whose relay runs and adopts intents left behind within
// a fraction of a second (a crashed writer's), as a restarted process's sweep would.
func newRelayedHarness(t *testing.T) *harness {
	t.Helper()
	box, err := seal.New(seal.NewKey())
	must(t, err)
	st, err := New(ctx, db, box)
	must(t, err)
	pub := &recorder{}
	ob := outbox.New(db, pub, st.Snapshot, outbox.Options{Lease: 100 * time.Millisecond, Sweep: 50 * time.Millisecond})
	st.Attach(ob)
	h := &harness{st: st, repo: st, ob: ob, pub: pub}
	h.relay(t)
	return h
}

// erasable is an account id found by searching documents for it: no other value contains it.
func erasable() string { return "erasable-" + newAccount() }

// fillAccount gives account what an erasure must remove: properties (one deleted) with
// photos, payment secrets and a pending code claim, settings with a brand, a category and a
// promotion, and a create lease left by a dead create. It returns the property keys the
// account published and the media keys of its photos.
func fillAccount(t *testing.T, h *harness, account string) (keys, media []string) {
	t.Helper()
	for _, c := range []string{"E1", "E2", "E3"} {
		pid := h.create(t, account, c)
		p, err := h.repo.Find(ctx, account, code(c))
		must(t, err)
		for range 2 {
			id, err := h.repo.AddPhoto(ctx, p, img(c), "")
			must(t, err)
			p, err = h.repo.Find(ctx, account, code(c))
			must(t, err)
			media = append(media, p.Photos[id])
		}
		must(t, h.repo.SetMethods(ctx, account, pid, property.Methods{InternalCode: c,
			Stripe: &property.StripeMethod{PublicKey: "pk", SecretKey: "sk_secret"}}))
		keys = append(keys, recordID(account, pid))
	}
	must(t, h.repo.Delete(ctx, account, "E3"))
	_, err := putSettings(h, account, property.AccountSettings{Currency: sp("EUR"),
		Brands: &[]property.Brand{{ID: 1, Name: "Sea " + account, Domains: []string{"sea.example"}}}})
	must(t, err)
	_, err = db.Collection(collCodes).InsertOne(ctx, codeDoc{ID: codeID(account, "PENDING"), PropertyID: 1 << 40, ClaimedAt: time.Now()})
	must(t, err)
	_, err = db.Collection(collCreateLeases).InsertOne(ctx, createLeaseDoc{ID: account, Token: "dead", Until: time.Now().Add(time.Hour)})
	must(t, err)
	return keys, media
}

// holding lists the documents of the database, in every collection, that hold account
// (its erasure marker aside, which holds nothing else).
func holding(t *testing.T, account string) []string {
	t.Helper()
	names, err := db.ListCollectionNames(ctx, bson.D{})
	must(t, err)
	var out []string
	for _, n := range names {
		if n == collErased {
			continue
		}
		cur, err := db.Collection(n).Find(ctx, bson.D{})
		must(t, err)
		var docs []bson.Raw
		must(t, cur.All(ctx, &docs))
		for _, d := range docs {
			if strings.Contains(d.String(), account) {
				out = append(out, n+": "+d.String())
			}
		}
	}
	return out
}

// mediaLeft counts the media files and chunks of the photos with keys.
func mediaLeft(t *testing.T, keys []string) int64 {
	t.Helper()
	var n int64
	for _, k := range keys {
		prefix := bson.Regex{Pattern: "^" + k + "/"}
		n += count(t, mediaBucket+".files", bson.D{{Key: "_id", Value: prefix}})
		n += count(t, mediaBucket+".chunks", bson.D{{Key: "files_id", Value: prefix}})
	}
	return n
}

// erasurePublished waits until the relay has published a tombstone for every key of
// account (keys and its settings) and its erasure event.
func (h *harness) erasurePublished(t *testing.T, account string, keys []string) {
	t.Helper()
	want := append(slices.Clone(keys), account+":"+settingsAggregate)
	eventually.Holds(t, "tombstones and the erasure event published", 10*time.Second, func() bool {
		h.pub.mu.Lock()
		defer h.pub.mu.Unlock()
		dead := map[string]bool{}
		erased := false
		for _, m := range h.pub.msgs {
			switch {
			case m.Tombstone && m.Value == nil:
				dead[m.Key] = true
			case m.Key == events.AccountKey(account):
				var e contract.AccountErasure
				ev, err := events.Decode(m.Value, &e)
				erased = err == nil && ev.Type() == contract.AccountErased && e.AccountID == account && !e.ErasedAt.IsZero()
			}
		}
		for _, k := range want {
			if !dead[k] {
				return false
			}
		}
		return erased
	})
}

// TestEraseAccount: after an erasure the database holds nothing of the account but its
// marker, its photos' files are gone, the relay has published a tombstone for every key the
// account had (a deleted property's too) and the erasure event, another account is intact,
// a second erasure answers the same, and every later write of the account is refused.
func TestEraseAccount(t *testing.T) {
	h := newRelayedHarness(t)
	acct, other := erasable(), erasable()
	keys, media := fillAccount(t, h, acct)
	otherKeys, otherMedia := fillAccount(t, h, other)

	must(t, h.repo.Erase(ctx, acct))
	h.erasurePublished(t, acct, keys)
	eventually.Holds(t, "the outbox drained", 10*time.Second, func() bool { return len(holding(t, acct)) == 0 })
	if left := holding(t, acct); len(left) > 0 {
		t.Errorf("documents hold the erased account:\n%s", strings.Join(left, "\n"))
	}
	if n := mediaLeft(t, media); n != 0 {
		t.Errorf("%d media files and chunks of the erased account left", n)
	}
	if n := count(t, collErased, bson.D{{Key: "_id", Value: acct}}); n != 1 {
		t.Errorf("%d erasure markers", n)
	}

	// Its live properties' four photos, each rendition a file and a chunk (E3's went with it).
	if n, want := mediaLeft(t, otherMedia), int64(4*2*len(photo.Names())); n != want {
		t.Errorf("the other account's media: %d files and chunks, want %d", n, want)
	}
	for _, k := range otherKeys[:2] {
		if count(t, collProperties, bson.D{{Key: "_id", Value: k}}) != 1 {
			t.Errorf("the other account lost %s", k)
		}
	}
	if st, err := h.st.Settings(ctx, other); err != nil || st.Currency != "EUR" {
		t.Errorf("the other account's settings: %+v %v", st, err)
	}

	must(t, h.repo.Erase(ctx, acct)) // again: the same answer
	// The second erasure publishes its tombstones again (the settings and account
	// aggregates: the properties are gone); the relay drains them after it answers.
	eventually.Holds(t, "the outbox drained after the second erasure", 10*time.Second, func() bool { return len(holding(t, acct)) == 0 })
	if _, err := h.repo.Create(ctx, acct, villa("NEW"), 0); !errors.Is(err, property.ErrAccountErased) {
		t.Errorf("create after the erasure: %v", err)
	}
	if _, err := putSettings(h, acct, property.AccountSettings{Currency: sp("USD")}); !errors.Is(err, property.ErrAccountErased) {
		t.Errorf("settings after the erasure: %v", err)
	}
	// Another process, which has not seen the erasure, refuses too.
	fresh := newHarness(t)
	if _, err := fresh.repo.Create(ctx, acct, villa("NEW"), 0); !errors.Is(err, property.ErrAccountErased) {
		t.Errorf("create after the erasure, another process: %v", err)
	}
	if left := holding(t, acct); len(left) > 0 {
		t.Errorf("refused writes left documents:\n%s", strings.Join(left, "\n"))
	}
	// Whatever the outbox holds of the account is published as a tombstone.
	msgs, err := h.st.Snapshot(ctx, keys[0])
	must(t, err)
	if len(msgs) != 1 || !msgs[0].Tombstone || msgs[0].Value != nil || msgs[0].Key != keys[0] {
		t.Errorf("the loader answers %+v for a property of the erased account", msgs)
	}
}

// TestEraseInterrupted: an erasure stopped at every point of its work (its context ends
// after a growing delay, as when the process is killed, until a try finishes) is
// finished by the next try: nothing of the account is left, and every key the account had
// is tombstoned, including those of properties an interrupted try had already deleted. The
// tries run in a store whose relay does not run, as in a process that was killed.
func TestEraseInterrupted(t *testing.T) {
	h := newRelayedHarness(t)
	acct := erasable()
	keys, media := fillAccount(t, h, acct)
	// A process killed mid-way relays nothing: what it recorded in the outbox is adopted
	// by the relay that runs on (h's sweep).
	try := newHarness(t)
	interrupted := 0
	for i := 0; ; i++ {
		// Dense short delays first (the deletions), then longer ones (the wait for the
		// account's events to be published), growing until a try finishes: however fast
		// or slow the machine, each point of the work is interrupted at some delay, and
		// the loop ends with a finished try (a minute's delay is a hang, not a speed).
		delay := time.Duration(i*i) * 10 * time.Microsecond
		if delay > time.Minute {
			t.Fatalf("%d tries interrupted, the last after %v: the erasure never finishes", interrupted, delay)
		}
		cctx, cancel := context.WithTimeout(ctx, delay)
		err := try.repo.Erase(cctx, acct)
		cancel()
		if err == nil {
			break
		}
		interrupted++
	}
	if interrupted < 10 {
		t.Fatalf("only %d tries were interrupted", interrupted)
	}
	t.Logf("%d tries interrupted before one finished", interrupted)
	// The operator's retry, as often as it takes (the embedded store may answer "database
	// is locked" while it finishes the writes the interrupted tries abandoned).
	retry := newHarness(t)
	eventually.Holds(t, "a retried erasure succeeds", 10*time.Second, func() bool { return retry.repo.Erase(ctx, acct) == nil })
	h.erasurePublished(t, acct, keys)
	eventually.Holds(t, "the outbox drained", 10*time.Second, func() bool { return len(holding(t, acct)) == 0 })
	if left := holding(t, acct); len(left) > 0 {
		t.Errorf("documents hold the erased account:\n%s", strings.Join(left, "\n"))
	}
	if n := mediaLeft(t, media); n != 0 {
		t.Errorf("%d media files and chunks of the erased account left", n)
	}
}

// orderedLog is one topic as the broker orders what several relays publish to it.
type orderedLog struct {
	mu   sync.Mutex
	msgs []events.Message
}

// slowPublisher publishes into a log after a delay: a relay whose publish takes a while.
type slowPublisher struct {
	log   *orderedLog
	delay time.Duration
}

func (p slowPublisher) Publish(_ context.Context, msgs ...events.Message) error {
	time.Sleep(p.delay)
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	p.log.msgs = append(p.log.msgs, msgs...)
	return nil
}

// last is the latest message of key in the log.
func (l *orderedLog) last(key string) (events.Message, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.msgs) - 1; i >= 0; i-- {
		if l.msgs[i].Key == key {
			return l.msgs[i], true
		}
	}
	return events.Message{}, false
}

// TestEraseAfterAnotherReplicasWrite: a write of another replica that landed just before the
// erasure deleted the property, and whose relay publishes its snapshot slowly, does not
// outlast the tombstone: the topic's last message for the key is the tombstone.
func TestEraseAfterAnotherReplicasWrite(t *testing.T) {
	log := &orderedLog{}
	replica := func(delay time.Duration) *harness {
		box, err := seal.New(seal.NewKey())
		must(t, err)
		st, err := New(ctx, db, box)
		must(t, err)
		ob := outbox.New(db, slowPublisher{log: log, delay: delay}, st.Snapshot, outbox.Options{Lease: 10 * time.Second, Sweep: time.Hour})
		st.Attach(ob)
		h := &harness{st: st, repo: st, ob: ob}
		h.relay(t)
		return h
	}
	a, b := replica(0), replica(400*time.Millisecond)
	acct := erasable()
	pid := a.create(t, acct, "R1")
	key := recordID(acct, pid)
	eventually.Holds(t, "the create published", 5*time.Second, func() bool { _, ok := log.last(key); return ok })

	must(t, b.repo.SetTaxes(ctx, acct, pid, property.Taxes{InternalCode: "R1"})) // its snapshot is on its way
	must(t, a.repo.Erase(ctx, acct))
	eventually.Holds(t, "the outbox drained", 10*time.Second, func() bool { return len(holding(t, acct)) == 0 })
	time.Sleep(100 * time.Millisecond)
	m, _ := log.last(key)
	if !m.Tombstone {
		t.Errorf("the last message of %s is %.80s, not a tombstone", key, m.Value)
	}
}

// TestConcurrentErasures: four erasures of one account at once (a retried DELETE through
// two edge replicas) all succeed and leave nothing.
func TestConcurrentErasures(t *testing.T) {
	h := newRelayedHarness(t)
	other := newHarness(t) // another process
	acct := erasable()
	keys, media := fillAccount(t, h, acct)
	errs := make([]error, 4)
	together.Run(4, func(i int) { errs[i] = []*harness{h, other}[i%2].repo.Erase(ctx, acct) })
	for i, err := range errs {
		if err != nil {
			t.Errorf("erasure %d: %v", i, err)
		}
	}
	h.erasurePublished(t, acct, keys)
	eventually.Holds(t, "the outbox drained", 10*time.Second, func() bool { return len(holding(t, acct)) == 0 })
	if left := holding(t, acct); len(left) > 0 {
		t.Errorf("documents hold the erased account:\n%s", strings.Join(left, "\n"))
	}
	if n := mediaLeft(t, media); n != 0 {
		t.Errorf("%d media files and chunks left", n)
	}
}

// TestEraseWhileWriting: creates (with a limit and without) and settings changes of the
// account, in two processes, keep arriving while it is erased: each either lands before the
// erasure saw it (and is erased with the rest) or is refused, and once the writers stop the
// database holds nothing of the account.
func TestEraseWhileWriting(t *testing.T) {
	h, other := newRelayedHarness(t), newRelayedHarness(t)
	acct := erasable()
	var mu sync.Mutex
	var unexpected []error
	var refused atomic.Int32
	writers := 6
	started := make(chan struct{}, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			hw := []*harness{h, other}[w%2]
			// Each writer writes until the erasure refuses it, however fast the erasure
			// is beside the writes (100 000 accepted writes would be a hang).
			for i := range 100_000 {
				if i == 3 {
					started <- struct{}{}
				}
				var err error
				switch (w + i) % 3 {
				case 0:
					_, err = hw.repo.Create(ctx, acct, villa(fmt.Sprintf("W%d-%d", w, i)), 0)
				case 1:
					_, err = hw.repo.Create(ctx, acct, villa(fmt.Sprintf("W%d-%d", w, i)), 1000)
				default:
					_, err = putSettings(hw, acct, property.AccountSettings{Currency: sp([]string{"EUR", "USD"}[i%2])})
				}
				if errors.Is(err, property.ErrAccountErased) {
					refused.Add(1)
					return
				}
				if err != nil {
					mu.Lock()
					unexpected = append(unexpected, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	for range writers {
		<-started
	}
	must(t, h.repo.Erase(ctx, acct))
	wg.Wait()
	for _, err := range unexpected {
		t.Errorf("a write while the account was erased: %v", err)
	}
	if refused.Load() == 0 {
		t.Errorf("no writer was still writing when the account was erased")
	}
	if _, err := other.repo.Create(ctx, acct, villa("AFTER"), 0); !errors.Is(err, property.ErrAccountErased) {
		t.Errorf("create after the erasure: %v", err)
	}
	eventually.Holds(t, "nothing of the account left", 10*time.Second, func() bool { return len(holding(t, acct)) == 0 })
}
