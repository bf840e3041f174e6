package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
	"github.com/vros/vros/property-svc/internal/store"
	"github.com/vros/vros/testkit/phpjson"
	"github.com/vros/vros/testkit/testinfra"
	"github.com/vros/vros/testkit/together"
)

// The resources of issue #11 through property-svc's real HTTP app (its envelopes, answers
// and their key order), over the real store on a MongoDB-wire server, called with edge's
// signed tenant headers.

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "propapi_test", &db, nil) }

const testKey = "property-api-test-key-0123"

// bookingKey is booking-svc's key, accepted on BookingRoutes alone.
const bookingKey = "property-api-booking-key-0123"

type nopPublisher struct{}

func (nopPublisher) Publish(context.Context, ...events.Message) error { return nil }

var accounts atomic.Int64

func newServer(t *testing.T) (*fiber.App, string) {
	t.Helper()
	app, _, acc := newServerStore(t)
	return app, acc
}

// newServerStore is newServer that also gives the store (its outbox loader shows the
// events a change publishes).
func newServerStore(t *testing.T) (*fiber.App, *store.Store, string) {
	t.Helper()
	return newServerPhotos(t, photo.Config{})
}

// newServerPhotos is newServerStore whose photo links and photo processing are configured
// by photos.
func newServerPhotos(t *testing.T, photos photo.Config) (*fiber.App, *store.Store, string) {
	t.Helper()
	tel, err := telemetry.Setup(context.Background(), "property-api-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	box, err := seal.New(seal.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.New(context.Background(), db, box)
	if err != nil {
		t.Fatal(err)
	}
	ob := outbox.New(db, nopPublisher{}, st.Snapshot, outbox.Options{Lease: time.Minute, Sweep: time.Hour})
	st.Attach(ob)
	// The relay runs, as in the service: an account's erasure waits for its events to be
	// published.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = ob.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: 1 << 20})
	New(property.NewProperties(st, photo.NewFetcher(photos)), tel.Logger).Register(app, tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerEdge, Key: testKey},
		tenancy.Grant{Caller: tenancy.CallerBooking, Key: bookingKey, Routes: BookingRoutes}))
	return app, st, strconv.FormatInt(7000+accounts.Add(1), 10)
}

// call POSTs body to path on behalf of acc and answers the status and body.
func call(t *testing.T, app *fiber.App, acc, path, body string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: acc}, http.MethodPost, path, []byte(body), time.Now())
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// keys lists the keys of the JSON object at path (member names) of body, in their order.
func keys(t *testing.T, body []byte, path ...string) []string {
	t.Helper()
	out, err := phpjson.Keys(body, path...)
	if err != nil {
		t.Fatalf("not an object at %v: %v: %s", path, err, body)
	}
	return out
}

