package gateway_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/httpapi"
)

func basicHeader(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// headersA are interface A's credentials of acc, all in headers.
func headersA(acc tenantAccount) map[string]string {
	return map[string]string{"Content-Type": "application/json",
		"Authorization": basicHeader(acc.creds[account.Basic].Identifier, acc.creds[account.Basic].Secret),
		"servicekey":    acc.creds[account.ServiceKey].Identifier, "servicepass": acc.creds[account.ServiceKey].Secret}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// modes runs f for a live and for a sandbox account of e.
func modes(t *testing.T, e *edge, f func(t *testing.T, acc tenantAccount)) {
	for _, sandbox := range []bool{false, true} {
		t.Run(map[bool]string{false: "live", true: "sandbox"}[sandbox], func(t *testing.T) {
			f(t, e.createAccount(t, sandbox))
		})
	}
}

// TestRoutesInterfaceA: every resource of routes.go reaches its service at
// /internal/a/{resource}, with the body unchanged and the account's signed tenant headers.
func TestRoutesInterfaceA(t *testing.T) {
	e, s := startRoutedEdge(t)
	routes := gateway.ResourceRoutes()
	if len(routes) == 0 {
		t.Fatal("routes.go lists no interface A resource")
	}
	modes(t, e, func(t *testing.T, acc tenantAccount) {
		s.take() // the other mode\'s failure stays its own
		for _, name := range sortedKeys(routes) {
			body := fmt.Sprintf(`{"action":"create", "resource":%q,  "note":"ünïcödé ✓", "n":[1,2.50,"3"]}`, name)
			h := headersA(acc)
			h["Idempotency-Key"] = "idem-" + name
			a := e.send(t, "", http.MethodPost, "/api/"+name, h, body)
			passed(t, a, routes[name])
			r := s.one(t)
			if r.service != routes[name] || r.method != http.MethodPost || r.path != "/internal/a/"+name || r.query != "" {
				t.Errorf("/api/%s reached %s %s %s?%s, want POST %s /internal/a/%s", name, r.service, r.method, r.path, r.query, routes[name], name)
			}
			if string(r.body) != body || r.header.Get("Content-Type") != "application/json" {
				t.Errorf("/api/%s: %s got body %q (%s), want %q", name, r.service, r.body, r.header.Get("Content-Type"), body)
			}
			if got := r.header.Get("Idempotency-Key"); got != "idem-"+name {
				t.Errorf("/api/%s: Idempotency-Key %q not forwarded", name, got)
			}
			wantSigned(t, r, acc)
		}
	})
}

// TestRoutesInterfaceB: every action of routes.go, on both entry points, as JSON and as a
// PHP-style form, reaches its service at /internal/b/{canonical} with the body (JSON
// unchanged; a form as its JSON) and the account's signed tenant headers.
func TestRoutesInterfaceB(t *testing.T) {
	e, s := startRoutedEdge(t)
	routes := gateway.ActionRoutes()
	if len(routes) == 0 {
		t.Fatal("routes.go lists no interface B action")
	}
	check := func(t *testing.T, a answer, acc tenantAccount, action string) received {
		t.Helper()
		want := routes[action]
		passed(t, a, want.Service)
		r := s.one(t)
		if r.service != want.Service || r.method != http.MethodPost || r.path != "/internal/b/"+want.Canonical || r.query != "" {
			t.Errorf("action %s reached %s %s %s?%s, want POST %s /internal/b/%s", action, r.service, r.method, r.path, r.query, want.Service, want.Canonical)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("action %s: Content-Type %q, want application/json", action, ct)
		}
		wantSigned(t, r, acc)
		return r
	}
	modes(t, e, func(t *testing.T, acc tenantAccount) {
		s.take() // the other mode\'s failure stays its own
		key := acc.creds[account.Key]
		for _, path := range []string{"/vros/external-booking", "/vros/external-booking/"} {
			for _, action := range sortedKeys(routes) {
				body := fmt.Sprintf(`{"key":%q,"pass":%q,"action":%q,"propertyId":"%s_7","note":"ünïcödé ✓","nights":[1,"2"]}`,
					key.Identifier, key.Secret, action, acc.id)
				a := e.send(t, "", http.MethodPost, path, map[string]string{"Content-Type": "application/json", "Idempotency-Key": "idem-" + action}, body)
				r := check(t, a, acc, action)
				if string(r.body) != body {
					t.Errorf("%s %s: body %q, want it unchanged: %q", path, action, r.body, body)
				}
				if got := r.header.Get("Idempotency-Key"); got != "idem-"+action {
					t.Errorf("%s %s: Idempotency-Key %q not forwarded", path, action, got)
				}
			}
		}
		for _, action := range sortedKeys(routes) {
			form := url.Values{"key": {key.Identifier}, "pass": {key.Secret}, "action": {action},
				"service[0][name]": {"Cleaning"}, "service[0][amount]": {"50"}, "include[]": {"a"}}
			body := form.Encode() + "&include[]=b"
			a := e.send(t, "", http.MethodPost, "/vros/external-booking", map[string]string{"Content-Type": "application/x-www-form-urlencoded; charset=UTF-8"}, body)
			r := check(t, a, acc, action)
			var got map[string]any
			want := map[string]any{"key": key.Identifier, "pass": key.Secret, "action": action,
				"service": []any{map[string]any{"name": "Cleaning", "amount": "50"}}, "include": []any{"a", "b"}}
			if err := json.Unmarshal(r.body, &got); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("form %s: the service got %s (%v), want the form as JSON %v", action, r.body, err, want)
			}
		}
	})
}

// TestActionCanonicalNames: an alias names an action that routes.go routes to the same
// service under its own name, so the service serves every canonical name it receives.
func TestActionCanonicalNames(t *testing.T) {
	routes := gateway.ActionRoutes()
	for name, r := range routes {
		c, ok := routes[r.Canonical]
		if !ok || c.Service != r.Service || c.Canonical != r.Canonical {
			t.Errorf("action %s → %s /internal/b/%s, but action %s routes to %+v (listed %v)", name, r.Service, r.Canonical, r.Canonical, c, ok)
		}
	}
}

// TestRoutesMatchDocs: routes.go routes each action and GET endpoint to the owner that
// docs/interface-b.md's routing table names, and lists exactly those.
func TestRoutesMatchDocs(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/interface-b.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "| owner | actions |")
	if !ok {
		t.Fatal("docs/interface-b.md has no routing table")
	}
	documented, documentedReads := map[string]gateway.Upstream{}, map[string]gateway.Upstream{}
	row := regexp.MustCompile(`(?m)^\| (\S+) \| (.+) \|$`)
	word := regexp.MustCompile(`[a-z_][a-z_-]*`)
	alias := regexp.MustCompile(`([a-z_]+) \(alias ([a-z_]+)\)`)
	aliases := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		owner := gateway.Upstream(m[1])
		names := m[2]
		for _, a := range alias.FindAllStringSubmatch(names, -1) {
			aliases[a[2]] = a[1]
		}
		if before, after, ok := strings.Cut(names, "every GET endpoint"); ok {
			for _, w := range word.FindAllString(after, -1) {
				documentedReads[w] = owner
			}
			names = before
		}
		for _, w := range word.FindAllString(names, -1) {
			if w != "alias" && w != "and" {
				documented[w] = owner
			}
		}
	}
	got := map[string]gateway.Upstream{}
	for name, r := range gateway.ActionRoutes() {
		got[name] = r.Service
	}
	if !reflect.DeepEqual(got, documented) {
		t.Errorf("actions in routes.go:\n%v\ndocs/interface-b.md:\n%v", got, documented)
	}
	// Each action is its own canonical name, unless the table calls it an alias.
	for name, r := range gateway.ActionRoutes() {
		want, ok := aliases[name]
		if !ok {
			want = name
		}
		if r.Canonical != want {
			t.Errorf("routes.go sends action %s to /internal/b/%s, docs/interface-b.md to %s", name, r.Canonical, want)
		}
	}
	if len(aliases) == 0 {
		t.Error("docs/interface-b.md names no alias; the alias parsing is stale")
	}
	if reads := gateway.ReadRoutes(); !reflect.DeepEqual(reads, documentedReads) {
		t.Errorf("GET endpoints in routes.go:\n%v\ndocs/interface-b.md:\n%v", reads, documentedReads)
	}
}

