package propertyview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/events/contract/contracttest"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "booking_view_test", &db, nil) }

// snapshot is version v of one property, priced v a night.
func snapshot(t *testing.T, account string, pid int64, v int) kafka.Message {
	t.Helper()
	data := fmt.Sprintf(`{"account_id":%q,"property_id":%d,"internal_code":"P%d","version":%d,"deleted":false,
	 "content":{"name":"View test property","maxguest":2},
	 "rates":{"rate":{"daily_price":"%d"},"minimum_stay":1,
	   "setting":{"standard_occupants":2,"accept_booking_upto":24,"default_allow_checkin":"All","default_allow_checkout":"All"}}}`,
		account, pid, pid, v, v)
	raw, err := events.Encode("/test", "vros.property.rates.updated", account, time.Now(), []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return kafka.Message{Value: raw}
}

// TestReadsDuringApplyNeverPinAnOldSnapshot: quotes read the view while new versions of the
// property arrive. Once a version is applied, every later read sees it. A read that loaded
// the previous version from MongoDB just before the apply used to put it in the cache after
// the apply had cleared it, and the replica then quoted the old price until the property's
// next event (found on kind: one booking-svc replica of two kept a rate for 30 s).
func TestReadsDuringApplyNeverPinAnOldSnapshot(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	const account, pid, versions, readers = "acct-view", 7, 150, 4
	if err := s.Apply(ctx, snapshot(t, account, pid, 1)); err != nil {
		t.Fatal(err)
	}
	stale := 0
	for v := 2; v <= versions; v++ {
		// As right after the previous version's apply: nothing cached, so the readers go
		// to MongoDB while this version is applied.
		s.forgetAccount(account)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := s.Get(ctx, account, pid); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		if err := s.Apply(ctx, snapshot(t, account, pid, v)); err != nil {
			t.Fatal(err)
		}
		close(stop)
		wg.Wait()
		p, err := s.Get(ctx, account, pid)
		if err != nil {
			t.Fatal(err)
		}
		if p.Version != int64(v) {
			stale++
			t.Logf("after applying version %d the view answers version %d", v, p.Version)
		}
	}
	if stale > 0 {
		t.Errorf("%d of %d applied versions were hidden behind an older cached snapshot", stale, versions-1)
	}
}

// TestNoCopyOutlivesAVisibleWrite: once a new version of a property, or of its account's
// settings, is visible in MongoDB, no read answers from the copy it replaces. Before, the
// cached copy was dropped only after the write, and a client that saw the new version
// stored (the system tests wait for it so) could still be quoted the old one
// (TestBookingOnARatePlanThroughEdge: a stop-sell just set, yet the quote accepted).
func TestNoCopyOutlivesAVisibleWrite(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	const account, pid = "acct-visible", 9
	if err := s.Apply(ctx, snapshot(t, account, pid, 1)); err != nil {
		t.Fatal(err)
	}
	cached := func() {
		t.Helper()
		if p, err := s.Get(ctx, account, pid); err != nil || p.Version != 1 {
			t.Fatalf("version 1 not cached: %v %+v", err, p)
		}
	}
	cached()
	seen := 0
	hook := func(key string) {
		seen++
		p, err := s.Get(ctx, account, pid)
		switch {
		case err != nil:
			t.Errorf("during the write of %s: %v", key, err)
		case key == account+":settings" && p.Pricing.Currency != "EUR":
			t.Errorf("settings written, yet the property is priced in %s", p.Pricing.Currency)
		case key != account+":settings" && p.Version != 2:
			t.Errorf("version 2 written, yet the view answers version %d", p.Version)
		}
	}
	s.written = hook
	if err := s.Apply(ctx, snapshot(t, account, pid, 2)); err != nil {
		t.Fatal(err)
	}
	s.written = nil
	if p, err := s.Get(ctx, account, pid); err != nil || p.Version != 2 || p.Pricing.Currency != "USD" { // cached again
		t.Fatalf("after the write: %v %+v", err, p)
	}
	s.written = hook
	st := contract.DefaultSettings(account)
	st.Version, st.Currency = 1, "EUR"
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := events.Encode("/test", contract.SettingsUpdated, account, time.Now(), data)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, kafka.Message{Value: raw}); err != nil {
		t.Fatal(err)
	}
	if seen != 2 {
		t.Fatalf("the hook ran %d times, want 2", seen)
	}
}

// TestEveryReplicaForgetsItsCopy: two booking-svc replicas share the view's database, each
// with its own cache and consumer group. Whichever applies a version second finds it already
// stored; it must still drop its cached copy. Before, it kept quoting the old rate until the
// property's next event (found on kind: 30 s and more with two replicas).
func TestEveryReplicaForgetsItsCopy(t *testing.T) {
	ctx := context.Background()
	const account, pid = "acct-replicas", 8
	var replicas [2]*Store
	for i := range replicas {
		s, err := New(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		replicas[i] = s
	}
	if err := replicas[0].Apply(ctx, snapshot(t, account, pid, 1)); err != nil {
		t.Fatal(err)
	}
	for v := 1; v <= 3; v++ {
		if v > 1 {
			for _, r := range replicas {
				if err := r.Apply(ctx, snapshot(t, account, pid, v)); err != nil {
					t.Fatal(err)
				}
			}
		}
		for i, r := range replicas {
			p, err := r.Get(ctx, account, pid) // also fills the replica's cache
			if err != nil {
				t.Fatal(err)
			}
			if p.Version != int64(v) {
				t.Errorf("replica %d answers version %d after version %d was applied", i, p.Version, v)
			}
		}
	}
}

// TestGoldenEvents: the contract's golden payloads, as property-svc publishes them, give
// booking-svc the property it prices: name, code and version, priced in the account's
// currency, zone and weekend; the deleted one removes it.
func TestGoldenEvents(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	apply := func(typ string) {
		t.Helper()
		raw, err := events.Encode("/test", typ, "1001", time.Now(), json.RawMessage(contracttest.Golden(typ)))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(ctx, kafka.Message{Value: raw}); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
	}
	apply(contract.PricesUpdated)
	apply(contract.SettingsUpdated)
	p, err := s.ByCode(ctx, "1001", "V1")
	if err != nil {
		t.Fatal(err)
	}
	pp := p.Pricing
	if p.PropertyID != 17 || p.Name != "Villa Aurora on the hill" || p.Version != 10 || pp.MaxGuest != 6 || !pp.NoChildren || pp.Currency != "EUR" ||
		pp.Location.String() != "Europe/Rome" || pp.WeekendNights != pricing.FriSatSun || pp.Rates == nil || len(pp.Taxes) != 3 {
		t.Errorf("property: %+v", p)
	}
	st, err := s.Settings(ctx, "1001")
	if err != nil || st.LeadSources[6] != "Channel" || st.Brands[2].Name != "Aurora Direct" || st.Brands[1].LeadSource != 5 || st.WeekendNights != 3 {
		t.Errorf("settings: %v %+v", err, st)
	}
	if st, _ := s.Settings(ctx, "no-settings"); st.Currency != "USD" || st.Timezone != "UTC" || st.LeadSources[1] != "Website" {
		t.Errorf("defaults: %+v", st)
	}
	apply(contract.PropertyDeleted)
	if _, err := s.Get(ctx, "1001", 17); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted: %v", err)
	}
	if _, err := s.ByCode(ctx, "1001", "V1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted, by code: %v", err)
	}
}
