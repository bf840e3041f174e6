package httpapi

import (
	"errors"
	"log/slog"

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
)

const envelopeKey = "vros.envelope"

// Use marks the routes behind it as answering in envelope e.
func Use(e Envelope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Locals(envelopeKey, e)
		return c.Next()
	}
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

// ErrorHandler maps any error a handler returns to the envelope of its route. Client errors
// keep their message; anything else is logged once and answered with a bare 500.
func ErrorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		e := classify(c, log, err)
		if env, _ := c.Locals(envelopeKey).(Envelope); env == EnvelopeB {
			return c.Status(e.HTTP).JSON(bResponse{Status: e.Status, Message: e.Message, Errors: e.Violations})
		}
		return c.Status(e.HTTP).JSON(aError{Code: e.HTTP, ErrorType: e.Type, ErrorMessage: e.Message, Errors: e.Violations})
	}
}

func classify(c *fiber.Ctx, log *slog.Logger, err error) *Error {
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
		switch fib.Code {
		case fiber.StatusNotFound:
			return NotFound(StatusNotFound, "no such route: "+c.Method()+" "+c.Route().Path)
		case fiber.StatusMethodNotAllowed:
			return &Error{HTTP: fib.Code, Type: "method_not_allowed", Status: StatusInvalid, Message: "method not allowed"}
		case fiber.StatusRequestEntityTooLarge:
			return &Error{HTTP: fib.Code, Type: "payload_too_large", Status: StatusTooLarge, Message: "request body is too large"}
		case fiber.StatusBadRequest, fiber.StatusUnprocessableEntity:
			return BadRequest(fib.Message)
		}
	}
	rid := RequestID(c)
	log.ErrorContext(c.UserContext(), "request failed", "err", err, "route", c.Route().Path, "request_id", rid)
	return Internal(rid)
}
