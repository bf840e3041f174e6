// Package account is the tenant domain of edge: accounts and the four credential kinds
// that authenticate their callers.
package account

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"time"
)

// Kind names one credential of an account.
type Kind string

// Credential kinds. Interface A needs both Basic and Service; interface B's JSON actions
// need Key; its GET endpoints need OwnerToken.
const (
	Basic      Kind = "basic"
	ServiceKey Kind = "service"
	Key        Kind = "key"
	OwnerToken Kind = "owner_token"
)

// Kinds lists every credential kind, in the order they are issued.
var Kinds = []Kind{Basic, ServiceKey, Key, OwnerToken}

// Status of an account.
type Status string

// Account statuses. A suspended account keeps its data; every credential of it is refused
// until it is reinstated (made Active again).
const (
	Active    Status = "active"
	Suspended Status = "suspended"
	// Revoked is Suspended's former name (the admin API's /revoke is an alias of /suspend);
	// accounts stored as "revoked" read as Suspended.
	Revoked = Suspended
	// Deleting is an account whose deletion has begun (Service.Delete): every credential of
	// it is refused, and the deletion is driven on until the account is Deleted.
	Deleting Status = "deleting"
	// Deleted is what is left of a deleted account: its id (never reused), its status and
	// when it was deleted. To every reader but the deletion itself it does not exist.
	Deleted Status = "deleted"
)

// Errors of the account domain.
var (
	ErrNotFound  = errors.New("account not found")
	ErrSuspended = errors.New("account suspended")
	// ErrRevoked is ErrSuspended's former name.
	ErrRevoked = ErrSuspended
	// ErrDeleting refuses a change to an account whose deletion has begun.
	ErrDeleting = errors.New("account is being deleted")
)

// Account is one tenant.
type Account struct {
	ID     string
	Name   string
	Status Status
	// Sandbox accounts try vros out: their card payments reach only the test gateway
	// (docs/accounts.md). Set at creation.
	Sandbox bool
	// LegacyOff turns the account's legacy_credentials setting off: interface A then
	// accepts only the dedicated service pair, not the interface B key/pass that the
	// original's clients send as 365villaskey/365villaspass (docs/accounts.md). The zero
	// value is on, the default, for new accounts and for those stored before the setting.
	LegacyOff bool
	CreatedAt time.Time
	UpdatedAt time.Time
	// Identifiers are the public halves of the credentials (the Basic user name, the
	// servicekey, the key) by kind; the owner token has none.
	Identifiers map[Kind]string
	// TokenHash identifies the owner token (its hash); never shown.
	TokenHash string
	// Plan is the account's limits (see Plan); the zero Plan is edge's defaults throughout.
	Plan Plan
	// DeletingAt is when its deletion began (zero unless Deleting or Deleted); DeletedAt,
	// when it ended (zero unless Deleted).
	DeletingAt time.Time
	DeletedAt  time.Time
}

// Plan is an account's limits, set by the operator (docs/accounts.md, "Plans"). Zero in a
// field means edge's default (its environment configuration) for RateRPS, RateBurst,
// MaxConcurrent and BodyLimit, and no limit for MaxProperties.
type Plan struct {
	RateRPS       float64
	RateBurst     int
	MaxConcurrent int
	BodyLimit     int
	MaxProperties int
}

// Lists reports whether c is one of a's current credentials. The account is the one record
// of which credentials are current: a credential that a rotation replaced is refused even
// while its own record still exists.
func (a Account) Lists(c Credential) bool {
	if c.AccountID != a.ID || c.Identifier == "" {
		return false
	}
	if c.Kind == OwnerToken {
		return c.Identifier == a.TokenHash
	}
	return c.Identifier == a.Identifiers[c.Kind]
}

// Credential is the stored form of one credential: who it belongs to and the SHA-256 of
// its secret. Secrets are random and long, so a fast hash is enough.
type Credential struct {
	Kind       Kind
	Identifier string
	AccountID  string
	SecretHash string
}

// Secret is one freshly issued credential, shown to the caller once.
type Secret struct {
	Kind       Kind
	Identifier string
	Secret     string
}

// Issue creates a new credential of kind for account.
func Issue(kind Kind, accountID string) (Secret, Credential) {
	var s Secret
	switch kind {
	case Basic:
		s = Secret{Kind: kind, Identifier: "bu_" + randomText(16), Secret: randomText(32)}
	case ServiceKey:
		s = Secret{Kind: kind, Identifier: "sk_" + randomText(24), Secret: randomText(32)}
	case Key:
		s = Secret{Kind: kind, Identifier: "k_" + randomText(24), Secret: randomText(32)}
	case OwnerToken:
		tok := "ot_" + randomText(40)
		// The token is its own identifier: it is looked up by its hash.
		s = Secret{Kind: kind, Identifier: "", Secret: tok}
	}
	c := Credential{Kind: kind, Identifier: s.Identifier, AccountID: accountID, SecretHash: Hash(s.Secret)}
	if kind == OwnerToken {
		c.Identifier = c.SecretHash
	}
	return s, c
}

// Hash is the stored form of a secret.
func Hash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// Matches reports, in constant time, whether secret is the one c was issued with.
func (c Credential) Matches(secret string) bool { return c.matchesHash(Hash(secret)) }

// matchesHash reports, in constant time, whether hash is Hash of c's secret.
func (c Credential) matchesHash(hash string) bool {
	return subtle.ConstantTimeCompare([]byte(hash), []byte(c.SecretHash)) == 1
}

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomText returns n characters of base62 from the system's secure random source.
func randomText(n int) string {
	out := make([]byte, n)
	buf := make([]byte, n*2)
	for i := 0; i < n; {
		_, _ = rand.Read(buf)
		for _, b := range buf {
			if int(b) < 248 { // 248 = 4×62: keeps the draw uniform
				out[i] = alphabet[int(b)%62]
				i++
				if i == n {
					break
				}
			}
		}
	}
	return string(out)
}
