// Package poller polls the iCal feeds that are due and has booking-svc block their
// events' nights (docs/ical.md, "Import"). Any number of replicas run it: a feed is
// taken with a lease, so one poll of a feed runs at a time, and a feed whose poller died
// is taken over when its lease ends.
package poller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"golang.org/x/sync/errgroup"

	"github.com/vros/vros/integration-svc/internal/ical/feed"
	"github.com/vros/vros/integration-svc/internal/targets"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
	"github.com/vros/vros/libs/periodic"
)

// ErrBusy: another poll of the feed is running.
var ErrBusy = errors.New("a poll of the feed is in progress")

// Emitter raises an event to the account's webhook endpoints.
type Emitter interface {
	Emit(ctx context.Context, e webhook.Event) error
}

// Policy tells whether an account may name private addresses.
type Policy interface {
	AllowsPrivate(ctx context.Context, account string) (bool, error)
}

// Config tunes the poller.
type Config struct {
	Period  time.Duration // how often due feeds are looked for
	Lease   time.Duration // how long a poll holds its feed
	Timeout time.Duration // one feed request
	MaxBody int64         // the largest feed accepted, in bytes
	Workers int           // feeds polled at the same time by one poller (at least 1)
	// AllowHTTP accepts http:// feed links (development).
	AllowHTTP bool
	// BookingTimeout bounds one call to booking-svc; 0 is DefaultBookingTimeout.
	BookingTimeout time.Duration
}

// DefaultBookingTimeout is Config.BookingTimeout's default.
const DefaultBookingTimeout = 60 * time.Second

// Incomplete imports (booking-svc's "complete": false).
const (
	// MaxContinuations bounds the syncs a poll sends again after an incomplete one.
	MaxContinuations = 8
	// ContinueAfter is when the next poll goes on with an import still incomplete at the
	// end of a poll (at most the feed's interval).
	ContinueAfter = 15 * time.Second
	// NoteInProgress is the status's note then.
	NoteInProgress = "import in progress: booking-svc has not finished applying the feed's events yet; the next poll goes on"
	// NoteRemoving is a deleted feed's note while booking-svc has not finished removing
	// its blocks (no account sees it; kept for operators).
	NoteRemoving = "removal in progress: booking-svc has not finished removing the feed's blocks yet"
)

// Poller polls feeds.
type Poller struct {
	Store   feed.Repository
	Booking Booking
	Hooks   Emitter
	Policy  Policy
	Cfg     Config
	Log     *slog.Logger
	Now     func() time.Time
	// Meter counts each poll in vros.ical.imports by outcome (ok, unchanged, error); nil:
	// none.
	Meter metric.Meter

	once       sync.Once
	public     *http.Client
	private    *http.Client
	background sync.WaitGroup
	imports    metric.Int64Counter // made once from Meter
	importsSet sync.Once
}

// The outcomes of vros.ical.imports: the feed's file read and synced, the feed unchanged
// (HTTP 304: the kept events synced again), the poll failed (the link, the file or the sync).
var (
	importOK        = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "ok")))
	importUnchanged = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "unchanged")))
	importError     = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "error")))
)

// counter is vros.ical.imports, made once from Meter (nil without one), its outcomes
// exported at 0 from the start.
func (p *Poller) counter() metric.Int64Counter {
	p.importsSet.Do(func() {
		if p.Meter == nil {
			return
		}
		p.imports, _ = p.Meter.Int64Counter("vros.ical.imports", metric.WithUnit("{poll}"),
			metric.WithDescription("Polls of iCal feeds by outcome: ok (read and synced), unchanged (HTTP 304), error."))
		if p.imports != nil {
			for _, set := range []metric.MeasurementOption{importOK, importUnchanged, importError} {
				p.imports.Add(context.Background(), 0, set)
			}
		}
	})
	return p.imports
}

