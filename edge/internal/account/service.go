package account

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vros/vros/libs/periodic"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/vros/vros/libs/tenancy"
)

// Repository is where accounts are kept (accountstore in production).
type Repository interface {
	NextID(ctx context.Context) (string, error)
	Create(ctx context.Context, a Account, creds []Credential) error
	Get(ctx context.Context, id string) (Account, error)
	List(ctx context.Context, q ListQuery) ([]Account, error)
	Credential(ctx context.Context, kind Kind, identifier string) (Credential, error)
	// Replace makes creds the account's credentials of their kinds, in one step that
	// concurrent calls cannot interleave, and returns the account as it left it. The
	// credentials replaced stop authenticating when it returns.
	Replace(ctx context.Context, id string, creds []Credential) (Account, error)
	// SetStatus, SetLegacy (the legacy_credentials setting) and SetPlan change the account
	// and return it as it was before and as they left it.
	SetStatus(ctx context.Context, id string, st Status) (before, after Account, err error)
	SetLegacy(ctx context.Context, id string, on bool) (before, after Account, err error)
	// SetPlan writes the fields of p that only names (PlanFields' names; all when nil), each
	// on its own, so that concurrent changes of different fields all hold.
	SetPlan(ctx context.Context, id string, p Plan, only []string) (before, after Account, err error)
	// ChangedSince lists the accounts written after since (every write stamps the account
	// with its time and a new version), oldest first.
	ChangedSince(ctx context.Context, since time.Time) ([]Change, error)
	// AppendAudit adds r to the audit log; Audit reads the log, newest first.
	AppendAudit(ctx context.Context, r AuditRecord) error
	Audit(ctx context.Context, q AuditQuery) ([]AuditRecord, error)
	// MarkDeleting makes the account Deleting, stamped at (kept when it already is), and
	// returns it as it was before and as it left it; ErrNotFound when it does not exist or
	// is Deleted. Every later change but the deletion's is refused with ErrDeleting.
	MarkDeleting(ctx context.Context, id string, at time.Time) (before, after Account, err error)
	// FinishDeletion, for a Deleting account, deletes every credential of it, blanks its name
	// in its audit records, and leaves the account as its id, status Deleted and at; for a
	// Deleted one it does nothing. Each step may be repeated.
	FinishDeletion(ctx context.Context, id string, at time.Time) (Account, error)
	// Deleting lists the accounts Deleting since before, oldest first.
	Deleting(ctx context.Context, before time.Time) ([]string, error)
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
	// Eraser erases an account's data in the services (Delete); nil: Delete refuses.
	Eraser Eraser
}

// ChangeOverlap is how far back of the newest change it has seen a replica asks again
// (Watch): a write stamped before a poll but committed after it is still found, as long as
// it commits within ChangeOverlap of its stamp. The credential cache's TTL bounds the rest.
const ChangeOverlap = 5 * time.Second

// Service creates accounts, rotates and revokes their credentials, and authenticates
// callers.
type Service struct {
	repo Repository
	now  func() time.Time

	// cache holds successful lookups by "<kind>:<identifier>"; nil when disabled.
	cache *expirable.LRU[string, cached]
	// refused holds the credentials (kind, identifier and the secret's hash) refused within
	// CacheTTL, so that a client repeating one wrong credential never reaches the store; an
	// unknown identifier and a known one with a wrong secret are kept alike. The value is the
	// account of a known identifier ("" for an unknown one), so that forget drops them too.
	// nil when the cache is disabled.
	refused *expirable.LRU[string, string]
	// mu orders cache insertions against forget; epoch counts forgets, so that a lookup
	// that read the store before a rotation cannot cache what it read after the
	// rotation's forget.
	mu    sync.Mutex
	epoch uint64

	// cursor is the newest change Watch has seen (its stamp); seen, the version of every
	// account changed within ChangeOverlap of it. Only Watch's goroutine uses them.
	cursor time.Time
	seen   map[string]int64

	eraser Eraser
	// deletions joins the concurrent deletions of one account in this replica.
	deletions joins
}

type cached struct {
	cred    Credential
	status  Status
	sandbox bool
	legacy  bool // the account's legacy_credentials setting
	plan    Plan
}

