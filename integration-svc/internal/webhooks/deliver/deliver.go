// Package deliver sends recorded webhook deliveries to their endpoints: Standard Webhooks
// signatures, one lane per (endpoint, property) so that an endpoint receives a property's
// events in order, retries on a schedule, leases so that a stopped replica's deliveries are
// taken over, and the disabling of an endpoint that keeps failing (docs/webhooks.md).
package deliver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.opentelemetry.io/otel/metric"

	"github.com/vros/vros/integration-svc/internal/targets"
	"github.com/vros/vros/integration-svc/internal/webhooks/hooks"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/tenancy"
)

// Limits of what is read back from a receiver.
const (
	MaxResponse = 64 << 10
	MaxExcerpt  = 1 << 10
	UserAgent   = "vros-webhooks/1"
	// EndpointCache is how long a sending replica uses an endpoint it read (its URL and
	// secrets); its own writes to the endpoint drop the copy at once.
	EndpointCache = time.Second
)

// Config tunes the deliverer.
type Config struct {
	Timeout  time.Duration
	Poll     time.Duration
	Schedule []time.Duration // Schedule[i]: the wait before attempt i+1; its length is the attempts made
	// DisableAfter and DisableMinFailures: an endpoint is disabled once every attempt failed
	// for DisableAfter and at least DisableMinFailures attempts in a row.
	DisableAfter       time.Duration
	DisableMinFailures int
	AllowHTTP          bool
	Concurrency        int
	PerEndpoint        int
	// BookingURL is booking-svc's internal address (GET /internal/hooks/booking/{id}).
	BookingURL string
	// Repair is how often held deliveries of enabled endpoints are released (Store.RepairHolds);
	// 0 is RepairEvery.
	Repair time.Duration
	// Window is how many due lanes a round reads at most; 0 is 5000.
	Window int64
}

// RepairEvery is how often, by default, the deliverer looks for deliveries held behind an
// endpoint that is enabled (a hold taken from a copy read just before an enabling).
const RepairEvery = 10 * time.Second

// Store is where the deliverer finds its work and records it: the webhook domain's
// endpoint and delivery repositories.
type Store interface {
	hooks.EndpointRepository
	hooks.DeliveryRepository
}

// Policy tells whether the account may reach private addresses.
type Policy interface {
	AllowsPrivate(ctx context.Context, account string) (bool, error)
}

// Deliverer sends deliveries.
type Deliverer struct {
	cfg     Config
	st      Store
	policy  Policy
	signer  *tenancy.Signer
	log     *slog.Logger
	strict  *http.Client
	private *http.Client
	booking *http.Client
	// notify records the webhook.disabled notice of a disabled endpoint.
	notify   func(ctx context.Context, e webhook.Event, except int64) error
	wake     chan struct{}
	sem      chan struct{}
	mu       sync.Mutex
	inflight map[string]bool // lanes being sent by this process
	perEP    map[string]int  // deliveries in flight per endpoint
	// failedAt holds, per endpoint, a failed attempt of this process not yet followed by a
	// recorded success, so that the next success is recorded at once.
	failedAt map[string]bool
	// backfilled is when the repair last re-queued pending deliveries without a queue
	// document (hourly).
	backfilled time.Time
	disabled   metric.Int64Counter
	sent       metric.Int64Counter
	deliveries metric.Int64Counter
	now        func() time.Time
}

