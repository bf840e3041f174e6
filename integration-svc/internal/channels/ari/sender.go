package ari

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
)

// Config tunes the sender (VROS_CHANNEL_…; docs/channels.md, "Configuration").
type Config struct {
	// Workers is how many properties one replica sends at the same time.
	Workers int
	// Lease is a sender's hold on a mark, renewed before each request: longer than
	// RequestTimeout, so that a request ends before another sender may take the property.
	Lease          time.Duration
	RequestTimeout time.Duration
	// ErrorRetry is the wait after a refused (non-retryable) request.
	ErrorRetry time.Duration
	// Poll is how often a worker looks for due marks besides this replica's own signals.
	Poll time.Duration
	// BackoffMin and BackoffMax bound the retry waits after a retryable failure (defaults
	// 1s and 5m): BackoffMin doubled per failure in a row, with jitter.
	BackoffMin, BackoffMax time.Duration
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.Workers <= 0 || c.Lease <= 0 || c.RequestTimeout <= 0 || c.ErrorRetry <= 0 || c.Poll <= 0 {
		return errors.New("VROS_CHANNEL_WORKERS, VROS_CHANNEL_LEASE, VROS_CHANNEL_REQUEST_TIMEOUT, VROS_CHANNEL_ERROR_RETRY and VROS_CHANNEL_POLL must be positive")
	}
	if c.Lease <= c.RequestTimeout {
		return errors.New("VROS_CHANNEL_LEASE must be longer than VROS_CHANNEL_REQUEST_TIMEOUT")
	}
	return nil
}

// Deps are what a Sender works with.
type Deps struct {
	Projection  Projection
	Marks       Marks
	Sent        Sent
	Connections channel.Connections
	Log         channel.Log
	// Adapters by name (channel.Channex, channel.OpenTravel).
	Adapters map[string]channel.Adapter
	Logger   *slog.Logger
	Meter    metric.Meter // nil: no metrics
	// Now is the clock (default time.Now); Jitter spreads a retry wait (default: a random
	// duration in [d/2, d]).
	Now    func() time.Time
	Jitter func(d time.Duration) time.Duration
}

// Sender pushes the values of dirty marks to the channel managers.
type Sender struct {
	cfg Config
	Deps
	wake chan struct{}

	pushes      metric.Int64Counter
	propagation metric.Float64Histogram
}

// NewSender returns a sender; Run starts its workers.
func NewSender(cfg Config, d Deps) *Sender {
	if cfg.BackoffMin <= 0 {
		cfg.BackoffMin = time.Second
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = 5 * time.Minute
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Jitter == nil {
		d.Jitter = func(x time.Duration) time.Duration {
			if x <= 1 {
				return x
			}
			return x/2 + rand.N(x/2+1)
		}
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Sender{cfg: cfg, Deps: d, wake: make(chan struct{}, 1)}
	if d.Meter != nil {
		s.pushes, _ = d.Meter.Int64Counter("vros.channel.ari.pushes", metric.WithUnit("{push}"),
			metric.WithDescription("ARI pushes of a mapped property to a channel manager, by result (ok, retry, error)."))
		s.propagation, _ = d.Meter.Float64Histogram("vros.channel.ari.propagation", metric.WithUnit("s"),
			metric.WithDescription("From a property's first unsent mark to the channel manager accepting its values."),
			metric.WithExplicitBucketBoundaries(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300))
		pending, _ := d.Meter.Int64ObservableGauge("vros.channel.ari.marks", metric.WithUnit("{mark}"),
			metric.WithDescription("Mapped properties marked dirty and not sent yet (every replica's)."))
		if pending != nil {
			_, _ = d.Meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
				ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				n, err := d.Marks.Pending(ctx)
				if err == nil {
					o.ObserveInt64(pending, n)
				}
				return nil
			}, pending)
		}
	}
	return s
}

// Touch marks a mapped property dirty for the projection (a changed snapshot): a mark
// waiting for a retry keeps its time.
func (s *Sender) Touch(ctx context.Context, account string, connection, property int64) error {
	if err := s.Marks.Mark(ctx, account, connection, property, false, false, s.Now()); err != nil {
		return err
	}
	s.Wake()
	return nil
}

