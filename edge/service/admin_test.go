package service

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/vros/vros/libs/config"
)

// TestEdgeURLIsTheConfiguredOne: edge_url is VROS_EDGE_PUBLIC_URL whatever Host the admin
// request carries.
func TestEdgeURLIsTheConfiguredOne(t *testing.T) {
	e := start(t, Config{PublicURL: "https://api.example.com/"})
	spoof := []string{"Host", "evil.example", "X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "http"}
	created := e.admin(t, http.MethodPost, "/accounts", `{"name":"Owner"}`, spoof...)
	if created.code != http.StatusCreated {
		t.Fatalf("create: HTTP %d: %s", created.code, created.body)
	}
	acc := decodeIssued(t, created)
	if acc.EdgeURL != "https://api.example.com" {
		t.Errorf("created: edge_url %q, want https://api.example.com", acc.EdgeURL)
	}
	rotated := e.admin(t, http.MethodPost, "/accounts/"+acc.AccountID+"/rotate", `{"credentials":["key"]}`, spoof...)
	if rotated.code != http.StatusOK {
		t.Fatalf("rotate: HTTP %d: %s", rotated.code, rotated.body)
	}
	if got := decodeIssued(t, rotated).EdgeURL; got != "https://api.example.com" {
		t.Errorf("rotated: edge_url %q, want https://api.example.com", got)
	}
}

// TestNoPublicURLNoCredentials: without VROS_EDGE_PUBLIC_URL (outside development) the admin
// API issues no credentials, says why in its envelope, and changes nothing.
func TestNoPublicURLNoCredentials(t *testing.T) {
	configured := start(t, Config{PublicURL: "https://api.example.com"})
	acc := decodeIssued(t, configured.admin(t, http.MethodPost, "/accounts", `{}`))
	bare := start(t, Config{}) // same store, no public URL

	for _, r := range []struct{ name, path string }{
		{"create", "/accounts"},
		{"rotate", "/accounts/" + acc.AccountID + "/rotate"},
	} {
		t.Run(r.name, func(t *testing.T) {
			a := bare.admin(t, http.MethodPost, r.path, `{}`)
			if a.code != http.StatusServiceUnavailable {
				t.Fatalf("HTTP %d, want 503: %s", a.code, a.body)
			}
			if _, msg := aError(t, a); !strings.Contains(msg, "VROS_EDGE_PUBLIC_URL") {
				t.Errorf("message %q does not name VROS_EDGE_PUBLIC_URL", msg)
			}
		})
	}
	// The refused rotation changed nothing: the first credentials still work.
	if a := bare.send(t, http.MethodPost, "/vros/external-booking", nil,
		fmt.Sprintf(`{"key":%q,"pass":%q,"action":"gettax"}`, acc.Key, acc.Pass)); a.code != http.StatusServiceUnavailable {
		t.Errorf("credentials refused after a refused rotation: %s", a.body)
	}
	if a := bare.admin(t, http.MethodGet, "/accounts/"+acc.AccountID, ""); a.code != http.StatusOK {
		t.Errorf("reads still work without a public URL: HTTP %d", a.code)
	}
}

// TestDevelopmentPublicURL: the dev stack may leave the public URL empty: edge_url is then
// the address edge listens on, not the request's Host.
func TestDevelopmentPublicURL(t *testing.T) {
	e := start(t, Config{Development: true})
	a := e.admin(t, http.MethodPost, "/accounts", `{}`, "Host", "evil.example")
	if a.code != http.StatusCreated {
		t.Fatalf("HTTP %d: %s", a.code, a.body)
	}
	if got := decodeIssued(t, a).EdgeURL; got != e.url {
		t.Errorf("edge_url %q, want the listen address %q", got, e.url)
	}
}

func TestPublicURLValidated(t *testing.T) {
	for _, u := range []string{"api.example.com", "ftp://api.example.com", "https://", "https://api.example.com/?x=1", "https://user@api.example.com"} {
		cfg := Config{Common: config.Common{InternalKeys: config.InternalKeys{Edge: "test-hmac-key-0123456789"}}, PublicURL: u}
		if err := cfg.validate(); err == nil || !strings.Contains(err.Error(), "VROS_EDGE_PUBLIC_URL") {
			t.Errorf("%q: %v, want an error naming VROS_EDGE_PUBLIC_URL", u, err)
		}
	}
	cfg := Config{Common: config.Common{InternalKeys: config.InternalKeys{Edge: "test-hmac-key-0123456789"}}, TrustedProxies: []string{"10.0.0.0/8", "ingress"}}
	if err := cfg.validate(); err == nil || !strings.Contains(err.Error(), "VROS_EDGE_TRUSTED_PROXIES") {
		t.Errorf("trusted proxy %q: %v, want an error naming VROS_EDGE_TRUSTED_PROXIES", "ingress", err)
	}
}

// TestEngineLimitsConfig: the booking API's limits default to what docs/limits.md says; a
// negative one, or checkouts without a period, is refused at start naming the variable.
func TestEngineLimitsConfig(t *testing.T) {
	cfg, err := env.ParseAsWithOptions[Config](env.Options{Environment: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.EngineRateRPS != 50 || cfg.EngineRateBurst != 200 || cfg.EngineAddressRPS != 5 || cfg.EngineAddressBurst != 60 ||
		cfg.EngineAddressCheckouts != 6 || cfg.EngineCheckoutPeriod != time.Hour {
		t.Errorf("defaults %+v", cfg)
	}
	keys := config.Common{InternalKeys: config.InternalKeys{Edge: "test-hmac-key-0123456789"}}
	for name, c := range map[string]Config{
		"VROS_EDGE_ENGINE_CHECKOUT_PERIOD": {Common: keys, EngineAddressCheckouts: 6},
		"VROS_EDGE_ENGINE_ADDRESS_RPS":     {Common: keys, EngineAddressRPS: -1},
		"VROS_EDGE_ENGINE_RATE_BURST":      {Common: keys, EngineRateBurst: -5},
	} {
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := (&Config{Common: keys}).validate(); err != nil {
		t.Errorf("every limit off: %v", err)
	}
}

// TestAdminRotationRace: through the admin API, 10 clients rotate (all or some kinds),
// revoke and reinstate one account at once while callers use every credential issued so far.
// Afterwards exactly the credentials the account lists work on every interface, and every
// earlier one is refused.
func TestAdminRotationRace(t *testing.T) {
	e := start(t, Config{PublicURL: "https://api.example.com", CacheTTL: 30 * time.Second})
	created := e.admin(t, http.MethodPost, "/accounts", `{"name":"Race"}`)
	if created.code != http.StatusCreated {
		t.Fatalf("HTTP %d: %s", created.code, created.body)
	}
	first := decodeIssued(t, created)
	id := first.AccountID

	var mu sync.Mutex
	all := []issued{first}
	add := func(c issued) { mu.Lock(); all = append(all, c); mu.Unlock() }
	snapshot := func() []issued { mu.Lock(); defer mu.Unlock(); return append([]issued(nil), all...) }

	var stop atomic.Bool
	var readers sync.WaitGroup
	for range 3 {
		readers.Go(func() {
			for !stop.Load() {
				s := snapshot()
				use(e, s[rand.IntN(len(s))])
			}
		})
	}
	bodies := []string{``, `{"credentials":["key"]}`, `{"credentials":["basic","owner_token"]}`, `{"credentials":["service","key"]}`}
	var writers sync.WaitGroup
	for w := range 10 {
		writers.Go(func() {
			for round := range 4 {
				var a answer
				switch (w + round) % 4 {
				case 0, 1:
					a = e.admin(t, http.MethodPost, "/accounts/"+id+"/rotate", bodies[(w+round)%len(bodies)])
					if a.code == http.StatusOK {
						add(decodeIssued(t, a))
					}
				case 2:
					a = e.admin(t, http.MethodPost, "/accounts/"+id+"/revoke", ``)
				case 3:
					a = e.admin(t, http.MethodPost, "/accounts/"+id+"/reinstate", ``)
				}
				if a.code != http.StatusOK {
					t.Errorf("HTTP %d: %s", a.code, a.body)
				}
			}
		})
	}
	writers.Wait()
	stop.Store(true)
	readers.Wait()
	if a := e.admin(t, http.MethodPost, "/accounts/"+id+"/reinstate", ``); a.code != http.StatusOK {
		t.Fatalf("reinstate: HTTP %d", a.code)
	}
	got := e.admin(t, http.MethodGet, "/accounts/"+id, ``)
	var view struct {
		Data struct {
			Identifiers map[string]string `json:"identifiers"`
		} `json:"data"`
	}
	if err := json.Unmarshal(got.body, &view); err != nil {
		t.Fatal(err)
	}
	lists := view.Data.Identifiers
	issuedNow := snapshot()
	var basic, service issued // the listed pairs, to try each other pair against
	for _, c := range issuedNow {
		if c.BasicUser != "" && c.BasicUser == lists["basic"] {
			basic = c
		}
		if c.ServiceKey != "" && c.ServiceKey == lists["service"] {
			service = c
		}
	}
	if basic.BasicUser == "" || service.ServiceKey == "" {
		t.Fatalf("the account lists credentials never issued: %v", lists)
	}

	working := map[string]int{}
	stale := 0
	check := func(kind string, listed, ok bool) {
		switch {
		case listed && !ok:
			t.Errorf("%s listed but refused", kind)
		case listed:
			working[kind]++
		case ok:
			stale++
		}
	}
	for _, c := range issuedNow {
		if c.Key != "" {
			check("key", c.Key == lists["key"], e.accepts(http.MethodPost, "/vros/external-booking", nil,
				fmt.Sprintf(`{"key":%q,"pass":%q,"action":"gettax"}`, c.Key, c.Pass)))
		}
		if c.BasicUser != "" {
			check("basic", c.BasicUser == lists["basic"], e.acceptsA(c.BasicUser, c.BasicPassword, service.ServiceKey, service.ServicePass))
		}
		if c.ServiceKey != "" {
			check("service", c.ServiceKey == lists["service"], e.acceptsA(basic.BasicUser, basic.BasicPassword, c.ServiceKey, c.ServicePass))
		}
		if c.OwnerToken != "" {
			// The account shows no owner token: exactly one of those issued may work.
			if e.accepts(http.MethodGet, "/vros/api/default-config/owner_token/"+c.OwnerToken, nil, "") {
				working["owner_token"]++
			}
		}
	}
	for _, k := range []string{"basic", "service", "key", "owner_token"} {
		if working[k] != 1 {
			t.Errorf("%s: %d working credentials, want exactly the listed one", k, working[k])
		}
	}
	if stale > 0 {
		t.Errorf("%d issued credentials authenticate though the account no longer lists them", stale)
	}
}

// accepts reports whether edge authenticated the request: no service is deployed, so an
// accepted caller gets 503 (a refused one 401 on interface A, status 2 on HTTP 200 on B).
func (e *testEdge) accepts(method, path string, header map[string]string, body string) bool {
	req, err := http.NewRequestWithContext(context.Background(), method, e.url+path, strings.NewReader(body))
	if err != nil {
		return false
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusServiceUnavailable
}

// acceptsA reports whether interface A accepts the two pairs.
func (e *testEdge) acceptsA(user, password, key, pass string) bool {
	return e.accepts(http.MethodPost, "/api/property", map[string]string{
		"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password)),
		"servicekey":    key, "servicepass": pass, "Content-Type": "application/json",
	}, `{"action":"list"}`)
}

// use authenticates with the key and the owner token c carries (what callers do while the
// rotations run).
func use(e *testEdge, c issued) {
	if c.Key != "" {
		e.accepts(http.MethodPost, "/vros/external-booking", nil, fmt.Sprintf(`{"key":%q,"pass":%q,"action":"gettax"}`, c.Key, c.Pass))
	}
	if c.OwnerToken != "" {
		e.accepts(http.MethodGet, "/vros/api/default-config/owner_token/"+c.OwnerToken, nil, "")
	}
}

// TestAdminLegacySetting: POST /admin/v1/accounts/{id}/settings switches the account's
// legacy_credentials (on by default): on, interface A takes the interface B key/pass as its
// service pair (as the headers 365villaskey/365villaspass, raw or base64); off, only the
// dedicated service pair. A bad body is refused naming the field and changes nothing.
func TestAdminLegacySetting(t *testing.T) {
	e := start(t, Config{PublicURL: "https://api.example.com"})
	acc := decodeIssued(t, e.admin(t, http.MethodPost, "/accounts", `{"name":"Legacy"}`))
	legacy := func(a answer) bool {
		t.Helper()
		var out struct {
			Data struct {
				LegacyCredentials *bool `json:"legacy_credentials"`
			} `json:"data"`
		}
		if a.code != http.StatusOK || json.Unmarshal(a.body, &out) != nil || out.Data.LegacyCredentials == nil {
			t.Fatalf("want the account with legacy_credentials, got HTTP %d: %s", a.code, a.body)
		}
		return *out.Data.LegacyCredentials
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	villas := func(key, pass string) bool {
		return e.accepts(http.MethodPost, "/api/property", map[string]string{
			"Authorization": "Basic " + b64(acc.BasicUser+":"+acc.BasicPassword),
			"365villaskey":  b64(key), "365villaspass": b64(pass), "Content-Type": "application/json",
		}, `{"action":"list"}`)
	}
	if !legacy(e.admin(t, http.MethodGet, "/accounts/"+acc.AccountID, "")) {
		t.Fatal("a new account has legacy_credentials off")
	}
	if !villas(acc.Key, acc.Pass) || !villas(acc.ServiceKey, acc.ServicePass) {
		t.Fatal("legacy on: the B pair or the service pair is refused")
	}
	for _, bad := range []struct{ body, msg string }{
		{`{}`, "legacy_credentials is required"},
		{`{"legacy_credentials":"maybe"}`, "legacy_credentials must be a boolean"},
		{`{"legacy_credentials":false,"sandbox":true}`, "sandbox is not an account setting"},
		{`[1]`, "body must be a JSON object"},
	} {
		a := e.admin(t, http.MethodPost, "/accounts/"+acc.AccountID+"/settings", bad.body)
		if _, msg := aError(t, a); a.code != http.StatusBadRequest || !strings.Contains(msg, bad.msg) {
			t.Errorf("%s: HTTP %d %q, want 400 naming %q", bad.body, a.code, msg, bad.msg)
		}
	}
	if !villas(acc.Key, acc.Pass) {
		t.Fatal("a refused settings change switched legacy_credentials off")
	}
	if legacy(e.admin(t, http.MethodPost, "/accounts/"+acc.AccountID+"/settings", `{"legacy_credentials":false}`)) {
		t.Fatal("switched off, the account still says on")
	}
	if villas(acc.Key, acc.Pass) {
		t.Error("legacy off: the B pair is still accepted")
	}
	if !villas(acc.ServiceKey, acc.ServicePass) {
		t.Error("legacy off: the service pair is refused")
	}
	if legacy(e.admin(t, http.MethodGet, "/accounts/"+acc.AccountID, "")) {
		t.Error("GET shows legacy_credentials on after switching it off")
	}
	if !legacy(e.admin(t, http.MethodPost, "/accounts/"+acc.AccountID+"/settings", `{"legacy_credentials":"1"}`)) || !villas(acc.Key, acc.Pass) {
		t.Error("switched on again: the B pair is refused")
	}
	if a := e.admin(t, http.MethodPost, "/accounts/999999999/settings", `{"legacy_credentials":true}`); a.code != http.StatusNotFound {
		t.Errorf("unknown account: HTTP %d: %s", a.code, a.body)
	}
}
