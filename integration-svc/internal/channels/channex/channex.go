// Package channex is the channel.Adapter of Channex's PMS API (docs.channex.io; the limits
// and shapes vros relies on are in docs/channels.md, "Channex"): ARI pushed as
// POST /api/v1/availability and POST /api/v1/restrictions, reservations read from the
// booking revisions feed and acknowledged one by one, Channex's booking webhook taken as a
// hint to read the feed.
//
// The adapter keeps Channex's documented per-property rate limits itself (10 availability
// and 10 restrictions-and-price requests a minute), in this process, per remote property
// and kind, and pauses a property's kind after a 429 (for its Retry-After, else a minute,
// as Channex's rate-limit page advises).
package channex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
)

// Channex's documented limits (docs.channex.io api-v.1-documentation/rate-limits and
// guides/best-practices-guide).
const (
	// RequestsPerMinute is the number of availability requests, and apart of restrictions
	// and price requests, a property may make per minute.
	RequestsPerMinute = 10
	// MaxMessage is the size a request must stay under ("less than 10mb").
	MaxMessage = 10_000_000
	// feedPage is the page size the feed is read with.
	feedPage = 100
	// maxAnswer bounds the answers read (a feed page of 100 revisions is far smaller).
	maxAnswer = 32 << 20
)

// Options configure an Adapter; zero fields take the defaults.
type Options struct {
	// HTTP is the client requests go through (integration-svc passes its egress-guarded
	// client); default one with Timeout.
	HTTP *http.Client
	// Client, when set, picks the client of a connection's requests (integration-svc: the
	// egress-guarded one, or the one admitting private addresses when an operator allowed
	// the account them); HTTP otherwise.
	Client func(ctx context.Context, c channel.Connection) (*http.Client, error)
	// Timeout bounds one request when HTTP is nil (default 30s).
	Timeout time.Duration
	// MaxBody is the largest request body sent (default 9 MB, under Channex's 10 MB).
	MaxBody int
	// MaxValues, when > 0, bounds the change objects of one request (Channex sets none).
	MaxValues int
	// PerWindow and Window are the rate limits kept (default RequestsPerMinute a minute).
	PerWindow int
	Window    time.Duration
	// Now and Sleep are the clock of the rate limits (tests inject them).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Adapter is Channex's channel.Adapter and channel.Receiver.
type Adapter struct {
	http      *http.Client
	client    func(ctx context.Context, c channel.Connection) (*http.Client, error)
	maxBody   int
	maxValues int
	now       func() time.Time
	sleep     func(ctx context.Context, d time.Duration) error
	limits    *limiter
}

var (
	_ channel.Adapter  = (*Adapter)(nil)
	_ channel.Receiver = (*Adapter)(nil)
)

// New returns an Adapter.
func New(o Options) *Adapter {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: o.Timeout}
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 9_000_000
	}
	if o.PerWindow <= 0 {
		o.PerWindow = RequestsPerMinute
	}
	if o.Window <= 0 {
		o.Window = time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	return &Adapter{http: o.HTTP, client: o.Client, maxBody: o.MaxBody, maxValues: o.MaxValues, now: o.Now, sleep: o.Sleep,
		limits: &limiter{per: o.PerWindow, window: o.Window, slots: map[string][]*time.Time{}, paused: map[string]time.Time{}}}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Name is channel.Channex.
func (a *Adapter) Name() string { return channel.Channex }

// Test reads the first of the key's properties: one cheap authenticated request.
func (a *Adapter) Test(ctx context.Context, c channel.Connection, record func(channel.Exchange)) error {
	_, _, err := a.do(ctx, c, request{kind: channel.KindTest, method: http.MethodGet,
		path: "/api/v1/properties?pagination[page]=1&pagination[limit]=1"}, record)
	return err
}

// request is one call to Channex.
type request struct {
	kind, method, path string
	body               []byte
	from, to           channel.Date
}

// base is the connection's endpoint without a trailing slash or /api/v1 (both forms of
// Channex's base URL are accepted: https://secure.channex.io and …/api/v1).
func base(endpoint string) string {
	e := strings.TrimRight(endpoint, "/")
	return strings.TrimSuffix(e, "/api/v1")
}

// do makes one request, records it, and maps the answer: 2xx → nil; 429, 5xx, a timeout or
// a broken connection → a retryable *channel.RemoteError; any other status → a final one
// with Channex's error message. A cancelled ctx is returned as is.
func (a *Adapter) do(ctx context.Context, c channel.Connection, r request, record func(channel.Exchange)) (int, []byte, error) {
	start := a.now()
	ex := channel.Exchange{Kind: r.kind, Request: Mask(r.body), From: r.from, To: r.to}
	finish := func(status int, body []byte, err error) (int, []byte, error) {
		ex.HTTPStatus, ex.Response, ex.Err = status, Mask(body), err
		ex.Duration = a.now().Sub(start)
		if record != nil {
			record(ex)
		}
		return status, body, err
	}
	var rd io.Reader
	if r.body != nil {
		rd = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, base(c.Endpoint)+r.path, rd)
	if err != nil {
		return finish(0, nil, &channel.RemoteError{Message: "bad endpoint: " + err.Error()})
	}
	req.Header.Set("user-api-key", c.APIKey)
	req.Header.Set("Accept", "application/json")
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := a.http
	if a.client != nil {
		if hc, err = a.client(ctx, c); err != nil {
			return finish(0, nil, &channel.RemoteError{Retryable: true, Message: "no client for the connection: " + err.Error()})
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return finish(0, nil, ctx.Err())
		}
		return finish(0, nil, &channel.RemoteError{Retryable: true, Message: unreachable(err)})
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		if ctx.Err() != nil {
			return finish(resp.StatusCode, body, ctx.Err())
		}
		return finish(resp.StatusCode, body, &channel.RemoteError{Status: resp.StatusCode, Retryable: true,
			Message: "reading the answer: " + err.Error()})
	}
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return finish(resp.StatusCode, body, nil)
	}
	rerr := &channel.RemoteError{Status: resp.StatusCode, Message: errorMessage(body)}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		rerr.Retryable, rerr.RetryAfter = true, retryAfter(resp.Header.Get("Retry-After"), a.now())
	case resp.StatusCode >= 500:
		rerr.Retryable, rerr.RetryAfter = true, retryAfter(resp.Header.Get("Retry-After"), a.now())
	}
	return finish(resp.StatusCode, body, rerr)
}

