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
)

// MaxSkew is how old (or how far in the future) a signature may be.
const MaxSkew = 5 * time.Minute

// Tenant is the authenticated account of a request.
type Tenant struct {
	AccountID string
}

// Signer signs and verifies tenant headers with the internal HMAC key.
type Signer struct{ key []byte }

// NewSigner returns a Signer for key.
func NewSigner(key string) *Signer { return &Signer{key: []byte(key)} }

// Sign returns the time and signature headers for a request to method+path on behalf of
// account.
func (s *Signer) Sign(account, method, path string, now time.Time) (ts, sig string) {
	ts = strconv.FormatInt(now.Unix(), 10)
	return ts, s.mac(account, ts, method, path)
}

func (s *Signer) mac(account, ts, method, path string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(account))
	m.Write([]byte{'\n'})
	m.Write([]byte(ts))
	m.Write([]byte{'\n'})
	m.Write([]byte(method))
	m.Write([]byte{'\n'})
	m.Write([]byte(path))
	return hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether sig is edge's signature of these values at a time near now.
func (s *Signer) Verify(account, ts, method, path, sig string, now time.Time) bool {
	if account == "" || ts == "" || sig == "" {
		return false
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	if d := now.Sub(time.Unix(sec, 0)); d > MaxSkew || d < -MaxSkew {
		return false
	}
	want := s.mac(account, ts, method, path)
	return hmac.Equal([]byte(want), []byte(sig))
}

const localsKey = "vros.tenant"

// Require is the services' middleware: it rejects unsigned calls with 401 and stores the
// tenant for From.
func (s *Signer) Require() fiber.Handler {
	return func(c *fiber.Ctx) error {
		account := c.Get(HeaderAccount)
		if !s.Verify(account, c.Get(HeaderTime), c.Method(), c.Path(), c.Get(HeaderSignature), time.Now()) {
			return httpapi.Unauthorized("missing or invalid internal signature")
		}
		// A copy of its own: services key caches by account (booking-svc's settings view),
		// so the id must never be a view of the pooled header buffer.
		c.Locals(localsKey, Tenant{AccountID: strings.Clone(account)})
		return c.Next()
	}
}

// From returns the tenant stored by Require.
func From(c *fiber.Ctx) Tenant {
	t, _ := c.Locals(localsKey).(Tenant)
	return t
}
