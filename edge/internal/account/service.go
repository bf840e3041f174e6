package account

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/vros/vros/libs/tenancy"
)

// Repository is where accounts are kept (accountstore in production).
type Repository interface {
	NextID(ctx context.Context) (string, error)
	Create(ctx context.Context, a Account, creds []Credential) error
	Get(ctx context.Context, id string) (Account, error)
	List(ctx context.Context, after string, limit int64) ([]Account, error)
	Credential(ctx context.Context, kind Kind, identifier string) (Credential, error)
	// Replace makes creds the account's credentials of their kinds, in one step that
	// concurrent calls cannot interleave, and returns the account as it left it. The
	// credentials replaced stop authenticating when it returns.
	Replace(ctx context.Context, id string, creds []Credential) (Account, error)
	SetStatus(ctx context.Context, id string, st Status) (Account, error)
	// SetLegacy turns the account's legacy_credentials setting on or off.
	SetLegacy(ctx context.Context, id string, on bool) (Account, error)
}

// ErrUnauthorized is any failed authentication; callers never learn which half was wrong.
var ErrUnauthorized = errors.New("invalid credentials")

// DefaultCacheSize bounds the credentials one replica caches.
const DefaultCacheSize = 1 << 16

// Options of a Service.
type Options struct {
	// CacheTTL is how long a replica trusts a credential it looked up. A rotation or
	// revocation made through this replica takes effect here at once, one made through
	// another replica within CacheTTL. Zero or less: no cache.
	CacheTTL time.Duration
	// CacheSize bounds the cached credentials (least recently used go first); zero means
	// DefaultCacheSize.
	CacheSize int
}

// Service creates accounts, rotates and revokes their credentials, and authenticates
// callers.
type Service struct {
	repo Repository
	now  func() time.Time

	// cache holds successful lookups by "<kind>:<identifier>"; nil when disabled.
	cache *expirable.LRU[string, cached]
	// refused holds the credentials (kind, identifier and the secret's hash) refused within
	// CacheTTL, so that a client repeating one wrong credential never reaches the store; an
	// unknown identifier and a known one with a wrong secret are kept alike. nil when the
	// cache is disabled.
	refused *expirable.LRU[string, struct{}]
	// mu orders cache insertions against forget; epoch counts forgets, so that a lookup
	// that read the store before a rotation cannot cache what it read after the
	// rotation's forget.
	mu    sync.Mutex
	epoch uint64
}

type cached struct {
	cred    Credential
	status  Status
	sandbox bool
	legacy  bool // the account's legacy_credentials setting
}

func (c cached) result() (tenancy.Tenant, error) {
	if c.status != Active {
		return tenancy.Tenant{}, ErrRevoked
	}
	return tenancy.Tenant{AccountID: c.cred.AccountID, Sandbox: c.sandbox}, nil
}

// NewService returns a Service over repo.
func NewService(repo Repository, o Options) *Service {
	s := &Service{repo: repo, now: time.Now}
	if o.CacheTTL > 0 {
		size := o.CacheSize
		if size <= 0 {
			size = DefaultCacheSize
		}
		s.cache = expirable.NewLRU[string, cached](size, nil, o.CacheTTL)
		s.refused = expirable.NewLRU[string, struct{}](size, nil, o.CacheTTL)
	}
	return s
}

