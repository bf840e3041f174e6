package poller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vros/vros/integration-svc/internal/bookingsvc"
	"github.com/vros/vros/integration-svc/internal/ical/feed"
	"github.com/vros/vros/libs/tenancy"
)

// ErrNoProperty: booking-svc knows no such property of the account.
var ErrNoProperty = errors.New("no such property")

// ErrFeedGone: booking-svc removed the feed (HTTP 410).
var ErrFeedGone = errors.New("the feed was removed")

// ErrIncomplete: booking-svc stopped a final sync early ("complete": false); the feed's
// blocks are not all removed yet, and the same final sync should be sent again.
var ErrIncomplete = errors.New("booking-svc has not finished removing the feed's blocks")

// SyncResult is booking-svc's answer to a feed sync.
type SyncResult struct {
	NightsBlocked int             `json:"nights_blocked"`
	Conflicts     []feed.Conflict `json:"conflicts"`
	// Incomplete: booking-svc stopped early (its deadline) after making progress, and the
	// same sync should be sent again at once to go on (its answer "complete": false).
	Incomplete bool `json:"-"`
}

// Booking is what the import needs of booking-svc.
type Booking interface {
	// PropertyID resolves an internal code of the account (ErrNoProperty when unknown).
	PropertyID(ctx context.Context, account, internalCode string) (int64, error)
	// Sync makes the feed's blocks exactly its events' free nights (none: every block of
	// the feed removed). ErrFeedGone: booking-svc removed the feed (a final sync).
	Sync(ctx context.Context, account string, f *feed.Feed, events []feed.Event) (SyncResult, error)
	// Remove is a deleted feed's final sync: booking-svc removes the feed's blocks and
	// answers every later sync of the feed 410 (ErrFeedGone). ErrFeedGone and
	// ErrNoProperty mean the blocks are gone too; ErrIncomplete, that booking-svc stopped
	// early and the same final sync must be sent again.
	Remove(ctx context.Context, account string, f *feed.Feed) error
}

// BookingClient calls booking-svc's internal iCal routes with a signed tenant context.
type BookingClient struct {
	*bookingsvc.Client
}

// NewBookingClient returns a client of booking-svc at base.
func NewBookingClient(base string, signer *tenancy.Signer, timeout time.Duration) *BookingClient {
	return &BookingClient{Client: bookingsvc.New(base, signer, timeout)}
}

// PropertyID implements Booking.
func (b *BookingClient) PropertyID(ctx context.Context, account, code string) (int64, error) {
	var out struct {
		PropertyID int64 `json:"property_id"`
	}
	_, err := b.do(ctx, account, http.MethodGet, "/internal/ical/property", "internal_code="+url.QueryEscape(code), nil, &out)
	return out.PropertyID, err
}

type syncRequest struct {
	PropertyID int64        `json:"property_id"`
	FeedID     int64        `json:"feed_id"`
	Name       string       `json:"name"`
	Events     []feed.Event `json:"events"`
	Final      bool         `json:"final,omitempty"`
}

// Remove implements Booking: the sync with no events and "final": true; ErrIncomplete
// when booking-svc stopped it early.
func (b *BookingClient) Remove(ctx context.Context, account string, f *feed.Feed) error {
	res, err := b.sync(ctx, account, f, nil, true)
	if err == nil && res.Incomplete {
		return ErrIncomplete
	}
	return err
}

// Sync implements Booking.
func (b *BookingClient) Sync(ctx context.Context, account string, f *feed.Feed, events []feed.Event) (SyncResult, error) {
	return b.sync(ctx, account, f, events, false)
}

func (b *BookingClient) sync(ctx context.Context, account string, f *feed.Feed, events []feed.Event, final bool) (SyncResult, error) {
	if events == nil {
		events = []feed.Event{}
	}
	body, err := json.Marshal(syncRequest{PropertyID: f.PropertyID, FeedID: f.FeedID, Name: f.Name, Events: events, Final: final})
	if err != nil {
		return SyncResult{}, err
	}
	var out struct {
		SyncResult
		Complete *bool `json:"complete"`
	}
	status, err := b.do(ctx, account, http.MethodPost, "/internal/ical/sync", "", body, &out)
	if status == http.StatusGone {
		return SyncResult{}, ErrFeedGone
	}
	if err != nil {
		return SyncResult{}, err
	}
	out.Incomplete = out.Complete != nil && !*out.Complete
	return out.SyncResult, nil
}

// do calls booking-svc and decodes a 200 answer into out; any other status is an error
// carrying booking-svc's message, ErrNoProperty for booking-svc's own "property … does not
// exist" 404. Any other 404 (a route missing during a rolling deploy, a proxy's) is an
// ordinary error: taken for "no such property", a delete would drop a feed whose blocks
// are still there.
func (b *BookingClient) do(ctx context.Context, account, method, path, query string, body []byte, out any) (int, error) {
	status, data, err := b.Do(ctx, account, method, path, query, body)
	if err != nil {
		return status, err
	}
	if status != http.StatusOK {
		var e struct {
			Type    string `json:"error_type"`
			Message string `json:"error_message"`
		}
		_ = json.Unmarshal(data, &e)
		if status == http.StatusNotFound && e.Type == "not_found" &&
			strings.HasPrefix(e.Message, "property ") && strings.HasSuffix(e.Message, " does not exist") {
			return status, ErrNoProperty
		}
		return status, fmt.Errorf("booking-svc answered %d: %s", status, e.Message)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return status, fmt.Errorf("booking-svc: %w", err)
	}
	return status, nil
}
