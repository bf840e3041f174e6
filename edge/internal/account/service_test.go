package account_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/accountstore"
	"github.com/vros/vros/testkit/testinfra"
)

var store *accountstore.Store

func TestMain(m *testing.M) {
	testinfra.RunWithDatabase(m, "edge_account_test", nil, func(db *mongo.Database) (err error) {
		store, err = accountstore.New(context.Background(), db)
		return err
	})
}

// issued collects every secret handed out for one account, from any goroutine.
type issued struct {
	mu      sync.Mutex
	secrets []account.Secret
}

func (i *issued) add(s []account.Secret) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.secrets = append(i.secrets, s...)
}

func (i *issued) random() account.Secret {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.secrets[rand.IntN(len(i.secrets))]
}

func (i *issued) all() []account.Secret {
	i.mu.Lock()
	defer i.mu.Unlock()
	return append([]account.Secret(nil), i.secrets...)
}

func authenticate(svc *account.Service, s account.Secret) (string, error) {
	t, err := svc.Authenticate(context.Background(), s.Kind, s.Identifier, s.Secret)
	return t.AccountID, err
}

// listed reports whether acc lists s as its current credential of s's kind.
func listed(acc account.Account, s account.Secret) bool {
	if s.Kind == account.OwnerToken {
		return account.Hash(s.Secret) == acc.TokenHash
	}
	return acc.Identifiers[s.Kind] == s.Identifier
}

// wantExactlyListed asserts that, through svc, exactly the secrets acc lists authenticate
// (one per kind), and every other secret ever issued is refused.
func wantExactlyListed(t *testing.T, svc *account.Service, acc account.Account, all []account.Secret) {
	t.Helper()
	working := map[account.Kind]int{}
	var stale int
	for _, s := range all {
		got, err := authenticate(svc, s)
		switch {
		case listed(acc, s) && (err != nil || got != acc.ID):
			t.Errorf("%s %s: listed but refused: %v", s.Kind, s.Identifier, err)
		case listed(acc, s):
			working[s.Kind]++
		case err == nil:
			stale++
			t.Errorf("%s %s: no longer listed but authenticates", s.Kind, s.Identifier)
		case !errors.Is(err, account.ErrUnauthorized):
			t.Errorf("%s %s: refused with %v, want ErrUnauthorized", s.Kind, s.Identifier, err)
		}
	}
	for _, k := range account.Kinds {
		if working[k] != 1 {
			t.Errorf("%s: %d working credentials, want exactly the listed one", k, working[k])
		}
	}
	if stale > 0 {
		t.Errorf("%d of %d issued credentials authenticate though the account no longer lists them", stale, len(all))
	}
}