// Caller is an authenticated caller: the tenant the services are told of, and its account's
// plan, which edge applies to the request.
type Caller struct {
	Tenant tenancy.Tenant
	Plan   Plan
}

func (c cached) result() (Caller, error) {
	switch c.status {
	case Active:
	case Deleting, Deleted:
		// Refused at once, as a suspension is; the credentials themselves go with the
		// deletion's last step, after which they are unknown.
		return Caller{}, ErrUnauthorized
	default:
		return Caller{}, ErrSuspended
	}
	// The services are told the plan's limits that they apply themselves.
	t := tenancy.Tenant{AccountID: c.cred.AccountID, Sandbox: c.sandbox, MaxProperties: c.plan.MaxProperties}
	return Caller{Tenant: t, Plan: c.plan}, nil
}

// NewService returns a Service over repo.
func NewService(repo Repository, o Options) *Service {
	s := &Service{repo: repo, now: time.Now, seen: map[string]int64{}, eraser: o.Eraser}
	s.cursor = s.now().UTC()
	if o.CacheTTL > 0 {
		size := o.CacheSize
		if size <= 0 {
			size = DefaultCacheSize
		}
		s.cache = expirable.NewLRU[string, cached](size, nil, o.CacheTTL)
		s.refused = expirable.NewLRU[string, string](size, nil, o.CacheTTL)
	}
	return s
}

// Watch makes the account changes made through other replicas (status, plan, rotation,
// settings) take effect here within about every: each tick it asks the store for the
// accounts written since the newest change it has seen (less ChangeOverlap), one indexed
// query, and drops what it cached of each account changed since. A failed poll is retried
// at the next tick from the same point; meanwhile CacheTTL still bounds what is trusted.
// It returns when ctx ends.
func (s *Service) Watch(ctx context.Context, every time.Duration, onError func(error)) {
	periodic.Run(ctx, every, s.Poll, onError)
}

// Poll is one tick of Watch: it drops what this replica cached of every account changed
// since the last poll. Not safe for concurrent use with itself.
func (s *Service) Poll(ctx context.Context) error {
	changes, err := s.repo.ChangedSince(ctx, s.cursor.Add(-ChangeOverlap))
	if err != nil {
		return fmt.Errorf("account changes: %w", err)
	}
	for _, ch := range changes {
		if v, ok := s.seen[ch.ID]; ok && v >= ch.Version {
			continue
		}
		s.seen[ch.ID] = ch.Version
		s.forget(ch.ID)
		if ch.At.After(s.cursor) {
			s.cursor = ch.At
		}
	}
	// Forget the versions of changes that the next polls no longer ask for. Their own
	// stamps are not kept: an account whose version is gone is dropped again if it shows up.
	if len(s.seen) > 0 {
		keep := map[string]bool{}
		for _, ch := range changes {
			if !ch.At.Before(s.cursor.Add(-ChangeOverlap)) {
				keep[ch.ID] = true
			}
		}
		for id := range s.seen {
			if !keep[id] {
				delete(s.seen, id)
			}
		}
	}
	return nil
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
	err = s.audit(ctx, AuditRecord{AccountID: id, Action: ActionCreate, Credentials: Kinds, Changes: []FieldChange{
		{Field: "name", New: a.Name}, {Field: "sandbox", New: a.Sandbox}, {Field: "status", New: string(a.Status)},
	}})
	if err != nil {
		return Account{}, nil, err
	}
	return a, secrets, nil
}

// audit appends r, stamped now and with the actor ctx carries (and a new id, unless r has
// one: a record appended again under its id is kept once). The change it records is
// already made: a failure to record it is reported to the caller (tried three times first).
func (s *Service) audit(ctx context.Context, r AuditRecord) error {
	r.At = s.now().UTC().Truncate(time.Millisecond)
	if r.ID == "" {
		r.ID = newAuditID(r.At)
	}
	r.Actor = ActorFrom(ctx)
	var err error
	for range 3 {
		if err = s.repo.AppendAudit(ctx, r); err == nil {
			return nil
		}
	}
	return fmt.Errorf("the %s of account %s was made but its audit record was not written: %w", r.Action, r.AccountID, err)
}

