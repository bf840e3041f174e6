// Package bookingsvc calls booking-svc's internal routes as integration-svc: every request
// carries the account's tenant context signed with integration-svc's own key (libs/tenancy;
// booking-svc accepts it on api.IntegrationRoutes alone, docs/internal-auth.md). The iCal
// poller's BookingClient and the channel reservations' client are built on it.
package bookingsvc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/vros/vros/libs/tenancy"
)

// MaxAnswer is the most of an answer read (booking-svc keeps its answers well within it).
const MaxAnswer = 8 << 20

// Client is booking-svc at Base, called as Signer.
type Client struct {
	Base   string // booking-svc's internal base URL
	Signer *tenancy.Signer
	HTTP   *http.Client
}

// New returns a client of booking-svc at base whose calls time out after timeout.
func New(base string, signer *tenancy.Signer, timeout time.Duration) *Client {
	return &Client{Base: strings.TrimRight(base, "/"), Signer: signer, HTTP: &http.Client{Timeout: timeout}}
}

// Do sends method path?query with body (nil: none; otherwise JSON) for account and answers
// the status and the body. An error means no answer was read (the status is then 0, or the
// status of an answer whose body broke off).
func (c *Client) Do(ctx context.Context, account, method, path, query string, body []byte) (int, []byte, error) {
	target := path
	if query != "" {
		target += "?" + query
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+target, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.Signer.SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: account}, method, target, body, time.Now())
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("booking-svc: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("booking-svc: %w", err)
	}
	return resp.StatusCode, data, nil
}
