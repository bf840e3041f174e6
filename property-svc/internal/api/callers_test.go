package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/libs/tenancy"
)

// TestCallers: property-svc accepts edge's key on every route and booking-svc's on reading
// payment methods alone; integration-svc, which fetches attacker-chosen URLs, holds no key
// property-svc accepts: its own is refused everywhere, and with its key it cannot speak as
// edge or booking-svc. A captured request replayed, or sent with another body, is refused.
func TestCallers(t *testing.T) {
	app, acc := newServer(t)
	if status, body := call(t, app, acc, "/internal/a/property", propertyBody("C1")); status != 200 {
		t.Fatalf("create: %d %s", status, body)
	}
	const integrationKey = "integration-key-0123456789"
	edge := tenancy.NewSigner(tenancy.CallerEdge, testKey)
	booking := tenancy.NewSigner(tenancy.CallerBooking, bookingKey)
	send := func(s *tenancy.Signer, path, body string, headers map[string]string) (int, string, map[string]string) {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		h := map[string]string{}
		if s != nil {
			s.SetHeaders(func(k, v string) { h[k] = v }, tenancy.Tenant{AccountID: acc}, http.MethodPost, path, []byte(body), time.Now())
		}
		for k, v := range headers {
			h[k] = v
		}
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out), h
	}
	const payment, property = "/internal/b/getpayment", "/internal/a/property"
	getpayment := `{"propertyId":1}`
	for _, c := range []struct {
		name       string
		s          *tenancy.Signer
		path, body string
		refused    bool
	}{
		{"edge reads payment methods", edge, payment, getpayment, false},
		{"edge writes a property", edge, property, propertyBody("C2"), false},
		{"booking-svc reads payment methods", booking, payment, getpayment, false},
		{"booking-svc writes a property", booking, property, propertyBody("C3"), true},
		{"integration-svc reads payment methods", tenancy.NewSigner(tenancy.CallerIntegration, integrationKey), payment, getpayment, true},
		{"integration-svc writes a property", tenancy.NewSigner(tenancy.CallerIntegration, integrationKey), property, propertyBody("C4"), true},
		{"integration-svc's key as edge", tenancy.NewSigner(tenancy.CallerEdge, integrationKey), property, propertyBody("C5"), true},
		{"integration-svc's key as booking-svc", tenancy.NewSigner(tenancy.CallerBooking, integrationKey), payment, getpayment, true},
		{"booking-svc's key as edge", tenancy.NewSigner(tenancy.CallerEdge, bookingKey), property, propertyBody("C6"), true},
		{"unsigned", nil, payment, getpayment, true},
	} {
		status, body, _ := send(c.s, c.path, c.body, nil)
		if refused := status == http.StatusUnauthorized; refused != c.refused {
			t.Errorf("%s: HTTP %d %s, refused %v", c.name, status, body, c.refused)
		}
	}

	// A request captured on the way: replayed as it was, or with another body.
	status, body, h := send(edge, property, propertyBody("C7"), nil)
	if status != 200 {
		t.Fatalf("C7: %d %s", status, body)
	}
	for name, b := range map[string]string{"replayed": propertyBody("C7"), "another body": propertyBody("C8")} {
		if status, body, _ := send(nil, property, b, h); status != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d %s, want 401", name, status, body)
		}
	}
}
