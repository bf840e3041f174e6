// Package bookingsvc reads bookings from booking-svc as messaging-svc: every request carries
// the account's tenant context signed with messaging-svc's own key (libs/tenancy; booking-svc
// accepts it on GET /internal/hooks/booking/:id alone, api.MessagingRoutes,
// docs/internal-auth.md). A message's guest and the booking's content are read here when the
// message is composed, so that messaging-svc keeps no guest data (docs/messaging.md).
package bookingsvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vros/vros/libs/tenancy"
)

// MaxAnswer is the most of an answer read (a booking is well within it).
const MaxAnswer = 4 << 20

// ErrNotFound: the account has no reserved or cancelled booking with that id (never made,
// or erased with its guest or its account).
var ErrNotFound = errors.New("booking-svc has no such booking")

// Client is booking-svc at Base, called as Signer.
type Client struct {
	Base   string // booking-svc's internal base URL
	Signer *tenancy.Signer
	HTTP   *http.Client
	// Now is the signature's clock (time.Now when nil). booking-svc checks it against its own
	// within tenancy.MaxSkew: a test clock far from the wall's must not reach it.
	Now func() time.Time
}

// New returns a client of booking-svc at base, signing with signer, whose calls time out
// after timeout.
func New(base string, signer *tenancy.Signer, timeout time.Duration) *Client {
	return &Client{Base: strings.TrimRight(base, "/"), Signer: signer, HTTP: &http.Client{Timeout: timeout}}
}

// Booking reads the account's booking id: ErrNotFound when booking-svc has none; any other
// error is temporary (booking-svc unreachable or failing) and the caller tries again later.
func (c *Client) Booking(ctx context.Context, account string, id int64) (Booking, error) {
	path := "/internal/hooks/booking/" + strconv.FormatInt(id, 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Base+path, nil)
	if err != nil {
		return Booking{}, err
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	c.Signer.SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: account}, http.MethodGet, path, nil, now())
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Booking{}, fmt.Errorf("booking-svc: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer))
	if err != nil {
		return Booking{}, fmt.Errorf("booking-svc: %w", err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return Booking{}, ErrNotFound
	default:
		return Booking{}, fmt.Errorf("booking-svc: HTTP %d: %s", resp.StatusCode, snippet(body))
	}
	var out struct {
		Booking *Booking `json:"booking"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return Booking{}, fmt.Errorf("booking-svc: reading the booking: %w", err)
	}
	if out.Booking == nil || out.Booking.BookingID != id {
		return Booking{}, fmt.Errorf("booking-svc: the answer holds no booking %d", id)
	}
	return *out.Booking, nil
}

// snippet is the start of an answer, for an error.
func snippet(b []byte) string {
	const most = 200
	if len(b) > most {
		b = b[:most]
	}
	return strings.TrimSpace(string(b))
}
