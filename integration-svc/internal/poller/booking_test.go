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

	"github.com/vros/vros/integration-svc/internal/feed"
	"github.com/vros/vros/libs/tenancy"
)

// TestBookingClient: requests carry a tenant context booking-svc's signature check accepts,
// the sync body is the shared design's (events [] when none), 404 is ErrNoProperty.
func TestBookingClient(t *testing.T) {
	signer := tenancy.NewSigner("k")
	app := fiber.New()
	var got map[string]any
	g := app.Group("/internal/ical", signer.Require())
	g.Get("/property", func(c *fiber.Ctx) error {
		if tenancy.From(c).AccountID != "acc" {
			return fiber.ErrForbidden
		}
		if c.Query("internal_code") != "V 1" {
			return c.Status(404).JSON(fiber.Map{"error_message": "no"})
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
	// booking-svc's former "sync again" (409) is an error, as before.
	answer = fiber.Map{"status": 409, "body": fiber.Map{"code": 409, "error_type": "conflict", "error_message": "the sync did not finish; sync again to go on"}}
	if _, err := b.Sync(ctx, "acc", f, nil); err == nil || !strings.Contains(err.Error(), "409") {
		t.Fatal(err)
	}
}
