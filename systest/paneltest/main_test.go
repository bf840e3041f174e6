// Package paneltest tests the management panel end to end: a whole vros (embedded servers),
// owners and operators signing in through edge's /panel, in Debian's Chromium (chromedp) for
// what a person does on the pages, and over plain HTTP for the guarantees (CSRF, tenants
// apart under load, throttling, sessions). The browser test writes a screenshot of each page
// to $VROS_PANEL_SCREENSHOTS (make panel-screenshots: docs/panel/), else to a temporary
// directory.
package paneltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/systest/apitest"
)

const adminToken = "test-admin-token-0123456789"

// viewsWithin bounds how long a test waits for an event-fed view to show a write.
const viewsWithin = time.Minute

var st *stack.Stack

func TestMain(m *testing.M) {
	apitest.Main(m, stack.Options{Keys: stack.NewKeys(), EncryptionKey: seal.NewKey(),
		AdminToken: adminToken, LogLevel: "error", PasswordCost: 4, OutboxLease: time.Second, RateLimitRPS: 1000, RateLimitBurst: 5000}, &st)
}

// owner is an account with one property (code Code, named Name: the account's id is in it,
// so a page of another account's data is told by its name) and an owner user of the panel.
type owner struct {
	demo.Account
	Email, Password, Code, Name string
	PID                         int
}

var seq = time.Now().UnixNano() % 100000

func newOwner(t *testing.T) owner {
	t.Helper()
	acc, err := apitest.NewAccountOf(http.DefaultClient, st.EdgeURL, adminToken, "Panel Owner", true)
	if err != nil {
		t.Fatal(err)
	}
	acc.EdgeURL = st.EdgeURL
	seq++
	o := owner{Account: acc, Email: fmt.Sprintf("owner%d@example.com", seq), Password: "correct horse battery", Code: "P" + acc.AccountID,
		Name: "Villa of account " + acc.AccountID + " by the sea"}
	createUser(t, o.Email, o.Password, "owner", acc.AccountID)
	prop := strings.Replace(strings.Replace(demo.Property, `"DEMO1"`, `"`+o.Code+`"`, 1), "Seaside Villa with Garden", o.Name, 1)
	var created struct {
		Data struct {
			PropertyID string `json:"property_id"`
		} `json:"data"`
	}
	o.a(t, "property", `{"action":"create","property":`+prop+`}`, &created)
	fmt.Sscan(created.Data.PropertyID, &o.PID)
	o.a(t, "property-rate", strings.Replace(demo.Rates, `"DEMO1"`, `"`+o.Code+`"`, 1), nil)
	return o
}

// createUser makes a panel user through the admin API.
func createUser(t *testing.T, email, password, role, account string) {
	t.Helper()
	r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/admin/v1/panel-users",
		map[string]string{"Authorization": "Bearer " + adminToken},
		apitest.JSON(map[string]string{"email": email, "password": password, "role": role, "account_id": account, "name": "Test " + role}))
	if err != nil || r.Code != http.StatusCreated {
		t.Fatalf("panel user: %v %d %s", err, r.Code, r.Body)
	}
}

// a sends an interface A request and decodes its answer into out (nil: only checked).
func (o owner) a(t *testing.T, resource, body string, out any) {
	t.Helper()
	if err := apitest.PostA(http.DefaultClient, o.Account, resource, body, out); err != nil {
		t.Fatal(err)
	}
}

