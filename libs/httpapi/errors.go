// Package httpapi holds what every Fiber app of vros shares: the error type and the
// envelopes of the two public interfaces, the middleware chain and the health routes.
package httpapi

import (
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/vros/vros/libs/fields"
)

// Interface B status numbers. The spec fixes 0, 8, 16, 24, 111 and 112; the others are
// ours and documented in docs/interface-b.md.
const (
	StatusSuccess          = 0
	StatusUnauthorized     = 2
	StatusInvalid          = 4
	StatusDatesUnavailable = 8
	StatusNoProperty       = 16
	StatusNoBooking        = 24
	StatusNotFound         = 32
	StatusConflict         = 40
	StatusTooLarge         = 48
	StatusRateLimited      = 56
	StatusUnknownAction    = 64
	StatusUnavailable      = 72
	StatusPaymentFailed    = 111
	StatusPayment3DS       = 112
	StatusInternal         = 500
)

// Error is an error a client may see. HTTP is the HTTP status (and interface A's `code`),
// Type is interface A's `error_type`, Status is interface B's `status`.
type Error struct {
	HTTP       int
	Type       string
	Status     int
	Message    string
	Violations []fields.Violation
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.HTTP, e.Type, e.Message) }

// Invalid is a request with invalid fields.
func Invalid(v fields.Violations) *Error {
	msg := "request has 1 invalid field"
	if len(v) != 1 {
		msg = fmt.Sprintf("request has %d invalid fields", len(v))
	}
	if len(v) > 0 {
		msg += ": " + v[0].Field + " " + v[0].Message
	}
	return &Error{HTTP: http.StatusBadRequest, Type: "validation_error", Status: StatusInvalid, Message: msg, Violations: v}
}

// InvalidField is a request with one invalid field.
func InvalidField(field, message string) *Error {
	return Invalid(fields.Violations{{Field: field, Message: message}})
}

// BadRequest is a malformed request that is not about one field (such as a body that is
// not JSON).
func BadRequest(message string) *Error {
	return &Error{HTTP: http.StatusBadRequest, Type: "bad_request", Status: StatusInvalid, Message: message}
}

// NotFound is a missing resource; status is the interface B status to use.
func NotFound(status int, message string) *Error {
	return &Error{HTTP: http.StatusNotFound, Type: "not_found", Status: status, Message: message}
}

// Conflict is a write that clashes with existing state.
func Conflict(status int, message string) *Error {
	return &Error{HTTP: http.StatusConflict, Type: "conflict", Status: status, Message: message}
}

// Unauthorized is a missing or wrong credential.
func Unauthorized(message string) *Error {
	return &Error{HTTP: http.StatusUnauthorized, Type: "unauthorized", Status: StatusUnauthorized, Message: message}
}

// TooLarge is a body over the route's limit.
func TooLarge(limit int) *Error {
	return &Error{HTTP: http.StatusRequestEntityTooLarge, Type: "payload_too_large", Status: StatusTooLarge,
		Message: fmt.Sprintf("request body is larger than %d bytes", limit)}
}

// URITooLong is a request target (path and query) over the limit.
func URITooLong(limit int) *Error {
	return &Error{HTTP: http.StatusRequestURITooLong, Type: "uri_too_long", Status: StatusTooLarge,
		Message: fmt.Sprintf("request target (path and query) is longer than %d bytes", limit)}
}

// HeadersTooLarge is a request whose header fields are over the limit together.
func HeadersTooLarge(limit int) *Error {
	return &Error{HTTP: http.StatusRequestHeaderFieldsTooLarge, Type: "headers_too_large", Status: StatusTooLarge,
		Message: fmt.Sprintf("request headers are larger than %d bytes together", limit)}
}

// RateLimited is a request over the account's rate.
func RateLimited() *Error {
	return &Error{HTTP: http.StatusTooManyRequests, Type: "rate_limited", Status: StatusRateLimited,
		Message: "too many requests for this account; retry after a second"}
}

// TooManyFailures is an authentication attempt from a client address that has failed too
// often lately; retry is when the next attempt is allowed.
func TooManyFailures(retry time.Duration) *Error {
	secs := max(int(math.Ceil(retry.Seconds())), 1)
	return &Error{HTTP: http.StatusTooManyRequests, Type: "rate_limited", Status: StatusRateLimited,
		Message: fmt.Sprintf("too many failed authentications from this address; retry in %d s", secs)}
}

// Unavailable is an operation whose owning service is not deployed or not reachable.
func Unavailable(message string) *Error {
	return &Error{HTTP: http.StatusServiceUnavailable, Type: "unavailable", Status: StatusUnavailable, Message: message}
}

// Internal is the only thing a client learns of an unexpected failure.
func Internal(requestID string) *Error {
	return &Error{HTTP: http.StatusInternalServerError, Type: "internal_error", Status: StatusInternal,
		Message: "internal error; quote request id " + requestID}
}
