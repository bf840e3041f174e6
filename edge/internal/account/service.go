package account

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Repository is where accounts are kept (accountstore in production).
type Repository interface {
	NextID(ctx context.Context) (string, error)
	Create(ctx context.Context, a Account, creds []Credential) error
	Get(ctx context.Context, id string) (Account, error)
	List(ctx context.Context, after string, limit int64) ([]Account, error)
	Credential(ctx context.Context, kind Kind, identifier string) (Credential, error)
	Replace(ctx context.Context, id string, creds []Credential) error
	SetStatus(ctx context.Context, id string, st Status) (Account, error)
}

// ErrUnauthorized is any failed authentication; callers never learn which half was wrong.
var ErrUnauthorized = errors.New("invalid credentials")

// Service creates accounts, rotates and revokes their credentials, and authenticates
// callers. Successful lookups are cached for CacheTTL, so a credential rotated or an
// account revoked through another edge replica stops working within that time; through
// this replica, at once.
type Service struct {
	repo     Repository
	CacheTTL time.Duration
	now      func() time.Time

	mu    sync.RWMutex
	cache map[string]cached // "<kind>:<identifier>" → lookup
}

type cached struct {
	cred    Credential
	status  Status
	expires time.Time
}

// NewService returns a Service over repo.
func NewService(repo Repository) *Service {
	return &Service{repo: repo, CacheTTL: 30 * time.Second, now: time.Now, cache: map[string]cached{}}
}

// Create makes a new active account named name with every credential kind.
func (s *Service) Create(ctx context.Context, name string) (Account, []Secret, error) {
	id, err := s.repo.NextID(ctx)
	if err != nil {
		return Account{}, nil, err
	}
	if strings.TrimSpace(name) == "" {
		name = "Account " + id
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	a := Account{ID: id, Name: name, Status: Active, CreatedAt: now, UpdatedAt: now, Identifiers: map[Kind]string{}}
	secrets, creds := issueAll(Kinds, id)
	for _, c := range creds {
		if c.Kind != OwnerToken {
			a.Identifiers[c.Kind] = c.Identifier
		}
	}
	if err := s.repo.Create(ctx, a, creds); err != nil {
		return Account{}, nil, err
	}
	return a, secrets, nil
}

func issueAll(kinds []Kind, id string) ([]Secret, []Credential) {
	secrets := make([]Secret, len(kinds))
	creds := make([]Credential, len(kinds))
	for i, k := range kinds {
		secrets[i], creds[i] = Issue(k, id)
	}
	return secrets, creds
}

// Get returns an account.
func (s *Service) Get(ctx context.Context, id string) (Account, error) { return s.repo.Get(ctx, id) }

// List pages through accounts.
func (s *Service) List(ctx context.Context, after string, limit int64) ([]Account, error) {
	return s.repo.List(ctx, after, limit)
}

// Rotate replaces the credentials of kinds (all when empty) with new ones.
func (s *Service) Rotate(ctx context.Context, id string, kinds []Kind) (Account, []Secret, error) {
	if len(kinds) == 0 {
		kinds = Kinds
	}
	secrets, creds := issueAll(kinds, id)
	if err := s.repo.Replace(ctx, id, creds); err != nil {
		return Account{}, nil, err
	}
	s.forget(id)
	a, err := s.repo.Get(ctx, id)
	return a, secrets, err
}

// SetStatus revokes (or reinstates) an account.
func (s *Service) SetStatus(ctx context.Context, id string, st Status) (Account, error) {
	a, err := s.repo.SetStatus(ctx, id, st)
	if err == nil {
		s.forget(id)
	}
	return a, err
}

// Authenticate returns the account whose credential of kind is identifier+secret. For an
// owner token, identifier is empty and secret is the token.
func (s *Service) Authenticate(ctx context.Context, kind Kind, identifier, secret string) (string, error) {
	if kind == OwnerToken {
		identifier = Hash(secret)
	}
	if identifier == "" || secret == "" || len(identifier) > 128 || len(secret) > 256 {
		return "", ErrUnauthorized
	}
	key := string(kind) + ":" + identifier
	s.mu.RLock()
	c, ok := s.cache[key]
	s.mu.RUnlock()
	if !ok || s.now().After(c.expires) {
		cred, err := s.repo.Credential(ctx, kind, identifier)
		if errors.Is(err, ErrNotFound) {
			return "", ErrUnauthorized
		}
		if err != nil {
			return "", fmt.Errorf("credential lookup: %w", err)
		}
		a, err := s.repo.Get(ctx, cred.AccountID)
		if errors.Is(err, ErrNotFound) {
			return "", ErrUnauthorized
		}
		if err != nil {
			return "", fmt.Errorf("account lookup: %w", err)
		}
		c = cached{cred: cred, status: a.Status, expires: s.now().Add(s.CacheTTL)}
		s.mu.Lock()
		s.cache[key] = c
		s.mu.Unlock()
	}
	if !c.cred.Matches(secret) {
		return "", ErrUnauthorized
	}
	if c.status != Active {
		return "", ErrRevoked
	}
	return c.cred.AccountID, nil
}

// forget drops every cached lookup of account id.
func (s *Service) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, c := range s.cache {
		if c.cred.AccountID == id {
			delete(s.cache, k)
		}
	}
}
