package service

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vros/vros/libs/httpapi"
)

// TestRequestSizeLimits: a request target over 8 KiB answers 414 and a header block over
// 16 KiB answers 431, each in the envelope of its interface (A for /api/ and the admin API,
// B for /vros/), with a request id and no error logged; no credentials are needed to reach
// them, and none of them is a 500. A request beyond even the read buffer still answers 431.
func TestRequestSizeLimits(t *testing.T) {
	e := start(t, Config{PublicURL: "https://api.example.com"})
	filler := func(n int) string { return "X-Filler: " + strings.Repeat("f", n) + "\r\n" }
	post := func(path, headers string) string {
		return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: api.example.com\r\nContent-Type: application/json\r\n%sContent-Length: 2\r\n\r\n{}", path, headers)
	}
	get := func(path, headers string) string {
		return fmt.Sprintf("GET %s HTTP/1.1\r\nHost: api.example.com\r\n%s\r\n", path, headers)
	}
	longQuery := "?q=" + strings.Repeat("q", httpapi.DefaultMaxTarget)
	bigHeader := filler(httpapi.DefaultMaxHeaderBytes)
	hugeHeader := filler(64 << 10)
	rows := []struct {
		name    string
		request string
		want    int
		b       bool // interface B's envelope
		engine  bool // the booking API's
	}{
		{"A: target over 8 KiB → 414", post("/api/property"+longQuery, ""), 414, false, false},
		{"A: headers over 16 KiB → 431", post("/api/property", bigHeader), 431, false, false},
		{"A: headers past the read buffer → 431", post("/api/property", hugeHeader), 431, false, false},
		{"admin: headers over 16 KiB → 431", post("/admin/v1/accounts", bigHeader), 431, false, false},
		{"B action: target over 8 KiB → 414", post("/vros/external-booking"+longQuery, ""), 414, true, false},
		{"B action: headers over 16 KiB → 431", post("/vros/external-booking", bigHeader), 431, true, false},
		{"B read: owner token path over 8 KiB → 414", get("/vros/api/default-config/owner_token/"+strings.Repeat("t", httpapi.DefaultMaxTarget), ""), 414, true, false},
		{"B read: headers over 16 KiB → 431", get("/vros/api/default-config/owner_token/x", bigHeader), 431, true, false},
		{"headers under 16 KiB pass the limit (401: no credentials)", post("/api/property", filler(12<<10)), 401, false, false},
		{"booking API: target over 8 KiB → 414", get("/widget/api/v1/ot_x/site"+longQuery, ""), 414, false, true},
		{"booking API: headers over 16 KiB → 431", post("/widget/api/v1/ot_x/quote", bigHeader), 431, false, true},
		{"booking API: a body declared over 25 MiB → 413", fmt.Sprintf("POST /widget/api/v1/ot_x/quote HTTP/1.1\r\nHost: api.example.com\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", 26<<20, strings.Repeat(" ", 16<<10)), 413, false, true},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			a := e.raw(t, r.request)
			if a.code != r.want {
				t.Fatalf("HTTP %d, want %d: %.300s", a.code, r.want, a.body)
			}
			if a.requestID == "" {
				t.Error("no X-Request-Id")
			}
			if r.engine {
				var env struct {
					Error struct{ Code, Message string } `json:"error"`
				}
				if json.Unmarshal(a.body, &env) != nil || !strings.Contains(env.Error.Code, "too") || env.Error.Message == "" {
					t.Errorf("want the booking API's envelope: %s", a.body)
				}
				return
			}
			if r.b {
				if st, msg := bStatus(t, a); st != httpapi.StatusTooLarge || msg == "" {
					t.Errorf("interface B status %d %q, want %d", st, msg, httpapi.StatusTooLarge)
				}
				return
			}
			typ, msg := aError(t, a)
			if r.want != 401 && (!strings.Contains(typ, "too") || msg == "") {
				t.Errorf("error_type %q, message %q", typ, msg)
			}
		})
	}
	if logs := e.logs.String(); strings.Contains(logs, `"level":"ERROR"`) {
		t.Errorf("an error was logged:\n%s", logs)
	}
}
