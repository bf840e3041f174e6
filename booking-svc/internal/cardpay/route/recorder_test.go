package route

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// stripeCall is one request a gateway sent to Stripe.
type stripeCall struct {
	Method, Path   string
	Key            string // the secret key it was made with
	IdempotencyKey string // "" when none was sent
	Form           url.Values
}

// stripeRecorder stands between the gateways and stripe-mock, which echoes an
// Idempotency-Key but keeps no record of it. It checks each request strictly against what
// Stripe's API reference (docs.stripe.com/api) asks, for the endpoints vros calls, before
// passing it on — stripe-mock checks the parameters against Stripe's OpenAPI document, not
// these:
//   - bearer authentication with a secret key (`Authorization: Bearer sk_…`) and a pinned
//     `Stripe-Version`;
//   - POST bodies form-encoded (application/x-www-form-urlencoded), GETs with no body;
//   - an `Idempotency-Key` of 1–255 characters on every POST and on no GET (Stripe: "don't
//     send idempotency keys in GET and DELETE requests");
//   - only the documented paths of the endpoints vros uses, with Stripe-shaped ids.
//
// A request that breaks a rule fails the test and answers 400 as Stripe would.
type stripeRecorder struct {
	URL   string
	t     testing.TB
	mu    sync.Mutex
	calls []stripeCall
}

// stripeEndpoints are the Stripe API endpoints the gateways call.
var stripeEndpoints = []struct {
	method string
	path   *regexp.Regexp
}{
	{http.MethodPost, regexp.MustCompile(`^/v1/payment_methods$`)},
	{http.MethodPost, regexp.MustCompile(`^/v1/payment_intents$`)},
	{http.MethodGet, regexp.MustCompile(`^/v1/payment_intents/pi_[A-Za-z0-9]+$`)},
	{http.MethodPost, regexp.MustCompile(`^/v1/payment_intents/pi_[A-Za-z0-9]+/cancel$`)},
}

// recordStripe starts a recorder in front of the stripe-mock at upstream.
func recordStripe(t testing.TB, upstream string) *stripeRecorder {
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	r := &stripeRecorder{t: t}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		call, problem := r.check(req, body)
		if problem != "" {
			t.Errorf("Stripe request %s %s: %s", req.Method, req.URL.Path, problem)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"type":"invalid_request_error","message":"rejected by the test's recorder"}}`)
			return
		}
		r.mu.Lock()
		r.calls = append(r.calls, call)
		r.mu.Unlock()
		req.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// check returns the call req is, or what it breaks.
func (r *stripeRecorder) check(req *http.Request, body []byte) (stripeCall, string) {
	call := stripeCall{Method: req.Method, Path: req.URL.Path}
	known := false
	for _, e := range stripeEndpoints {
		known = known || (e.method == req.Method && e.path.MatchString(req.URL.Path))
	}
	if !known {
		return call, "not an endpoint of Stripe's that vros calls"
	}
	if req.URL.RawQuery != "" {
		return call, "unexpected query " + req.URL.RawQuery
	}
	key, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok || !(strings.HasPrefix(key, "sk_") || strings.HasPrefix(key, "rk_")) {
		return call, "not authenticated with a secret key (Authorization: Bearer sk_…)"
	}
	call.Key = key
	if req.Header.Get("Stripe-Version") == "" {
		return call, "no Stripe-Version"
	}
	call.IdempotencyKey = req.Header.Get("Idempotency-Key")
	switch req.Method {
	case http.MethodPost:
		if mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
			return call, "body is not application/x-www-form-urlencoded"
		}
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return call, "body: " + err.Error()
		}
		call.Form = form
		if n := len(call.IdempotencyKey); n == 0 || n > maxIdempotencyKey {
			return call, "a POST needs an Idempotency-Key of 1 to 255 characters"
		}
	case http.MethodGet:
		if len(body) > 0 {
			return call, "a GET with a body"
		}
		if _, sent := req.Header["Idempotency-Key"]; sent {
			return call, "a GET with an Idempotency-Key"
		}
	}
	return call, ""
}

// Calls returns the requests recorded so far, and forgets them.
func (r *stripeRecorder) Calls() []stripeCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls := r.calls
	r.calls = nil
	return calls
}

// Only returns the one request recorded since the last look, failing the test otherwise.
func (r *stripeRecorder) Only(t testing.TB) stripeCall {
	t.Helper()
	calls := r.Calls()
	if len(calls) != 1 {
		t.Fatalf("Stripe received %d requests, want 1: %+v", len(calls), calls)
	}
	return calls[0]
}