// TestResourcesMatchDocs: routes.go lists exactly the resources docs/interface-a.md
// describes, each owned by property-svc unless its heading names another service.
func TestResourcesMatchDocs(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/interface-a.md")
	if err != nil {
		t.Fatal(err)
	}
	heading := regexp.MustCompile("(?m)^#+ .*`/api/([a-z-]+)`(.*)$")
	servedBy := regexp.MustCompile(`served by ([a-z-]+)`)
	documented := map[string]gateway.Upstream{}
	for _, m := range heading.FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = gateway.PropertySvc
		if o := servedBy.FindStringSubmatch(m[2]); o != nil {
			documented[m[1]] = gateway.Upstream(o[1])
		}
	}
	if got := gateway.ResourceRoutes(); !reflect.DeepEqual(got, documented) {
		t.Errorf("resources in routes.go:\n%v\ndocs/interface-a.md:\n%v", got, documented)
	}
}

// TestResourcesInOpenAPI: every resource of routes.go is a path of edge/openapi's interface A
// document, and every /api/ path of it is routed.
func TestResourcesInOpenAPI(t *testing.T) {
	doc, err := os.ReadFile("../../openapi/interface-a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  /api/([a-z-]+):$`).FindAllStringSubmatch(string(doc), -1) {
		paths[m[1]] = true
	}
	routes := gateway.ResourceRoutes()
	for name := range routes {
		if !paths[name] {
			t.Errorf("/api/%s is routed (to %s) but not in edge/openapi/interface-a.yaml", name, routes[name])
		}
	}
	for name := range paths {
		if _, ok := routes[name]; !ok {
			t.Errorf("edge/openapi/interface-a.yaml documents /api/%s, which routes.go does not route", name)
		}
	}
}

