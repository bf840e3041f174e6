package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/webhooks/api"
	"github.com/vros/vros/integration-svc/internal/webhooks/hooks"
	"github.com/vros/vros/integration-svc/internal/webhooks/store"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "hookapi", &db, nil) }

const key = "test-internal-key-0123456789abcdef"

func newApp(t *testing.T) *fiber.App {
	t.Helper()
	tel, err := telemetry.Setup(context.Background(), "integration-api-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: 1 << 20})
	api.New(hooks.New(st), true).Register(app, tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerEdge, Key: key}))
	return app
}

type answer struct {
	Code      int             `json:"code"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"error_type"`
	Errors    []struct{ Field, Message string }
}

func call(t *testing.T, app *fiber.App, acc, method, path, body string) (int, answer) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	tenancy.NewSigner(tenancy.CallerEdge, key).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: acc}, method, path, []byte(body), time.Now())
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	var a answer
	_ = json.Unmarshal(raw, &a)
	return resp.StatusCode, a
}

func post(t *testing.T, app *fiber.App, acc, resource, body string) (int, answer) {
	return call(t, app, acc, http.MethodPost, "/internal/a/"+resource, body)
}

func TestWebhookRules(t *testing.T) {
	app := newApp(t)
	acc := fmt.Sprintf("rules%d", time.Now().UnixNano())
	ok := `"url":"https://hooks.example.com/x","event_types":["booking.created"]`
	tests := []struct {
		name  string
		body  string
		field string
	}{
		{"url missing", `{"action":"create","webhook":{"event_types":["*"]}}`, "webhook.url"},
		{"ftp link", `{"action":"create","webhook":{"url":"ftp://x.example.com","event_types":["*"]}}`, "webhook.url"},
		{"loopback without the switch", `{"action":"create","webhook":{"url":"http://127.0.0.1:9/x","event_types":["*"]}}`, "webhook.url"},
		{"private without the switch", `{"action":"create","webhook":{"url":"https://10.1.2.3/x","event_types":["*"]}}`, "webhook.url"},
		{"localhost without the switch", `{"action":"create","webhook":{"url":"https://localhost/x","event_types":["*"]}}`, "webhook.url"},
		{"no event types", `{"action":"create","webhook":{"url":"https://hooks.example.com","event_types":[]}}`, "webhook.event_types"},
		{"unknown event type", `{"action":"create","webhook":{"url":"https://hooks.example.com","event_types":["booking.exploded"]}}`, "webhook.event_types[0]"},
		{"duplicate event type", `{"action":"create","webhook":{"url":"https://hooks.example.com","event_types":["rates.updated","rates.updated"]}}`, "webhook.event_types"},
		{"negative brand", `{"action":"create","webhook":{` + ok + `,"brand_id":-1}}`, "webhook.brand_id"},
		{"description 501 characters", `{"action":"create","webhook":{` + ok + `,"description":"` + strings.Repeat("d", 501) + `"}}`, "webhook.description"},
		{"unknown action", `{"action":"explode","webhook":{}}`, "action"},
		{"get without id", `{"action":"get","webhook":{}}`, "webhook.webhook_id"},
		{"update bad enabled", `{"action":"update","webhook":{"webhook_id":1,"enabled":"maybe"}}`, "webhook.enabled"},
		{"webhook not an object", `{"action":"create","webhook":"x"}`, "webhook"},
		{"create without webhook", `{"action":"create"}`, "webhook"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, a := post(t, app, acc, "webhook", tc.body)
			if code != 400 || len(a.Errors) == 0 || a.Errors[0].Field != tc.field {
				t.Fatalf("%d %+v, want 400 naming %s", code, a, tc.field)
			}
			for _, e := range a.Errors[1:] {
				if e == a.Errors[0] {
					t.Fatalf("the violation %+v is reported twice", e)
				}
			}
		})
	}
	_, list := post(t, app, acc, "webhook", `{"action":"list"}`)
	if string(list.Data) != `{"webhooks":[]}` {
		t.Fatalf("a refused create left %s", list.Data)
	}
}

