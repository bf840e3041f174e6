package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/fields"
)

// Envelope names the response shape of a route group.
type Envelope int

const (
	// EnvelopeA is interface A's {code, data} / {code, error_type, error_message, errors}.
	// Admin routes use it too.
	EnvelopeA Envelope = iota
	// EnvelopeB is interface B's {status, message, data}.
	EnvelopeB
	// EnvelopeEngine is the public booking API's (docs/booking-engine.md): {"data": …} on
	// success, {"error": {"code", "field", "message"}} on a refusal, the HTTP status telling
	// the outcome.
	EnvelopeEngine
)

const envelopeKey = "vros.envelope"

// Use marks the routes behind it as answering in envelope e.
func Use(e Envelope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Locals(envelopeKey, e)
		return c.Next()
	}
}

const outcomesOKKey = "vros.outcomes-ok"

// ApplicationOutcomesOK makes the routes behind it answer every application outcome with
// HTTP 200, its envelope telling the outcome (interface B at edge: the original's clients
// read only the body of a 200). Errors the handler returns and answers it forwards alike;
// only transport failures keep their code (see Transport).
func ApplicationOutcomesOK(c *fiber.Ctx) error {
	c.Locals(outcomesOKKey, true)
	err := c.Next()
	if err == nil {
		c.Status(outcomeStatus(c, c.Response().StatusCode()))
	}
	return err
}

// outcomeStatus is the HTTP status an answer of code goes out with: 200 for an
// application outcome (4xx, not Transport) behind ApplicationOutcomesOK, else code.
func outcomeStatus(c *fiber.Ctx, code int) int {
	if ok, _ := c.Locals(outcomesOKKey).(bool); ok && code >= 400 && !Transport(code) {
		return fiber.StatusOK
	}
	return code
}

// Transport reports whether an HTTP status is a transport failure rather than an
// application outcome: request timeout (408), body, target or headers too large (413, 414,
// 431), too many requests (429), and every 5xx.
func Transport(code int) bool {
	switch code {
	case fiber.StatusRequestTimeout, fiber.StatusRequestEntityTooLarge, fiber.StatusRequestURITooLong,
		fiber.StatusTooManyRequests, fiber.StatusRequestHeaderFieldsTooLarge:
		return true
	}
	return code >= 500
}

type aSuccess struct {
	Code int `json:"code"`
	Data any `json:"data,omitempty"`
}

type aError struct {
	Code         int                `json:"code"`
	ErrorType    string             `json:"error_type"`
	ErrorMessage string             `json:"error_message"`
	Errors       []fields.Violation `json:"errors,omitempty"`
}

type engineError struct {
	Error EngineError `json:"error"`
}