// MarkDirty marks a mapped property for the mapping API: due at once, a full sync when full
// (a mapping created, enabled or changed; channel-mapping sync).
func (s *Sender) MarkDirty(ctx context.Context, account string, connection, property int64, full bool) error {
	if err := s.Marks.Mark(ctx, account, connection, property, full, true, s.Now()); err != nil {
		return err
	}
	s.Wake()
	return nil
}

// Refresh marks every enabled mapping of every enabled connection: the horizon moves at
// each property's midnight without an event, and its new last date is sent by the next
// mark (run hourly). A mark waiting for a retry keeps its time.
func (s *Sender) Refresh(ctx context.Context) error {
	for name := range s.Adapters {
		conns, err := s.Connections.EnabledConnections(ctx, name)
		if err != nil {
			return err
		}
		for _, c := range conns {
			ms, err := s.Connections.Mappings(ctx, c.Account, c.ID, 0)
			if err != nil {
				return err
			}
			for _, m := range ms {
				if !m.Enabled || m.ConnectionID != c.ID {
					continue
				}
				if err := s.Marks.Mark(ctx, c.Account, c.ID, m.PropertyID, false, false, s.Now()); err != nil {
					return err
				}
			}
		}
	}
	s.Wake()
	return nil
}

// Wake has a worker look for due marks now.
func (s *Sender) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run runs the workers until ctx ends.
func (s *Sender) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range s.cfg.Workers {
		wg.Go(func() { s.work(ctx) })
	}
	wg.Wait()
	return nil
}

func (s *Sender) work(ctx context.Context) {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for ctx.Err() == nil {
		did, err := s.Once(ctx)
		if err != nil && ctx.Err() == nil {
			s.Logger.Warn("channel ARI: claim failed", "error", err)
		}
		if did {
			// There may be more: let another worker look too.
			s.Wake()
			continue
		}
		select {
		case <-ctx.Done():
		case <-s.wake:
		case <-t.C:
		}
	}
}

// Once claims one due mark and sends it; false when none was due.
func (s *Sender) Once(ctx context.Context) (bool, error) {
	m, ok, err := s.Marks.Claim(ctx, s.Now(), s.cfg.Lease)
	if err != nil || !ok {
		return false, err
	}
	s.process(ctx, m)
	return true, nil
}

// process sends m's property until its mark is gone, or lets the mark go until its next
// attempt.
func (s *Sender) process(ctx context.Context, m Mark) {
	for {
		next, done, err := s.push(ctx, &m)
		if err != nil {
			s.failed(ctx, m, err)
			return
		}
		if done {
			return
		}
		m = next
	}
}

// push sends the difference once and ends the pass: done when the mark is gone, else the
// newer mark to send again.
func (s *Sender) push(ctx context.Context, m *Mark) (Mark, bool, error) {
	conn, err := s.Connections.Connection(ctx, m.Account, m.ConnectionID)
	gone := errors.Is(err, channel.ErrNotFound)
	if err != nil && !gone {
		return Mark{}, false, err
	}
	var mp channel.Mapping
	if !gone && conn.Enabled {
		mp, err = s.Connections.Mapping(ctx, m.Account, m.ConnectionID, m.PropertyID)
		gone = errors.Is(err, channel.ErrNotFound)
		if err != nil && !gone {
			return Mark{}, false, err
		}
	}
	if gone || !conn.Enabled || !mp.Enabled {
		// Nothing to send to: a mapping enabled again is marked full by its API.
		return Mark{}, true, s.Marks.Drop(ctx, *m)
	}
	ad := s.Adapters[conn.Adapter]
	if ad == nil {
		return Mark{}, false, &channel.RemoteError{Message: "no adapter " + conn.Adapter}
	}
	st, err := s.Projection.Load(ctx, m.Account, m.PropertyID)
	if err != nil {
		return Mark{}, false, err
	}
	want, err := Compute(st, conn, mp, s.Now())
	if errors.Is(err, ErrNotProjected) {
		// The property's snapshot marks it again when it arrives.
		return s.Marks.Next(ctx, *m, false)
	}
	if err != nil {
		return Mark{}, false, err
	}
	// sent is what the channel manager holds, as far as vros knows: nothing known for a full
	// sync (every date is sent); the accepted ranges are applied to it as they come.
	sent := Unknown(want.From, want.Days)
	if !m.Full {
		if sent, err = s.Sent.LoadSent(ctx, m.Account, m.ConnectionID, m.PropertyID, want.From, want.Days); err != nil {
			return Mark{}, false, err
		}
	}
	avail, rates := Diff(want, &sent)
	if len(avail)+len(rates) > 0 {
		b := channel.Batch{Connection: conn, Mapping: mp, Currency: want.Currency, Availability: avail, Rates: rates}
		// The adapter keeps its channel manager's rate limits (channex does) and calls wait
		// right before each request: the lease is renewed there, so that it outlasts the
		// request (Lease > RequestTimeout).
		wait := func(ctx context.Context, _ string) error {
			return s.Marks.Renew(ctx, m, s.Now().Add(s.cfg.Lease))
		}
		record := func(ex channel.Exchange) { s.record(ctx, *m, ex) }
		sentFn := func(a []channel.Availability, r []channel.Rate) error {
			// Under the lease too: a sender that lost it must not write over the values its
			// successor recorded.
			if err := s.Marks.Renew(ctx, m, s.Now().Add(s.cfg.Lease)); err != nil {
				return err
			}
			sent.Apply(a, r)
			return s.Sent.RecordSent(ctx, m.Account, m.ConnectionID, m.PropertyID, sent)
		}
		if err := ad.PushARI(ctx, b, wait, sentFn, record); err != nil {
			return Mark{}, false, err
		}
	}
	next, done, err := s.Marks.Next(ctx, *m, m.Full)
	if err != nil {
		return Mark{}, false, err
	}
	s.count(ctx, "ok")
	if done && s.propagation != nil && !m.MarkedAt.IsZero() {
		s.propagation.Record(ctx, s.Now().Sub(m.MarkedAt).Seconds())
	}
	return next, done, nil
}

