// Package demo prepares what a developer needs to try vros at once: stable local secrets,
// a demo account with one property, its demo website (Site) and the sample requests printed
// by `make run`.
package demo

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/libs/seal"
)

// Secrets are the shared secrets of a local stack, kept in .data/dev-secrets.json so that
// data encrypted in one run opens in the next.
type Secrets struct {
	// The internal keys, one per calling process (docs/internal-auth.md).
	EdgeKey        string `json:"internal_key_edge"`
	BookingKey     string `json:"internal_key_booking"`
	IntegrationKey string `json:"internal_key_integration"`
	MessagingKey   string `json:"internal_key_messaging"`
	EncryptionKey  string `json:"encryption_key"`
	AdminToken     string `json:"admin_token"`
}

// LoadSecrets reads path, creating it with fresh secrets the first time. A file written
// before the internal keys were split (one internal_hmac_key), or before a caller was added
// (messaging-svc's key), gets the keys it lacks; its other secrets, which open the data of
// earlier runs, stay.
func LoadSecrets(path string) (Secrets, error) {
	var s Secrets
	b, err := os.ReadFile(path)
	if err == nil {
		if err := json.Unmarshal(b, &s); err != nil {
			return s, fmt.Errorf("%s: %w", path, err)
		}
		missing := false
		for _, k := range []*string{&s.EdgeKey, &s.BookingKey, &s.IntegrationKey, &s.MessagingKey} {
			if *k == "" {
				*k, missing = seal.NewKey(), true
			}
		}
		if !missing {
			return s, nil
		}
		return s, writeJSON(path, s)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	s = Secrets{EdgeKey: seal.NewKey(), BookingKey: seal.NewKey(), IntegrationKey: seal.NewKey(),
		MessagingKey: seal.NewKey(), EncryptionKey: seal.NewKey(), AdminToken: "adm_" + strings.TrimRight(seal.NewKey(), "=")}
	return s, writeJSON(path, s)
}

// InternalKeys are the secrets' internal keys, as a service configuration holds them.
func (s Secrets) InternalKeys() config.InternalKeys {
	return config.InternalKeys{Edge: config.Secret(s.EdgeKey), Booking: config.Secret(s.BookingKey),
		Integration: config.Secret(s.IntegrationKey), Messaging: config.Secret(s.MessagingKey)}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// Account is the content of .data/demo-account.json.
type Account struct {
	AccountID     string `json:"account_id"`
	EdgeURL       string `json:"edge_url"`
	BasicUser     string `json:"basic_user"`
	BasicPassword string `json:"basic_password"`
	ServiceKey    string `json:"servicekey"`
	ServicePass   string `json:"servicepass"`
	Key           string `json:"key"`
	Pass          string `json:"pass"`
	OwnerToken    string `json:"owner_token"`
	AdminToken    string `json:"admin_token"`
	// PropertyID is the demo property's id.
	PropertyID string `json:"property_id"`
	// PanelEmail and PanelPassword sign the demo owner in to the management panel
	// (/panel); OperatorEmail and OperatorPassword, the demo operator.
	PanelEmail       string `json:"panel_email"`
	PanelPassword    string `json:"panel_password"`
	OperatorEmail    string `json:"operator_email"`
	OperatorPassword string `json:"operator_password"`
	// SiteURL is the demo website's address (Site), an origin SiteBrand lists.
	SiteURL string `json:"site_url"`
}

// Ensure returns the demo account saved at path if edge still accepts it, and otherwise
// creates a new one (with a demo property), saves it and reports created. Either way the
// account has a brand (SiteBrand) allowing siteURL, the demo website's origin.
func Ensure(ctx context.Context, edgeURL, adminToken, siteURL, path string) (acc Account, created bool, err error) {
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &acc) == nil {
		acc.EdgeURL, acc.AdminToken, acc.SiteURL = edgeURL, adminToken, siteURL
		if status, _, err := call(ctx, edgeURL+"/api/account-settings", acc.AHeaders(), `{}`); err == nil && status == 200 {
			// An account made by an older vros-dev gets the switch and the panel users too
			// (a repeat changes nothing).
			if err := allowPrivateTargets(ctx, acc); err != nil {
				return acc, false, err
			}
			if err := panelUsers(ctx, &acc); err != nil {
				return acc, false, err
			}
			if err := ensureSiteBrand(ctx, acc, siteURL); err != nil {
				return acc, false, err
			}
			return acc, false, writeJSON(path, acc)
		}
	}
	acc, err = createAccount(ctx, edgeURL, adminToken)
	if err != nil {
		return acc, false, err
	}
	acc.SiteURL = siteURL
	if err := ensureSiteBrand(ctx, acc, siteURL); err != nil {
		return acc, false, err
	}
	return acc, true, writeJSON(path, acc)
}

func createAccount(ctx context.Context, edgeURL, adminToken string) (Account, error) {
	var acc Account
	status, body, err := call(ctx, edgeURL+"/admin/v1/accounts", map[string]string{"Authorization": "Bearer " + adminToken}, `{"name":"Demo Rentals","sandbox":true}`)
	if err != nil {
		return acc, err
	}
	if status != http.StatusCreated {
		return acc, fmt.Errorf("create account: %d %s", status, body)
	}
	var created struct {
		Data Account `json:"data"`
	}
	if err := json.Unmarshal(body, &created); err != nil {
		return acc, err
	}
	acc = created.Data
	acc.EdgeURL, acc.AdminToken = edgeURL, adminToken
	if err := allowPrivateTargets(ctx, acc); err != nil {
		return acc, err
	}
	if err := panelUsers(ctx, &acc); err != nil {
		return acc, err
	}
	for _, step := range []struct{ path, body string }{
		{"/api/account-settings", `{"currency":"USD","timezone":"America/New_York","languages":["en","it"],"brands":[{"id":1,"name":"Demo Rentals","domain":"demo.example.com"}]}`},
		{"/api/property", `{"action":"create","property":` + Property + `}`},
		{"/api/property-rate", Rates},
	} {
		status, body, err := call(ctx, edgeURL+step.path, acc.AHeaders(), step.body)
		if err != nil {
			return acc, err
		}
		if status != http.StatusOK {
			return acc, fmt.Errorf("%s: %d %s", step.path, status, body)
		}
		var out struct {
			Data struct {
				PropertyID string `json:"property_id"`
			} `json:"data"`
		}
		if json.Unmarshal(body, &out) == nil && out.Data.PropertyID != "" {
			acc.PropertyID = out.Data.PropertyID
		}
	}
	return acc, nil
}

// panelUsers makes, through the admin API, the demo owner user of the account and a demo
// operator, with passwords kept in the account file; users that exist are kept.
func panelUsers(ctx context.Context, acc *Account) error {
	if acc.PanelEmail != "" && acc.OperatorEmail != "" {
		return nil
	}
	acc.PanelEmail, acc.PanelPassword = "owner@demo.example.com", "demo-"+strings.TrimRight(seal.NewKey(), "=")[:12]
	acc.OperatorEmail, acc.OperatorPassword = "operator@demo.example.com", "demo-"+strings.TrimRight(seal.NewKey(), "=")[:12]
	for _, u := range []map[string]string{
		{"email": acc.PanelEmail, "name": "Demo Owner", "password": acc.PanelPassword, "role": "owner", "account_id": acc.AccountID},
		{"email": acc.OperatorEmail, "name": "Demo Operator", "password": acc.OperatorPassword, "role": "operator"},
	} {
		b, _ := json.Marshal(u)
		status, body, err := call(ctx, acc.EdgeURL+"/admin/v1/panel-users", map[string]string{"Authorization": "Bearer " + acc.AdminToken}, string(b))
		if err != nil {
			return err
		}
		if status != http.StatusCreated {
			return fmt.Errorf("panel user %s: %d %s", u["email"], status, body)
		}
	}
	return nil
}

// allowPrivateTargets switches on, through the admin API, the demo account's
// allow_private_targets: its webhooks and iCal feeds may name a receiver on this machine
// (127.0.0.1), which every other account is refused.
func allowPrivateTargets(ctx context.Context, acc Account) error {
	status, body, err := callMethod(ctx, http.MethodPut, acc.EdgeURL+"/admin/v1/accounts/"+acc.AccountID+"/integrations",
		map[string]string{"Authorization": "Bearer " + acc.AdminToken}, `{"allow_private_targets":true}`)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("allow private webhook targets: %d %s", status, body)
	}
	return nil
}

