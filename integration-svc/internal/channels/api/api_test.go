package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/channels/store"
	"github.com/vros/vros/integration-svc/internal/ical/poller"
	"github.com/vros/vros/libs/fields/fieldstest"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "channelapi_test", &db, nil) }

const testKey = "channelapi-test-key-0123"

type properties struct{}

func (properties) PropertyID(_ context.Context, _, code string) (int64, error) {
	switch code {
	case "V1":
		return 17, nil
	case "V2":
		return 18, nil
	case "V3":
		return 19, nil
	case "DOWN":
		return 0, errors.New("booking-svc: connection refused")
	}
	return 0, poller.ErrNoProperty
}

type policy map[string]bool

func (p policy) AllowsPrivate(_ context.Context, account string) (bool, error) {
	return p[account], nil
}

// adapter is a channel.Adapter whose Test answers err after one recorded exchange.
type adapter struct {
	name string
	mu   sync.Mutex
	err  error
	seen []channel.Connection
}

func (a *adapter) Name() string { return a.name }
func (a *adapter) PushARI(context.Context, channel.Batch, func(context.Context, string) error,
	func([]channel.Availability, []channel.Rate) error, func(channel.Exchange)) error {
	return nil
}
func (a *adapter) PullRevisions(context.Context, channel.Connection, func(channel.Exchange)) ([]channel.Revision, error) {
	return nil, nil
}
func (a *adapter) Ack(context.Context, channel.Connection, channel.Revision, func(channel.Exchange)) error {
	return nil
}
func (a *adapter) Test(_ context.Context, c channel.Connection, record func(channel.Exchange)) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seen = append(a.seen, c)
	ex := channel.Exchange{Kind: channel.KindTest, Request: []byte("GET /api/v1/properties"), HTTPStatus: 200, Response: []byte(`{"data":[]}`)}
	if a.err != nil {
		ex.HTTPStatus, ex.Err, ex.Response = 401, a.err, []byte(`{"errors":{"code":"unauthorized"}}`)
	}
	record(ex)
	return a.err
}

type mark struct {
	account          string
	connection, prop int64
	full             bool
}

type env struct {
	app      *fiber.App
	open     string // may name private addresses
	shut     string
	stores   *store.Stores
	channex  *adapter
	mu       sync.Mutex
	marks    []mark
	markFail error
}

func (e *env) takeMarks() []mark {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.marks
	e.marks = nil
	return m
}

var accounts atomic.Int64

func newEnv(t *testing.T) *env {
	t.Helper()
	tel, err := telemetry.Setup(context.Background(), "channelapi-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	box, err := seal.New(seal.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), db, box)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{stores: st, channex: &adapter{name: channel.Channex},
		open: fmt.Sprintf("acc%d", 100+accounts.Add(1)), shut: fmt.Sprintf("acc%d", 100+accounts.Add(1))}
	e.app = httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: 1 << 20})
	a := &API{Connections: st.Connections, Log: st.Log, Conflicts: st.Conflicts, Properties: properties{},
		Policy: policy{e.open: true}, AllowHTTP: true,
		Adapter: func(name string) channel.Adapter {
			if name == channel.Channex {
				return e.channex
			}
			return nil
		},
		MarkDirty: func(_ context.Context, account string, connection, property int64, full bool) error {
			e.mu.Lock()
			defer e.mu.Unlock()
			if e.markFail != nil {
				return e.markFail
			}
			e.marks = append(e.marks, mark{account, connection, property, full})
			return nil
		}}
	a.Register(e.app, tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerEdge, Key: testKey}))
	return e
}

func (e *env) call(t *testing.T, acc, resource, body string) (int, map[string]any) {
	t.Helper()
	code, out, _ := e.callRaw(t, acc, resource, body)
	return code, out
}

func (e *env) callRaw(t *testing.T, acc, resource, body string) (int, map[string]any, string) {
	t.Helper()
	path := "/internal/a/" + resource
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(PublicURLHeader, "https://vros.example/")
	tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: acc}, http.MethodPost, path, []byte(body), time.Now())
	resp, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	return resp.StatusCode, out, string(raw)
}

func data(out map[string]any) map[string]any { d, _ := out["data"].(map[string]any); return d }

func violations(out map[string]any) string {
	var list []string
	errs, _ := out["errors"].([]any)
	for _, e := range errs {
		m := e.(map[string]any)
		list = append(list, fmt.Sprint(m["field"], ": ", m["message"]))
	}
	return strings.Join(list, "\n")
}

type row struct {
	name  string
	acc   string
	code  int
	want  string
	edits []fieldstest.Edit
}

func set(path string, v any) fieldstest.Edit { return fieldstest.Set(path, v) }

// state is everything the account's resources list, for "a refused request changes nothing".
func (e *env) state(t *testing.T, acc string) string {
	t.Helper()
	_, c := e.call(t, acc, "channel-connection", `{"action":"list"}`)
	_, m := e.call(t, acc, "channel-mapping", `{"action":"list"}`)
	return fmt.Sprint(data(c), data(m))
}

func (e *env) runRows(t *testing.T, resource, base string, rows []row) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			body := string(fieldstest.Apply(t, base, r.edits...))
			before := e.state(t, r.acc)
			code, out := e.call(t, r.acc, resource, body)
			if code != r.code || violations(out) != r.want {
				t.Fatalf("%d %v, want %d %q\nbody %s", code, out, r.code, r.want, body)
			}
			if code != 200 {
				if after := e.state(t, r.acc); after != before {
					t.Fatalf("a refused request changed\n%s\ninto\n%s", before, after)
				}
			}
		})
	}
}

const channexCreate = `{"action":"create","connection":{"adapter":"channex","endpoint":"http://127.0.0.1:9/cm","credentials":{"api_key":"k-123"},"channel":"BookingCom","days":365}}`

func (e *env) newConnection(t *testing.T, acc string) int64 {
	t.Helper()
	body := channexCreate
	if acc == e.shut { // may name no private address
		body = strings.Replace(body, "http://127.0.0.1:9/cm", "https://cm.example/", 1)
	}
	code, out := e.call(t, acc, "channel-connection", body)
	if code != 200 {
		t.Fatal(out)
	}
	return int64(data(out)["connection_id"].(float64))
}