func TestWebhookLifecycle(t *testing.T) {
	app := newApp(t)
	acc := fmt.Sprintf("life%d", time.Now().UnixNano())
	code, a := post(t, app, acc, "webhook", `{"action":"create","webhook":{"url":"https://hooks.example.com/x","event_types":["*"],"brand_id":"2","description":"site"}}`)
	var ep map[string]any
	_ = json.Unmarshal(a.Data, &ep)
	secret, _ := ep["secret"].(string)
	if code != 200 || !strings.HasPrefix(secret, "whsec_") || ep["brand_id"] != float64(2) || ep["enabled"] != true || ep["disabled_at"] != nil {
		t.Fatalf("create %d %s", code, a.Data)
	}
	id := int64(ep["webhook_id"].(float64))
	_, g := post(t, app, acc, "webhook", fmt.Sprintf(`{"action":"get","webhook":{"webhook_id":"%d"}}`, id))
	if strings.Contains(string(g.Data), "whsec_") {
		t.Fatal("get shows the secret")
	}
	_, u := post(t, app, acc, "webhook", fmt.Sprintf(`{"action":"update","webhook":{"webhook_id":%d,"brand_id":0,"enabled":false}}`, id))
	ep = nil
	_ = json.Unmarshal(u.Data, &ep)
	if _, has := ep["brand_id"]; has || ep["enabled"] != false {
		t.Fatalf("update %s", u.Data)
	}
	_, r := post(t, app, acc, "webhook", fmt.Sprintf(`{"action":"rotate_secret","webhook":{"webhook_id":%d}}`, id))
	_ = json.Unmarshal(r.Data, &ep)
	if s, _ := ep["secret"].(string); s == secret || !strings.HasPrefix(s, "whsec_") {
		t.Fatalf("rotate %s", r.Data)
	}
	_, tst := post(t, app, acc, "webhook", fmt.Sprintf(`{"action":"test","webhook":{"webhook_id":%d}}`, id))
	if !strings.Contains(string(tst.Data), `"message_id":"msg_`) {
		t.Fatalf("test %s", tst.Data)
	}
	_, dl := post(t, app, acc, "webhook-delivery", fmt.Sprintf(`{"action":"list","delivery":{"webhook_id":%d}}`, id))
	if !strings.Contains(string(dl.Data), `"event_type":"webhook.test"`) || !strings.Contains(string(dl.Data), `"status":"pending"`) {
		t.Fatalf("delivery log %s", dl.Data)
	}
	if code, _ := post(t, app, "other"+acc, "webhook", fmt.Sprintf(`{"action":"get","webhook":{"webhook_id":%d}}`, id)); code != 404 {
		t.Fatalf("another account reads it: %d", code)
	}
	code, d := post(t, app, acc, "webhook", fmt.Sprintf(`{"action":"delete","webhook":{"webhook_id":%d}}`, id))
	if code != 200 || string(d.Data) != fmt.Sprintf(`{"deleted":true,"webhook_id":%d}`, id) {
		t.Fatalf("delete %d %s", code, d.Data)
	}
	if code, _ := post(t, app, acc, "webhook-delivery", fmt.Sprintf(`{"action":"list","delivery":{"webhook_id":%d}}`, id)); code != 404 {
		t.Fatalf("deliveries of a deleted webhook: %d", code)
	}
}

