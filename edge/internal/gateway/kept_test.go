package gateway_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/edge/internal/kept"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
)

// alwaysLive is a Feed that hears every change at once and started with the catalog.
type alwaysLive struct{}

func (alwaysLive) Live() bool                   { return true }
func (alwaysLive) Covers(events.Positions) bool { return true }

// keptPart is the partition the stub catalog tells it has applied up to offset 5.
var keptPart = events.Partition{Topic: "vros.property.v1", ID: 0}

// TestKeptCatalogAnswers: a catalog answer marked keepable is served again by edge itself
// (once edge has learnt that the catalog marks answers of its path),
// as it was sent (status, type, bytes) and without the marks; to the same request of the
// same account only; never for a conditional request, an answer that is not a 200 or one
// the catalog did not mark; and no longer once a change of the account it does not hold
// is heard.
func TestKeptCatalogAnswers(t *testing.T) {
	var asked atomic.Int64
	var applied atomic.Int64 // where the stub catalog says it stands
	applied.Store(5)
	catalog := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := asked.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !strings.Contains(string(body), "unmarked") {
			w.Header().Set(httpapi.HeaderKeepUntil, strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10))
			w.Header().Set(httpapi.HeaderApplied, events.Positions{keptPart: applied.Load()}.String())
		}
		if strings.Contains(string(body), "missing") {
			w.WriteHeader(http.StatusNotFound)
		}
		_, _ = io.WriteString(w, `{"account":"`+r.Header.Get(tenancy.HeaderAccount)+`","n":`+strconv.FormatInt(n, 10)+`}`)
	}))
	t.Cleanup(catalog.Close)
	answers := kept.NewStore(1<<20, alwaysLive{})
	e := &edge{repo: &countingRepo{Repository: store}}
	e.accounts = account.NewService(e.repo, account.Options{CacheTTL: time.Minute})
	e.url = startKeptEdge(t, catalog.URL, answers, e.accounts)
	a, b := e.createAccount(t, false), e.createAccount(t, false)

	read := func(acc tenantAccount, query string, header map[string]string) answer {
		t.Helper()
		return e.send(t, "", http.MethodGet, "/vros/api/search-rental/owner_token/"+acc.creds[account.OwnerToken].Secret+"?"+query, header, "")
	}
	ask := func(what string, acc tenantAccount, query string, header map[string]string, wantAsked bool) string {
		t.Helper()
		before := asked.Load()
		got := read(acc, query, header)
		body := string(got.body)
		if was := asked.Load() > before; was != wantAsked {
			t.Fatalf("%s: catalog asked %v, want %v (%s)", what, was, wantAsked, body)
		}
		if !strings.Contains(body, `"account":"`+acc.id+`"`) {
			t.Fatalf("%s: answered %s, not account %s's", what, body, acc.id)
		}
		for _, h := range []string{httpapi.HeaderKeepUntil, httpapi.HeaderApplied} {
			if v := got.header.Get(h); v != "" {
				t.Fatalf("%s: %s passed on to the client: %q", what, h, v)
			}
		}
		if got.header.Get("Content-Type") != "application/json" || got.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: headers %v", what, got.header)
		}
		return body
	}

	// The first marked answer of a path teaches edge the path: it is not kept (no key was
	// made for it), the next is.
	ask("a path not known yet", a, "page=1", nil, true)
	ask("again, the path known", a, "page=1", nil, true)
	first := ask("first", a, "page=1", nil, false)
	if again := ask("again", a, "page=1", nil, false); again != first {
		t.Fatalf("kept answer %s, want %s", again, first)
	}
	ask("another query", a, "page=2", nil, true)
	ask("another account", b, "page=1", nil, true)
	ask("another account again", b, "page=1", nil, false)
	ask("conditional", a, "page=1", map[string]string{"If-None-Match": `"x"`}, true)
	ask("unmarked", a, "page=1&unmarked=1", nil, true)
	ask("unmarked again", a, "page=1&unmarked=1", nil, true)
	if got := read(a, "page=1&missing=1", nil); got.code != http.StatusNotFound && got.code != http.StatusOK {
		t.Fatalf("missing: HTTP %d", got.code)
	}
	ask("not a 200, again", a, "page=1&missing=1", nil, true)

	answers.Heard(a.id, keptPart, 5) // held by the answers
	ask("a change it holds", a, "page=1", nil, false)
	answers.Heard(a.id, keptPart, 6)
	ask("a change it does not hold", a, "page=1", nil, true)
	ask("a catalog that has not applied the change", a, "page=1", nil, true)
	applied.Store(6)
	ask("a catalog that has applied it", a, "page=1", nil, true)
	ask("kept again", a, "page=1", nil, false)
	ask("the other account's, kept", b, "page=1", nil, false)
}

// startKeptEdge starts a gateway whose catalog-svc is at catalogURL, keeping its answers in
// kept.
func startKeptEdge(t *testing.T, catalogURL string, answers *kept.Store, accounts *account.Service) string {
	t.Helper()
	tel, err := telemetry.Setup(context.Background(), "edge-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	gw, err := gateway.New(gateway.Config{ServiceURLs: map[gateway.Upstream]string{gateway.CatalogSvc: catalogURL}, Kept: answers},
		accounts, tenancy.NewSigner(tenancy.CallerEdge, signingKey), tel.Propagator)
	if err != nil {
		t.Fatal(err)
	}
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: gateway.MaxBody, EnvelopeFor: gateway.EnvelopeFor})
	gw.Register(app)
	return serve(t, app)
}