// counted counts a poll's outcome: err, else fetched (nil: the feed answered 304).
func (p *Poller) counted(ctx context.Context, fetched *feed.Fetched, err error) {
	c := p.counter()
	switch {
	case c == nil:
	case err != nil:
		c.Add(ctx, 1, importError)
	case fetched == nil:
		c.Add(ctx, 1, importUnchanged)
	default:
		c.Add(ctx, 1, importOK)
	}
}

func (p *Poller) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Poller) client(allowPrivate bool) *http.Client {
	p.once.Do(func() {
		p.public = targets.Client(targets.Rules{AllowHTTP: p.Cfg.AllowHTTP}, p.Cfg.Timeout)
		p.private = targets.Client(targets.Rules{AllowHTTP: p.Cfg.AllowHTTP, AllowPrivate: true}, p.Cfg.Timeout)
	})
	if allowPrivate {
		return p.private
	}
	return p.public
}

// Wait returns once the polls and removals left running in the background (PollNow,
// Delete) are done.
func (p *Poller) Wait() { p.background.Wait() }

// Run polls due feeds every Cfg.Period until ctx ends.
func (p *Poller) Run(ctx context.Context) error {
	p.counter()
	periodic.Run(ctx, p.Cfg.Period, p.RunDue, func(err error) {
		if p.Log != nil {
			p.Log.Warn("ical poller", "error", err)
		}
	})
	return nil
}

// RunDue polls every feed that is due now, Cfg.Workers at a time (one slow link does not
// hold up the others), and returns when none is left.
func (p *Poller) RunDue(ctx context.Context) error {
	var g errgroup.Group
	for range max(p.Cfg.Workers, 1) {
		g.Go(func() error {
			for ctx.Err() == nil {
				f, err := p.Store.LeaseDue(ctx, p.now(), p.Cfg.Lease)
				if err != nil || f == nil {
					return err
				}
				if err := p.process(ctx, f); err != nil {
					return err
				}
			}
			return ctx.Err()
		})
	}
	return g.Wait()
}

// PollNow polls an account's feed at once (the resource's sync and a changed link) and
// returns it after the poll. When another poll holds the feed it waits up to wait for it
// to end (checking every 100 ms), then answers ErrBusy. With answerBy > 0 it returns
// within about answerBy of its call: a poll not done by then goes on in the background
// (it records its outcome; Wait waits for it) and PollNow answers ErrBusy.
func (p *Poller) PollNow(ctx context.Context, account string, feedID int64, wait, answerBy time.Duration) (*feed.Feed, error) {
	start := time.Now()
	if _, err := p.Store.Get(ctx, account, feedID); err != nil {
		return nil, err
	}
	if answerBy > 0 {
		wait = min(wait, answerBy)
	}
	deadline := start.Add(wait)
	var f *feed.Feed
	for {
		var err error
		f, err = p.Store.Lease(ctx, feed.Key(account, feedID), p.now(), p.Cfg.Lease)
		if err != nil {
			return nil, err
		}
		if f != nil {
			break
		}
		if !time.Now().Before(deadline) {
			return nil, ErrBusy
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(100*time.Millisecond, time.Until(deadline))):
		}
	}
	deleting := f.Deleting // deleted meanwhile: the removal is finished, the feed is gone
	done, err := p.within(ctx, f, start, answerBy)
	switch {
	case err != nil:
		return nil, err
	case !done:
		return nil, ErrBusy
	case deleting:
		return nil, feed.ErrNotFound
	}
	return p.Store.Get(ctx, account, feedID)
}

// Delete marks a feed deleted and removes its blocks and then the feed at once when it
// can; otherwise (booking-svc unreachable, a poll holding the feed) the loop finishes it.
// The feed is gone for the account from the first step on. With answerBy > 0 it returns
// within about answerBy of its call; a removal not done by then goes on in the background.
func (p *Poller) Delete(ctx context.Context, account string, feedID int64, answerBy time.Duration) error {
	start := time.Now()
	if _, err := p.Store.MarkDeleting(ctx, account, feedID, p.now()); err != nil {
		return err
	}
	f, err := p.Store.Lease(ctx, feed.Key(account, feedID), p.now(), p.Cfg.Lease)
	if err != nil || f == nil {
		return err
	}
	_, err = p.within(ctx, f, start, answerBy)
	return err
}

