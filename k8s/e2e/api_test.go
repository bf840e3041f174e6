//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"
)

// TestDeployedChart runs the API checks through edge's NodePort on the cluster TestMain
// deployed. With VROS_E2E_BASE_URL set there is no cluster: it checks that edge instead.
func TestDeployedChart(t *testing.T) {
	var base, token string
	if base = os.Getenv("VROS_E2E_BASE_URL"); base != "" {
		token = os.Getenv("VROS_E2E_ADMIN_TOKEN")
		if token == "" {
			t.Fatal("VROS_E2E_BASE_URL needs VROS_E2E_ADMIN_TOKEN")
		}
	} else {
		d := needCluster(t)
		base, token = d.baseURL, d.adminToken
	}
	api := newClient(base)

	t.Run("edge keeps /healthz and /readyz off the NodePort", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
			api.eventually(t, http.MethodGet, path, http.StatusNotFound, 2*time.Minute)
		}
	})
	t.Run("edge alive and ready on its internal port", func(t *testing.T) {
		if base := os.Getenv("VROS_E2E_BASE_URL"); base != "" {
			t.Skip("no cluster to port-forward to")
		}
		d := needCluster(t)
		pods := d.waitServingPods(t, "edge", 1, 2*time.Minute)
		if pods[0].internalPort == 0 {
			t.Fatalf("pod %s has no container port named internal", pods[0].name)
		}
		internal := newClient(d.portForward(t, pods[0].name, pods[0].internalPort))
		for _, path := range []string{"/healthz", "/readyz"} {
			internal.eventually(t, http.MethodGet, path, http.StatusOK, 2*time.Minute)
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
		acct = api.newAccount(t, token, fmt.Sprintf("e2e-%d", time.Now().Unix()))
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
