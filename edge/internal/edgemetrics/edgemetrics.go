// Package edgemetrics counts what edge refuses: failed authentications by credential kind
// (vros.edge.auth_failures) and the requests edge itself rejects by reason
// (vros.edge.rejections). Per-account figures are the usage report's, never labels here.
package edgemetrics

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// AuthKind is the credential a failed authentication presented (label kind).
type AuthKind string

// The kinds of credential.
const (
	Basic      AuthKind = "basic"       // interface A's HTTP Basic pair
	Service    AuthKind = "service"     // interface A's servicekey/servicepass (or a pair of two accounts)
	Key        AuthKind = "key"         // interface B's key/pass
	OwnerToken AuthKind = "owner_token" // an owner-token read's token
	Admin      AuthKind = "admin"       // the admin API's bearer token
	Panel      AuthKind = "panel"       // the management panel's sign-in
)

// AuthKinds are every AuthKind.
var AuthKinds = []AuthKind{Basic, Service, Key, OwnerToken, Admin, Panel}

// Reason is why edge rejected a request itself (label reason).
type Reason string

// The reasons.
const (
	Rate         Reason = "rate"          // the account's token bucket is empty (429)
	Concurrency  Reason = "concurrency"   // the account has too many requests in flight (429)
	AuthThrottle Reason = "auth_throttle" // the client address failed to authenticate too often (429)
	BodySize     Reason = "body_size"     // the body is over the route's or the plan's limit (413)
	BodyBudget   Reason = "body_budget"   // the replica's or the address's body memory was not free in time (503)
	// EngineRate: the public booking API's limits, per key, per address or its checkouts
	// per address (429; docs/booking-engine.md).
	EngineRate Reason = "engine_rate"
	// Origin: a booking API request without an Origin of one of the account's brands (403).
	Origin Reason = "origin"
)

// Reasons are every Reason.
var Reasons = []Reason{Rate, Concurrency, AuthThrottle, BodySize, BodyBudget, EngineRate, Origin}

// Metrics are edge's counters. A nil *Metrics counts nothing.
type Metrics struct {
	authFailures, rejections metric.Int64Counter
	kinds                    map[AuthKind]metric.MeasurementOption // built once
	reasons                  map[Reason]metric.MeasurementOption
}

// New returns the counters of meter; nil for a nil meter. Make one per edge and give it to
// every part that counts (gateway, admin API, panel through the gateway).
func New(meter metric.Meter) *Metrics {
	if meter == nil {
		return nil
	}
	m := &Metrics{kinds: map[AuthKind]metric.MeasurementOption{}, reasons: map[Reason]metric.MeasurementOption{}}
	m.authFailures, _ = meter.Int64Counter("vros.edge.auth_failures", metric.WithUnit("{request}"),
		metric.WithDescription("Failed authentications (a wrong credential), by the kind of credential presented."))
	m.rejections, _ = meter.Int64Counter("vros.edge.rejections", metric.WithUnit("{request}"),
		metric.WithDescription("Requests edge refused itself, by reason: rate, concurrency, auth_throttle, body_size, body_budget, engine_rate, origin."))
	// Every kind and reason is exported at 0 from the start, so that a rate or an alert has
	// its series before the first refusal.
	for _, k := range AuthKinds {
		m.kinds[k] = metric.WithAttributeSet(attribute.NewSet(attribute.String("kind", string(k))))
		if m.authFailures != nil {
			m.authFailures.Add(context.Background(), 0, m.kinds[k])
		}
	}
	for _, r := range Reasons {
		m.reasons[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", string(r))))
		if m.rejections != nil {
			m.rejections.Add(context.Background(), 0, m.reasons[r])
		}
	}
	return m
}

// AuthFailed counts a failed authentication of kind (an unknown kind is not counted).
func (m *Metrics) AuthFailed(ctx context.Context, kind AuthKind) {
	if m == nil {
		return
	}
	if set, ok := m.kinds[kind]; ok {
		m.authFailures.Add(ctx, 1, set)
	}
}

// Rejected counts a request edge refused for reason (an unknown reason is not counted).
func (m *Metrics) Rejected(ctx context.Context, reason Reason) {
	if m == nil {
		return
	}
	if set, ok := m.reasons[reason]; ok {
		m.rejections.Add(ctx, 1, set)
	}
}