// failed lets m go after a failure: retryable ones after a backoff (honouring the channel
// manager's Retry-After), refusals after ErrorRetry. A stop (ctx ended) or a lost lease
// leaves the mark as it is: its lease runs out and a sender takes it over.
func (s *Sender) failed(ctx context.Context, m Mark, err error) {
	if ctx.Err() != nil || errors.Is(err, ErrLeaseLost) {
		return
	}
	var re *channel.RemoteError
	retryable := !errors.As(err, &re) || re.Retryable
	wait := s.cfg.ErrorRetry
	if retryable {
		wait = s.cfg.BackoffMin
		for i := 0; i < m.Attempts && wait < s.cfg.BackoffMax; i++ {
			wait *= 2
		}
		wait = s.Jitter(min(wait, s.cfg.BackoffMax))
		if re != nil && re.RetryAfter > wait {
			wait = re.RetryAfter
		}
		s.count(ctx, "retry")
		s.Logger.Info("channel ARI: push failed; retrying", "account", m.Account, "connection", m.ConnectionID,
			"property", m.PropertyID, "retry_in", wait.String(), "error", err)
	} else {
		s.count(ctx, "error")
		s.Logger.Warn("channel ARI: push refused", "account", m.Account, "connection", m.ConnectionID,
			"property", m.PropertyID, "retry_in", wait.String(), "error", err)
	}
	if err := s.Marks.Retry(ctx, m, s.Now().Add(wait)); err != nil && !errors.Is(err, ErrLeaseLost) {
		s.Logger.Warn("channel ARI: the mark could not be let go; its lease runs out", "error", err)
	}
}

func (s *Sender) count(ctx context.Context, result string) {
	if s.pushes != nil {
		s.pushes.Add(ctx, 1, metric.WithAttributes(attribute.String("result", result)))
	}
}

// record appends an exchange to the channel log.
func (s *Sender) record(ctx context.Context, m Mark, ex channel.Exchange) {
	if s.Log == nil {
		return
	}
	e := channel.LogEntry{Account: m.Account, ConnectionID: m.ConnectionID, PropertyID: m.PropertyID,
		Direction: "out", Kind: ex.Kind, Status: channel.StatusOK, HTTPStatus: ex.HTTPStatus,
		From: ex.From, To: ex.To, At: s.Now().UTC(), Duration: ex.Duration}
	// The log cuts the bodies (64 KiB, truncated: true).
	e.Request, e.Response = string(ex.Request), string(ex.Response)
	if ex.Err != nil {
		e.Error = ex.Err.Error()
		e.Status = channel.StatusError
		var re *channel.RemoteError
		if !errors.As(ex.Err, &re) || re.Retryable {
			e.Status = channel.StatusRetrying
		}
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.Log.Append(lctx, e); err != nil {
		s.Logger.Warn("channel log: append failed", "error", err)
	}
}
