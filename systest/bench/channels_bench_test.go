package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/systest/chantest"
	"github.com/vros/vros/testkit/fakechannex"
)

// ARI propagation (docs/benchmarks.md, "Channels"): the time from the answer of a write at
// edge (an /api/property-restriction price on one date) to the moment the fake Channex
// (testkit/fakechannex, its documented rate limits on) receives the restrictions request
// carrying that date's new price. Two shapes, on each stack:
//   - single: one change at a time, each on the next of the mapped properties (so that
//     Channex's per-property limit of 10 requests a minute does not pace them);
//   - during-full-sync: the same changes from 8 clients at once (each its next once the
//     previous arrived), on 100 probe properties, while a full sync of 500 days of 100
//     other properties (each date its own price: 500 ranges a property), asked for from 8
//     other clients, is being sent, as when an account connects its portfolio. sync-s is
//     that sync's length, during-samples how many samples it overlapped.
//
// VROS_BENCH_CHANNEL_PROPERTIES changes the 100.

const (
	chanSyncDays = 500
	chanProbes   = 100
)

// chanSetup is what BenchmarkChannelARI sets up on a stack.
type chanSetup struct {
	once   sync.Once
	err    error
	fake   *fakechannex.Server
	acc    chantest.Account
	conn   chantest.Connection
	synced []chanProp // the full-sync properties
	probes []chanProp
	mu     sync.Mutex
	seq    int // the samples taken
	next   int // the next probe
}

// probe is the next probe property, in turn.
func (c *chanSetup) probe() chanProp {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	return c.probes[c.next%len(c.probes)]
}

type chanProp struct {
	code, remote, room, plan string
	today                    string
}

var (
	chanMu     sync.Mutex
	chanStores = map[*store]*chanSetup{}
)

func chanProperties() int {
	if n, err := strconv.Atoi(os.Getenv("VROS_BENCH_CHANNEL_PROPERTIES")); err == nil && n > 0 {
		return n
	}
	return 100
}

func (s *store) setupChannels(b *testing.B) *chanSetup {
	chanMu.Lock()
	c := chanStores[s]
	if c == nil {
		c = &chanSetup{}
		chanStores[s] = c
	}
	chanMu.Unlock()
	c.once.Do(func() { c.err = c.build(s) })
	if c.err != nil {
		b.Fatal(c.err)
	}
	return c
}

