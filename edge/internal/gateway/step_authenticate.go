package gateway

import (
	"encoding/base64"
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/libs/httpapi"
)

// Step: authenticate. The credentials read (step_credentials.go) are looked up
// (account.Service: a bounded, expiring cache in front of the store); a wrong one counts as
// a failed authentication of the address. From here on the request is its caller's: it is
// counted in the caller's usage (step_usage.go) and held to its plan's limits.

// authenticateA checks HTTP Basic, then the second pair; both must name one account.
func (g *Gateway) authenticateA(c *fiber.Ctx) error {
	st := requestOf(c)
	a1, err := g.check(c, account.Basic, st.user, st.password)
	if err != nil {
		return err
	}
	a2, err := g.checkPair(c, st.key, st.pass)
	if err != nil {
		return err
	}
	if a1.Tenant.AccountID != a2.Tenant.AccountID {
		g.failures.Failed(c)
		g.metrics.AuthFailed(c.UserContext(), edgemetrics.Service)
		return httpapi.Unauthorized("invalid credentials")
	}
	st.authenticatedAs(a1)
	return c.Next()
}

// authenticateB checks interface B's key and pass.
func (g *Gateway) authenticateB(c *fiber.Ctx) error {
	st := requestOf(c)
	caller, err := g.check(c, account.Key, st.key, st.pass)
	if err != nil {
		return err
	}
	st.authenticatedAs(caller)
	return c.Next()
}

// authenticateRead checks an owner-token read's token, and the booking API's.
func (g *Gateway) authenticateRead(c *fiber.Ctx) error {
	st := requestOf(c)
	caller, err := g.check(c, account.OwnerToken, "", st.pass)
	if err != nil {
		return err
	}
	st.authenticatedAs(caller)
	return c.Next()
}

// authenticatedAs marks the request as caller's.
func (st *request) authenticatedAs(caller account.Caller) {
	st.caller, st.authenticated = caller, true
}

// check authenticates one credential. The throttle step runs first: a client address whose
// failures are spent is refused before any lookup.
func (g *Gateway) check(c *fiber.Ctx, kind account.Kind, id, secret string) (account.Caller, error) {
	acc, err := g.accounts.AuthenticateCaller(c.UserContext(), kind, id, secret)
	switch {
	case errors.Is(err, account.ErrUnauthorized):
		g.failures.Failed(c)
		g.metrics.AuthFailed(c.UserContext(), edgemetrics.AuthKind(kind))
		return account.Caller{}, httpapi.Unauthorized("invalid credentials")
	case errors.Is(err, account.ErrSuspended):
		return account.Caller{}, httpapi.Unauthorized("account suspended")
	}
	return acc, err
}

// checkPair authenticates interface A's service pair, sent as it is or base64-encoded (the
// original's docs send base64 text): the raw values are tried first, then the decoded ones.
// Either may be the dedicated service pair or, when the account's legacy_credentials setting
// is on, its interface B key/pass (account.Service.AuthenticatePair). A refusal counts as
// one failed authentication, however many forms were tried.
func (g *Gateway) checkPair(c *fiber.Ctx, key, pass string) (account.Caller, error) {
	tries := [][2]string{{key, pass}}
	if k, p := unbase64(key), unbase64(pass); k != key || p != pass {
		tries = append(tries, [2]string{k, p})
	}
	for _, t := range tries {
		acc, err := g.accounts.AuthenticatePairCaller(c.UserContext(), t[0], t[1])
		switch {
		case errors.Is(err, account.ErrUnauthorized):
			continue
		case errors.Is(err, account.ErrSuspended):
			return account.Caller{}, httpapi.Unauthorized("account suspended")
		}
		return acc, err
	}
	g.failures.Failed(c)
	g.metrics.AuthFailed(c.UserContext(), edgemetrics.Service)
	return account.Caller{}, httpapi.Unauthorized("invalid credentials")
}

// unbase64 is s decoded from base64 (padded or not) when that gives printable ASCII text,
// else s.
func unbase64(s string) string {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(s)
		if err != nil || len(b) == 0 {
			continue
		}
		printable := true
		for _, ch := range b {
			if ch <= ' ' || ch > '~' {
				printable = false
				break
			}
		}
		if printable {
			return string(b)
		}
	}
	return s
}
