// Package tenancy carries the caller's account from one vros process to a service in
// headers the calling process signs with a key of its own (docs/internal-auth.md). Each
// service's Verifier holds only the keys of the callers allowed to call it, and for each
// the routes it may reach; a call without a valid signature, a replayed one, or one from a
// caller outside its routes never reaches a handler.
//
// This package is the scheme alone (Tenant, Signer, Verifier and its replay cache) and
// imports no HTTP framework, so that a domain may name a Tenant; the Fiber middleware that
// runs a Verifier before a service's handlers, and From, are in tenancyfiber.
package tenancy

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"time"
)

// Header names of the signed tenant context.
const (
	// HeaderCaller names the process that signed the request (CallerEdge, ...): the key the
	// verifier checks the signature with, and the routes it accepts it on.
	HeaderCaller    = "X-Vros-Caller"
	HeaderAccount   = "X-Vros-Account"
	HeaderTime      = "X-Vros-Time"
	HeaderNonce     = "X-Vros-Nonce"
	HeaderSignature = "X-Vros-Signature"
	// HeaderMode is "sandbox" for a sandbox account (docs/accounts.md), absent for a live
	// one. The signature covers it, so it cannot be added or dropped on the way.
	HeaderMode = "X-Vros-Mode"
	// HeaderMaxProperties is the account plan's most properties, absent when the plan sets
	// none. The signature covers it.
	HeaderMaxProperties = "X-Vros-Max-Properties"
)

// The callers of the services, each with its own key.
const (
	// CallerEdge forwards every client request and edge's admin calls.
	CallerEdge = "edge"
	// CallerIntegration is integration-svc, calling booking-svc's iCal and webhook routes.
	CallerIntegration = "integration-svc"
	// CallerBooking is booking-svc, reading payment methods from property-svc.
	CallerBooking = "booking-svc"
	// CallerMessaging is messaging-svc, reading a booking from booking-svc when it composes
	// a message (docs/messaging.md).
	CallerMessaging = "messaging-svc"
)

// modeSandbox is HeaderMode's value for a sandbox account.
const modeSandbox = "sandbox"

// MaxSkew is how old (or how far in the future) a signature may be. The callers and the
// services run in one cluster, whose clocks agree to the millisecond, and a signature is made
// as a request is sent; the window is short so that the replay cache, which keeps each nonce
// this long, holds a busy replica's requests (DefaultReplayCapacity).
const MaxSkew = 30 * time.Second

// MinKeyLength is the shortest key a Signer or Verifier accepts.
const MinKeyLength = 16

// nonceBytes is a nonce's length: 128 random bits.
const nonceBytes = 16

// scheme starts every signed string: a signature of another scheme or version never holds.
const scheme = "vros-internal-2"

// Tenant is the authenticated account of a request.
type Tenant struct {
	AccountID string
	// Sandbox accounts try vros out: their card payments only ever reach the test gateway.
	Sandbox bool
	// MaxProperties is the most properties the account's plan allows; 0 is no limit.
	MaxProperties int
}

// Signer signs requests as one caller with that caller's key.
type Signer struct {
	caller string
	key    []byte
}

// NewSigner returns a Signer of caller (CallerEdge, ...) with its key.
func NewSigner(caller, key string) *Signer { return &Signer{caller: caller, key: []byte(key)} }

// Caller is the caller the Signer signs as.
func (s *Signer) Caller() string { return s.caller }

// SetHeaders sets, through set (net/http's Header.Set, fasthttp's RequestHeader.Set), every
// header of the signed tenant context of a request on behalf of t: method, target (the
// path, with the raw query after a '?' exactly as it is sent) and body (the exact bytes
// sent; nil for none). Each call draws a fresh nonce, so that every request is signed
// once: a retry must call SetHeaders again.
func (s *Signer) SetHeaders(set func(key, value string), t Tenant, method, target string, body []byte, now time.Time) {
	path, query, _ := strings.Cut(target, "?")
	ts := strconv.FormatInt(now.Unix(), 10)
	var n [nonceBytes]byte
	rand.Read(n[:]) // never fails (crypto/rand panics rather than return an error)
	nonce := hex.EncodeToString(n[:])
	sum := sha256.Sum256(body)
	set(HeaderCaller, s.caller)
	set(HeaderAccount, t.AccountID)
	set(HeaderTime, ts)
	set(HeaderNonce, nonce)
	set(HeaderSignature, hex.EncodeToString(mac(s.key, s.caller, t, ts, nonce, method, path, query, sum[:])))
	if t.Sandbox {
		set(HeaderMode, modeSandbox)
	}
	if t.MaxProperties > 0 {
		set(HeaderMaxProperties, strconv.Itoa(t.MaxProperties))
	}
}

