package service

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/admin"
)

// replicaPoll is how often the replicas of these tests ask for account changes (1 s
// deployed): shorter, so that the tests wait less for it.
const replicaPoll = 200 * time.Millisecond

// replicaCfg is an edge replica as deployed but for its poll: an hour-long credential cache,
// so that only the poll for account changes can tell it of another replica's changes.
func replicaCfg() Config {
	return Config{PublicURL: "https://api.example.com", CacheTTL: time.Hour, AccountPoll: replicaPoll}
}

// refusal is how edge refused c's credential of kind (ok false when it accepted it): the
// interface A 401 envelope, or interface B's status 2 on HTTP 200.
func (e *testEdge) refusal(t *testing.T, kind string, c issued) (msg string, refused bool) {
	t.Helper()
	var a answer
	switch kind {
	case "basic+service":
		a = e.send(t, http.MethodPost, "/api/property", map[string]string{
			"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(c.BasicUser+":"+c.BasicPassword)),
			"servicekey":    c.ServiceKey, "servicepass": c.ServicePass, "Content-Type": "application/json",
		}, `{"action":"list"}`)
	case "365villas":
		a = e.send(t, http.MethodPost, "/api/property", map[string]string{
			"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(c.BasicUser+":"+c.BasicPassword)),
			"365villaskey":  c.Key, "365villaspass": c.Pass, "Content-Type": "application/json",
		}, `{"action":"list"}`)
	case "key":
		a = e.send(t, http.MethodPost, "/vros/external-booking", nil, fmt.Sprintf(`{"key":%q,"pass":%q,"action":"gettax"}`, c.Key, c.Pass))
	case "owner_token":
		a = e.send(t, http.MethodGet, "/vros/api/default-config/owner_token/"+c.OwnerToken, nil, "")
	}
	switch {
	case a.code == http.StatusServiceUnavailable: // accepted: no service behind this edge
		return "", false
	case a.code == http.StatusOK && strings.Contains(string(a.body), `"status":0`): // accepted: a service answered
		return "", false
	case a.code == http.StatusUnauthorized:
		_, msg := aError(t, a)
		return msg, true
	case a.code == http.StatusOK:
		status, msg := bStatus(t, a)
		if status != 2 {
			t.Fatalf("%s: interface B status %d, want 2: %s", kind, status, a.body)
		}
		return msg, true
	}
	t.Fatalf("%s: HTTP %d: %s", kind, a.code, a.body)
	return "", false
}

var credentialKinds = []string{"basic+service", "365villas", "key", "owner_token"}

// suspendedMessage reports whether msg tells the caller the account is suspended (the
// gateway words it; its former word was "revoked").
func suspendedMessage(msg string) bool {
	return strings.Contains(msg, "suspended") || strings.Contains(msg, "revoked")
}

// TestSuspensionOnEveryReplicaAtOnce: an account suspended through replica A is refused on
// replica B, for every credential kind, within B's poll (and slack), although B cached
// every credential for an hour; reinstated through A, B accepts them again as fast.
func TestSuspensionOnEveryReplicaAtOnce(t *testing.T) {
	a, b := start(t, replicaCfg()), start(t, replicaCfg())
	acc := decodeIssued(t, a.admin(t, http.MethodPost, "/accounts", `{"name":"Two replicas"}`))
	for _, k := range credentialKinds { // B caches them all
		if msg, refused := b.refusal(t, k, acc); refused {
			t.Fatalf("%s refused on a new account: %s", k, msg)
		}
	}
	for _, path := range []string{"/suspend", "/revoke"} { // /revoke is /suspend's alias
		t.Run(path, func(t *testing.T) {
			if r := a.admin(t, http.MethodPost, "/accounts/"+acc.AccountID+path, ``); r.code != http.StatusOK || !strings.Contains(string(r.body), `"status":"suspended"`) {
				t.Fatalf("suspend: HTTP %d: %s", r.code, r.body)
			}
			took := waitAll(t, b, acc, true)
			t.Logf("replica B refuses every kind %v after the suspension through A", took)
			if r := a.admin(t, http.MethodPost, "/accounts/"+acc.AccountID+"/reinstate", ``); r.code != http.StatusOK {
				t.Fatalf("reinstate: HTTP %d: %s", r.code, r.body)
			}
			took = waitAll(t, b, acc, false)
			t.Logf("replica B accepts every kind %v after the reinstatement through A", took)
		})
	}
	// The account's data and credentials were kept: A accepts them too.
	for _, k := range credentialKinds {
		if msg, refused := a.refusal(t, k, acc); refused {
			t.Errorf("%s refused on A after reinstatement: %s", k, msg)
		}
	}
}

