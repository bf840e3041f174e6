package e2e

// Drop-in compatibility at edge (issue #11): requests as the original's public docs and its
// PHP clients send them — interface A's 365villaskey/365villaspass headers in base64, form and
// multipart bodies on both interfaces, JSON under a form content type, interface B's errors
// on HTTP 200, and owner-token reads by GET and POST with the property id in the path, the
// query or the body. Answers are read the way PHP clients read them: json_decode, then fields
// by name or the first value (pos()/reset()).

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vros/vros/testkit/phpjson"
)

// applicationStatus reports whether an interface B status is an application outcome, which
// edge answers on HTTP 200; 48, 56, 72 and 500 are transport failures and keep their code.
func applicationStatus(status int) bool {
	switch status {
	case 48, 56, 72, 500:
		return false
	}
	return true
}

// bStatus is the status of an interface B envelope (-1 when body is not one).
func bStatus(body []byte) int {
	var a struct {
		Status *int `json:"status"`
	}
	if json.Unmarshal(body, &a) != nil || a.Status == nil {
		return -1
	}
	return *a.Status
}

// bError reports whether a read's answer is interface B's error envelope ({status ≠ 0,
// message[, errors]} and nothing else) rather than the read's own object.
func bError(body []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	for k := range m {
		if k != "status" && k != "message" && k != "errors" {
			return false
		}
	}
	_, hasMessage := m["message"]
	return hasMessage && bStatus(body) > 0
}

// phpPairs flattens v as PHP's http_build_query does: nested keys in bracket notation,
// true/false as "1"/"0", null left out, every value a string.
func phpPairs(prefix string, v any, out *[][2]string) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			name := k
			if prefix != "" {
				name = prefix + "[" + k + "]"
			}
			phpPairs(name, x[k], out)
		}
	case []obj:
		for i, e := range x {
			phpPairs(prefix+"["+strconv.Itoa(i)+"]", e, out)
		}
	case []any:
		for i, e := range x {
			phpPairs(prefix+"["+strconv.Itoa(i)+"]", e, out)
		}
	case bool:
		*out = append(*out, [2]string{prefix, map[bool]string{true: "1", false: "0"}[x]})
	case nil:
	default:
		*out = append(*out, [2]string{prefix, fmt.Sprint(x)})
	}
}

// phpForm is v as the form body http_build_query writes.
func phpForm(v obj) string {
	var pairs [][2]string
	phpPairs("", v, &pairs)
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = url.QueryEscape(p[0]) + "=" + url.QueryEscape(p[1])
	}
	return strings.Join(parts, "&")
}