// bAnswer is interface B's envelope.
type bAnswer struct {
	Status  int             `json:"status"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// b sends an interface B action with key and pass.
func b(t *testing.T, key, pass, action string, fields map[string]any) bAnswer {
	t.Helper()
	body := map[string]any{"key": key, "pass": pass, "action": action}
	for k, v := range fields {
		body[k] = v
	}
	r, err := apitest.Send(http.DefaultClient, http.MethodPost, st.EdgeURL+"/vros/external-booking", nil, apitest.JSON(body))
	if err != nil {
		t.Fatal(err)
	}
	var a bAnswer
	if err := json.Unmarshal(r.Body, &a); err != nil {
		t.Fatalf("%s: %s", action, r.Body)
	}
	return a
}

// book makes a booking through interface B, once booking-svc's view has the property.
func (o owner) book(t *testing.T, checkin, checkout string) int64 {
	t.Helper()
	deadline := time.Now().Add(viewsWithin)
	for {
		a := b(t, o.Key, o.Pass, "create", map[string]any{"propertyId": o.PID, "firstName": "Ada", "lastName": "Lovelace",
			"email": "ada@example.com", "numberofadults": 2, "leadsourceId": 1, "checkin": checkin, "checkout": checkout})
		if a.Status == 0 {
			var d struct {
				BookingID int64 `json:"bookingId"`
			}
			_ = json.Unmarshal(a.Data, &d)
			return d.BookingID
		}
		// 16, or a property without rates: booking-svc's view has not the property's last
		// events yet.
		caughtUp := a.Status != 16 && !strings.Contains(a.Message, "no rates")
		if caughtUp || time.Now().After(deadline) {
			t.Fatalf("create %s..%s: %d %s", checkin, checkout, a.Status, a.Message)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// session is a browser's session over plain HTTP: its cookies and its CSRF token.
type session struct {
	c    *http.Client
	csrf string
}

var csrfInput = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

func newClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// signIn signs in over HTTP as a browser would: the sign-in page's token, then the form.
func signIn(t *testing.T, email, password string) *session {
	t.Helper()
	s := &session{c: newClient()}
	code, _ := s.login(t, email, password)
	if code != http.StatusSeeOther {
		t.Fatalf("sign in %s: HTTP %d", email, code)
	}
	_, page := s.get(t, "/panel/users")
	if !csrfInput.MatchString(page) { // an operator
		_, page = s.get(t, "/panel/operator/users")
	}
	m := csrfInput.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the page: %.500s", page)
	}
	s.csrf = m[1]
	return s
}

func (s *session) login(t *testing.T, email, password string) (int, string) {
	t.Helper()
	_, page := s.get(t, "/panel/login")
	m := csrfInput.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no token on the sign-in page: %.300s", page)
	}
	return s.post(t, "/panel/login", url.Values{"_csrf": {m[1]}, "email": {email}, "password": {password}})
}

func (s *session) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := s.c.Get(st.EdgeURL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// post sends a form, as the panel's pages do (same origin), with extra headers as pairs.
func (s *session) post(t *testing.T, path string, form url.Values, headers ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, st.EdgeURL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", st.EdgeURL)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// form is a form with the session's token.
func (s *session) form(kv ...string) url.Values {
	v := url.Values{"_csrf": {s.csrf}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// day is the date n days from today (UTC).
func day(n int) string { return apitest.Day(n) }

// pngOf is a 64x48 PNG of one colour.
func pngOf(c color.RGBA) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

func writePNG(t *testing.T, path string, c color.RGBA) {
	t.Helper()
	if err := os.WriteFile(path, pngOf(c), 0o644); err != nil {
		t.Fatal(err)
	}
}

// photoUpload posts a small PNG to the photos page as a browser's file upload.
func photoUpload(t *testing.T, s *session, path string) {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("_csrf", s.csrf)
	part, _ := w.CreateFormFile("image", "house.png")
	_, _ = part.Write(pngOf(color.RGBA{128, 128, 128, 255}))
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, st.EdgeURL+path, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Origin", st.EdgeURL)
	resp, err := s.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("photo upload: HTTP %d", resp.StatusCode)
	}
}

// apitestAllowPrivate lets the account's webhooks and feeds name loopback (the tests' targets).
func apitestAllowPrivate(account string) error {
	return apitest.AllowPrivateTargets(http.DefaultClient, st.EdgeURL, adminToken, account, true)
}