// EngineError is the body of the public booking API's refusal: code is the error's type,
// field the field at fault (absent when none), message starts with that field.
type EngineError struct {
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// EngineErrorOf is e in the booking API's terms: a request with invalid fields is
// bad_request naming the first of them (`arrival: must be a date YYYY-MM-DD`); any other
// error keeps its type and message.
func EngineErrorOf(e *Error) EngineError {
	if e.Type == "validation_error" && len(e.Violations) > 0 {
		v := e.Violations[0]
		return EngineError{Code: "bad_request", Field: v.Field, Message: v.Field + ": " + v.Message}
	}
	return EngineError{Code: e.Type, Message: e.Message}
}

type bResponse struct {
	Status  int                `json:"status"`
	Message string             `json:"message"`
	Data    any                `json:"data,omitempty"`
	Errors  []fields.Violation `json:"errors,omitempty"`
}

// A answers an interface A success with data (omitted when nil).
func A(c *fiber.Ctx, data any) error {
	return c.Status(fiber.StatusOK).JSON(aSuccess{Code: fiber.StatusOK, Data: data})
}

// B answers an interface B success. Data is always present, as the spec's responses show.
func B(c *fiber.Ctx, data any) error {
	return c.Status(fiber.StatusOK).JSON(bResponse{Status: StatusSuccess, Message: "Success", Data: data})
}

// bRawHead is B's envelope up to its data, as encoding/json writes bResponse.
const bRawHead = `{"status":0,"message":"Success","data":`

// BRaw is B with data already encoded as JSON (an answer kept encoded): the same bytes as B
// of the decoded value, without encoding data again. data must be valid JSON and not null.
func BRaw(c *fiber.Ctx, data []byte) error {
	r := c.Status(fiber.StatusOK).Response()
	r.Header.SetContentType(fiber.MIMEApplicationJSON)
	r.ResetBody() // written into the response's own (pooled) buffer: data is copied, not kept
	r.AppendBodyString(bRawHead)
	r.AppendBody(data)
	r.AppendBodyString("}")
	return nil
}

// ErrorHandler maps any error a handler returns to the envelope of its route. Client errors
// keep their message; anything else is logged once and answered with a bare 500.
func ErrorHandler(log *slog.Logger) fiber.ErrorHandler { return errorHandler(log, nil, 0) }

// errorHandler is ErrorHandler for an app whose requests before routing answer in
// envelopeFor's envelope and whose read buffer is readBuffer bytes. Fiber also calls it for
// a request fasthttp refused before any middleware ran (a request line and headers larger
// than the read buffer, a malformed request): it then gives the answer a request id and
// logs it at info, as observe would have.
func errorHandler(log *slog.Logger, envelopeFor func(path string) Envelope, readBuffer int) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		early := RequestID(c) == ""
		if early {
			rid := newID()
			c.Locals(HeaderRequestID, rid)
			c.Set(HeaderRequestID, rid)
		}
		e := classify(c, log, err, readBuffer, early)
		env, ok := c.Locals(envelopeKey).(Envelope)
		if !ok && envelopeFor != nil {
			env = envelopeFor(c.Path())
		}
		if early {
			// Never the path: owner tokens travel in it.
			log.LogAttrs(c.UserContext(), slog.LevelInfo, "request refused before routing",
				slog.Int("status", e.HTTP), slog.String("error_type", e.Type), slog.String("request_id", RequestID(c)))
		}
		switch env {
		case EnvelopeB:
			return c.Status(outcomeStatus(c, e.HTTP)).JSON(bResponse{Status: e.Status, Message: e.Message, Errors: e.Violations})
		case EnvelopeEngine:
			return c.Status(e.HTTP).JSON(engineError{Error: EngineErrorOf(e)})
		}
		return c.Status(e.HTTP).JSON(aError{Code: e.HTTP, ErrorType: e.Type, ErrorMessage: e.Message, Errors: e.Violations})
	}
}

func classify(c *fiber.Ctx, log *slog.Logger, err error, readBuffer int, early bool) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var fe *fields.Error
	if errors.As(err, &fe) {
		return Invalid(fe.Violations)
	}
	var fib *fiber.Error
	if errors.As(err, &fib) {
		switch code := fib.Code; {
		case code == fiber.StatusNotFound:
			return NotFound(StatusNotFound, "no such route: "+c.Method()+" "+c.Route().Path)
		case code == fiber.StatusMethodNotAllowed:
			return &Error{HTTP: code, Type: "method_not_allowed", Status: StatusInvalid, Message: "method not allowed"}
		case code == fiber.StatusRequestEntityTooLarge:
			return &Error{HTTP: code, Type: "payload_too_large", Status: StatusTooLarge, Message: "request body is too large"}
		case code == fiber.StatusRequestHeaderFieldsTooLarge:
			// fasthttp's read buffer overflowed: the request line and headers together were
			// too large, and fasthttp cannot tell which part.
			msg := "request line and headers are too large"
			if readBuffer > 0 {
				msg = fmt.Sprintf("request line and headers are larger than %d bytes together", readBuffer)
			}
			return &Error{HTTP: code, Type: "headers_too_large", Status: StatusTooLarge, Message: msg}
		case code == fiber.StatusRequestURITooLong:
			return &Error{HTTP: code, Type: "uri_too_long", Status: StatusTooLarge, Message: "request target is too long"}
		case code == fiber.StatusRequestTimeout:
			return &Error{HTTP: code, Type: "request_timeout", Status: StatusInvalid, Message: "the request was not received in time"}
		case code == fiber.StatusBadRequest, code == fiber.StatusUnprocessableEntity:
			return BadRequest(fib.Message)
		case code >= 400 && code < 500:
			return &Error{HTTP: code, Type: errorType(code), Status: StatusInvalid, Message: fib.Message}
		case early:
			// fasthttp could not read the request (Fiber maps a network error to 502): the
			// client's connection failed, not this service.
			return BadRequest("the request could not be read")
		}
	}
	rid := RequestID(c)
	log.ErrorContext(c.UserContext(), "request failed", "err", err, "route", c.Route().Path, "request_id", rid)
	return Internal(rid)
}

// errorType is the snake-case name of an HTTP status ("Expectation Failed" →
// "expectation_failed").
func errorType(code int) string {
	return strings.ReplaceAll(strings.ToLower(http.StatusText(code)), " ", "_")
}
