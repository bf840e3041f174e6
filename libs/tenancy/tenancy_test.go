package tenancy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	edgeKey        = "edge-key-0123456789abcdef"
	integrationKey = "integration-key-0123456789"
	bookingKey     = "booking-key-0123456789abc"
)

// icalRoutes are booking-svc's routes integration-svc may call.
var icalRoutes = []string{"GET /internal/ical/property", "POST /internal/ical/sync", "GET /internal/hooks/booking/:id"}

// bookingSvc is booking-svc's verifier: edge anywhere, integration-svc on its routes only.
func bookingSvc(t *testing.T, opts ...Option) *Verifier {
	t.Helper()
	v, err := NewVerifier([]Grant{{Caller: CallerEdge, Key: edgeKey}, {Caller: CallerIntegration, Key: integrationKey, Routes: icalRoutes}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// req is a signed request as it travels: its headers, line and body.
type req struct {
	h                   map[string]string
	method, path, query string
	body                []byte
}

func sign(s *Signer, t Tenant, method, target, body string, at time.Time) req {
	r := req{h: map[string]string{}, method: method, body: []byte(body)}
	r.path, r.query, _ = strings.Cut(target, "?")
	s.SetHeaders(func(k, v string) { r.h[k] = v }, t, method, target, []byte(body), at)
	return r
}

func (r req) verify(v *Verifier) (string, Tenant, error) {
	return v.Verify(func(k string) string { return r.h[k] }, r.method, r.path, r.query, r.body)
}

// TestVerify: every part of a request that decides what it does is signed; a request that
// differs from the signed one in any of them is refused, with the refusal naming why.
func TestVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	edge := NewSigner(CallerEdge, edgeKey)
	tenant := Tenant{AccountID: "acc1"}
	const target, body = "/internal/read/getcalendar?property_id=42&from=2026-01-01", `{"propertyId":42}`
	cases := []struct {
		name string
		edit func(r *req)
		at   time.Time
		want error
	}{
		{"as signed", func(*req) {}, now, nil},
		{"within skew", func(*req) {}, now.Add(MaxSkew), nil},
		{"signed in the future within skew", func(*req) {}, now.Add(-MaxSkew), nil},
		{"too old", func(*req) {}, now.Add(MaxSkew + time.Second), ErrExpired},
		{"from the future", func(*req) {}, now.Add(-MaxSkew - time.Second), ErrExpired},
		{"another body", func(r *req) { r.body = []byte(`{"propertyId":43}`) }, now, ErrSignature},
		{"no body", func(r *req) { r.body = nil }, now, ErrSignature},
		{"another query", func(r *req) { r.query = "property_id=43&from=2026-01-01" }, now, ErrSignature},
		{"query reordered", func(r *req) { r.query = "from=2026-01-01&property_id=42" }, now, ErrSignature},
		{"query dropped", func(r *req) { r.query = "" }, now, ErrSignature},
		{"another path", func(r *req) { r.path = "/internal/read/getreservations" }, now, ErrSignature},
		{"another method", func(r *req) { r.method = "POST" }, now, ErrSignature},
		{"another account", func(r *req) { r.h[HeaderAccount] = "acc2" }, now, ErrSignature},
		{"another nonce", func(r *req) { r.h[HeaderNonce] = strings.Repeat("ab", 16) }, now, ErrSignature},
		{"another time", func(r *req) { r.h[HeaderTime] = "1800000001" }, now, ErrSignature},
		{"sandbox added", func(r *req) { r.h[HeaderMode] = modeSandbox }, now, ErrSignature},
		{"limit added", func(r *req) { r.h[HeaderMaxProperties] = "5" }, now, ErrSignature},
		{"another caller's name", func(r *req) { r.h[HeaderCaller] = CallerIntegration }, now, ErrSignature},
		{"unknown caller", func(r *req) { r.h[HeaderCaller] = "catalog-svc" }, now, ErrCaller},
		{"no caller", func(r *req) { delete(r.h, HeaderCaller) }, now, ErrUnsigned},
		{"no signature", func(r *req) { delete(r.h, HeaderSignature) }, now, ErrUnsigned},
		{"no nonce", func(r *req) { delete(r.h, HeaderNonce) }, now, ErrUnsigned},
		{"short nonce", func(r *req) { r.h[HeaderNonce] = r.h[HeaderNonce][:30] }, now, ErrUnsigned},
		{"upper-case nonce", func(r *req) { r.h[HeaderNonce] = strings.ToUpper(r.h[HeaderNonce]) }, now, ErrUnsigned},
		{"no account", func(r *req) { delete(r.h, HeaderAccount) }, now, ErrUnsigned},
		{"time not a number", func(r *req) { r.h[HeaderTime] = "soon" }, now, ErrUnsigned},
		{"time with a sign", func(r *req) { r.h[HeaderTime] = "+" + r.h[HeaderTime] }, now, ErrUnsigned},
		{"signature not hex", func(r *req) { r.h[HeaderSignature] = "zz" }, now, ErrUnsigned},
		{"unknown mode", func(r *req) { r.h[HeaderMode] = "live" }, now, ErrUnsigned},
		{"signed with integration-svc's key", func(r *req) {
			*r = sign(NewSigner(CallerEdge, integrationKey), tenant, "GET", target, body, now)
		}, now, ErrSignature},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := bookingSvc(t, WithClock(func() time.Time { return c.at }))
			r := sign(edge, tenant, "GET", target, body, now)
			c.edit(&r)
			caller, got, err := r.verify(v)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("Verify: %v, want %v", err, c.want)
			}
			if err == nil && (caller != CallerEdge || got != tenant) {
				t.Errorf("Verify: caller %q, tenant %+v", caller, got)
			}
		})
	}
}