// phpMultipart is v as PHP curl sends an array body (multipart/form-data), with files as
// file parts; it returns the body and its content type.
func phpMultipart(t *testing.T, v obj, files map[string][]byte) (string, string) {
	t.Helper()
	var pairs [][2]string
	phpPairs("", v, &pairs)
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range pairs {
		if err := w.WriteField(p[0], p[1]); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range files {
		fw, err := w.CreateFormFile(name, "upload.png")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String(), w.FormDataContentType()
}

const formType = "application/x-www-form-urlencoded"

// phpRead decodes an answer as json_decode($body, true) does and returns it with its keys
// in order (what pos()/reset() see first).
func phpRead(t *testing.T, r response) (map[string]any, []string) {
	t.Helper()
	if r.Code != http.StatusOK {
		t.Fatalf("HTTP %d (a PHP client sees no answer): %s", r.Code, r.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("json_decode fails on %s: %v", r.Body, err)
	}
	keys, err := phpjson.Keys(r.Body)
	if err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, r.Body)
	}
	return m, keys
}

// bSuccess asserts what PHP clients test: HTTP 200 and message "Success" (status 0).
func bSuccess(t *testing.T, r response) map[string]any {
	t.Helper()
	m, keys := phpRead(t, r)
	if m["message"] != "Success" || m["status"] != float64(0) || len(keys) == 0 || keys[0] != "status" {
		t.Fatalf("not a success as a PHP client reads it (keys %v): %s", keys, r.Body)
	}
	data, _ := m["data"].(map[string]any)
	return data
}

// bFailure asserts an interface B error read from an HTTP 200 body: status and a message to
// show the guest.
func bFailure(t *testing.T, r response, status int) string {
	t.Helper()
	m, _ := phpRead(t, r)
	msg, _ := m["message"].(string)
	if m["status"] != float64(status) || msg == "" || msg == "Success" {
		t.Fatalf("want status %d with a message on HTTP 200: %s", status, r.Body)
	}
	return msg
}

var docsPropertyID = regexp.MustCompile(`^\{"code":200,"data":\{"property_id":"[0-9]+"\}\}$`)

// TestCompatEdgeInterfaceA: the docs' property-create example (HTTP Basic plus
// 365villaskey/365villaspass carrying the interface B key/pass in base64), a form body, a
// form body carrying the service pair, and a multipart photo upload.
func TestCompatEdgeInterfaceA(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(acc.BasicUser+":"+acc.BasicPassword))
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

	t.Run("docs example with 365villas headers in base64", func(t *testing.T) {
		r := do(t, http.MethodPost, "/api/property", map[string]string{"Authorization": basic, "Content-Type": "application/json",
			"365villaskey": b64(acc.Key), "365villaspass": b64(acc.Pass)}, jsonText(obj{"action": "create", "property": validProperty("CE1")}))
		if r.Code != http.StatusOK || !docsPropertyID.Match(r.Body) {
			t.Fatalf("HTTP %d %s, want {\"code\":200,\"data\":{\"property_id\":\"<n>\"}}", r.Code, r.Body)
		}
		// The raw values and the dedicated pair work under those names too.
		for name, kp := range map[string][2]string{"raw B pair": {acc.Key, acc.Pass}, "service pair": {acc.ServiceKey, acc.ServicePass}} {
			r := do(t, http.MethodPost, "/api/property", map[string]string{"Authorization": basic, "365villaskey": kp[0], "365villaspass": kp[1]},
				jsonText(obj{"action": "update", "property": validProperty("CE1")}))
			if r.Code != http.StatusOK {
				t.Errorf("%s: HTTP %d %s", name, r.Code, r.Body)
			}
		}
		// Without HTTP Basic, refused.
		r = do(t, http.MethodPost, "/api/property", map[string]string{"365villaskey": b64(acc.Key), "365villaspass": b64(acc.Pass)},
			jsonText(obj{"action": "update", "property": validProperty("CE1")}))
		if r.Code != http.StatusUnauthorized || r.aError(t).ErrorType != "unauthorized" {
			t.Fatalf("without Basic: HTTP %d %s", r.Code, r.Body)
		}
	})

	t.Run("docs example's own out-of-bounds values are named, nothing created", func(t *testing.T) {
		// The original's example property has a 97-character brief (its own table says 400 at
		// least) and country "UK": vros keeps its bounds and says which, in one answer.
		p := validProperty("CE2")
		p["brief"] = strings.Repeat("Sea view. ", 9) + "Pool, g"
		p["country"] = "UK"
		r := do(t, http.MethodPost, "/api/property", map[string]string{"Authorization": basic, "Content-Type": "application/json",
			"365villaskey": b64(acc.Key), "365villaspass": b64(acc.Pass)}, jsonText(obj{"action": "create", "property": p}))
		r.wantViolation(t, "property.brief", "must be at least 400 characters")
		r.wantViolation(t, "property.country", "(UK is written GB)")
		if got := acc.a(t, "property", obj{"action": "delete", "property": obj{"internal_code": "CE2"}}); got.Code != http.StatusNotFound {
			t.Fatalf("the refused example created a property: delete answered HTTP %d %s", got.Code, got.Body)
		}
	})

	t.Run("legacy_credentials switched off and on through the admin API", func(t *testing.T) {
		admin := map[string]string{"Authorization": "Bearer " + adminToken}
		villas := func(key, pass string) response {
			return do(t, http.MethodPost, "/api/property", map[string]string{"Authorization": basic, "365villaskey": b64(key), "365villaspass": b64(pass)},
				jsonText(obj{"action": "update", "property": validProperty("CE1")}))
		}
		do(t, http.MethodPost, "/admin/v1/accounts/"+acc.AccountID+"/settings", admin, `{"legacy_credentials":false}`).status(t, http.StatusOK)
		if r := villas(acc.Key, acc.Pass); r.Code != http.StatusUnauthorized || r.aError(t).ErrorMessage != "invalid credentials" {
			t.Fatalf("B pair with legacy_credentials off: HTTP %d %s", r.Code, r.Body)
		}
		villas(acc.ServiceKey, acc.ServicePass).status(t, http.StatusOK)
		do(t, http.MethodPost, "/admin/v1/accounts/"+acc.AccountID+"/settings", admin, `{"legacy_credentials":true}`).status(t, http.StatusOK)
		villas(acc.Key, acc.Pass).status(t, http.StatusOK)
	})

	t.Run("form body", func(t *testing.T) {
		h := acc.AHeaders()
		h["Content-Type"] = formType
		r := do(t, http.MethodPost, "/api/property", h, phpForm(obj{"action": "create", "property": validProperty("CE2")}))
		if r.Code != http.StatusOK || !docsPropertyID.Match(r.Body) {
			t.Fatalf("HTTP %d %s", r.Code, r.Body)
		}
		// A bad value in a form is named like in JSON.
		bad := validProperty("CE3")
		bad["bedrooms"] = "three"
		r = do(t, http.MethodPost, "/api/property", h, phpForm(obj{"action": "create", "property": bad}))
		r.wantViolation(t, "property.bedrooms", "number")
	})

	t.Run("form body carrying the service pair", func(t *testing.T) {
		r := do(t, http.MethodPost, "/api/property", map[string]string{"Authorization": basic, "Content-Type": formType},
			phpForm(obj{"servicekey": acc.ServiceKey, "servicepass": acc.ServicePass, "action": "create", "property": validProperty("CE4")}))
		if r.Code != http.StatusOK || !docsPropertyID.Match(r.Body) {
			t.Fatalf("HTTP %d %s", r.Code, r.Body)
		}
	})

	t.Run("multipart photo upload", func(t *testing.T) {
		png, err := base64.StdEncoding.DecodeString(samplePNG(t, 64, 48))
		if err != nil {
			t.Fatal(err)
		}
		body, ct := phpMultipart(t, obj{"action": "create", "photo": obj{"internal_code": "CE2"}}, map[string][]byte{"photo[image]": png})
		h := acc.AHeaders()
		h["Content-Type"] = ct
		r := do(t, http.MethodPost, "/api/property-photo", h, body)
		if r.Code != http.StatusOK {
			t.Fatalf("HTTP %d %s", r.Code, r.Body)
		}
		// A malformed multipart body: a clear error in A's envelope.
		r = do(t, http.MethodPost, "/api/property-photo", h, body[:len(body)/3])
		if r.Code != http.StatusBadRequest || !strings.Contains(r.aError(t).ErrorMessage, "multipart/form-data") {
			t.Fatalf("cut short: HTTP %d %s", r.Code, r.Body)
		}
	})
}

