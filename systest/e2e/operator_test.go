package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// operator sends an admin API request with the stack's admin token.
func operator(t *testing.T, method, path, body string) response {
	t.Helper()
	return do(t, method, "/admin/v1"+path, map[string]string{"Authorization": "Bearer " + adminToken, "Content-Type": "application/json"}, body)
}

// credentialUses are one request per credential kind of acc, each answered by a service
// when acc is active: interface A (an update of its property code) with the Basic+service
// pair and with the 365villas pair (the B key/pass), interface B with the key/pass, and an
// owner-token read.
func credentialUses(acc account, code string) map[string]func(t *testing.T) response {
	update := obj{"action": "update", "property": validProperty(code)}
	villas := map[string]string{
		"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(acc.BasicUser+":"+acc.BasicPassword)),
		"365villaskey":  acc.Key, "365villaspass": acc.Pass, "Content-Type": "application/json",
	}
	return map[string]func(t *testing.T) response{
		"basic+service": func(t *testing.T) response { return acc.a(t, "property", update) },
		"365villas": func(t *testing.T) response {
			return do(t, http.MethodPost, "/api/property", villas, jsonText(update))
		},
		"key": func(t *testing.T) response { return acc.b(t, "listcountry", nil) },
		"owner_token": func(t *testing.T) response {
			return do(t, http.MethodGet, "/vros/api/default-config/owner_token/"+acc.OwnerToken, nil, "")
		},
	}
}

// suspendedRefusal asserts r refuses a suspended account's credential: interface A's 401
// envelope, or interface B's status 2 on HTTP 200, with a message saying so.
func suspendedRefusal(t *testing.T, kind string, r response) {
	t.Helper()
	var msg string
	if r.Code == http.StatusUnauthorized {
		msg = r.aError(t).ErrorMessage
	} else {
		msg = r.wantStatus(t, 2).Message
	}
	if msg != "account suspended" {
		t.Errorf("%s: refused with %q, want a message saying the account is suspended", kind, msg)
	}
}

func accepted(t *testing.T, kind string, r response) {
	t.Helper()
	if r.Code != http.StatusOK || bStatus(r.Body) > 0 {
		t.Errorf("%s: HTTP %d %s, want the service's answer", kind, r.Code, r.Body)
	}
}

// TestOperatorSuspension: through edge and the services, a suspended account's every
// credential kind is refused saying so, its data is kept, and reinstated it works again.
func TestOperatorSuspension(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := createProperty(t, acc, "OPS1")
	uses := credentialUses(acc, "OPS1")
	for kind, use := range uses {
		accepted(t, kind, use(t))
	}
	r := operator(t, http.MethodPost, "/accounts/"+acc.AccountID+"/suspend", "")
	r.status(t, http.StatusOK)
	if !strings.Contains(string(r.Body), `"status":"suspended"`) {
		t.Fatalf("suspend answered %s", r.Body)
	}
	for kind, use := range uses {
		suspendedRefusal(t, kind, use(t))
	}
	r = operator(t, http.MethodGet, "/accounts?status=suspended&q="+acc.AccountID, "")
	r.status(t, http.StatusOK)
	if !strings.Contains(string(r.Body), `"account_id":"`+acc.AccountID+`"`) {
		t.Errorf("the suspended account is not listed as suspended: %s", r.Body)
	}
	operator(t, http.MethodPost, "/accounts/"+acc.AccountID+"/reinstate", "").status(t, http.StatusOK)
	for kind, use := range uses {
		accepted(t, kind, use(t))
	}
	// Its data was kept.
	if doc := stored(t, acc.AccountID, pid); doc == nil {
		t.Fatal("the property is gone after suspension")
	}
}

