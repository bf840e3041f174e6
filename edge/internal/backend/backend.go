// Package backend calls the services' internal account routes on behalf of the operator
// (usage, export, erasure; docs/erasure.md), with the account's signed tenant context as
// edge signs forwarded requests.
package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vros/vros/libs/tenancy"
)

// Service names, as the services call themselves in their exports.
const (
	PropertySvc = "property-svc"
	BookingSvc  = "booking-svc"
	// IntegrationSvc holds the account's integration settings (the private-targets switch)
	// and its channel connections.
	IntegrationSvc = "integration-svc"
)

// Client calls property-svc and booking-svc.
type Client struct {
	urls   map[string]string // by service name; "" when not deployed
	signer *tenancy.Signer
	http   *http.Client
}

// New returns a client of the services at urls (by service name).
func New(urls map[string]string, signer *tenancy.Signer) *Client {
	clean := map[string]string{}
	for k, v := range urls {
		clean[k] = strings.TrimRight(v, "/")
	}
	// No overall timeout: an export streams as long as the account is large; each call's
	// context bounds it instead.
	return &Client{urls: clean, signer: signer, http: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
}

// Error is a service that did not answer, or answered with an error: the admin API answers
// 502 naming it.
type Error struct {
	Service string
	// Status is the service's HTTP status (0 when it did not answer).
	Status int
	Detail string
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("%s did not answer: %s", e.Service, e.Detail)
	}
	return fmt.Sprintf("%s answered HTTP %d: %s", e.Service, e.Status, e.Detail)
}

// Timeout bounds the calls other than an export.
const Timeout = 30 * time.Second

// do sends method path (with the query) to service for account, and returns the answer
// when it is a 200; the caller closes its body.
func (c *Client) do(ctx context.Context, service, method, path string, query url.Values, body []byte, account string) (*http.Response, error) {
	base := c.urls[service]
	if base == "" {
		return nil, &Error{Service: service, Detail: "not deployed (no URL configured)"}
	}
	target := path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+target, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.signer.SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: account}, method, target, body, time.Now())
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &Error{Service: service, Detail: err.Error()}
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, &Error{Service: service, Status: resp.StatusCode, Detail: message(resp.Body)}
	}
	return resp, nil
}

// message is the message of a service's error answer (its error envelope's), or its start.
func message(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 4<<10))
	var env struct {
		ErrorMessage string `json:"error_message"`
		Message      string `json:"message"`
		Error        string `json:"error"`
	}
	if json.Unmarshal(b, &env) == nil {
		for _, m := range []string{env.ErrorMessage, env.Message, env.Error} {
			if m != "" {
				return m
			}
		}
	}
	return strings.TrimSpace(string(b))
}

// callJSON calls and decodes a JSON answer into out.
func (c *Client) callJSON(ctx context.Context, service, method, path string, query url.Values, body []byte, account string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	resp, err := c.do(ctx, service, method, path, query, body, account)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out); err != nil {
		return &Error{Service: service, Status: resp.StatusCode, Detail: "answer is not the JSON expected: " + err.Error()}
	}
	return nil
}

// Usage is the service's usage figures of account within [from, to): its JSON object,
// member by member.
func (c *Client) Usage(ctx context.Context, service, account string, from, to time.Time) (map[string]json.RawMessage, error) {
	q := url.Values{"from": {from.UTC().Format(time.RFC3339)}, "to": {to.UTC().Format(time.RFC3339)}}
	var out map[string]json.RawMessage
	if err := c.callJSON(ctx, service, http.MethodGet, "/internal/account/usage", q, nil, account, &out); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, &Error{Service: service, Status: http.StatusOK, Detail: "answer is not a JSON object"}
	}
	return out, nil
}

// Export copies the service's export zip of account to w.
func (c *Client) Export(ctx context.Context, service, account string, w io.Writer) error {
	resp, err := c.do(ctx, service, http.MethodGet, "/internal/account/export", nil, nil, account)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &Error{Service: service, Status: resp.StatusCode, Detail: "export cut short: " + err.Error()}
	}
	return nil
}

// EraseAccount asks property-svc to erase the account, which starts the erasure event every
// other service and view follows (account.Eraser). It is idempotent.
func (c *Client) EraseAccount(ctx context.Context, account string) error {
	var out struct {
		Erased bool `json:"erased"`
	}
	if err := c.callJSON(ctx, PropertySvc, http.MethodPost, "/internal/account/erase", nil, []byte("{}"), account, &out); err != nil {
		return err
	}
	if !out.Erased {
		return &Error{Service: PropertySvc, Status: http.StatusOK, Detail: `answer does not say {"erased":true}`}
	}
	return nil
}

// GuestErasure is booking-svc's count of the records in which a guest was anonymised.
type GuestErasure struct {
	Bookings int `json:"bookings"`
	Users    int `json:"users"`
}

// EraseGuest asks booking-svc to anonymise the guest of email in every record of account.
func (c *Client) EraseGuest(ctx context.Context, account, email string) (GuestErasure, error) {
	body, err := json.Marshal(map[string]string{"email": email})
	if err != nil {
		return GuestErasure{}, err
	}
	var out GuestErasure
	err = c.callJSON(ctx, BookingSvc, http.MethodPost, "/internal/account/guests/erase", nil, body, account, &out)
	return out, err
}

// Integrations is an account's integration settings in integration-svc.
type Integrations struct {
	AllowPrivateTargets bool `json:"allow_private_targets"`
}

// Integrations reads the account's integration settings from integration-svc.
func (c *Client) Integrations(ctx context.Context, account string) (Integrations, error) {
	var out Integrations
	err := c.callJSON(ctx, IntegrationSvc, http.MethodGet, "/internal/account/integrations", nil, nil, account, &out)
	return out, err
}

// SetIntegrations writes the account's integration settings to integration-svc and returns
// them as it answers.
func (c *Client) SetIntegrations(ctx context.Context, account string, in Integrations) (Integrations, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return Integrations{}, err
	}
	var out Integrations
	err = c.callJSON(ctx, IntegrationSvc, http.MethodPut, "/internal/account/integrations", nil, body, account, &out)
	return out, err
}

// ChannelConnection is one of an account's connections to a channel manager as
// integration-svc reports it for the operator (docs/channels.md): never its credentials.
type ChannelConnection struct {
	ConnectionID   int64     `json:"connection_id"`
	Adapter        string    `json:"adapter"`
	Endpoint       string    `json:"endpoint"`
	Channel        string    `json:"channel"`
	Enabled        bool      `json:"enabled"`
	Days           int       `json:"days"`
	CredentialsSet bool      `json:"credentials_set"`
	Mappings       int       `json:"mappings"`
	OpenConflicts  int       `json:"open_conflicts"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// Channels reads the account's channel connections, with their mapping counts and open
// conflicts, from integration-svc.
func (c *Client) Channels(ctx context.Context, account string) ([]ChannelConnection, error) {
	var out struct {
		Connections []ChannelConnection `json:"connections"`
	}
	err := c.callJSON(ctx, IntegrationSvc, http.MethodGet, "/internal/account/channels", nil, nil, account, &out)
	if out.Connections == nil {
		out.Connections = []ChannelConnection{}
	}
	return out.Connections, err
}

// IsServiceError reports whether err is a service's failure (Error), and which.
func IsServiceError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
