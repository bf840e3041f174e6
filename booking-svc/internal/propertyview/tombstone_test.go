package propertyview

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
)

// TestTombstonesForgetTheirKey: a tombstone (null value) on vros.property.v1 forgets what
// its key held — a property and its internal code, an account's settings — instead of being
// parked as a malformed event; another account's entries stay, and a tombstone of a key the
// view never held is harmless. An erased account's later events are ignored.
func TestTombstonesForgetTheirKey(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	gone := map[string]bool{}
	s.IgnoreErased(func(_ context.Context, account string) (bool, error) { return gone[account], nil })
	const acct, other = "acct-tomb", "acct-tomb-other"
	settings := func(account string) kafka.Message {
		d := contract.DefaultSettings(account)
		d.Version, d.Currency = 1, "CHF"
		v, err := events.Encode("/test", contract.SettingsUpdated, account+":settings", time.Now(), d)
		if err != nil {
			t.Fatal(err)
		}
		return kafka.Message{Key: []byte(account + ":settings"), Value: v}
	}
	for _, a := range []string{acct, other} {
		for _, m := range []kafka.Message{snapshot(t, a, 3, 1), snapshot(t, a, 4, 1), settings(a)} {
			if err := s.Apply(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.ByCode(ctx, a, "P3"); err != nil { // cached now
			t.Fatal(err)
		}
	}
	for _, key := range []string{acct + ":3", acct + ":settings", acct + ":99", "no-colon", acct + ":account"} {
		if err := s.Apply(ctx, kafka.Message{Key: []byte(key)}); err != nil {
			t.Fatalf("tombstone of %s: %v", key, err)
		}
	}
	for _, r := range []struct {
		name    string
		account string
		pid     int64
		code    string
		found   bool
		curr    string
	}{
		{"tombstoned property", acct, 3, "P3", false, "USD"},
		{"its sibling", acct, 4, "P4", true, "USD"},
		{"another account's", other, 3, "P3", true, "CHF"},
	} {
		_, err := s.Get(ctx, r.account, r.pid)
		_, cerr := s.ByCode(ctx, r.account, r.code)
		if (err == nil) != r.found || (cerr == nil) != r.found || r.found == false && (!errors.Is(err, ErrNotFound) || !errors.Is(cerr, ErrNotFound)) {
			t.Errorf("%s: get %v, by code %v; want found %v", r.name, err, cerr, r.found)
		}
		st, err := s.Settings(ctx, r.account)
		if err != nil || st.Currency != r.curr {
			t.Errorf("%s: settings %v %q, want currency %s", r.name, err, st.Currency, r.curr)
		}
	}

	// Erased: its events change nothing, and EraseAccount forgets the rest.
	gone[acct] = true
	if err := s.Apply(ctx, snapshot(t, acct, 5, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, acct, 5); !errors.Is(err, ErrNotFound) {
		t.Errorf("an erased account's later event was applied: %v", err)
	}
	if err := s.EraseAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, acct, 4); !errors.Is(err, ErrNotFound) {
		t.Errorf("the erased account's property: %v", err)
	}
	if _, err := s.Get(ctx, other, 4); err != nil {
		t.Errorf("the other account's property: %v", err)
	}
}
