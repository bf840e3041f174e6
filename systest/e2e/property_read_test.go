package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/together"
)

// /api/property get and list (docs/interface-a.md, "Extensions") through edge: every answer
// is also checked against the OpenAPI document by the suite's client.

type propertyPage struct {
	Total      int64 `json:"total"`
	Page       int   `json:"page"`
	Limit      int   `json:"limit"`
	Properties []struct {
		PropertyID   string `json:"property_id"`
		InternalCode string `json:"internal_code"`
		Name         string `json:"name"`
		Type         string `json:"type"`
		City         string `json:"city"`
		Country      string `json:"country"`
		MaxGuest     int    `json:"maxguest"`
		UpdatedAt    string `json:"updated_at"`
	} `json:"properties"`
}

// ids is the page's property ids by internal code, in the page's order.
func (p propertyPage) ids() []string {
	out := []string{}
	for _, x := range p.Properties {
		out = append(out, x.InternalCode+"="+x.PropertyID)
	}
	return out
}

func listOf(t *testing.T, acc account, body obj) propertyPage {
	t.Helper()
	body["action"] = "list"
	r := acc.a(t, "property", body)
	r.status(t, http.StatusOK)
	var out struct {
		Data propertyPage `json:"data"`
	}
	r.decode(t, &out)
	return out.Data
}

func getOf(t *testing.T, acc account, code string) (response, contract.Property) {
	t.Helper()
	r := acc.a(t, "property", obj{"action": "get", "property": obj{"internal_code": code}})
	var out struct {
		Data contract.Property `json:"data"`
	}
	if r.Code == http.StatusOK {
		r.decode(t, &out)
	}
	return r, out.Data
}

func TestPropertyRead(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	p2 := validProperty("R2")
	p2["name"], p2["type"], p2["city"], p2["maxguest"] = "Hillside House (1+1) View", "house", "Key West", 4
	r := acc.a(t, "property", obj{"action": "create", "property": p2})
	r.status(t, http.StatusOK)
	id1 := createProperty(t, acc, "R1")
	var created struct {
		Data struct {
			PropertyID string `json:"property_id"`
		} `json:"data"`
	}
	r.decode(t, &created)
	id2 := created.Data.PropertyID
	const secret = "sk_live_E2E_READ_SECRET_4242"
	acc.a(t, "property-method", obj{"internal_code": "R1",
		"stripe": obj{"secret_key": secret, "public_key": "pk_live_e2e_read", "description": "Cards"}}).status(t, http.StatusOK)

	// get: the property as created, its payment method without the secret.
	r, p := getOf(t, acc, "R1")
	r.status(t, http.StatusOK)
	if strconv.FormatInt(p.PropertyID, 10) != id1 || p.InternalCode != "R1" || p.AccountID != "" || p.Deleted || p.Version != 2 ||
		p.Content.Name != "Seaside Villa with Garden" || p.Content.City != "Miami Beach" || p.Content.Country != "US" || p.Content.Floor != "Ground" {
		t.Errorf("get R1: %s", r.Body)
	}
	if strings.Contains(string(r.Body), secret) {
		t.Errorf("get shows the Stripe secret key: %s", r.Body)
	}
	if p.Methods == nil || len(p.Methods.Gateways) != 1 || p.Methods.Gateways[0].Public["public_key"] != "pk_live_e2e_read" {
		t.Errorf("payment methods: %s", r.Body)
	}
	if r, p := getOf(t, acc, "R2"); r.Code != http.StatusOK || strconv.FormatInt(p.PropertyID, 10) != id2 || p.Content.Type != "House" || p.Content.MaxGuest != 4 {
		t.Errorf("get R2: %d %s", r.Code, r.Body)
	}

	// list: both, sorted by internal code; a page; a search.
	want := []string{"R1=" + id1, "R2=" + id2}
	if l := listOf(t, acc, obj{}); l.Total != 2 || l.Page != 1 || l.Limit != 50 || !slices.Equal(l.ids(), want) {
		t.Errorf("list: %+v, want %v", l, want)
	} else if x := l.Properties[1]; x.Name != "Hillside House (1+1) View" || x.Type != "House" || x.City != "Key West" || x.Country != "US" ||
		x.MaxGuest != 4 || x.UpdatedAt == "" {
		t.Errorf("list item: %+v", x)
	}
	if l := listOf(t, acc, obj{"page": "2", "limit": "1"}); l.Total != 2 || !slices.Equal(l.ids(), want[1:]) {
		t.Errorf("page 2 of 1: %+v", l)
	}
	for _, c := range []struct {
		search string
		want   []string
	}{
		{"r1", want[:1]},
		{"hillside", want[1:]},
		{"(1+1)", want[1:]}, // regular-expression characters are text
		{".*", []string{}},
		{"([", []string{}},
		{"a\x00b", []string{}}, // NUL, which a pattern may not hold, is text too
	} {
		if l := listOf(t, acc, obj{"search": c.search}); !slices.Equal(l.ids(), c.want) || l.Total != int64(len(c.want)) {
			t.Errorf("search %q: %+v, want %v", c.search, l, c.want)
		}
	}
	acc.a(t, "property", obj{"action": "list", "limit": 101}).wantViolation(t, "limit", "must be between 1 and 100")
	acc.a(t, "property", obj{"action": "list", "page": 1.5}).wantViolation(t, "page", "must be a whole number")
	acc.a(t, "property", obj{"action": "get"}).wantViolation(t, "property", "is required")

	// Another account sees none of them.
	if l := listOf(t, other, obj{}); l.Total != 0 || len(l.Properties) != 0 {
		t.Errorf("the other account lists %+v", l)
	}
	for _, code := range []string{"R1", "R2"} {
		r, _ := getOf(t, other, code)
		r.status(t, http.StatusNotFound)
		if e := r.aError(t); e.ErrorMessage != fmt.Sprintf("property with internal_code %q does not exist", code) {
			t.Errorf("other account's get %s: %s", code, r.Body)
		}
	}

	// The other account's own R1 (same code, another property), and 8 clients of the two
	// accounts reading at once: each sees its own only.
	otherID := createProperty(t, other, "R1")
	otherWant := []string{"R1=" + otherID}
	clients := []struct {
		acc  account
		want []string
	}{{acc, want}, {other, otherWant}}
	together.Run(8, func(i int) {
		c := clients[i%2]
		for n := range 6 {
			if n%2 == 0 {
				r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/api/property", c.acc.AHeaders(),
					`{"action":"get","property":{"internal_code":"R1"}}`)
				wantID := `"property_id":` + strings.TrimPrefix(c.want[0], "R1=") + `,`
				if err != nil || r.Code != http.StatusOK || !strings.Contains(string(r.Body), wantID) || strings.Contains(string(r.Body), secret) {
					t.Errorf("client %d get: %v %d %.300s", i, err, r.Code, r.Body)
				}
				continue
			}
			r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/api/property", c.acc.AHeaders(), `{"action":"list"}`)
			var out struct {
				Data propertyPage `json:"data"`
			}
			if err != nil || r.Code != http.StatusOK {
				t.Errorf("client %d list: %v %d %.300s", i, err, r.Code, r.Body)
				continue
			}
			if err := json.Unmarshal(r.Body, &out); err != nil {
				t.Errorf("client %d list: %v %.300s", i, err, r.Body)
				continue
			}
			if got := out.Data.ids(); !slices.Equal(got, c.want) || out.Data.Total != int64(len(c.want)) {
				t.Errorf("client %d lists %v (total %d), want %v", i, got, out.Data.Total, c.want)
			}
		}
	})
}