// Property is the demo account's first property (internal_code DEMO1).
const Property = `{"internal_code":"DEMO1","name":"Seaside Villa with Garden","type":"Villa","maxguest":6,"bedrooms":3,` +
	`"bathrooms":2,"kitchens":1,"floor":"Ground","space":{"value":140,"unit":"meters"},"address":"1 Ocean Drive",` +
	`"city":"Miami Beach","state":"FL","postcode":"33139","country":"US","latitude":25.7907,"longitude":-80.13,` +
	`"allowchildren":true,"allowpet":false,"allowsmoking":false}`

// Rates are the demo property's rates: bookable from tomorrow, a year ahead.
const Rates = `{"internal_code":"DEMO1","rate":{"daily_price":180,"weekend_price":220,"weekly_price":1100,"minimum_stay":2},` +
	`"los":[{"days":14,"discount":10}],"setting":{"standard_occupants":4,"accept_booking_upto":12,"apply_weekend_price":true,` +
	`"default_allow_checkin":"All","default_allow_checkout":"All","advanced_notice_booking_from":"1"}}`

// AHeaders are the headers that authenticate an interface A request as a: HTTP Basic and
// the servicekey/servicepass pair.
func (a Account) AHeaders() map[string]string {
	return map[string]string{
		"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(a.BasicUser+":"+a.BasicPassword)),
		"servicekey":    a.ServiceKey, "servicepass": a.ServicePass,
	}
}

