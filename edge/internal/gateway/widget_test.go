package gateway_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/edge/widget"
)

// widgetFiles is every file of the widget's assets by the name it is served as (its path
// below assets/), and the engine under each of its aliases.
func widgetFiles(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := fs.WalkDir(widget.Assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(widget.Assets, p)
		out[strings.TrimPrefix(p, "assets/")] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if out["engine.js"] == nil {
		t.Fatal("assets/engine.js is not embedded")
	}
	for _, alias := range gateway.ScriptAliases() {
		out[alias] = out["engine.js"]
	}
	return out
}

// TestWidgetScripts: GET and HEAD /widget/{file} serve each file of the widget's assets,
// the engine under the plugin's names too, with its type, five minutes' caching, an ETag
// that is a hash of its bytes (304 when If-None-Match names it), gzipped when asked (with
// its own ETag), and Access-Control-Allow-Origin: * (public, no secret); anything else is
// 404.
func TestWidgetScripts(t *testing.T) {
	e := startEngineEdge(t, gateway.Config{})
	files := widgetFiles(t)
	for _, name := range []string{"vros-booking.js", "general-olb.js", "bcalendar.js", "bcalendar-more.js", "engine.js"} {
		if files[name] == nil {
			t.Fatalf("%s is not served", name)
		}
	}
	types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".json": "application/json; charset=utf-8"}
	for name, body := range files {
		t.Run(name, func(t *testing.T) {
			sum := sha256.Sum256(body)
			etag := `"` + hex.EncodeToString(sum[:])[:32] + `"`
			get := func(method string, header map[string]string) engineAnswer {
				return e.call(t, "", method, "/widget/"+name, "", header, "")
			}
			a := get(http.MethodGet, nil)
			if a.code != http.StatusOK || !bytes.Equal(a.body, body) {
				t.Fatalf("HTTP %d, %d bytes; want 200 and the file's %d", a.code, len(a.body), len(body))
			}
			h := a.header
			if want, ok := types[name[strings.LastIndexByte(name, '.'):]]; ok && h.Get("Content-Type") != want {
				t.Errorf("Content-Type %q, want %q", h.Get("Content-Type"), want)
			}
			if h.Get("Cache-Control") != "public, max-age=300" || h.Get("ETag") != etag || h.Get("Access-Control-Allow-Origin") != "*" ||
				h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Content-Encoding") != "" {
				t.Errorf("headers %v; want ETag %s", h, etag)
			}
			head := get(http.MethodHead, nil)
			if head.code != http.StatusOK || len(head.body) != 0 || head.header.Get("ETag") != etag || head.header.Get("Content-Type") != h.Get("Content-Type") {
				t.Errorf("HEAD: HTTP %d %d bytes, %v", head.code, len(head.body), head.header)
			}
			for _, inm := range []string{etag, "W/" + etag, `"x", ` + etag, "*"} {
				nm := get(http.MethodGet, map[string]string{"If-None-Match": inm})
				if nm.code != http.StatusNotModified || len(nm.body) != 0 || nm.header.Get("ETag") != etag || nm.header.Get("Cache-Control") != "public, max-age=300" {
					t.Errorf("If-None-Match %s: HTTP %d %q %v", inm, nm.code, nm.body, nm.header)
				}
			}
			if other := get(http.MethodGet, map[string]string{"If-None-Match": `"stale"`}); other.code != http.StatusOK || !bytes.Equal(other.body, body) {
				t.Errorf("a stale ETag: HTTP %d", other.code)
			}
			gz := get(http.MethodGet, map[string]string{"Accept-Encoding": "gzip"})
			if gz.header.Get("Content-Encoding") == "gzip" {
				r, err := gzip.NewReader(bytes.NewReader(gz.body))
				if err != nil {
					t.Fatal(err)
				}
				plain, err := io.ReadAll(r)
				if err != nil || !bytes.Equal(plain, body) {
					t.Errorf("gzipped body is not the file (%v)", err)
				}
				gzTag := gz.header.Get("ETag")
				if gzTag == etag || gzTag == "" || !strings.Contains(gz.header.Get("Vary"), "Accept-Encoding") {
					t.Errorf("gzipped: ETag %s (plain %s), Vary %q", gzTag, etag, gz.header.Get("Vary"))
				}
				if nm := get(http.MethodGet, map[string]string{"Accept-Encoding": "gzip", "If-None-Match": gzTag}); nm.code != http.StatusNotModified {
					t.Errorf("gzipped If-None-Match: HTTP %d", nm.code)
				}
			} else if len(body) >= 4096 {
				t.Errorf("a %d-byte file is not gzipped", len(body))
			}
		})
	}
	for _, path := range []string{"/widget/nope.js", "/widget/assets/engine.js", "/widget/", "/widget/../go.mod", "/widget/%2e%2e/widget.go",
		"/widget/engine.js/x", "/widget/ENGINE.JS"} {
		if a := e.call(t, "", http.MethodGet, path, "", nil, ""); a.code != http.StatusNotFound || a.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: HTTP %d %v, want 404", path, a.code, a.header)
		}
	}
}

