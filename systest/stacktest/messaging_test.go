package stacktest

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/libs/tenancy"
	messaging "github.com/vros/vros/messaging-svc/service"
	"github.com/vros/vros/systest/apitest"
	poll "github.com/vros/vros/testkit/eventually"
)

// TestMessagingService: the stack runs messaging-svc as its sixth service (Options.Messaging
// adjusts its configuration, it is ready on its internal port), StopMessaging and
// StartMessaging stop and start it alone, booking-svc answers a booking made through edge to
// messaging-svc's key (the read a message is composed from) and refuses that key anywhere
// else, and edge routes the messaging resources to it (a preview of that booking). With
// NoMessaging the stack runs without it and edge routes to Options.MessagingURL.
func TestMessagingService(t *testing.T) {
	ctx := context.Background()
	key, keys := seal.NewKey(), stack.NewKeys()
	var adjusted atomic.Bool
	st, db, err := apitest.StartStack(ctx, stack.Options{Keys: keys, EncryptionKey: key,
		AdminToken: adminToken, LogLevel: "error", PasswordCost: 4,
		Messaging: func(c *messaging.Config) {
			adjusted.Store(c.BookingURL != "" && c.ConsumerGroup == "messaging-svc" && c.Rate == 60 && c.EncryptionKey.Reveal() == key &&
				c.InternalKeys.Messaging == keys.Messaging && c.InternalKeys.Edge == keys.Edge && c.InternalKeys.Booking == "")
			c.Poll = 100 * time.Millisecond
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = db.Disconnect(ctx)
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	}()
	if !adjusted.Load() {
		t.Error("Options.Messaging did not see the stack's settings and the documented defaults")
	}
	if st.MessagingURL == "" || st.MessagingInternalURL == "" {
		t.Fatalf("no messaging-svc URLs: %q %q", st.MessagingURL, st.MessagingInternalURL)
	}
	c := &http.Client{Timeout: 30 * time.Second}
	ready := func(what string) {
		t.Helper()
		if r, err := apitest.Send(c, http.MethodGet, st.MessagingInternalURL+"/readyz", nil, ""); err != nil || r.Code != http.StatusOK {
			t.Fatalf("%s: messaging-svc /readyz: %v %d", what, err, r.Code)
		}
	}
	ready("started")
	st.StopMessaging()
	if _, err := apitest.Send(c, http.MethodGet, st.MessagingInternalURL+"/readyz", nil, ""); err == nil {
		t.Error("messaging-svc stopped: /readyz still answers")
	}
	if err := st.StartMessaging(ctx); err != nil {
		t.Fatal(err)
	}
	ready("started again")

	// A booking made through edge, read back from booking-svc as messaging-svc reads it.
	acc, err := apitest.NewAccountOf(c, st.EdgeURL, adminToken, "Messages", true)
	if err != nil {
		t.Fatal(err)
	}
	acc.EdgeURL = st.EdgeURL
	postA := func(resource string, body any) []byte {
		t.Helper()
		r, err := apitest.Send(c, http.MethodPost, st.EdgeURL+"/api/"+resource, acc.AHeaders(), apitest.JSON(body))
		if err != nil || r.Code != http.StatusOK {
			t.Fatalf("%s: %v HTTP %d %s", resource, err, r.Code, r.Body)
		}
		return r.Body
	}
	var created struct {
		Data struct {
			PropertyID string `json:"property_id"`
		} `json:"data"`
	}
	_ = json.Unmarshal(postA("property", map[string]any{"action": "create", "property": map[string]any{
		"internal_code": "MSG1", "name": "Messaging Test Villa by the Sea", "type": "Villa", "brief": strings.Repeat("Quiet. ", 60),
		"maxguest": 6, "bedrooms": 3, "bathrooms": 2, "kitchens": 1, "floor": "Ground",
		"space": map[string]any{"value": 140, "unit": "meters"}, "phone": "3055550100", "address": "1 Ocean Drive",
		"city": "Miami Beach", "state": "FL", "postcode": "33139", "country": "US", "latitude": 25.79, "longitude": -80.13,
		"allowchildren": true, "allowpet": false, "allowsmoking": false, "timezone": "Europe/Rome"}}), &created)
	pid, err := strconv.Atoi(created.Data.PropertyID)
	if err != nil {
		t.Fatalf("property id %q", created.Data.PropertyID)
	}
	postA("property-rate", map[string]any{"internal_code": "MSG1", "rate": map[string]any{"daily_price": 100, "minimum_stay": 1},
		"setting": map[string]any{"standard_occupants": 6, "accept_booking_upto": 12, "advanced_notice_booking_from": "0"}})
	id := acc.AccountID + ":" + created.Data.PropertyID
	var prop bson.M
	if err := db.Database("vros_property").Collection("properties").FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&prop); err != nil {
		t.Fatal(err)
	}
	poll.Holds(t, "booking-svc prices the property", time.Minute, func() bool {
		var doc bson.M
		err := db.Database("vros_booking").Collection("view_properties").FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc)
		return err == nil && doc["version"] == prop["version"]
	})
	r, err := apitest.Send(c, http.MethodPost, st.EdgeURL+"/vros/external-booking", nil, acc.BBody("create", apitest.CardGuest(pid, 30, 33, "Messaged", true)))
	var b struct {
		Status int `json:"status"`
		Data   struct {
			BookingID int64 `json:"bookingId"`
		} `json:"data"`
	}
	if err != nil || json.Unmarshal(r.Body, &b) != nil || b.Status != 0 || b.Data.BookingID == 0 {
		t.Fatalf("create a booking: %v HTTP %d %s", err, r.Code, r.Body)
	}

	read := func(signer *tenancy.Signer, path string) apitest.Response {
		t.Helper()
		h := map[string]string{}
		signer.SetHeaders(func(k, v string) { h[k] = v }, tenancy.Tenant{AccountID: acc.AccountID}, http.MethodGet, path, nil, time.Now())
		r, err := apitest.Send(c, http.MethodGet, st.BookingURL+path, h, "")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	asMessaging := tenancy.NewSigner(tenancy.CallerMessaging, keys.Messaging.Reveal())
	r = read(asMessaging, "/internal/hooks/booking/"+strconv.FormatInt(b.Data.BookingID, 10))
	var hook struct {
		Booking struct {
			BookingID  int64            `json:"bookingId"`
			Status     string           `json:"status"`
			Email      string           `json:"email"`
			Checkin    string           `json:"checkin"`
			GrandTotal json.Number      `json:"grandTotal"`
			Payments   []map[string]any `json:"payments"`
			Card       json.RawMessage  `json:"creditCard"`
		} `json:"booking"`
	}
	if r.Code != http.StatusOK || json.Unmarshal(r.Body, &hook) != nil || hook.Booking.BookingID != b.Data.BookingID ||
		hook.Booking.Status != "reserved" || hook.Booking.Email != "grace@example.com" || hook.Booking.Checkin == "" ||
		hook.Booking.GrandTotal == "" || len(hook.Booking.Payments) != 1 || hook.Booking.Card != nil {
		t.Fatalf("the booking read as messaging-svc: HTTP %d %s", r.Code, r.Body)
	}
	// edge routes the messaging resources there: the preview reads the same booking.
	r, err = apitest.Send(c, http.MethodPost, st.EdgeURL+"/api/message-template", acc.AHeaders(),
		`{"action":"preview","booking_id":`+strconv.FormatInt(b.Data.BookingID, 10)+`,"trigger":"booking.confirmed","language":"en"}`)
	if err != nil || r.Code != http.StatusOK || !strings.Contains(string(r.Body), "Grace") {
		t.Errorf("preview through edge: %v HTTP %d %s", err, r.Code, r.Body)
	}
	// make run's demo owner becomes the notification address, once: an address set is kept.
	acc.PanelEmail = "owner@messages.example"
	if err := demo.NotifyOwner(ctx, acc); err != nil {
		t.Fatal(err)
	}
	acc.PanelEmail = "other@messages.example"
	if err := demo.NotifyOwner(ctx, acc); err != nil {
		t.Fatal(err)
	}
	if r, err := apitest.Send(c, http.MethodPost, st.EdgeURL+"/api/messaging-settings", acc.AHeaders(), `{"action":"get"}`); err != nil ||
		r.Code != http.StatusOK || !strings.Contains(string(r.Body), `"notify":["owner@messages.example"]`) {
		t.Errorf("demo.NotifyOwner: %v HTTP %d %s", err, r.Code, r.Body)
	}
	if r := read(asMessaging, "/internal/ical/property?internal_code=MSG1"); r.Code != http.StatusUnauthorized {
		t.Errorf("messaging-svc's key on an iCal route: HTTP %d, want 401", r.Code)
	}
	if r := read(asMessaging, "/internal/hooks/booking/999999999"); r.Code != http.StatusNotFound {
		t.Errorf("a booking the account does not have: HTTP %d, want 404", r.Code)
	}

	other, err := stack.Start(ctx, stack.Options{MongoURI: st.MongoURI, KafkaBrokers: st.KafkaBrokers, Keys: keys,
		EncryptionKey: key, AdminToken: adminToken, LogLevel: "error", PasswordCost: 4, NoMessaging: true, NoIntegration: true,
		MessagingURL: st.MessagingURL})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close() }()
	if other.MessagingURL != "" || other.MessagingInternalURL != "" {
		t.Errorf("NoMessaging: MessagingURL %q %q, want none", other.MessagingURL, other.MessagingInternalURL)
	}
	if r, err := apitest.Send(c, http.MethodPost, other.EdgeURL+"/api/message-trigger", acc.AHeaders(), `{"action":"get"}`); err != nil ||
		r.Code != http.StatusOK || !strings.Contains(string(r.Body), "stay.arrival") {
		t.Errorf("NoMessaging, routed to Options.MessagingURL: %v HTTP %d %s", err, r.Code, r.Body)
	}
}
