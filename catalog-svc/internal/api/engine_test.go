package api

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vros/vros/libs/events/contract"
)

// engine POSTs body to /internal/engine/<name> on behalf of acc.
func (s *server) engine(acc, name, body string) (int, string) {
	s.t.Helper()
	code, out := s.call(acc, http.MethodPost, "/internal/engine/"+name, body, nil)
	return code, string(out)
}

// TestEngineOrigins: each brand's allowed origins, in the account's order: its own, else two
// per domain; an origin two brands allow (stored before the rules) under the first only.
func TestEngineOrigins(t *testing.T) {
	s := newServer(t, "")
	st := contract.DefaultSettings("acc1")
	st.Version = 1
	st.Brands = []contract.Brand{
		{ID: 3, Name: "Listed", Domains: []string{"listed.example"}, Origins: []string{"https://book.example", "http://localhost:3000"}},
		{ID: 1, Name: "Domains", Domains: []string{"a.example", "WWW.b.example."}},
		{ID: 2, Name: "Older", Domain: "c.example"},
		{ID: 4, Name: "Nothing"},
		{ID: 5, Name: "Clash", Domains: []string{"a.example", "d.example"}},
	}
	s.load(contract.SettingsUpdated, st)
	st2 := contract.DefaultSettings("acc2")
	st2.Version = 1
	st2.Brands = []contract.Brand{{ID: 1, Name: "Other", Origins: []string{"https://other.example"}}}
	s.load(contract.SettingsUpdated, st2)

	for _, r := range []struct {
		name, acc, body string
		code            int
		want            string
	}{
		{"brands", "acc1", `{}`, 200, `{"data":{"brands":[` +
			`{"id":3,"origins":["https://book.example","http://localhost:3000"]},` +
			`{"id":1,"origins":["https://a.example","https://www.a.example","https://b.example","https://www.b.example"]},` +
			`{"id":2,"origins":["https://c.example","https://www.c.example"]},` +
			`{"id":4,"origins":[]},` +
			`{"id":5,"origins":["https://d.example","https://www.d.example"]}]}}`},
		{"an empty body", "acc1", ``, 200, ""},
		{"fields it does not read", "acc1", `{"brand_id":1,"lang":"it"}`, 200, ""},
		{"another account", "acc2", `{}`, 200, `{"data":{"brands":[{"id":1,"origins":["https://other.example"]}]}}`},
		{"an account without settings", "acc9", `{}`, 200, `{"data":{"brands":[]}}`},
		{"a body that is not JSON", "acc1", `{"brand_id":`, 400,
			`{"error":{"code":"bad_request","field":"body","message":"body: must be valid JSON"}}`},
		{"a body that is not an object", "acc1", `[1]`, 400,
			`{"error":{"code":"bad_request","field":"body","message":"body: must be a JSON object"}}`},
	} {
		t.Run(r.name, func(t *testing.T) {
			code, out := s.engine(r.acc, "origins", r.body)
			if code != r.code || (r.want != "" && out != r.want) {
				t.Errorf("%d %s\nwant %d %s", code, out, r.code, r.want)
			}
		})
	}
}

// TestEngineRoutesNeedEdgesSignature: an unsigned call never reaches the engine's routes.
func TestEngineRoutesNeedEdgesSignature(t *testing.T) {
	s := newServer(t, "")
	for _, name := range []string{"origins"} {
		req := httptest.NewRequest(http.MethodPost, "/internal/engine/"+name, nil)
		req.Header.Set("X-Vros-Account", "acc1")
		resp, err := s.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s unsigned: HTTP %d", name, resp.StatusCode)
		}
	}
}
