package api

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/testkit/together"
)

// do sends method path with body on behalf of tenant, as edge signs it, and answers the
// status, the content type and the body.
func do(t *testing.T, app *fiber.App, tenant tenancy.Tenant, method, path, body string) (int, string, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(req.Header.Set, tenant, method, path, []byte(body), time.Now())
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), out
}

func propertyBody(code string) string {
	return `{"action":"create","property":{"internal_code":"` + code + `","name":"Seaside Villa with Garden","type":"Villa",
		"maxguest":6,"bedrooms":3,"bathrooms":2,"kitchens":1,"floor":"Ground","space":{"value":140,"unit":"meters"},
		"address":"1 Ocean Drive","city":"Miami Beach","postcode":"33139","country":"US","latitude":25.79,"longitude":-80.13}}`
}

// TestCreateLimitAnswers: the plan's most properties, carried by the signed tenant, refuses
// a create beyond it with 403 naming the limit; a deleted property frees its place.
func TestCreateLimitAnswers(t *testing.T) {
	app, acc := newServer(t)
	limited := tenancy.Tenant{AccountID: acc, MaxProperties: 2}
	const refused = `{"code":403,"error_type":"forbidden","error_message":"the account's plan allows at most 2 properties"}`
	for _, r := range []struct {
		name, body string
		status     int
		want       string // a prefix of the answer
	}{
		{"first of 2", propertyBody("V1"), 200, `{"code":200,"data":{"property_id":"`},
		{"second of 2", propertyBody("V2"), 200, `{"code":200,"data":{"property_id":"`},
		{"third of 2", propertyBody("V3"), 403, refused},
		{"an invalid body is invalid first", `{"action":"create","property":{"internal_code":"V3"}}`, 400, `{"code":400,"error_type":"validation_error"`},
		{"a code in use, at the limit: the limit", propertyBody("V1"), 403, refused},
		{"delete V2", `{"action":"delete","property":{"internal_code":"V2"}}`, 200, `{"code":200}`},
		{"third once one is deleted", propertyBody("V3"), 200, `{"code":200,"data":{"property_id":"`},
		{"fourth of 2", propertyBody("V4"), 403, refused},
	} {
		status, _, out := do(t, app, limited, http.MethodPost, "/internal/a/property", r.body)
		if status != r.status || !strings.HasPrefix(string(out), r.want) {
			t.Errorf("%s: %d %s\nwant %d %s…", r.name, status, out, r.status, r.want)
		}
	}
	// Without a limit in its plan, the account creates on.
	if status, _, out := do(t, app, tenancy.Tenant{AccountID: acc}, http.MethodPost, "/internal/a/property", propertyBody("V4")); status != 200 {
		t.Errorf("create without a limit: %d %s", status, out)
	}
}

// TestCreateLimitConcurrentRequests: twenty creates at once through HTTP at a limit of five:
// five answers 200, fifteen 403.
func TestCreateLimitConcurrentRequests(t *testing.T) {
	app, acc := newServer(t)
	const n, max = 20, 5
	status := make([]int, n)
	together.Run(n, func(i int) {
		status[i], _, _ = do(t, app, tenancy.Tenant{AccountID: acc, MaxProperties: max}, http.MethodPost, "/internal/a/property", propertyBody(fmt.Sprintf("C%d", i)))
	})
	ok, refused := 0, 0
	for _, s := range status {
		switch s {
		case 200:
			ok++
		case 403:
			refused++
		}
	}
	if ok != max || refused != n-max {
		t.Errorf("%d created, %d refused (%v), want %d and %d", ok, refused, status, max, n-max)
	}
}

// pngPhoto is a base64 PNG of w×h pixels.
func pngPhoto(t *testing.T, w, h int) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 90, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