// TestMessagingNotDeployed: without messaging-svc's URL its resources answer 503 naming it,
// as every resource of a service not deployed does, and reach no service.
func TestMessagingNotDeployed(t *testing.T) {
	e, s := startCompatEdge(t, gateway.Config{}, nil)
	acc := e.createAccount(t, false)
	n := 0
	for name, svc := range gateway.ResourceRoutes() {
		if svc != gateway.MessagingSvc {
			continue
		}
		n++
		refusedA(t, e.send(t, "", http.MethodPost, "/api/"+name, headersA(acc), `{"action":"list"}`), 503, "unavailable",
			"resource "+name+" is not available: messaging-svc is not deployed")
	}
	if n != 5 {
		t.Fatalf("%d resources of messaging-svc, want message-template, message-trigger, message-log, messaging-settings, message-suppression", n)
	}
	s.none(t)
}

// TestRoutesReads: every owner-token read of routes.go, sent as GET or POST, reaches its
// service as POST /internal/read/{name} with a JSON object holding the property id of the
// path (or of ?property_id=) as property_id, signed for that path.
func TestRoutesReads(t *testing.T) {
	e, s := startRoutedEdge(t)
	routes := gateway.ReadRoutes()
	if len(routes) == 0 {
		t.Fatal("routes.go lists no GET endpoint")
	}
	modes(t, e, func(t *testing.T, acc tenantAccount) {
		s.take() // the other mode\'s failure stays its own
		token := acc.creds[account.OwnerToken].Secret
		for _, name := range sortedKeys(routes) {
			base := "/vros/api/" + name + "/owner_token/" + token
			for _, tc := range []struct{ method, path, body string }{
				{http.MethodGet, base, `{}`},
				{http.MethodGet, base + "/property/" + acc.id + "_7", `{"property_id":"` + acc.id + `_7"}`},
				{http.MethodGet, base + "?property_id=" + acc.id + "_8", `{"property_id":"` + acc.id + `_8"}`},
				{http.MethodGet, base + "?property_id=a%26b%3Dc", `{"property_id":"a\u0026b=c"}`},
				{http.MethodPost, base + "/property/" + acc.id + "_9", `{"property_id":"` + acc.id + `_9"}`},
			} {
				a := e.send(t, "", tc.method, tc.path, map[string]string{"If-None-Match": `"v1"`}, "")
				passed(t, a, routes[name])
				r := s.one(t)
				if r.service != routes[name] || r.method != http.MethodPost || r.path != "/internal/read/"+name || r.query != "" {
					t.Errorf("%s reached %s %s %s?%s, want POST %s /internal/read/%s", name, r.service, r.method, r.path, r.query, routes[name], name)
				}
				if string(r.body) != tc.body || r.header.Get("Content-Type") != "application/json" {
					t.Errorf("%s %s: forwarded body %s (%s), want %s", tc.method, name, r.body, r.header.Get("Content-Type"), tc.body)
				}
				if got := r.header.Get("If-None-Match"); got != `"v1"` {
					t.Errorf("%s: If-None-Match %q not forwarded", name, got)
				}
				if got := r.header.Get(gateway.HeaderPublicBase); got != e.url {
					t.Errorf("%s: %s %q, want the request's own base %q", name, gateway.HeaderPublicBase, got, e.url)
				}
				wantSigned(t, r, acc)
			}
		}
	})
}