// secretFormats are the shapes of the credentials edge issues (docs/accounts.md).
var secretFormats = regexp.MustCompile(`\b(bu|sk|k|ot)_[A-Za-z0-9]{16,}`)

// TestEngineNoSecrets: no answer of the booking API — successes and every kind of refusal —
// and no file of the widget carries a secret: any account's Basic pair, service pair,
// key/pass or owner token (the caller's own included), edge's signing key, or anything
// shaped like a credential; nor an Authorization or Set-Cookie header.
func TestEngineNoSecrets(t *testing.T) {
	e := startEngineEdge(t, gateway.Config{Engine: gateway.EngineLimits{AddressCheckouts: 1, CheckoutPeriod: 1e12}})
	caller := e.account(t, true, twoBrands)
	other := e.account(t, false, `[{"id":3,"origins":["https://other.example"]}]`)
	suspended := e.account(t, false, twoBrands)
	if _, err := e.accounts.SetStatus(context.Background(), suspended.id, account.Revoked); err != nil {
		t.Fatal(err)
	}
	var secrets []string
	for _, acc := range []tenantAccount{caller, other, suspended} {
		for _, s := range acc.creds {
			secrets = append(secrets, s.Secret)
			if s.Kind != account.OwnerToken {
				secrets = append(secrets, s.Identifier)
			}
		}
	}
	secrets = append(secrets, signingKey)

	const origin = "https://a.example"
	token := tokenOf(caller)
	var answers []engineAnswer
	send := func(from, method, path, origin string, header map[string]string, body string) {
		answers = append(answers, e.call(t, from, method, path, origin, header, body))
	}
	for _, r := range []struct{ method, route, body string }{
		{"GET", "site", ""}, {"GET", "calendar?property=1", ""}, {"POST", "quote", `{"property":1}`},
		{"GET", "checkouts/ck_1", ""}, {"POST", "checkouts/ck_1/guest", `{"first_name":"Ana"}`},
		{"POST", "checkouts/ck_1/confirm", `{"card":{"number":"4242424242424242"}}`}, {"POST", "checkouts/ck_1/cancel", ""},
		{"OPTIONS", "quote", ""}, {"POST", "quote", `{"answer_status":409}`},
	} {
		send("", r.method, api(token, r.route), origin, nil, r.body)
	}
	send("", "POST", api(token, "checkouts"), origin, map[string]string{"Idempotency-Key": "1"}, `{}`)
	send("", "POST", api(token, "checkouts"), origin, map[string]string{"Idempotency-Key": "2"}, `{}`) // 429
	send("", "POST", api(token, "checkouts"), origin, nil, `{}`)                                       // no key
	send("", "POST", api(token, "quote"), origin, nil, `not json`)
	send("", "POST", api(token, "quote"), origin, nil, `{"x":"`+strings.Repeat("y", 20000)+`"}`)
	send("", "GET", api(token, "site"), "https://other.example", nil, "")                       // another account's origin
	send("", "GET", api(token, "site"), "", nil, "")                                            // no origin
	send("", "GET", api(tokenOf(other), "site"), origin, nil, "")                               // the other's token here
	send("", "GET", api(other.creds[account.Key].Secret, "site"), origin, nil, "")              // a pass as token
	send("", "GET", api(other.creds[account.ServiceKey].Secret, "site"), origin, nil, "")       // a servicepass as token
	send("", "GET", api(tokenOf(suspended), "site"), origin, nil, "")                           // suspended
	send("", "GET", api(token, "sites"), origin, nil, "")                                       // no route
	send("", "POST", api(token, "site"), origin, nil, "")                                       // 405
	send("", "GET", "/widget/api/v1/"+caller.creds[account.Basic].Secret+"/x", origin, nil, "") // no route, a password in it
	for name := range widgetFiles(t) {
		send("", "GET", "/widget/"+name, "", nil, "")
		send("", "GET", "/widget/"+name, "", map[string]string{"Accept-Encoding": "gzip"}, "")
	}
	codes := map[int]int{}
	for _, a := range answers {
		codes[a.code]++
		var text strings.Builder
		for k, vs := range a.header {
			if k == "Authorization" || k == "Set-Cookie" || k == "Www-Authenticate" {
				t.Errorf("answer HTTP %d carries %s", a.code, k)
			}
			fmt.Fprintf(&text, "%s: %s\n", k, strings.Join(vs, ", "))
		}
		body := a.body
		if a.header.Get("Content-Encoding") == "gzip" {
			r, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(r); err != nil {
				t.Fatal(err)
			}
		}
		text.Write(body)
		for _, s := range secrets {
			if strings.Contains(text.String(), s) {
				t.Errorf("answer HTTP %d carries a secret %.6s…: %.300s", a.code, s, text.String())
			}
		}
		if m := secretFormats.FindString(text.String()); m != "" {
			t.Errorf("answer HTTP %d carries something shaped like a credential %.6s…", a.code, m)
		}
	}
	// The scan saw every kind of answer.
	for _, code := range []int{200, 201, 204, 400, 401, 403, 404, 405, 409, 413, 429} {
		if codes[code] == 0 {
			t.Errorf("no answer with HTTP %d was scanned: %v", code, codes)
		}
	}
}
