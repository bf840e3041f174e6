package poller

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/integration-svc/internal/ical/feed"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
)

// TestBookingClient: requests carry a tenant context booking-svc's signature check accepts,
// the sync body is the shared design's (events [] when none; final on a delete), booking-svc's
// "property … does not exist" 404 is ErrNoProperty and no other 404, 410 is ErrFeedGone,
// "complete": false an incomplete sync.
func TestBookingClient(t *testing.T) {
	const key = "integration-key-0123456789"
	signer := tenancy.NewSigner(tenancy.CallerIntegration, key)
	// booking-svc's grant of integration-svc's key (booking-svc/internal/api.IntegrationRoutes).
	auth := tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerIntegration, Key: key,
		Routes: []string{"GET /internal/ical/property", "POST /internal/ical/sync"}})
	app := fiber.New()
	var got map[string]any
	g := app.Group("/internal/ical", tenancyfiber.Require(auth))
	g.Get("/property", func(c *fiber.Ctx) error {
		if tenancyfiber.From(c).AccountID != "acc" {
			return fiber.ErrForbidden
		}
		switch c.Query("internal_code") {
		case "V 1":
		case "route":
			return c.Status(404).JSON(fiber.Map{"code": 404, "error_type": "not_found", "error_message": "no such route: GET /internal/ical/property"})
		default:
			return c.Status(404).JSON(fiber.Map{"code": 404, "error_type": "not_found", "error_message": `property with internal code "V9" does not exist`})
		}
		return c.JSON(fiber.Map{"property_id": 17})
	})
	answer := fiber.Map{}
	g.Post("/sync", func(c *fiber.Ctx) error {
		got = nil
		if err := json.Unmarshal(c.Body(), &got); err != nil {
			return err
		}
		if answer["status"] != nil {
			return c.Status(answer["status"].(int)).JSON(answer["body"])
		}
		out := fiber.Map{"blocks": []any{}, "nights_blocked": 3,
			"conflicts": []any{fiber.Map{"uid": "u", "start_date": "2027-01-10", "end_date": "2027-01-10", "booking_ids": []int{4}}}}
		if answer["complete"] != nil {
			out["complete"] = answer["complete"]
		}
		return c.JSON(out)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	defer func() { _ = app.Shutdown() }()
	b := NewBookingClient("http://"+ln.Addr().String()+"/", signer, 5*time.Second)
	ctx := context.Background()
	if id, err := b.PropertyID(ctx, "acc", "V 1"); err != nil || id != 17 {
		t.Fatal(id, err)
	}
	if _, err := b.PropertyID(ctx, "acc", "V9"); !errors.Is(err, ErrNoProperty) {
		t.Fatal(err)
	}
	if _, err := b.PropertyID(ctx, "acc", "route"); err == nil || errors.Is(err, ErrNoProperty) {
		t.Fatal(err)
	}
	f := &feed.Feed{PropertyID: 17, FeedID: 5, Name: "Airbnb"}
	res, err := b.Sync(ctx, "acc", f, nil)
	if err != nil || res.NightsBlocked != 3 || len(res.Conflicts) != 1 || res.Conflicts[0].BookingIDs[0] != 4 {
		t.Fatal(res, err)
	}
	if ev, ok := got["events"].([]any); !ok || len(ev) != 0 || got["feed_id"] != float64(5) || got["property_id"] != float64(17) || got["name"] != "Airbnb" {
		t.Fatalf("%v", got)
	}
	if _, err := b.Sync(ctx, "acc", f, []feed.Event{{UID: "a", Start: "2027-01-10", End: "2027-01-11"}}); err != nil {
		t.Fatal(err)
	}
	if ev := got["events"].([]any)[0].(map[string]any); len(ev) != 3 || ev["uid"] != "a" || ev["start"] != "2027-01-10" || ev["end"] != "2027-01-11" {
		t.Fatal(ev)
	}
	// "complete": false is an incomplete sync; true or absent, a complete one.
	for _, c := range []struct {
		complete   any
		incomplete bool
	}{{false, true}, {true, false}, {nil, false}} {
		answer = fiber.Map{"complete": c.complete}
		if res, err := b.Sync(ctx, "acc", f, nil); err != nil || res.Incomplete != c.incomplete || res.NightsBlocked != 3 {
			t.Fatalf("complete %v: %+v %v", c.complete, res, err)
		}
	}
	// The delete's sync: final, no events.
	answer = fiber.Map{}
	if err := b.Remove(ctx, "acc", f); err != nil {
		t.Fatal(err)
	}
	if ev, ok := got["events"].([]any); !ok || len(ev) != 0 || got["final"] != true || got["feed_id"] != float64(5) {
		t.Fatalf("%v", got)
	}
	if _, err := b.Sync(ctx, "acc", f, nil); err != nil || got["final"] != nil {
		t.Fatalf("an ordinary sync is not final: %v %v", got, err)
	}
	// A final sync booking-svc stopped early is not done.
	answer = fiber.Map{"complete": false}
	if err := b.Remove(ctx, "acc", f); !errors.Is(err, ErrIncomplete) {
		t.Fatal(err)
	}
	// 410: the feed was removed (booking-svc keeps its id after a final sync), on either.
	answer = fiber.Map{"status": 410, "body": fiber.Map{"code": 410, "error_type": "gone", "error_message": "feed 5 was removed"}}
	if _, err := b.Sync(ctx, "acc", f, nil); !errors.Is(err, ErrFeedGone) {
		t.Fatal(err)
	}
	if err := b.Remove(ctx, "acc", f); !errors.Is(err, ErrFeedGone) {
		t.Fatal(err)
	}
	// A 404 is "no such property" only when booking-svc says so; a route missing (a rolling
	// deploy, a proxy) is an ordinary error.
	answer = fiber.Map{"status": 404, "body": fiber.Map{"code": 404, "error_type": "not_found", "error_message": "property 17 does not exist"}}
	if err := b.Remove(ctx, "acc", f); !errors.Is(err, ErrNoProperty) {
		t.Fatal(err)
	}
	answer = fiber.Map{"status": 404, "body": fiber.Map{"code": 404, "error_type": "not_found", "error_message": "no such route: POST /internal/ical/sync"}}
	if err := b.Remove(ctx, "acc", f); err == nil || errors.Is(err, ErrNoProperty) {
		t.Fatal(err)
	}
	if _, err := b.Sync(ctx, "acc", f, nil); err == nil || errors.Is(err, ErrNoProperty) {
		t.Fatal(err)
	}
	// booking-svc's former "sync again" (409) is an error, as before.
	answer = fiber.Map{"status": 409, "body": fiber.Map{"code": 409, "error_type": "conflict", "error_message": "the sync did not finish; sync again to go on"}}
	if _, err := b.Sync(ctx, "acc", f, nil); err == nil || !strings.Contains(err.Error(), "409") {
		t.Fatal(err)
	}
}