// waitAll waits until e refuses (suspended) or accepts every kind of c's credentials, for
// at most 2 s: the poll interval (replicaPoll) and slack for a loaded machine.
func waitAll(t *testing.T, e *testEdge, c issued, suspended bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		done := true
		for _, k := range credentialKinds {
			msg, refused := e.refusal(t, k, c)
			if refused != suspended {
				done = false
				break
			}
			if refused && !suspendedMessage(msg) {
				t.Fatalf("%s refused with %q, want a message saying the account is suspended", k, msg)
			}
		}
		if done {
			return time.Since(start)
		}
		if time.Since(start) > 2*time.Second {
			t.Fatalf("replica B still answers as before %v after the change (suspended=%v)", time.Since(start), suspended)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAdminPlan: GET/POST /admin/v1/accounts/{id}/plan; every bound refused naming the field
// with nothing changed; the plan shows on GET /accounts/{id}.
func TestAdminPlan(t *testing.T) {
	e := start(t, Config{PublicURL: "https://api.example.com"})
	acc := decodeIssued(t, e.admin(t, http.MethodPost, "/accounts", `{"name":"Plans"}`))
	path := "/accounts/" + acc.AccountID + "/plan"
	plan := func(a answer) map[string]any {
		t.Helper()
		var out struct {
			Data map[string]any `json:"data"`
		}
		if a.code != http.StatusOK || json.Unmarshal(a.body, &out) != nil {
			t.Fatalf("HTTP %d: %s", a.code, a.body)
		}
		return out.Data
	}
	zero := `{"rate_rps":0,"rate_burst":0,"max_concurrent":0,"body_limit":0,"max_properties":0}`
	if got := mustJSONText(plan(e.admin(t, http.MethodGet, path, ""))); got != zero {
		t.Fatalf("a new account's plan %s, want %s", got, zero)
	}
	set := `{"rate_rps":12.5,"rate_burst":40,"max_concurrent":3,"body_limit":1024,"max_properties":100}`
	if got := mustJSONText(plan(e.admin(t, http.MethodPost, path, set))); got != set {
		t.Fatalf("set: %s, want %s", got, set)
	}
	for _, bad := range []struct{ body, field, msg string }{
		{`{"rate_rps":-1}`, "rate_rps", "must be"},
		{`{"rate_rps":100000.5}`, "rate_rps", "100000"},
		{`{"rate_rps":"fast"}`, "rate_rps", "number"},
		{`{"rate_burst":-1}`, "rate_burst", "must be"},
		{`{"rate_burst":1000001}`, "rate_burst", "1000000"},
		{`{"rate_burst":1.5}`, "rate_burst", "whole number"},
		{`{"max_concurrent":10001}`, "max_concurrent", "10000"},
		{`{"max_concurrent":-3}`, "max_concurrent", "must be"},
		{`{"body_limit":1023}`, "body_limit", "0 (edge's default) or between 1024 and 26214400"},
		{`{"body_limit":26214401}`, "body_limit", "26214400"},
		{`{"max_properties":1000001}`, "max_properties", "1000000"},
		{`{"max_properties":-1}`, "max_properties", "must be"},
		{`{"max_bookings":5}`, "max_bookings", "is not a plan field"},
		{`{"rate_burst":10,"body_limit":5}`, "body_limit", "between 1024"},
		{`[1]`, "body", "JSON object"},
		{``, "body", ""},
	} {
		a := e.admin(t, http.MethodPost, path, bad.body)
		if a.code != http.StatusBadRequest || !strings.Contains(string(a.body), `"field":"`+bad.field+`"`) || !strings.Contains(string(a.body), bad.msg) {
			t.Errorf("%s: HTTP %d %s, want 400 naming %s (%q)", bad.body, a.code, a.body, bad.field, bad.msg)
		}
	}
	if got := mustJSONText(plan(e.admin(t, http.MethodGet, path, ""))); got != set {
		t.Fatalf("after refused changes the plan is %s, want %s unchanged", got, set)
	}
	// A partial change keeps the other fields; 0 returns one to edge's default.
	want := `{"rate_rps":12.5,"rate_burst":40,"max_concurrent":0,"body_limit":26214400,"max_properties":100}`
	if got := mustJSONText(plan(e.admin(t, http.MethodPost, path, `{"max_concurrent":0,"body_limit":26214400}`))); got != want {
		t.Fatalf("partial: %s, want %s", got, want)
	}
	var view struct {
		Data struct {
			Plan map[string]any `json:"plan"`
		} `json:"data"`
	}
	if err := json.Unmarshal(e.admin(t, http.MethodGet, "/accounts/"+acc.AccountID, "").body, &view); err != nil || mustJSONText(view.Data.Plan) != want {
		t.Fatalf("GET /accounts/{id} plan %v, want %s", view.Data.Plan, want)
	}
	// Concurrent changes of different fields all hold: five clients each set their own field
	// 20 times; at the end every field has its client's last value.
	var wg sync.WaitGroup
	for _, f := range []string{"rate_rps", "rate_burst", "max_concurrent", "body_limit", "max_properties"} {
		wg.Go(func() {
			for i := 1; i <= 20; i++ {
				if a := e.admin(t, http.MethodPost, path, fmt.Sprintf(`{%q:%d}`, f, 1024+i)); a.code != http.StatusOK {
					t.Errorf("%s: HTTP %d %s", f, a.code, a.body)
				}
			}
		})
	}
	wg.Wait()
	all := `{"rate_rps":1044,"rate_burst":1044,"max_concurrent":1044,"body_limit":1044,"max_properties":1044}`
	if got := mustJSONText(plan(e.admin(t, http.MethodGet, path, ""))); got != all {
		t.Errorf("after concurrent changes of different fields: %s, want %s", got, all)
	}
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		if a := e.admin(t, m, "/accounts/999999999/plan", `{"rate_rps":1}`); a.code != http.StatusNotFound {
			t.Errorf("%s unknown account: HTTP %d", m, a.code)
		}
	}
}

func mustJSONText(v any) string {
	b, _ := json.Marshal(v)
	// Keys in the plan's own order, whatever order the map gives.
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return string(b)
	}
	var parts []string
	for _, k := range []string{"rate_rps", "rate_burst", "max_concurrent", "body_limit", "max_properties"} {
		vb, _ := json.Marshal(m[k])
		parts = append(parts, fmt.Sprintf("%q:%s", k, vb))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// TestAdminSearch: q finds an account by exact id or by any part of its name in any case;
// status filters; after/limit page in a stable id order; bad parameters are refused.
func TestAdminSearch(t *testing.T) {
	e := start(t, Config{PublicURL: "https://api.example.com"})
	tag := fmt.Sprintf("Srch%d", time.Now().UnixNano())
	var ids []string
	for i, name := range []string{tag + " Alpha Villas", tag + " beta villas", tag + " GAMMA"} {
		c := decodeIssued(t, e.admin(t, http.MethodPost, "/accounts", fmt.Sprintf(`{"name":%q}`, name)))
		ids = append(ids, c.AccountID)
		if i == 1 {
			if a := e.admin(t, http.MethodPost, "/accounts/"+c.AccountID+"/suspend", ""); a.code != http.StatusOK {
				t.Fatal(a.code)
			}
		}
	}
	list := func(query string) []string {
		t.Helper()
		a := e.admin(t, http.MethodGet, "/accounts?"+query, "")
		var out struct {
			Data struct {
				Accounts []struct {
					AccountID string `json:"account_id"`
				} `json:"accounts"`
			} `json:"data"`
		}
		if a.code != http.StatusOK || json.Unmarshal(a.body, &out) != nil {
			t.Fatalf("%s: HTTP %d %s", query, a.code, a.body)
		}
		var got []string
		for _, acc := range out.Data.Accounts {
			got = append(got, acc.AccountID)
		}
		return got
	}
	q := url.QueryEscape
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"q=" + q(tag), ids},
		{"q=" + q(strings.ToUpper(tag)+" alpha"), ids[:1]},
		{"q=" + q(tag+" BETA VILLAS"), ids[1:2]},
		{"q=" + q(tag) + "&status=suspended", ids[1:2]},
		{"q=" + q(tag) + "&status=revoked", ids[1:2]},
		{"q=" + q(tag) + "&status=active", []string{ids[0], ids[2]}},
		{"q=" + ids[2], ids[2:]},
		{"q=" + q(tag) + "&limit=2", ids[:2]},
		{"q=" + q(tag) + "&limit=2&after=" + ids[1], ids[2:]},
		{"q=" + q(tag+" (a"), nil}, // regular-expression characters are literal
		{"q=" + q(".*"), nil},
	} {
		if got := list(c.query); strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: %v, want %v", c.query, got, c.want)
		}
	}
	for _, bad := range []struct{ query, field string }{
		{"status=deleted", "status"}, {"limit=0", "limit"}, {"limit=501", "limit"}, {"limit=x", "limit"},
		{"q=" + strings.Repeat("a", 101), "q"},
	} {
		a := e.admin(t, http.MethodGet, "/accounts?"+bad.query, "")
		if a.code != http.StatusBadRequest || !strings.Contains(string(a.body), bad.field) {
			t.Errorf("%s: HTTP %d %s, want 400 naming %s", bad.query, a.code, a.body, bad.field)
		}
	}
}