// BBody is the JSON body of interface B action as a, with fields merged in.
func (a Account) BBody(action string, fields map[string]any) string {
	body := map[string]any{"key": a.Key, "pass": a.Pass, "action": action}
	for k, v := range fields {
		body[k] = v
	}
	b, _ := json.Marshal(body)
	return string(b)
}

func call(ctx context.Context, url string, headers map[string]string, body string) (int, []byte, error) {
	return callMethod(ctx, http.MethodPost, url, headers, body)
}

func callMethod(ctx context.Context, method, url string, headers map[string]string, body string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewBufferString(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// SamplePhoto is a small generated PNG as base64, for the sample photo upload.
func SamplePhoto() string {
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for y := 0; y < 48; y++ {
		for x := 0; x < 64; x++ {
			img.Set(x, y, color.RGBA{R: uint8(x * 4), G: uint8(120 + y), B: 200, A: 255})
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// Announce tells the developer that vros runs. The credentials and sample requests, which
// hold every demo secret and the admin token, are printed once, when the account is
// created, and kept in reqPath (readable by the owner only); later starts point there.
func Announce(w io.Writer, a Account, created bool, accPath, reqPath string) error {
	if !created {
		if _, err := os.Stat(reqPath); err != nil {
			var buf bytes.Buffer
			Print(&buf, a, accPath)
			if err := os.WriteFile(reqPath, buf.Bytes(), 0o600); err != nil {
				return err
			}
		}
		fmt.Fprintf(w, "\nvros is running. Edge: %s   (Ctrl-C stops everything; data stays in %s)\n"+
			"Demo account %s: credentials in %s, sample requests in %s\n"+
			"(among them a webhook to a receiver on 127.0.0.1, which this account may name).\n", a.EdgeURL, filepath.Dir(accPath), a.AccountID, accPath, reqPath)
		PrintPanel(w, a)
		return nil
	}
	var buf bytes.Buffer
	Print(&buf, a, accPath)
	if err := os.WriteFile(reqPath, buf.Bytes(), 0o600); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	fmt.Fprintf(w, "These requests are kept in %s; later starts do not print the API secrets again.\n", reqPath)
	PrintPanel(w, a)
	return err
}

// PrintPanel shows the management panel's address and the demo logins (at every start:
// they work on this machine only), and the demo website's address.
func PrintPanel(w io.Writer, a Account) {
	fmt.Fprintf(w, "\nManagement panel: %s/panel/\n  demo owner     %s   password %s\n  demo operator  %s   password %s\n"+
		"Demo website: %s/   (books the demo property through the booking engine, test card 4242 4242 4242 4242)\n\n",
		a.EdgeURL, a.PanelEmail, a.PanelPassword, a.OperatorEmail, a.OperatorPassword, a.SiteURL)
}

// Print shows the credentials and sample requests.
func Print(w io.Writer, a Account, path string) {
	A := fmt.Sprintf(`curl -s -u '%s:%s' -H 'servicekey: %s' -H 'servicepass: %s' -H 'Content-Type: application/json'`,
		a.BasicUser, a.BasicPassword, a.ServiceKey, a.ServicePass)
	fmt.Fprintf(w, `
vros is running. Edge: %[1]s   (Ctrl-C stops everything; data stays in %[19]s)

Demo account %[2]s — credentials saved in %[3]s:
  interface A   basic %[4]s : %[5]s   servicekey %[6]s   servicepass %[7]s
  interface B   key %[8]s   pass %[9]s
  GET reads     owner_token %[10]s
  admin API     Bearer %[11]s

Try:
  # update the demo property (interface A)
  %[12]s %[1]s/api/property -d '{"action":"update","property":{"internal_code":"DEMO1","name":"Seaside Villa with a Big Garden","type":"Villa","maxguest":6,"bedrooms":3,"bathrooms":2,"kitchens":1,"space":{"value":140,"unit":"meters"},"address":"1 Ocean Drive","city":"Miami Beach","country":"US","latitude":25.7907,"longitude":-80.13}}'

  # set its rates (interface A)
  %[12]s %[1]s/api/property-rate -d '%[14]s'

  # quote a week there (interface B; the property id is the one created above)
  curl -s -H 'Content-Type: application/json' %[1]s/vros/external-booking -d '{"key":"%[8]s","pass":"%[9]s","action":"getinfo","propertyId":%[16]s,"numberofadults":2,"checkin":"%[15]s","checkout":"%[17]s"}'

  # the property's availability and prices from tomorrow (interface B, catalog)
  curl -s -H 'Content-Type: application/json' %[1]s/vros/external-booking -d '{"key":"%[8]s","pass":"%[9]s","action":"getcalendar","propertyId":"%[2]s_%[16]s","startDate":"%[18]s","endDate":"%[17]s"}'

  # book on the demo website: open %[20]s/ in a browser (the booking engine embedded with the owner token)
  # its public API, as the page calls it (the Origin must be one of a brand's origins)
  curl -s -H 'Origin: %[20]s' %[1]s/widget/api/v1/%[10]s/site

  # the website's default configuration (owner-token GET)
  curl -s %[1]s/vros/api/default-config/owner_token/%[10]s

  # list the account's bookings (interface B)
  curl -s -H 'Content-Type: application/json' %[1]s/vros/external-booking -d '{"key":"%[8]s","pass":"%[9]s","action":"listbooking"}'

  # add a photo (interface A; base64 data or an https link; answers the photo_id)
  %[12]s %[1]s/api/property-photo -d '{"action":"create","photo":{"internal_code":"DEMO1","image":"%[13]s"}}'

  # send the account's booking events as signed webhooks to a receiver on this machine (any HTTP server on 127.0.0.1:9000; the answer holds the signing secret)
  %[12]s %[1]s/api/webhook -d '{"action":"create","webhook":{"url":"http://127.0.0.1:9000/vros-webhooks","event_types":["booking.created","booking.updated","booking.cancelled"]}}'

  # create an account (admin API)
  curl -s -H 'Authorization: Bearer %[11]s' %[1]s/admin/v1/accounts -d '{"name":"Another Owner","sandbox":true}'

`, a.EdgeURL, a.AccountID, path, a.BasicUser, a.BasicPassword, a.ServiceKey, a.ServicePass, a.Key, a.Pass, a.OwnerToken, a.AdminToken, A, SamplePhoto(), Rates,
		time.Now().AddDate(0, 0, 30).Format(time.DateOnly), a.PropertyID, time.Now().AddDate(0, 0, 37).Format(time.DateOnly),
		time.Now().AddDate(0, 0, 1).Format(time.DateOnly), filepath.Dir(path), a.SiteURL)
}

// NotifyOwner makes the demo owner's panel address the account's notification address of
// guest messaging (messaging-settings notify), unless the account already names one: the
// owner's notices of new and cancelled bookings then reach make run's mail catcher too.
func NotifyOwner(ctx context.Context, a Account) error {
	status, body, err := call(ctx, a.EdgeURL+"/api/messaging-settings", a.AHeaders(), `{"action":"get"}`)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("messaging-settings get: HTTP %d %s", status, body)
	}
	var got struct {
		Data struct {
			Notify []string `json:"notify"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		return fmt.Errorf("messaging-settings get: %w", err)
	}
	if len(got.Data.Notify) > 0 || a.PanelEmail == "" {
		return nil
	}
	req, _ := json.Marshal(map[string]any{"action": "update", "notify": []string{a.PanelEmail}})
	status, body, err = call(ctx, a.EdgeURL+"/api/messaging-settings", a.AHeaders(), string(req))
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("messaging-settings update: HTTP %d %s", status, body)
	}
	return nil
}
