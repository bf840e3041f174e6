package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/httpapi"
)

// credentialAccounts are the accounts every credential table uses.
type credentialAccounts struct {
	live, other, sandbox, revoked tenantAccount
	// rotated is an account whose credentials were all replaced (after being used, so
	// that the replaced ones were cached); old holds the replaced ones.
	rotated tenantAccount
	old     credentials
}

func setUpAccounts(t *testing.T, e *edge, s *stubs) credentialAccounts {
	t.Helper()
	ctx := context.Background()
	c := credentialAccounts{live: e.createAccount(t, false), other: e.createAccount(t, false),
		sandbox: e.createAccount(t, true), revoked: e.createAccount(t, false), rotated: e.createAccount(t, false)}
	// Each works before the change, so the change must undo a cached success.
	for _, acc := range []tenantAccount{c.revoked, c.rotated} {
		passed(t, e.send(t, "", http.MethodPost, "/api/property", headersA(acc), `{}`), gateway.PropertySvc)
		passed(t, e.send(t, "", http.MethodPost, "/vros/external-booking", nil, bodyB(acc.creds[account.Key], "gettax")), gateway.CatalogSvc)
		passed(t, e.send(t, "", http.MethodGet, "/vros/api/default-config/owner_token/"+acc.creds[account.OwnerToken].Secret, nil, ""), gateway.CatalogSvc)
	}
	s.take()
	if _, err := e.accounts.SetStatus(ctx, c.revoked.id, account.Revoked); err != nil {
		t.Fatal(err)
	}
	_, secrets, err := e.accounts.Rotate(ctx, c.rotated.id, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.old = c.rotated.creds
	c.rotated.creds = credentials{}
	for _, sec := range secrets {
		c.rotated.creds[sec.Kind] = sec
	}
	for _, k := range account.Kinds {
		if c.rotated.creds[k].Secret == "" || c.rotated.creds[k].Secret == c.old[k].Secret {
			t.Fatalf("rotation did not replace %s", k)
		}
	}
	return c
}

// changed is s with its character at i replaced by another.
func changed(s string, i int) string {
	c := byte('X')
	if s[i] == c {
		c = 'Y'
	}
	return s[:i] + string(c) + s[i+1:]
}

// unknown is a well-formed credential of kind that no account has.
func unknown(kind account.Kind) account.Secret {
	s, _ := account.Issue(kind, "0")
	return s
}

func bodyB(key account.Secret, action string) string {
	return fmt.Sprintf(`{"key":%q,"pass":%q,"action":%q}`, key.Identifier, key.Secret, action)
}

// credentialCase is one row: a request, and either the account it must be forwarded for
// or the message of its 401.
type credentialCase struct {
	name    string
	header  map[string]string
	body    string
	path    string // reads only
	account *tenantAccount
	refusal string
}

// TestCredentialsInterfaceA: interface A needs HTTP Basic and servicekey/servicepass
// (headers, or body fields), both current credentials of one active account; any other
// request is refused 401 in A's envelope and reaches no service.
func TestCredentialsInterfaceA(t *testing.T) {
	e, s := startRoutedEdge(t)
	c := setUpAccounts(t, e, s)
	basic := func(sec account.Secret) string { return basicHeader(sec.Identifier, sec.Secret) }
	h := func(auth string, service account.Secret) map[string]string {
		m := map[string]string{"Content-Type": "application/json"}
		if auth != "" {
			m["Authorization"] = auth
		}
		if service.Identifier != "" {
			m["servicekey"] = service.Identifier
		}
		if service.Secret != "" {
			m["servicepass"] = service.Secret
		}
		return m
	}
	inBody := func(service account.Secret) string {
		return fmt.Sprintf(`{"action":"create","servicekey":%q,"servicepass":%q}`, service.Identifier, service.Secret)
	}
	live, other, sb := c.live.creds, c.other.creds, c.sandbox.creds
	wrong := func(sec account.Secret) account.Secret { sec.Secret = changed(sec.Secret, 0); return sec }
	as := func(sec account.Secret, kind account.Kind) account.Secret { sec.Kind = kind; return sec }
	const body = `{"action":"create"}`
	const invalid, required = "invalid credentials", "are required"

	for _, tc := range []credentialCase{
		{name: "valid, headers", header: h(basic(live[account.Basic]), live[account.ServiceKey]), body: body, account: &c.live},
		{name: "valid, service pair in the body", header: h(basic(live[account.Basic]), account.Secret{}), body: inBody(live[account.ServiceKey]), account: &c.live},
		{name: "valid, lower-case scheme", header: h("basic "+basic(live[account.Basic])[6:], live[account.ServiceKey]), body: body, account: &c.live},
		{name: "valid, sandbox account", header: h(basic(sb[account.Basic]), sb[account.ServiceKey]), body: body, account: &c.sandbox},
		{name: "valid, rotated account's new credentials", header: h(basic(c.rotated.creds[account.Basic]), c.rotated.creds[account.ServiceKey]), body: body, account: &c.rotated},

		{name: "wrong Basic password", header: h(basic(wrong(live[account.Basic])), live[account.ServiceKey]), body: body, refusal: invalid},
		{name: "wrong servicepass", header: h(basic(live[account.Basic]), wrong(live[account.ServiceKey])), body: body, refusal: invalid},
		{name: "wrong servicepass in the body", header: h(basic(live[account.Basic]), account.Secret{}), body: inBody(wrong(live[account.ServiceKey])), refusal: invalid},
		{name: "unknown Basic user", header: h(basic(unknown(account.Basic)), live[account.ServiceKey]), body: body, refusal: invalid},
		{name: "unknown servicekey", header: h(basic(live[account.Basic]), unknown(account.ServiceKey)), body: body, refusal: invalid},
		{name: "Basic user of the account with another account's password", header: h(basicHeader(live[account.Basic].Identifier, other[account.Basic].Secret), live[account.ServiceKey]), body: body, refusal: invalid},

		{name: "B's key/pass as Basic", header: h(basic(live[account.Key]), live[account.ServiceKey]), body: body, refusal: invalid},
		{name: "B's key/pass as servicekey/servicepass (legacy_credentials on)", header: h(basic(live[account.Basic]), as(live[account.Key], account.ServiceKey)), body: body, account: &c.live},
		{name: "service pair as Basic", header: h(basic(live[account.ServiceKey]), live[account.ServiceKey]), body: body, refusal: invalid},
		{name: "Basic pair as service pair", header: h(basic(live[account.Basic]), live[account.Basic]), body: body, refusal: invalid},
		{name: "owner token as Basic password", header: h(basicHeader(live[account.Basic].Identifier, live[account.OwnerToken].Secret), live[account.ServiceKey]), body: body, refusal: invalid},

		{name: "Basic of account 1, service pair of account 2", header: h(basic(live[account.Basic]), other[account.ServiceKey]), body: body, refusal: invalid},
		{name: "Basic of account 2, service pair of account 1", header: h(basic(other[account.Basic]), live[account.ServiceKey]), body: body, refusal: invalid},
		{name: "Basic of account 1, service pair of account 2 in the body", header: h(basic(live[account.Basic]), account.Secret{}), body: inBody(other[account.ServiceKey]), refusal: invalid},
		{name: "Basic of a live account, service pair of a sandbox account", header: h(basic(live[account.Basic]), sb[account.ServiceKey]), body: body, refusal: invalid},

		{name: "no Authorization", header: h("", live[account.ServiceKey]), body: body, refusal: "HTTP Basic credentials are required"},
		{name: "Bearer instead of Basic", header: h("Bearer "+live[account.Basic].Secret, live[account.ServiceKey]), body: body, refusal: "HTTP Basic credentials are required"},
		{name: "Basic not base64", header: h("Basic !!!", live[account.ServiceKey]), body: body, refusal: "HTTP Basic credentials are required"},
		{name: "Basic without password", header: h(basicHeader(live[account.Basic].Identifier, ""), live[account.ServiceKey]), body: body, refusal: "HTTP Basic credentials are required"},
		{name: "Basic without colon", header: h("Basic "+basic(live[account.Basic])[6:12], live[account.ServiceKey]), body: body, refusal: "HTTP Basic credentials are required"},
		{name: "no service pair", header: h(basic(live[account.Basic]), account.Secret{}), body: body, refusal: "servicekey and servicepass " + required},
		{name: "servicekey without servicepass", header: h(basic(live[account.Basic]), account.Secret{Identifier: live[account.ServiceKey].Identifier}), body: body, refusal: "servicekey and servicepass " + required},
		{name: "servicepass without servicekey", header: h(basic(live[account.Basic]), account.Secret{Secret: live[account.ServiceKey].Secret}), body: body, refusal: "servicekey and servicepass " + required},
		{name: "no credentials", header: h("", account.Secret{}), body: body, refusal: "HTTP Basic credentials are required"},

		{name: "suspended account", header: h(basic(c.revoked.creds[account.Basic]), c.revoked.creds[account.ServiceKey]), body: body, refusal: "account suspended"},
		{name: "rotated: old Basic, new service pair", header: h(basic(c.old[account.Basic]), c.rotated.creds[account.ServiceKey]), body: body, refusal: invalid},
		{name: "rotated: new Basic, old service pair", header: h(basic(c.rotated.creds[account.Basic]), c.old[account.ServiceKey]), body: body, refusal: invalid},
		{name: "rotated: both old", header: h(basic(c.old[account.Basic]), c.old[account.ServiceKey]), body: body, refusal: invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.take() // a row fails alone, not the rows after it
			a := e.send(t, "", http.MethodPost, "/api/property-rate", tc.header, tc.body)
			if tc.account == nil {
				refusedA(t, a, http.StatusUnauthorized, "unauthorized", tc.refusal)
				s.none(t)
				return
			}
			passed(t, a, gateway.PropertySvc)
			r := s.one(t)
			if r.path != "/internal/a/property-rate" || string(r.body) != tc.body {
				t.Errorf("forwarded to %s with %q", r.path, r.body)
			}
			wantSigned(t, r, *tc.account)
		})
	}
}