// TestAuditHasNoSecret: an account is created, every credential kind rotated one at a time,
// its settings, plan and status changed; the audit log (the API's answer and the stored
// collection) records each change with the caller's token fingerprint, address and request
// id, and holds none of the secrets or identifiers ever given out, their hashes, or the
// admin token.
func TestAuditHasNoSecret(t *testing.T) {
	e := start(t, Config{PublicURL: "https://api.example.com"})
	created := e.admin(t, http.MethodPost, "/accounts", `{"name":"Audited"}`)
	acc := decodeIssued(t, created)
	path := "/accounts/" + acc.AccountID
	requests := []string{created.requestID}
	var secrets []string
	keep := func(c issued) {
		secrets = append(secrets, c.BasicUser, c.BasicPassword, c.ServiceKey, c.ServicePass, c.Key, c.Pass, c.OwnerToken)
	}
	keep(acc)
	for _, kind := range []string{"basic", "service", "key", "owner_token"} {
		a := e.admin(t, http.MethodPost, path+"/rotate", fmt.Sprintf(`{"credentials":[%q]}`, kind))
		if a.code != http.StatusOK {
			t.Fatalf("rotate %s: HTTP %d", kind, a.code)
		}
		keep(decodeIssued(t, a))
		requests = append(requests, a.requestID)
	}
	for _, c := range []struct{ p, body string }{
		{"/settings", `{"legacy_credentials":false}`}, {"/plan", `{"rate_rps":7,"max_properties":50}`},
		{"/suspend", ``}, {"/reinstate", ``},
	} {
		a := e.admin(t, http.MethodPost, path+c.p, c.body)
		if a.code != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", c.p, a.code, a.body)
		}
		requests = append(requests, a.requestID)
	}
	var forbidden []string
	for _, s := range secrets {
		if s != "" {
			forbidden = append(forbidden, s, account.Hash(s))
		}
	}
	forbidden = append(forbidden, adminToken, account.Hash(adminToken))

	answer := e.admin(t, http.MethodGet, "/audit?account="+acc.AccountID+"&limit=500", "")
	if answer.code != http.StatusOK {
		t.Fatalf("audit: HTTP %d %s", answer.code, answer.body)
	}
	var out struct {
		Data struct {
			Records []struct {
				Action      string   `json:"action"`
				AccountID   string   `json:"account_id"`
				Actor       string   `json:"actor"`
				Address     string   `json:"address"`
				RequestID   string   `json:"request_id"`
				Credentials []string `json:"credentials"`
				Changes     []struct {
					Field string `json:"field"`
					Old   any    `json:"old"`
					New   any    `json:"new"`
				} `json:"changes"`
			} `json:"records"`
			Next string `json:"next"`
		} `json:"data"`
	}
	if err := json.Unmarshal(answer.body, &out); err != nil {
		t.Fatal(err)
	}
	wantActions := []string{"reinstate", "suspend", "plan", "settings", "rotate", "rotate", "rotate", "rotate", "create"}
	if len(out.Data.Records) != len(wantActions) || out.Data.Next != "" {
		t.Fatalf("%d records (next %q), want %d: %s", len(out.Data.Records), out.Data.Next, len(wantActions), answer.body)
	}
	for i, r := range out.Data.Records {
		if r.Action != wantActions[i] || r.AccountID != acc.AccountID || r.Actor != admin.Fingerprint(adminToken) ||
			r.Address != "127.0.0.1" || r.RequestID != requests[len(requests)-1-i] || r.RequestID == "" {
			t.Errorf("record %d: %+v, want %s by %s from 127.0.0.1, request %s", i, r, wantActions[i], admin.Fingerprint(adminToken), requests[len(requests)-1-i])
		}
	}
	if got := out.Data.Records[2].Changes; len(got) != 2 || got[0].Field != "rate_rps" || got[0].New != 7.0 || got[1].Field != "max_properties" {
		t.Errorf("plan record changes %+v, want rate_rps 0→7 and max_properties 0→50", got)
	}
	if got := out.Data.Records[7].Credentials; len(got) != 1 || got[0] != "basic" {
		t.Errorf("first rotation's record lists %v, want [basic]", got)
	}

	// The stored collection, every document as extended JSON.
	client, err := mongo.Connect(options.Client().ApplyURI(mongoURI))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	cur, err := client.Database("vros_edge").Collection("audit").Find(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	var stored strings.Builder
	for _, d := range docs {
		stored.WriteString(d.String())
	}
	if !strings.Contains(stored.String(), acc.AccountID) {
		t.Fatal("the audit collection has no record of the account")
	}
	for _, s := range forbidden {
		if strings.Contains(string(answer.body), s) {
			t.Errorf("the audit API's answer contains a secret, identifier or hash: %s…", s[:4])
		}
		if strings.Contains(stored.String(), s) {
			t.Errorf("the audit collection contains a secret, identifier or hash: %s…", s[:4])
		}
	}

	// Paging: two at a time, newest first, to the end.
	var seen []string
	after := ""
	for range 10 {
		a := e.admin(t, http.MethodGet, "/audit?account="+acc.AccountID+"&limit=2&after="+after, "")
		if err := json.Unmarshal(a.body, &out); err != nil {
			t.Fatal(err)
		}
		for _, r := range out.Data.Records {
			seen = append(seen, r.Action)
		}
		if after = out.Data.Next; after == "" {
			break
		}
	}
	if strings.Join(seen, ",") != strings.Join(wantActions, ",") {
		t.Errorf("paged: %v, want %v", seen, wantActions)
	}
	for _, bad := range []string{"limit=0", "limit=501"} {
		if a := e.admin(t, http.MethodGet, "/audit?"+bad, ""); a.code != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d", bad, a.code)
		}
	}
	if a := e.send(t, http.MethodGet, "/admin/v1/audit", nil, ""); a.code != http.StatusUnauthorized {
		t.Errorf("audit without the token: HTTP %d", a.code)
	}
}

