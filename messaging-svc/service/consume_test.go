package service

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/trigger"
	"github.com/vros/vros/testkit/eventually"
	"github.com/vros/vros/testkit/smtpcatcher"
)

// publish puts events on the embedded broker as the services' outboxes do.
func publish(t *testing.T, ms ...events.Message) {
	t.Helper()
	pub := events.NewPublisher(infra.KafkaBrokers)
	defer pub.Close()
	if err := pub.Publish(context.Background(), ms...); err != nil {
		t.Fatal(err)
	}
}

func encode(t *testing.T, source, typ, subject string, data any) []byte {
	t.Helper()
	v, err := events.Encode(source, typ, subject, time.Now(), data)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// waitMail waits for the first message to address at the operator's server.
func waitMail(t *testing.T, address string) smtpcatcher.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	find := func(ms []smtpcatcher.Message) (smtpcatcher.Message, bool) {
		for _, m := range ms {
			if len(m.EnvelopeTo) == 1 && m.EnvelopeTo[0] == address {
				return m, true
			}
		}
		return smtpcatcher.Message{}, false
	}
	got, err := catcher.Wait(ctx, func(ms []smtpcatcher.Message) bool { _, ok := find(ms); return ok })
	if err != nil {
		t.Fatalf("no mail to %s: %v", address, err)
	}
	m, _ := find(got)
	return m
}

// TestConsumesAndSends: the running service's consumer reads the three topics as its group:
// the property's and account's views from vros.property.v1, a reserved booking of
// vros.booking.v1 planned into its confirmation (sent to the guest booking-svc answers, in
// the brand's language) and the owner's notice (to the notification address), a channel
// conflict of vros.integration.v1 into owner.channel_conflict, and a resolved one into
// nothing more.
func TestConsumesAndSends(t *testing.T) {
	ctx := context.Background()
	acct := newAccount()
	settings, err := store.NewSettings(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := settings.SetDelivery(ctx, acct, store.Delivery{Notify: []string{acct + "@owner.example"}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	publish(t,
		events.Message{Topic: events.TopicProperty, Key: acct + ":settings", Value: encode(t, "/vros/property-svc", contract.SettingsUpdated, acct,
			contract.Settings{AccountID: acct, Version: 1, Timezone: "Europe/Rome", Currency: "EUR", Languages: []string{"en", "it"},
				Brands: []contract.Brand{{ID: 3, Name: "Villa Aurora Direct", DefaultLanguage: "it"}}})},
		events.Message{Topic: events.TopicProperty, Key: acct + ":41", Value: encode(t, "/vros/property-svc", contract.PropertyCreated, acct+":41",
			contract.Property{AccountID: acct, PropertyID: 41, Version: 1, Content: contract.Content{Name: "Villa Aurora", Timezone: "Europe/Rome"}})})
	views, err := store.NewViews(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	eventually.Holds(t, "the views", time.Minute, func() bool {
		a, okA, errA := views.Account(ctx, acct)
		_, okP, errP := views.Property(ctx, acct, 41)
		return errA == nil && errP == nil && okA && okP && len(a.Brands) == 1
	})
	in := time.Now().UTC().AddDate(1, 0, 0)
	b := contract.Booking{AccountID: acct, BookingID: 42, PropertyID: 41, BrandID: 3, Status: "reserved", Version: 1,
		Checkin: in.Format(time.DateOnly), Checkout: in.AddDate(0, 0, 4).Format(time.DateOnly), Adults: 2, Currency: "EUR",
		TotalRent: "1300.00", GrandTotal: "1452.50"}
	publish(t, events.Message{Topic: events.TopicBooking, Key: acct + ":booking:42",
		Value: encode(t, "/vros/booking-svc", contract.BookingReserved, acct, b)})
	guest := waitMail(t, acct+"@guest.example")
	if !strings.Contains(guest.Text, "Anna") || len(guest.From) != 1 || guest.From[0].Name != "Villa Aurora Direct" {
		t.Errorf("the guest's confirmation: from %v\n%s", guest.From, guest.Text)
	}
	owner := waitMail(t, acct+"@owner.example")
	if !strings.Contains(owner.Text, "Anna") {
		t.Errorf("the owner's notice:\n%s", owner.Text)
	}

	resolved := time.Now()
	for _, c := range []contract.Conflict{
		{AccountID: acct, ConflictID: 77, Channel: "airbnb", Reason: "nights_taken", Message: "the night of " + in.Format(time.DateOnly) + " is taken"},
		{AccountID: acct, ConflictID: 78, Channel: "vrbo", Reason: "nights_taken", ResolvedAt: &resolved},
	} {
		publish(t, events.Message{Topic: events.TopicIntegration, Key: acct + ":conflict:" + strconv.FormatInt(c.ConflictID, 10),
			Value: encode(t, "/vros/integration-svc", contract.ChannelConflict, acct, c)})
	}
	msgs, err := store.NewMessages(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	id := trigger.ID(acct, trigger.OwnerChannelConflict, 0, "77")
	eventually.Holds(t, "the conflict's notice sent", time.Minute, func() bool {
		m, ok, err := msgs.Get(ctx, acct, id)
		return err == nil && ok && m.Status == store.StatusSent
	})
	if _, ok, err := msgs.Get(ctx, acct, trigger.ID(acct, trigger.OwnerChannelConflict, 0, "78")); err != nil || ok {
		t.Errorf("a resolved conflict planned a notice: %v %v", ok, err)
	}
}