func createProperty(t *testing.T, app *fiber.App, acc, code string) string {
	t.Helper()
	body := `{"action":"create","property":{"internal_code":"` + code + `","name":"Seaside Villa with Garden","type":"Villa",
		"maxguest":6,"bedrooms":3,"bathrooms":2,"kitchens":1,"floor":"Ground","space":{"value":140,"unit":"meters"},
		"address":"1 Ocean Drive","city":"Miami Beach","postcode":"33139","country":"US","latitude":25.79,"longitude":-80.13}}`
	status, out := call(t, app, acc, "/internal/a/property", body)
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

func TestCategoryAndPromotionAnswers(t *testing.T) {
	app, acc := newServer(t)
	createProperty(t, app, acc, "V1")
	var cat string
	for _, r := range []struct {
		name, path, body string
		status           int
		want             string // the exact body; "%s" is the category's id
	}{
		{"create a category", "/internal/a/property-category", `{"action":"create","category":{"name":"Beach","properties":["V1"]}}`, 200, `{"code":200,"data":{"category_id":"%s"}}`},
		{"its name in another case", "/internal/a/property-category", `{"action":"create","category":{"name":"BEACH"}}`, 409,
			`{"code":409,"error_type":"conflict","error_message":"category name \"BEACH\" is already used by another category of this account (names are compared ignoring case)"}`},
		{"an unknown id", "/internal/a/property-category", `{"action":"delete","category":{"id":999999}}`, 404,
			`{"code":404,"error_type":"not_found","error_message":"category 999999 does not exist"}`},
		{"an unknown code", "/internal/a/property-category", `{"action":"create","tag":{"name":"T","properties":["NOPE"]}}`, 400,
			`{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field: tag.properties no property of this account has internal_code \"NOPE\"","errors":[{"field":"tag.properties","message":"no property of this account has internal_code \"NOPE\""}]}`},
		{"a promotion", "/internal/a/property-promotion", `{"action":"create","promotion":{"code":"Summer","name":"S","type":"flat","amount":5,"start_date":"2027-01-01"}}`, 200,
			`{"code":200,"data":{"promotion_code":"Summer"}}`},
		{"its code in another case", "/internal/a/property-promotion", `{"action":"create","promotion":{"code":"SUMMER","name":"S","type":"flat","amount":5,"start_date":"2027-01-01"}}`, 409,
			`{"code":409,"error_type":"conflict","error_message":"promotion code \"SUMMER\" is already used by this account (codes are compared ignoring case)"}`},
		{"a promotion deleted by its code in another case", "/internal/a/property-promotion", `{"action":"delete","promotion":{"code":"summer"}}`, 200,
			`{"code":200,"data":{"promotion_code":"Summer"}}`},
		{"an unknown promotion", "/internal/a/property-promotion", `{"action":"delete","promotion":{"code":"summer"}}`, 404,
			`{"code":404,"error_type":"not_found","error_message":"promotion code \"summer\" does not exist"}`},
	} {
		t.Run(r.name, func(t *testing.T) {
			status, out := call(t, app, acc, r.path, r.body)
			want := r.want
			if strings.Contains(want, "%s") {
				var a struct {
					Data struct {
						CategoryID string `json:"category_id"`
					} `json:"data"`
				}
				_ = json.Unmarshal(out, &a)
				cat = a.Data.CategoryID
				want = fmt.Sprintf(want, cat)
			}
			if status != r.status || string(out) != want {
				t.Errorf("%d %s\nwant %d %s", status, out, r.status, want)
			}
		})
	}
	if cat == "" {
		t.Fatal("no category id")
	}
}

// TestSettingsAnswer: the account-settings answer carries the new members after the old
// ones, in the event's order.
func TestSettingsAnswer(t *testing.T) {
	app, acc := newServer(t)
	status, out := call(t, app, acc, "/internal/a/account-settings", `{"exchange_rates":{"gbp":"0.79","EUR":0.92},"default_lead_source":2}`)
	if status != 200 {
		t.Fatalf("%d %s", status, out)
	}
	want := []string{"account_id", "version", "updated_at", "currency", "timezone", "languages", "lead_sources", "brands", "search",
		"weekend_nights", "default_lead_source", "exchange_rates", "categories", "tags", "promotions"}
	if got := keys(t, out, "data"); !slices.Equal(got, want) {
		t.Errorf("data keys %v\nwant %v", got, want)
	}
	if !strings.Contains(string(out), `"default_lead_source":2,"exchange_rates":{"EUR":"0.92","GBP":"0.79"},"categories":[],"tags":[],"promotions":[]`) {
		t.Errorf("answer %s", out)
	}
	for _, r := range []struct{ body, field string }{
		{`{"exchange_rates":{"XYZ":1}}`, "exchange_rates.XYZ"},
		{`{"exchange_rates":{"USD":1}}`, "exchange_rates.USD"},
		{`{"default_lead_source":9}`, "default_lead_source"},
	} {
		status, out := call(t, app, acc, "/internal/a/account-settings", r.body)
		if status != 400 || !strings.Contains(string(out), `"field":"`+r.field+`"`) {
			t.Errorf("%s: %d %s", r.body, status, out)
		}
	}
}

// TestSetPricesAnswers: pricingArray as an array is served; a bad item is status 4 naming it.
func TestSetPricesAnswers(t *testing.T) {
	app, acc := newServer(t)
	pid := createProperty(t, app, acc, "V1")
	id := acc + "_" + pid
	for _, r := range []struct{ name, body, want string }{
		{"array", `{"propertyId":"` + id + `","pricingArray":[{"date":"2027-03-01","recommended_price":120}]}`, `{"status":0,"message":"Success","data":[]}`},
		{"string", `{"propertyId":"` + id + `","pricingArray":"[{\"date\":\"2027-03-01\",\"recommended_price\":120}]"}`, `{"status":0,"message":"Success","data":[]}`},
		{"form list", `{"propertyId":"` + id + `","pricingArray":{"0":{"date":"2027-03-01","recommended_price":"120"}}}`, `{"status":0,"message":"Success","data":[]}`},
		{"bad item", `{"propertyId":"` + id + `","pricingArray":[{"date":"2027-03-01","recommended_price":120},{"date":"2027-03-02"}]}`, `pricingArray[1].recommended_price`},
	} {
		t.Run(r.name, func(t *testing.T) {
			_, out := call(t, app, acc, "/internal/b/setprices_minnights", r.body)
			if !strings.Contains(string(out), r.want) || (r.name == "bad item" && !strings.Contains(string(out), `"status":4`)) {
				t.Errorf("%s, want %s", out, r.want)
			}
		})
	}
}

// TestConcurrentGroupRequests: 30 clients create categories and tags of one account at once
// through HTTP, 10 of them one name: each distinct name lands once, with its own id.
func TestConcurrentGroupRequests(t *testing.T) {
	app, acc := newServer(t)
	createProperty(t, app, acc, "V1")
	const n = 30
	status := make([]int, n)
	together.Run(n, func(i int) {
		name := fmt.Sprintf("Group %d", i)
		if i < 10 {
			name = "Same"
		}
		kind := []string{"category", "tag"}[i%2]
		status[i], _ = call(t, app, acc, "/internal/a/property-category", `{"action":"create","`+kind+`":{"name":"`+name+`","properties":["V1"]}}`)
	})
	ok := 0
	for i, s := range status {
		switch {
		case s == 200:
			ok++
		case s != 409 || i >= 10:
			t.Errorf("request %d: HTTP %d", i, s)
		}
	}
	// 20 distinct names, and "Same" once as a category and once as a tag.
	_, out := call(t, app, acc, "/internal/a/account-settings", `{}`)
	var a struct {
		Data struct {
			Categories []struct{ ID int64 } `json:"categories"`
			Tags       []struct{ ID int64 } `json:"tags"`
		} `json:"data"`
	}
	_ = json.Unmarshal(out, &a)
	if ok != 22 || len(a.Data.Categories)+len(a.Data.Tags) != 22 {
		t.Errorf("%d creates succeeded, %d categories and %d tags stored; want 22 in all", ok, len(a.Data.Categories), len(a.Data.Tags))
	}
}