// TestOperatorPlanAndAudit: a plan round-trips through the admin API and shows on the
// account; the audit log lists every change with the admin token's fingerprint and holds
// none of the credentials given out (in its answer or in vros_edge.audit).
func TestOperatorPlanAndAudit(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	secrets := []string{acc.BasicUser, acc.BasicPassword, acc.ServiceKey, acc.ServicePass, acc.Key, acc.Pass, acc.OwnerToken}
	path := "/accounts/" + acc.AccountID
	set := `{"rate_rps":25,"rate_burst":50,"max_concurrent":4,"body_limit":2048,"max_properties":10}`
	r := operator(t, http.MethodPost, path+"/plan", set)
	r.status(t, http.StatusOK)
	var plan struct {
		Data map[string]float64 `json:"data"`
	}
	r.decode(t, &plan)
	want := map[string]float64{"rate_rps": 25, "rate_burst": 50, "max_concurrent": 4, "body_limit": 2048, "max_properties": 10}
	if fmt.Sprint(plan.Data) != fmt.Sprint(want) {
		t.Fatalf("plan %v, want %v", plan.Data, want)
	}
	operator(t, http.MethodPost, path+"/plan", `{"rate_burst":-5}`).wantViolation(t, "rate_burst", "")
	var got struct {
		Data struct {
			Plan map[string]float64 `json:"plan"`
		} `json:"data"`
	}
	operator(t, http.MethodGet, path, "").decode(t, &got)
	if fmt.Sprint(got.Data.Plan) != fmt.Sprint(want) {
		t.Fatalf("account's plan %v after a refused change, want %v", got.Data.Plan, want)
	}
	operator(t, http.MethodPost, path+"/plan", `{"rate_rps":0,"rate_burst":0,"max_concurrent":0,"body_limit":0,"max_properties":0}`).status(t, http.StatusOK)

	for _, kinds := range []string{`["basic"]`, `["service"]`, `["key"]`, `["owner_token"]`} {
		r := operator(t, http.MethodPost, path+"/rotate", `{"credentials":`+kinds+`}`)
		r.status(t, http.StatusOK)
		var rotated struct {
			Data account `json:"data"`
		}
		r.decode(t, &rotated)
		d := rotated.Data
		secrets = append(secrets, d.BasicUser, d.BasicPassword, d.ServiceKey, d.ServicePass, d.Key, d.Pass, d.OwnerToken)
	}
	operator(t, http.MethodPost, path+"/suspend", "").status(t, http.StatusOK)
	operator(t, http.MethodPost, path+"/reinstate", "").status(t, http.StatusOK)

	r = operator(t, http.MethodGet, "/audit?limit=500&account="+acc.AccountID, "")
	r.status(t, http.StatusOK)
	var audit struct {
		Data struct {
			Records []struct {
				Action string `json:"action"`
				Actor  string `json:"actor"`
			} `json:"records"`
		} `json:"data"`
	}
	r.decode(t, &audit)
	var actions []string
	for _, rec := range audit.Data.Records {
		actions = append(actions, rec.Action)
		if len(rec.Actor) != 8 || strings.Contains(adminToken, rec.Actor) {
			t.Errorf("%s: actor %q, want the admin token's 8-digit fingerprint", rec.Action, rec.Actor)
		}
	}
	wantActions := "reinstate,suspend,rotate,rotate,rotate,rotate,plan,plan,create"
	if strings.Join(actions, ",") != wantActions {
		t.Errorf("audit actions %v, want %s", actions, wantActions)
	}
	cur, err := mongoDB.Database("vros_edge").Collection("audit").Find(context.Background(), bson.D{{Key: "account_id", Value: acc.AccountID}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	raw := fmt.Sprint(docs) // each document as extended JSON
	for _, s := range secrets {
		if s == "" {
			continue
		}
		if strings.Contains(string(r.Body), s) || strings.Contains(raw, s) {
			t.Errorf("the audit log holds a credential given out (%s…)", s[:4])
		}
	}
	if len(docs) != len(audit.Data.Records) {
		t.Errorf("%d stored records, %d answered", len(docs), len(audit.Data.Records))
	}
}
