// Package webhook is the domain of webhook subscriptions and their deliveries.
package webhook

import "time"

// Event is one thing that happened to an account, as its webhook endpoints receive it.
type Event struct {
	// ID is stable for the same happening: an event derived again from the same Kafka message
	// (a consumer restarted before committing) gets the same ID, so a receiver sees the
	// duplicate under the same webhook-id.
	ID      string
	Account string
	// Type is one of the event types of docs/webhooks.md ("booking.created", …).
	Type string
	// PropertyID orders deliveries: one endpoint receives one property's events in order.
	PropertyID int64
	// BrandID is the brand the event belongs to (0: none); an endpoint of one brand receives
	// only its brand's events.
	BrandID int64
	// BookingID, when set, names the booking the delivery carries (read at send time).
	BookingID int64
	At        time.Time
	// Seq orders the events derived from one message, which share At: an endpoint gets them
	// in this order (booking.created before its payment.added, say).
	Seq int
	// Data is the event's JSON payload "data" member.
	Data []byte
}