// New returns a deliverer; notify records the notice of a disabled endpoint for the
// account's endpoints but that one (except).
func New(cfg Config, st Store, policy Policy, signer *tenancy.Signer, log *slog.Logger, meter metric.Meter,
	notify func(ctx context.Context, e webhook.Event, except int64) error) *Deliverer {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 32
	}
	if cfg.PerEndpoint <= 0 {
		cfg.PerEndpoint = 4
	}
	if cfg.Repair <= 0 {
		cfg.Repair = RepairEvery
	}
	if cfg.Window <= 0 {
		cfg.Window = 5000
	}
	d := &Deliverer{cfg: cfg, st: st, policy: policy, signer: signer, log: log, notify: notify,
		strict:  targets.Client(targets.Rules{AllowHTTP: cfg.AllowHTTP}, cfg.Timeout),
		private: targets.Client(targets.Rules{AllowHTTP: cfg.AllowHTTP, AllowPrivate: true}, cfg.Timeout),
		booking: &http.Client{Timeout: cfg.Timeout},
		wake:    make(chan struct{}, 1), sem: make(chan struct{}, cfg.Concurrency),
		inflight: map[string]bool{}, perEP: map[string]int{}, failedAt: map[string]bool{}, now: func() time.Time { return time.Now().UTC() }}
	if meter != nil {
		d.disabled, _ = meter.Int64Counter("vros_webhook_endpoints_disabled_total",
			metric.WithDescription("webhook endpoints disabled after their failure streak"))
		d.sent, _ = meter.Int64Counter("vros_webhook_attempts_total",
			metric.WithDescription("webhook delivery attempts, by outcome"))
		d.deliveries, _ = meter.Int64Counter("vros.webhook.deliveries", metric.WithUnit("{attempt}"),
			metric.WithDescription("Webhook delivery attempts by what became of the delivery: delivered, retry (a failed attempt with one to follow), failed (the last attempt failed: given up)."))
		if d.deliveries != nil {
			for _, set := range []metric.MeasurementOption{outcomeDelivered, outcomeRetry, outcomeFailed} {
				d.deliveries.Add(context.Background(), 0, set) // exported at 0 from the start
			}
		}
	}
	return d
}

// Wake makes the deliverer look for due deliveries now (deliveries were recorded).
func (d *Deliverer) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Lease is how long a delivery being sent is kept from other replicas.
func (d *Deliverer) Lease() time.Duration { return 2*d.cfg.Timeout + 5*time.Second }

// Run sends due deliveries until ctx ends.
func (d *Deliverer) Run(ctx context.Context) error {
	t := time.NewTicker(d.cfg.Poll)
	defer t.Stop()
	repair := time.NewTicker(d.cfg.Repair)
	defer repair.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		if err := d.round(ctx, &wg); err != nil && ctx.Err() == nil {
			d.log.Warn("webhook delivery round failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-d.wake:
		case <-t.C:
		case <-repair.C:
			if err := d.repair(ctx); err != nil && ctx.Err() == nil {
				d.log.Warn("webhook repair failed", "error", err)
			}
		}
	}
}

// round starts draining every lane that is due (hooks.DueLanes), not in flight here, and
// whose endpoint has room for one more attempt in flight.
func (d *Deliverer) round(ctx context.Context, wg *sync.WaitGroup) error {
	d.mu.Lock()
	var busy []string
	for ep, n := range d.perEP {
		if n >= d.cfg.PerEndpoint {
			busy = append(busy, ep)
		}
	}
	d.mu.Unlock()
	lanes, err := d.st.DueLanes(ctx, d.now(), busy, d.cfg.Window)
	if err != nil {
		return err
	}
	for _, l := range lanes {
		ep := l.Account + ":" + strconv.FormatInt(l.WebhookID, 10)
		d.mu.Lock()
		skip := d.inflight[l.Lane] || d.perEP[ep] >= d.cfg.PerEndpoint
		if !skip {
			d.inflight[l.Lane] = true
			d.perEP[ep]++
		}
		d.mu.Unlock()
		if skip {
			continue
		}
		select {
		case d.sem <- struct{}{}:
		case <-ctx.Done():
			d.done(l.Lane, ep)
			return nil
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-d.sem }()
			d.drain(ctx, l.Lane)
			d.done(l.Lane, ep)
			d.Wake() // a delivery recorded while the lane was ending waits for no tick
		}()
	}
	return nil
}