// TestConcurrentRotationsAndRevocations: 10 goroutines rotate (all kinds or some), revoke
// and reinstate one account at once, while others authenticate with every credential ever
// issued (so that both replicas' caches hold them). Afterwards exactly the credentials the
// account lists work through the replica that made the changes, at once, and through the
// other replica within its CacheTTL; every earlier credential is refused.
func TestConcurrentRotationsAndRevocations(t *testing.T) {
	ctx := context.Background()
	a := account.NewService(store, account.Options{CacheTTL: time.Minute})
	const otherTTL = 300 * time.Millisecond
	b := account.NewService(store, account.Options{CacheTTL: otherTTL}) // another edge replica
	acc, first, err := a.Create(ctx, "race", false)
	if err != nil {
		t.Fatal(err)
	}
	var all issued
	all.add(first)

	var stop atomic.Bool
	var readers sync.WaitGroup
	for i := range 4 {
		readers.Go(func() {
			svc := []*account.Service{a, b}[i%2]
			for !stop.Load() {
				_, _ = authenticate(svc, all.random())
			}
		})
	}
	subsets := [][]account.Kind{nil, {account.Key}, {account.Basic, account.OwnerToken}, {account.ServiceKey, account.Key}}
	var writers sync.WaitGroup
	for w := range 10 {
		writers.Go(func() {
			for round := range 5 {
				switch (w + round) % 4 {
				case 0, 1:
					_, s, err := a.Rotate(ctx, acc.ID, subsets[(w+round)%len(subsets)])
					if err != nil {
						t.Errorf("rotate: %v", err)
						return
					}
					all.add(s)
				case 2:
					if _, err := a.SetStatus(ctx, acc.ID, account.Revoked); err != nil {
						t.Errorf("revoke: %v", err)
					}
				case 3:
					if _, err := a.SetStatus(ctx, acc.ID, account.Active); err != nil {
						t.Errorf("reinstate: %v", err)
					}
				}
			}
		})
	}
	writers.Wait()
	stop.Store(true)
	readers.Wait()
	if t.Failed() {
		return
	}

	// The last word on status is the account's: whatever it says holds for every credential.
	final, err := a.Get(ctx, acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if final.Status == account.Revoked {
		for _, s := range all.all() {
			if _, err := authenticate(a, s); err == nil {
				t.Fatalf("%s %s authenticates on a revoked account", s.Kind, s.Identifier)
			}
		}
	}
	if final, err = a.SetStatus(ctx, acc.ID, account.Active); err != nil {
		t.Fatal(err)
	}
	t.Run("replica that made the changes, at once", func(t *testing.T) {
		wantExactlyListed(t, a, final, all.all())
	})
	t.Run("other replica, within its CacheTTL", func(t *testing.T) {
		time.Sleep(otherTTL + 50*time.Millisecond)
		wantExactlyListed(t, b, final, all.all())
	})
	t.Run("a rotation afterwards replaces them all", func(t *testing.T) {
		rotated, s, err := a.Rotate(ctx, acc.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		all.add(s)
		wantExactlyListed(t, a, rotated, all.all())
	})
	t.Run("revoked, nothing authenticates", func(t *testing.T) {
		if _, err := a.SetStatus(ctx, acc.ID, account.Revoked); err != nil {
			t.Fatal(err)
		}
		for _, s := range all.all() {
			if _, err := authenticate(a, s); err == nil {
				t.Errorf("%s %s authenticates on a revoked account", s.Kind, s.Identifier)
			}
		}
	})
}

// TestRevocationNotLostToRotations: a revocation that ran alongside rotations holds when they
// are all done: no rotation writes back the status it read before the revocation.
func TestRevocationNotLostToRotations(t *testing.T) {
	ctx := context.Background()
	svc := account.NewService(store, account.Options{CacheTTL: time.Minute})
	acc, _, err := svc.Create(ctx, "revocation race", false)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 60 {
		if _, err := svc.SetStatus(ctx, acc.ID, account.Active); err != nil {
			t.Fatal(err)
		}
		var all issued
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				if i == 0 {
					if _, err := svc.SetStatus(ctx, acc.ID, account.Revoked); err != nil {
						t.Errorf("revoke: %v", err)
					}
					return
				}
				_, s, err := svc.Rotate(ctx, acc.ID, nil)
				if err != nil {
					t.Errorf("rotate: %v", err)
				}
				all.add(s)
			})
		}
		wg.Wait()
		got, err := svc.Get(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != account.Revoked {
			t.Fatalf("round %d: status %s after a revocation that answered success", round, got.Status)
		}
		for _, s := range all.all() {
			if _, err := authenticate(svc, s); err == nil {
				t.Fatalf("round %d: %s authenticates on a revoked account", round, s.Kind)
			}
		}
	}
}

