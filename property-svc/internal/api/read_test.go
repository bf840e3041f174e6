package api

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
)

// The reads of /api/property (get and list) through property-svc's HTTP app over the real
// store.

const propertyPath = "/internal/a/property"

// a1Body is an A1 body of action with the property's code, name and city.
func a1Body(action, code, name, city string) string {
	return `{"action":"` + action + `","property":{"internal_code":"` + code + `","name":"` + name + `","type":"Villa",
		"maxguest":6,"bedrooms":3,"bathrooms":2,"kitchens":1,"floor":"Ground","space":{"value":140,"unit":"meters"},
		"address":"1 Ocean Drive","city":"` + city + `","postcode":"33139","country":"US","latitude":25.79,"longitude":-80.13}}`
}

func createNamed(t *testing.T, app *fiber.App, acc, code, name string) string {
	t.Helper()
	status, out := call(t, app, acc, propertyPath, a1Body("create", code, name, "Miami Beach"))
	var a struct {
		Data struct {
			PropertyID string `json:"property_id"`
		} `json:"data"`
	}
	if status != 200 || json.Unmarshal(out, &a) != nil || a.Data.PropertyID == "" {
		t.Fatalf("create %s: %d %s", code, status, out)
	}
	return a.Data.PropertyID
}

// getProperty gets code as acc and decodes the answer's data.
func getProperty(t *testing.T, app *fiber.App, acc, code string) (int, []byte, contract.Property) {
	t.Helper()
	status, out := call(t, app, acc, propertyPath, `{"action":"get","property":{"internal_code":"`+code+`"}}`)
	var a struct {
		Data contract.Property `json:"data"`
	}
	if status == 200 {
		if err := json.Unmarshal(out, &a); err != nil {
			t.Fatalf("get %s: %v: %s", code, err, out)
		}
	}
	return status, out, a.Data
}

type listData struct {
	Total      int64 `json:"total"`
	Page       int   `json:"page"`
	Limit      int   `json:"limit"`
	Properties []struct {
		PropertyID   string    `json:"property_id"`
		InternalCode string    `json:"internal_code"`
		Name         string    `json:"name"`
		Type         string    `json:"type"`
		City         string    `json:"city"`
		Country      string    `json:"country"`
		MaxGuest     int       `json:"maxguest"`
		UpdatedAt    time.Time `json:"updated_at"`
	} `json:"properties"`
}

func (d listData) codes() []string {
	out := []string{}
	for _, p := range d.Properties {
		out = append(out, p.InternalCode)
	}
	return out
}

// listProperties lists as acc with the members of body (after the action).
func listProperties(t *testing.T, app *fiber.App, acc, members string) listData {
	t.Helper()
	body := `{"action":"list"` + members + `}`
	status, out := call(t, app, acc, propertyPath, body)
	var a struct {
		Data *listData `json:"data"`
	}
	if status != 200 || json.Unmarshal(out, &a) != nil || a.Data == nil || a.Data.Properties == nil {
		t.Fatalf("list %s: %d %s", body, status, out)
	}
	return *a.Data
}

