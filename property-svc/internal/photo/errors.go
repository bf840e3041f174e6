package photo

import (
	"errors"
	"fmt"
)

// Field is the request field that all input errors of this package refer to.
const Field = "photo.image"

// Error kinds. Every input problem is returned as an *Error whose Kind is one
// of these sentinels, so callers can test with errors.Is and answer 400 with
// the *Error's message on Field. Errors that are not *Error (context
// cancellation, encoder failures) are not the client's fault.
var (
	ErrNotImage         = errors.New("is not a JPEG, PNG, GIF or WebP image")
	ErrTooLarge         = errors.New("is too large")
	ErrTooSmall         = errors.New("is too small")
	ErrFetch            = errors.New("link could not be fetched")
	ErrBadBase64        = errors.New("is neither a link nor valid base64 image data")
	ErrForbiddenAddress = errors.New("link points to a private, local or otherwise forbidden network address")
)

// ErrBusy is a photo refused because the memory photos may take (Limits.Memory) stayed
// taken by other photos for Config.MaxWait, or because its request ended while it
// waited. It is not an input error: the same photo may succeed later (answer 503).
var ErrBusy = errors.New("photo processing is at capacity")

// Error is an input error. Its message is safe to show to API clients; the
// underlying cause (which may contain internal details such as resolved IPs)
// is available through errors.Unwrap / errors.As for logging.
type Error struct {
	Kind   error  // one of the Err* sentinels above
	Detail string // client-safe detail, may be empty
	Err    error  // underlying cause, for logs; may be nil
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return e.Kind.Error()
	}
	return e.Kind.Error() + ": " + e.Detail
}

// Unwrap lets errors.Is match both the Kind sentinel and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Field returns the request field the error refers to ("photo.image").
func (e *Error) Field() string { return Field }

func newErr(kind error, cause error, format string, args ...any) *Error {
	return &Error{Kind: kind, Detail: fmt.Sprintf(format, args...), Err: cause}
}

// AsError reports whether err is (or wraps) an input *Error and returns it.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}