func TestPrivateTargetsSwitch(t *testing.T) {
	app := newApp(t)
	acc := fmt.Sprintf("sw%d", time.Now().UnixNano())
	body := `{"action":"create","webhook":{"url":"http://127.0.0.1:9/x","event_types":["*"]}}`
	if code, _ := post(t, app, acc, "webhook", body); code != 400 {
		t.Fatalf("loopback accepted without the switch: %d", code)
	}
	if code, _ := call(t, app, acc, http.MethodPut, "/internal/account/integrations", `{"allow_private_targets":true}`); code != 200 {
		t.Fatalf("switch %d", code)
	}
	if code, a := post(t, app, acc, "webhook", body); code != 200 {
		t.Fatalf("loopback refused with the switch: %d %+v", code, a)
	}
	if code, _ := post(t, app, "x"+acc, "webhook", body); code != 400 {
		t.Fatal("the switch of one account allowed another")
	}
}

func TestEndpointLimitAndConcurrentAccounts(t *testing.T) {
	app := newApp(t)
	accs := []string{fmt.Sprintf("ca%d", time.Now().UnixNano()), fmt.Sprintf("cb%d", time.Now().UnixNano())}
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acc := accs[g%2]
			for i := range 4 {
				url := fmt.Sprintf("https://%s.example.com/%d/%d", acc, g, i)
				code, a := post(t, app, acc, "webhook", `{"action":"create","webhook":{"url":"`+url+`","event_types":["*"]}}`)
				if code != 200 {
					errs <- fmt.Sprintf("create %d", code)
					return
				}
				var ep map[string]any
				_ = json.Unmarshal(a.Data, &ep)
				post(t, app, acc, "webhook", fmt.Sprintf(`{"action":"update","webhook":{"webhook_id":%v,"description":"%s"}}`, ep["webhook_id"], acc))
				_, l := post(t, app, acc, "webhook", `{"action":"list"}`)
				if strings.Contains(string(l.Data), accs[(g+1)%2]) {
					errs <- acc + " sees the other account's endpoints"
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	for _, acc := range accs {
		_, l := post(t, app, acc, "webhook", `{"action":"list"}`)
		var got struct{ Webhooks []map[string]any }
		_ = json.Unmarshal(l.Data, &got)
		if len(got.Webhooks) != 16 {
			t.Fatalf("%s has %d endpoints, want 16", acc, len(got.Webhooks))
		}
	}
	// up to 50 per account, then 400 naming webhook.
	for i := 16; i < 50; i++ {
		if code, _ := post(t, app, accs[0], "webhook", fmt.Sprintf(`{"action":"create","webhook":{"url":"https://h.example.com/%d","event_types":["*"]}}`, i)); code != 200 {
			t.Fatalf("endpoint %d: %d", i+1, code)
		}
	}
	code, a := post(t, app, accs[0], "webhook", `{"action":"create","webhook":{"url":"https://h.example.com/51","event_types":["*"]}}`)
	if code != 400 || len(a.Errors) == 0 || a.Errors[0].Field != "webhook" {
		t.Fatalf("51st endpoint: %d %+v", code, a)
	}
}

// TestWebhookMoneyEventTypes: an endpoint subscribes to the refund and deposit events by
// name (docs/webhooks.md, docs/money.md).
func TestWebhookMoneyEventTypes(t *testing.T) {
	app := newApp(t)
	acc := fmt.Sprintf("money%d", time.Now().UnixNano())
	types := `["refund.succeeded","refund.failed","deposit.held","deposit.reauthorized","deposit.released","deposit.captured","deposit.failed"]`
	code, a := post(t, app, acc, "webhook", `{"action":"create","webhook":{"url":"https://hooks.example.com/m","event_types":`+types+`}}`)
	var ep struct {
		EventTypes []string `json:"event_types"`
	}
	_ = json.Unmarshal(a.Data, &ep)
	if code != 200 || len(ep.EventTypes) != 7 {
		t.Fatalf("create %d %s", code, a.Data)
	}
	code, a = post(t, app, acc, "webhook", `{"action":"create","webhook":{"url":"https://hooks.example.com/m","event_types":["refund.exploded"]}}`)
	if code != 400 || len(a.Errors) == 0 || a.Errors[0].Field != "webhook.event_types[0]" {
		t.Fatalf("an unknown money type: %d %+v", code, a)
	}
}