// TestPropertyGet: get shows the live property as its events carry it, after create and
// after update, without account_id; another account's, a deleted and an unknown code are
// one 404.
func TestPropertyGet(t *testing.T) {
	app, st, acc := newServerStore(t)
	pid := createNamed(t, app, acc, "V1", "Seaside Villa with Garden")

	status, out, p := getProperty(t, app, acc, "V1")
	if status != 200 {
		t.Fatalf("get: %d %s", status, out)
	}
	want := []string{"account_id", "property_id", "internal_code", "version", "deleted", "created_at", "updated_at", "content",
		"photos", "policy", "rates", "methods", "taxes", "services", "amenities", "prices"}
	if got := keys(t, out, "data"); !slices.Equal(got, want) {
		t.Errorf("data keys %v\nwant %v", got, want)
	}
	if !strings.HasPrefix(string(out), `{"code":200,"data":{"account_id":"","property_id":`+pid+`,"internal_code":"V1","version":1,"deleted":false,`) {
		t.Errorf("answer %s", out)
	}
	c := p.Content
	if strconv.FormatInt(p.PropertyID, 10) != pid || c.Name != "Seaside Villa with Garden" || c.Type != "Villa" || c.MaxGuest != 6 ||
		c.City != "Miami Beach" || c.Country != "US" || c.SpaceValue != "140" || c.Latitude != "25.79" || c.Floor != "Ground" {
		t.Errorf("after create: %+v", p)
	}
	if p.Photos == nil || p.Taxes == nil || p.Services == nil || p.Policy != nil || p.Rates != nil || p.Methods != nil {
		t.Errorf("sections after create: %s", out)
	}

	upd := strings.Replace(a1Body("update", "V1", "Hillside House with a View", "Key West"), `"type":"Villa"`, `"type":"house"`, 1)
	upd = strings.Replace(upd, `"maxguest":6`, `"maxguest":4,"isfeatured":true,"timezone":"America/New_York"`, 1)
	if status, out := call(t, app, acc, propertyPath, upd); status != 200 {
		t.Fatalf("update: %d %s", status, out)
	}
	_, out, p = getProperty(t, app, acc, "V1")
	c = p.Content
	if p.Version != 2 || c.Name != "Hillside House with a View" || c.Type != "House" || c.City != "Key West" || c.MaxGuest != 4 ||
		!c.IsFeatured || c.Timezone != "America/New_York" || p.UpdatedAt.Before(p.CreatedAt) {
		t.Errorf("after update: %s", out)
	}
	// The answer is the event's data, but for account_id.
	msgs, err := st.Snapshot(t.Context(), acc+":"+pid)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("snapshot: %v %d", err, len(msgs))
	}
	var ev contract.Property
	if _, err := events.Decode(msgs[0].Value, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.AccountID != acc {
		t.Errorf("event account %q", ev.AccountID)
	}
	ev.AccountID = ""
	evJSON, _ := json.Marshal(ev)
	var answer struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(out, &answer); err != nil || string(answer.Data) != string(evJSON) {
		t.Errorf("get answers\n%s\nthe event carries (account_id blanked)\n%s", answer.Data, evJSON)
	}

	other := strconv.FormatInt(9_000_000+accounts.Add(1), 10)
	notFound := `{"code":404,"error_type":"not_found","error_message":"property with internal_code \"%s\" does not exist"}`
	for _, r := range []struct{ name, acc, code string }{
		{"another account's code", other, "V1"},
		{"an unknown code", acc, "NOPE"},
	} {
		if status, out, _ := getProperty(t, app, r.acc, r.code); status != 404 || string(out) != fmt.Sprintf(notFound, r.code) {
			t.Errorf("%s: %d %s", r.name, status, out)
		}
	}
	if status, out := call(t, app, acc, propertyPath, `{"action":"delete","property":{"internal_code":"V1"}}`); status != 200 {
		t.Fatalf("delete: %d %s", status, out)
	}
	if status, out, _ := getProperty(t, app, acc, "V1"); status != 404 || string(out) != fmt.Sprintf(notFound, "V1") {
		t.Errorf("deleted: %d %s", status, out)
	}
	// The code is free again: get shows the new property.
	pid2 := createNamed(t, app, acc, "V1", "Seaside Villa with Garden")
	if _, _, p := getProperty(t, app, acc, "V1"); strconv.FormatInt(p.PropertyID, 10) != pid2 || pid2 == pid || p.Version != 1 {
		t.Errorf("recreated: %+v", p)
	}
}