// TestCredentialsInterfaceB: interface B's actions need key/pass in the body (JSON or a
// form) of an active account; any other request is refused with status 2 (on HTTP 200, as
// every application outcome of interface B) and reaches no service.
func TestCredentialsInterfaceB(t *testing.T) {
	e, s := startRoutedEdge(t)
	c := setUpAccounts(t, e, s)
	live, other := c.live.creds, c.other.creds
	jsonCT := map[string]string{"Content-Type": "application/json"}
	formCT := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	form := func(key, pass string) string {
		v := url.Values{"action": {"gettax"}, "propertyId": {"7"}}
		if key != "" {
			v.Set("key", key)
		}
		if pass != "" {
			v.Set("pass", pass)
		}
		return v.Encode()
	}
	pair := func(key, pass string) string {
		return fmt.Sprintf(`{"key":%q,"pass":%q,"action":"gettax"}`, key, pass)
	}
	sec := func(s account.Secret) (string, string) { return s.Identifier, s.Secret }
	const invalid, required = "invalid credentials", "key and pass are required"

	for _, tc := range []credentialCase{
		{name: "valid, JSON", header: jsonCT, body: bodyB(live[account.Key], "gettax"), account: &c.live},
		{name: "valid, form", header: formCT, body: form(sec(live[account.Key])), account: &c.live},
		{name: "valid, JSON without Content-Type", body: bodyB(live[account.Key], "gettax"), account: &c.live},
		{name: "valid, sandbox account", header: jsonCT, body: bodyB(c.sandbox.creds[account.Key], "gettax"), account: &c.sandbox},
		{name: "valid, sandbox account, form", header: formCT, body: form(sec(c.sandbox.creds[account.Key])), account: &c.sandbox},
		{name: "valid, rotated account's new key", header: jsonCT, body: bodyB(c.rotated.creds[account.Key], "gettax"), account: &c.rotated},

		{name: "wrong pass", header: jsonCT, body: pair(live[account.Key].Identifier, changed(live[account.Key].Secret, 0)), refusal: invalid},
		{name: "wrong pass, form", header: formCT, body: form(live[account.Key].Identifier, changed(live[account.Key].Secret, 0)), refusal: invalid},
		{name: "unknown key", header: jsonCT, body: bodyB(unknown(account.Key), "gettax"), refusal: invalid},
		{name: "key of account 1, pass of account 2", header: jsonCT, body: pair(live[account.Key].Identifier, other[account.Key].Secret), refusal: invalid},
		{name: "A's Basic pair as key/pass", header: jsonCT, body: pair(sec(live[account.Basic])), refusal: invalid},
		{name: "A's service pair as key/pass", header: jsonCT, body: pair(sec(live[account.ServiceKey])), refusal: invalid},
		{name: "A's service pair as key/pass, form", header: formCT, body: form(sec(live[account.ServiceKey])), refusal: invalid},
		{name: "owner token as pass", header: jsonCT, body: pair(live[account.Key].Identifier, live[account.OwnerToken].Secret), refusal: invalid},

		{name: "key/pass as HTTP Basic", header: map[string]string{"Content-Type": "application/json",
			"Authorization": basicHeader(sec(live[account.Key]))}, body: `{"action":"gettax"}`, refusal: required},
		{name: "key/pass as headers", header: map[string]string{"Content-Type": "application/json",
			"key": live[account.Key].Identifier, "pass": live[account.Key].Secret}, body: `{"action":"gettax"}`, refusal: required},
		{name: "A's credentials in headers", header: headersA(c.live), body: `{"action":"gettax"}`, refusal: required},
		{name: "no pass", header: jsonCT, body: fmt.Sprintf(`{"key":%q,"action":"gettax"}`, live[account.Key].Identifier), refusal: required},
		{name: "no key", header: jsonCT, body: fmt.Sprintf(`{"pass":%q,"action":"gettax"}`, live[account.Key].Secret), refusal: required},
		{name: "empty key and pass", header: jsonCT, body: pair("", ""), refusal: required},
		{name: "no pass, form", header: formCT, body: form(live[account.Key].Identifier, ""), refusal: required},

		{name: "suspended account", header: jsonCT, body: bodyB(c.revoked.creds[account.Key], "gettax"), refusal: "account suspended"},
		{name: "suspended account, form", header: formCT, body: form(sec(c.revoked.creds[account.Key])), refusal: "account suspended"},
		{name: "rotated: old key", header: jsonCT, body: bodyB(c.old[account.Key], "gettax"), refusal: invalid},
		{name: "rotated: old key id, new pass", header: jsonCT, body: pair(c.old[account.Key].Identifier, c.rotated.creds[account.Key].Secret), refusal: invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.take() // a row fails alone, not the rows after it
			a := e.send(t, "", http.MethodPost, "/vros/external-booking", tc.header, tc.body)
			if tc.account == nil {
				refusedB(t, a, http.StatusOK, httpapi.StatusUnauthorized, tc.refusal)
				s.none(t)
				return
			}
			passed(t, a, gateway.CatalogSvc)
			r := s.one(t)
			if r.path != "/internal/b/gettax" {
				t.Errorf("forwarded to %s", r.path)
			}
			wantSigned(t, r, *tc.account)
		})
	}
}

