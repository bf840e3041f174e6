package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/mongostore"
)

// TestStoreOperationsByKind: every request's context carries a tally, and after the answer
// its count is recorded in vros_store_operations by vros_request_kind: the kind a handler
// named (SetKind), else the route's path template, never the raw path; a request making no
// store call records 0. KindAfter names a group's requests that no handler named.
func TestStoreOperationsByKind(t *testing.T) {
	tel := testTelemetry(t)
	app := New(Options{Telemetry: tel})
	app.Post("/internal/b/create", func(c *fiber.Ctx) error {
		SetKind(c, "B.create")
		ctx := c.UserContext()
		mongostore.CountOp(ctx)
		mongostore.CountOp(ctx)
		mongostore.TallyOf(ctx).Add(1) // a batched write it waited for
		return c.SendString("ok")
	})
	app.Get("/feed/:token", func(c *fiber.Ctx) error {
		mongostore.CountOp(c.UserContext())
		return c.SendString("ok")
	})
	app.Get("/quote", func(c *fiber.Ctx) error { return c.SendString("ok") })
	app.Get("/fails", func(c *fiber.Ctx) error {
		SetKind(c, "B.fails")
		mongostore.CountOp(c.UserContext())
		return Internal("x")
	})
	a := app.Group("/internal/a", KindAfter("/internal/a/", "A."))
	a.Post("/property", func(c *fiber.Ctx) error {
		SetKind(c, "A.property.update")
		mongostore.CountOp(c.UserContext())
		return c.SendString("ok")
	})
	a.Post("/property-rate", func(c *fiber.Ctx) error {
		mongostore.CountOp(c.UserContext())
		return nil
	})
	a.Post("/photo/:id", func(c *fiber.Ctx) error { return nil })
	for _, r := range []struct {
		method, path string
		times        int
	}{
		{http.MethodPost, "/internal/b/create", 2},
		{http.MethodGet, "/feed/secret-token-1", 1},
		{http.MethodGet, "/feed/secret-token-2", 1},
		{http.MethodGet, "/quote", 3},
		{http.MethodGet, "/fails", 1},
		{http.MethodPost, "/internal/a/property", 1},
		{http.MethodPost, "/internal/a/property-rate", 2},
		{http.MethodPost, "/internal/a/photo/7", 1},
	} {
		for range r.times {
			resp, err := app.Test(httptest.NewRequest(r.method, r.path, nil))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}
	mfs, err := tel.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		count uint64
		sum   float64
		zero  uint64 // observations in the bucket le="0"
	}
	byKind := map[string]got{}
	for _, mf := range mfs {
		if mf.GetName() != "vros_store_operations" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var kind string
			for _, l := range m.GetLabel() {
				switch {
				case l.GetName() == "vros_request_kind":
					kind = l.GetValue()
				case !strings.HasPrefix(l.GetName(), "otel_scope_"):
					t.Errorf("label %s=%q", l.GetName(), l.GetValue())
				}
			}
			h := m.GetHistogram()
			g := got{count: h.GetSampleCount(), sum: h.GetSampleSum()}
			if b := h.GetBucket(); len(b) > 0 && b[0].GetUpperBound() == 0 {
				g.zero = b[0].GetCumulativeCount()
			}
			byKind[kind] = g
		}
	}
	for kind, want := range map[string]got{
		"B.create":              {count: 2, sum: 6},
		"/feed/:token":          {count: 2, sum: 2},
		"/quote":                {count: 3, sum: 0, zero: 3},
		"B.fails":               {count: 1, sum: 1},
		"A.property.update":     {count: 1, sum: 1},
		"A.property-rate":       {count: 2, sum: 2},
		"/internal/a/photo/:id": {count: 1, zero: 1},
	} {
		if g := byKind[kind]; g != want {
			t.Errorf("kind %q: %+v, want %+v", kind, g, want)
		}
	}
	for kind := range byKind {
		if strings.Contains(kind, "secret") {
			t.Errorf("kind %q carries the raw path", kind)
		}
	}
}