// mac signs every part of a request that decides what it does: the caller, the tenant, the
// time and nonce, the request line with its raw query, and the SHA-256 of the body. Fields
// are separated by newlines, which none of them can hold (header values and request lines
// cannot), so that no two requests sign the same string.
func mac(key []byte, caller string, t Tenant, ts, nonce, method, path, query string, bodySum []byte) []byte {
	m := hmac.New(sha256.New, key)
	line := func(h hash.Hash, s string) {
		h.Write([]byte(s))
		h.Write([]byte{'\n'})
	}
	line(m, scheme)
	line(m, caller)
	line(m, t.AccountID)
	if t.Sandbox {
		line(m, modeSandbox)
	} else {
		line(m, "")
	}
	line(m, strconv.Itoa(t.MaxProperties))
	line(m, ts)
	line(m, nonce)
	line(m, method)
	line(m, path)
	line(m, query)
	line(m, hex.EncodeToString(bodySum))
	return m.Sum(nil)
}

// Grant lets one caller call a service: its key, and the routes it may reach.
type Grant struct {
	Caller string
	Key    string
	// Routes are "METHOD /path" patterns, a path segment ":name" matching any one
	// non-empty segment; none means every route of the service (edge, which forwards
	// every client request).
	Routes []string
}

// Refusals of Verify: each a 401 but for ErrBusy, a 503.
var (
	// ErrUnsigned: a header of the signed context is missing or malformed.
	ErrUnsigned = errors.New("missing or malformed internal signature")
	// ErrCaller: the caller is not one this service accepts.
	ErrCaller = errors.New("unknown caller")
	// ErrExpired: the signature's time is more than MaxSkew from the verifier's clock.
	ErrExpired = errors.New("internal signature expired")
	// ErrSignature: the signature does not match the request (another key, another body,
	// query, path, method, account...).
	ErrSignature = errors.New("invalid internal signature")
	// ErrRoute: the caller signed correctly but may not call this route.
	ErrRoute = errors.New("caller may not call this route")
	// ErrReplay: the caller's nonce was seen within MaxSkew.
	ErrReplay = errors.New("internal request replayed")
	// ErrBusy: the replay cache is full of unexpired nonces; the request is refused rather
	// than let through unchecked.
	ErrBusy = errors.New("too many internal requests to check for replays; retry later")
)

// Verifier checks the signed tenant context of the requests a service receives.
type Verifier struct {
	callers map[string]grant
	seen    *replayCache
	now     func() time.Time
}

type grant struct {
	id     uint8  // the caller's number in the replay cache
	name   string // the caller, the Verifier's own copy
	key    []byte
	routes []route // nil: every route
}

type route struct {
	method   string
	segments []string
}

// Option configures a Verifier.
type Option func(*Verifier)

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) Option { return func(v *Verifier) { v.now = now } }

// WithReplayCapacity sets how many nonces the replay cache holds at most (DefaultReplayCapacity).
func WithReplayCapacity(n int) Option {
	return func(v *Verifier) { v.seen = newReplayCache(n) }
}

