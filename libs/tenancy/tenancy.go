// Package tenancy carries the caller's account from edge to the services in headers that
// edge signs with a shared secret. Services trust nothing else: a call without a valid
// signature never reaches a handler.
package tenancy

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
)

// Header names of the signed tenant context.
const (
	HeaderAccount   = "X-Vros-Account"
	HeaderTime      = "X-Vros-Time"
	HeaderSignature = "X-Vros-Signature"
	// HeaderMode is "sandbox" for a sandbox account (docs/accounts.md), absent for a live
	// one. The signature covers it, so it cannot be added or dropped on the way.
	HeaderMode = "X-Vros-Mode"
	// HeaderMaxProperties is the account plan's most properties, absent when the plan sets
	// none. The signature covers it when present.
	HeaderMaxProperties = "X-Vros-Max-Properties"
)

// modeSandbox is HeaderMode's value for a sandbox account.
const modeSandbox = "sandbox"

// MaxSkew is how old (or how far in the future) a signature may be.
const MaxSkew = 5 * time.Minute

// Tenant is the authenticated account of a request.
type Tenant struct {
	AccountID string
	// Sandbox accounts try vros out: their card payments only ever reach the test gateway.
	Sandbox bool
	// MaxProperties is the most properties the account's plan allows; 0 is no limit.
	MaxProperties int
}

// Signer signs and verifies tenant headers with the internal HMAC key.
type Signer struct{ key []byte }

// NewSigner returns a Signer for key.
func NewSigner(key string) *Signer { return &Signer{key: []byte(key)} }

// Sign returns the time and signature headers for a request to method+path on behalf of
// the live account.
func (s *Signer) Sign(account, method, path string, now time.Time) (ts, sig string) {
	return s.SignTenant(Tenant{AccountID: account}, method, path, now)
}

// SignTenant returns the time and signature headers for a request to method+path on behalf
// of t.
func (s *Signer) SignTenant(t Tenant, method, path string, now time.Time) (ts, sig string) {
	ts = strconv.FormatInt(now.Unix(), 10)
	return ts, s.mac(t, ts, method, path)
}

// SetHeaders sets every header of the signed tenant context of a request to method+path on
// behalf of t, through set (net/http's Header.Set, fasthttp's RequestHeader.Set).
func (s *Signer) SetHeaders(set func(key, value string), t Tenant, method, path string, now time.Time) {
	ts, sig := s.SignTenant(t, method, path, now)
	set(HeaderAccount, t.AccountID)
	set(HeaderTime, ts)
	set(HeaderSignature, sig)
	if t.Sandbox {
		set(HeaderMode, modeSandbox)
	}
	if t.MaxProperties > 0 {
		set(HeaderMaxProperties, strconv.Itoa(t.MaxProperties))
	}
}

// mac signs the tenant, the time and the request line. A live account's signature is the
// one older versions made, so that services and edge can be upgraded one after the other.
func (s *Signer) mac(t Tenant, ts, method, path string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(t.AccountID))
	m.Write([]byte{'\n'})
	m.Write([]byte(ts))
	m.Write([]byte{'\n'})
	m.Write([]byte(method))
	m.Write([]byte{'\n'})
	m.Write([]byte(path))
	if t.Sandbox {
		m.Write([]byte("\n" + modeSandbox))
	}
	if t.MaxProperties > 0 {
		m.Write([]byte("\nmax_properties=" + strconv.Itoa(t.MaxProperties)))
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether sig is edge's signature of these values, for a live account, at a
// time near now.
func (s *Signer) Verify(account, ts, method, path, sig string, now time.Time) bool {
	return s.VerifyTenant(Tenant{AccountID: account}, ts, method, path, sig, now)
}

// VerifyTenant reports whether sig is edge's signature of these values at a time near now.
func (s *Signer) VerifyTenant(t Tenant, ts, method, path, sig string, now time.Time) bool {
	if t.AccountID == "" || ts == "" || sig == "" {
		return false
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	if d := now.Sub(time.Unix(sec, 0)); d > MaxSkew || d < -MaxSkew {
		return false
	}
	want := s.mac(t, ts, method, path)
	return hmac.Equal([]byte(want), []byte(sig))
}

const localsKey = "vros.tenant"

// Require is the services' middleware: it rejects unsigned calls with 401 and stores the
// tenant for From.
func (s *Signer) Require() fiber.Handler {
	return func(c *fiber.Ctx) error {
		// A copy of its own: services key caches by account (booking-svc's settings view),
		// so the id must never be a view of the pooled header buffer.
		t := Tenant{AccountID: strings.Clone(c.Get(HeaderAccount)), Sandbox: c.Get(HeaderMode) == modeSandbox}
		if v := c.Get(HeaderMaxProperties); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 || strconv.Itoa(n) != v {
				return httpapi.Unauthorized("missing or invalid internal signature")
			}
			t.MaxProperties = n
		}
		if !s.VerifyTenant(t, c.Get(HeaderTime), c.Method(), c.Path(), c.Get(HeaderSignature), time.Now()) {
			return httpapi.Unauthorized("missing or invalid internal signature")
		}
		c.Locals(localsKey, t)
		return c.Next()
	}
}

// From returns the tenant stored by Require.
func From(c *fiber.Ctx) Tenant {
	t, _ := c.Locals(localsKey).(Tenant)
	return t
}
