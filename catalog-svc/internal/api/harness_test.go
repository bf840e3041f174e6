package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/testkit/phpjson"
)

const testKey = "catalog-test-key-0123"

// server is catalog-svc's real Fiber app over a view held in memory, called with edge's
// signed tenant headers.
type server struct {
	t    *testing.T
	app  *fiber.App
	view *catalog.Catalog
	api  *API
}

func newServer(t *testing.T, mediaBase string) *server {
	t.Helper()
	tel, err := telemetry.Setup(context.Background(), "catalog-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	v := catalog.NewMemory()
	a := New(v, mediaBase)
	a.now = func() time.Time { return time.Date(2030, 1, 10, 12, 0, 0, 0, time.UTC) }
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: 1 << 20})
	a.Register(app, tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerEdge, Key: testKey}))
	return &server{t: t, app: app, view: v, api: a}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// load applies an event's data to the view.
func (s *server) load(typ string, data any) {
	s.t.Helper()
	b, err := json.Marshal(data)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.view.Load(typ, b); err != nil {
		s.t.Fatalf("load %s: %v", typ, err)
	}
}

// call sends method target (path and query) with body on behalf of account acc, with the
// extra headers, and answers the status and body.
func (s *server) call(acc, method, target, body string, headers map[string]string) (int, []byte) {
	s.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: acc}, method, target, []byte(body), time.Now())
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.app.Test(req, -1)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// read POSTs a JSON body to an owner-token read of acc1, as edge forwards it, and wants 200.
func (s *server) read(name, body string) []byte {
	s.t.Helper()
	code, out := s.call("acc1", http.MethodPost, "/internal/read/"+name, body, nil)
	if code != http.StatusOK {
		s.t.Fatalf("%s %s: %d %s", name, body, code, out)
	}
	return out
}

// action POSTs an interface B action of acc1 and returns its data, wanting status 0.
func (s *server) action(name, body string) json.RawMessage {
	s.t.Helper()
	return s.actionOf("acc1", name, body)
}

