package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
)

type bAnswer struct {
	Status  int             `json:"status"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (r response) b(t *testing.T) bAnswer {
	t.Helper()
	var a bAnswer
	r.decode(t, &a)
	return a
}

// TestInterfaceBAuthAndRouting: key/pass are checked for every action, in JSON and in
// PHP-style form bodies; unknown actions and actions whose service is not deployed yet get
// clear statuses in interface B's envelope; catalog actions reach catalog-svc.
func TestInterfaceBAuthAndRouting(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	cases := []struct {
		name        string
		contentType string
		body        string
		http        int
		status      int
	}{
		{"no key", "application/json", `{"action":"getinfo"}`, 200, 2},
		{"wrong pass", "application/json", `{"key":"` + acc.Key + `","pass":"wrong","action":"getinfo"}`, 200, 2},
		{"interface A pair as key", "application/json", `{"key":"` + acc.ServiceKey + `","pass":"` + acc.ServicePass + `","action":"getinfo"}`, 200, 2},
		{"key not a string", "application/json", `{"key":7,"pass":"x","action":"getinfo"}`, 200, 4},
		{"not JSON", "application/json", `{"key":`, 200, 4},
		{"empty body", "application/json", ``, 200, 4},
		{"action missing", "application/json", `{"key":"` + acc.Key + `","pass":"` + acc.Pass + `"}`, 200, 4},
		{"unknown action", "application/json", `{"key":"` + acc.Key + `","pass":"` + acc.Pass + `","action":"fly"}`, 200, 64},
		// Reaching booking-svc shows in its field errors.
		{"booking action reaches booking-svc", "application/json", `{"key":"` + acc.Key + `","pass":"` + acc.Pass + `","action":"getinfo","propertyId":"1"}`, 200, 4},
		{"alias addservice reaches insertservice", "application/json", `{"key":"` + acc.Key + `","pass":"` + acc.Pass + `","action":"addservice"}`, 200, 4},
		{"catalog action reaches catalog-svc", "application/json", `{"key":"` + acc.Key + `","pass":"` + acc.Pass + `","action":"listcountry"}`, 200, 0},
		{"catalog action checks its fields", "application/json", `{"key":"` + acc.Key + `","pass":"` + acc.Pass + `","action":"gettax"}`, 200, 4},
		{"form body", "application/x-www-form-urlencoded", url.Values{"key": {acc.Key}, "pass": {acc.Pass}, "action": {"create"},
			"service[0][name]": {"Cleaning"}, "numberofadults": {"2"}}.Encode(), 200, 4},
		{"form body wrong pass", "application/x-www-form-urlencoded", "key=" + url.QueryEscape(acc.Key) + "&pass=nope&action=create", 200, 2},
		{"form body broken brackets", "application/x-www-form-urlencoded", "key=a&service[0=1", 200, 4},
	}
	for _, c := range cases {
		for _, path := range []string{"/vros/external-booking", "/vros/external-booking/"} {
			r := do(t, http.MethodPost, path, map[string]string{"Content-Type": c.contentType}, c.body)
			a := r.b(t)
			if r.Code != c.http || a.Status != c.status || a.Message == "" {
				t.Errorf("%s (%s): HTTP %d status %d %q; want HTTP %d status %d", c.name, path, r.Code, a.Status, a.Message, c.http, c.status)
			}
		}
	}
}

func TestOwnerTokenReads(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	for _, c := range []struct {
		name, path string
		http       int
	}{
		{"wrong token", "/vros/api/default-config/owner_token/ot_wrong", 200},
		{"unknown endpoint", "/vros/api/everything/owner_token/" + acc.OwnerToken, 200},
		{"unknown property", "/vros/api/get-min-max-price-property/owner_token/" + acc.OwnerToken + "/property/1", 200},
		{"interface B pass as token", "/vros/api/default-config/owner_token/" + acc.Pass, 200},
	} {
		r := do(t, http.MethodGet, c.path, nil, "")
		if a := r.b(t); r.Code != c.http || a.Status == 0 || a.Message == "" {
			t.Errorf("%s: HTTP %d %s", c.name, r.Code, r.Body)
		}
	}
	// A valid token reaches catalog-svc, which answers the object itself.
	r := do(t, http.MethodGet, "/vros/api/default-config/owner_token/"+acc.OwnerToken, nil, "")
	var cfg struct {
		DefaultLimit int `json:"default_limit"`
	}
	r.status(t, http.StatusOK)
	r.decode(t, &cfg)
	if cfg.DefaultLimit != 10 {
		t.Errorf("default-config: %s", r.Body)
	}
}
