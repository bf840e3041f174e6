package account

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// memRepo is the least Repository that authentication needs: credentials and accounts.
type memRepo struct {
	Repository
	creds    map[string]Credential
	accounts map[string]Account
}

func (r *memRepo) Credential(_ context.Context, kind Kind, id string) (Credential, error) {
	c, ok := r.creds[string(kind)+":"+id]
	if !ok {
		return Credential{}, ErrNotFound
	}
	return c, nil
}

func (r *memRepo) Get(_ context.Context, id string) (Account, error) {
	a, ok := r.accounts[id]
	if !ok {
		return Account{}, ErrNotFound
	}
	return a, nil
}

// TestCacheBounded: however many callers authenticate, a replica caches at most CacheSize
// credentials.
func TestCacheBounded(t *testing.T) {
	repo := &memRepo{creds: map[string]Credential{}, accounts: map[string]Account{}}
	var secrets []Secret
	for i := range 500 {
		id := strconv.Itoa(1000 + i)
		s, c := Issue(Key, id)
		repo.creds["key:"+c.Identifier] = c
		repo.accounts[id] = Account{ID: id, Status: Active, Identifiers: map[Kind]string{Key: c.Identifier}}
		secrets = append(secrets, s)
	}
	svc := NewService(repo, Options{CacheTTL: time.Minute, CacheSize: 100})
	for _, s := range secrets {
		if _, err := svc.Authenticate(context.Background(), Key, s.Identifier, s.Secret); err != nil {
			t.Fatal(err)
		}
	}
	if n := svc.cache.Len(); n != 100 {
		t.Errorf("%d credentials cached, want the bound, 100", n)
	}
	if NewService(repo, Options{CacheTTL: time.Minute}).cache == nil {
		t.Error("no cache with the default size")
	}
	if NewService(repo, Options{}).cache != nil {
		t.Error("a cache although CacheTTL is zero")
	}
}
