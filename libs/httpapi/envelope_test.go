package httpapi

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/fields"
)

// TestBRawIsB: an answer sent already encoded (BRaw) is byte for byte what B sends of the
// decoded value, with the same status and type, for every kind of data.
func TestBRawIsB(t *testing.T) {
	for _, data := range []string{`[]`, `{}`, `[{"date":"2030-03-01","price":"80"}]`, `{"a":"<&>\u2028"}`, `"text"`, `0`, `true`} {
		var v any
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(v) // the bytes a cache keeps: encoding/json's own
		app := fiber.New()
		app.Get("/b", func(c *fiber.Ctx) error { return B(c, v) })
		app.Get("/raw", func(c *fiber.Ctx) error { return BRaw(c, raw) })
		get := func(path string) (int, string, string) {
			resp, err := app.Test(httptest.NewRequest("GET", path, nil), -1)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
		}
		bc, bt, bb := get("/b")
		rc, rt, rb := get("/raw")
		if bc != rc || bt != rt || bb != rb {
			t.Errorf("%s: B answers %d %s %s, BRaw %d %s %s", data, bc, bt, bb, rc, rt, rb)
		}
	}
}

// TestEnvelopeEngine: behind Use(EnvelopeEngine) every error is answered
// {"error":{"code","field","message"}} with its HTTP status: invalid fields as bad_request
// naming the first field (the message starting with it), other errors by their type; a
// panic as internal_error.
func TestEnvelopeEngine(t *testing.T) {
	app := New(Options{Telemetry: testTelemetry(t)})
	g := app.Group("/e", Use(EnvelopeEngine))
	g.Get("/field", func(c *fiber.Ctx) error {
		return Invalid(fields.Violations{{Field: "arrival", Message: "must be a date YYYY-MM-DD"}, {Field: "adults", Message: "x"}})
	})
	g.Get("/plain", func(c *fiber.Ctx) error { return Unauthorized("invalid credentials") })
	g.Get("/fiber", func(*fiber.Ctx) error { return fiber.ErrMethodNotAllowed })
	g.Get("/panic", func(*fiber.Ctx) error { panic("boom") })
	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/e/field", 400, `{"error":{"code":"bad_request","field":"arrival","message":"arrival: must be a date YYYY-MM-DD"}}`},
		{"/e/plain", 401, `{"error":{"code":"unauthorized","message":"invalid credentials"}}`},
		{"/e/fiber", 405, `{"error":{"code":"method_not_allowed","message":"method not allowed"}}`},
		{"/e/panic", 500, `{"error":{"code":"internal_error","message":"internal error; quote request id `},
	} {
		resp, err := app.Test(httptest.NewRequest("GET", tc.path, nil), -1)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.HasPrefix(string(body), tc.want) {
			t.Errorf("%s: HTTP %d %s, want %d %s", tc.path, resp.StatusCode, body, tc.code, tc.want)
		}
	}
}