// drain sends the lane's deliveries one after the other in the lane's order for as long as
// its head may be sent now, so that a burst on one lane needs no round per delivery. It
// stops at a head that waits, and tells the lane's schedule when to look again: a retry's
// time, held (its endpoint paused or disabled), or gone (no delivery left). A head another
// replica is sending is left to it (the lane's rounds look again).
func (d *Deliverer) drain(ctx context.Context, lane string) {
	var last hooks.Due
	for ctx.Err() == nil {
		h, ok, err := d.st.LaneHead(ctx, lane)
		now := d.now()
		switch {
		case err != nil:
		case !ok:
			err = d.st.LaneDone(ctx, lane)
		case h.Hold:
			err = d.st.SetLaneNext(ctx, lane, now, true)
		case h.LeaseUntil.After(now):
		case h.NextAttemptAt != nil && h.NextAttemptAt.After(now):
			err = d.st.SetLaneNext(ctx, lane, *h.NextAttemptAt, false)
		case h.MessageID == last.MessageID && h.Attempts == last.Attempts:
			// tried and unchanged (its lease was taken elsewhere, say): the rounds look again.
		default:
			if err = d.send(ctx, h); err == nil {
				last = h
				continue
			}
		}
		if err != nil && ctx.Err() == nil {
			d.log.Warn("webhook lane drain failed", "lane", lane, "error", err)
		}
		return
	}
}

func (d *Deliverer) done(lane, ep string) {
	d.mu.Lock()
	delete(d.inflight, lane)
	if d.perEP[ep]--; d.perEP[ep] <= 0 {
		delete(d.perEP, ep)
	}
	d.mu.Unlock()
}

// send makes one attempt of the lane head h.
func (d *Deliverer) send(ctx context.Context, h hooks.Due) error {
	now := d.now()
	del, ok, err := d.st.Lease(ctx, h, now, now.Add(d.Lease()))
	if err != nil || !ok {
		return err
	}
	ep, err := d.st.EndpointCached(ctx, del.Account, del.WebhookID, EndpointCache)
	if err == nil && !ep.Enabled {
		// the copy may predate a re-enabling in another replica: hold only on a fresh read.
		ep, err = d.st.Endpoint(ctx, del.Account, del.WebhookID)
	}
	if errors.Is(err, hooks.ErrNotFound) {
		// deleted with its deliveries; this one was recorded just after.
		return d.st.Drop(context.WithoutCancel(ctx), del)
	}
	if err != nil {
		return err
	}
	if !ep.Enabled {
		return d.st.Hold(ctx, del)
	}
	payload, err := d.payload(ctx, del, del.Data)
	if err != nil {
		// booking-svc did not answer: no attempt was made; try again shortly.
		_ = d.st.Release(context.WithoutCancel(ctx), del, d.now().Add(d.cfg.Poll))
		return err
	}
	a := d.attempt(ctx, ep, del, payload)
	return d.record(context.WithoutCancel(ctx), ep, del, a)
}