// actionOf is action on behalf of acc.
func (s *server) actionOf(acc, name, body string) json.RawMessage {
	s.t.Helper()
	code, out := s.call(acc, http.MethodPost, "/internal/b/"+name, body, nil)
	var env struct {
		Status int             `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(out, &env); err != nil || code != http.StatusOK || env.Status != 0 {
		s.t.Fatalf("%s %s: %d %s", name, body, code, out)
	}
	return env.Data
}

// node is an answer decoded by phpjson (key order kept, as PHP's json_decode keeps it), with
// its keys and list items at hand. An object that repeats a key fails the test.
type node struct {
	v     *phpjson.Value
	keys  []string
	items []*node // nil unless a list
}

func wrap(t *testing.T, v *phpjson.Value) *node {
	t.Helper()
	if r := v.Repeated(); r != nil {
		t.Fatalf("keys %v written more than once among %v", r, v.Keys())
	}
	n := &node{v: v, keys: v.Keys()}
	if v.Kind() == phpjson.List {
		n.items = []*node{}
		for _, x := range v.Items() {
			n.items = append(n.items, wrap(t, x))
		}
	}
	for _, k := range n.keys {
		wrap(t, v.At(k)) // checks the members for repeated keys
	}
	return n
}

func decodeOrdered(t *testing.T, b []byte) *node {
	t.Helper()
	v, err := phpjson.Decode(b)
	if err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return wrap(t, v)
}

// first is PHP's reset(): the first value of an object, or of a list.
func (n *node) first(t *testing.T) *node {
	t.Helper()
	r := n.v.Reset()
	if r == nil {
		t.Fatalf("first value of an empty or scalar value %s %v", n.v.Text(), n.keys)
	}
	return wrap(t, r)
}

// get follows object keys.
func (n *node) get(t *testing.T, path ...string) *node {
	t.Helper()
	cur := n.v
	for _, k := range path {
		next := cur.At(k)
		if next == nil {
			t.Fatalf("no %q in %v (path %v)", k, cur.Keys(), path)
		}
		cur = next
	}
	return wrap(t, cur)
}

func (n *node) str() string { return n.v.Text() }

// wantKeys checks an object's key sequence.
func wantKeys(t *testing.T, what string, n *node, keys ...string) {
	t.Helper()
	if strings.Join(n.keys, ",") != strings.Join(keys, ",") {
		t.Errorf("%s keys:\n got  %v\n want %v", what, n.keys, keys)
	}
}

// bp is a bool pointer.
func bp(b bool) *bool { return &b }

// fixture loads acc1's settings and properties 3 and 7 (loaded 7 first), and acc2's
// property 9.
func fixture(s *server) {
	s.t.Helper()
	st := contract.DefaultSettings("acc1")
	st.Version, st.Currency, st.Timezone, st.Languages = 1, "EUR", "Europe/Rome", []string{"en", "it"}
	st.Tags = []contract.Tag{{ID: 2, Name: "Sea view", Languages: map[string]string{"it": "Vista mare"}, Properties: []int64{7}},
		{ID: 1, Name: "Family", Properties: []int64{3, 7}}}
	st.Categories = []contract.Category{
		{ID: 5, Name: "Villas", ShowSearchEngine: true, Languages: map[string]string{"it": "Ville"}, Properties: []int64{7, 3, 99}},
		{ID: 6, Name: "Hidden", ShowSearchEngine: false, Properties: []int64{3}},
	}
	st.Promotions = []contract.Promotion{
		{Code: "SPRING", Name: "Spring", Type: "percent", Amount: "10", StartDate: "2030-03-01", EndDate: "2030-04-30"},
		{Code: "OPEN", Name: "Always", Type: "flat", Amount: "50", StartDate: "2029-06-01"},
		{Code: "ONLY3", Name: "Only three", Type: "flat", Amount: "5", StartDate: "2030-02-01", EndDate: "2030-02-10", Properties: []int64{3}},
		{Code: "OLD", Name: "Expired", Type: "flat", Amount: "5", StartDate: "2029-01-01", EndDate: "2029-02-01"},
	}
	s.load(contract.SettingsUpdated, st)
	s.load(contract.PropertyUpdated, property("acc1", 7, "Villa Aurora", "Lucca", 3, 2, 6, "100", true))
	s.load(contract.PropertyUpdated, property("acc1", 3, "Casa Blu", "Pisa", 1, 1, 2, "60", false))
	s.load(contract.PropertyUpdated, property("acc2", 9, "Other", "Rome", 5, 5, 10, "900", false))
}

func property(acc string, id int64, name, city string, bedrooms, bathrooms, maxguest int, daily string, featured bool) contract.Property {
	p := contract.Property{AccountID: acc, PropertyID: id, Version: 1,
		Content: contract.Content{Name: name, City: city, Type: "Villa", Brief: "Brief of " + name, Bedrooms: bedrooms, Bathrooms: bathrooms,
			MaxGuest: maxguest, Latitude: "43.84", Longitude: "10.50", Address: "Via Roma 1", Country: "IT", AllowPet: bp(true),
			IsFeatured: featured},
		Photos: map[string]contract.Photo{
			"12": {PhotoID: 12, Key: "k" + name[:1] + "12"},
			"4":  {PhotoID: 4, Key: "k" + name[:1] + "4"},
		},
		Rates: &contract.Rates{Rate: contract.Prices{Daily: daily}, MinimumStay: 2},
		Amenities: &contract.Amenities{Items: []contract.Amenity{
			{ID: 1, Name: "Wifi", Type: 1, Class: "Internet", Languages: map[string]string{"it": "Wi-Fi"}},
			{ID: 2, Name: "Pool", Type: 1, Class: "Outdoor"},
			{ID: 3, Name: "Bikes", Type: 2},
		}, Description: "Nice"},
		Taxes: []contract.Tax{}, Services: []contract.Service{},
	}
	if id == 7 {
		p.Rates.LOS = []contract.LOS{{Days: 7, Discount: "10"}}
	}
	return p
}
