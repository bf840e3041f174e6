package channex

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
)

// webhook is Channex's webhook body (docs.channex.io api-v.1-documentation/webhook-collection):
// {"event":…,"payload":{…},"property_id":…,"timestamp":…,"user_id":…}. Only event is
// required; the revisions are always read from the feed, never from the payload.
type webhook struct {
	Event   *string         `json:"event"`
	Payload json.RawMessage `json:"payload"`
}

// Receive reads Channex's webhook: a booking event (booking, booking_new,
// booking_modification, booking_cancellation, non_acked_booking, booking_unmapped_*) asks
// for a pull of the feed; any other event is taken and ignored. Channex's webhooks carry no
// credentials: the inbound token is the capability.
func (a *Adapter) Receive(_ context.Context, _ channel.Connection, body []byte) (channel.Inbound, error) {
	in := channel.Inbound{Kind: channel.KindWebhook}
	var w webhook
	if err := json.Unmarshal(body, &w); err != nil {
		return in, &channel.InboundError{Field: "body", Message: "not a JSON object: " + err.Error()}
	}
	if w.Event == nil || strings.TrimSpace(*w.Event) == "" {
		return in, &channel.InboundError{Field: "event", Message: "missing"}
	}
	if p := strings.TrimSpace(string(w.Payload)); p != "" && p != "null" && !strings.HasPrefix(p, "{") && !strings.HasPrefix(p, "[") {
		return in, &channel.InboundError{Field: "payload", Message: "not an object"}
	}
	ev := *w.Event
	in.Pull = strings.HasPrefix(ev, "booking") || ev == "non_acked_booking"
	return in, nil
}

// Reply answers 200 {"data":{"status":"received"}} once the pull is marked, or 503 (Channex
// retries the webhook) when it could not be.
func (a *Adapter) Reply(_ channel.Inbound, _ []channel.Applied, err error) (string, []byte, int) {
	var ie *channel.InboundError
	switch {
	case errors.As(err, &ie):
		// An unreadable webhook is refused for good: retrying it cannot help.
		body, _ := json.Marshal(map[string]any{"errors": map[string]string{"code": "validation_error", "title": ie.Error()}})
		return "application/json", body, http.StatusBadRequest
	case err != nil:
		return "application/json", []byte(`{"errors":{"code":"service_unavailable","title":"Service Unavailable"}}`), http.StatusServiceUnavailable
	}
	return "application/json", []byte(`{"data":{"status":"received"}}`), http.StatusOK
}
