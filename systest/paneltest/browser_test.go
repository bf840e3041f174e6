package paneltest

import (
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/systest/browser"
)

// shots is where the screenshots go: $VROS_PANEL_SCREENSHOTS (docs/panel with make
// panel-screenshots), else a temporary directory.
func shots(t *testing.T) string {
	if d := os.Getenv("VROS_PANEL_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// page drives one browser tab through the panel.
type page struct {
	t    *testing.T
	ctx  context.Context
	dir  string
	seen []string
}

func (p *page) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

func (p *page) open(path string) { p.t.Helper(); p.do(chromedp.Navigate(st.EdgeURL + path)) }

// fill sets the fields by name (inputs, selects, text areas).
func (p *page) fill(kv ...string) {
	p.t.Helper()
	for i := 0; i+1 < len(kv); i += 2 {
		p.do(chromedp.SetValue(chromedp.CSS(fmt.Sprintf(`[name=%q]`, kv[i])), kv[i+1]))
	}
}

// press clicks the button with this text, once htmx is done with the page. htmx boosts the
// forms of a body it swapped in (so that they submit through it) only when that body
// settles, a timer later: a click in between, which a loaded machine makes likely, submits
// the form natively, a whole page load the test did not mean (and after which Back is no
// longer htmx's).
func (p *page) press(label string) {
	p.t.Helper()
	p.until("htmx settled before pressing "+label, htmxQuiet)
	p.do(chromedp.Click(fmt.Sprintf(`//button[normalize-space()=%q]`, label)))
}

// htmxQuiet is true once the page has loaded (its deferred scripts, htmx among them, ran)
// and htmx has no request, swap or settle under way. A page without htmx is quiet once
// loaded.
const htmxQuiet = `document.readyState === "complete" && !document.querySelector(".htmx-request, .htmx-swapping, .htmx-settling")`

// until waits until the JavaScript expression js is true in the tab. Each evaluation that
// fails (a navigation can replace the page between two) is tried again.
func (p *page) until(what, js string) {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			loc, _ := chromedp.Run(p.ctx, chromedp.Location())
			html, _ := chromedp.Run(p.ctx, chromedp.OuterHTML("main"))
			p.t.Logf("the tab at %s shows: %.6000s", loc, html)
			p.t.Fatalf("%s: not so after 30 s (%v)", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// read is the text of the first element matching css, once it is visible. A page being
// swapped (htmx replaces the body after a navigation) can drop the node between the wait and
// the read: that is an error to retry.
func (p *page) read(css string) (string, error) {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(css))); err != nil {
		return "", err
	}
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	return strings.TrimSpace(s), err
}

// expect waits until the element css shows want, and returns its text.
func (p *page) expect(css, want string) string {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := p.read(css)
		if err == nil && strings.Contains(got, want) {
			return got
		}
		if time.Now().After(deadline) {
			// What the tab shows, to tell a page that never came from one that came wrong.
			loc, _ := chromedp.Run(p.ctx, chromedp.Location())
			html, _ := chromedp.Run(p.ctx, chromedp.OuterHTML("main"))
			p.t.Logf("the tab at %s shows: %.6000s", loc, html)
			p.t.Fatalf("%s shows %q (%v), want %q", css, got, err, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// text is the text of the first element matching css, once there is one.
func (p *page) text(css string) string { p.t.Helper(); return p.expect(css, "") }

// shot writes a screenshot of the whole page as name.png.
func (p *page) shot(name string) {
	p.t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.seen = append(p.seen, name)
}

// TestOwnerWorksInTheBrowser is the browser test: an owner signs in, creates a
// property (a validation error first, shown at its field, then fixed), sets its rates,
// blocks days on the calendar (then refused by a create through interface B), cancels a
// booking and rotates a credential (the old one then refused); an operator signs in to the
// accounts, an account and the audit log. Every page is photographed.
func TestOwnerWorksInTheBrowser(t *testing.T) {
	o := newOwner(t)
	p := &page{t: t, ctx: browser.Start(t), dir: shots(t)}

	// Sign in.
	p.open("/panel/")
	p.expect("h1", "Sign in")
	p.shot("login")
	p.fill("email", o.Email, "password", o.Password)
	p.press("Sign in")
	p.expect("h1", "Dashboard")

	// A booking to see on the dashboard and to cancel later.
	booked := o.book(t, day(2), day(5))
	p.open("/panel/dashboard")
	p.expect("main table", "Arrival")
	p.shot("dashboard")

	// A new property: a name too short is refused at its field, with interface A's message.
	p.open("/panel/properties/new")
	p.fill("property[internal_code]", "NEW1", "property[name]", "Too short", "property[type]", "Villa", "property[maxguest]", "4",
		"property[bedrooms]", "2", "property[bathrooms]", "1", "property[kitchens]", "1", "property[floor]", "Ground",
		"property[space][value]", "90", "property[address]", "2 Harbour Road", "property[city]", "Portofino", "property[postcode]", "16034",
		"property[country]", "IT", "property[latitude]", "44.3", "property[longitude]", "9.21", "property[allowpet]", "1")
	p.press("Create property")
	p.expect("#f-property-name-err", "must be at least 20 characters")
	p.shot("property-invalid")
	p.fill("property[name]", "Harbour House with a View")
	p.press("Create property")
	p.expect(".notice", "Created.")
	p.shot("property")
	p.open("/panel/properties")
	p.expect("main table", "Harbour House with a View")
	p.shot("properties")

	// Rates with a season.
	p.open("/panel/properties/NEW1/rates")
	p.fill("rate[daily_price]", "150", "rate[minimum_stay]", "2", "setting[standard_occupants]", "2",
		"setting[advanced_notice_booking_from]", "0", "season[0][name]", "Summer", "season[0][start_date]", day(60),
		"season[0][end_date]", day(90), "season[0][daily_price]", "210")
	p.press("Save rates")
	p.expect(".notice", "Saved.")
	p.shot("rates")
	var got struct {
		Data struct {
			PropertyID int64 `json:"property_id"`
			Rates      struct {
				Rate struct {
					Daily string `json:"daily_price"`
				} `json:"rate"`
				Seasons []struct {
					Name  string `json:"name"`
					Price struct {
						Daily string `json:"daily_price"`
					} `json:"prices"`
				} `json:"seasons"`
			} `json:"rates"`
		} `json:"data"`
	}
	o.a(t, "property", `{"action":"get","property":{"internal_code":"NEW1"}}`, &got)
	if r := got.Data.Rates; r.Rate.Daily != "150" || len(r.Seasons) != 1 || r.Seasons[0].Name != "Summer" || r.Seasons[0].Price.Daily != "210" {
		t.Fatalf("rates stored: %+v", r)
	}
	// Two photos uploaded from files; the second made the main one.
	p.open("/panel/properties/NEW1/photos")
	for i, c := range []color.RGBA{{200, 120, 40, 255}, {40, 120, 200, 255}} {
		file := filepath.Join(t.TempDir(), fmt.Sprintf("photo%d.png", i))
		writePNG(t, file, c)
		p.do(chromedp.SetUploadFiles(chromedp.CSS(`input[name=image]`), []string{file}))
		p.press("Upload")
		p.expect(".notice", "Photo added.")
		// The page after this upload, not the one before it (which says "Photo added." too,
		// after the first): it shows this photo. Counted, not named: a photo's caption is
		// its id, which another test's (or run's) photos move on.
		p.until(fmt.Sprintf("the page after upload %d shows %d photos", i+1, i+1),
			fmt.Sprintf(`document.querySelectorAll(".photos figure").length === %d`, i+1))
	}
	p.press("Make main")
	p.expect(".notice", "Saved.")
	p.shot("property-photos")
	var photos struct {
		Data contract.Property `json:"data"`
	}
	o.a(t, "property", `{"action":"get","property":{"internal_code":"NEW1"}}`, &photos)
	if ph := photos.Data.OrderedPhotos(); len(ph) != 2 || ph[0].PhotoID < ph[1].PhotoID {
		t.Fatalf("photos after Make main on the second: %+v", ph)
	}
	for _, path := range []string{"policy", "methods"} {
		p.open("/panel/properties/NEW1/" + path)
		p.expect("h1", "Harbour House")
		p.shot("property-" + path)
	}

	// Block three nights on the calendar; interface B's create is then refused for them.
	first := day(30)
	month := first[:7]
	nights := []string{month + "-10", month + "-11", month + "-12"}
	p.open("/panel/properties/NEW1/calendar?month=" + month)
	p.expect("h1", "Calendar")
	for _, d := range nights {
		p.do(chromedp.Click(chromedp.CSS("#d-" + d)))
	}
	p.fill("memo", "Owner stay")
	p.press("Block the ticked days")
	p.expect(".notice", "The days are blocked.")
	p.shot("calendar")
	// A nightly price and minimum stay for two other days.
	for _, d := range []string{month + "-20", month + "-21"} {
		p.do(chromedp.Click(chromedp.CSS("#d-" + d)))
	}
	p.fill("price", "175.50", "minstay", "3")
	p.press("Set price and minimum stay")
	p.expect(".notice", "Prices saved.")
	var priced struct {
		Data contract.Property `json:"data"`
	}
	o.a(t, "property", `{"action":"get","property":{"internal_code":"NEW1"}}`, &priced)
	if d := priced.Data.Prices[month+"-20"]; d.Price != "175.5" || d.MinNights != 3 {
		t.Fatalf("price of %s-20 after the calendar's form: %+v", month, d)
	}
	pid := got.Data.PropertyID
	deadline := time.Now().Add(viewsWithin)
	for {
		a := b(t, o.Key, o.Pass, "create", map[string]any{"propertyId": pid, "firstName": "Bo", "lastName": "Blocked", "email": "bo@example.com",
			"numberofadults": 2, "leadsourceId": 1, "checkin": nights[0], "checkout": month + "-14"})
		if a.Status == 8 {
			break
		}
		if a.Status != 16 || time.Now().After(deadline) { // 16: booking-svc's view has not the property yet
			t.Fatalf("create over the blocked nights: status %d %s, want 8 (not available)", a.Status, a.Message)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Bookings: the list, the detail, and a cancellation.
	p.open("/panel/bookings")
	p.expect("main table", "Lovelace")
	p.shot("bookings")
	p.open(fmt.Sprintf("/panel/bookings/%d", booked))
	p.expect("#booking-state", "Reserved")
	p.shot("booking")
	p.press("Cancel this booking")
	p.expect(".notice", "The booking is cancelled.")
	p.expect("#booking-state", "Cancelled")
	p.expect(".refund-status", "none") // nothing was paid: nothing to refund
	if s := o.bookingState(t, booked); s != "cancelled" {
		t.Fatalf("booking after the panel's cancel: %s", s)
	}

	// Rotate interface B's key: the new secret is shown once; the old pair is refused.
	p.open("/panel/credentials")
	p.press("Rotate key")
	key, pass := p.text("#new-identifier"), p.text("#new-secret")
	p.shot("credentials")
	if a := b(t, o.Key, o.Pass, "gettax", map[string]any{"propertyId": o.PID}); a.Status == 0 || !strings.Contains(a.Message, "invalid credentials") {
		t.Fatalf("the rotated key: status %d %q, want refused", a.Status, a.Message)
	}
	if a := b(t, key, pass, "gettax", map[string]any{"propertyId": o.PID}); a.Status != 0 {
		t.Fatalf("the new key: status %d %q", a.Status, a.Message)
	}

	// Another account's booking, named in the address bar: not found, nothing shown.
	other := newOwner(t)
	theirs := other.book(t, day(6), day(8))
	p.open(fmt.Sprintf("/panel/bookings/%d", theirs))
	p.expect(".problem", "Not found.")
	if html, _ := chromedp.Run(p.ctx, chromedp.OuterHTML(chromedp.CSS("main"))); strings.Contains(html, other.Name) {
		t.Fatal("another account's booking shown")
	}
	p.shot("not-found")
	// A form of another site (another origin on this machine: the same site to the browser,
	// so the session cookie goes along) posting to the panel: refused by the CSRF check.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/panel/properties/NEW1/delete"><button>Win a prize</button></form>`, st.EdgeURL)
	}))
	defer evil.Close()
	p.do(chromedp.Navigate(evil.URL))
	p.press("Win a prize")
	p.expect(".problem", "CSRF check failed")
	p.shot("csrf-refused")
	o.a(t, "property", `{"action":"get","property":{"internal_code":"NEW1"}}`, nil)

	// The other owner pages.
	for _, name := range []string{"users", "brands", "webhooks", "ical", "multicalendar", "owners", "statements"} {
		p.open("/panel/" + name)
		p.expect("h1", "")
		p.shot(name)
	}
	p.open("/panel/properties/NEW1/rateplans")
	p.expect(`#plans tr[data-plan="0"]`, "Standard")
	p.shot("rateplans")
	for _, tab := range []string{"owner", "expenses"} {
		p.open("/panel/properties/NEW1/" + tab)
		p.expect("h1", "NEW1")
		p.shot("property-" + tab)
	}
	// On a phone.
	p.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	p.open("/panel/properties/NEW1/calendar?month=" + month)
	p.expect("h1", "Calendar")
	p.shot("calendar-phone")
	p.do(chromedp.EmulateViewport(1200, 900))
	p.press("Sign out")
	p.expect("h1", "Sign in")

	// The operator.
	opEmail := fmt.Sprintf("operator%d@example.com", seq)
	createUser(t, opEmail, "operator password 1", "operator", "")
	p.fill("email", opEmail, "password", "operator password 1")
	p.press("Sign in")
	p.expect("h1", "Accounts")
	p.shot("operator-accounts")
	p.open("/panel/operator/accounts/" + o.AccountID)
	p.expect("#account-status", "active")
	p.shot("operator-account")
	p.open("/panel/operator/audit?account=" + o.AccountID)
	p.expect("main table", "rotate")
	p.shot("operator-audit")

	raw, _ := json.Marshal(p.seen)
	t.Logf("screenshots in %s: %s", p.dir, raw)
}

// TestSignOutForgetsSecrets: a credential's secret, shown once after a rotation, is not
// kept in the browser: after Sign out, Back shows no secret, neither on the page nor in
// htmx's history cache (sessionStorage).
func TestSignOutForgetsSecrets(t *testing.T) {
	o := newOwner(t)
	p := &page{t: t, ctx: browser.Start(t), dir: shots(t)}
	p.open("/panel/login")
	p.fill("email", o.Email, "password", o.Password)
	p.press("Sign in")
	p.expect("h1", "Dashboard")
	p.open("/panel/credentials")
	p.press("Rotate key")
	secret := p.text("#new-secret")
	if len(secret) < 16 {
		t.Fatalf("rotated secret %q", secret)
	}
	p.press("Sign out")
	p.expect(".notice", "Signed out.")

	eval := func(js string) *string {
		t.Helper()
		ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
		defer cancel()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[*string](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
	// Back asks the server for the page before (htmx keeps no history cache, and the browser
	// reuses no answer of the panel), with the cookie: without a session, the sign-in page
	// (docs/panel.md). Wait for that page, at the address Back leads to, whichever way it
	// came: htmx swapping the body in on the history event, or the browser loading it. The
	// heading of the page before Back is marked, so that a heading without the mark is the
	// new page's.
	signedOut := eval(`document.querySelector("h1").setAttribute("data-before-back", ""); location.href`)
	at, _ := json.Marshal(*signedOut)
	p.do(chromedp.NavigateBack())
	p.until("Back after Sign out shows the sign-in page", fmt.Sprintf(
		`location.href !== %s && ((h) => h !== null && !h.hasAttribute("data-before-back") && h.textContent.includes("Sign in"))(document.querySelector("h1"))`, at))
	p.until("the page Back shows settled", htmxQuiet)
	if html := eval(`document.documentElement.outerHTML`); html == nil || strings.Contains(*html, secret) {
		t.Errorf("Back after Sign out shows the rotated secret")
	}
	if cache := eval(`sessionStorage.getItem("htmx-history-cache")`); cache != nil {
		t.Errorf("htmx's history cache after Sign out and Back holds %d bytes (the secret among them: %v), want none", len(*cache), strings.Contains(*cache, secret))
	}
}