// build opens an account connected to a fake Channex, creates the probes and the
// full-sync properties (each date of the 500 its own price), maps them all and waits for
// their first full sync.
func (c *chanSetup) build(s *store) error {
	var err error
	if c.fake, err = fakechannex.New(); err != nil {
		return err
	}
	client := &http.Client{Timeout: time.Minute}
	if c.acc, err = chantest.NewAccount(client, s.st.EdgeURL, "bench-admin", "Channel Bench"); err != nil {
		return err
	}
	key := "key-" + fakechannex.NewID()
	if c.conn, err = c.acc.Connect("channex", c.fake.URL(), chantest.Obj{"api_key": key}, chanSyncDays); err != nil {
		return err
	}
	mk := func(code string, prices bool) (chanProp, error) {
		p := chanProp{code: code}
		pid, err := c.acc.Property(code)
		if err != nil {
			return p, err
		}
		if prices {
			items := make([]chantest.Obj, 0, chanSyncDays+2)
			for n := -1; n <= chanSyncDays; n++ {
				items = append(items, chantest.Obj{"date": day(n), "recommended_price": fmt.Sprintf("%d.00", 100+(n*7)%90), "minNights": "1"})
			}
			if err := c.acc.BOK("setprices_minnights", chantest.Obj{"propertyId": fmt.Sprintf("%s_%d", c.acc.AccountID, pid), "pricingArray": items}, nil); err != nil {
				return p, err
			}
		}
		fp := c.fake.AddProperty(key, fakechannex.Property{Title: code, Currency: "USD",
			RoomTypes: []fakechannex.RoomType{{Title: "Villa", RatePlans: []string{""}}}})
		p.remote, p.room, p.plan = fp.ID, fp.RoomTypes[0].ID, fp.RoomTypes[0].RatePlans[0]
		return p, c.acc.Map(c.conn.ID(), code, p.remote, p.room, chantest.Plan{RatePlanID: 0, RemoteRatePlanID: p.plan})
	}
	for i := range chanProbes {
		p, err := mk(fmt.Sprintf("PROBE%d", i), false)
		if err != nil {
			return err
		}
		c.probes = append(c.probes, p)
	}
	for i := range chanProperties() {
		p, err := mk(fmt.Sprintf("SYNC%d", i), true)
		if err != nil {
			return err
		}
		c.synced = append(c.synced, p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	return c.fake.Wait(ctx, func() bool {
		for _, ps := range [][]chanProp{c.probes, c.synced} {
			for i := range ps {
				if ps[i].today == "" {
					ps[i].today = c.firstDate(ps[i])
				}
				if ps[i].today == "" {
					return false
				}
				if r, ok := c.fake.Restriction(ps[i].remote, ps[i].plan, chantest.AddDays(ps[i].today, chanSyncDays-1)); !ok || r.Rate == nil {
					return false
				}
			}
		}
		return true
	})
}

// firstDate is the first date of p's full sync (today in its zone), "" before it came.
func (c *chanSetup) firstDate(p chanProp) string {
	for _, call := range c.fake.CallsOf(fakechannex.KindAvailability) {
		for _, v := range call.Values {
			if v.PropertyID == p.remote && call.Status == http.StatusOK {
				if v.DateFrom != "" {
					return v.DateFrom
				}
				return v.Date
			}
		}
	}
	return ""
}

// sample changes the price of a date of p through edge and returns the time from the
// answer to the fake's receipt of the request that carried the new price.
func (c *chanSetup) sample(p chanProp) (time.Duration, error) {
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.mu.Unlock()
	date := chantest.AddDays(p.today, 10+seq%300)
	price := fmt.Sprintf("%d.00", 1000+seq)
	if err := c.acc.Restrict(p.code, 0, date, date, chantest.Obj{"price": price}, nil); err != nil {
		return 0, err
	}
	answered := time.Now()
	var at time.Time
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := c.fake.Wait(ctx, func() bool {
		for _, ch := range c.fake.History(p.remote, p.plan, date) {
			if ch.Value.Rate != nil && chantest.Money(*ch.Value.Rate) == price {
				at = ch.At
				return true
			}
		}
		return false
	})
	if err != nil {
		return 0, fmt.Errorf("%s %s: the price %s did not reach the fake: %v", p.code, date, price, err)
	}
	return max(at.Sub(answered), 0), nil
}

// BenchmarkChannelARI measures ARI propagation, write answer at edge → the channel manager
// receives the change (see the comment at the top of this file).
func BenchmarkChannelARI(b *testing.B) {
	eachStore(b, func(b *testing.B, s *store) {
		c := s.setupChannels(b)
		b.Run("single", func(b *testing.B) {
			samples := make([]time.Duration, 0, 20*b.N)
			for i := 0; i < b.N; i++ {
				for range 20 {
					d, err := c.sample(c.probe())
					if err != nil {
						b.Fatal(err)
					}
					samples = append(samples, d)
				}
			}
			b.StopTimer()
			reportLatency(b, samples)
		})
		b.Run("during-full-sync", func(b *testing.B) {
			var samples []time.Duration
			var syncTotal time.Duration
			for i := 0; i < b.N; i++ {
				mark := 0
				if cs := c.fake.Calls(); len(cs) > 0 {
					mark = cs[len(cs)-1].Seq
				}
				// The syncs are asked for from 8 clients while the samples are taken.
				start := time.Now()
				asked := make(chan error, 1)
				go func() {
					asked <- inParallel(len(c.synced), 8, func(i int) error { return c.acc.Sync(c.conn.ID(), c.synced[i].code) })
				}()
				done := func() bool {
					got := map[string]int{}
					for _, call := range c.fake.CallsOf(fakechannex.KindRestrictions) {
						if call.Seq > mark && call.Status == http.StatusOK && len(call.Values) > 0 {
							got[call.Values[0].PropertyID]++
						}
					}
					for _, p := range c.synced {
						if got[p.remote] == 0 {
							return false
						}
					}
					return true
				}
				// 8 clients change probes, each its next change once the previous arrived.
				var (
					mu     sync.Mutex
					wg     sync.WaitGroup
					failed error
				)
				for range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for !done() {
							d, err := c.sample(c.probe())
							mu.Lock()
							if err != nil && failed == nil {
								failed = err
							}
							samples = append(samples, d)
							stop := failed != nil
							mu.Unlock()
							if stop {
								return
							}
						}
					}()
				}
				wg.Wait()
				if failed != nil {
					b.Fatal(failed)
				}
				syncTotal += time.Since(start)
				if err := <-asked; err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if len(samples) == 0 {
				b.Fatal("the full sync ended before a sample was taken")
			}
			b.ReportMetric(syncTotal.Seconds()/float64(b.N), "sync-s")
			b.ReportMetric(float64(len(samples))/float64(b.N), "during-samples")
			reportLatency(b, samples)
		})
	})
}
