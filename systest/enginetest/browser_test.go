package enginetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vros/vros/systest/browser"
)

// stepWithin bounds one browser step: a wait for a condition, a click.
const stepWithin = 30 * time.Second

// tab is one Chromium of its own (browser.Start: two tabs are two browsers), on a closed
// network where no name resolves but loopback's. Every request leaving loopback (but those
// allowed) and every uncaught script error fails the test.
type tab struct {
	t   *testing.T
	ctx context.Context
}

// newTab opens a tab; allow names addresses (prefixes) beyond loopback the test serves
// itself (Stripe.js).
func newTab(t *testing.T, allow ...string) *tab {
	t.Helper()
	return &tab{t: t, ctx: browser.Start(t, allow...)}
}

// js is s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (p *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepWithin)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

func (p *tab) open(url string) { p.t.Helper(); p.do(chromedp.Navigate(url)) }

// eval is the value of a JavaScript expression, as a string (JSON for anything else).
func (p *tab) eval(expr string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepWithin)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr))
	if err != nil {
		p.t.Fatalf("%s: %v", expr, err)
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// until waits until a JavaScript expression is true: a condition in the page, polled on
// every change of the DOM and every 100 ms, never a fixed wait. A navigation under way
// (a redirect) ends a poll: it is polled again on the new page. what names the condition
// in a failure, with the expression show's value at that moment.
func (p *tab) until(expr, what, show string) {
	p.t.Helper()
	deadline := time.Now().Add(stepWithin)
	for {
		ctx, cancel := context.WithDeadline(p.ctx, deadline)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+expr+")", chromedp.WithPollingInterval(100*time.Millisecond),
			chromedp.WithPollingTimeout(time.Until(deadline))))
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || errors.Is(err, chromedp.ErrPollingTimeout) {
			got := ""
			if show != "" {
				got = p.evalQuiet(show)
			}
			p.t.Fatalf("waiting for %s: %v; the page shows %s", what, err, got)
		}
	}
}

// evalQuiet is eval for a failure's message: an error is shown, not fatal.
func (p *tab) evalQuiet(expr string) string {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr))
	if err != nil {
		return err.Error()
	}
	return string(v)
}

// widgetText is what the widget shows, for failures.
const widgetText = `(document.querySelector(".vros-be") || document.body).innerText`

// expect waits until the first element matching css shows want, and returns its text.
func (p *tab) expect(css, want string) string {
	p.t.Helper()
	el := fmt.Sprintf("document.querySelector(%s)", js(css))
	p.until(fmt.Sprintf("%s && %s.textContent.includes(%s)", el, el, js(want)), fmt.Sprintf("%s to show %q", css, want), widgetText)
	return strings.TrimSpace(p.eval(el + ".textContent"))
}

// present waits for an element matching css.
func (p *tab) present(css string) {
	p.t.Helper()
	p.until(fmt.Sprintf("document.querySelector(%s)", js(css)), css, widgetText)
}

// click waits for the element, then clicks it as a mouse does.
func (p *tab) click(css string) {
	p.t.Helper()
	p.present(css)
	p.do(chromedp.Click(chromedp.CSS(css)))
}

// set sets an input's or a select's value as typing or choosing does: the value, then the
// input and change events.
func (p *tab) set(css, value string) {
	p.t.Helper()
	p.present(css)
	p.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%s); e.focus(); e.value = %s;
		e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); return e.value })()`, js(css), js(value)))
}

// key sends keys (chromedp/kb names) to the focused element.
func (p *tab) key(keys ...string) {
	p.t.Helper()
	for _, k := range keys {
		p.do(chromedp.KeyEvent(k))
	}
}

// focused is the focused element's name, else its data-date, else its tag.
func (p *tab) focused() string {
	p.t.Helper()
	return p.eval(`(() => { const e = document.activeElement; return e ? (e.getAttribute("name") || e.getAttribute("data-date") || e.tagName) : "" })()`)
}

// location is the page's address.
func (p *tab) location() string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepWithin)
	defer cancel()
	u, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		p.t.Fatal(err)
	}
	return u
}

// ---------------------------------------------------------------- the widget's steps

// day is the selector of a calendar day the guest can press now.
func dayButton(date string) string {
	return fmt.Sprintf(`.vros-be-calendar button[data-date=%q][aria-disabled="false"]`, date)
}

// showMonth presses "next month" until date's month is shown.
func (p *tab) showMonth(date string) {
	p.t.Helper()
	p.present(".vros-be-calendar .vros-be-month")
	for range 24 {
		if p.eval(fmt.Sprintf(`String(!!document.querySelector('.vros-be-calendar button[data-date=%q]'))`, date)) == "true" {
			return
		}
		p.click(".vros-be-nav-next")
	}
	p.t.Fatalf("the calendar never shows %s", date)
}

// pickStay presses the arrival day, then the departure day, and waits for the quote.
func (p *tab) pickStay(arrival, departure string) {
	p.t.Helper()
	p.showMonth(arrival)
	p.click(dayButton(arrival))
	p.showMonth(departure)
	p.click(dayButton(departure))
	p.waitQuote()
}

// waitQuote waits until the quote and its Book button are shown.
func (p *tab) waitQuote() {
	p.t.Helper()
	p.present(".vros-be-quote .vros-be-total")
	p.present(".vros-be-quote .vros-be-book")
}

// guest fills the guest form (every value as given) and submits it.
func (p *tab) guest(first, last, email, country string) {
	p.t.Helper()
	p.present(`.vros-be-form [name="first_name"]`)
	p.set(`[name="first_name"]`, first)
	p.set(`[name="last_name"]`, last)
	p.set(`[name="email"]`, email)
	p.set(`[name="phone"]`, "+44 20 7946 0000")
	p.set(`[name="country"]`, country)
	p.click(".vros-be-continue")
}

// card fills the sandbox card fields.
func (p *tab) card(number string) {
	p.t.Helper()
	p.present(`[name="card.number"]`)
	p.set(`[name="card.number"]`, number)
	p.set(`[name="card.name"]`, "Ada Lovelace")
	p.set(`[name="card.exp_month"]`, "12")
	p.set(`[name="card.exp_year"]`, fmt.Sprint(time.Now().Year()+3))
	p.set(`[name="card.cvc"]`, "123")
}

// ---------------------------------------------------------------- the embedding site

// site is a website on an origin of its own (another port of 127.0.0.1 than edge's): its
// pages are set by the test.
type site struct {
	*httptest.Server
	mu    sync.Mutex
	pages map[string]string
}

func newSite(t *testing.T) *site {
	s := &site{pages: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		page, ok := s.pages[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(s.Close)
	s.page("/thanks", thanksPage)
	return s
}

func (s *site) page(path, html string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[path] = html
}

const thanksPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Thank you</title></head>
<body><h1 id="thanks">Thank you for your booking</h1></body></html>`

// page is an HTML page of a site with body inside.
func page(lang, body string) string {
	return `<!doctype html><html lang="` + lang + `"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Villas by the sea</title>
<style>body { font-family: sans-serif; margin: 8px; }</style></head>
<body><header><h1>Villas by the sea</h1></header><main>` + body + `</main></body></html>`
}