// TestAuditAddress: the audit log records the client's address as edge sees it: behind a
// trusted proxy the X-Forwarded-For address, else the peer's whatever the header says.
func TestAuditAddress(t *testing.T) {
	for _, c := range []struct {
		name    string
		proxies []string
		want    string
	}{
		{"behind a trusted proxy", []string{"127.0.0.1"}, "203.0.113.9"},
		{"no trusted proxy", nil, "127.0.0.1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, Config{PublicURL: "https://api.example.com", TrustedProxies: c.proxies})
			created := e.admin(t, http.MethodPost, "/accounts", `{}`, "X-Forwarded-For", "203.0.113.9")
			id := decodeIssued(t, created).AccountID
			var out struct {
				Data struct {
					Records []struct {
						Address   string `json:"address"`
						RequestID string `json:"request_id"`
					} `json:"records"`
				} `json:"data"`
			}
			if err := json.Unmarshal(e.admin(t, http.MethodGet, "/audit?account="+id, "").body, &out); err != nil || len(out.Data.Records) != 1 {
				t.Fatalf("audit: %+v, %v", out, err)
			}
			if r := out.Data.Records[0]; r.Address != c.want || r.RequestID != created.requestID {
				t.Errorf("recorded %+v, want address %s and request %s", r, c.want, created.requestID)
			}
		})
	}
}
