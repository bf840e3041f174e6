package httpapi

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
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