// TestConnectionRules: every field and rule of channel-connection, named in the A envelope;
// a refused request changes nothing.
func TestConnectionRules(t *testing.T) {
	e := newEnv(t)
	acc := e.open
	rows := []row{
		{"valid", acc, 200, "", nil},
		{"unknown member ignored", acc, 200, "", []fieldstest.Edit{set("connection.colour", "red"), set("extra", 1)}},
		{"adapter any case", acc, 200, "", []fieldstest.Edit{set("connection.adapter", "Channex")}},
		{"action missing", acc, 400, "action: is required", []fieldstest.Edit{set("action", fieldstest.Del)}},
		{"action unknown", acc, 400, "action: must be one of create, list, get, update, delete, rotate_token, test", []fieldstest.Edit{set("action", "sync")}},
		{"connection missing", acc, 400, "connection: is required", []fieldstest.Edit{set("connection", fieldstest.Del)}},
		{"adapter missing", acc, 400, "connection.adapter: is required", []fieldstest.Edit{set("connection.adapter", fieldstest.Del)}},
		{"adapter unknown", acc, 400, "connection.adapter: must be one of channex, opentravel", []fieldstest.Edit{set("connection.adapter", "siteminder")}},
		{"endpoint missing", acc, 400, "connection.endpoint: is required", []fieldstest.Edit{set("connection.endpoint", fieldstest.Del)}},
		{"endpoint not a link", acc, 400, "connection.endpoint: must be an absolute http(s) link", []fieldstest.Edit{set("connection.endpoint", "cm.example")}},
		{"endpoint ftp", acc, 400, "connection.endpoint: must be an http or https link", []fieldstest.Edit{set("connection.endpoint", "ftp://cm.example/")}},
		{"endpoint too long", acc, 400, "connection.endpoint: must be at most 2000 characters", []fieldstest.Edit{set("connection.endpoint", "https://cm.example/"+fieldstest.Chars(1990))}},
		{"endpoint private without the switch", e.shut, 400, "connection.endpoint: must not be a private, loopback or link-local address", nil},
		{"credentials missing", acc, 400, "connection.credentials: is required", []fieldstest.Edit{set("connection.credentials", fieldstest.Del)}},
		{"credentials not an object", acc, 400, "connection.credentials: must be an object", []fieldstest.Edit{set("connection.credentials", "k")}},
		{"api_key missing", acc, 400, "connection.credentials.api_key: is required", []fieldstest.Edit{set("connection.credentials.api_key", fieldstest.Del)}},
		{"api_key blank", acc, 400, "connection.credentials.api_key: is required", []fieldstest.Edit{set("connection.credentials.api_key", " ")}},
		{"api_key too long", acc, 400, "connection.credentials.api_key: must be at most 500 characters", []fieldstest.Edit{set("connection.credentials.api_key", fieldstest.Chars(501))}},
		{"channex with a password", acc, 400, "connection.credentials.password: is not used by the channex adapter (it takes api_key)", []fieldstest.Edit{set("connection.credentials.password", "p")}},
		{"opentravel without username", acc, 400, "connection.credentials.username: is required\nconnection.credentials.password: is required\nconnection.credentials.api_key: is not used by the opentravel adapter (it takes username and password)",
			[]fieldstest.Edit{set("connection.adapter", "opentravel")}},
		{"opentravel valid", acc, 200, "", []fieldstest.Edit{set("connection.adapter", "opentravel"),
			set("connection.credentials", map[string]any{"username": "u", "password": "p"})}},
		{"channel bad", acc, 400, "connection.channel: must contain only letters a-z, digits, _ and -", []fieldstest.Edit{set("connection.channel", "booking.com")}},
		{"channel too long", acc, 400, "connection.channel: must be at most 32 characters", []fieldstest.Edit{set("connection.channel", fieldstest.Chars(33))}},
		{"days zero", acc, 400, "connection.days: must be between 1 and 730", []fieldstest.Edit{set("connection.days", 0)}},
		{"days too many", acc, 400, "connection.days: must be between 1 and 730", []fieldstest.Edit{set("connection.days", 731)}},
		{"days not whole", acc, 400, "connection.days: must be a whole number", []fieldstest.Edit{set("connection.days", 1.5)}},
		{"enabled bad", acc, 400, "connection.enabled: must be a boolean", []fieldstest.Edit{set("connection.enabled", "maybe")}},
	}
	e.runRows(t, "channel-connection", channexCreate, rows)

	id := e.newConnection(t, acc)
	upd := []struct {
		name, body, want string
		code             int
	}{
		{"update id missing", `{"action":"update","connection":{"days":3}}`, "connection.connection_id: is required", 400},
		{"get id not a number", `{"action":"get","connection":{"connection_id":"abc"}}`, "connection.connection_id: must be a number", 400},
		{"get unknown", `{"action":"get","connection":{"connection_id":999999}}`, "", 404},
		{"rotate unknown", `{"action":"rotate_token","connection":{"connection_id":999999}}`, "", 404},
		{"delete unknown", `{"action":"delete","connection":{"connection_id":999999}}`, "", 404},
		{"test unknown", `{"action":"test","connection":{"connection_id":999999}}`, "", 404},
		{"update unknown", `{"action":"update","connection":{"connection_id":999999,"days":3}}`, "", 404},
		{"update adapter", fmt.Sprintf(`{"action":"update","connection":{"connection_id":%d,"adapter":"opentravel"}}`, id),
			"connection.adapter: cannot be changed; an update takes endpoint, credentials, channel, enabled and days", 400},
		{"update endpoint", fmt.Sprintf(`{"action":"update","connection":{"connection_id":%d,"endpoint":"x"}}`, id), "connection.endpoint: must be an absolute http(s) link", 400},
		{"update days", fmt.Sprintf(`{"action":"update","connection":{"connection_id":%d,"days":0}}`, id), "connection.days: must be between 1 and 730", 400},
		{"update channel", fmt.Sprintf(`{"action":"update","connection":{"connection_id":%d,"channel":""}}`, id), "connection.channel: is required", 400},
		{"update enabled", fmt.Sprintf(`{"action":"update","connection":{"connection_id":%d,"enabled":null,"days":"x"}}`, id), "connection.days: must be a number", 400},
		{"update credentials of the other adapter", fmt.Sprintf(`{"action":"update","connection":{"connection_id":%d,"days":9,"credentials":{"username":"u"}}}`, id),
			"connection.credentials.username: is not used by the channex adapter (it takes api_key)", 400},
		{"update credentials blank", fmt.Sprintf(`{"action":"update","connection":{"connection_id":%d,"credentials":{"api_key":""}}}`, id),
			"connection.credentials.api_key: is required", 400},
		{"update credentials not an object", fmt.Sprintf(`{"action":"update","connection":{"connection_id":%d,"credentials":7}}`, id),
			"connection.credentials: must be an object", 400},
	}
	for _, r := range upd {
		t.Run(r.name, func(t *testing.T) {
			before := e.state(t, acc)
			code, out := e.call(t, acc, "channel-connection", r.body)
			if code != r.code || violations(out) != r.want {
				t.Fatalf("%d %v, want %d %q", code, out, r.code, r.want)
			}
			if after := e.state(t, acc); after != before {
				t.Fatalf("a refused request changed\n%s\ninto\n%s", before, after)
			}
		})
	}
	if k := e.stores.Connections; k != nil {
		c, _ := k.Connection(context.Background(), acc, id)
		if c.APIKey != "k-123" || c.Days != 365 {
			t.Fatalf("refused updates changed the connection: %+v", c)
		}
	}
}