// TestPropertyGetShowsNoSecret: the payment methods appear with their public values only;
// no secret sent through /api/property-method is in the answer.
func TestPropertyGetShowsNoSecret(t *testing.T) {
	app, acc := newServer(t)
	createNamed(t, app, acc, "S1", "Seaside Villa with Garden")
	secrets := []string{"sk_live_STRIPE_SECRET_51Hx", "AUTHNET_LOGIN_77", "AUTHNET_TXKEY_88", "sk_OPENPAY_SECRET_99",
		"FIRSTDATA_ENCKEY_11", "NEXI_PASSWORD_22"}
	body := `{"internal_code":"S1",
		"stripe":{"secret_key":"` + secrets[0] + `","public_key":"pk_live_PUBLIC","description":"Cards"},
		"authorizenet":{"login_id":"` + secrets[1] + `","transaction_key":"` + secrets[2] + `"},
		"paypal":{"email":"owner@example.com"},
		"openpay":{"secret_key":"` + secrets[3] + `","open_key":"ok_PUBLIC"},
		"firstdata":{"gateway_id":"merchant-7","encryption_key":"` + secrets[4] + `"},
		"nexi":{"secure_3d":"true","merchant_id":"m1","password":"` + secrets[5] + `"},
		"cash":{"description":"Pay at the front desk"}}`
	if status, out := call(t, app, acc, "/internal/a/property-method", body); status != 200 {
		t.Fatalf("methods: %d %s", status, out)
	}
	status, out, p := getProperty(t, app, acc, "S1")
	if status != 200 || p.Methods == nil || len(p.Methods.Gateways) != 7 {
		t.Fatalf("get: %d %s", status, out)
	}
	for _, s := range secrets {
		if strings.Contains(string(out), s) {
			t.Errorf("the answer holds the secret %s: %s", s, out)
		}
	}
	if g := p.Methods.Gateways[0]; g.Provider != "stripe" || g.Description != "Cards" || len(g.Public) != 1 || g.Public["public_key"] != "pk_live_PUBLIC" {
		t.Errorf("stripe: %+v", g)
	}
	if !strings.Contains(string(out), `"public":{"open_key":"ok_PUBLIC"}`) {
		t.Errorf("openpay's public key missing: %s", out)
	}
}

