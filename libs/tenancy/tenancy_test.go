package tenancy

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

func TestVerify(t *testing.T) {
	s := NewSigner("0123456789abcdef0123")
	now := time.Unix(1_800_000_000, 0)
	ts, sig := s.Sign("acc1", "POST", "/internal/a/property", now)
	cases := []struct {
		name                      string
		account, ts, method, path string
		sig                       string
		at                        time.Time
		want                      bool
	}{
		{"valid", "acc1", ts, "POST", "/internal/a/property", sig, now, true},
		{"valid within skew", "acc1", ts, "POST", "/internal/a/property", sig, now.Add(4 * time.Minute), true},
		{"too old", "acc1", ts, "POST", "/internal/a/property", sig, now.Add(6 * time.Minute), false},
		{"from the future", "acc1", ts, "POST", "/internal/a/property", sig, now.Add(-6 * time.Minute), false},
		{"other account", "acc2", ts, "POST", "/internal/a/property", sig, now, false},
		{"other path", "acc1", ts, "POST", "/internal/a/property-rate", sig, now, false},
		{"other method", "acc1", ts, "GET", "/internal/a/property", sig, now, false},
		{"missing signature", "acc1", ts, "POST", "/internal/a/property", "", now, false},
		{"missing account", "", ts, "POST", "/internal/a/property", sig, now, false},
		{"other key", "acc1", ts, "POST", "/internal/a/property", NewSigner("another-key-0123456").mac(Tenant{AccountID: "acc1"}, ts, "POST", "/internal/a/property"), now, false},
	}
	for _, c := range cases {
		if got := s.Verify(c.account, c.ts, c.method, c.path, c.sig, c.at); got != c.want {
			t.Errorf("%s: Verify = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestModeIsSigned: a sandbox account's signature holds only with the sandbox header, and a
// live account's only without it: the mode cannot be added or dropped on the way.
func TestModeIsSigned(t *testing.T) {
	s := NewSigner("0123456789abcdef0123")
	now := time.Unix(1_800_000_000, 0)
	for _, signed := range []bool{false, true} {
		h := map[string]string{}
		s.SetHeaders(func(k, v string) { h[k] = v }, Tenant{AccountID: "acc1", Sandbox: signed}, "POST", "/internal/b/create", now)
		if _, has := h[HeaderMode]; has != signed {
			t.Errorf("signed sandbox=%v: headers %v", signed, h)
		}
		for _, claimed := range []bool{false, true} {
			got := s.VerifyTenant(Tenant{AccountID: h[HeaderAccount], Sandbox: claimed}, h[HeaderTime], "POST", "/internal/b/create", h[HeaderSignature], now)
			if got != (claimed == signed) {
				t.Errorf("signed sandbox=%v, presented sandbox=%v: verified %v", signed, claimed, got)
			}
		}
	}
	// A live account's signature is the one earlier versions made (rolling upgrades).
	if ts, sig := s.Sign("acc1", "POST", "/x", now); !s.VerifyTenant(Tenant{AccountID: "acc1"}, ts, "POST", "/x", sig, now) {
		t.Error("Sign and VerifyTenant disagree on a live account")
	}
}

// TestMaxPropertiesIsSigned: the plan's limit travels only under the signature: it cannot be
// added, dropped or changed on the way, and an account without one signs as before.
func TestMaxPropertiesIsSigned(t *testing.T) {
	s := NewSigner("0123456789abcdef0123")
	now := time.Unix(1_800_000_000, 0)
	for _, signed := range []int{0, 5} {
		h := map[string]string{}
		s.SetHeaders(func(k, v string) { h[k] = v }, Tenant{AccountID: "acc1", MaxProperties: signed}, "POST", "/internal/a/property", now)
		if _, has := h[HeaderMaxProperties]; has != (signed > 0) {
			t.Errorf("signed max_properties=%d: headers %v", signed, h)
		}
		for _, claimed := range []int{0, 5, 6} {
			got := s.VerifyTenant(Tenant{AccountID: "acc1", MaxProperties: claimed}, h[HeaderTime], "POST", "/internal/a/property", h[HeaderSignature], now)
			if got != (claimed == signed) {
				t.Errorf("signed max_properties=%d, presented %d: verified %v", signed, claimed, got)
			}
		}
	}
}

// TestRequireReadsMaxProperties: Require hands the signed limit to the handler; a limit
// changed, added, dropped or written otherwise than the signer writes it is refused before
// the handler runs.
func TestRequireReadsMaxProperties(t *testing.T) {
	s := NewSigner("0123456789abcdef0123")
	app := fiber.New()
	var got []Tenant
	app.Post("/internal/a/property", s.Require(), func(c *fiber.Ctx) error {
		got = append(got, From(c))
		return c.SendStatus(http.StatusNoContent)
	})
	send := func(signed int, edit func(h map[string]string)) int {
		t.Helper()
		h := map[string]string{}
		s.SetHeaders(func(k, v string) { h[k] = v }, Tenant{AccountID: "acc1", MaxProperties: signed}, "POST", "/internal/a/property", time.Now())
		edit(h)
		req := httptest.NewRequest(http.MethodPost, "/internal/a/property", nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	if code := send(5, func(map[string]string) {}); code != http.StatusNoContent || len(got) != 1 || got[0].MaxProperties != 5 {
		t.Fatalf("a signed limit of 5: HTTP %d, tenants %+v", code, got)
	}
	for name, c := range map[string]struct {
		signed int
		edit   func(h map[string]string)
	}{
		"changed":     {5, func(h map[string]string) { h[HeaderMaxProperties] = "6" }},
		"dropped":     {5, func(h map[string]string) { delete(h, HeaderMaxProperties) }},
		"added":       {0, func(h map[string]string) { h[HeaderMaxProperties] = "5" }},
		"leading 0":   {5, func(h map[string]string) { h[HeaderMaxProperties] = "05" }},
		"not integer": {5, func(h map[string]string) { h[HeaderMaxProperties] = "5.0" }},
		"negative":    {5, func(h map[string]string) { h[HeaderMaxProperties] = "-5" }},
	} {
		if code := send(c.signed, c.edit); code == http.StatusNoContent {
			t.Errorf("%s: HTTP %d", name, code)
		}
	}
	if len(got) != 1 {
		t.Fatalf("the handler ran for refused requests: %+v", got)
	}
}
