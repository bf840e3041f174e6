package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/property-svc/internal/store"
)

type icalData struct {
	PropertyID   int64   `json:"property_id"`
	InternalCode string  `json:"internal_code"`
	URL          *string `json:"url"`
	Path         *string `json:"path"`
	Revoked      bool    `json:"revoked"`
	CreatedAt    string  `json:"created_at"`
}

// icalCall posts to /internal/a/property-ical with edge's public URL header.
func icalCall(t *testing.T, app *fiber.App, acc, body string) (int, []byte, icalData) {
	t.Helper()
	const path = "/internal/a/property-ical"
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(publicURLHeader, "https://book.example.com")
	tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: acc}, http.MethodPost, path, []byte(body), time.Now())
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a struct {
		Data icalData `json:"data"`
	}
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(out, &a)
	return resp.StatusCode, out, a.Data
}

// eventHash is the ical_token_sha256 of the property's current event (the outbox loader's).
func eventHash(t *testing.T, st *store.Store, acc string, pid int64) (string, int64) {
	t.Helper()
	msgs, err := st.Snapshot(context.Background(), fmt.Sprintf("%s:%d", acc, pid))
	if err != nil || len(msgs) != 1 {
		t.Fatalf("snapshot %s:%d: %v %d", acc, pid, err, len(msgs))
	}
	var p contract.Property
	if _, err := events.Decode(msgs[0].Value, &p); err != nil {
		t.Fatal(err)
	}
	return p.ICalTokenSHA256, p.Version
}