// Create makes a new active account named name, a sandbox one or a live one, with every
// credential kind.
func (s *Service) Create(ctx context.Context, name string, sandbox bool) (Account, []Secret, error) {
	id, err := s.repo.NextID(ctx)
	if err != nil {
		return Account{}, nil, err
	}
	if strings.TrimSpace(name) == "" {
		name = "Account " + id
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	a := Account{ID: id, Name: name, Status: Active, Sandbox: sandbox, CreatedAt: now, UpdatedAt: now, Identifiers: map[Kind]string{}}
	secrets, creds := issueAll(Kinds, id)
	for _, c := range creds {
		if c.Kind == OwnerToken {
			a.TokenHash = c.Identifier
		} else {
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

// Rotate replaces the credentials of kinds (all when empty) with new ones. When it returns,
// the replaced credentials are refused by this replica, and by every other within its
// CacheTTL. Of concurrent rotations the last one stored wins; the credentials the others
// issued are refused like any replaced one.
func (s *Service) Rotate(ctx context.Context, id string, kinds []Kind) (Account, []Secret, error) {
	if len(kinds) == 0 {
		kinds = Kinds
	}
	kinds = slices.DeleteFunc(slices.Clone(Kinds), func(k Kind) bool { return !slices.Contains(kinds, k) })
	secrets, creds := issueAll(kinds, id)
	a, err := s.repo.Replace(ctx, id, creds)
	// Forget even after an error: the store may have switched the credentials first.
	s.forget(id)
	if err != nil {
		return Account{}, nil, err
	}
	return a, secrets, nil
}

// SetStatus revokes (or reinstates) an account, through this replica at once and through
// the others within their CacheTTL.
func (s *Service) SetStatus(ctx context.Context, id string, st Status) (Account, error) {
	a, err := s.repo.SetStatus(ctx, id, st)
	s.forget(id)
	return a, err
}

// SetLegacy turns the account's legacy_credentials setting on or off, through this replica
// at once and through the others within their CacheTTL (they cache the setting with the
// account's credentials).
func (s *Service) SetLegacy(ctx context.Context, id string, on bool) (Account, error) {
	a, err := s.repo.SetLegacy(ctx, id, on)
	s.forget(id)
	return a, err
}

// AuthenticatePair authenticates the pair interface A sends beside HTTP Basic: the
// account's dedicated service pair (kind ServiceKey), or, when the account's
// legacy_credentials setting is on, its interface B key/pass (kind Key), as the original's
// clients send them. Both kinds are always asked, so that the cost does not tell which one
// an identifier is; each refusal is remembered as Authenticate's are.
func (s *Service) AuthenticatePair(ctx context.Context, identifier, secret string) (tenancy.Tenant, error) {
	t, err := s.Authenticate(ctx, ServiceKey, identifier, secret)
	if !errors.Is(err, ErrUnauthorized) {
		return t, err
	}
	c, err := s.authenticate(ctx, Key, identifier, secret)
	if err != nil {
		return tenancy.Tenant{}, err
	}
	if !c.legacy {
		return tenancy.Tenant{}, ErrUnauthorized
	}
	return c.result()
}

// decoy stands in for a credential that does not exist, so that refusing an unknown
// identifier compares a hash just as refusing a wrong secret does.
var decoy = Credential{SecretHash: Hash("no such credential")}

// Authenticate returns the account (as the tenant the services are told of) whose
// credential of kind is identifier+secret. For an owner token, identifier is empty and
// secret is the token.
//
// The first refusal of a well-formed credential costs one store lookup, whether the
// identifier is unknown, known with a wrong secret, or known and cached with a wrong secret;
// the same credential again within CacheTTL costs none, whichever it was: timing does not
// tell which identifiers exist, and a flood of one bad credential never reaches MongoDB. A
// success costs two lookups, or none when cached.
func (s *Service) Authenticate(ctx context.Context, kind Kind, identifier, secret string) (tenancy.Tenant, error) {
	c, err := s.authenticate(ctx, kind, identifier, secret)
	if err != nil {
		return tenancy.Tenant{}, err
	}
	return c.result()
}

// authenticate is Authenticate's lookup: the credential and what the account says of it.
func (s *Service) authenticate(ctx context.Context, kind Kind, identifier, secret string) (cached, error) {
	if secret == "" || len(secret) > 256 {
		return cached{}, ErrUnauthorized
	}
	hash := Hash(secret)
	if kind == OwnerToken {
		identifier = hash
	}
	if identifier == "" || len(identifier) > 128 {
		return cached{}, ErrUnauthorized
	}
	key := string(kind) + ":" + identifier
	if s.cache != nil {
		if c, ok := s.cache.Get(key); ok && c.cred.matchesHash(hash) {
			return c, nil
		}
	}
	// Past the cache (where a success costs nothing more): a credential refused lately is
	// refused again without a lookup.
	refusal := key + ":" + hash
	if s.refused != nil && s.refused.Contains(refusal) {
		return cached{}, ErrUnauthorized
	}
	// A miss, or a cached identifier with a wrong secret: ask the store either way (see
	// above; the per-address failure throttle bounds what that costs).
	epoch := s.currentEpoch()
	cred, err := s.repo.Credential(ctx, kind, identifier)
	found := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return cached{}, fmt.Errorf("credential lookup: %w", err)
	}
	if !found {
		cred = decoy
	}
	if !cred.matchesHash(hash) || !found {
		if s.refused != nil {
			s.refused.Add(refusal, struct{}{})
		}
		return cached{}, ErrUnauthorized
	}
	a, err := s.repo.Get(ctx, cred.AccountID)
	if errors.Is(err, ErrNotFound) {
		return cached{}, ErrUnauthorized
	}
	if err != nil {
		return cached{}, fmt.Errorf("account lookup: %w", err)
	}
	if !a.Lists(cred) {
		return cached{}, ErrUnauthorized
	}
	c := cached{cred: cred, status: a.Status, sandbox: a.Sandbox, legacy: !a.LegacyOff}
	s.remember(key, c, epoch)
	return c, nil
}

func (s *Service) currentEpoch() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epoch
}

// remember caches c unless a forget ran since epoch was read: what the caller read from
// the store may predate that rotation or revocation.
func (s *Service) remember(key string, c cached, epoch uint64) {
	if s.cache == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch == epoch {
		s.cache.Add(key, c)
	}
}

// forget drops every cached lookup of account id, and keeps lookups under way from
// caching what they read.
func (s *Service) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	if s.cache == nil {
		return
	}
	for _, k := range s.cache.Keys() {
		if c, ok := s.cache.Peek(k); ok && c.cred.AccountID == id {
			s.cache.Remove(k)
		}
	}
}