// TestCompatEdgeInterfaceB: getinfo and create as form bodies with string numbers and
// service[0][name]=…, a multipart body, a JSON body sent as a form, and errors read from an
// HTTP 200 body.
func TestCompatEdgeInterfaceB(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "CEB1")
	form := func(action string, fields obj) string {
		f := obj{"key": acc.Key, "pass": acc.Pass, "action": action}
		for k, v := range fields {
			f[k] = v
		}
		return phpForm(f)
	}
	send := func(ct, body string) response {
		return do(t, http.MethodPost, "/vros/external-booking", map[string]string{"Content-Type": ct}, body)
	}
	quote := obj{"propertyId": strconv.Itoa(pid), "numberofadults": "2", "checkin": day(30), "checkout": day(33)}

	t.Run("getinfo as a form", func(t *testing.T) {
		d := bSuccess(t, send(formType, form("getinfo", quote)))
		if d["qtyofnights"] != float64(3) || fmt.Sprint(d["totalRent"]) != "300" {
			t.Fatalf("quote: %v", d)
		}
	})
	t.Run("create as a form with a service", func(t *testing.T) {
		g := guest(pid, day(40), day(42))
		g["propertyId"], g["numberofadults"], g["leadsourceId"] = strconv.Itoa(pid), "2", "1"
		g["service"] = []obj{{"name": "Boat trip", "amount": "120", "type": "1", "applicable": "3"}}
		d := bSuccess(t, send(formType, form("create", g)))
		svc, _ := d["service"].([]any)
		if d["bookingId"] == nil || len(svc) != 1 || svc[0].(map[string]any)["name"] != "Boat trip" {
			t.Fatalf("booking: %v", d)
		}
	})
	t.Run("multipart getinfo", func(t *testing.T) {
		f := obj{"key": acc.Key, "pass": acc.Pass, "action": "getinfo"}
		for k, v := range quote {
			f[k] = v
		}
		body, ct := phpMultipart(t, f, nil)
		if d := bSuccess(t, send(ct, body)); d["qtyofnights"] != float64(3) {
			t.Fatalf("quote: %v", d)
		}
	})
	t.Run("JSON sent as a form", func(t *testing.T) {
		if d := bSuccess(t, send(formType, acc.BBody("getinfo", quote))); d["qtyofnights"] != float64(3) {
			t.Fatalf("quote: %v", d)
		}
	})
	t.Run("errors on HTTP 200", func(t *testing.T) {
		unknown := obj{"propertyId": "999999", "numberofadults": "1", "checkin": day(70), "checkout": day(71)}
		bFailure(t, send(formType, form("getinfo", unknown)), 16)
		r := send(formType, phpForm(obj{"key": acc.Key, "pass": "wrong", "action": "getinfo"}))
		if msg := bFailure(t, r, 2); !strings.Contains(msg, "invalid credentials") {
			t.Errorf("bad key: %q", msg)
		}
		bFailure(t, send(formType, form("getinfo", obj{"propertyId": strconv.Itoa(pid), "checkin": "soon"})), 4)
		bFailure(t, send(formType, form("nosuchaction", nil)), 64)
		bFailure(t, send(formType, "key=a&pass=b&service[0]x=1"), 4)
	})
	t.Run("too large keeps 413", func(t *testing.T) {
		r := send(formType, form("getinfo", obj{"note": strings.Repeat("x", 1<<20)}))
		if r.Code != http.StatusRequestEntityTooLarge || bStatus(r.Body) != 48 {
			t.Fatalf("HTTP %d %s", r.Code, r.Body)
		}
	})
}

