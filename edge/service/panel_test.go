package service

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestAdminCreatesPanelUsers: POST /admin/v1/panel-users — each rule named by its field, an
// unknown account 404, an email taken 409 (in any case), and without a password an invite
// link that the panel opens.
func TestAdminCreatesPanelUsers(t *testing.T) {
	e := start(t, Config{PublicURL: "https://api.example.com", PanelPasswordCost: 4})
	acc := decodeIssued(t, e.admin(t, http.MethodPost, "/accounts", `{"name":"Owner"}`))
	for _, c := range []struct{ name, body, field string }{
		{"no email", `{"role":"operator","password":"a long password"}`, "email"},
		{"bad email", `{"email":"nobody","role":"operator","password":"a long password"}`, "email"},
		{"no role", `{"email":"a@example.com","password":"a long password"}`, "role"},
		{"unknown role", `{"email":"a@example.com","role":"admin","password":"a long password"}`, "role"},
		{"owner without account", `{"email":"a@example.com","role":"owner","password":"a long password"}`, "account_id"},
		{"operator with account", `{"email":"a@example.com","role":"operator","account_id":"` + acc.AccountID + `","password":"a long password"}`, "account_id"},
		{"short password", `{"email":"a@example.com","role":"operator","password":"short"}`, "password"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := e.admin(t, http.MethodPost, "/panel-users", c.body)
			if a.code != http.StatusBadRequest || !strings.Contains(string(a.body), `"field":"`+c.field+`"`) {
				t.Fatalf("HTTP %d, want 400 naming %s: %s", a.code, c.field, a.body)
			}
		})
	}
	if a := e.admin(t, http.MethodPost, "/panel-users", `{"email":"o@example.com","role":"owner","account_id":"999999"}`); a.code != http.StatusNotFound {
		t.Fatalf("unknown account: HTTP %d: %s", a.code, a.body)
	}
	if a := e.admin(t, http.MethodPost, "/panel-users", `{"email":"ops@example.com","role":"operator","password":"a long password"}`); a.code != http.StatusCreated {
		t.Fatalf("operator: HTTP %d: %s", a.code, a.body)
	}
	if a := e.admin(t, http.MethodPost, "/panel-users", `{"email":"OPS@example.com","role":"operator","password":"a long password"}`); a.code != http.StatusConflict {
		t.Fatalf("same email: HTTP %d: %s", a.code, a.body)
	}
	a := e.admin(t, http.MethodPost, "/panel-users", `{"email":"owner@example.com","role":"owner","account_id":"`+acc.AccountID+`"}`)
	var out struct {
		Data struct {
			InviteURL string `json:"invite_url"`
		} `json:"data"`
	}
	if a.code != http.StatusCreated || json.Unmarshal(a.body, &out) != nil || !strings.HasPrefix(out.Data.InviteURL, "https://api.example.com/panel/invite/") {
		t.Fatalf("invite: HTTP %d: %s", a.code, a.body)
	}
	page := e.send(t, http.MethodGet, strings.TrimPrefix(out.Data.InviteURL, "https://api.example.com"), nil, "")
	if page.code != http.StatusOK || !strings.Contains(string(page.body), "owner@example.com") {
		t.Fatalf("invite page: HTTP %d", page.code)
	}
}
