package openapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gofiber/fiber/v2"
	"go.yaml.in/yaml/v4"

	"github.com/vros/vros/libs/httpapi"
)

// testApp is a Fiber app as edge configures the parts these routes depend on: httpapi's
// error handler (interface A's envelope) and X-Forwarded-* trusted from no one.
func testApp(t testing.TB) *fiber.App {
	t.Helper()
	app := fiber.New(fiber.Config{
		ErrorHandler:            httpapi.ErrorHandler(slog.New(slog.NewTextHandler(io.Discard, nil))),
		EnableTrustedProxyCheck: true,
		DisableStartupMessage:   true,
	})
	if err := Register(app); err != nil {
		t.Fatal(err)
	}
	return app
}

func get(t testing.TB, app *fiber.App, target string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		}
		req.Header.Set(k, v)
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// TestServeYAML: every document as written, byte for byte, application/yaml, with an ETag
// that answers 304.
func TestServeYAML(t *testing.T) {
	app := testApp(t)
	for _, name := range Documents {
		want, err := YAML(name)
		if err != nil {
			t.Fatal(err)
		}
		resp, body := get(t, app, "/openapi/"+name+".yaml", nil)
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, want) {
			t.Fatalf("%s.yaml: HTTP %d, %d bytes; want 200 and the %d bytes embedded", name, resp.StatusCode, len(body), len(want))
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/yaml" {
			t.Errorf("%s.yaml: Content-Type %q", name, ct)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("%s.yaml: Cache-Control %q", name, cc)
		}
		etag := resp.Header.Get("ETag")
		if etag == "" {
			t.Fatalf("%s.yaml: no ETag", name)
		}
		resp, body = get(t, app, "/openapi/"+name+".yaml", map[string]string{"If-None-Match": etag})
		if resp.StatusCode != http.StatusNotModified || len(body) != 0 {
			t.Errorf("%s.yaml with If-None-Match: HTTP %d, %d bytes; want 304 and none", name, resp.StatusCode, len(body))
		}
	}
}

// TestServeJSON: every document as JSON is the same document as its YAML (as kin-openapi
// reads both), with its members in the order written and the edge that served it as its
// first server.
func TestServeJSON(t *testing.T) {
	app := testApp(t)
	for _, name := range Documents {
		src, _ := YAML(name)
		resp, body := get(t, app, "/openapi/"+name+".json", map[string]string{"Host": "edge.example.com:8443"})
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s.json: HTTP %d %s", name, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if !json.Valid(body) {
			t.Fatalf("%s.json is not JSON: %.300s", name, body)
		}
		var served struct {
			Servers []map[string]any `json:"servers"`
		}
		if err := json.Unmarshal(body, &served); err != nil {
			t.Fatal(err)
		}
		if len(served.Servers) == 0 || served.Servers[0]["url"] != "http://edge.example.com:8443" {
			t.Errorf("%s.json: servers %v, want http://edge.example.com:8443 first", name, served.Servers)
		}

		// The same document but for the server added.
		fromYAML, err := openapi3.NewLoader().LoadFromData(src)
		if err != nil {
			t.Fatal(err)
		}
		fromJSON, err := openapi3.NewLoader().LoadFromData(body)
		if err != nil {
			t.Fatal(err)
		}
		if len(fromJSON.Servers) != len(fromYAML.Servers)+1 {
			t.Errorf("%s.json: %d servers, want the document's %d and this edge", name, len(fromJSON.Servers), len(fromYAML.Servers))
		} else {
			fromJSON.Servers = fromJSON.Servers[1:]
		}
		if len(fromYAML.Servers) == 0 {
			fromYAML.Servers, fromJSON.Servers = nil, nil
		}
		a, _ := json.Marshal(fromYAML)
		b, _ := json.Marshal(fromJSON)
		if !bytes.Equal(a, b) {
			t.Errorf("%s.json is not the document %s.yaml holds:\nyaml: %.400s\njson: %.400s", name, name, a, b)
		}

		// Paths in the order written.
		if got, want := jsonKeys(t, body, "paths"), yamlKeys(t, src, "paths"); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s.json: paths in the order %v, the YAML has %v", name, got, want)
		}

		// Reached by the address the document names, that server alone.
		if len(fromYAML.Servers) > 0 {
			u := strings.TrimPrefix(strings.TrimPrefix(fromYAML.Servers[0].URL, "http://"), "https://")
			_, body := get(t, app, "/openapi/"+name+".json", map[string]string{"Host": u})
			var again struct {
				Servers []map[string]any `json:"servers"`
			}
			_ = json.Unmarshal(body, &again)
			if len(again.Servers) != len(fromYAML.Servers) {
				t.Errorf("%s.json reached at %s: servers %v, want the document's own", name, u, again.Servers)
			}
		}
	}
}

func jsonKeys(t *testing.T, doc []byte, member string) []string {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		t.Fatal(err)
	}
	raw, ok := top[member]
	if !ok {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var keys []string
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func yamlKeys(t *testing.T, src []byte, member string) []string {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		t.Fatal(err)
	}
	top := root.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == member {
			var keys []string
			m := top.Content[i+1]
			for j := 0; j+1 < len(m.Content); j += 2 {
				keys = append(keys, m.Content[j].Value)
			}
			return keys
		}
	}
	return nil
}