// NewVerifier returns a Verifier accepting the grants' callers, each on its routes. A key
// shorter than MinKeyLength, a caller granted twice or a malformed route is an error.
func NewVerifier(grants []Grant, opts ...Option) (*Verifier, error) {
	v := &Verifier{callers: map[string]grant{}, seen: newReplayCache(DefaultReplayCapacity), now: time.Now}
	for _, g := range grants {
		if g.Caller == "" {
			return nil, errors.New("tenancy: a grant without a caller")
		}
		if _, dup := v.callers[g.Caller]; dup {
			return nil, fmt.Errorf("tenancy: caller %s granted twice", g.Caller)
		}
		if len(g.Key) < MinKeyLength {
			return nil, fmt.Errorf("tenancy: the key of %s must be at least %d characters", g.Caller, MinKeyLength)
		}
		if len(v.callers) == 255 {
			return nil, errors.New("tenancy: more than 255 callers")
		}
		gr := grant{id: uint8(len(v.callers)), name: strings.Clone(g.Caller), key: []byte(g.Key)}
		for _, r := range g.Routes {
			method, path, ok := strings.Cut(r, " ")
			if !ok || method == "" || !strings.HasPrefix(path, "/") {
				return nil, fmt.Errorf("tenancy: route %q of %s is not \"METHOD /path\"", r, g.Caller)
			}
			gr.routes = append(gr.routes, route{method: method, segments: strings.Split(path, "/")})
		}
		v.callers[g.Caller] = gr
	}
	for _, o := range opts {
		o(v)
	}
	return v, nil
}

// MustVerifier is NewVerifier of grants with the default options, for fixed grants (tests):
// it panics on an error.
func MustVerifier(grants ...Grant) *Verifier {
	v, err := NewVerifier(grants)
	if err != nil {
		panic(err)
	}
	return v
}

// allows reports whether a caller with these routes may call method path.
func (g grant) allows(method, path string) bool {
	if g.routes == nil {
		return true
	}
	segs := strings.Split(path, "/")
	for _, r := range g.routes {
		if r.method == method && matches(r.segments, segs) {
			return true
		}
	}
	return false
}

func matches(pattern, segs []string) bool {
	if len(pattern) != len(segs) {
		return false
	}
	for i, p := range pattern {
		if strings.HasPrefix(p, ":") {
			if segs[i] == "" {
				return false
			}
		} else if p != segs[i] {
			return false
		}
	}
	return true
}

// Verify checks the signed tenant context of a request: its headers through header, its
// method, path, raw query and body as the service received them. It returns the caller and
// the tenant, or one of the Err refusals. Only a request that passes every other check
// uses up its nonce. body is read within the call only.
func (v *Verifier) Verify(header func(string) string, method, path, rawQuery string, body []byte) (string, Tenant, error) {
	caller := header(HeaderCaller)
	g, ok := v.callers[caller]
	if !ok {
		if caller == "" {
			return "", Tenant{}, ErrUnsigned
		}
		return "", Tenant{}, ErrCaller
	}
	t := Tenant{AccountID: header(HeaderAccount)}
	switch header(HeaderMode) {
	case "":
	case modeSandbox:
		t.Sandbox = true
	default:
		return "", Tenant{}, ErrUnsigned
	}
	if m := header(HeaderMaxProperties); m != "" {
		n, err := strconv.Atoi(m)
		if err != nil || n <= 0 || strconv.Itoa(n) != m {
			return "", Tenant{}, ErrUnsigned
		}
		t.MaxProperties = n
	}
	ts, nonce, sig := header(HeaderTime), header(HeaderNonce), header(HeaderSignature)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if t.AccountID == "" || err != nil || strconv.FormatInt(sec, 10) != ts || len(nonce) != 2*nonceBytes || sig == "" {
		return "", Tenant{}, ErrUnsigned
	}
	var n [nonceBytes]byte
	if _, err := hex.Decode(n[:], []byte(nonce)); err != nil || hex.EncodeToString(n[:]) != nonce {
		return "", Tenant{}, ErrUnsigned
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return "", Tenant{}, ErrUnsigned
	}
	now := v.now()
	at := time.Unix(sec, 0)
	if d := now.Sub(at); d > MaxSkew || d < -MaxSkew {
		return "", Tenant{}, ErrExpired
	}
	sum := sha256.Sum256(body)
	if !hmac.Equal(got, mac(g.key, caller, t, ts, nonce, method, path, rawQuery, sum[:])) {
		return "", Tenant{}, ErrSignature
	}
	if !g.allows(method, path) {
		return "", Tenant{}, ErrRoute
	}
	if err := v.seen.add(g.id, n, at.Add(MaxSkew), now); err != nil {
		return "", Tenant{}, err
	}
	return g.name, t, nil
}
