package e2e

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"testing"
)

// TestContractBitesOnDrift: the OpenAPI validator every exchange of this suite goes through
// accepts vros's real answers and fails the same answers with one field renamed, in
// interface A (a property create's data.property_id) and in interface B (a user's userId,
// checked against adduserData), and with a status no document lists. Without this, a
// validator that passed everything would look the same as one that works.
func TestContractBitesOnDrift(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	ctx := context.Background()
	u := func(path string) *url.URL {
		x, err := url.Parse(st.EdgeURL + path)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	for _, c := range []struct {
		name, path   string
		headers      map[string]string
		body, rename string
		to           string
	}{
		{"interface A property create", "/api/property", acc.AHeaders(),
			jsonText(obj{"action": "create", "property": validProperty("bite1")}), `"property_id"`, `"propertyId"`},
		{"interface B adduser", "/vros/external-booking", nil,
			acc.BBody("adduser", obj{"email": "bite@example.com", "password": "secret123", "name": "Bite Test"}), `"userId"`, `"user_id"`},
	} {
		r := do(t, http.MethodPost, c.path, c.headers, c.body)
		if r.Code != http.StatusOK || !bytes.Contains(r.Body, []byte(c.rename)) {
			t.Fatalf("%s: HTTP %d %s", c.name, r.Code, r.Body)
		}
		h := jsonHeader.Clone()
		for k, v := range c.headers {
			h.Set(k, v)
		}
		if err := apiContract.Check(ctx, http.MethodPost, u(c.path), h, []byte(c.body), r.Code, r.Header, r.Body); err != nil {
			t.Errorf("%s: the real answer fails: %v", c.name, err)
		}
		renamed := bytes.Replace(r.Body, []byte(c.rename), []byte(c.to), 1)
		if err := apiContract.Check(ctx, http.MethodPost, u(c.path), h, []byte(c.body), r.Code, r.Header, renamed); err == nil {
			t.Errorf("%s: %s renamed %s passes the validator: %s", c.name, c.rename, c.to, renamed)
		} else {
			t.Logf("%s, %s renamed: %v", c.name, c.rename, err)
		}
		if err := apiContract.Check(ctx, http.MethodPost, u(c.path), h, []byte(c.body), 299, r.Header, r.Body); err == nil {
			t.Errorf("%s: HTTP 299, a status no document lists, passes the validator", c.name)
		}
	}
}
