package gateway_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
)

// startCompatEdge starts a gateway like startRoutedEdge, with cfg's public URL and rate
// limits, trusting proxies; its stubs answer the HTTP code a JSON body's "answer_code"
// asks for (200 otherwise), with B's envelope. A service listed in missing is not deployed.
func startCompatEdge(t *testing.T, cfg gateway.Config, proxies []string, missing ...gateway.Upstream) (*edge, *stubs) {
	t.Helper()
	s := &stubs{}
	cfg.ServiceURLs = map[gateway.Upstream]string{}
	for _, name := range []gateway.Upstream{gateway.PropertySvc, gateway.BookingSvc, gateway.CatalogSvc} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			s.mu.Lock()
			s.got = append(s.got, received{service: name, method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone(), body: body})
			s.mu.Unlock()
			var ask struct {
				Code int `json:"answer_code,string"`
			}
			_ = json.Unmarshal(body, &ask)
			w.Header().Set("Content-Type", "application/json")
			if ask.Code != 0 {
				if ask.Code == http.StatusTooManyRequests || ask.Code == http.StatusServiceUnavailable {
					w.Header().Set("Retry-After", "7")
				}
				w.WriteHeader(ask.Code)
				_, _ = fmt.Fprintf(w, `{"status":16,"message":"answered %d","from":%q}`, ask.Code, name)
				return
			}
			_, _ = io.WriteString(w, `{"status":0,"message":"Success","data":{"from":"`+string(name)+`"}}`)
		}))
		t.Cleanup(srv.Close)
		cfg.ServiceURLs[name] = srv.URL
	}
	for _, m := range missing {
		cfg.ServiceURLs[m] = ""
	}
	tel, err := telemetry.Setup(context.Background(), "edge-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	trusted, err := httpapi.ParseProxies(proxies)
	if err != nil {
		t.Fatal(err)
	}
	e := &edge{repo: &countingRepo{Repository: store}}
	e.accounts = account.NewService(e.repo, account.Options{CacheTTL: time.Minute})
	gw, err := gateway.New(cfg, e.accounts, tenancy.NewSigner(tenancy.CallerEdge, signingKey), tel.Propagator)
	if err != nil {
		t.Fatal(err)
	}
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: gateway.MaxBody, TrustedProxies: trusted, EnvelopeFor: gateway.EnvelopeFor})
	gw.Register(app)
	e.url = serve(t, app)
	return e, s
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestCredentials365villas: interface A also takes its second pair from the headers
// 365villaskey/365villaspass, raw or base64; the pair (under either header name) may be the
// dedicated service pair, or the account's interface B key/pass while its
// legacy_credentials setting is on (the default). Off, only the service pair works; the
// switch takes effect at once on the replica that made it.
func TestCredentials365villas(t *testing.T) {
	e, s := startRoutedEdge(t)
	ctx := context.Background()
	live, other, off := e.createAccount(t, false), e.createAccount(t, false), e.createAccount(t, false)
	if _, err := e.accounts.SetLegacy(ctx, off.id, false); err != nil {
		t.Fatal(err)
	}
	h := func(acc tenantAccount, names [2]string, key, pass string) map[string]string {
		b := acc.creds[account.Basic]
		return map[string]string{"Content-Type": "application/json", "Authorization": basicHeader(b.Identifier, b.Secret), names[0]: key, names[1]: pass}
	}
	villas, service := [2]string{"365villaskey", "365villaspass"}, [2]string{"servicekey", "servicepass"}
	sk := func(acc tenantAccount) [2]string {
		return [2]string{acc.creds[account.ServiceKey].Identifier, acc.creds[account.ServiceKey].Secret}
	}
	bk := func(acc tenantAccount) [2]string {
		return [2]string{acc.creds[account.Key].Identifier, acc.creds[account.Key].Secret}
	}
	enc := func(kp [2]string) [2]string { return [2]string{b64(kp[0]), b64(kp[1])} }
	pair := func(acc tenantAccount, names [2]string, kp [2]string) map[string]string {
		return h(acc, names, kp[0], kp[1])
	}
	raw := func(k, p string) [2]string { return [2]string{k, p} }
	const invalid = "invalid credentials"
	type row struct {
		name    string
		header  map[string]string
		account *tenantAccount
		refusal string
	}
	rows := func() []row {
		return []row{
			{"365villas headers, service pair", pair(live, villas, sk(live)), &live, ""},
			{"365villas headers, service pair in base64", pair(live, villas, enc(sk(live))), &live, ""},
			{"365villas headers, B pair", pair(live, villas, bk(live)), &live, ""},
			{"365villas headers, B pair in base64 (the original's docs)", pair(live, villas, enc(bk(live))), &live, ""},
			{"servicekey headers, B pair in base64", pair(live, service, enc(bk(live))), &live, ""},
			{"base64 key, raw pass", pair(live, villas, raw(b64(live.creds[account.Key].Identifier), live.creds[account.Key].Secret)), &live, ""},
			{"legacy off: service pair still works", pair(off, villas, sk(off)), &off, ""},
			{"legacy off: service pair in base64 still works", pair(off, villas, enc(sk(off))), &off, ""},

			{"legacy off: B pair refused", pair(off, villas, bk(off)), nil, invalid},
			{"legacy off: B pair in base64 refused", pair(off, villas, enc(bk(off))), nil, invalid},
			{"legacy off: B pair under servicekey refused", pair(off, service, bk(off)), nil, invalid},
			{"Basic of one account, B pair of another", pair(live, villas, bk(other)), nil, invalid},
			{"Basic of one account, base64 B pair of another", pair(live, villas, enc(bk(other))), nil, invalid},
			{"B key of the account, B pass of another", pair(live, villas, raw(live.creds[account.Key].Identifier, other.creds[account.Key].Secret)), nil, invalid},
			{"wrong B pass in base64", pair(live, villas, enc(raw(live.creds[account.Key].Identifier, changed(live.creds[account.Key].Secret, 0)))), nil, invalid},
			{"owner token as pass", pair(live, villas, raw(live.creds[account.Key].Identifier, b64(live.creds[account.OwnerToken].Secret))), nil, invalid},
			{"Basic pair as 365villas pair", pair(live, villas, enc(raw(live.creds[account.Basic].Identifier, live.creds[account.Basic].Secret))), nil, invalid},
			{"365villaskey without 365villaspass", pair(live, villas, raw(live.creds[account.Key].Identifier, "")), nil, "are required"},
			{"base64 that decodes to nothing printable", pair(live, villas, raw(b64("\x00\x01"), b64("\x02"))), nil, invalid},
		}
	}
	run := func(t *testing.T, rows []row) {
		for _, tc := range rows {
			t.Run(tc.name, func(t *testing.T) {
				s.take()
				a := e.send(t, "", http.MethodPost, "/api/property", tc.header, `{"action":"list"}`)
				if tc.account == nil {
					refusedA(t, a, http.StatusUnauthorized, "unauthorized", tc.refusal)
					s.none(t)
					return
				}
				passed(t, a, gateway.PropertySvc)
				wantSigned(t, s.one(t), *tc.account)
			})
		}
	}
	run(t, rows())

	t.Run("switch", func(t *testing.T) {
		// Used (and cached) while on, refused at once when switched off, and back.
		offB := pair(live, villas, enc(bk(live)))
		passed(t, e.send(t, "", http.MethodPost, "/api/property", offB, `{}`), gateway.PropertySvc)
		if _, err := e.accounts.SetLegacy(ctx, live.id, false); err != nil {
			t.Fatal(err)
		}
		refusedA(t, e.send(t, "", http.MethodPost, "/api/property", offB, `{}`), http.StatusUnauthorized, "unauthorized", invalid)
		passed(t, e.send(t, "", http.MethodPost, "/api/property", pair(live, villas, enc(sk(live))), `{}`), gateway.PropertySvc)
		if _, err := e.accounts.SetLegacy(ctx, off.id, true); err != nil {
			t.Fatal(err)
		}
		passed(t, e.send(t, "", http.MethodPost, "/api/property", pair(off, villas, enc(bk(off))), `{}`), gateway.PropertySvc)
		if _, err := e.accounts.SetLegacy(ctx, "999999999", true); err == nil {
			t.Error("switching an account that does not exist succeeded")
		}
	})
}