// TestTenantIsSigned: the mode and the plan's limit travel only under the signature: they
// cannot be added, dropped or changed on the way.
func TestTenantIsSigned(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	edge := NewSigner(CallerEdge, edgeKey)
	for _, signed := range []Tenant{{AccountID: "acc1"}, {AccountID: "acc1", Sandbox: true}, {AccountID: "acc1", MaxProperties: 5}} {
		for _, claimed := range []Tenant{{AccountID: "acc1"}, {AccountID: "acc1", Sandbox: true}, {AccountID: "acc1", MaxProperties: 5}, {AccountID: "acc1", MaxProperties: 6}} {
			v := bookingSvc(t, WithClock(func() time.Time { return now }))
			r := sign(edge, signed, "POST", "/internal/a/property", "{}", now)
			delete(r.h, HeaderMode)
			delete(r.h, HeaderMaxProperties)
			if claimed.Sandbox {
				r.h[HeaderMode] = modeSandbox
			}
			if claimed.MaxProperties > 0 {
				r.h[HeaderMaxProperties] = fmt.Sprint(claimed.MaxProperties)
			}
			_, got, err := r.verify(v)
			if (err == nil) != (claimed == signed) || (err == nil && got != signed) {
				t.Errorf("signed %+v, presented %+v: %+v, %v", signed, claimed, got, err)
			}
		}
	}
}

// TestCallerRoutes: each caller's key holds only on the routes granted to it. integration-svc
// signs its own routes of booking-svc; signing as edge with its key, or as itself on an
// edge route, is refused, and property-svc, which grants it nothing, refuses it entirely.
func TestCallerRoutes(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := WithClock(func() time.Time { return now })
	property, err := NewVerifier([]Grant{{Caller: CallerEdge, Key: edgeKey}, {Caller: CallerBooking, Key: bookingKey, Routes: []string{"POST /internal/b/getpayment"}}}, clock)
	if err != nil {
		t.Fatal(err)
	}
	integration := NewSigner(CallerIntegration, integrationKey)
	booking := NewSigner(CallerBooking, bookingKey)
	cases := []struct {
		name           string
		v              *Verifier
		s              *Signer
		method, target string
		want           error
	}{
		{"integration-svc syncs a feed", bookingSvc(t, clock), integration, "POST", "/internal/ical/sync", nil},
		{"integration-svc resolves a code", bookingSvc(t, clock), integration, "GET", "/internal/ical/property?internal_code=A1", nil},
		{"integration-svc reads a booking for a hook", bookingSvc(t, clock), integration, "GET", "/internal/hooks/booking/9", nil},
		{"integration-svc creates a booking", bookingSvc(t, clock), integration, "POST", "/internal/b/createbooking", ErrRoute},
		{"integration-svc on an edge route of iCal", bookingSvc(t, clock), integration, "GET", "/internal/ical/export.ics", ErrRoute},
		{"integration-svc syncs with GET", bookingSvc(t, clock), integration, "GET", "/internal/ical/sync", ErrRoute},
		{"integration-svc: a trailing slash", bookingSvc(t, clock), integration, "POST", "/internal/ical/sync/", ErrRoute},
		{"integration-svc: an empty id", bookingSvc(t, clock), integration, "GET", "/internal/hooks/booking/", ErrRoute},
		{"integration-svc: below a booking", bookingSvc(t, clock), integration, "GET", "/internal/hooks/booking/9/payments", ErrRoute},
		{"integration-svc speaks as edge", bookingSvc(t, clock), NewSigner(CallerEdge, integrationKey), "POST", "/internal/b/createbooking", ErrSignature},
		{"edge anywhere on booking-svc", bookingSvc(t, clock), NewSigner(CallerEdge, edgeKey), "POST", "/internal/b/createbooking", nil},
		{"edge on the sync route", bookingSvc(t, clock), NewSigner(CallerEdge, edgeKey), "POST", "/internal/ical/sync", nil},
		{"booking-svc on booking-svc", bookingSvc(t, clock), booking, "POST", "/internal/ical/sync", ErrCaller},
		{"integration-svc on property-svc", property, integration, "POST", "/internal/b/getpayment", ErrCaller},
		{"integration-svc as edge on property-svc", property, NewSigner(CallerEdge, integrationKey), "POST", "/internal/a/property", ErrSignature},
		{"booking-svc reads payment methods", property, booking, "POST", "/internal/b/getpayment", nil},
		{"booking-svc writes a property", property, booking, "POST", "/internal/a/property", ErrRoute},
		{"booking-svc as edge", property, NewSigner(CallerEdge, bookingKey), "POST", "/internal/a/property", ErrSignature},
	}
	for _, c := range cases {
		r := sign(c.s, Tenant{AccountID: "acc1"}, c.method, c.target, `{"propertyId":1}`, now)
		caller, _, err := r.verify(c.v)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		} else if err == nil && caller != c.s.Caller() {
			t.Errorf("%s: caller %q, want %q", c.name, caller, c.s.Caller())
		}
	}
}