// TestRotationsThroughTwoReplicas: rotations through two replicas at once; once both caches'
// TTL has passed, exactly the listed credentials work through either.
func TestRotationsThroughTwoReplicas(t *testing.T) {
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	replicas := []*account.Service{
		account.NewService(store, account.Options{CacheTTL: ttl}),
		account.NewService(store, account.Options{CacheTTL: ttl}),
	}
	acc, first, err := replicas[0].Create(ctx, "two replicas", false)
	if err != nil {
		t.Fatal(err)
	}
	var all issued
	all.add(first)
	var wg sync.WaitGroup
	for w := range 10 {
		wg.Go(func() {
			svc := replicas[w%2]
			for range 3 {
				_, s, err := svc.Rotate(ctx, acc.ID, nil)
				if err != nil {
					t.Errorf("rotate: %v", err)
					return
				}
				all.add(s)
				_, _ = authenticate(replicas[(w+1)%2], all.random())
			}
		})
	}
	wg.Wait()
	final, err := replicas[0].Get(ctx, acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(ttl + 50*time.Millisecond)
	for i, svc := range replicas {
		t.Run(fmt.Sprint("replica ", i), func(t *testing.T) { wantExactlyListed(t, svc, final, all.all()) })
	}
}

// TestOtherReplicaStaleness: a replica that cached a credential keeps accepting it after a
// rotation through another replica for at most its CacheTTL; the new credential works there
// at once.
func TestOtherReplicaStaleness(t *testing.T) {
	ctx := context.Background()
	const ttl = 400 * time.Millisecond
	a := account.NewService(store, account.Options{CacheTTL: time.Minute})
	b := account.NewService(store, account.Options{CacheTTL: ttl})
	acc, old, err := a.Create(ctx, "staleness", false)
	if err != nil {
		t.Fatal(err)
	}
	oldKey := old[2]
	if _, err := authenticate(b, oldKey); err != nil { // now cached by b
		t.Fatal(err)
	}
	cachedAt := time.Now()
	_, fresh, err := a.Rotate(ctx, acc.ID, []account.Kind{account.Key})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := authenticate(a, oldKey); !errors.Is(err, account.ErrUnauthorized) {
		t.Errorf("rotating replica: old key: %v, want refused at once", err)
	}
	if _, err := authenticate(b, fresh[0]); err != nil {
		t.Errorf("other replica: new key refused: %v", err)
	}
	for {
		began := time.Now()
		_, err := authenticate(b, oldKey)
		if errors.Is(err, account.ErrUnauthorized) {
			break
		}
		if began.Sub(cachedAt) > ttl {
			t.Fatalf("other replica still accepts the old key %v after caching it (CacheTTL %v)", began.Sub(cachedAt), ttl)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// countingRepo counts the store lookups authentication makes.
type countingRepo struct {
	account.Repository
	lookups atomic.Int64
}

func (r *countingRepo) Credential(ctx context.Context, kind account.Kind, id string) (account.Credential, error) {
	r.lookups.Add(1)
	return r.Repository.Credential(ctx, kind, id)
}

func (r *countingRepo) Get(ctx context.Context, id string) (account.Account, error) {
	r.lookups.Add(1)
	return r.Repository.Get(ctx, id)
}

// TestRefusalsCostTheSame: a wrong secret for a known identifier (cached or not) and an
// unknown identifier each cost exactly one store lookup, so timing does not tell which
// identifiers exist.
func TestRefusalsCostTheSame(t *testing.T) {
	ctx := context.Background()
	repo := &countingRepo{Repository: store}
	svc := account.NewService(repo, account.Options{CacheTTL: time.Minute})
	_, s, err := svc.Create(ctx, "equal cost", false)
	if err != nil {
		t.Fatal(err)
	}
	basic, key := s[0], s[2]
	if _, err := authenticate(svc, key); err != nil { // key is now cached
		t.Fatal(err)
	}
	cost := func(kind account.Kind, id, secret string) int64 {
		t.Helper()
		before := repo.lookups.Load()
		if _, err := svc.Authenticate(ctx, kind, id, secret); !errors.Is(err, account.ErrUnauthorized) {
			t.Fatalf("%s %s: %v, want ErrUnauthorized", kind, id, err)
		}
		return repo.lookups.Load() - before
	}
	rows := []struct {
		name string
		cost int64
	}{
		{"known cached identifier, wrong secret", cost(account.Key, key.Identifier, "wrong-"+key.Secret)},
		{"known identifier not cached, wrong secret", cost(account.Basic, basic.Identifier, "wrong-"+basic.Secret)},
		{"unknown identifier", cost(account.Key, "k_doesnotexist000000000000", key.Secret)},
		{"unknown owner token", cost(account.OwnerToken, "", "ot_doesnotexist")},
	}
	for _, r := range rows {
		if r.cost != 1 {
			t.Errorf("%s: %d store lookups, want 1 (like every other refusal)", r.name, r.cost)
		}
	}
	// And the right secret still works from the cache.
	before := repo.lookups.Load()
	if _, err := authenticate(svc, key); err != nil {
		t.Fatal(err)
	}
	if n := repo.lookups.Load() - before; n != 0 {
		t.Errorf("cached success cost %d lookups, want 0", n)
	}
}

// TestRepeatedRefusalsNeverReachTheStore: a client repeating one wrong credential costs one
// store lookup in all, whether its identifier is unknown or known (so the repeats do not tell
// them apart either), and the right credential still works at once.
func TestRepeatedRefusalsNeverReachTheStore(t *testing.T) {
	ctx := context.Background()
	repo := &countingRepo{Repository: store}
	svc := account.NewService(repo, account.Options{CacheTTL: time.Minute})
	_, s, err := svc.Create(ctx, "flooded", false)
	if err != nil {
		t.Fatal(err)
	}
	key := s[2]
	for _, c := range []struct {
		name               string
		kind               account.Kind
		identifier, secret string
	}{
		{"unknown identifier", account.Key, "k_doesnotexist000000000001", key.Secret},
		{"known identifier, wrong secret", account.Key, key.Identifier, "wrong-" + key.Secret},
		{"unknown owner token", account.OwnerToken, "", "ot_doesnotexist_either"},
	} {
		before := repo.lookups.Load()
		for range 100 {
			if _, err := svc.Authenticate(ctx, c.kind, c.identifier, c.secret); !errors.Is(err, account.ErrUnauthorized) {
				t.Fatalf("%s: %v, want ErrUnauthorized", c.name, err)
			}
		}
		if n := repo.lookups.Load() - before; n != 1 {
			t.Errorf("%s, 100 times: %d store lookups, want 1", c.name, n)
		}
	}
	if got, err := authenticate(svc, key); err != nil || got == "" {
		t.Fatalf("the right secret after the flood: %q, %v", got, err)
	}
}

// TestLegacyCredentials: AuthenticatePair takes the dedicated service pair always, and the
// interface B key/pass only while the account's legacy_credentials setting is on (the
// default, also for an account stored before the setting). A switch takes effect at once on
// the replica that made it and within CacheTTL on another one that cached the account.
func TestLegacyCredentials(t *testing.T) {
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	one := account.NewService(store, account.Options{CacheTTL: ttl})
	two := account.NewService(store, account.Options{CacheTTL: ttl})
	a, s, err := one.Create(ctx, "legacy", false)
	if err != nil {
		t.Fatal(err)
	}
	if a.LegacyOff {
		t.Fatal("a new account has legacy_credentials off")
	}
	if got, err := store.Get(ctx, a.ID); err != nil || got.LegacyOff {
		t.Fatalf("stored account: legacy off %v, %v", got.LegacyOff, err)
	}
	svc, key := s[1], s[2]
	pair := func(svc *account.Service, sec account.Secret) error {
		got, err := svc.AuthenticatePair(ctx, sec.Identifier, sec.Secret)
		if err == nil && got.AccountID != a.ID {
			t.Fatalf("authenticated as %s, want %s", got.AccountID, a.ID)
		}
		return err
	}
	for _, r := range []*account.Service{one, two} {
		if err := pair(r, svc); err != nil {
			t.Fatalf("service pair: %v", err)
		}
		if err := pair(r, key); err != nil {
			t.Fatalf("B pair, legacy on: %v", err)
		}
	}
	for _, wrong := range []account.Secret{{Identifier: key.Identifier, Secret: "wrong"}, {Identifier: s[0].Identifier, Secret: s[0].Secret}} {
		if err := pair(one, wrong); !errors.Is(err, account.ErrUnauthorized) {
			t.Fatalf("%s: %v, want ErrUnauthorized", wrong.Identifier, err)
		}
	}
	off, err := one.SetLegacy(ctx, a.ID, false)
	if err != nil || !off.LegacyOff {
		t.Fatalf("SetLegacy off: %+v, %v", off, err)
	}
	if err := pair(one, key); !errors.Is(err, account.ErrUnauthorized) {
		t.Fatalf("B pair on the replica that switched it off: %v, want ErrUnauthorized", err)
	}
	if err := pair(one, svc); err != nil {
		t.Fatalf("service pair, legacy off: %v", err)
	}
	if _, err := one.Authenticate(ctx, account.Key, key.Identifier, key.Secret); err != nil {
		t.Fatalf("the B pair on interface B, legacy off: %v", err)
	}
	// The other replica trusts what it cached for at most its TTL.
	deadline := time.Now().Add(ttl + 200*time.Millisecond)
	for pair(two, key) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the other replica still takes the B pair past its cache TTL")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := one.SetLegacy(ctx, a.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := pair(one, key); err != nil {
		t.Fatalf("B pair, switched on again: %v", err)
	}
	if _, err := one.SetLegacy(ctx, "no-such-account", true); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("SetLegacy of an unknown account: %v, want ErrNotFound", err)
	}
	// A revoked account is refused as revoked through the B pair too.
	if _, err := one.SetStatus(ctx, a.ID, account.Revoked); err != nil {
		t.Fatal(err)
	}
	if err := pair(one, key); !errors.Is(err, account.ErrRevoked) {
		t.Fatalf("B pair of a revoked account: %v, want ErrRevoked", err)
	}
}