// TestConnectionLifecycle: create answers the token and URL once; no answer carries the
// credentials; rotate, update, test, delete (with the mappings).
func TestConnectionLifecycle(t *testing.T) {
	e := newEnv(t)
	acc := e.open
	code, out, raw := e.callRaw(t, acc, "channel-connection", channexCreate)
	if code != 200 || strings.Contains(raw, "k-123") {
		t.Fatalf("%d %s", code, raw)
	}
	c := data(out)
	id := int64(c["connection_id"].(float64))
	tok, _ := c["inbound_token"].(string)
	if len(tok) != 43 || c["inbound_url"] != "https://vros.example/channels/channex/"+tok || c["credentials_set"] != true ||
		c["channel"] != "bookingcom" || c["days"] != float64(365) || c["enabled"] != true || c["adapter"] != "channex" {
		t.Fatal(c)
	}
	if got, err := e.stores.Connections.ConnectionByToken(context.Background(), channel.Channex, tok); err != nil || got.ID != id {
		t.Fatalf("the answered token does not find the connection: %v", err)
	}
	_, out, raw = e.callRaw(t, acc, "channel-connection", fmt.Sprintf(`{"action":"get","connection":{"connection_id":"%d"}}`, id))
	if g := data(out); g["inbound_token"] != nil || g["inbound_url"] != nil || g["credentials_set"] != true || strings.Contains(raw, "k-123") {
		t.Fatalf("get: %s", raw)
	}
	// Default channel and days.
	_, out = e.call(t, acc, "channel-connection", `{"action":"create","connection":{"adapter":"opentravel","endpoint":"http://127.0.0.1:9/ota","credentials":{"username":"u","password":"secret-pw"}}}`)
	if d := data(out); d["channel"] != "opentravel" || d["days"] != float64(500) || d["adapter"] != "opentravel" {
		t.Fatal(d)
	}
	ota := int64(data(out)["connection_id"].(float64))

	// Rotation: a new token, the old one dead.
	_, out = e.call(t, acc, "channel-connection", fmt.Sprintf(`{"action":"rotate_token","connection":{"connection_id":%d}}`, id))
	tok2, _ := data(out)["inbound_token"].(string)
	if tok2 == "" || tok2 == tok || data(out)["inbound_url"] != "https://vros.example/channels/channex/"+tok2 {
		t.Fatal(out)
	}
	if _, err := e.stores.Connections.ConnectionByToken(context.Background(), channel.Channex, tok); !errors.Is(err, channel.ErrNotFound) {
		t.Fatalf("old token after rotation: %v", err)
	}

	// Mappings, counts, and an update that moves the connection re-syncs its mappings.
	for _, code := range []string{"V1", "V2"} {
		if c, out := e.call(t, acc, "channel-mapping", fmt.Sprintf(`{"action":"create","mapping":{"connection_id":%d,"internal_code":%q,"remote_property_id":"p-%s","room_type_id":"r","rate_plans":[{"rate_plan_id":0,"remote_rate_plan_id":"x"}]}}`, id, code, code)); c != 200 {
			t.Fatal(out)
		}
	}
	if _, _, err := e.stores.Conflicts.Record(context.Background(), channel.Conflict{Account: acc, ConnectionID: id, RevisionID: "r1", Reason: channel.ReasonNightsTaken}); err != nil {
		t.Fatal(err)
	}
	e.takeMarks()
	_, out = e.call(t, acc, "channel-connection", `{"action":"list"}`)
	list := data(out)["connections"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["mappings"] != float64(2) || list[0].(map[string]any)["open_conflicts"] != float64(1) ||
		list[1].(map[string]any)["mappings"] != float64(0) || list[0].(map[string]any)["inbound_token"] != nil {
		t.Fatal(list)
	}
	_, out, raw = e.callRaw(t, acc, "channel-connection", fmt.Sprintf(`{"action":"update","connection":{"connection_id":%d,"days":30,"credentials":{"api_key":"k-456"}}}`, id))
	if d := data(out); d["days"] != float64(30) || strings.Contains(raw, "k-456") || d["mappings"] != float64(2) {
		t.Fatal(raw)
	}
	if m := e.takeMarks(); len(m) != 2 || !m[0].full || m[0].connection != id || m[0].prop != 17 || m[1].prop != 18 {
		t.Fatalf("marks after a change of days and key: %+v", m)
	}
	if c, _ := e.stores.Connections.Connection(context.Background(), acc, id); c.APIKey != "k-456" {
		t.Fatal(c.APIKey)
	}
	// A rotation answers the counts like every other answer of the connection.
	_, out = e.call(t, acc, "channel-connection", fmt.Sprintf(`{"action":"rotate_token","connection":{"connection_id":%d}}`, id))
	if d := data(out); d["mappings"] != float64(2) || d["open_conflicts"] != float64(1) || d["inbound_token"] == nil {
		t.Fatalf("rotate_token's counts: %v", d)
	}
	// Disabling marks nothing; enabling again marks every mapping.
	e.call(t, acc, "channel-connection", fmt.Sprintf(`{"action":"update","connection":{"connection_id":%d,"enabled":false}}`, id))
	if m := e.takeMarks(); len(m) != 0 {
		t.Fatal(m)
	}
	e.call(t, acc, "channel-connection", fmt.Sprintf(`{"action":"update","connection":{"connection_id":%d,"enabled":"1"}}`, id))
	if m := e.takeMarks(); len(m) != 2 {
		t.Fatal(m)
	}
	// An OpenTravel password alone keeps the username.
	e.call(t, acc, "channel-connection", fmt.Sprintf(`{"action":"update","connection":{"connection_id":%d,"credentials":{"password":"pw2"}}}`, ota))
	if c, _ := e.stores.Connections.Connection(context.Background(), acc, ota); c.Username != "u" || c.Password != "pw2" {
		t.Fatalf("%+v", c.Credentials)
	}

	// test: one exchange through the adapter, logged; the answer says how it went.
	code, out = e.call(t, acc, "channel-connection", fmt.Sprintf(`{"action":"test","connection":{"connection_id":%d}}`, id))
	if d := data(out); code != 200 || d["ok"] != true || d["http_status"] != float64(200) || d["error"] != "" {
		t.Fatal(code, out)
	}
	if len(e.channex.seen) != 1 || e.channex.seen[0].APIKey != "k-456" || e.channex.seen[0].Endpoint != "http://127.0.0.1:9/cm" {
		t.Fatalf("the adapter saw %+v", e.channex.seen)
	}
	e.channex.err = &channel.RemoteError{Status: 401, Message: "unauthorized"}
	_, out = e.call(t, acc, "channel-connection", fmt.Sprintf(`{"action":"test","connection":{"connection_id":%d}}`, id))
	if d := data(out); d["ok"] != false || d["http_status"] != float64(401) || !strings.Contains(d["error"].(string), "401") {
		t.Fatal(out)
	}
	_, out = e.call(t, acc, "channel-log", fmt.Sprintf(`{"action":"list","log":{"connection_id":%d,"kind":"test"}}`, id))
	entries := data(out)["entries"].([]any)
	if len(entries) != 2 || entries[0].(map[string]any)["status"] != "error" || entries[1].(map[string]any)["status"] != "ok" ||
		entries[0].(map[string]any)["http_status"] != float64(401) {
		t.Fatal(entries)
	}
	// No adapter for OpenTravel in this build: 503, not a crash.
	if code, _ := e.call(t, acc, "channel-connection", fmt.Sprintf(`{"action":"test","connection":{"connection_id":%d}}`, ota)); code != 503 {
		t.Fatal(code)
	}

	// delete takes the mappings with it.
	_, out = e.call(t, acc, "channel-connection", fmt.Sprintf(`{"action":"delete","connection":{"connection_id":%d}}`, id))
	if data(out)["deleted"] != true {
		t.Fatal(out)
	}
	if code, _ := e.call(t, acc, "channel-connection", fmt.Sprintf(`{"action":"get","connection":{"connection_id":%d}}`, id)); code != 404 {
		t.Fatal(code)
	}
	if _, out := e.call(t, acc, "channel-mapping", `{"action":"list"}`); len(data(out)["mappings"].([]any)) != 0 {
		t.Fatal(out)
	}
}

const mappingCreate = `{"action":"create","mapping":{"connection_id":%d,"internal_code":"V1","remote_property_id":"hotel-1","room_type_id":"room-1","rate_plans":[{"rate_plan_id":0,"remote_rate_plan_id":"bar"},{"rate_plan_id":"4","remote_rate_plan_id":"nr"}]}}`

// TestMappingRules: every field and rule of channel-mapping; a refused request changes
// nothing and marks nothing.
func TestMappingRules(t *testing.T) {
	e := newEnv(t)
	acc := e.open
	id := e.newConnection(t, acc)
	other := e.newConnection(t, e.shut)
	base := fmt.Sprintf(mappingCreate, id)
	rows := []row{
		{"action unknown", acc, 400, "action: must be one of create, list, get, update, delete, sync", []fieldstest.Edit{set("action", "push")}},
		{"mapping missing", acc, 400, "mapping: is required", []fieldstest.Edit{set("mapping", fieldstest.Del)}},
		{"connection_id missing", acc, 400, "mapping.connection_id: is required", []fieldstest.Edit{set("mapping.connection_id", fieldstest.Del)}},
		{"connection unknown", acc, 404, "", []fieldstest.Edit{set("mapping.connection_id", 999999)}},
		{"connection of another account", acc, 404, "", []fieldstest.Edit{set("mapping.connection_id", other)}},
		{"internal_code missing", acc, 400, "mapping.internal_code: is required", []fieldstest.Edit{set("mapping.internal_code", fieldstest.Del)}},
		{"internal_code too long", acc, 400, "mapping.internal_code: must be at most 10 characters", []fieldstest.Edit{set("mapping.internal_code", fieldstest.Chars(11))}},
		{"internal_code unknown", acc, 404, "", []fieldstest.Edit{set("mapping.internal_code", "V9")}},
		{"booking-svc down", acc, 503, "", []fieldstest.Edit{set("mapping.internal_code", "DOWN")}},
		{"remote_property_id missing", acc, 400, "mapping.remote_property_id: is required", []fieldstest.Edit{set("mapping.remote_property_id", fieldstest.Del)}},
		{"remote_property_id too long", acc, 400, "mapping.remote_property_id: must be at most 100 characters", []fieldstest.Edit{set("mapping.remote_property_id", fieldstest.Chars(101))}},
		{"room_type_id blank", acc, 400, "mapping.room_type_id: is required", []fieldstest.Edit{set("mapping.room_type_id", "")}},
		{"room_type_id too long", acc, 400, "mapping.room_type_id: must be at most 100 characters", []fieldstest.Edit{set("mapping.room_type_id", fieldstest.Chars(101))}},
		{"rate_plans missing", acc, 400, "mapping.rate_plans: is required", []fieldstest.Edit{set("mapping.rate_plans", fieldstest.Del)}},
		{"rate_plans empty", acc, 400, "mapping.rate_plans: must have at least 1 item", []fieldstest.Edit{set("mapping.rate_plans", []any{})}},
		{"rate_plans not an array", acc, 400, "mapping.rate_plans: must be an array", []fieldstest.Edit{set("mapping.rate_plans", "bar")}},
		{"rate_plans item not an object", acc, 400, "mapping.rate_plans[1]: must be an object", []fieldstest.Edit{set("mapping.rate_plans[1]", 4)}},
		{"rate_plan_id missing", acc, 400, "mapping.rate_plans[0].rate_plan_id: is required", []fieldstest.Edit{set("mapping.rate_plans[0].rate_plan_id", fieldstest.Del)}},
		{"rate_plan_id negative", acc, 400, "mapping.rate_plans[0].rate_plan_id: must be between 0 and 9007199254740992", []fieldstest.Edit{set("mapping.rate_plans[0].rate_plan_id", -1)}},
		{"rate_plan_id twice", acc, 400, "mapping.rate_plans[1].rate_plan_id: is mapped twice; each vros rate plan once", []fieldstest.Edit{set("mapping.rate_plans[1].rate_plan_id", 0)}},
		{"remote rate plan twice", acc, 400, "mapping.rate_plans[1].remote_rate_plan_id: is mapped twice; each remote rate plan once", []fieldstest.Edit{set("mapping.rate_plans[1].remote_rate_plan_id", "bar")}},
		{"remote rate plan blank", acc, 400, "mapping.rate_plans[0].remote_rate_plan_id: is required", []fieldstest.Edit{set("mapping.rate_plans[0].remote_rate_plan_id", " ")}},
		{"remote rate plan too long", acc, 400, "mapping.rate_plans[0].remote_rate_plan_id: must be at most 100 characters", []fieldstest.Edit{set("mapping.rate_plans[0].remote_rate_plan_id", fieldstest.Chars(101))}},
		{"enabled bad", acc, 400, "mapping.enabled: must be a boolean", []fieldstest.Edit{set("mapping.enabled", 2)}},
		{"every bad field at once", acc, 400, "mapping.connection_id: must be a number\nmapping.internal_code: is required\nmapping.room_type_id: is required\nmapping.rate_plans: must have at least 1 item",
			[]fieldstest.Edit{set("mapping.connection_id", "x"), set("mapping.internal_code", fieldstest.Del), set("mapping.room_type_id", fieldstest.Del), set("mapping.rate_plans", []any{})}},
	}
	e.runRows(t, "channel-mapping", base, rows)
	if m := e.takeMarks(); len(m) != 0 {
		t.Fatalf("refused requests marked %+v", m)
	}
	// The valid one, then the clashes (409, nothing changed).
	if code, out := e.call(t, acc, "channel-mapping", base); code != 200 {
		t.Fatal(out)
	}
	if m := e.takeMarks(); len(m) != 1 || m[0] != (mark{acc, id, 17, true}) {
		t.Fatalf("create marks %+v", m)
	}
	clash := []row{
		{"property mapped twice", acc, 409, "", []fieldstest.Edit{set("mapping.room_type_id", "room-2")}},
		{"room type of another property", acc, 409, "", []fieldstest.Edit{set("mapping.internal_code", "V2")}},
	}
	e.runRows(t, "channel-mapping", base, clash)
	_, out := e.call(t, acc, "channel-mapping", string(fieldstest.Apply(t, base, set("mapping.internal_code", "V2"))))
	if !strings.Contains(fmt.Sprint(out["error_message"]), `mapped to another property ("V1")`) {
		t.Fatal(out)
	}
	if code, out := e.call(t, acc, "channel-mapping", string(fieldstest.Apply(t, base, set("mapping.internal_code", "V2"), set("mapping.room_type_id", "room-2")))); code != 200 {
		t.Fatal(out)
	}
	e.takeMarks()
	upd := []struct {
		name, body, want string
		code             int
	}{
		{"key missing", fmt.Sprintf(`{"action":"get","mapping":{"connection_id":%d}}`, id), "mapping.internal_code: is required (or property_id)", 400},
		{"connection missing", `{"action":"get","mapping":{"property_id":17}}`, "mapping.connection_id: is required", 400},
		{"get unmapped code", fmt.Sprintf(`{"action":"get","mapping":{"connection_id":%d,"internal_code":"V3"}}`, id), "", 404},
		{"get unmapped property", fmt.Sprintf(`{"action":"get","mapping":{"connection_id":%d,"property_id":19}}`, id), "", 404},
		{"update onto another's room", fmt.Sprintf(`{"action":"update","mapping":{"connection_id":%d,"internal_code":"V2","room_type_id":"room-1"}}`, id), "", 409},
		{"update property", fmt.Sprintf(`{"action":"update","mapping":{"connection_id":%d,"property_id":18,"created_at":"x"}}`, id),
			"mapping.created_at: cannot be changed; an update takes remote_property_id, room_type_id, rate_plans and enabled", 400},
		{"update plans empty", fmt.Sprintf(`{"action":"update","mapping":{"connection_id":%d,"property_id":18,"rate_plans":[]}}`, id), "mapping.rate_plans: must have at least 1 item", 400},
		{"update remote id blank", fmt.Sprintf(`{"action":"update","mapping":{"connection_id":%d,"property_id":18,"remote_property_id":""}}`, id), "mapping.remote_property_id: is required", 400},
		{"sync of another account's", fmt.Sprintf(`{"action":"sync","mapping":{"connection_id":%d,"property_id":17}}`, other), "", 404},
		{"delete unmapped", fmt.Sprintf(`{"action":"delete","mapping":{"connection_id":%d,"property_id":19}}`, id), "", 404},
	}
	for _, r := range upd {
		t.Run(r.name, func(t *testing.T) {
			before := e.state(t, acc)
			code, out := e.call(t, acc, "channel-mapping", r.body)
			if code != r.code || violations(out) != r.want {
				t.Fatalf("%d %v, want %d %q", code, out, r.code, r.want)
			}
			if after := e.state(t, acc); after != before {
				t.Fatalf("a refused request changed\n%s\ninto\n%s", before, after)
			}
		})
	}
	if m := e.takeMarks(); len(m) != 0 {
		t.Fatalf("refused requests marked %+v", m)
	}
}

// TestMappingLifecycle: which changes start a full sync, sync itself, list filters, delete.
func TestMappingLifecycle(t *testing.T) {
	e := newEnv(t)
	acc := e.open
	id := e.newConnection(t, acc)
	_, out := e.call(t, acc, "channel-mapping", fmt.Sprintf(mappingCreate, id))
	m := data(out)
	plans := m["rate_plans"].([]any)
	if m["property_id"] != float64(17) || m["internal_code"] != "V1" || m["enabled"] != true || len(plans) != 2 ||
		plans[1].(map[string]any)["rate_plan_id"] != float64(4) || plans[1].(map[string]any)["remote_rate_plan_id"] != "nr" {
		t.Fatal(m)
	}
	// A disabled mapping marks nothing at create.
	e.call(t, acc, "channel-mapping", fmt.Sprintf(`{"action":"create","mapping":{"connection_id":%d,"internal_code":"V2","remote_property_id":"hotel-1","room_type_id":"room-2","rate_plans":[{"rate_plan_id":0,"remote_rate_plan_id":"bar"}],"enabled":false}}`, id))
	if got := e.takeMarks(); len(got) != 1 || got[0].prop != 17 {
		t.Fatal(got)
	}
	steps := []struct {
		name, change string
		marks        int
	}{
		{"enabled unchanged", `"enabled":true`, 0},
		{"new room type", `"room_type_id":"room-9"`, 1},
		{"same room type", `"room_type_id":"room-9"`, 0},
		{"new plans", `"rate_plans":[{"rate_plan_id":0,"remote_rate_plan_id":"bar2"}]`, 1},
		{"disable", `"enabled":false`, 0},
		{"change while disabled", `"remote_property_id":"hotel-2"`, 0},
		{"enable", `"enabled":true`, 1},
	}
	for _, s := range steps {
		code, out := e.call(t, acc, "channel-mapping", fmt.Sprintf(`{"action":"update","mapping":{"connection_id":%d,"internal_code":"V1",%s}}`, id, s.change))
		if code != 200 {
			t.Fatalf("%s: %v", s.name, out)
		}
		if got := e.takeMarks(); len(got) != s.marks || (s.marks == 1 && !got[0].full) {
			t.Fatalf("%s: marks %+v, want %d", s.name, got, s.marks)
		}
	}
	_, out = e.call(t, acc, "channel-mapping", fmt.Sprintf(`{"action":"get","mapping":{"connection_id":"%d","property_id":"17"}}`, id))
	if d := data(out); d["room_type_id"] != "room-9" || d["remote_property_id"] != "hotel-2" || len(d["rate_plans"].([]any)) != 1 {
		t.Fatal(d)
	}
	// sync: a full mark; refused (409) while the mapping or the connection is disabled.
	if code, _ := e.call(t, acc, "channel-mapping", fmt.Sprintf(`{"action":"sync","mapping":{"connection_id":%d,"internal_code":"V1"}}`, id)); code != 200 {
		t.Fatal(code)
	}
	if got := e.takeMarks(); len(got) != 1 || got[0] != (mark{acc, id, 17, true}) {
		t.Fatal(got)
	}
	if code, _ := e.call(t, acc, "channel-mapping", fmt.Sprintf(`{"action":"sync","mapping":{"connection_id":%d,"internal_code":"V2"}}`, id)); code != 409 {
		t.Fatal(code)
	}
	e.call(t, acc, "channel-connection", fmt.Sprintf(`{"action":"update","connection":{"connection_id":%d,"enabled":false}}`, id))
	if code, _ := e.call(t, acc, "channel-mapping", fmt.Sprintf(`{"action":"sync","mapping":{"connection_id":%d,"internal_code":"V1"}}`, id)); code != 409 {
		t.Fatal(code)
	}
	e.call(t, acc, "channel-connection", fmt.Sprintf(`{"action":"update","connection":{"connection_id":%d,"enabled":true}}`, id))
	e.takeMarks()
	// A mark that cannot be made: the change is kept and the answer says to sync.
	e.markFail = errors.New("database down")
	code, out := e.call(t, acc, "channel-mapping", fmt.Sprintf(`{"action":"update","mapping":{"connection_id":%d,"internal_code":"V1","room_type_id":"room-10"}}`, id))
	if code != 503 || !strings.Contains(fmt.Sprint(out["error_message"]), "use channel-mapping sync") {
		t.Fatal(code, out)
	}
	e.markFail = nil
	// List filters.
	id2 := e.newConnection(t, acc)
	e.call(t, acc, "channel-mapping", fmt.Sprintf(mappingCreate, id2))
	for _, tc := range []struct {
		body string
		want int
	}{
		{`{"action":"list"}`, 3},
		{fmt.Sprintf(`{"action":"list","mapping":{"connection_id":%d}}`, id), 2},
		{`{"action":"list","mapping":{"property_id":17}}`, 2},
		{`{"action":"list","mapping":{"internal_code":"V2"}}`, 1},
		{fmt.Sprintf(`{"action":"list","mapping":{"connection_id":%d,"internal_code":"V1"}}`, id2), 1},
	} {
		if _, out := e.call(t, acc, "channel-mapping", tc.body); len(data(out)["mappings"].([]any)) != tc.want {
			t.Errorf("%s: %v", tc.body, out)
		}
	}
	_, out = e.call(t, acc, "channel-mapping", fmt.Sprintf(`{"action":"delete","mapping":{"connection_id":%d,"internal_code":"V1"}}`, id))
	if d := data(out); d["deleted"] != true || d["property_id"] != float64(17) {
		t.Fatal(out)
	}
	if code, _ := e.call(t, acc, "channel-mapping", fmt.Sprintf(`{"action":"get","mapping":{"connection_id":%d,"property_id":17}}`, id)); code != 404 {
		t.Fatal(code)
	}
}

func TestLogResource(t *testing.T) {
	e := newEnv(t)
	acc := e.open
	ctx := context.Background()
	base := time.Date(2027, 5, 1, 8, 0, 0, 0, time.UTC)
	for i := range 12 {
		en := channel.LogEntry{Account: acc, ConnectionID: 3, PropertyID: int64(17 + i%2), Direction: "out", Kind: channel.KindRates,
			Status: channel.StatusOK, HTTPStatus: 200, Request: fmt.Sprintf(`{"values":[%d]}`, i), Response: `{"data":"ok"}`,
			From: "2027-05-01", To: "2027-05-03", At: base.Add(time.Duration(i) * time.Minute), Duration: 40 * time.Millisecond}
		if i == 5 {
			en.Kind, en.Status, en.Error, en.HTTPStatus = channel.KindAvailability, channel.StatusRetrying, "channel manager answered 429", 429
		}
		if err := e.stores.Log.Append(ctx, en); err != nil {
			t.Fatal(err)
		}
	}
	rules := []struct {
		name, body, want string
		code             int
	}{
		{"action", `{"action":"delete"}`, "action: must be one of list, get", 400},
		{"kind", `{"action":"list","log":{"kind":"price"}}`, "log.kind: must be one of availability, restrictions, rates, revisions_feed, ack, reservation, webhook, test", 400},
		{"status", `{"action":"list","log":{"status":"fine"}}`, "log.status: must be one of ok, error, retrying, held, conflict, duplicate", 400},
		{"limit", `{"action":"list","log":{"limit":201}}`, "log.limit: must be between 1 and 200", 400},
		{"cursor", `{"action":"list","log":{"cursor":0}}`, "log.cursor: must be between 1 and 4611686018427387904", 400},
		{"from", `{"action":"list","log":{"from":"yesterday"}}`, "log.from: must be an RFC 3339 time (2027-01-10T12:00:00Z)", 400},
		{"to before from", `{"action":"list","log":{"from":"2027-05-01T09:00:00Z","to":"2027-05-01T08:00:00Z"}}`, "log.to: must be after from", 400},
		{"q", fmt.Sprintf(`{"action":"list","log":{"q":%q}}`, fieldstest.Chars(101)), "log.q: must be at most 100 characters", 400},
		{"get id", `{"action":"get","log":{}}`, "log.log_id: is required", 400},
		{"get unknown", `{"action":"get","log":{"log_id":5}}`, "", 404},
	}
	for _, r := range rules {
		if code, out := e.call(t, acc, "channel-log", r.body); code != r.code || violations(out) != r.want {
			t.Errorf("%s: %d %v, want %d %q", r.name, code, out, r.code, r.want)
		}
	}
	count := func(body string) (int, map[string]any) {
		t.Helper()
		code, out := e.call(t, acc, "channel-log", body)
		if code != 200 {
			t.Fatal(out)
		}
		return len(data(out)["entries"].([]any)), data(out)
	}
	for body, want := range map[string]int{
		`{"action":"list"}`:                                       12,
		`{"action":"list","log":{"property_id":17}}`:              6,
		`{"action":"list","log":{"kind":"availability"}}`:         1,
		`{"action":"list","log":{"status":"retrying"}}`:           1,
		`{"action":"list","log":{"connection_id":4}}`:             0,
		`{"action":"list","log":{"q":"VALUES\":[1"}}`:             3, // 1, 10, 11
		`{"action":"list","log":{"q":"429"}}`:                     1,
		`{"action":"list","log":{"from":"2027-05-01T08:10:00Z"}}`: 2,
		`{"action":"list","log":{"to":"2027-05-01T08:02:00Z"}}`:   2,
	} {
		if n, _ := count(body); n != want {
			t.Errorf("%s: %d entries, want %d", body, n, want)
		}
	}
	// Pages by cursor: newest first, without bodies; next_cursor null on the last page.
	var ids []float64
	cursor := ""
	for range 10 {
		_, d := count(`{"action":"list","log":{"limit":5` + cursor + `}}`)
		for _, x := range d["entries"].([]any) {
			en := x.(map[string]any)
			if _, has := en["request"]; has {
				t.Fatal("a list entry carries its body")
			}
			ids = append(ids, en["log_id"].(float64))
		}
		if d["next_cursor"] == nil {
			break
		}
		cursor = fmt.Sprintf(`,"cursor":%.0f`, d["next_cursor"].(float64))
	}
	if len(ids) != 12 {
		t.Fatalf("paged %d", len(ids))
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] >= ids[i-1] {
			t.Fatal("not newest first")
		}
	}
	_, out := e.call(t, acc, "channel-log", fmt.Sprintf(`{"action":"get","log":{"log_id":"%.0f"}}`, ids[6]))
	g := data(out)
	if g["request"] != `{"values":[5]}` || g["status"] != "retrying" || g["http_status"] != float64(429) || g["from"] != "2027-05-01" ||
		g["duration_ms"] != float64(40) || g["kind"] != "availability" {
		t.Fatal(g)
	}
	if code, _ := e.call(t, e.shut, "channel-log", fmt.Sprintf(`{"action":"get","log":{"log_id":%.0f}}`, ids[6])); code != 404 {
		t.Fatal("another account reads the entry")
	}
	if n, _ := count(`{"action":"list"}`); n != 12 {
		t.Fatal(n)
	}
}