// TestNewVerifier: a grant the verifier could not enforce is an error at start-up.
func TestNewVerifier(t *testing.T) {
	for name, grants := range map[string][]Grant{
		"short key":      {{Caller: CallerEdge, Key: "short"}},
		"no caller":      {{Key: edgeKey}},
		"granted twice":  {{Caller: CallerEdge, Key: edgeKey}, {Caller: CallerEdge, Key: integrationKey}},
		"route, no path": {{Caller: CallerIntegration, Key: integrationKey, Routes: []string{"POST"}}},
		"relative route": {{Caller: CallerIntegration, Key: integrationKey, Routes: []string{"POST internal/ical/sync"}}},
	} {
		if _, err := NewVerifier(grants); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestReplay: a request is accepted once. The same nonce again is refused, whatever else the
// request carries and however often it is tried, until its signature has expired; the
// same nonce of another caller is another nonce; a refused request does not use its nonce
// up.
func TestReplay(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	at := now
	v := bookingSvc(t, WithClock(func() time.Time { return at }))
	edge := NewSigner(CallerEdge, edgeKey)
	integration := NewSigner(CallerIntegration, integrationKey)
	r := sign(edge, Tenant{AccountID: "acc1"}, "POST", "/internal/ical/sync", `{"feed_id":1}`, now)
	steps := []struct {
		name  string
		r     req
		after time.Duration
		want  error
	}{
		{"first", r, 0, nil},
		{"again", r, 0, ErrReplay},
		{"again halfway through the window", r, MaxSkew / 2, ErrReplay},
		{"again at the end of the window", r, MaxSkew, ErrReplay},
		{"after the window", r, MaxSkew + time.Second, ErrExpired},
	}
	for _, s := range steps {
		at = now.Add(s.after)
		if _, _, err := s.r.verify(v); !errors.Is(err, s.want) || (s.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", s.name, err, s.want)
		}
	}

	// The same nonce under another caller's signature.
	at = now
	v = bookingSvc(t, WithClock(func() time.Time { return at }))
	a := sign(edge, Tenant{AccountID: "acc1"}, "POST", "/internal/ical/sync", `{}`, now)
	b := sign(integration, Tenant{AccountID: "acc1"}, "POST", "/internal/ical/sync", `{}`, now)
	b.h[HeaderNonce] = a.h[HeaderNonce]
	b.h[HeaderSignature] = resign(integrationKey, b)
	for _, r := range []req{a, b} {
		if _, _, err := r.verify(v); err != nil {
			t.Errorf("%s with a nonce %s used: %v", r.h[HeaderCaller], a.h[HeaderCaller], err)
		}
	}

	// A refused request (another body) leaves the nonce to the genuine one.
	v = bookingSvc(t, WithClock(func() time.Time { return at }))
	forged := a
	forged.body = []byte(`{"feed_id":2}`)
	if _, _, err := forged.verify(v); !errors.Is(err, ErrSignature) {
		t.Errorf("another body: %v", err)
	}
	if _, _, err := a.verify(v); err != nil {
		t.Errorf("the genuine request after a forged one: %v", err)
	}
}

// resign is the signature of r under key, for a test that sets a header the Signer draws.
func resign(key string, r req) string {
	var t Tenant
	t.AccountID = r.h[HeaderAccount]
	t.Sandbox = r.h[HeaderMode] == modeSandbox
	fmt.Sscan(r.h[HeaderMaxProperties], &t.MaxProperties)
	sum := sha256.Sum256(r.body)
	return hex.EncodeToString(mac([]byte(key), r.h[HeaderCaller], t, r.h[HeaderTime], r.h[HeaderNonce], r.method, r.path, r.query, sum[:]))
}

// TestReplayCacheBounded: the cache never holds more than its capacity. When full of
// unexpired nonces it refuses (ErrBusy) rather than forget one, a replay is still a replay,
// and once signatures expire their nonces make room.
func TestReplayCacheBounded(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	at := now
	// Each signature is sent a third of the window after the one before (a third is one of
	// the cache's 10 s buckets, by which expired nonces are dropped).
	step := MaxSkew / 3
	v := bookingSvc(t, WithClock(func() time.Time { return at }), WithReplayCapacity(3))
	edge := NewSigner(CallerEdge, edgeKey)
	var rs []req
	for i := range 5 {
		rs = append(rs, sign(edge, Tenant{AccountID: "acc1"}, "GET", "/internal/read/x", "", now.Add(time.Duration(i)*step)))
	}
	steps := []struct {
		name  string
		r     req
		after time.Duration
		want  error
		held  int
	}{
		{"first", rs[0], 0, nil, 1},
		{"second", rs[1], step, nil, 2},
		{"third", rs[2], 2 * step, nil, 3},
		{"fourth, full", rs[3], 3 * step, ErrBusy, 3},
		{"a replay when full", rs[2], 3 * step, ErrReplay, 3},
		// The first signature (sent at now) has expired: its nonce makes room.
		{"fourth, after the first expired", rs[3], MaxSkew + step, nil, 3},
		{"fifth, full again", rs[4], MaxSkew + step, ErrBusy, 3},
		{"fifth, after the second expired", rs[4], MaxSkew + 2*step, nil, 3},
		{"all expired but two", rs[4], MaxSkew + 3*step, ErrReplay, 2},
	}
	for _, s := range steps {
		at = now.Add(s.after)
		_, _, err := s.r.verify(v)
		if !errors.Is(err, s.want) || (s.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", s.name, err, s.want)
		}
		if n := v.seen.len(); n != s.held {
			t.Errorf("%s: the cache holds %d nonces, want %d", s.name, n, s.held)
		}
	}
}

// TestConcurrentVerify: many goroutines verify at once (run with -race): every distinct
// request is accepted exactly once, and of many copies of one request sent at once exactly
// one gets through.
func TestConcurrentVerify(t *testing.T) {
	v := bookingSvc(t)
	edge := NewSigner(CallerEdge, edgeKey)
	integration := NewSigner(CallerIntegration, integrationKey)
	const workers, each = 16, 200
	var accepted, replays atomic.Int64
	shared := sign(integration, Tenant{AccountID: "acc0"}, "POST", "/internal/ical/sync", `{}`, time.Now())
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range each {
				s := edge
				if i%2 == 1 {
					s = integration
				}
				r := sign(s, Tenant{AccountID: fmt.Sprintf("acc%d", w)}, "POST", "/internal/ical/sync", fmt.Sprintf(`{"i":%d}`, i), time.Now())
				if _, _, err := r.verify(v); err != nil {
					t.Errorf("worker %d request %d: %v", w, i, err)
				}
				switch _, _, err := shared.verify(v); {
				case err == nil:
					accepted.Add(1)
				case errors.Is(err, ErrReplay):
					replays.Add(1)
				default:
					t.Errorf("the shared request: %v", err)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	if accepted.Load() != 1 || replays.Load() != workers*each-1 {
		t.Errorf("the shared request was accepted %d times and refused as a replay %d times", accepted.Load(), replays.Load())
	}
	if n := v.seen.len(); n != workers*each+1 {
		t.Errorf("the cache holds %d nonces, want %d", n, workers*each+1)
	}
}

// TestSignatureIsStable: the signed string is a wire format. k8s/e2e reimplements it
// (edgeSignature: that module does not depend on libs) and signs the same request to the same
// value; a change here must change both and deploy every process at once.
func TestSignatureIsStable(t *testing.T) {
	sum := sha256.Sum256([]byte(`{"action":"getinfo"}`))
	got := hex.EncodeToString(mac([]byte("golden-key-0123456789"), CallerEdge, Tenant{AccountID: "acc1"}, "1800000000",
		"6848dec0d11952d5668bb588a4b6a216", "POST", "/internal/b/getinfo", "", sum[:]))
	if want := "2e7c1a0dcaddccab2f067e9a5fb62a5a3f92ec19831962bf9ab5ac802a3c8f68"; got != want {
		t.Errorf("signature %s, want %s", got, want)
	}
}
