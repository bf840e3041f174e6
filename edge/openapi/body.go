package openapi

import "github.com/vros/vros/edge/internal/gateway"

// RequestJSON is a request body as edge reads it (the JSON the services get), whatever way a
// client encoded it: JSON (whatever its content type says), a PHP form or multipart body in
// bracket notation. A validator reads a request body with it to check it as edge does.
func RequestJSON(contentType string, body []byte) ([]byte, error) {
	return gateway.BodyJSON(contentType, body, gateway.MaxBody)
}

// IsJSON reports whether edge reads body as JSON whatever its content type says.
func IsJSON(body []byte) bool { return gateway.IsJSONBody(body) }

// RequestBody is the body edge reads of a request's body: a leading UTF-8 byte order mark
// is ignored.
func RequestBody(body []byte) []byte { return gateway.WithoutBOM(body) }