// multipartBody is a PHP curl array body: the fields in order, and file parts.
func multipartBody(t *testing.T, fields [][2]string, files map[string][]byte) (string, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range files {
		fw, err := w.CreateFormFile(name, "photo.jpg")
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

// TestBodiesAsPHPSendsThem: both interfaces take JSON, PHP's bracket-notation forms and
// multipart forms (a file part as the base64 of its bytes), and JSON sent with a form
// content type; the services receive JSON. A malformed body is refused in the interface's
// envelope, naming the key, and reaches no service.
func TestBodiesAsPHPSendsThem(t *testing.T) {
	e, s := startRoutedEdge(t)
	acc := e.createAccount(t, false)
	key := acc.creds[account.Key]
	photo := bytes.Repeat([]byte{0xff, 0xd8, 0x00, 0x10, 'J', 'F', 'I', 'F'}, 100)
	const formCT = "application/x-www-form-urlencoded"

	mpA, mpACT := multipartBody(t, [][2]string{{"action", "upload"}, {"photo[property_id]", "12"}, {"photo[main]", "1"}},
		map[string][]byte{"photo[image]": photo})
	mpB, mpBCT := multipartBody(t, [][2]string{{"key", key.Identifier}, {"pass", key.Secret}, {"action", "getinfo"},
		{"propertyId", "12"}, {"service[0][name]", "Cleaning"}, {"service[0][amount]", "50"}}, nil)
	bigA, bigACT := multipartBody(t, [][2]string{{"action", "save"}}, map[string][]byte{"file": bytes.Repeat([]byte{1}, 200<<10)})
	jsonB := fmt.Sprintf(` {"key":%q,"pass":%q,"action":"getinfo","propertyId":12}`, key.Identifier, key.Secret)
	formB := url.Values{"key": {key.Identifier}, "pass": {key.Secret}, "action": {"create"}, "propertyId": {"12"},
		"numberadults": {"2"}, "service[0][name]": {"Cleaning"}}.Encode()

	for _, tc := range []struct {
		name, path, ct, body string
		// want is the JSON the service must receive; otherwise code, status and message
		// describe the refusal.
		want          string
		code, status  int
		message, errA string
	}{
		{name: "A form", path: "/api/property", ct: formCT + "; charset=UTF-8", body: "action=create&bedrooms=3&isFeatured=true&amenity[]=1&amenity[]=2&content[en][name]=Villa+A",
			want: `{"action":"create","amenity":["1","2"],"bedrooms":"3","content":{"en":{"name":"Villa A"}},"isFeatured":"true"}`},
		{name: "A multipart with a photo", path: "/api/property-photo", ct: mpACT, body: mpA,
			want: `{"action":"upload","photo":{"image":"` + base64.StdEncoding.EncodeToString(photo) + `","main":"1","property_id":"12"}}`},
		{name: "A JSON sent as a form", path: "/api/property", ct: formCT, body: "\n" + `{"action":"create","bedrooms":3}`, want: `{"action":"create","bedrooms":3}`},
		{name: "A JSON list sent as a form", path: "/api/property", ct: formCT, body: `[]`, want: `[]`},
		{name: "A malformed form", path: "/api/property", ct: formCT, body: "action=create&content[en=x", code: 400, errA: "bad_request", message: `form key "content[en" has an unclosed bracket`},
		{name: "A form key nested under a value", path: "/api/property", ct: formCT, body: "a=1&a[b]=2", code: 400, errA: "bad_request", message: `form key "a[b]"`},
		{name: "A multipart without boundary", path: "/api/property", ct: "multipart/form-data", body: "x", code: 400, errA: "bad_request", message: "boundary"},
		{name: "A multipart cut short", path: "/api/property", ct: mpACT, body: mpA[:len(mpA)/2], code: 400, errA: "bad_request", message: "multipart/form-data"},
		{name: "A multipart over the limit once in base64", path: "/api/property-policy", ct: bigACT, body: bigA, code: 413, errA: "payload_too_large", message: "once read as JSON"},
		{name: "A form value not UTF-8", path: "/api/property", ct: formCT, body: "name=%ff", code: 400, errA: "bad_request", message: `form value of "name" is not valid UTF-8`},

		{name: "B form with string numbers", path: "/vros/external-booking", ct: formCT, body: formB,
			want: fmt.Sprintf(`{"action":"create","key":%q,"numberadults":"2","pass":%q,"propertyId":"12","service":[{"name":"Cleaning"}]}`, key.Identifier, key.Secret)},
		{name: "B multipart", path: "/vros/external-booking", ct: mpBCT, body: mpB,
			want: fmt.Sprintf(`{"action":"getinfo","key":%q,"pass":%q,"propertyId":"12","service":[{"amount":"50","name":"Cleaning"}]}`, key.Identifier, key.Secret)},
		{name: "B JSON sent as a form", path: "/vros/external-booking", ct: formCT, body: jsonB, want: jsonB},
		{name: "B JSON sent as multipart", path: "/vros/external-booking", ct: "multipart/form-data; boundary=x", body: jsonB, want: jsonB},
		{name: "B malformed form", path: "/vros/external-booking", ct: formCT, body: "key=a&pass=b&action=getinfo&service[0]name=x", code: 200, status: httpapi.StatusInvalid,
			message: `form key "service[0]name" has text after a bracket`},
		{name: "B malformed multipart", path: "/vros/external-booking", ct: mpBCT, body: mpB[:40], code: 200, status: httpapi.StatusInvalid, message: "multipart/form-data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.take()
			header := map[string]string{"Content-Type": tc.ct}
			if strings.HasPrefix(tc.path, "/api/") {
				header = headersA(acc)
				header["Content-Type"] = tc.ct
			}
			a := e.send(t, "", http.MethodPost, tc.path, header, tc.body)
			if tc.want == "" {
				if tc.errA != "" {
					refusedA(t, a, tc.code, tc.errA, tc.message)
				} else {
					refusedB(t, a, tc.code, tc.status, tc.message)
				}
				s.none(t)
				return
			}
			if a.code != http.StatusOK {
				t.Fatalf("HTTP %d: %s", a.code, a.body)
			}
			r := s.one(t)
			var got, want any
			if err := json.Unmarshal(r.body, &got); err != nil {
				t.Fatalf("the service got %q: %v", r.body, err)
			}
			_ = json.Unmarshal([]byte(tc.want), &want)
			if !reflect.DeepEqual(got, want) || r.header.Get("Content-Type") != "application/json" {
				t.Errorf("the service got %s (%s), want %s", r.body, r.header.Get("Content-Type"), tc.want)
			}
			wantSigned(t, r, acc)
		})
	}
}

// TestBodyReadAfterAuthentication: with interface A's pairs in headers, a form body is read
// only once they authenticate (a bad one is refused 401, whatever the body); with the pair in
// the body, the body is read first.
func TestBodyReadAfterAuthentication(t *testing.T) {
	e, s := startRoutedEdge(t)
	acc := e.createAccount(t, false)
	h := headersA(acc)
	h["Content-Type"] = "application/x-www-form-urlencoded"
	h["servicepass"] = "wrong"
	refusedA(t, e.send(t, "", http.MethodPost, "/api/property", h, "a[b=1"), http.StatusUnauthorized, "unauthorized", "invalid credentials")
	b := acc.creds[account.Basic]
	refusedA(t, e.send(t, "", http.MethodPost, "/api/property", map[string]string{"Authorization": basicHeader(b.Identifier, b.Secret),
		"Content-Type": "application/x-www-form-urlencoded"}, "servicekey=x&a[b=1"), http.StatusBadRequest, "bad_request", `form key "a[b"`)
	s.none(t)
}

// TestReadsAsClientsCallThem: every read answers GET and POST (JSON, form or multipart
// body); edge forwards it as POST /internal/read/{name} with the query parameters (bracket
// notation) and the body's fields merged, the body winning, and property_id normalised to
// one string from the path, else property_id, else propertyId.
func TestReadsAsClientsCallThem(t *testing.T) {
	e, s := startRoutedEdge(t)
	acc := e.createAccount(t, false)
	base := "/vros/api/get-all-property-info/owner_token/" + acc.creds[account.OwnerToken].Secret
	mp, mpCT := multipartBody(t, [][2]string{{"propertyId", "31"}, {"lang", "de"}}, nil)
	const formCT, jsonCT = "application/x-www-form-urlencoded", "application/json"
	for _, tc := range []struct {
		name, method, path, ct, body string
		want                         string
		status                       int
		message                      string
	}{
		{name: "GET, nothing", method: "GET", path: base, want: `{}`},
		{name: "GET, id in the path", method: "GET", path: base + "/property/21", want: `{"property_id":"21"}`},
		{name: "GET, property_id", method: "GET", path: base + "?property_id=22&lang=en", want: `{"lang":"en","property_id":"22"}`},
		{name: "GET, propertyId", method: "GET", path: base + "?propertyId=23", want: `{"property_id":"23"}`},
		{name: "GET, blank property_id, propertyId", method: "GET", path: base + "?property_id=&propertyId=24", want: `{"property_id":"24"}`},
		{name: "GET, bracket lists", method: "GET", path: base + "?amenity[]=1&amenity[]=2&checkin=2026-12-01", want: `{"amenity":["1","2"],"checkin":"2026-12-01"}`},
		{name: "GET, path beats query", method: "GET", path: base + "/property/25?property_id=26", want: `{"property_id":"25"}`},
		{name: "POST, empty", method: "POST", path: base, want: `{}`},
		{name: "POST, form", method: "POST", path: base, ct: formCT, body: "property_id=27&domain=example.com&lang=en", want: `{"domain":"example.com","lang":"en","property_id":"27"}`},
		{name: "POST, JSON number id", method: "POST", path: base, ct: jsonCT, body: `{"propertyId":28,"page":2}`, want: `{"page":2,"property_id":"28"}`},
		{name: "POST, JSON as form", method: "POST", path: base, ct: formCT, body: `{"property_id":"29"}`, want: `{"property_id":"29"}`},
		{name: "POST, multipart", method: "POST", path: base, ct: mpCT, body: mp, want: `{"lang":"de","property_id":"31"}`},
		{name: "POST, body beats query", method: "POST", path: base + "?property_id=1&lang=en&page=3", ct: formCT, body: "property_id=32&lang=fr",
			want: `{"lang":"fr","page":"3","property_id":"32"}`},
		{name: "POST, path beats body", method: "POST", path: base + "/property/33", ct: jsonCT, body: `{"property_id":"34"}`, want: `{"property_id":"33"}`},
		{name: "POST, PHP's empty array", method: "POST", path: base, ct: jsonCT, body: `[]`, want: `{}`},

		{name: "POST, JSON list", method: "POST", path: base, ct: jsonCT, body: `[1]`, status: httpapi.StatusInvalid, message: "body must be a JSON object"},
		{name: "POST, bad JSON", method: "POST", path: base, ct: jsonCT, body: `{"a":`, status: httpapi.StatusInvalid, message: "body must be a JSON object"},
		{name: "POST, id list", method: "POST", path: base, ct: formCT, body: "property_id[]=1&property_id[]=2", status: httpapi.StatusInvalid, message: "property_id must be one property id"},
		{name: "POST, id object", method: "POST", path: base, ct: jsonCT, body: `{"propertyId":{"a":1}}`, status: httpapi.StatusInvalid, message: "propertyId must be one property id"},
		{name: "GET, malformed query", method: "GET", path: base + "?a[b=1", status: httpapi.StatusInvalid, message: `query: form key "a[b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.take()
			var h map[string]string
			if tc.ct != "" {
				h = map[string]string{"Content-Type": tc.ct}
			}
			a := e.send(t, "", tc.method, tc.path, h, tc.body)
			if tc.want == "" {
				refusedB(t, a, http.StatusOK, tc.status, tc.message)
				s.none(t)
				return
			}
			passed(t, a, gateway.CatalogSvc)
			r := s.one(t)
			if r.method != http.MethodPost || r.path != "/internal/read/get-all-property-info" || r.query != "" || string(r.body) != tc.want {
				t.Errorf("forwarded %s %s?%s %s, want POST /internal/read/get-all-property-info %s", r.method, r.path, r.query, r.body, tc.want)
			}
			wantSigned(t, r, acc)
		})
	}
	t.Run("body over the limit", func(t *testing.T) {
		s.take()
		refusedB(t, e.send(t, "", "POST", base, map[string]string{"Content-Type": formCT}, "a="+strings.Repeat("x", 64<<10)),
			http.StatusRequestEntityTooLarge, httpapi.StatusTooLarge, "larger than")
		s.none(t)
	})
}

// TestReadsPublicBase: a read tells catalog-svc the base of its links: the configured public
// URL, else the scheme and host the client used; X-Forwarded-Proto and -Host count only
// from a trusted proxy.
func TestReadsPublicBase(t *testing.T) {
	for _, tc := range []struct {
		name      string
		publicURL string
		proxies   []string
		header    map[string]string
		want      func(e *edge) string
	}{
		{name: "configured", publicURL: "https://api.example.com/", header: map[string]string{"X-Forwarded-Host": "evil.example"},
			want: func(*edge) string { return "https://api.example.com" }},
		{name: "own base", want: func(e *edge) string { return e.url }},
		{name: "forwarded headers of an untrusted peer", header: map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"},
			want: func(e *edge) string { return e.url }},
		{name: "forwarded headers of a trusted proxy", proxies: []string{"127.0.0.1"}, header: map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "www.villas.example"},
			want: func(*edge) string { return "https://www.villas.example" }},
		{name: "Host header", header: map[string]string{"Host": "site.example:8443"}, want: func(*edge) string { return "http://site.example:8443" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, s := startCompatEdge(t, gateway.Config{PublicURL: tc.publicURL}, tc.proxies)
			acc := e.createAccount(t, false)
			passed(t, e.sendHost(t, http.MethodGet, "/vros/api/property-gallery/owner_token/"+acc.creds[account.OwnerToken].Secret, tc.header), gateway.CatalogSvc)
			if got, want := s.one(t).header.Get(gateway.HeaderPublicBase), tc.want(e); got != want {
				t.Errorf("%s %q, want %q", gateway.HeaderPublicBase, got, want)
			}
		})
	}
}

// sendHost is send with a Host header of the caller's choosing.
func (e *edge) sendHost(t *testing.T, method, path string, header map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{code: resp.StatusCode, body: b}
}

// TestGetpropertyinfoRouting: the original's examples send action getpropertyinfo for a
// price push (with pricingArray) and for a reservations read (with createdDate); edge
// serves them as setprices_minnights and getreservations, so a price push is never
// answered by a read that drops it.
func TestGetpropertyinfoRouting(t *testing.T) {
	e, s := startRoutedEdge(t)
	acc := e.createAccount(t, false)
	key := acc.creds[account.Key]
	body := func(action, extra string) string {
		return fmt.Sprintf(`{"key":%q,"pass":%q,"action":%q,"propertyId":"7"%s}`, key.Identifier, key.Secret, action, extra)
	}
	for _, tc := range []struct {
		name, ct, body string
		service        gateway.Upstream
		path           string
	}{
		{"pricingArray as a list", "application/json", body("getpropertyinfo", `,"pricingArray":[{"date":"2026-12-01","price":"100"}]`), gateway.PropertySvc, "setprices_minnights"},
		{"pricingArray as a JSON string", "application/json", body("getpropertyinfo", `,"pricingArray":"[{\"date\":\"2026-12-01\"}]"`), gateway.PropertySvc, "setprices_minnights"},
		{"pricingArray in a form", "application/x-www-form-urlencoded", url.Values{"key": {key.Identifier}, "pass": {key.Secret}, "action": {"getpropertyinfo"},
			"pricingArray[0][date]": {"2026-12-01"}}.Encode(), gateway.PropertySvc, "setprices_minnights"},
		{"pricingArray and createdDate", "application/json", body("getpropertyinfo", `,"pricingArray":[],"createdDate":"2026-01-01"`), gateway.PropertySvc, "setprices_minnights"},
		{"createdDate", "application/json", body("getpropertyinfo", `,"createdDate":"2026-01-01"`), gateway.CatalogSvc, "getreservations"},
		{"createdDate in a form", "application/x-www-form-urlencoded", url.Values{"key": {key.Identifier}, "pass": {key.Secret}, "action": {"getpropertyinfo"},
			"createdDate": {"2026-01-01"}}.Encode(), gateway.CatalogSvc, "getreservations"},
		{"neither", "application/json", body("getpropertyinfo", ""), gateway.CatalogSvc, "getpropertyinfo"},
		{"null pricingArray, blank createdDate", "application/json", body("getpropertyinfo", `,"pricingArray":null,"createdDate":""`), gateway.CatalogSvc, "getpropertyinfo"},
		{"another action with pricingArray", "application/json", body("getratetable", `,"pricingArray":[1]`), gateway.CatalogSvc, "getratetable"},
		{"getinfo with createdDate", "application/json", body("getinfo", `,"createdDate":"2026-01-01"`), gateway.BookingSvc, "getinfo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.take()
			passed(t, e.send(t, "", http.MethodPost, "/vros/external-booking", map[string]string{"Content-Type": tc.ct}, tc.body), tc.service)
			if r := s.one(t); r.service != tc.service || r.path != "/internal/b/"+tc.path {
				t.Errorf("reached %s %s, want %s /internal/b/%s", r.service, r.path, tc.service, tc.path)
			}
		})
	}
}

// TestStatusesB: interface B answers every application outcome on HTTP 200 with its
// status, whether edge decides it or a service answers it; transport failures (413, 429,
// 5xx) keep their code, still in B's envelope. Interface A keeps every code.
func TestStatusesB(t *testing.T) {
	e, s := startCompatEdge(t, gateway.Config{}, nil, gateway.BookingSvc)
	acc := e.createAccount(t, false)
	key := acc.creds[account.Key]
	token := acc.creds[account.OwnerToken].Secret
	jsonCT := map[string]string{"Content-Type": "application/json"}
	b := func(action string, code int) string {
		return fmt.Sprintf(`{"key":%q,"pass":%q,"action":%q,"answer_code":"%d"}`, key.Identifier, key.Secret, action, code)
	}
	for _, code := range []int{400, 401, 402, 404, 409, 412, 422} {
		t.Run("service answers "+strconv.Itoa(code), func(t *testing.T) {
			a := e.send(t, "", http.MethodPost, "/vros/external-booking", jsonCT, b("gettax", code))
			if a.code != http.StatusOK || !strings.Contains(string(a.body), fmt.Sprintf(`"answered %d"`, code)) {
				t.Errorf("HTTP %d %s, want HTTP 200 with the service's envelope", a.code, a.body)
			}
		})
	}
	for _, code := range []int{413, 429, 500, 502, 503} {
		t.Run("service answers "+strconv.Itoa(code), func(t *testing.T) {
			a := e.send(t, "", http.MethodPost, "/vros/external-booking", jsonCT, b("gettax", code))
			if a.code != code {
				t.Errorf("HTTP %d %s, want %d kept", a.code, a.body, code)
			}
			if wantRetry := code == 429 || code == 503; (a.retry == "7") != wantRetry {
				t.Errorf("Retry-After %q of the service's %d not passed on as it was", a.retry, code)
			}
		})
	}
	t.Run("read answered 404 by the service", func(t *testing.T) {
		a := e.send(t, "", http.MethodGet, "/vros/api/property-detail/owner_token/"+token+"?answer_code=404", nil, "")
		if a.code != http.StatusOK {
			t.Errorf("HTTP %d %s, want 200", a.code, a.body)
		}
	})
	t.Run("interface A keeps the service's code", func(t *testing.T) {
		h := headersA(acc)
		if a := e.send(t, "", http.MethodPost, "/api/property", h, `{"answer_code":"404"}`); a.code != http.StatusNotFound {
			t.Errorf("HTTP %d %s, want 404", a.code, a.body)
		}
	})
	s.take()
	t.Run("edge's own", func(t *testing.T) {
		refusedB(t, e.send(t, "", http.MethodPost, "/vros/external-booking", jsonCT, `{"key":"k_x","pass":"y","action":"gettax"}`), 200, httpapi.StatusUnauthorized, "invalid credentials")
		refusedB(t, e.send(t, "", http.MethodPost, "/vros/external-booking", jsonCT, `{"key":1}`), 200, httpapi.StatusInvalid, "key must be a string")
		refusedB(t, e.send(t, "", http.MethodGet, "/vros/external-booking", jsonCT, ""), 200, httpapi.StatusInvalid, "method not allowed")
		refusedB(t, e.send(t, "", http.MethodPost, "/vros/external-booking", jsonCT, `{"key":"`+strings.Repeat("x", 1<<20)+`"}`), 413, httpapi.StatusTooLarge, "larger than")
		refusedB(t, e.send(t, "", http.MethodPost, "/vros/external-booking", jsonCT, b("getinfo", 0)), 503, httpapi.StatusUnavailable, "not deployed")
		s.none(t)
	})
	t.Run("rate limited", func(t *testing.T) {
		e, _ := startCompatEdge(t, gateway.Config{RateLimitRPS: 0.001, RateLimitBurst: 3}, nil)
		acc := e.createAccount(t, false)
		key := acc.creds[account.Key]
		var last answer
		for range 5 {
			last = e.send(t, "", http.MethodPost, "/vros/external-booking", jsonCT, fmt.Sprintf(`{"key":%q,"pass":%q,"action":"gettax"}`, key.Identifier, key.Secret))
		}
		refusedB(t, last, 429, httpapi.StatusRateLimited, "too many requests")
		if last.retry == "" {
			t.Error("429 without Retry-After")
		}
	})
}

// TestCredentials365villasConcurrent: 16 clients of three accounts at once, each sending its
// own B pair as 365villaskey/365villaspass (base64 or raw), the dedicated pair, or another
// account's B pair beside its own Basic: every accepted request reaches the service as its
// own account, every mixed one is refused, through a shared cache.
func TestCredentials365villasConcurrent(t *testing.T) {
	e, s := startRoutedEdge(t)
	accs := []tenantAccount{e.createAccount(t, false), e.createAccount(t, true), e.createAccount(t, false)}
	const clients, each = 16, 30
	type sent struct {
		acc    int
		accept bool
	}
	var mu sync.Mutex
	want := map[string]sent{}
	errs := make(chan string, clients*each)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				own := (c + i) % len(accs)
				pairOf, accept := own, true
				mode := (c*each + i) % 4
				if mode == 3 {
					pairOf, accept = (own+1)%len(accs), false
				}
				a := accs[own]
				cred := accs[pairOf].creds[account.Key]
				if mode == 2 {
					cred = accs[pairOf].creds[account.ServiceKey]
				}
				key, pass := cred.Identifier, cred.Secret
				if mode%2 == 0 {
					key, pass = b64(key), b64(pass)
				}
				marker := fmt.Sprintf("c%d-%d", c, i)
				mu.Lock()
				want[marker] = sent{own, accept}
				mu.Unlock()
				b := a.creds[account.Basic]
				req, _ := http.NewRequest(http.MethodPost, e.url+"/api/property", strings.NewReader(`{"marker":"`+marker+`"}`))
				req.Header.Set("Authorization", basicHeader(b.Identifier, b.Secret))
				req.Header.Set("365villaskey", key)
				req.Header.Set("365villaspass", pass)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err.Error()
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if (resp.StatusCode == http.StatusOK) != accept {
					errs <- fmt.Sprintf("%s (mode %d): HTTP %d", marker, mode, resp.StatusCode)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	forwarded := 0
	for _, r := range s.take() {
		var b struct{ Marker string }
		_ = json.Unmarshal(r.body, &b)
		w, ok := want[b.Marker]
		if !ok || !w.accept {
			t.Errorf("a refused request reached the service: %s", r.body)
			continue
		}
		forwarded++
		if r.header.Get(tenancy.HeaderAccount) != accs[w.acc].id {
			t.Errorf("%s reached the service as account %s, want %s", b.Marker, r.header.Get(tenancy.HeaderAccount), accs[w.acc].id)
		}
	}
	if forwarded != clients*each*3/4 {
		t.Errorf("%d requests forwarded, want %d", forwarded, clients*each*3/4)
	}
}
