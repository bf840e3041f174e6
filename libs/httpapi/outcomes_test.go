package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// TestApplicationOutcomesOK: behind ApplicationOutcomesOK an application outcome goes out
// as HTTP 200, whether the handler returns it as an error or writes it itself (a forwarded
// answer); transport failures and successes keep their code; routes without it keep theirs.
func TestApplicationOutcomesOK(t *testing.T) {
	app := New(Options{Telemetry: testTelemetry(t)})
	for _, prefix := range []string{"/ok", "/plain"} {
		handlers := []fiber.Handler{Use(EnvelopeB)}
		if prefix == "/ok" {
			handlers = append(handlers, ApplicationOutcomesOK)
		}
		g := app.Group(prefix, handlers...)
		g.Get("/err/:code", func(c *fiber.Ctx) error {
			code, _ := c.ParamsInt("code")
			return &Error{HTTP: code, Type: "x", Status: 2, Message: "outcome"}
		})
		g.Get("/wrote/:code", func(c *fiber.Ctx) error {
			code, _ := c.ParamsInt("code")
			return c.Status(code).SendString(`{"status":2}`)
		})
	}
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/ok/err/400", 200}, {"/ok/err/401", 200}, {"/ok/err/404", 200}, {"/ok/err/409", 200},
		{"/ok/err/413", 413}, {"/ok/err/429", 429}, {"/ok/err/500", 500}, {"/ok/err/503", 503},
		{"/ok/wrote/400", 200}, {"/ok/wrote/422", 200}, {"/ok/wrote/201", 201},
		{"/ok/wrote/429", 429}, {"/ok/wrote/502", 502},
		{"/plain/err/400", 400}, {"/plain/wrote/404", 404},
	} {
		resp, err := app.Test(httptest.NewRequest(http.MethodGet, tc.path, nil))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: HTTP %d, want %d (%s)", tc.path, resp.StatusCode, tc.want, body)
		}
		if !strings.Contains(string(body), `"status":2`) {
			t.Errorf("%s: body %s lost its outcome", tc.path, body)
		}
	}
}