// payload is the body sent: {"type","timestamp","data"}, data.booking read now.
func (d *Deliverer) payload(ctx context.Context, del webhook.Delivery, data []byte) ([]byte, error) {
	if webhook.CarriesBooking(del.EventType) && del.BookingID > 0 {
		b, err := d.fetchBooking(ctx, del.Account, del.BookingID)
		if err != nil {
			return nil, err
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		m["booking"] = b
		if data, err = json.Marshal(m); err != nil {
			return nil, err
		}
	}
	return json.Marshal(struct {
		Type      string          `json:"type"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}{del.EventType, del.EventAt.UTC().Format(time.RFC3339), data})
}

// fetchBooking reads the booking's interface B shape from booking-svc; null when it has no
// such booking (any more).
func (d *Deliverer) fetchBooking(ctx context.Context, account string, id int64) (json.RawMessage, error) {
	path := "/internal/hooks/booking/" + strconv.FormatInt(id, 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(d.cfg.BookingURL, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	d.signer.SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: account}, http.MethodGet, path, nil, time.Now())
	resp, err := d.booking.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return json.RawMessage("null"), nil
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("booking-svc answered %d", resp.StatusCode)
	}
	var out struct {
		Booking json.RawMessage `json:"booking"`
	}
	if err := json.Unmarshal(body, &out); err != nil || len(out.Booking) == 0 {
		return nil, fmt.Errorf("booking-svc answered no booking")
	}
	return out.Booking, nil
}

// Sign returns the webhook-signature header value: one signature per secret.
func Sign(secrets []string, msgID string, at time.Time, payload []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			return "", err
		}
		sig, err := wh.Sign(msgID, at, payload)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// attempt posts payload to the endpoint once.
func (d *Deliverer) attempt(ctx context.Context, ep webhook.Endpoint, del webhook.Delivery, payload []byte) webhook.Attempt {
	start := d.now()
	a := webhook.Attempt{Account: del.Account, WebhookID: del.WebhookID, MessageID: del.MessageID, Attempt: del.Attempts + 1, At: start}
	fail := func(err error) webhook.Attempt {
		a.Error = err.Error()
		a.LatencyMS = time.Since(start).Milliseconds()
		return a
	}
	u, err := url.Parse(ep.URL)
	if err != nil || !(u.Scheme == "https" || u.Scheme == "http" && d.cfg.AllowHTTP) {
		return fail(errors.New("the link's scheme is not allowed (https only)"))
	}
	allow, err := d.policy.AllowsPrivate(ctx, del.Account)
	if err != nil {
		return fail(errors.New("could not read the account's address policy"))
	}
	client := d.strict
	if allow {
		client = d.private
	}
	sig, err := Sign(ep.Secrets(start), del.MessageID, start, payload)
	if err != nil {
		return fail(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(payload))
	if err != nil {
		return fail(err)
	}
	req.Header.Set(standardwebhooks.HeaderWebhookID, del.MessageID)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(start.Unix(), 10))
	req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	resp, err := client.Do(req)
	if err != nil {
		if targets.IsForbidden(err) {
			return fail(errors.New("forbidden address: the target resolves to a private, loopback or link-local address"))
		}
		return fail(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponse))
	a.StatusCode = resp.StatusCode
	a.LatencyMS = time.Since(start).Milliseconds()
	a.ResponseExcerpt = Excerpt(body)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		a.Error = "answered " + strconv.Itoa(resp.StatusCode)
	}
	return a
}

// Excerpt is at most MaxExcerpt bytes of b, valid UTF-8, no rune cut.
// Invalid bytes (a Latin-1 answer, say) become U+FFFD first, so that one of them near the
// start does not cost the rest of the excerpt.
func Excerpt(b []byte) string {
	s := strings.ToValidUTF8(string(b[:min(len(b), MaxExcerpt+utf8.UTFMax)]), "\uFFFD")
	if len(s) <= MaxExcerpt {
		return s
	}
	s = s[:MaxExcerpt]
	for !utf8.ValidString(s) { // only the last rune can be cut: at most 3 bytes
		s = s[:len(s)-1]
	}
	return s
}

// record stores the attempt, schedules the retry or gives up, and disables an endpoint whose
// failure streak has gone on long enough.
func (d *Deliverer) record(ctx context.Context, ep webhook.Endpoint, del webhook.Delivery, a webhook.Attempt) error {
	ok := a.Error == ""
	var next *time.Time
	if !ok && a.Attempt < len(d.cfg.Schedule) {
		t := a.At.Add(d.cfg.Schedule[a.Attempt])
		next = &t
	}
	if err := d.st.Finish(ctx, del, a, ok, next); err != nil {
		return err
	}
	outcome := "failure"
	if ok {
		outcome = "success"
	}
	if d.sent != nil {
		d.sent.Add(ctx, 1, metric.WithAttributes(attrOutcome(outcome)))
	}
	if d.deliveries != nil {
		d.deliveries.Add(ctx, 1, deliveryOutcome(ok, next != nil))
	}
	if ok {
		key := ep.Account + ":" + strconv.FormatInt(ep.ID, 10)
		d.mu.Lock()
		_, ok := d.failedAt[key]
		delete(d.failedAt, key)
		d.mu.Unlock()
		if !ok && ep.LastSuccessAt != nil && a.At.Sub(*ep.LastSuccessAt) < EndpointCache {
			return nil // no failure here to end; last_success_at is at most that much behind in a burst
		}
		return d.st.Succeeded(ctx, ep.Account, ep.ID, a.At)
	}
	d.mu.Lock()
	d.failedAt[ep.Account+":"+strconv.FormatInt(ep.ID, 10)] = true
	d.mu.Unlock()
	after, err := d.st.Failed(ctx, ep.Account, ep.ID)
	if err != nil {
		return err
	}
	// now, not the attempt's start: attempts run concurrently, and one that started before
	// the streak's first recorded failure still ends after it.
	if after.FailureStreak < d.cfg.DisableMinFailures || after.FirstFailureAt == nil ||
		d.now().Sub(*after.FirstFailureAt) < d.cfg.DisableAfter {
		return nil
	}
	reason := fmt.Sprintf("every attempt failed since %s (%d in a row)", after.FirstFailureAt.Format(time.RFC3339), after.FailureStreak)
	data, _ := json.Marshal(map[string]any{"webhook_id": ep.ID, "url": ep.URL, "disabled_at": a.At.UTC().Format(time.RFC3339),
		"failure_streak": after.FailureStreak, "reason": reason})
	// One notice per streak: attempts ending at once (in this replica or another) that each
	// see the streak long enough record the same message, once.
	notice := webhook.Event{ID: webhook.MessageID(ep.Account+":webhook:"+strconv.FormatInt(ep.ID, 10), after.FirstFailureAt.UnixNano(), webhook.WebhookDisabled, ""),
		Account: ep.Account, Type: webhook.WebhookDisabled, At: a.At, Data: data}
	disabled, err := d.st.Disable(ctx, ep.Account, ep.ID, a.At, reason, after, notice)
	if err != nil || !disabled {
		return err
	}
	d.log.Info("webhook endpoint disabled", "account", ep.Account, "webhook_id", ep.ID, "failure_streak", after.FailureStreak)
	if d.disabled != nil {
		d.disabled.Add(ctx, 1)
	}
	return d.recordNotice(ctx, ep.Account, ep.ID, notice)
}

// recordNotice records an endpoint's webhook.disabled notice for the account's other
// endpoints and clears it from the endpoint; if either fails, the repair records it later
// (the same message id: recorded once).
func (d *Deliverer) recordNotice(ctx context.Context, account string, id int64, notice webhook.Event) error {
	if err := d.notify(ctx, notice, id); err != nil {
		return err
	}
	return d.st.NoticeRecorded(ctx, account, id, notice.ID)
}

// repair runs the periodic repairs: holds and lanes (Store.RepairHolds), and the notices of
// disablings not recorded yet.
func (d *Deliverer) repair(ctx context.Context) error {
	if now := d.now(); now.Sub(d.backfilled) > time.Hour {
		if err := d.st.BackfillQueue(ctx); err != nil {
			return err
		}
		d.backfilled = now
	}
	n, err := d.st.RepairHolds(ctx, d.now())
	if n > 0 {
		d.log.Info("webhook lanes and holds repaired", "count", n)
	}
	if err != nil {
		return err
	}
	eps, err := d.st.PendingNotices(ctx)
	if err != nil {
		return err
	}
	for _, ep := range eps {
		if err := d.recordNotice(ctx, ep.Account, ep.ID, *ep.Notice); err != nil {
			return err
		}
	}
	return nil
}