func tokenOf(t *testing.T, d icalData) string {
	t.Helper()
	if d.Path == nil {
		t.Fatalf("no link: %+v", d)
	}
	tok, ok := strings.CutPrefix(*d.Path, "/ical/")
	tok, ok2 := strings.CutSuffix(tok, ".ics")
	if !ok || !ok2 || len(tok) != 43 || strings.ContainsAny(tok, "+/=") {
		t.Fatalf("path %q is not /ical/<43 base64url characters>.ics", *d.Path)
	}
	if d.URL == nil || *d.URL != "https://book.example.com"+*d.Path {
		t.Fatalf("url %v, want the public URL + path %s", d.URL, *d.Path)
	}
	return tok
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestPropertyICalRules(t *testing.T) {
	app, _, acc := newServerStore(t)
	createProperty(t, app, acc, "V1")
	createProperty(t, app, acc, "GONE")
	if status, out := call(t, app, acc, "/internal/a/property", `{"action":"delete","property":{"internal_code":"GONE"}}`); status != 200 {
		t.Fatalf("delete: %d %s", status, out)
	}
	for _, r := range []struct {
		name, body string
		status     int
		want       string // a part of the answer
	}{
		{"no action", `{"property":{"internal_code":"V1"}}`, 400, `"field":"action","message":"is required"`},
		{"unknown action", `{"action":"delete","property":{"internal_code":"V1"}}`, 400, `"field":"action"`},
		{"no property", `{"action":"get"}`, 400, `"field":"property"`},
		{"no internal_code", `{"action":"get","property":{}}`, 400, `"field":"property.internal_code"`},
		{"internal_code empty", `{"action":"get","property":{"internal_code":""}}`, 400, `"field":"property.internal_code"`},
		{"property not an object", `{"action":"get","property":"V1"}`, 400, `"field":"property"`},
		{"unknown property", `{"action":"get","property":{"internal_code":"NOPE"}}`, 404, `property with internal_code \"NOPE\" does not exist`},
		{"deleted property, get", `{"action":"get","property":{"internal_code":"GONE"}}`, 404, `does not exist`},
		{"deleted property, rotate", `{"action":"rotate","property":{"internal_code":"GONE"}}`, 404, `does not exist`},
		{"deleted property, revoke", `{"action":"revoke","property":{"internal_code":"GONE"}}`, 404, `does not exist`},
		{"get", `{"action":"get","property":{"internal_code":"V1"}}`, 200, `"revoked":false`},
	} {
		t.Run(r.name, func(t *testing.T) {
			status, out, _ := icalCall(t, app, acc, r.body)
			if status != r.status || !strings.Contains(string(out), r.want) {
				t.Fatalf("%d %s, want %d with %s", status, out, r.status, r.want)
			}
		})
	}
	if _, out := call(t, app, acc, "/internal/a/property-ical", `{"action":"get","property":{"internal_code":"V1"}}`); !strings.Contains(string(out), `"url":"/ical/`) {
		t.Errorf("without edge's public URL the url is the path alone: %s", out)
	}
}

func TestPropertyICalLifecycle(t *testing.T) {
	app, st, acc := newServerStore(t)
	createProperty(t, app, acc, "V1")
	get := `{"action":"get","property":{"internal_code":"V1"}}`

	_, out, first := icalCall(t, app, acc, get)
	if want := []string{"property_id", "internal_code", "url", "path", "revoked", "created_at"}; strings.Join(keys(t, out, "data"), ",") != strings.Join(want, ",") {
		t.Errorf("keys %v, want %v", keys(t, out, "data"), want)
	}
	tok := tokenOf(t, first)
	if h, _ := eventHash(t, st, acc, first.PropertyID); h != sha(tok) {
		t.Fatalf("event carries %q, want sha256 of the token", h)
	}
	_, _, again := icalCall(t, app, acc, get)
	if tokenOf(t, again) != tok {
		t.Fatal("a second get made a new token")
	}

	_, _, rot := icalCall(t, app, acc, `{"action":"rotate","property":{"internal_code":"V1"}}`)
	newTok := tokenOf(t, rot)
	if newTok == tok {
		t.Fatal("rotate kept the token")
	}
	_, _, after := icalCall(t, app, acc, get)
	if tokenOf(t, after) != newTok {
		t.Fatal("get after rotate does not show the new token")
	}
	h, v1 := eventHash(t, st, acc, first.PropertyID)
	if h != sha(newTok) {
		t.Fatal("the event still carries the old token's hash after rotate")
	}

	status, out, rev := icalCall(t, app, acc, `{"action":"revoke","property":{"internal_code":"V1"}}`)
	if status != 200 || !rev.Revoked || rev.URL != nil || rev.Path != nil || !strings.Contains(string(out), `"url":null,"path":null,"revoked":true`) {
		t.Fatalf("revoke: %d %s", status, out)
	}
	h, v2 := eventHash(t, st, acc, first.PropertyID)
	if h != "" || v2 != v1+1 {
		t.Fatalf("after revoke the event carries %q at version %d, want none at %d", h, v2, v1+1)
	}
	if _, _, g := icalCall(t, app, acc, get); !g.Revoked || g.Path != nil {
		t.Fatalf("get after revoke made a link: %+v", g)
	}
	_, _, back := icalCall(t, app, acc, `{"action":"rotate","property":{"internal_code":"V1"}}`)
	if tk := tokenOf(t, back); tk == tok || tk == newTok || back.Revoked {
		t.Fatalf("rotate after revoke: %+v", back)
	}
}

// Eight rotates (and gets) at once on one property of each of two accounts: each ends with
// one token, shown by get and carried by the newest event; no account sees the other's.
func TestPropertyICalConcurrentRotates(t *testing.T) {
	app, st, accA := newServerStore(t)
	accB := fmt.Sprint(accA, "9")
	for _, acc := range []string{accA, accB} {
		createProperty(t, app, acc, "V1")
	}
	var mu sync.Mutex
	seen := map[string]string{} // token → account
	var wg sync.WaitGroup
	for i := range 16 {
		acc := []string{accA, accB}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			action := "rotate"
			if i%4 == 1 {
				action = "get"
			}
			status, out, d := icalCall(t, app, acc, `{"action":"`+action+`","property":{"internal_code":"V1"}}`)
			if status != 200 || d.Path == nil {
				t.Errorf("%s: %d %s", action, status, out)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if other, ok := seen[*d.Path]; ok && other != acc {
				t.Errorf("token given to accounts %s and %s", other, acc)
			}
			seen[*d.Path] = acc
		}()
	}
	wg.Wait()
	for _, acc := range []string{accA, accB} {
		_, _, d := icalCall(t, app, acc, `{"action":"get","property":{"internal_code":"V1"}}`)
		tok := tokenOf(t, d)
		if seen[*d.Path] != acc {
			t.Errorf("account %s shows a token it was not given", acc)
		}
		if h, _ := eventHash(t, st, acc, d.PropertyID); h != sha(tok) {
			t.Errorf("account %s: the newest event's hash is not the token get shows", acc)
		}
	}
}
