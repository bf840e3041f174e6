package hooks

import (
	"context"
	"errors"
	"time"

	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
)

// The ports of the webhook domain: what it needs kept, declared here and implemented by
// internal/webhooks/store over MongoDB. The domain, the HTTP adapter and the deliverer see
// these interfaces and ErrNotFound, never the store.

// ErrNotFound: the account has no such endpoint or delivery.
var ErrNotFound = errors.New("not found")

// EndpointRepository keeps the accounts' endpoints (their subscriptions). Every write of a
// stored endpoint goes through ModifyEndpoint, under the endpoint's lease.
type EndpointRepository interface {
	// NextID hands out a new endpoint id.
	NextID(ctx context.Context) (int64, error)
	// CountEndpoints is the number of endpoints of the account.
	CountEndpoints(ctx context.Context, account string) (int64, error)
	// AddEndpoint stores a new endpoint.
	AddEndpoint(ctx context.Context, e webhook.Endpoint) error
	// Endpoint reads one endpoint of the account; ErrNotFound when it has none of that id.
	Endpoint(ctx context.Context, account string, id int64) (webhook.Endpoint, error)
	// EndpointCached is Endpoint read at most maxAge ago by this process and not written
	// by it since (the deliverer's read).
	EndpointCached(ctx context.Context, account string, id int64, maxAge time.Duration) (webhook.Endpoint, error)
	// ListEndpoints lists the account's endpoints by id (brand > 0: that brand's only).
	ListEndpoints(ctx context.Context, account string, brand int64) ([]webhook.Endpoint, error)
	// ModifyEndpoint applies change to the endpoint as stored and writes the result unless
	// change reports that it changed nothing; enabling or disabling it releases or holds
	// its queued deliveries. It returns the endpoint as it is then, and whether it changed.
	ModifyEndpoint(ctx context.Context, account string, id int64, now time.Time,
		change func(e *webhook.Endpoint) bool) (webhook.Endpoint, bool, error)
	// DeleteEndpoint deletes the endpoint, its deliveries and their attempts.
	DeleteEndpoint(ctx context.Context, account string, id int64) error
	// Streak fills in e's failure streak from the attempt log.
	Streak(ctx context.Context, e webhook.Endpoint) (webhook.Endpoint, error)
	// Succeeded records the time of a successful attempt (ends the failure streak).
	Succeeded(ctx context.Context, account string, id int64, at time.Time) error
	// Failed is the endpoint after a failed attempt, its streak filled in.
	Failed(ctx context.Context, account string, id int64) (webhook.Endpoint, error)
	// Disable disables the endpoint for reason and holds its deliveries if it is still as
	// seen; notice is kept on it until NoticeRecorded. False when it was not (or is gone).
	Disable(ctx context.Context, account string, id int64, at time.Time, reason string, seen webhook.Endpoint, notice webhook.Event) (bool, error)
	// PendingNotices lists the disabled endpoints whose notice is not recorded yet.
	PendingNotices(ctx context.Context) ([]webhook.Endpoint, error)
	// NoticeRecorded clears the endpoint's pending notice msg.
	NoticeRecorded(ctx context.Context, account string, id int64, msg string) error
}

// DeliveryRepository keeps the deliveries of events to endpoints: the delivery log, the
// queue of pending ones in lanes (one per endpoint and property, sent in order) and the
// attempt log.
type DeliveryRepository interface {
	// AddDeliveries records event e for each endpoint, once; deliveries to a disabled
	// endpoint wait (held).
	AddDeliveries(ctx context.Context, e webhook.Event, to []webhook.Endpoint, now time.Time) error
	// ListDeliveries lists an endpoint's deliveries, newest first, with their attempts by
	// message id; ErrNotFound when f.Before names no delivery of it.
	ListDeliveries(ctx context.Context, account string, webhookID int64, f DeliveryFilter) ([]webhook.Delivery, map[string][]webhook.Attempt, error)
	// Redeliver makes the endpoint's deliveries of message msg (or, msg empty, created in
	// [from, to)) pending again, due now (held: hold); it returns how many. ErrNotFound
	// when msg names no delivery of it.
	Redeliver(ctx context.Context, account string, webhookID int64, msg string, from, to time.Time, hold bool, now time.Time) (int64, error)
	// Data reads a delivery's stored payload data; ErrNotFound when it is gone.
	Data(ctx context.Context, d webhook.Delivery) ([]byte, error)

	// DueLanes returns at most limit lanes not held whose time has come, the longest
	// waiting first, leaving out the endpoints in busy (account:webhook keys).
	DueLanes(ctx context.Context, now time.Time, busy []string, limit int64) ([]DueLane, error)
	// LaneHead returns the lane's oldest queued delivery, held or not; false when none.
	LaneHead(ctx context.Context, lane string) (Due, bool, error)
	// SetLaneNext makes the lane's rounds wait until at (held: hold).
	SetLaneNext(ctx context.Context, lane string, at time.Time, hold bool) error
	// LaneDone removes the lane's schedule once it has no queued delivery.
	LaneDone(ctx context.Context, lane string) error
	// Lease claims a pending delivery until until; false when it is no longer pending,
	// held, leased by another or tried since it was read. The delivery carries its data.
	Lease(ctx context.Context, d Due, now, until time.Time) (webhook.Delivery, bool, error)
	// Finish records attempt a of leased delivery d and its outcome: delivered (ok),
	// retried at next, or failed (next nil), releasing the lease.
	Finish(ctx context.Context, d webhook.Delivery, a webhook.Attempt, ok bool, next *time.Time) error
	// Hold holds one delivery (its endpoint turned out disabled at send time).
	Hold(ctx context.Context, d webhook.Delivery) error
	// Release gives up a lease without an attempt; the delivery is due again at next.
	Release(ctx context.Context, d webhook.Delivery, next time.Time) error
	// Drop deletes a delivery whose endpoint no longer exists.
	Drop(ctx context.Context, d webhook.Delivery) error
	// BackfillQueue queues every pending delivery that has no queue entry; idempotent.
	BackfillQueue(ctx context.Context) error
	// RepairHolds schedules lanes that lost their schedule, releases the held deliveries of
	// enabled endpoints and drops those of deleted ones; it returns how many it repaired.
	RepairHolds(ctx context.Context, now time.Time) (int, error)
}

// BrandRepository reads the account's brands as its settings last said.
type BrandRepository interface {
	// BrandProperties maps each brand of the account to its properties (none listed: all).
	BrandProperties(ctx context.Context, account string) (map[int64][]int64, error)
}

// AccountRepository keeps the operator's per-account switch for private targets.
type AccountRepository interface {
	// AllowsPrivate reports the account's switch (off unless an operator turned it on).
	AllowsPrivate(ctx context.Context, account string) (bool, error)
	// SetAllowsPrivate sets the account's switch.
	SetAllowsPrivate(ctx context.Context, account string, allow bool) error
}

// Repository is every port of the webhook domain, as one store implements them.
type Repository interface {
	EndpointRepository
	DeliveryRepository
	BrandRepository
	AccountRepository
}

// DeliveryFilter selects an endpoint's deliveries for the log.
type DeliveryFilter struct {
	Status   string
	From, To *time.Time
	Limit    int64
	Before   string // a message id: only deliveries created before it
}

// Due is a queued delivery, with its lane and scheduling state.
type Due struct {
	webhook.Delivery
	Lane       string
	Hold       bool
	LeaseUntil time.Time
}

// DueLane is a lane whose head may be sent now.
type DueLane struct {
	Lane      string
	Account   string
	WebhookID int64
}
