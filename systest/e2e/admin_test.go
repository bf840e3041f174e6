package e2e

import (
	"net/http"
	"testing"
)

func TestAdminAccounts(t *testing.T) {
	t.Parallel()
	admin := map[string]string{"Authorization": "Bearer " + adminToken}
	for _, h := range []map[string]string{{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic " + adminToken}} {
		r := do(t, http.MethodPost, "/admin/v1/accounts", h, `{}`)
		r.status(t, http.StatusUnauthorized)
		r.aError(t)
	}
	acc := newAccount(t)
	createProperty(t, acc, "ADM1")

	r := do(t, http.MethodGet, "/admin/v1/accounts/"+acc.AccountID, admin, "")
	r.status(t, http.StatusOK)
	var got struct {
		Data struct {
			AccountID string `json:"account_id"`
			Status    string `json:"status"`
		} `json:"data"`
	}
	r.decode(t, &got)
	if got.Data.AccountID != acc.AccountID || got.Data.Status != "active" {
		t.Fatalf("get account: %s", r.Body)
	}
	do(t, http.MethodGet, "/admin/v1/accounts/999999", admin, "").status(t, http.StatusNotFound)
	do(t, http.MethodPost, "/admin/v1/accounts", admin, `{"name":`+string(mustJSON(string(make([]byte, 101))))+`}`).wantViolation(t, "name", "at most 100")

	// Rotating the interface A pair: old credentials stop working at once, new ones work.
	r = do(t, http.MethodPost, "/admin/v1/accounts/"+acc.AccountID+"/rotate", admin, `{"credentials":["basic","service"]}`)
	r.status(t, http.StatusOK)
	var rotated struct {
		Data account `json:"data"`
	}
	r.decode(t, &rotated)
	if rotated.Data.BasicPassword == "" || rotated.Data.Key != "" {
		t.Fatalf("rotate answered %s", r.Body)
	}
	acc.a(t, "property", obj{"action": "update", "property": validProperty("ADM1")}).status(t, http.StatusUnauthorized)
	fresh := acc
	fresh.BasicUser, fresh.BasicPassword = rotated.Data.BasicUser, rotated.Data.BasicPassword
	fresh.ServiceKey, fresh.ServicePass = rotated.Data.ServiceKey, rotated.Data.ServicePass
	fresh.a(t, "property", obj{"action": "update", "property": validProperty("ADM1")}).status(t, http.StatusOK)
	do(t, http.MethodPost, "/admin/v1/accounts/"+acc.AccountID+"/rotate", admin, `{"credentials":["root"]}`).wantViolation(t, "credentials[0]", "basic, service, key, owner_token")

	// Revoked accounts are refused on every interface; reinstated ones work again.
	do(t, http.MethodPost, "/admin/v1/accounts/"+acc.AccountID+"/revoke", admin, "").status(t, http.StatusOK)
	r = fresh.a(t, "property", obj{"action": "update", "property": validProperty("ADM1")})
	r.status(t, http.StatusUnauthorized)
	if e := r.aError(t); e.ErrorMessage != "account suspended" {
		t.Fatalf("revoked: %s", r.Body)
	}
	do(t, http.MethodPost, "/vros/external-booking", nil, `{"key":"`+acc.Key+`","pass":"`+acc.Pass+`","action":"listcountry"}`).wantStatus(t, 2)
	do(t, http.MethodPost, "/admin/v1/accounts/"+acc.AccountID+"/reinstate", admin, "").status(t, http.StatusOK)
	fresh.a(t, "property", obj{"action": "update", "property": validProperty("ADM1")}).status(t, http.StatusOK)

	r = do(t, http.MethodGet, "/admin/v1/accounts?limit=500", admin, "")
	r.status(t, http.StatusOK)
	do(t, http.MethodGet, "/admin/v1/accounts?limit=0", admin, "").wantViolation(t, "limit", "between 1 and 500")
}
