package money

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// stripeProxy stands between booking-svc and stripe-mock (VROS_BOOKING_STRIPE_API_URL). It
// records every request — method, path, the secret key it was made with (one per account
// here), its Idempotency-Key and form — and fails the next requests a test asks it to: an
// HTTP 500 (with Stripe-Should-Retry: false, so that Stripe's library leaves the retry to
// vros) or a connection dropped before any answer. A failed request is recorded too.
//
// stripe-mock keeps no state and answers every PaymentIntent with its fixture's status
// ("succeeded") and its fixture's creation time; the proxy makes a manual-capture intent
// read as Stripe answers it (requires_capture), a cancelled one as canceled, a capture with
// what it captured, and what is made now as created now.
type stripeProxy struct {
	URL string

	srv      *httptest.Server
	upstream string
	mu       sync.Mutex
	calls    []stripeCall
	faults   []*fault
}

// stripeCall is one request the proxy saw.
type stripeCall struct {
	Method, Path, Secret, Key string
	Form                      url.Values
	Status                    int    // the answer's HTTP status (0: dropped)
	Failed                    string // "500", "drop" or "" (passed to stripe-mock)
	Answer                    map[string]any
}

// fault fails the next n requests of secret matching method and the path pattern.
type fault struct {
	secret, method, pattern, mode string
	n                             int
}

// Failure modes.
const (
	fail500  = "500"
	failDrop = "drop"
)

func newStripeProxy(upstream string) *stripeProxy {
	p := &stripeProxy{upstream: upstream}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = p.srv.URL
	return p
}

func (p *stripeProxy) Close() { p.srv.Close() }

// fail makes the next n requests of account acc to method and pattern (path.Match:
// "/v1/payment_intents/*/capture") fail with mode.
func (p *stripeProxy) fail(acc account, method, pattern string, n int, mode string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, &fault{secret: acc.secret, method: method, pattern: pattern, mode: mode, n: n})
}

// clear ends acc's faults.
func (p *stripeProxy) clear(acc account) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.faults {
		if f.secret == acc.secret {
			f.n = 0
		}
	}
}

// seen is the requests of account acc so far to method and pattern ("": any), in order.
func (p *stripeProxy) seen(acc account, method, pattern string) []stripeCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []stripeCall
	for _, c := range p.calls {
		if c.Secret == acc.secret && (method == "" || c.Method == method) && (pattern == "" || matches(pattern, c.Path)) {
			out = append(out, c)
		}
	}
	return slices.Clone(out)
}

func matches(pattern, p string) bool {
	ok, _ := path.Match(pattern, p)
	return ok
}

func (p *stripeProxy) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	form, _ := url.ParseQuery(string(body))
	c := stripeCall{Method: r.Method, Path: r.URL.Path, Key: r.Header.Get("Idempotency-Key"), Form: form}
	c.Secret, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	p.mu.Lock()
	for _, f := range p.faults {
		if f.n > 0 && f.secret == c.Secret && f.method == c.Method && matches(f.pattern, c.Path) {
			f.n--
			c.Failed = f.mode
			break
		}
	}
	if c.Failed != "" {
		p.calls = append(p.calls, c)
	}
	p.mu.Unlock()
	switch c.Failed {
	case fail500:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Stripe-Should-Retry", "false")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"type":"api_error","message":"injected by the test's proxy"}}`)
		return
	case failDrop:
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
		return
	}

	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.upstream+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if json.Unmarshal(answer, &m) == nil && resp.StatusCode == http.StatusOK && c.Method == http.MethodPost {
		if asStripe(c, m) {
			answer, _ = json.Marshal(m)
		}
	}
	c.Status, c.Answer = resp.StatusCode, m
	p.mu.Lock()
	p.calls = append(p.calls, c)
	p.mu.Unlock()
	for k, v := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

// asStripe makes stripe-mock's answer read as Stripe's would, and says whether it changed
// it: an object made now was created now (stripe-mock answers its fixture's old time, which
// would date a card payment years back in the ledger); a PaymentIntent's manual capture,
// capture and cancel answer their statuses.
func asStripe(c stripeCall, m map[string]any) bool {
	if _, ok := m["created"]; ok && (c.Path == "/v1/payment_intents" || c.Path == "/v1/refunds") {
		m["created"] = time.Now().Unix()
	}
	if m["object"] != "payment_intent" {
		return c.Path == "/v1/refunds"
	}
	switch {
	case c.Path == "/v1/payment_intents" && c.Form.Get("capture_method") == "manual":
		m["capture_method"], m["status"], m["amount_capturable"], m["amount_received"] = "manual", "requires_capture", m["amount"], 0
	case matches("/v1/payment_intents/*/capture", c.Path):
		m["capture_method"], m["status"] = "manual", "succeeded"
		if a := c.Form.Get("amount_to_capture"); a != "" {
			m["amount_received"] = json.Number(a)
		}
		m["amount_capturable"] = 0
	case matches("/v1/payment_intents/*/cancel", c.Path):
		m["status"], m["amount_capturable"] = "canceled", 0
	}
	return true
}