func addPhoto(t *testing.T, app *fiber.App, acc, code string) {
	t.Helper()
	body := `{"action":"create","photo":{"internal_code":"` + code + `","image":"` + pngPhoto(t, 64, 48) + `"}}`
	if status, out := call(t, app, acc, "/internal/a/property-photo", body); status != 200 {
		t.Fatalf("photo of %s: %d %s", code, status, out)
	}
}

// mediaBytes sums the stored length of the media files whose id starts with one of keys.
func mediaBytes(t *testing.T) map[string]int64 {
	t.Helper()
	cur, err := db.Collection("media.files").Find(t.Context(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var files []struct {
		ID     string `bson:"_id"`
		Length int64  `bson:"length"`
	}
	if err := cur.All(t.Context(), &files); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, f := range files {
		key, _, _ := strings.Cut(f.ID, "/")
		out[key] += f.Length
	}
	return out
}

// TestUsageAnswers: the query's rules, and the figures counted from the records: properties
// created and deleted within the period, live now, and the photos stored with their bytes.
func TestUsageAnswers(t *testing.T) {
	app, acc := newServer(t)
	tenant := tenancy.Tenant{AccountID: acc}
	before := time.Now().UTC().Add(-time.Second)
	for _, c := range []string{"U1", "U2", "U3"} {
		createProperty(t, app, acc, c)
	}
	addPhoto(t, app, acc, "U1")
	addPhoto(t, app, acc, "U1")
	addPhoto(t, app, acc, "U3")
	if status, out := call(t, app, acc, "/internal/a/property", `{"action":"delete","property":{"internal_code":"U3"}}`); status != 200 {
		t.Fatalf("delete: %d %s", status, out)
	}
	after := time.Now().UTC().Add(time.Second)
	// The bytes of U1's two photos: every rendition of each.
	var want int64
	for key, n := range mediaBytes(t) {
		if strings.Contains(keysOfPhotos(t, acc, "U1"), key) {
			want += n
		}
	}
	if want == 0 {
		t.Fatal("no stored bytes found for U1's photos")
	}
	q := func(from, to time.Time) string {
		return "/internal/account/usage?from=" + from.Format(time.RFC3339) + "&to=" + to.Format(time.RFC3339)
	}
	for _, r := range []struct {
		name, path string
		status     int
		want       string
	}{
		{"the period of the changes", q(before, after), 200,
			fmt.Sprintf(`{"properties":{"current":2,"created":3,"deleted":1},"photos":{"count":2,"bytes":%d}}`, want)},
		{"a period before them", q(before.Add(-time.Hour), before), 200,
			fmt.Sprintf(`{"properties":{"current":2,"created":0,"deleted":0},"photos":{"count":2,"bytes":%d}}`, want)},
		{"from missing", "/internal/account/usage?to=2026-01-01T00:00:00Z", 400,
			`{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field: from is required","errors":[{"field":"from","message":"is required"}]}`},
		{"to missing", "/internal/account/usage?from=2026-01-01T00:00:00Z", 400,
			`{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field: to is required","errors":[{"field":"to","message":"is required"}]}`},
		{"from not a time", "/internal/account/usage?from=yesterday&to=2026-01-01T00:00:00Z", 400,
			`{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field: from must be an RFC 3339 time, such as 2026-11-01T00:00:00Z","errors":[{"field":"from","message":"must be an RFC 3339 time, such as 2026-11-01T00:00:00Z"}]}`},
		{"a date alone", "/internal/account/usage?from=2026-01-01T00:00:00Z&to=2026-02-01", 400,
			`{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field: to must be an RFC 3339 time, such as 2026-11-01T00:00:00Z","errors":[{"field":"to","message":"must be an RFC 3339 time, such as 2026-11-01T00:00:00Z"}]}`},
		{"to not after from", "/internal/account/usage?from=2026-01-01T00:00:00Z&to=2026-01-01T00:00:00Z", 400,
			`{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field: to must be after from","errors":[{"field":"to","message":"must be after from"}]}`},
	} {
		status, _, out := do(t, app, tenant, http.MethodGet, r.path, "")
		if status != r.status || string(out) != r.want {
			t.Errorf("%s: %d %s\nwant %d %s", r.name, status, out, r.status, r.want)
		}
	}
	// Another account counts nothing of this one's.
	_, other := newServer(t)
	status, _, out := do(t, app, tenancy.Tenant{AccountID: other}, http.MethodGet, q(before, after), "")
	if status != 200 || string(out) != `{"properties":{"current":0,"created":0,"deleted":0},"photos":{"count":0,"bytes":0}}` {
		t.Errorf("another account: %d %s", status, out)
	}
}

// keysOfPhotos lists the media keys of a property's photos, space-separated.
func keysOfPhotos(t *testing.T, acc, code string) string {
	t.Helper()
	var rec struct {
		Photos map[string]struct {
			Key string `bson:"key"`
		} `bson:"photos"`
	}
	err := db.Collection("properties").FindOne(t.Context(), bson.D{{Key: "account_id", Value: acc}, {Key: "internal_code", Value: code}}).Decode(&rec)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, p := range rec.Photos {
		keys = append(keys, p.Key)
	}
	slices.Sort(keys)
	return strings.Join(keys, " ")
}

// readZip opens an export answer.
func readZip(t *testing.T, body []byte) map[string][]byte {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatalf("not a whole zip: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name], err = io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Close()
	}
	return out
}

// TestExportArchive: the archive holds every record of the account, each collection listed
// in the manifest by its ids, every photo of a live property as its original image, and no
// sealed secret.
func TestExportArchive(t *testing.T) {
	app, acc := newServer(t)
	tenant := tenancy.Tenant{AccountID: acc}
	v1, v2 := createProperty(t, app, acc, "E1"), createProperty(t, app, acc, "E2")
	gone := createProperty(t, app, acc, "E3")
	addPhoto(t, app, acc, "E1")
	addPhoto(t, app, acc, "E3")
	for _, r := range []struct{ path, body string }{
		{"/internal/a/property-method", `{"internal_code":"E1","stripe":{"description":"cards","public_key":"pk_test_visible","secret_key":"sk_live_NEVER_EXPORTED"}}`},
		{"/internal/a/property", `{"action":"delete","property":{"internal_code":"E3"}}`},
		{"/internal/a/property-category", `{"action":"create","category":{"name":"Beach","properties":["E1"]}}`},
		{"/internal/a/property-category", `{"action":"create","tag":{"name":"Pool","properties":["E2"]}}`},
		{"/internal/a/property-promotion", `{"action":"create","promotion":{"code":"Summer","name":"S","type":"flat","amount":5,"start_date":"2027-01-01"}}`},
		{"/internal/a/account-brand", `{"action":"create","brand":{"name":"Sea","domains":["sea.example"],"properties":["E1"]}}`},
	} {
		if status, out := call(t, app, acc, r.path, r.body); status != 200 {
			t.Fatalf("%s %s: %d %s", r.path, r.body, status, out)
		}
	}
	status, ctype, body := do(t, app, tenant, http.MethodGet, "/internal/account/export", "")
	if status != 200 || ctype != "application/zip" {
		t.Fatalf("export: %d %s %.200s", status, ctype, body)
	}
	if bytes.Contains(body, []byte("sk_live_NEVER_EXPORTED")) {
		t.Error("the export holds a gateway secret")
	}
	files := readZip(t, body)
	var man struct {
		Service   string              `json:"service"`
		AccountID string              `json:"account_id"`
		Records   map[string][]string `json:"records"`
	}
	if err := json.Unmarshal(files["property-svc/manifest.json"], &man); err != nil {
		t.Fatalf("manifest: %v: %s", err, files["property-svc/manifest.json"])
	}
	if man.Service != "property-svc" || man.AccountID != acc {
		t.Errorf("manifest names %q %q", man.Service, man.AccountID)
	}
	photoKey := keysOfPhotos(t, acc, "E1")
	ids := []string{v1, v2, gone}
	slices.Sort(ids)
	for col, want := range map[string][]string{
		"properties": ids, "settings": {acc}, "brands": {"1"}, "categories": nil, "tags": nil,
		"promotions": {"Summer"}, "photos": {photoKey},
	} {
		got := man.Records[col]
		if want != nil && !slices.Equal(got, want) {
			t.Errorf("manifest %s: %v, want %v", col, got, want)
		}
		if want == nil && len(got) != 1 {
			t.Errorf("manifest %s: %v, want one id", col, got)
		}
		var recs []json.RawMessage
		if err := json.Unmarshal(files["property-svc/"+col+".json"], &recs); err != nil || len(recs) != len(got) {
			t.Errorf("%s.json: %d records (%v), manifest lists %d", col, len(recs), err, len(got))
		}
	}
	img := files["property-svc/photos/"+photoKey+".jpg"]
	if len(img) < 3 || !bytes.HasPrefix(img, []byte{0xff, 0xd8, 0xff}) {
		t.Errorf("the photo's image is not a JPEG: %d bytes", len(img))
	}
	var images []string
	for name := range files {
		if strings.HasPrefix(name, "property-svc/photos/") {
			images = append(images, name)
		}
	}
	if len(images) != 1 {
		t.Errorf("images %v, want the live property's one", images)
	}
	if !bytes.Contains(files["property-svc/properties.json"], []byte("pk_test_visible")) {
		t.Error("the public gateway values are missing from the export")
	}
	// An account with nothing exports empty collections.
	_, other := newServer(t)
	status, _, body = do(t, app, tenancy.Tenant{AccountID: other}, http.MethodGet, "/internal/account/export", "")
	empty := readZip(t, body)
	if status != 200 || string(empty["property-svc/properties.json"]) != "[]\n" || string(empty["property-svc/photos.json"]) != "[]\n" {
		t.Errorf("empty export: %d %s", status, empty["property-svc/manifest.json"])
	}
}

// TestEraseAnswers: the erasure answers {"erased":true}, again when repeated; afterwards the
// account's writes are refused and its reads find nothing.
func TestEraseAnswers(t *testing.T) {
	app, acc := newServer(t)
	tenant := tenancy.Tenant{AccountID: acc}
	createProperty(t, app, acc, "X1")
	addPhoto(t, app, acc, "X1")
	media := func() int {
		resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/media/"+keysOfPhotos(t, acc, "X1")+"/small.jpg", nil), -1)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if status := media(); status != 200 { // and now in the replica's cache
		t.Fatalf("the photo before the erasure: %d", status)
	}
	key := keysOfPhotos(t, acc, "X1")
	for range 2 {
		status, ctype, out := do(t, app, tenant, http.MethodPost, "/internal/account/erase", "")
		if status != 200 || !strings.HasPrefix(ctype, "application/json") || string(out) != `{"erased":true}` {
			t.Errorf("erase: %d %s %s", status, ctype, out)
		}
	}
	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/media/"+key+"/small.jpg", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("the erased account's photo is served: %d", resp.StatusCode)
	}
	// A cache revalidating the copy it holds learns that it is gone (not a 304 that keeps it).
	req := httptest.NewRequest(http.MethodGet, "/media/"+key+"/small.jpg", nil)
	req.Header.Set("If-None-Match", `"`+key+`-small"`)
	if resp, err = app.Test(req, -1); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("the erased account's photo revalidated: %d, want 404", resp.StatusCode)
	}
	const erased = `{"code":403,"error_type":"forbidden","error_message":"the account has been erased"}`
	for _, r := range []struct{ path, body string }{
		{"/internal/a/property", propertyBody("X2")},
		{"/internal/a/account-settings", `{"currency":"EUR"}`},
		{"/internal/a/account-brand", `{"action":"create","brand":{"name":"Sea"}}`},
		{"/internal/a/property-category", `{"action":"create","category":{"name":"Beach"}}`},
	} {
		if status, out := call(t, app, acc, r.path, r.body); status != 403 || string(out) != erased {
			t.Errorf("%s after the erasure: %d %s", r.path, status, out)
		}
	}
	status, _, out := do(t, app, tenant, http.MethodGet, "/internal/account/usage?from=2020-01-01T00:00:00Z&to=2100-01-01T00:00:00Z", "")
	if status != 200 || string(out) != `{"properties":{"current":0,"created":0,"deleted":0},"photos":{"count":0,"bytes":0}}` {
		t.Errorf("usage after the erasure: %d %s", status, out)
	}
	// Its property is gone: not found, as one that never existed.
	update := strings.Replace(propertyBody("X1"), `"create"`, `"update"`, 1)
	if status, out := call(t, app, acc, "/internal/a/property", update); status != 404 {
		t.Errorf("update after the erasure: %d %s", status, out)
	}
}

