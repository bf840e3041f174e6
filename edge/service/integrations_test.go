package service

import (
	"net/http"
	"strings"
	"testing"
)

// TestAdminIntegrations: GET and PUT /admin/v1/accounts/{id}/integrations read and set the
// account's allow_private_targets in integration-svc (signed with the account's tenant); a
// change is audited with the old and new value, a PUT that changes nothing is not; a bad
// body is refused naming the field and reaches no service; an unknown account is 404; a
// failing integration-svc 502 naming it.
func TestAdminIntegrations(t *testing.T) {
	f := newFakeServices(t)
	e := start(t, f.cfg())
	acc := decodeIssued(t, e.admin(t, http.MethodPost, "/accounts", `{"name":"Hooks"}`))
	path := "/accounts/" + acc.AccountID + "/integrations"
	f.take()

	for _, tc := range []struct{ body, field, rule string }{
		{``, "body", ""},
		{`{}`, "allow_private_targets", "required"},
		{`{"allow_private_targets":"yes"}`, "allow_private_targets", "boolean"},
		{`{"allow_private_targets":1}`, "allow_private_targets", "boolean"},
		{`{"allow_private_targets":null}`, "allow_private_targets", ""},
		{`{"allow_private_targets":true,"allow_http":true}`, "allow_http", "not an integration setting"},
		{`[true]`, "body", ""},
	} {
		a := e.admin(t, http.MethodPut, path, tc.body)
		if a.code != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d, want 400: %s", tc.body, a.code, a.body)
			continue
		}
		if _, msg := aError(t, a); !strings.Contains(msg, tc.field) || !strings.Contains(msg, tc.rule) {
			t.Errorf("%s: message %q does not name %s (%s)", tc.body, msg, tc.field, tc.rule)
		}
	}
	if got := f.take(); len(got) != 0 {
		t.Errorf("refused requests reached the services: %v", got)
	}

	want := func(a answer, allow bool) {
		t.Helper()
		w := `{"code":200,"data":{"allow_private_targets":false}}`
		if allow {
			w = `{"code":200,"data":{"allow_private_targets":true}}`
		}
		if a.code != http.StatusOK || string(a.body) != w {
			t.Fatalf("HTTP %d: %s, want %s", a.code, a.body, w)
		}
	}
	want(e.admin(t, http.MethodGet, path, ""), false)
	want(e.admin(t, http.MethodPut, path, `{"allow_private_targets":true}`), true)
	want(e.admin(t, http.MethodGet, path, ""), true)
	want(e.admin(t, http.MethodPut, path, `{"allow_private_targets":true}`), true) // no change
	got := f.take()
	wantCalls := []string{
		"integration-svc GET /internal/account/integrations? account=" + acc.AccountID + " body=",
		"integration-svc GET /internal/account/integrations? account=" + acc.AccountID + " body=",
		"integration-svc PUT /internal/account/integrations? account=" + acc.AccountID + ` body={"allow_private_targets":true}`,
		"integration-svc GET /internal/account/integrations? account=" + acc.AccountID + " body=",
		"integration-svc GET /internal/account/integrations? account=" + acc.AccountID + " body=",
		"integration-svc PUT /internal/account/integrations? account=" + acc.AccountID + ` body={"allow_private_targets":true}`,
	}
	if strings.Join(got, "\n") != strings.Join(wantCalls, "\n") {
		t.Errorf("integration-svc got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantCalls, "\n"))
	}
	audit := string(e.admin(t, http.MethodGet, "/audit?account="+acc.AccountID, "").body)
	if n := strings.Count(audit, `"action":"integrations"`); n != 1 {
		t.Errorf("%d integrations audit records, want 1 (the change only): %s", n, audit)
	}
	if !strings.Contains(audit, `"action":"integrations","changes":[{"field":"allow_private_targets","old":false,"new":true}]`) {
		t.Errorf("no audit record of the change: %s", audit)
	}

	for _, m := range []string{http.MethodGet, http.MethodPut} {
		if a := e.admin(t, m, "/accounts/999999/integrations", `{"allow_private_targets":true}`); a.code != http.StatusNotFound {
			t.Errorf("%s unknown account: HTTP %d, want 404: %s", m, a.code, a.body)
		}
	}
	f.mu.Lock()
	f.down["integration-svc"] = true
	f.mu.Unlock()
	badGateway(t, e.admin(t, http.MethodGet, path, ""), "integration-svc")
	badGateway(t, e.admin(t, http.MethodPut, path, `{"allow_private_targets":false}`), "integration-svc")
	if n := strings.Count(string(e.admin(t, http.MethodGet, "/audit?account="+acc.AccountID, "").body), `"action":"integrations"`); n != 1 {
		t.Errorf("a failed change was audited: %d records", n)
	}
}

// TestAdminChannels: GET /admin/v1/accounts/{id}/channels reads the account's channel
// connections from integration-svc (signed with the account's tenant) and answers them with
// their mapping counts and open conflicts, never a credential; an unknown account is 404, a
// failing integration-svc 502 naming it.
func TestAdminChannels(t *testing.T) {
	f := newFakeServices(t)
	e := start(t, f.cfg())
	acc := decodeIssued(t, e.admin(t, http.MethodPost, "/accounts", `{"name":"Channels"}`))
	path := "/accounts/" + acc.AccountID + "/channels"
	f.take()
	a := e.admin(t, http.MethodGet, path, "")
	want := `{"code":200,"data":{"account_id":"` + acc.AccountID + `","connections":[{"connection_id":4,"adapter":"channex",` +
		`"endpoint":"https://cm.example/","channel":"bookingcom","enabled":true,"days":500,"credentials_set":true,"mappings":2,` +
		`"open_conflicts":1,"created_at":"2027-01-02T03:04:05Z","updated_at":"2027-01-02T03:04:06Z"}]}}`
	if a.code != http.StatusOK || string(a.body) != want {
		t.Fatalf("HTTP %d: %s\nwant %s", a.code, a.body, want)
	}
	if got := f.take(); len(got) != 1 || got[0] != "integration-svc GET /internal/account/channels? account="+acc.AccountID+" body=" {
		t.Errorf("integration-svc got %v", got)
	}
	if a := e.admin(t, http.MethodGet, "/accounts/999999/channels", ""); a.code != http.StatusNotFound {
		t.Errorf("unknown account: HTTP %d, want 404: %s", a.code, a.body)
	}
	f.mu.Lock()
	f.down["integration-svc"] = true
	f.mu.Unlock()
	badGateway(t, e.admin(t, http.MethodGet, path, ""), "integration-svc")
}
