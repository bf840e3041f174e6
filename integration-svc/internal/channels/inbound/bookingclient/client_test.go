package bookingclient

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/integration-svc/internal/bookingsvc"
	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/channels/inbound"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
)

// TestClient: the request is signed as booking-svc's grant of integration-svc's key accepts
// it and carries the contract's body; each answer of the contract is read as what it means,
// and anything else (busy, a proxy's 404, a 500) is transient, never a refusal.
func TestClient(t *testing.T) {
	const key = "integration-key-0123456789"
	auth := tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerIntegration, Key: key, Routes: []string{"POST " + Path}})
	app := fiber.New()
	var got map[string]any
	var answer struct {
		status int
		body   string
	}
	app.Post(Path, tenancyfiber.Require(auth), func(c *fiber.Ctx) error {
		if tenancyfiber.From(c).AccountID != "acc" {
			return fiber.ErrForbidden
		}
		got = nil
		if err := json.Unmarshal(c.Body(), &got); err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Status(answer.status).SendString(answer.body)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	defer func() { _ = app.Shutdown() }()
	cl := Client{C: bookingsvc.New("http://"+ln.Addr().String()+"/", tenancy.NewSigner(tenancy.CallerIntegration, key), 5*time.Second)}
	req := inbound.Request{ConnectionID: 4, Channel: "BookingCom", ReservationID: "R1", RevisionID: "r1", Order: 7, Status: "new", PropertyID: 12,
		RatePlanID: 3, Checkin: "2027-01-10", Checkout: "2027-01-13", Adults: 2, Currency: "EUR", Total: "450.00", Commission: "67.50",
		Guest: channel.Guest{FirstName: "A", LastName: "B", Email: "a@example.com", Phone: "+39", Country: "IT"}, Notes: "n"}
	for _, tc := range []struct {
		name   string
		status int
		body   string
		check  func(inbound.Result, error) bool
	}{
		{"applied", 200, `{"booking_id":9,"status":"reserved","version":1,"applied":true}`, func(r inbound.Result, err error) bool {
			return err == nil && r == inbound.Result{BookingID: 9, Status: "reserved", Version: 1, Applied: true}
		}},
		{"nights taken", 409, `{"conflict":{"reason":"nights_taken","nights":["2027-01-11"],"booking_ids":[5]}}`, func(_ inbound.Result, err error) bool {
			var ref *inbound.Refusal
			return errors.As(err, &ref) && ref.Reason == channel.ReasonNightsTaken && ref.Nights[0] == "2027-01-11" && ref.BookingIDs[0] == 5
		}},
		{"unknown reservation", 404, `{"error":{"code":"reservation_unknown","message":"x"}}`, func(_ inbound.Result, err error) bool {
			return errors.Is(err, inbound.ErrReservationUnknown)
		}},
		{"unknown property", 422, `{"error":{"code":"unknown_property","field":"property_id","message":"property 12 does not exist"}}`,
			func(_ inbound.Result, err error) bool {
				var ref *inbound.Refusal
				return errors.As(err, &ref) && ref.Reason == channel.ReasonUnknownProperty && ref.Field == "property_id"
			}},
		{"invalid", 422, `{"error":{"code":"invalid","field":"checkout","message":"checkout: must be after checkin"}}`, func(_ inbound.Result, err error) bool {
			var ref *inbound.Refusal
			return errors.As(err, &ref) && ref.Reason == channel.ReasonInvalid
		}},
		{"busy", 503, `{"error":{"code":"busy","message":"another change"}}`, transient},
		{"a proxy's 404", 404, `{"code":404,"error_type":"not_found","error_message":"no route"}`, transient},
		{"a 409 without a conflict", 409, `{"error":{"code":"conflict"}}`, transient},
		{"a 500", 500, `oops`, transient},
	} {
		answer.status, answer.body = tc.status, tc.body
		res, err := cl.Apply(context.Background(), "acc", req)
		if !tc.check(res, err) {
			t.Errorf("%s: %+v %v", tc.name, res, err)
		}
		if got["reservation_id"] != "R1" || got["order"] != float64(7) || got["rate_plan_id"] != float64(3) || got["total"] != "450.00" || got["commission"] != "67.50" ||
			got["guest"].(map[string]any)["phone"] != "+39" || got["checkin"] != "2027-01-10" {
			t.Errorf("%s: body %v", tc.name, got)
		}
	}
}

func transient(_ inbound.Result, err error) bool {
	var ref *inbound.Refusal
	return err != nil && !errors.As(err, &ref) && !errors.Is(err, inbound.ErrReservationUnknown)
}
