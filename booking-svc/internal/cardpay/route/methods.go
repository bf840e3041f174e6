package route

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/libs/tenancy"
)

// PropertyMethods reads a property's payment methods from property-svc, which alone keeps
// their secrets (sealed at rest, never on Kafka): the getpayment action of its internal
// interface B, signed with booking-svc's own key (tenancy.CallerBooking), which property-svc
// accepts on that route alone.
type PropertyMethods struct {
	URL    string // property-svc's base URL
	Signer *tenancy.Signer
	Client *http.Client
}

// statusNoProperty is interface B's status of an unknown property.
const statusNoProperty = 16

// Stripe returns the property's Stripe method: getpayment's `stripe` entry, its
// `secret_key` and `publishable_key`.
func (p PropertyMethods) Stripe(ctx context.Context, account string, propertyID int64) (StripeMethod, bool, error) {
	const path = "/internal/b/getpayment"
	body := []byte(`{"propertyId":` + strconv.FormatInt(propertyID, 10) + `}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL+path, bytes.NewReader(body))
	if err != nil {
		return StripeMethod{}, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	p.Signer.SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: account}, http.MethodPost, path, body, time.Now())
	resp, err := p.Client.Do(req)
	if err != nil {
		return StripeMethod{}, false, fmt.Errorf("property-svc getpayment: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return StripeMethod{}, false, fmt.Errorf("property-svc getpayment: %w", err)
	}
	var answer struct {
		Status  int    `json:"status"`
		Message string `json:"message"`
		Data    map[string]struct {
			SecretKey      string `json:"secret_key"`
			PublishableKey string `json:"publishable_key"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return StripeMethod{}, false, fmt.Errorf("property-svc getpayment: HTTP %d: %w", resp.StatusCode, err)
	}
	switch {
	case answer.Status == statusNoProperty:
		return StripeMethod{}, false, nil
	case answer.Status != 0:
		return StripeMethod{}, false, fmt.Errorf("property-svc getpayment: status %d: %s", answer.Status, answer.Message)
	}
	s, ok := answer.Data["stripe"]
	if !ok || s.SecretKey == "" {
		return StripeMethod{}, false, nil
	}
	return StripeMethod{SecretKey: config.Secret(s.SecretKey), PublishableKey: s.PublishableKey}, true, nil
}
