package gateway_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/libs/httpapi"
)

// TestMissingCredentialsThrottled: a request without credentials, or whose credentials
// cannot be read from its body, counts as a failed authentication of its address like a
// wrong one: after the burst of failures, the address is answered 429 on every interface.
func TestMissingCredentialsThrottled(t *testing.T) {
	const burst = 3
	e := startEdge(t, throttle.NewFailures(0.001, burst), "127.0.0.1")
	c := e.newAccount(t)
	basic := basicHeader(c[account.Basic].Identifier, c[account.Basic].Secret)
	jsonCT := map[string]string{"Content-Type": "application/json"}
	formCT := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for i, r := range []struct {
		name   string
		path   string
		header map[string]string
		body   string
		code   int // the answer before the throttle; interface B's status, or A's error_type
		status int
		errA   string
	}{
		{"B, JSON without key and pass", "/vros/external-booking", jsonCT, `{"action":"gettax"}`, 200, httpapi.StatusUnauthorized, ""},
		{"B, JSON with key only", "/vros/external-booking", jsonCT, fmt.Sprintf(`{"key":%q,"action":"gettax"}`, c[account.Key].Identifier), 200, httpapi.StatusUnauthorized, ""},
		{"B, form without key and pass", "/vros/external-booking", formCT, "action=gettax&a[][][]=1", 200, httpapi.StatusUnauthorized, ""},
		{"B, empty body", "/vros/external-booking", jsonCT, "", 200, httpapi.StatusInvalid, ""},
		{"B, not a JSON object", "/vros/external-booking", jsonCT, "[[[[]]]]", 200, httpapi.StatusInvalid, ""},
		{"B, malformed form", "/vros/external-booking", formCT, "key=a&pass=b&a[b=1", 200, httpapi.StatusInvalid, ""},
		{"A, no Basic", "/api/property", map[string]string{"Content-Type": "application/json",
			"servicekey": c[account.ServiceKey].Identifier, "servicepass": c[account.ServiceKey].Secret}, `{}`, 401, 0, "unauthorized"},
		{"A, Basic without the second pair", "/api/property", map[string]string{"Content-Type": "application/json", "Authorization": basic}, `{}`, 401, 0, "unauthorized"},
		{"A, Basic and a form without the second pair", "/api/property", map[string]string{"Content-Type": "application/x-www-form-urlencoded",
			"Authorization": basic}, `a[][][]=1`, 401, 0, "unauthorized"},
	} {
		t.Run(r.name, func(t *testing.T) {
			from := fmt.Sprintf("198.51.100.%d", i+1)
			for range burst {
				a := e.send(t, from, http.MethodPost, r.path, r.header, r.body)
				if r.errA != "" {
					wantA(t, a, r.code, r.errA)
				} else {
					wantB(t, a, r.code, r.status)
				}
			}
			a := e.send(t, from, http.MethodPost, r.path, r.header, r.body)
			if r.errA != "" {
				wantA(t, a, 429, "rate_limited")
			} else {
				wantB(t, a, 429, httpapi.StatusRateLimited)
			}
			if a.retry == "" {
				t.Error("429 without Retry-After")
			}
			// The address's right credentials are refused too while its failures are spent.
			wantB(t, e.interfaceB(t, from, c[account.Key].Identifier, c[account.Key].Secret), 429, httpapi.StatusRateLimited)
		})
	}
}

