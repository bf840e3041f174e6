package stacktest

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/systest/apitest"
	poll "github.com/vros/vros/testkit/eventually"
)

// viewsWithin bounds how long the booking API takes to follow a brand's origins (fed by the
// settings event to catalog-svc, then kept 2 s by edge).
const viewsWithin = time.Minute

type siteBrand struct {
	ID      int      `json:"id"`
	Name    string   `json:"name"`
	Origins []string `json:"origins"`
}

// TestDemoAccount: `make run`'s demo account (demo.Ensure) gets a brand, demo.SiteBrand, whose
// origins list the demo website's; the website (demo.Site) serves a page embedding edge's
// /widget/vros-booking.js with the owner token and the demo property, and no other
// credential; the public booking API asked from that origin answers the demo property. A
// later start keeps the account and its one brand, adds the brand back when it is missing,
// and moves its origin when the website moved.
func TestDemoAccount(t *testing.T) {
	ctx := context.Background()
	st, db, err := apitest.StartStack(ctx, stack.Options{Keys: stack.NewKeys(), EncryptionKey: seal.NewKey(),
		AdminToken: adminToken, LogLevel: "error", PasswordCost: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = db.Disconnect(ctx)
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	}()
	path := filepath.Join(t.TempDir(), "demo-account.json")
	site := httptest.NewUnstartedServer(nil)
	defer site.Close()
	origin := "http://" + site.Listener.Addr().String()

	acc, created, err := demo.Ensure(ctx, st.EdgeURL, adminToken, origin, path)
	if err != nil || !created {
		t.Fatalf("first start: created %v, %v", created, err)
	}
	if acc.SiteURL != origin || acc.PropertyID == "" || acc.OwnerToken == "" {
		t.Fatalf("account: site %q, property %q, owner token %q", acc.SiteURL, acc.PropertyID, acc.OwnerToken)
	}
	brands := func() []siteBrand {
		t.Helper()
		var s struct {
			Data struct {
				Brands []siteBrand `json:"brands"`
			} `json:"data"`
		}
		if err := apitest.PostA(http.DefaultClient, acc, "account-settings", `{}`, &s); err != nil {
			t.Fatal(err)
		}
		return s.Data.Brands
	}
	// siteBrandOf reports the brand named demo.SiteBrand, failing unless there is exactly one
	// and it lists only origin.
	siteBrandOf := func(origin string) siteBrand {
		t.Helper()
		var found []siteBrand
		for _, b := range brands() {
			if b.Name == demo.SiteBrand {
				found = append(found, b)
			}
		}
		if len(found) != 1 || len(found[0].Origins) != 1 || found[0].Origins[0] != origin {
			t.Fatalf("brands named %q: %+v, want one with origins [%s]", demo.SiteBrand, found, origin)
		}
		return found[0]
	}
	siteBrandOf(origin)

	// The page.
	site.Config.Handler = demo.Site(acc, origin)
	site.Start()
	r, err := apitest.Send(http.DefaultClient, http.MethodGet, site.URL+"/", nil, "")
	if err != nil || r.Code != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("demo website: %v HTTP %d %s", err, r.Code, r.Header.Get("Content-Type"))
	}
	page := html.UnescapeString(string(r.Body))
	tag := `<script src="` + st.EdgeURL + `/widget/vros-booking.js" data-key="` + acc.OwnerToken + `" data-property="` + acc.PropertyID + `">`
	if !strings.Contains(page, tag) {
		t.Errorf("demo website: no %s in\n%s", tag, page)
	}
	for name, secret := range map[string]string{"key": acc.Key, "pass": acc.Pass, "basic password": acc.BasicPassword,
		"servicekey": acc.ServiceKey, "servicepass": acc.ServicePass, "admin token": adminToken,
		"panel password": acc.PanelPassword, "operator password": acc.OperatorPassword} {
		if secret == "" || strings.Contains(page, secret) || strings.Contains(string(r.Body), secret) {
			t.Errorf("demo website: holds the account's %s (%q)", name, secret)
		}
	}
	if r, err := apitest.Send(http.DefaultClient, http.MethodGet, site.URL+"/other", nil, ""); err != nil || r.Code != http.StatusNotFound {
		t.Errorf("demo website /other: %v HTTP %d, want 404", err, r.Code)
	}

	// The public API, as the page calls it from the browser.
	selling := func(origin string) {
		t.Helper()
		var got string
		defer func() {
			if t.Failed() {
				t.Logf("last answer to %s: %s", origin, got)
			}
		}()
		poll.Holds(t, "the booking API sells the demo property to "+origin, viewsWithin, func() bool {
			r, err := apitest.Send(http.DefaultClient, http.MethodGet, st.EdgeURL+"/widget/api/v1/"+acc.OwnerToken+"/site",
				map[string]string{"Origin": origin}, "")
			if err != nil {
				t.Fatal(err)
			}
			var s struct {
				Data struct {
					Brand struct {
						Name string `json:"name"`
					} `json:"brand"`
					Properties []struct {
						ID json.Number `json:"id"`
					} `json:"properties"`
				} `json:"data"`
			}
			got = r.Header.Get("Access-Control-Allow-Origin") + " HTTP " + http.StatusText(r.Code) + " " + string(r.Body)
			if r.Code != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != origin ||
				json.Unmarshal(r.Body, &s) != nil || s.Data.Brand.Name != demo.SiteBrand {
				return false
			}
			for _, p := range s.Data.Properties {
				if p.ID.String() == acc.PropertyID {
					return true
				}
			}
			return false
		})
	}
	selling(origin)

	// A later start: the same account, still one brand for the website.
	again, created, err := demo.Ensure(ctx, st.EdgeURL, adminToken, origin, path)
	if err != nil || created || again.AccountID != acc.AccountID {
		t.Fatalf("second start: created %v, account %s (was %s), %v", created, again.AccountID, acc.AccountID, err)
	}
	b := siteBrandOf(origin)

	// An account made before the website (its brand missing) gets the brand at its next start.
	if err := apitest.PostA(http.DefaultClient, acc, "account-brand", apitest.JSON(map[string]any{
		"action": "delete", "brand": map[string]any{"id": b.ID}}), nil); err != nil {
		t.Fatal(err)
	}
	for _, b := range brands() {
		if b.Name == demo.SiteBrand {
			t.Fatalf("brand %+v not deleted", b)
		}
	}
	if _, created, err := demo.Ensure(ctx, st.EdgeURL, adminToken, origin, path); err != nil || created {
		t.Fatalf("start without the brand: created %v, %v", created, err)
	}
	siteBrandOf(origin)
	selling(origin)

	// The website moved (VROS_DEV_DEMO_SITE_PORT): the brand lists its new origin.
	moved := "http://127.0.0.1:1"
	if _, _, err := demo.Ensure(ctx, st.EdgeURL, adminToken, moved, path); err != nil {
		t.Fatal(err)
	}
	siteBrandOf(moved)
	selling(moved)
}