// within processes the leased feed f and reports whether it was done by start+answerBy
// (answerBy ≤ 0: no limit). Past that the work goes on in the background, apart from ctx
// (a request's, which ends with its answer) but bounded by the lease: it records its own
// outcome, and Wait waits for it.
func (p *Poller) within(ctx context.Context, f *feed.Feed, start time.Time, answerBy time.Duration) (bool, error) {
	if answerBy <= 0 {
		return true, p.process(ctx, f)
	}
	result := make(chan error, 1)
	p.background.Add(1)
	go func() {
		defer p.background.Done()
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.Cfg.Lease)
		defer cancel()
		err := p.process(bctx, f)
		if err != nil && p.Log != nil {
			p.Log.Warn("ical poll", "feed", f.ID, "error", err)
		}
		result <- err
	}()
	timer := time.NewTimer(time.Until(start.Add(answerBy)))
	defer timer.Stop()
	select {
	case err := <-result:
		return true, err
	case <-timer.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// process runs one leased feed: the removal of a deleted feed or one poll. Its outcome is
// recorded in the feed; the error is only the store's.
func (p *Poller) process(ctx context.Context, f *feed.Feed) error {
	if f.Deleting {
		return p.remove(ctx, f)
	}
	url := f.URL
	now := p.now()
	// A booking-svc call begun after syncBy could outlast the poll's lease.
	syncBy := time.Now().Add(p.Cfg.Lease - p.bookingTimeout())
	f.Status.LastPolledAt = &now
	fetched, incomplete, err := p.poll(ctx, f, syncBy)
	if ctx.Err() != nil {
		// Stopped: the lease runs out and the feed is polled again.
		return ctx.Err()
	}
	if errors.Is(err, ErrFeedGone) {
		// booking-svc removed the feed (its delete's final sync ran, on this replica or
		// another, perhaps while this poll outlived its lease): nothing of it is left to poll.
		return p.Store.Remove(ctx, f)
	}
	p.counted(ctx, fetched, err)
	interval := time.Duration(f.IntervalMinutes) * time.Minute
	f.Status.Note = ""
	switch {
	case err != nil:
		f.Status.LastError = err.Error()
		f.Status.LastErrorAt = &now
		f.Status.ConsecutiveFailures++
		f.Status.NextPollAt = now.Add(feed.Backoff(interval, f.Status.ConsecutiveFailures))
		fetched = nil
	case incomplete:
		// booking-svc made progress and stopped at its deadline: no failure, and the next
		// poll (a 304 syncs the kept events again) goes on soon.
		f.Status.Note = NoteInProgress
		f.Status.ConsecutiveFailures = 0
		f.Status.NextPollAt = now.Add(min(interval, ContinueAfter))
	default:
		f.Status.LastSuccessAt = &now
		f.Status.ConsecutiveFailures = 0
		f.Status.NextPollAt = now.Add(interval)
	}
	_, serr := p.Store.Finish(ctx, f, url, fetched)
	return serr
}

func (p *Poller) bookingTimeout() time.Duration {
	if p.Cfg.BookingTimeout > 0 {
		return p.Cfg.BookingTimeout
	}
	return DefaultBookingTimeout
}

// remove has booking-svc remove a deleted feed's blocks (the final sync), then deletes the
// feed's document; on failure the feed stays deleting and is tried again after the
// backoff. booking-svc's 410 (removed already) and "no such property" (the property and
// its blocks are gone) are done too.
func (p *Poller) remove(ctx context.Context, f *feed.Feed) error {
	syncBy := time.Now().Add(p.Cfg.Lease - p.bookingTimeout())
	err := p.Booking.Remove(ctx, f.AccountID, f)
	// A final sync booking-svc stopped early is sent again, as an import's (poll).
	for n := 0; errors.Is(err, ErrIncomplete) && n < MaxContinuations && time.Now().Before(syncBy); n++ {
		err = p.Booking.Remove(ctx, f.AccountID, f)
	}
	if err == nil || errors.Is(err, ErrNoProperty) || errors.Is(err, ErrFeedGone) {
		return p.Store.Remove(ctx, f)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	now := p.now()
	f.Status.Note = ""
	if errors.Is(err, ErrIncomplete) {
		f.Status.Note = NoteRemoving
		f.Status.ConsecutiveFailures = 0
		f.Status.NextPollAt = now.Add(ContinueAfter)
	} else {
		f.Status.LastError = "removing the feed's blocks: " + err.Error()
		f.Status.LastErrorAt = &now
		f.Status.ConsecutiveFailures++
		f.Status.NextPollAt = now.Add(feed.Backoff(time.Minute, f.Status.ConsecutiveFailures))
	}
	_, serr := p.Store.Finish(ctx, f, f.URL, nil)
	return serr
}

// poll fetches the feed and syncs its events; an error leaves the feed's blocks as they
// are. A 304 syncs the events of the last full answer again: booking-svc changes a feed's
// blocks only during a sync, so nights another holder (a booking, another feed's block) had
// when the file came are claimed only by a later sync, and a channel may answer 304 for
// weeks. It returns the answer to keep for the next 304 (nil when none was fetched).
func (p *Poller) poll(ctx context.Context, f *feed.Feed, syncBy time.Time) (fetched *feed.Fetched, incomplete bool, err error) {
	allow, err := p.Policy.AllowsPrivate(ctx, f.AccountID)
	if err != nil {
		return nil, false, fmt.Errorf("reading the account's address policy: %w", err)
	}
	if msg := targets.Check(ctx, f.URL, targets.Rules{AllowHTTP: p.Cfg.AllowHTTP, AllowPrivate: allow}); msg != "" {
		return nil, false, errors.New("the feed link " + msg)
	}
	kept, err := p.Store.LastFetched(ctx, f.ID, false)
	if err != nil {
		return nil, false, fmt.Errorf("reading the feed's last answer: %w", err)
	}
	if kept != nil && kept.URL != f.URL {
		kept = nil
	}
	today := p.now().UTC()
	var events []feed.Event
	var skipped int
	for {
		resp, err := p.fetch(ctx, f.URL, allow, kept)
		if err != nil {
			return nil, false, err
		}
		if resp.StatusCode == http.StatusNotModified {
			_ = resp.Body.Close()
			if kept == nil {
				return nil, false, errors.New("the feed answered HTTP 304 to a request without validators")
			}
			full, err := p.Store.LastFetched(ctx, f.ID, true)
			if err != nil {
				return nil, false, fmt.Errorf("reading the feed's last answer: %w", err)
			}
			if full == nil || full.URL != f.URL || full.ETag != kept.ETag || full.LastModified != kept.LastModified {
				// The kept answer is not the one validated (it cannot change while this
				// poll holds the feed, but never sync events that may not be the file's):
				// ask for the whole file.
				kept = nil
				continue
			}
			events, skipped = full.Events, full.Skipped
			break
		}
		fetched, err = p.read(resp, today)
		if err != nil {
			return nil, false, err
		}
		events, skipped = fetched.Events, fetched.Skipped
		break
	}
	synced := feed.Window(events, today)
	// booking-svc answers "complete": false when it stopped at its deadline after making
	// progress: the same sync goes on from there, sent again while the poll has time.
	res, err := p.Booking.Sync(ctx, f.AccountID, f, synced)
	for n := 0; err == nil && res.Incomplete && n < MaxContinuations && time.Now().Before(syncBy); n++ {
		res, err = p.Booking.Sync(ctx, f.AccountID, f, synced)
	}
	if err != nil {
		return nil, false, fmt.Errorf("writing the feed's blocks: %w", err)
	}
	f.Status.EventsImported, f.Status.EventsSkipped = len(synced), skipped
	f.Status.NightsBlocked = res.NightsBlocked
	if res.Conflicts == nil {
		res.Conflicts = []feed.Conflict{}
	}
	f.Status.Conflicts = res.Conflicts
	if res.Incomplete {
		// Conflicts are raised once the sync is whole.
		return fetched, true, nil
	}
	if err := p.report(ctx, f); err != nil {
		return nil, false, err
	}
	return fetched, false, nil
}

// fetch requests the feed's link, conditionally when kept has validators. A 200 or a 304
// is answered (the caller closes the body); anything else is an error.
func (p *Poller) fetch(ctx context.Context, link string, allow bool, kept *feed.Fetched) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return nil, fmt.Errorf("the feed link: %w", err)
	}
	req.Header.Set("Accept", "text/calendar, */*;q=0.5")
	req.Header.Set("User-Agent", "vros-ical-import/1")
	if kept != nil && kept.ETag != "" {
		req.Header.Set("If-None-Match", kept.ETag)
	}
	if kept != nil && kept.LastModified != "" {
		req.Header.Set("If-Modified-Since", kept.LastModified)
	}
	resp, err := p.client(allow).Do(req)
	if err != nil {
		if targets.IsForbidden(err) {
			return nil, errors.New("the feed link resolves to a private, loopback or link-local address")
		}
		return nil, fmt.Errorf("fetching the feed: %w", err)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotModified {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("the feed answered HTTP %d", resp.StatusCode)
	}
	return resp, nil
}

// read reads and parses a 200 answer (closing its body) into the answer to keep.
func (p *Poller) read(resp *http.Response, today time.Time) (*feed.Fetched, error) {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, p.Cfg.MaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading the feed: %w", err)
	}
	if int64(len(body)) > p.Cfg.MaxBody {
		return nil, fmt.Errorf("feed larger than %s", sizeText(p.Cfg.MaxBody))
	}
	cal, err := feed.Parse(body, today)
	if err != nil {
		return nil, err
	}
	if cal.Events == nil {
		cal.Events = []feed.Event{}
	}
	return &feed.Fetched{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"),
		Events: cal.Events, Skipped: cal.Skipped, At: p.now().UTC()}, nil
}

