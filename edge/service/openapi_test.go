package service

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vros/vros/edge/openapi"
)

// TestOpenAPIServed: edge serves every OpenAPI document and the reference page on its
// public port without credentials; the JSON names first the edge the client reached, which
// X-Forwarded-Host and -Proto change only from a trusted proxy (docs/openapi.md).
func TestOpenAPIServed(t *testing.T) {
	for _, c := range []struct {
		name    string
		proxies []string
		want    string
	}{
		{"no proxy trusted", nil, "http://edge.internal:8080"},
		{"loopback trusted", []string{"127.0.0.1"}, "https://api.example.com"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, Config{TrustedProxies: c.proxies})
			for _, name := range openapi.Documents {
				src, _ := openapi.YAML(name)
				if a := e.send(t, "GET", "/openapi/"+name+".yaml", nil, ""); a.code != 200 || string(a.body) != string(src) || a.requestID == "" {
					t.Errorf("%s.yaml: HTTP %d, %d bytes, request id %q", name, a.code, len(a.body), a.requestID)
				}
				a := e.send(t, "GET", "/openapi/"+name+".json", map[string]string{"Host": "edge.internal:8080",
					"X-Forwarded-Host": "api.example.com", "X-Forwarded-Proto": "https"}, "")
				var doc struct {
					Servers []struct {
						URL string `json:"url"`
					} `json:"servers"`
				}
				if a.code != 200 || json.Unmarshal(a.body, &doc) != nil || len(doc.Servers) == 0 || doc.Servers[0].URL != c.want {
					t.Errorf("%s.json: HTTP %d, servers %+v, want %s first", name, a.code, doc.Servers, c.want)
				}
			}
			if a := e.send(t, "GET", "/reference/", nil, ""); a.code != 200 || !strings.Contains(string(a.body), "swagger-ui-bundle.js") {
				t.Errorf("/reference/: HTTP %d %.200s", a.code, a.body)
			}
			if a := e.send(t, "GET", "/openapi/secrets.yaml", nil, ""); a.code != 404 || !strings.Contains(string(a.body), `"error_type":"not_found"`) {
				t.Errorf("/openapi/secrets.yaml: HTTP %d %s", a.code, a.body)
			}
		})
	}
}