// TestRouteMedia: photos are public: property-svc serves them, with no tenant headers.
func TestRouteMedia(t *testing.T) {
	e, s := startRoutedEdge(t)
	passed(t, e.send(t, "", http.MethodGet, "/media/k3yABC/large.jpg", nil, ""), gateway.PropertySvc)
	r := s.one(t)
	if r.service != gateway.PropertySvc || r.method != http.MethodGet || r.path != "/media/k3yABC/large.jpg" {
		t.Errorf("media reached %s %s %s, want GET property-svc /media/k3yABC/large.jpg", r.service, r.method, r.path)
	}
	wantUnsigned(t, r)
}

// TestUnknownRoutes: an unknown resource, action or endpoint answers in its interface's
// envelope (interface B's on HTTP 200, as every application outcome of B), with valid
// credentials, and reaches no service.
func TestUnknownRoutes(t *testing.T) {
	e, s := startRoutedEdge(t)
	acc := e.createAccount(t, false)
	key := acc.creds[account.Key]
	token := acc.creds[account.OwnerToken].Secret
	bodyB := func(action string) string {
		return fmt.Sprintf(`{"key":%q,"pass":%q,"action":%q}`, key.Identifier, key.Secret, action)
	}
	jsonCT := map[string]string{"Content-Type": "application/json"}

	t.Run("A unknown resource", func(t *testing.T) {
		s.take()
		for _, name := range []string{"no-such-resource", "Property", "properties", "property-photos"} {
			refusedA(t, e.send(t, "", http.MethodPost, "/api/"+name, headersA(acc), `{"action":"create"}`), 404, "not_found", "unknown resource")
			s.none(t)
		}
	})
	t.Run("A no route", func(t *testing.T) {
		s.take()
		for _, path := range []string{"/api/", "/api/property/extra", "/api"} {
			refusedA(t, e.send(t, "", http.MethodPost, path, headersA(acc), `{"action":"create"}`), 404, "not_found", "")
			s.none(t)
		}
	})
	t.Run("B unknown action", func(t *testing.T) {
		s.take()
		for _, path := range []string{"/vros/external-booking", "/vros/external-booking/"} {
			for _, action := range []string{"nosuchaction", "internal", "../a/property", "create ", " gettax"} {
				refusedB(t, e.send(t, "", http.MethodPost, path, jsonCT, bodyB(action)), 200, httpapi.StatusUnknownAction, "unknown action")
				s.none(t)
			}
		}
	})
	// routes.go looks action names up as sent: nothing documents case folding, and the
	// spec's names are lower case. A name in another case is an unknown action.
	t.Run("B action names are exact", func(t *testing.T) {
		s.take()
		for _, action := range sortedKeys(gateway.ActionRoutes()) {
			upper := strings.ToUpper(action[:1]) + action[1:]
			if _, listed := gateway.ActionRoutes()[upper]; listed {
				continue
			}
			refusedB(t, e.send(t, "", http.MethodPost, "/vros/external-booking", jsonCT, bodyB(upper)), 200, httpapi.StatusUnknownAction, "unknown action")
			s.none(t)
		}
	})
	t.Run("B missing action", func(t *testing.T) {
		s.take()
		refusedB(t, e.send(t, "", http.MethodPost, "/vros/external-booking", jsonCT,
			fmt.Sprintf(`{"key":%q,"pass":%q}`, key.Identifier, key.Secret)), 200, httpapi.StatusInvalid, "action")
		s.none(t)
	})
	t.Run("B unknown endpoint", func(t *testing.T) {
		s.take()
		for _, name := range []string{"no-such-endpoint", "Default-Config", "getcalendar"} {
			for _, suffix := range []string{"", "/property/7"} {
				refusedB(t, e.send(t, "", http.MethodGet, "/vros/api/"+name+"/owner_token/"+token+suffix, nil, ""), 200, httpapi.StatusNotFound, "unknown endpoint")
				s.none(t)
			}
		}
	})
	t.Run("B no route", func(t *testing.T) {
		s.take()
		for _, path := range []string{"/vros/api/default-config", "/vros/api/default-config/owner_token/", "/vros/api/default-config/token/" + token,
			"/vros/api/default-config/owner_token/" + token + "/property/7/extra", "/vros/external-booking/create"} {
			method := http.MethodGet
			if strings.Contains(path, "external-booking") {
				method = http.MethodPost
			}
			refusedB(t, e.send(t, "", method, path, jsonCT, bodyB("gettax")), 200, httpapi.StatusNotFound, "")
			s.none(t)
		}
	})
	if !slices.Contains(sortedKeys(gateway.ReadRoutes()), "default-config") {
		t.Error("the no-route cases above assume default-config is a GET endpoint")
	}
}