// TestPropertyList: the account's live properties sorted by internal code, a page at a
// time; search matches internal code or name as text, ignoring case; deleted properties
// and other accounts' are never listed.
func TestPropertyList(t *testing.T) {
	app, acc := newServer(t)
	other := strconv.FormatInt(9_100_000+accounts.Add(1), 10)
	createNamed(t, app, other, "A0", "Other Account's Sea Villa")

	if d := listProperties(t, app, acc, ""); d.Total != 0 || d.Page != 1 || d.Limit != 50 || len(d.Properties) != 0 {
		t.Errorf("empty account: %+v", d)
	}
	status, out := call(t, app, acc, propertyPath, `{"action":"list"}`)
	if status != 200 || string(out) != `{"code":200,"data":{"total":0,"page":1,"limit":50,"properties":[]}}` {
		t.Errorf("empty list: %d %s", status, out)
	}

	names := map[string]string{
		"V10": "Seaside Villa with Garden", "B2": "Hillside House (1+1) View", "v3": "Lakeside Cabin in the Woods",
		"A1": "Beach Apartment on the Bay", "Z9": "Mountain Chalet near .* Slopes", "DEL": "Doomed Villa to Be Deleted",
	}
	ids := map[string]string{}
	for code, name := range names {
		ids[code] = createNamed(t, app, acc, code, name)
	}
	if status, out := call(t, app, acc, propertyPath, `{"action":"delete","property":{"internal_code":"DEL"}}`); status != 200 {
		t.Fatalf("delete: %d %s", status, out)
	}

	all := listProperties(t, app, acc, "")
	if want := []string{"A1", "B2", "V10", "Z9", "v3"}; all.Total != 5 || !slices.Equal(all.codes(), want) {
		t.Fatalf("list: total %d %v, want 5 %v", all.Total, all.codes(), want)
	}
	first := all.Properties[0]
	if first.PropertyID != ids["A1"] || first.Name != names["A1"] || first.Type != "Villa" || first.City != "Miami Beach" ||
		first.Country != "US" || first.MaxGuest != 6 || first.UpdatedAt.IsZero() || first.UpdatedAt.Location() != time.UTC {
		t.Errorf("item: %+v", first)
	}
	_, out = call(t, app, acc, propertyPath, `{"action":"list","limit":1}`)
	if got := keys(t, out, "data"); !slices.Equal(got, []string{"total", "page", "limit", "properties"}) {
		t.Errorf("data keys %v", got)
	}
	want := `{"code":200,"data":{"total":5,"page":1,"limit":1,"properties":[{"property_id":"` + ids["A1"] +
		`","internal_code":"A1","name":"Beach Apartment on the Bay","type":"Villa","city":"Miami Beach","country":"US","maxguest":6,"updated_at":"` +
		first.UpdatedAt.Format(time.RFC3339Nano) + `"}]}}`
	if string(out) != want {
		t.Errorf("answer %s\nwant   %s", out, want)
	}

	for _, r := range []struct {
		name, members string
		total         int64
		page, limit   int
		codes         []string
	}{
		{"page 1 of 2", `,"limit":2`, 5, 1, 2, []string{"A1", "B2"}},
		{"page 2 of 2", `,"limit":2,"page":2`, 5, 2, 2, []string{"V10", "Z9"}},
		{"last page", `,"limit":"2","page":"3"`, 5, 3, 2, []string{"v3"}},
		{"beyond the last page", `,"limit":2,"page":4`, 5, 4, 2, []string{}},
		{"far beyond", `,"limit":100,"page":9223372036854775807`, 5, 9223372036854775807, 100, []string{}},
		{"code or name, any case", `,"search":"v"`, 3, 1, 50, []string{"B2", "V10", "v3"}},
		{"code substring", `,"search":"10"`, 1, 1, 50, []string{"V10"}},
		{"name substring, any case", `,"search":"SIDE"`, 3, 1, 50, []string{"B2", "V10", "v3"}},
		{"name with regex metacharacters as text", `,"search":"(1+1)"`, 1, 1, 50, []string{"B2"}},
		{"dot star is text", `,"search":".*"`, 1, 1, 50, []string{"Z9"}},
		{"an unbalanced pattern is text", `,"search":"(["`, 0, 1, 50, []string{}},
		{"a pattern anchor is text", `,"search":"^A"`, 0, 1, 50, []string{}},
		{"NUL is text", `,"search":"a\u0000"`, 0, 1, 50, []string{}},
		{"a deleted property is not found", `,"search":"Doomed"`, 0, 1, 50, []string{}},
		{"another account's is not found", `,"search":"Other"`, 0, 1, 50, []string{}},
		{"search and page", `,"search":"side","limit":1,"page":2`, 3, 2, 1, []string{"V10"}},
		{"blank search is none", `,"search":"  "`, 5, 1, 50, []string{"A1", "B2", "V10", "Z9", "v3"}},
	} {
		t.Run(r.name, func(t *testing.T) {
			d := listProperties(t, app, acc, r.members)
			if d.Total != r.total || d.Page != r.page || d.Limit != r.limit || !slices.Equal(d.codes(), r.codes) {
				t.Errorf("total %d page %d limit %d %v; want %d %d %d %v", d.Total, d.Page, d.Limit, d.codes(), r.total, r.page, r.limit, r.codes)
			}
		})
	}
	if d := listProperties(t, app, other, ""); d.Total != 1 || !slices.Equal(d.codes(), []string{"A0"}) {
		t.Errorf("other account: %+v", d)
	}
}

// TestPropertyReadRules: the decoder's violations in the usual envelope.
func TestPropertyReadRules(t *testing.T) {
	app, acc := newServer(t)
	for _, r := range []struct{ body, want string }{
		{`{"action":"get"}`, `{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field: property is required","errors":[{"field":"property","message":"is required"}]}`},
		{`{"action":"get","property":{"internal_code":"ELEVENCHARS"}}`, `"errors":[{"field":"property.internal_code","message":"must be at most 10 characters"}]`},
		{`{"action":"list","page":1.5,"limit":0}`, `"errors":[{"field":"page","message":"must be a whole number"},{"field":"limit","message":"must be between 1 and 100"}]`},
		{`{"action":"list","search":"` + strings.Repeat("x", 101) + `"}`, `"errors":[{"field":"search","message":"must be at most 100 characters"}]`},
		{`{"action":"count"}`, `"errors":[{"field":"action","message":"must be one of create, update, delete, get, list"},{"field":"property","message":"is required"}]`},
	} {
		status, out := call(t, app, acc, propertyPath, r.body)
		if status != 400 || !strings.Contains(string(out), r.want) {
			t.Errorf("%s: %d %s\nwant %s", r.body, status, out, r.want)
		}
	}
}