// newAuditID is an id that sorts by time: the stamp in nanoseconds (16 hex digits), then
// random text that keeps ids of one nanosecond apart.
func newAuditID(at time.Time) string { return fmt.Sprintf("%016x", at.UnixNano()) + randomText(8) }

// Audit reads the audit log, newest first.
func (s *Service) Audit(ctx context.Context, q AuditQuery) ([]AuditRecord, error) {
	return s.repo.Audit(ctx, q)
}

func issueAll(kinds []Kind, id string) ([]Secret, []Credential) {
	secrets := make([]Secret, len(kinds))
	creds := make([]Credential, len(kinds))
	for i, k := range kinds {
		secrets[i], creds[i] = Issue(k, id)
	}
	return secrets, creds
}

// Get returns an account; a Deleted one does not exist.
func (s *Service) Get(ctx context.Context, id string) (Account, error) {
	a, err := s.repo.Get(ctx, id)
	if err == nil && a.Status == Deleted {
		return Account{}, ErrNotFound
	}
	return a, err
}

// List pages through the accounts q selects, in id order.
func (s *Service) List(ctx context.Context, q ListQuery) ([]Account, error) {
	return s.repo.List(ctx, q)
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
	if err := s.audit(ctx, AuditRecord{AccountID: id, Action: ActionRotate, Credentials: kinds}); err != nil {
		return Account{}, nil, err
	}
	return a, secrets, nil
}

// SetStatus suspends (or reinstates) an account, through this replica at once and through
// the others at their next Poll (within CacheTTL at worst).
func (s *Service) SetStatus(ctx context.Context, id string, st Status) (Account, error) {
	before, after, err := s.repo.SetStatus(ctx, id, st)
	s.forget(id)
	if err != nil {
		return Account{}, err
	}
	action := ActionReinstate
	if st != Active {
		action = ActionSuspend
	}
	return after, s.audit(ctx, AuditRecord{AccountID: id, Action: action,
		Changes: []FieldChange{{Field: "status", Old: string(before.Status), New: string(after.Status)}}})
}

// SetLegacy turns the account's legacy_credentials setting on or off, through this replica
// at once and through the others at their next Poll (they cache the setting with the
// account's credentials).
func (s *Service) SetLegacy(ctx context.Context, id string, on bool) (Account, error) {
	before, after, err := s.repo.SetLegacy(ctx, id, on)
	s.forget(id)
	if err != nil {
		return Account{}, err
	}
	return after, s.audit(ctx, AuditRecord{AccountID: id, Action: ActionSettings,
		Changes: []FieldChange{{Field: "legacy_credentials", Old: !before.LegacyOff, New: !after.LegacyOff}}})
}

// SetPlan makes p the account's plan, through this replica at once and through the others
// at their next Poll. The audit record lists the fields that changed.
func (s *Service) SetPlan(ctx context.Context, id string, p Plan) (Account, error) {
	return s.UpdatePlan(ctx, id, p, nil)
}

// UpdatePlan sets the fields of the account's plan that only names (PlanFields' names; all
// when nil) to their values in p, each on its own so that concurrent changes of different
// fields all hold; otherwise as SetPlan.
func (s *Service) UpdatePlan(ctx context.Context, id string, p Plan, only []string) (Account, error) {
	before, after, err := s.repo.SetPlan(ctx, id, p, only)
	s.forget(id)
	if err != nil {
		return Account{}, err
	}
	return after, s.audit(ctx, AuditRecord{AccountID: id, Action: ActionPlan, Changes: PlanChanges(before.Plan, after.Plan)})
}

// PlanFields are the plan's fields as the admin API names them, with their values in p.
func PlanFields(p Plan) []FieldChange {
	return []FieldChange{
		{Field: "rate_rps", New: p.RateRPS}, {Field: "rate_burst", New: p.RateBurst},
		{Field: "max_concurrent", New: p.MaxConcurrent}, {Field: "body_limit", New: p.BodyLimit},
		{Field: "max_properties", New: p.MaxProperties},
	}
}

