// Package contract is the published shape of vros change events: the `data` of every
// CloudEvent on vros.property.v1, vros.booking.v1 and vros.integration.v1, and the event types
// that name them.
// Producers map their own records to these types; consumers decode these types. No service
// publishes its storage document and no consumer restates the schema.
//
// The json tags are the wire contract. Every topic is compacted, so a consumer reads events
// written long ago next to new ones: a field is never renamed, removed or given another
// meaning. Add fields, and let consumers read their absence as "not set". The golden files of
// package contracttest (one per event type) hold producers and consumers to this shape in their
// tests; docs/events.md explains the topics, keys and delivery.
//
// Money is a decimal string ("120.50") so that no consumer rounds it through a float; dates
// are YYYY-MM-DD.
package contract
