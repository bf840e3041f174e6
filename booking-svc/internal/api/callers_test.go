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

// TestCallers: booking-svc accepts integration-svc's key on the hooks and iCal routes it
// calls (IntegrationRoutes) and nowhere else, messaging-svc's on the booking read alone
// (MessagingRoutes); with its key neither can speak as edge. A captured request replayed, or sent with another body or query, is refused.
func TestCallers(t *testing.T) {
	s := newServer(t)
	acct := newAccount("callers")
	priceable(t, s, acct, 41)
	edge := tenancy.NewSigner(tenancy.CallerEdge, testKey)
	integration := tenancy.NewSigner(tenancy.CallerIntegration, integrationKey)
	messaging := tenancy.NewSigner(tenancy.CallerMessaging, messagingKey)
	send := func(sg *tenancy.Signer, method, target, body string, headers map[string]string) (int, string, map[string]string) {
		t.Helper()
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		h := map[string]string{}
		if sg != nil {
			sg.SetHeaders(func(k, v string) { h[k] = v }, tenancy.Tenant{AccountID: acct}, method, target, []byte(body), time.Now())
		}
		for k, v := range headers {
			h[k] = v
		}
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := s.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out), h
	}
	for _, c := range []struct {
		name                 string
		s                    *tenancy.Signer
		method, target, body string
		want                 int
	}{
		{"integration-svc resolves a code", integration, http.MethodGet, "/internal/ical/property?internal_code=P41", "", http.StatusOK},
		{"integration-svc syncs a feed", integration, http.MethodPost, "/internal/ical/sync", `{"property_id":41,"feed_id":1,"name":"Airbnb","events":[]}`, http.StatusOK},
		{"integration-svc reads a booking", integration, http.MethodGet, "/internal/hooks/booking/999999", "", http.StatusNotFound},
		{"integration-svc lists bookings", integration, http.MethodPost, "/internal/b/listbooking", `{}`, http.StatusUnauthorized},
		{"integration-svc blocks dates", integration, http.MethodPost, "/internal/a/property-blockdate", `{}`, http.StatusUnauthorized},
		{"integration-svc exports the account", integration, http.MethodGet, "/internal/account/export", "", http.StatusUnauthorized},
		{"integration-svc's key as edge", tenancy.NewSigner(tenancy.CallerEdge, integrationKey), http.MethodPost, "/internal/b/listbooking", `{}`, http.StatusUnauthorized},
		{"booking-svc's own name", tenancy.NewSigner(tenancy.CallerBooking, integrationKey), http.MethodPost, "/internal/ical/sync", `{}`, http.StatusUnauthorized},
		{"messaging-svc reads a booking", messaging, http.MethodGet, "/internal/hooks/booking/999999", "", http.StatusNotFound},
		{"messaging-svc resolves a code", messaging, http.MethodGet, "/internal/ical/property?internal_code=P41", "", http.StatusUnauthorized},
		{"messaging-svc syncs a feed", messaging, http.MethodPost, "/internal/ical/sync", `{"property_id":41,"feed_id":1,"name":"Airbnb","events":[]}`, http.StatusUnauthorized},
		{"messaging-svc lists bookings", messaging, http.MethodPost, "/internal/b/listbooking", `{}`, http.StatusUnauthorized},
		{"messaging-svc reserves for a channel", messaging, http.MethodPost, "/internal/channel/reservation", `{}`, http.StatusUnauthorized},
		{"messaging-svc's key as edge", tenancy.NewSigner(tenancy.CallerEdge, messagingKey), http.MethodPost, "/internal/b/listbooking", `{}`, http.StatusUnauthorized},
		{"messaging-svc's key as integration-svc", tenancy.NewSigner(tenancy.CallerIntegration, messagingKey), http.MethodGet, "/internal/hooks/booking/999999", "", http.StatusUnauthorized},
		{"edge lists bookings", edge, http.MethodPost, "/internal/b/listbooking", `{}`, http.StatusOK},
		{"edge resolves a code", edge, http.MethodGet, "/internal/ical/property?internal_code=P41", "", http.StatusOK},
	} {
		if status, body, _ := send(c.s, c.method, c.target, c.body, nil); status != c.want {
			t.Errorf("%s: HTTP %d %s, want %d", c.name, status, body, c.want)
		}
	}

	// Requests captured on the way: replayed as they were, or with another body or query.
	sync := `{"property_id":41,"feed_id":2,"name":"Vrbo","events":[]}`
	status, body, h := send(integration, http.MethodPost, "/internal/ical/sync", sync, nil)
	if status != http.StatusOK {
		t.Fatalf("sync: %d %s", status, body)
	}
	_, _, hq := send(integration, http.MethodGet, "/internal/ical/property?internal_code=P41", "", nil)
	for _, c := range []struct {
		name                 string
		h                    map[string]string
		method, target, body string
	}{
		{"a sync replayed", h, http.MethodPost, "/internal/ical/sync", sync},
		{"a sync with another body", h, http.MethodPost, "/internal/ical/sync", `{"property_id":41,"feed_id":2,"name":"Vrbo","final":true}`},
		{"a lookup with another query", hq, http.MethodGet, "/internal/ical/property?internal_code=P42", ""},
	} {
		if status, body, _ := send(nil, c.method, c.target, c.body, c.h); status != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d %s, want 401", c.name, status, body)
		}
	}
}