func TestConflictResource(t *testing.T) {
	e := newEnv(t)
	acc := e.open
	ctx := context.Background()
	var ids []int64
	for i := range 3 {
		c, _, err := e.stores.Conflicts.Record(ctx, channel.Conflict{Account: acc, ConnectionID: 3, ReservationID: "res", RevisionID: fmt.Sprint("rev", i),
			Channel: "BookingCom", PropertyID: 17, Checkin: "2027-01-10", Checkout: "2027-01-13", Reason: channel.ReasonNightsTaken,
			Nights: []string{"2027-01-11"}, BookingIDs: []int64{7}, GuestName: "Ada L", Total: "450.00", Currency: "EUR"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	for _, r := range []struct{ name, body, want string }{
		{"action", `{"action":"close"}`, "action: must be one of list, get, resolve"},
		{"id", `{"action":"resolve","conflict":{"note":"x"}}`, "conflict.conflict_id: is required"},
		{"note", fmt.Sprintf(`{"action":"resolve","conflict":{"conflict_id":%d,"note":%q}}`, ids[0], fieldstest.Chars(1001)), "conflict.note: must be at most 1000 characters"},
		{"open_only", `{"action":"list","conflict":{"open_only":"sometimes"}}`, "conflict.open_only: must be a boolean"},
	} {
		if code, out := e.call(t, acc, "channel-conflict", r.body); code != 400 || violations(out) != r.want {
			t.Errorf("%s: %d %v", r.name, code, out)
		}
	}
	if code, _ := e.call(t, e.shut, "channel-conflict", fmt.Sprintf(`{"action":"resolve","conflict":{"conflict_id":%d}}`, ids[0])); code != 404 {
		t.Fatal("another account resolves the conflict")
	}
	_, out := e.call(t, acc, "channel-conflict", fmt.Sprintf(`{"action":"get","conflict":{"conflict_id":%d}}`, ids[1]))
	g := data(out)
	if g["open"] != true || g["resolved_at"] != nil || g["guest_name"] != "Ada L" || g["total"] != "450.00" || g["reason"] != "nights_taken" ||
		fmt.Sprint(g["nights"]) != "[2027-01-11]" || fmt.Sprint(g["booking_ids"]) != "[7]" {
		t.Fatal(g)
	}
	_, out = e.call(t, acc, "channel-conflict", fmt.Sprintf(`{"action":"resolve","conflict":{"conflict_id":%d,"note":"guest moved"}}`, ids[1]))
	if d := data(out); d["open"] != false || d["resolved_at"] == nil || d["note"] != "guest moved" {
		t.Fatal(d)
	}
	_, out = e.call(t, acc, "channel-conflict", `{"action":"list"}`)
	list := data(out)["conflicts"].([]any)
	if len(list) != 3 || list[2].(map[string]any)["conflict_id"] != float64(ids[1]) || list[0].(map[string]any)["conflict_id"] != float64(ids[2]) {
		t.Fatal(list)
	}
	_, out = e.call(t, acc, "channel-conflict", `{"action":"list","conflict":{"open_only":true}}`)
	if len(data(out)["conflicts"].([]any)) != 2 {
		t.Fatal(out)
	}
}

// TestAccountsApartConcurrently: two accounts working at once never see, change or delete
// each other's records.
func TestAccountsApartConcurrently(t *testing.T) {
	e := newEnv(t)
	accs := []string{e.open, e.shut}
	conns := make([][]int64, 2)
	var wg sync.WaitGroup
	for i, acc := range accs {
		wg.Go(func() {
			for range 4 {
				code, out := e.call(t, acc, "channel-connection", `{"action":"create","connection":{"adapter":"channex","endpoint":"https://cm.example/","credentials":{"api_key":"key-`+acc+`"}}}`)
				if code != 200 {
					t.Error(out)
					return
				}
				id := int64(data(out)["connection_id"].(float64))
				conns[i] = append(conns[i], id)
				if code, out := e.call(t, acc, "channel-mapping", fmt.Sprintf(mappingCreate, id)); code != 200 {
					t.Error(out)
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, acc := range accs {
		_, out, raw := e.callRaw(t, acc, "channel-connection", `{"action":"list"}`)
		if len(data(out)["connections"].([]any)) != 4 || strings.Contains(raw, "key-") {
			t.Fatalf("%s lists %s", acc, raw)
		}
		_, out = e.call(t, acc, "channel-mapping", `{"action":"list"}`)
		if len(data(out)["mappings"].([]any)) != 4 {
			t.Fatalf("%s lists %v", acc, out)
		}
		for _, id := range conns[1-i] {
			for _, body := range []string{
				`{"action":"get","connection":{"connection_id":%d}}`,
				`{"action":"update","connection":{"connection_id":%d,"days":3}}`,
				`{"action":"rotate_token","connection":{"connection_id":%d}}`,
				`{"action":"delete","connection":{"connection_id":%d}}`,
			} {
				if code, _ := e.call(t, acc, "channel-connection", fmt.Sprintf(body, id)); code != 404 {
					t.Fatalf("%s reaches the other's connection %d: %s → %d", acc, id, body, code)
				}
			}
			for _, body := range []string{
				`{"action":"get","mapping":{"connection_id":%d,"property_id":17}}`,
				`{"action":"update","mapping":{"connection_id":%d,"property_id":17,"enabled":false}}`,
				`{"action":"delete","mapping":{"connection_id":%d,"property_id":17}}`,
				`{"action":"sync","mapping":{"connection_id":%d,"property_id":17}}`,
			} {
				if code, _ := e.call(t, acc, "channel-mapping", fmt.Sprintf(body, id)); code != 404 {
					t.Fatalf("%s reaches the other's mapping on %d: %s → %d", acc, id, body, code)
				}
			}
		}
	}
}

// TestAccountChannelsRoute: GET /internal/account/channels (edge's admin API) answers the
// account's connections with their counts, plain JSON, never a credential or the token.
func TestAccountChannelsRoute(t *testing.T) {
	e := newEnv(t)
	id := e.newConnection(t, e.open)
	e.call(t, e.open, "channel-mapping", fmt.Sprintf(mappingCreate, id))
	e.newConnection(t, e.shut)
	const path = "/internal/account/channels"
	req := httptest.NewRequest(http.MethodGet, path, nil)
	tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: e.open}, http.MethodGet, path, nil, time.Now())
	resp, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Connections []map[string]any `json:"connections"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != 200 || len(out.Connections) != 1 {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	c := out.Connections[0]
	if c["connection_id"] != float64(id) || c["mappings"] != float64(1) || c["open_conflicts"] != float64(0) || c["credentials_set"] != true ||
		c["inbound_token"] != nil || strings.Contains(string(raw), "k-123") {
		t.Fatalf("%s", raw)
	}
	// Unsigned: refused.
	resp2, err := e.app.Test(httptest.NewRequest(http.MethodGet, path, nil), -1)
	if err != nil || resp2.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unsigned: %v %d", err, resp2.StatusCode)
	}
}

// TestNotSending: while ARI sending is not wired (MarkDirty answers ErrNotSending), mappings
// are created and changed as ever, and sync answers 503.
func TestNotSending(t *testing.T) {
	e := newEnv(t)
	e.markFail = ErrNotSending
	id := e.newConnection(t, e.open)
	if code, out := e.call(t, e.open, "channel-mapping", fmt.Sprintf(mappingCreate, id)); code != 200 {
		t.Fatal(out)
	}
	if code, out := e.call(t, e.open, "channel-mapping", fmt.Sprintf(`{"action":"update","mapping":{"connection_id":%d,"property_id":17,"room_type_id":"r2"}}`, id)); code != 200 {
		t.Fatal(out)
	}
	if code, out := e.call(t, e.open, "channel-mapping", fmt.Sprintf(`{"action":"sync","mapping":{"connection_id":%d,"property_id":17}}`, id)); code != 503 {
		t.Fatal(code, out)
	}
}