// TestAccountRoutesConcurrentClients: usage and export of two accounts asked at once, many
// times over, each answer holding only its own account's records.
func TestAccountRoutesConcurrentClients(t *testing.T) {
	app, a := newServer(t)
	_, b := newServer(t)
	ids := map[string][]string{}
	for acc, codes := range map[string][]string{a: {"A1", "A2"}, b: {"B1"}} {
		for _, c := range codes {
			ids[acc] = append(ids[acc], createProperty(t, app, acc, c))
		}
		slices.Sort(ids[acc])
	}
	const n = 16
	errs := make([]string, n)
	together.Run(n, func(i int) {
		acc := []string{a, b}[i%2]
		tenant := tenancy.Tenant{AccountID: acc}
		if i%4 < 2 {
			status, _, out := do(t, app, tenant, http.MethodGet, "/internal/account/usage?from=2020-01-01T00:00:00Z&to=2100-01-01T00:00:00Z", "")
			want := fmt.Sprintf(`{"properties":{"current":%d,"created":%d,"deleted":0},"photos":{"count":0,"bytes":0}}`, len(ids[acc]), len(ids[acc]))
			if status != 200 || string(out) != want {
				errs[i] = fmt.Sprintf("usage of %s: %d %s", acc, status, out)
			}
			return
		}
		status, _, body := do(t, app, tenant, http.MethodGet, "/internal/account/export", "")
		z, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
		if status != 200 || err != nil {
			errs[i] = fmt.Sprintf("export of %s: %d %v", acc, status, err)
			return
		}
		for _, f := range z.File {
			if f.Name != "property-svc/manifest.json" {
				continue
			}
			r, _ := f.Open()
			var man struct {
				AccountID string              `json:"account_id"`
				Records   map[string][]string `json:"records"`
			}
			err := json.NewDecoder(r).Decode(&man)
			_ = r.Close()
			if err != nil || man.AccountID != acc || !slices.Equal(man.Records["properties"], ids[acc]) {
				errs[i] = fmt.Sprintf("export of %s lists %s %v (%v)", acc, man.AccountID, man.Records["properties"], err)
			}
		}
	})
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
}

// TestExportCutShort: a photo that cannot be read once the archive has begun (its stored
// bytes are missing) cuts the archive short: no zip reader takes it for whole.
func TestExportCutShort(t *testing.T) {
	app, acc := newServer(t)
	createProperty(t, app, acc, "S1")
	addPhoto(t, app, acc, "S1")
	key := keysOfPhotos(t, acc, "S1")
	if _, err := db.Collection("media.chunks").DeleteMany(t.Context(), bson.D{{Key: "files_id", Value: key + "/original"}}); err != nil {
		t.Fatal(err)
	}
	_, _, body := do(t, app, tenancy.Tenant{AccountID: acc}, http.MethodGet, "/internal/account/export", "")
	if _, err := zip.NewReader(bytes.NewReader(body), int64(len(body))); err == nil {
		t.Error("an export missing a photo's bytes reads as a whole zip")
	}
}