// TestCompatEdgeReads: an owner-token read by GET and by POST (form, JSON, multipart), the
// property id in the path, the query (property_id or propertyId) or the body, all name the
// same property; extra fields websites add (domain, lang) change nothing.
func TestCompatEdgeReads(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := createProperty(t, acc, "CER1")
	base := "/vros/api/property-detail/owner_token/" + acc.OwnerToken
	eventually(t, "property-detail of a new property", func() bool {
		r := do(t, http.MethodGet, base+"/property/"+pid, nil, "")
		return r.Code == http.StatusOK && !bError(r.Body)
	})
	mp, mpCT := phpMultipart(t, obj{"property_id": pid, "domain": "https://villas.example", "lang": "en"}, nil)
	for _, c := range []struct {
		name, method, path, ct, body string
	}{
		{"GET, id in the path", http.MethodGet, base + "/property/" + pid, "", ""},
		{"GET, property_id", http.MethodGet, base + "?property_id=" + pid + "&lang=en", "", ""},
		{"GET, propertyId (Laravel)", http.MethodGet, base + "?propertyId=" + pid, "", ""},
		{"POST, id in the path", http.MethodPost, base + "/property/" + pid, formType, "domain=https%3A%2F%2Fvillas.example&lang=en"},
		{"POST, form (plugin)", http.MethodPost, base, formType, phpForm(obj{"property_id": pid, "domain": "https://villas.example", "lang": "en"})},
		{"POST, JSON", http.MethodPost, base, "application/json", `{"propertyId":` + pid + `}`},
		{"POST, JSON as a form", http.MethodPost, base, formType, `{"property_id":"` + pid + `"}`},
		{"POST, multipart", http.MethodPost, base, mpCT, mp},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := map[string]string{}
			if c.ct != "" {
				h["Content-Type"] = c.ct
			}
			m, keys := phpRead(t, do(t, c.method, c.path, h, c.body))
			p, _ := m["properties"].(map[string]any)
			if len(keys) == 0 || keys[0] != "properties" || p["id"] != pid || p["name"] != "Seaside Villa with Garden" {
				t.Fatalf("keys %v, properties %v", keys, p)
			}
		})
	}
	t.Run("unknown property on HTTP 200", func(t *testing.T) {
		bFailure(t, do(t, http.MethodPost, base, map[string]string{"Content-Type": formType}, "property_id=999999"), 16)
		bFailure(t, do(t, http.MethodGet, base+"/property/999999", nil, ""), 16)
	})
	t.Run("bad token on HTTP 200", func(t *testing.T) {
		bFailure(t, do(t, http.MethodPost, "/vros/api/property-detail/owner_token/ot_wrong/property/"+pid, nil, ""), 2)
	})
}