// MergePlan is cur with the fields that only names (all when nil) taken from p.
func MergePlan(cur, p Plan, only []string) Plan {
	if only == nil {
		return p
	}
	for _, f := range only {
		switch f {
		case "rate_rps":
			cur.RateRPS = p.RateRPS
		case "rate_burst":
			cur.RateBurst = p.RateBurst
		case "max_concurrent":
			cur.MaxConcurrent = p.MaxConcurrent
		case "body_limit":
			cur.BodyLimit = p.BodyLimit
		case "max_properties":
			cur.MaxProperties = p.MaxProperties
		}
	}
	return cur
}

// PlanChanges lists the fields of old and new that differ, old value to new.
func PlanChanges(old, new Plan) []FieldChange {
	o, n := PlanFields(old), PlanFields(new)
	var out []FieldChange
	for i := range n {
		if o[i].New != n[i].New {
			out = append(out, FieldChange{Field: n[i].Field, Old: o[i].New, New: n[i].New})
		}
	}
	return out
}

// AuthenticatePair authenticates the pair interface A sends beside HTTP Basic: the
// account's dedicated service pair (kind ServiceKey), or, when the account's
// legacy_credentials setting is on, its interface B key/pass (kind Key), as the original's
// clients send them. Both kinds are always asked, so that the cost does not tell which one
// an identifier is; each refusal is remembered as Authenticate's are.
func (s *Service) AuthenticatePair(ctx context.Context, identifier, secret string) (tenancy.Tenant, error) {
	c, err := s.AuthenticatePairCaller(ctx, identifier, secret)
	return c.Tenant, err
}

// AuthenticatePairCaller is AuthenticatePair with the account's plan.
func (s *Service) AuthenticatePairCaller(ctx context.Context, identifier, secret string) (Caller, error) {
	t, err := s.AuthenticateCaller(ctx, ServiceKey, identifier, secret)
	if !errors.Is(err, ErrUnauthorized) {
		return t, err
	}
	c, err := s.authenticate(ctx, Key, identifier, secret)
	if err != nil {
		return Caller{}, err
	}
	if !c.legacy {
		return Caller{}, ErrUnauthorized
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
//
// A suspended account's credentials are refused with ErrSuspended.
func (s *Service) Authenticate(ctx context.Context, kind Kind, identifier, secret string) (tenancy.Tenant, error) {
	c, err := s.AuthenticateCaller(ctx, kind, identifier, secret)
	return c.Tenant, err
}

// AuthenticateCaller is Authenticate with the account's plan, for edge to apply to the
// request.
func (s *Service) AuthenticateCaller(ctx context.Context, kind Kind, identifier, secret string) (Caller, error) {
	c, err := s.authenticate(ctx, kind, identifier, secret)
	if err != nil {
		return Caller{}, err
	}
	return c.result()
}

// CallerOf is the caller an account's signed-in panel user acts as: what its credentials
// would authenticate as (the tenant and the plan), read from the account itself;
// ErrSuspended for a suspended account, ErrUnauthorized for one being deleted or gone.
func (s *Service) CallerOf(ctx context.Context, id string) (Caller, error) {
	a, err := s.Get(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return Caller{}, ErrUnauthorized
	}
	if err != nil {
		return Caller{}, err
	}
	return cached{cred: Credential{AccountID: a.ID}, status: a.Status, sandbox: a.Sandbox, legacy: !a.LegacyOff, plan: a.Plan}.result()
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
		s.refuse(refusal, cred.AccountID, epoch)
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
	c := cached{cred: cred, status: a.Status, sandbox: a.Sandbox, legacy: !a.LegacyOff, plan: a.Plan}
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

// refuse remembers a refused credential (of account, "" when unknown) unless a forget ran
// since epoch was read.
func (s *Service) refuse(key, account string, epoch uint64) {
	if s.refused == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch == epoch {
		s.refused.Add(key, account)
	}
}

// forget drops every cached lookup of account id, successes and refusals, and keeps
// lookups under way from caching what they read.
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
	for _, k := range s.refused.Keys() {
		if acc, ok := s.refused.Peek(k); ok && acc == id {
			s.refused.Remove(k)
		}
	}
}
