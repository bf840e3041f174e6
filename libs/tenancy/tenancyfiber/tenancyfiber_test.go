package tenancyfiber_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
)

// The keys and booking-svc's verifier of libs/tenancy's tests.
const (
	edgeKey        = "edge-key-0123456789abcdef"
	integrationKey = "integration-key-0123456789"
)

// icalRoutes are booking-svc's routes integration-svc may call.
var icalRoutes = []string{"GET /internal/ical/property", "POST /internal/ical/sync", "GET /internal/hooks/booking/:id"}

// bookingSvc is booking-svc's verifier: edge anywhere, integration-svc on its routes only.
func bookingSvc(t *testing.T) *tenancy.Verifier {
	t.Helper()
	v, err := tenancy.NewVerifier([]tenancy.Grant{{Caller: tenancy.CallerEdge, Key: edgeKey}, {Caller: tenancy.CallerIntegration, Key: integrationKey, Routes: icalRoutes}})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// req is a signed request as it travels: its headers, method and body (the test sends it
// to a target of its choice).
type req struct {
	h      map[string]string
	method string
	body   []byte
}

func sign(s *tenancy.Signer, t tenancy.Tenant, method, target, body string, at time.Time) req {
	r := req{h: map[string]string{}, method: method, body: []byte(body)}
	s.SetHeaders(func(k, v string) { r.h[k] = v }, t, method, target, []byte(body), at)
	return r
}

// TestRequire: through Fiber, the middleware hands the handler the signed tenant and
// refuses with 401 a replay, another body, another query and a caller outside its routes,
// before the handler runs.
func TestRequire(t *testing.T) {
	v := bookingSvc(t)
	app := fiber.New(fiber.Config{ErrorHandler: httpapi.ErrorHandler(slog.New(slog.DiscardHandler))})
	var got []tenancy.Tenant
	h := func(c *fiber.Ctx) error {
		got = append(got, tenancyfiber.From(c))
		return c.SendStatus(http.StatusNoContent)
	}
	app.Group("/internal/ical", tenancyfiber.Require(v)).Post("/sync", h)
	app.Group("/internal/b", tenancyfiber.Require(v)).Post("/createbooking", h)
	// Two groups whose prefixes both match /internal/account/...: Require runs twice.
	app.Group("/internal/a", tenancyfiber.Require(v))
	app.Group("/internal/account", tenancyfiber.Require(v)).Post("/export", h)
	send := func(r req, target string) int {
		t.Helper()
		hr := httptest.NewRequest(r.method, target, strings.NewReader(string(r.body)))
		for k, v := range r.h {
			hr.Header.Set(k, v)
		}
		resp, err := app.Test(hr)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	edge := tenancy.NewSigner(tenancy.CallerEdge, edgeKey)
	integration := tenancy.NewSigner(tenancy.CallerIntegration, integrationKey)
	tenant := tenancy.Tenant{AccountID: "acc1", Sandbox: true, MaxProperties: 3}
	ok := sign(edge, tenant, "POST", "/internal/b/createbooking?lang=en", `{"a":1}`, time.Now())
	if code := send(ok, "/internal/b/createbooking?lang=en"); code != http.StatusNoContent || len(got) != 1 || got[0] != tenant {
		t.Fatalf("a signed request: HTTP %d, tenants %+v", code, got)
	}
	otherBody := sign(edge, tenant, "POST", "/internal/b/createbooking", `{"a":1}`, time.Now())
	otherBody.body = []byte(`{"a":2}`)
	otherQuery := sign(edge, tenant, "POST", "/internal/b/createbooking?lang=en", `{"a":1}`, time.Now())
	sync := sign(integration, tenant, "POST", "/internal/ical/sync", `{}`, time.Now())
	if code := send(sync, "/internal/ical/sync"); code != http.StatusNoContent {
		t.Errorf("integration-svc on the sync route: HTTP %d", code)
	}
	export := sign(edge, tenant, "POST", "/internal/account/export", `{}`, time.Now())
	if code := send(export, "/internal/account/export"); code != http.StatusNoContent {
		t.Errorf("a route behind two groups' Require: HTTP %d", code)
	}
	for name, c := range map[string]struct {
		r      req
		target string
	}{
		"replayed":                               {ok, "/internal/b/createbooking?lang=en"},
		"another body":                           {otherBody, "/internal/b/createbooking"},
		"another query":                          {otherQuery, "/internal/b/createbooking?lang=de"},
		"integration-svc's key on an edge route": {sign(integration, tenant, "POST", "/internal/b/createbooking", `{}`, time.Now()), "/internal/b/createbooking"},
	} {
		if code := send(c.r, c.target); code != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401", name, code)
		}
	}
	if len(got) != 3 {
		t.Fatalf("the handler ran for refused requests: %+v", got)
	}
}