// TestBodyLimits: a body over one of edge's limits on what it parses (docs/limits.md,
// "Bodies") is refused 400 in its interface's envelope, naming the limit, and reaches no
// service, from an authenticated caller too: too many form fields, a form that makes too
// many values, too many multipart parts, a multipart part's header block too large, JSON
// nested too deep where edge decodes it (an owner-token read's parameters).
func TestBodyLimits(t *testing.T) {
	e, s := startRoutedEdge(t)
	acc := e.createAccount(t, false)
	key := acc.creds[account.Key]
	token := acc.creds[account.OwnerToken].Secret
	const formCT = "application/x-www-form-urlencoded"
	creds := "key=" + key.Identifier + "&pass=" + key.Secret + "&action=gettax"
	multi := func(n int, header string) (string, string) {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		_ = w.SetBoundary("b")
		_ = w.WriteField("key", key.Identifier)
		_ = w.WriteField("pass", key.Secret)
		for i := range n {
			h := map[string][]string{"Content-Disposition": {fmt.Sprintf(`form-data; name="a[%d]"`, i)}}
			if header != "" {
				h["X-Filler"] = []string{header}
			}
			p, _ := w.CreatePart(h)
			_, _ = io.WriteString(p, "x")
		}
		_ = w.Close()
		return w.FormDataContentType(), b.String()
	}
	manyCT, many := multi(10000, "")
	bigHeadCT, bigHead := multi(1, strings.Repeat("h", 16<<10))
	for _, r := range []struct {
		name, path, ct, body, message string
		a                             bool
	}{
		{"B form over 10000 fields", "/vros/external-booking", formCT, creds + strings.Repeat("&a[]=1", 9998), "more than 10000 fields", false},
		{"B form making over 30000 values", "/vros/external-booking", formCT, creds + strings.Repeat("&a[][][][][][][]=", 9997),
			"more than 30000 values, lists and objects", false},
		{"B multipart over 10000 parts", "/vros/external-booking", manyCT, many, "more than 10000 parts", false},
		{"B multipart part header over 16 KiB", "/vros/external-booking", bigHeadCT, bigHead, "header block larger than 16384 bytes", false},
		{"read JSON nested over 64 levels", "/vros/api/default-config/owner_token/" + token, "application/json",
			`{"a":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`, "nested deeper than 64 levels", false},
		{"A form over 10000 fields", "/api/property", formCT, strings.Repeat("a[]=1&", 10001), "more than 10000 fields", true},
		{"A form making over 30000 values", "/api/property", formCT, strings.Repeat("a[][][][][][][]=&", 9000), "more than 30000 values", true},
	} {
		t.Run(r.name, func(t *testing.T) {
			header := map[string]string{"Content-Type": r.ct}
			if r.a {
				header = headersA(acc)
				header["Content-Type"] = r.ct
			}
			a := e.send(t, "", http.MethodPost, r.path, header, r.body)
			if r.a {
				refusedA(t, a, 400, "bad_request", r.message)
			} else {
				refusedB(t, a, 200, httpapi.StatusInvalid, r.message)
			}
			s.none(t)
		})
	}
	// Within the limits, the same shapes pass.
	passed(t, e.send(t, "", http.MethodPost, "/vros/external-booking", map[string]string{"Content-Type": formCT},
		creds+strings.Repeat("&a[]=1", 9997)), "catalog-svc")
	passed(t, e.send(t, "", http.MethodPost, "/vros/api/default-config/owner_token/"+token, map[string]string{"Content-Type": "application/json"},
		`{"a":`+strings.Repeat("[", 63)+strings.Repeat("]", 63)+`}`), "catalog-svc")
	s.take()
}

// TestRouteMediaNames: /media forwards only a key and a rendition's file name property-svc
// could have made (letters, digits, '_' and '-', the file ending .jpg); an escaped `/` or `.`
// would be decoded by the outgoing request and `..` resolved, reaching property-svc's
// internal paths, so anything else is 404 with Cache-Control: no-store, and reaches no
// service.
func TestRouteMediaNames(t *testing.T) {
	e, s := startRoutedEdge(t)
	get := func(path string) (int, string, []byte) {
		resp, err := http.Get(e.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Cache-Control"), b
	}
	if code, _, _ := get("/media/abcdefghijklmnopqrstuvwx/h_179.jpg"); code != 200 {
		t.Fatalf("a media key and rendition: HTTP %d", code)
	}
	if r := s.one(t); r.path != "/media/abcdefghijklmnopqrstuvwx/h_179.jpg" {
		t.Fatalf("forwarded to %s", r.path)
	}
	for _, path := range []string{
		"/media/..%2F..%2Finternal%2Fa%2Fproperty/x.jpg",
		"/media/abc/..%2F..%2Finternal%2Fa%2Fproperty",
		"/media/abc/..%2F..%2Finternal%2Fread%2Fdefault-config.jpg",
		"/media/%2e%2e/small.jpg",
		"/media/../small.jpg",
		"/media/abc/..",
		"/media/..%2f..%2finternal/small.jpg",
		"/media/abc/%2e%2e%2fsmall.jpg",
		"/media/abc/..jpg",
		"/media/a.b/small.jpg",
		"/media/abc/small.png",
		"/media/abc/small",
		"/media/abc/.jpg",
		"/media/abc/sm%20all.jpg",
		"/media/abc%00/small.jpg",
		"/media/" + strings.Repeat("k", 65) + "/small.jpg",
	} {
		t.Run(path, func(t *testing.T) {
			code, cache, body := get(path)
			if code != 404 || cache != "no-store" {
				t.Errorf("HTTP %d, Cache-Control %q: %s; want 404 with no-store", code, cache, body)
			}
			s.none(t)
		})
	}
	// `..` as it is: the path is cleaned before routing, never reaching /media.
	for _, path := range []string{"/media/../internal/a/property", "/media/abc/../../internal/read/default-config"} {
		if code, _, _ := get(path); code != 404 {
			t.Errorf("%s: HTTP %d, want 404", path, code)
		}
		s.none(t)
	}
}