// TestServeJSONForwardedHost: X-Forwarded-Host and -Proto name the server only from a
// trusted proxy (none here): a client cannot make edge name another host.
func TestServeJSONForwardedHost(t *testing.T) {
	app := testApp(t)
	_, body := get(t, app, "/openapi/admin.json", map[string]string{"Host": "api.example.com",
		"X-Forwarded-Host": "evil.example.net", "X-Forwarded-Proto": "https"})
	var doc struct {
		Servers []map[string]any `json:"servers"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Servers) == 0 || doc.Servers[0]["url"] != "http://api.example.com" {
		t.Errorf("servers %v, want http://api.example.com first", doc.Servers)
	}
}

// TestServeGzip: a client that takes gzip gets the documents and the renderer gzipped.
func TestServeGzip(t *testing.T) {
	app := testApp(t)
	for _, target := range []string{"/openapi/admin.json", "/openapi/admin.yaml", "/reference/swagger-ui-bundle.js"} {
		plain, want := get(t, app, target, nil)
		resp, body := get(t, app, target, map[string]string{"Accept-Encoding": "br, gzip;q=0.8"})
		if resp.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s: Content-Encoding %q, Vary %q", target, resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
			continue
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: gzipped answer is not the plain one (%v)", target, err)
		}
		if plain.Header.Get("ETag") != resp.Header.Get("ETag") {
			t.Errorf("%s: ETag %q plain, %q gzipped", target, plain.Header.Get("ETag"), resp.Header.Get("ETag"))
		}
		if resp, _ := get(t, app, target, map[string]string{"Accept-Encoding": "gzip;q=0"}); resp.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: gzipped for a client that refuses it", target)
		}
	}
}

// TestServeNotFound: a name that is no document, or another extension, is a 404 in
// interface A's envelope.
func TestServeNotFound(t *testing.T) {
	app := testApp(t)
	for _, target := range []string{"/openapi/nope.yaml", "/openapi/admin.yml", "/openapi/admin", "/openapi/admin.json.gz",
		"/openapi/", "/reference/nope.js", "/reference/../openapi.go"} {
		resp, body := get(t, app, target, nil)
		var env struct {
			Code      int    `json:"code"`
			ErrorType string `json:"error_type"`
			Message   string `json:"error_message"`
		}
		if resp.StatusCode != http.StatusNotFound || json.Unmarshal(body, &env) != nil || env.Code != 404 || env.ErrorType != "not_found" {
			t.Errorf("%s: HTTP %d %s, want 404 in interface A's envelope", target, resp.StatusCode, body)
		}
	}
}

// TestReferencePage: /reference redirects to /reference/ (query kept), which is the page:
// HTML with a CSP, naming every document and only files edge serves.
func TestReferencePage(t *testing.T) {
	app := testApp(t)
	resp, _ := get(t, app, "/reference?urls.primaryName=admin", nil)
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/reference/?urls.primaryName=admin" {
		t.Errorf("/reference: HTTP %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, page := get(t, app, "/reference/", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("/reference/: HTTP %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("/reference/: CSP %q", csp)
	}
	if bytes.Contains(page, []byte("{{")) {
		t.Errorf("/reference/: a placeholder is left: %s", page)
	}
	if !bytes.Contains(page, []byte(`content="`+strings.Join(Documents, ",")+`"`)) {
		t.Errorf("/reference/ does not name the documents %v: %s", Documents, page)
	}
	types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".png": "image/png"}
	n := 0
	for _, attr := range []string{`src="`, `href="`} {
		for rest := string(page); ; {
			_, after, ok := strings.Cut(rest, attr)
			if !ok {
				break
			}
			ref, tail, _ := strings.Cut(after, `"`)
			rest = tail
			if strings.HasPrefix(ref, "../openapi/") {
				continue
			}
			if strings.Contains(ref, "//") {
				t.Errorf("/reference/ loads %s from elsewhere", ref)
				continue
			}
			n++
			resp, _ := get(t, app, "/reference/"+ref, nil)
			name, _, _ := strings.Cut(ref, "?")
			ext := name[strings.LastIndex(name, "."):]
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != types[ext] {
				t.Errorf("/reference/%s: HTTP %d %s", ref, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if want := map[bool]string{true: "no-cache", false: "public, max-age=86400"}[name == "init.js"]; resp.Header.Get("Cache-Control") != want {
				t.Errorf("/reference/%s: Cache-Control %q, want %q", ref, resp.Header.Get("Cache-Control"), want)
			}
		}
	}
	if n < 5 {
		t.Errorf("/reference/ loads %d files, want the renderer's, its styles, icons and init.js", n)
	}
	for _, name := range []string{"LICENSE", "NOTICE"} {
		if resp, _ := get(t, app, "/reference/"+name, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("/reference/%s: HTTP %d", name, resp.StatusCode)
		}
	}
}
