//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"
)

// TestDeployedChart deploys the chart on kind and runs the API checks through edge's NodePort.
// With VROS_E2E_BASE_URL set it skips the cluster and checks that edge instead.
func TestDeployedChart(t *testing.T) {
	var base, token string
	if base = os.Getenv("VROS_E2E_BASE_URL"); base != "" {
		token = os.Getenv("VROS_E2E_ADMIN_TOKEN")
		if token == "" {
			t.Fatal("VROS_E2E_BASE_URL needs VROS_E2E_ADMIN_TOKEN")
		}
	} else {
		d := deploy(t)
		base, token = d.baseURL, d.adminToken
	}
	api := &client{base: base, http: &http.Client{Timeout: 15 * time.Second}}

	t.Run("edge alive and ready through the NodePort", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz"} {
			api.eventually(t, http.MethodGet, path, http.StatusOK, 2*time.Minute)
		}
	})

	t.Run("admin API refuses a missing token", func(t *testing.T) {
		status, body := api.do(t, http.MethodPost, "/admin/v1/accounts", nil, map[string]any{"name": "nobody"})
		if status != http.StatusUnauthorized {
			t.Fatalf("status %d: %s, want 401", status, body)
		}
	})

	var acct account
	t.Run("create an account", func(t *testing.T) {
		status, body := api.do(t, http.MethodPost, "/admin/v1/accounts",
			http.Header{"Authorization": {"Bearer " + token}},
			map[string]any{"name": fmt.Sprintf("e2e-%d", time.Now().Unix())})
		if status != http.StatusCreated {
			t.Fatalf("status %d: %s, want 201", status, body)
		}
		var created struct {
			Data account `json:"data"`
		}
		if err := json.Unmarshal(body, &created); err != nil {
			t.Fatalf("decoding %s: %v", body, err)
		}
		acct = created.Data
		if acct.BasicUser == "" || acct.BasicPassword == "" || acct.ServiceKey == "" || acct.ServicePass == "" ||
			acct.Key == "" || acct.Pass == "" || acct.OwnerToken == "" {
			t.Fatalf("account lacks credentials: %s", body)
		}
	})
	if acct.BasicUser == "" {
		t.FailNow()
	}

	code := fmt.Sprintf("E2E%06d", time.Now().Unix()%1_000_000)
	t.Run("create a property (interface A)", func(t *testing.T) {
		status, body := api.do(t, http.MethodPost, "/api/property", acct.interfaceA(), map[string]any{
			"action": "create", "property": validProperty(code),
		})
		var got struct {
			Code int `json:"code"`
			Data struct {
				PropertyID string `json:"property_id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("status %d, decoding %s: %v", status, body, err)
		}
		if status != http.StatusOK || got.Code != 200 || got.Data.PropertyID == "" {
			t.Fatalf("status %d body %s, want code 200 with data.property_id", status, body)
		}
	})

	t.Run("a property with a short name is refused, naming the field", func(t *testing.T) {
		p := validProperty(code + "X")
		p["name"] = "Too short"
		status, body := api.do(t, http.MethodPost, "/api/property", acct.interfaceA(), map[string]any{
			"action": "create", "property": p,
		})
		var got struct {
			Code   int `json:"code"`
			Errors []struct {
				Field string `json:"field"`
			} `json:"errors"`
		}
		_ = json.Unmarshal(body, &got)
		if status != http.StatusBadRequest || got.Code != 400 || len(got.Errors) == 0 || got.Errors[0].Field != "property.name" {
			t.Fatalf("status %d body %s, want 400 with errors[0].field property.name", status, body)
		}
	})

	t.Run("interface A refuses a wrong servicepass", func(t *testing.T) {
		h := acct.interfaceA()
		h.Set("servicepass", acct.ServicePass+"x")
		status, body := api.do(t, http.MethodPost, "/api/property", h, map[string]any{
			"action": "create", "property": validProperty(code + "Y"),
		})
		if status != http.StatusUnauthorized {
			t.Fatalf("status %d body %s, want 401", status, body)
		}
	})
}

// account is the data of POST /admin/v1/accounts: the tenant's three credential kinds.
type account struct {
	BasicUser     string `json:"basic_user"`
	BasicPassword string `json:"basic_password"`
	ServiceKey    string `json:"servicekey"`
	ServicePass   string `json:"servicepass"`
	Key           string `json:"key"`
	Pass          string `json:"pass"`
	OwnerToken    string `json:"owner_token"`
}

// interfaceA returns the headers of an interface A call: Basic credentials plus the service pair.
func (a account) interfaceA() http.Header {
	req, _ := http.NewRequest(http.MethodPost, "/", nil)
	req.SetBasicAuth(a.BasicUser, a.BasicPassword)
	h := http.Header{}
	h.Set("Authorization", req.Header.Get("Authorization"))
	h.Set("servicekey", a.ServiceKey)
	h.Set("servicepass", a.ServicePass)
	return h
}

// validProperty is an A1 property inside every bound of the specification.
func validProperty(internalCode string) map[string]any {
	return map[string]any{
		"internal_code": internalCode,
		"name":          "Seaside villa with pool and garden",
		"type":          "Villa",
		"maxguest":      6,
		"bedrooms":      3,
		"bathrooms":     2,
		"kitchens":      1,
		"floor":         "Ground",
		"space":         map[string]any{"value": 180, "unit": "meters"},
		"phone":         "351210000000",
		"address":       "Rua do Mar 1",
		"city":          "Cascais",
		"state":         "Lisboa",
		"postcode":      "2750-001",
		"country":       "PT",
		"latitude":      38.6979,
		"longitude":     -9.4215,
		"allowchildren": true,
		"allowpet":      false,
		"allowsmoking":  false,
	}
}

type client struct {
	base string
	http *http.Client
}

func (c *client) do(t *testing.T, method, path string, header http.Header, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// eventually retries until the path answers want: the NodePort and readiness take a moment.
func (c *client) eventually(t *testing.T, method, path string, want int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(method, c.base+path, nil)
		resp, err := c.http.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == want {
				return
			}
			last = fmt.Sprintf("status %d: %s", resp.StatusCode, b)
		} else {
			last = err.Error()
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("%s %s never answered %d within %s; last: %s", method, path, want, within, last)
}