// report raises an ical.conflict event for each conflict not raised before in its
// occurrence. The feed keeps the current conflicts, each since the poll that first found it
// (the occurrence, part of the event id) and whether it was raised; one that goes and
// comes back is a new occurrence. A conflict whose event could not be raised is kept with
// its time, so the next poll raises it again under the same id.
func (p *Poller) report(ctx context.Context, f *feed.Feed) error {
	before := map[string]feed.SeenConflict{}
	for _, c := range f.SeenConflicts() {
		before[c.Key] = c
	}
	now := p.now().UTC().Truncate(time.Millisecond)
	seen := []feed.SeenConflict{}
	done := map[string]bool{}
	var failed error
	for _, c := range f.Status.Conflicts {
		k := c.Key()
		if done[k] {
			continue
		}
		done[k] = true
		s, ok := before[k]
		if !ok {
			s = feed.SeenConflict{Key: k, Since: now}
		}
		if !s.Raised && failed == nil {
			data, err := json.Marshal(conflictData{PropertyID: f.PropertyID, FeedID: f.FeedID, UID: c.UID,
				StartDate: c.StartDate, EndDate: c.EndDate, BookingIDs: c.BookingIDs})
			if err != nil {
				return err
			}
			err = p.Hooks.Emit(ctx, webhook.Event{ID: s.EventID(f.FeedID), Account: f.AccountID,
				Type: "ical.conflict", PropertyID: f.PropertyID, At: p.now().UTC(), Data: data})
			if err != nil {
				failed = fmt.Errorf("raising ical.conflict: %w", err)
			} else {
				s.Raised = true
			}
		}
		seen = append(seen, s)
	}
	f.Seen, f.Reported = seen, nil
	return failed
}

type conflictData struct {
	PropertyID int64   `json:"property_id"`
	FeedID     int64   `json:"feed_id"`
	UID        string  `json:"uid"`
	StartDate  string  `json:"start_date"`
	EndDate    string  `json:"end_date"`
	BookingIDs []int64 `json:"booking_ids"`
}

func sizeText(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