func unreachable(err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "no answer in time: " + err.Error()
	}
	return "not reached: " + err.Error()
}

// errorMessage reads Channex's error body {"errors":{"code","title","details"}}; any other
// body is quoted (cut).
func errorMessage(body []byte) string {
	var e struct {
		Errors struct {
			Code    string          `json:"code"`
			Title   string          `json:"title"`
			Details json.RawMessage `json:"details"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &e) == nil && (e.Errors.Title != "" || e.Errors.Code != "") {
		msg := e.Errors.Title
		if msg == "" {
			msg = e.Errors.Code
		}
		if len(e.Errors.Details) > 0 && string(e.Errors.Details) != "null" {
			msg += ": " + string(e.Errors.Details)
		}
		return cut(msg, 1000)
	}
	return cut(strings.TrimSpace(string(body)), 300)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// retryAfter reads a Retry-After header: seconds or an HTTP date (0: none or unreadable).
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if n, err := strconv.Atoi(h); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// limiter keeps the rate limits per (endpoint, remote property, kind): at most per requests
// in any window, each counted from the moment its answer arrived (later than Channex
// received it, so the fake's and Channex's windows see no more than ours), and a pause
// after a 429.
type limiter struct {
	mu     sync.Mutex
	per    int
	window time.Duration
	slots  map[string][]*time.Time
	paused map[string]time.Time
}

// acquire waits until key may make a request and takes a slot; done(at) sets the slot's
// time once the answer is in.
func (l *limiter) acquire(ctx context.Context, key string, now func() time.Time,
	sleep func(context.Context, time.Duration) error) (done func(at time.Time), err error) {
	for {
		l.mu.Lock()
		t := now()
		slots := l.slots[key][:0:0]
		for _, s := range l.slots[key] {
			if t.Sub(*s) < l.window {
				slots = append(slots, s)
			}
		}
		l.slots[key] = slots
		var until time.Time
		if p := l.paused[key]; p.After(t) {
			until = p
		}
		if len(slots) >= l.per {
			oldest := *slots[len(slots)-l.per]
			if u := oldest.Add(l.window); u.After(until) {
				until = u
			}
		}
		if until.IsZero() || !until.After(t) {
			slot := new(time.Time)
			// Until the answer is in, the slot counts from far ahead: a request under way
			// is never forgotten by the window.
			*slot = t.Add(100 * 365 * 24 * time.Hour)
			l.slots[key] = append(l.slots[key], slot)
			l.mu.Unlock()
			return func(at time.Time) {
				l.mu.Lock()
				*slot = at
				l.mu.Unlock()
			}, nil
		}
		l.mu.Unlock()
		if err := sleep(ctx, until.Sub(t)); err != nil {
			return nil, err
		}
	}
}

// pause holds key's requests until at.
func (l *limiter) pause(key string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if at.After(l.paused[key]) {
		l.paused[key] = at
	}
}

// limited makes one ARI request within the rate limits of property: the limiter's wait,
// then the caller's wait (its rate limits and its lease), then the request.
func (a *Adapter) limited(ctx context.Context, c channel.Connection, property string, r request,
	wait func(ctx context.Context, kind string) error, record func(channel.Exchange)) ([]byte, error) {
	key := base(c.Endpoint) + "|" + property + "|" + r.kind
	done, err := a.limits.acquire(ctx, key, a.now, a.sleep)
	if err != nil {
		return nil, err
	}
	if wait != nil {
		if err := wait(ctx, r.kind); err != nil {
			done(time.Time{}) // not sent: the slot is free again
			return nil, err
		}
	}
	_, body, err := a.do(ctx, c, r, record)
	done(a.now())
	var rerr *channel.RemoteError
	if errors.As(err, &rerr) && rerr.Status == http.StatusTooManyRequests {
		d := rerr.RetryAfter
		if d <= 0 {
			d = a.limits.window // Channex: "pause updates for the property for 1 minute"
		}
		a.limits.pause(key, a.now().Add(d))
	}
	return body, err
}