// TestCredentialsOwnerToken: the reads need an active account's current owner token in
// the path; any other is refused with status 2 (on HTTP 200) and reaches no service.
func TestCredentialsOwnerToken(t *testing.T) {
	e, s := startRoutedEdge(t)
	c := setUpAccounts(t, e, s)
	live := c.live.creds
	at := func(token string) string {
		return "/vros/api/property-detail/owner_token/" + url.PathEscape(token) + "/property/7"
	}
	const invalid = "invalid credentials"

	for _, tc := range []credentialCase{
		{name: "valid", path: at(live[account.OwnerToken].Secret), account: &c.live},
		{name: "valid, sandbox account", path: at(c.sandbox.creds[account.OwnerToken].Secret), account: &c.sandbox},
		{name: "valid, rotated account's new token", path: at(c.rotated.creds[account.OwnerToken].Secret), account: &c.rotated},

		{name: "wrong token", path: at(unknown(account.OwnerToken).Secret), refusal: invalid},
		{name: "token with one character changed", path: at(changed(live[account.OwnerToken].Secret, 3)), refusal: invalid},
		{name: "B's pass as token", path: at(live[account.Key].Secret), refusal: invalid},
		{name: "B's key as token", path: at(live[account.Key].Identifier), refusal: invalid},
		{name: "Basic password as token", path: at(live[account.Basic].Secret), refusal: invalid},
		{name: "servicepass as token", path: at(live[account.ServiceKey].Secret), refusal: invalid},
		{name: "the token's hash as token", path: at(account.Hash(live[account.OwnerToken].Secret)), refusal: invalid},
		{name: "token over 256 characters", path: at(live[account.OwnerToken].Secret + strings.Repeat("0", 260)), refusal: invalid},
		{name: "B's key/pass in headers, a made-up token", path: at("ot_" + live[account.Key].Secret), header: map[string]string{"key": live[account.Key].Identifier, "pass": live[account.Key].Secret}, refusal: invalid},

		{name: "suspended account", path: at(c.revoked.creds[account.OwnerToken].Secret), refusal: "account suspended"},
		{name: "rotated: old token", path: at(c.old[account.OwnerToken].Secret), refusal: invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.take() // a row fails alone, not the rows after it
			a := e.send(t, "", http.MethodGet, tc.path, tc.header, "")
			if tc.account == nil {
				refusedB(t, a, http.StatusOK, httpapi.StatusUnauthorized, tc.refusal)
				s.none(t)
				return
			}
			passed(t, a, gateway.CatalogSvc)
			r := s.one(t)
			if r.path != "/internal/read/property-detail" || string(r.body) != `{"property_id":"7"}` {
				t.Errorf("forwarded to %s with %s", r.path, r.body)
			}
			wantSigned(t, r, *tc.account)
		})
	}
}
