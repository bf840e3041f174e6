package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"slices"
)

// SiteBrand is the name of the demo account's brand for the demo website (Site): its origins
// list the site's origin, which the booking engine's public API admits.
const SiteBrand = "Demo Rentals website"

// ensureSiteBrand gives the account a brand allowing origin, the demo website's: nothing
// when a brand already lists it; else SiteBrand's origins are set to it (the site moved to
// another port), or SiteBrand is created (a new account, or one made by an older vros-dev).
func ensureSiteBrand(ctx context.Context, acc Account, origin string) error {
	status, body, err := call(ctx, acc.EdgeURL+"/api/account-settings", acc.AHeaders(), `{}`)
	if err != nil {
		return err
	}
	var settings struct {
		Data struct {
			Brands []struct {
				ID      int      `json:"id"`
				Name    string   `json:"name"`
				Origins []string `json:"origins"`
			} `json:"brands"`
		} `json:"data"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &settings) != nil {
		return fmt.Errorf("account settings: %d %s", status, body)
	}
	brand := map[string]any{"name": SiteBrand, "origins": []string{origin}}
	action := "create"
	for _, b := range settings.Data.Brands {
		if slices.Contains(b.Origins, origin) {
			return nil
		}
		if b.Name == SiteBrand {
			action, brand["id"] = "update", b.ID
		}
	}
	req, _ := json.Marshal(map[string]any{"action": action, "brand": brand})
	status, body, err = call(ctx, acc.EdgeURL+"/api/account-brand", acc.AHeaders(), string(req))
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("demo website brand: %d %s", status, body)
	}
	return nil
}

// sitePage is the demo website: one page embedding the booking engine with the account's
// owner token (public by design, docs/booking-engine.md) and its demo property. It holds no
// other credential.
var sitePage = template.Must(template.New("site").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Demo Rentals — book online</title>
<style>body{font-family:system-ui,sans-serif;max-width:56rem;margin:2rem auto;padding:0 1rem}</style>
</head>
<body>
<h1>Demo Rentals</h1>
<p>A demo website on its own origin ({{.Origin}}), booking through vros at {{.EdgeURL}}.
The demo account is a sandbox: pay with a test card such as 4242 4242 4242 4242.</p>
<div id="book">
<script src="{{.EdgeURL}}/widget/vros-booking.js" data-key="{{.OwnerToken}}" data-property="{{.PropertyID}}"></script>
</div>
</body>
</html>
`))

// Site serves the demo website of a, whose own origin is origin (listed by SiteBrand).
func Site(a Account, origin string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = sitePage.Execute(w, map[string]string{"Origin": origin, "EdgeURL": a.EdgeURL,
			"OwnerToken": a.OwnerToken, "PropertyID": a.PropertyID})
	})
}
