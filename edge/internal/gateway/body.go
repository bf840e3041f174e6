package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/phpform"
	"github.com/vros/vros/libs/httpapi"
)

// jsonBody returns a request body as the JSON the services read, whatever way a PHP
// client encoded it (docs/interface-b.md, Bodies):
//   - a body whose first non-space byte is `{` or `[` is JSON, whatever its content type
//     says (PHP clients post json_encode's output with curl's default form content type);
//   - application/x-www-form-urlencoded is read with PHP's bracket notation
//     (`service[0][name]=…`); every value is a string;
//   - multipart/form-data (PHP curl given an array) likewise, field names in bracket
//     notation; a file part becomes the base64 of its bytes (photo[image]);
//   - anything else is passed on as it is (the service answers a body that is not JSON).
//
// The JSON built must fit limit, the body limit of the route: it is what the service reads.
func jsonBody(c *fiber.Ctx, body []byte, limit int) ([]byte, error) {
	return BodyJSON(c.Get(fiber.HeaderContentType), body, limit)
}

// BodyJSON is jsonBody of a body sent with content type ct: the JSON the services read.
// The end-to-end tests read request bodies with it, as edge does, to check them against the
// OpenAPI documents (edge/openapi).
func BodyJSON(ct string, body []byte, limit int) ([]byte, error) {
	if IsJSONBody(body) {
		return body, nil
	}
	if ct == "" {
		return body, nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return body, nil
	}
	var pairs []phpform.Pair
	switch mt {
	case fiber.MIMEApplicationForm:
		if pairs, err = phpform.Split(string(body)); err != nil {
			return nil, httpapi.BadRequest(err.Error())
		}
	case fiber.MIMEMultipartForm:
		if pairs, err = multipartPairs(body, params["boundary"]); err != nil {
			return nil, err
		}
	default:
		return body, nil
	}
	form, err := phpform.Build(pairs)
	if err != nil {
		return nil, httpapi.BadRequest(err.Error())
	}
	out, err := json.Marshal(form)
	if err != nil {
		return nil, err
	}
	if len(out) > limit {
		return nil, tooLargeAsJSON(limit)
	}
	return out, nil
}

// IsJSONBody reports whether edge reads body as JSON whatever its content type: its first
// non-space byte is `{` or `[`.
func IsJSONBody(body []byte) bool {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	return len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
}

// tooLargeAsJSON refuses a form or multipart body whose JSON is over limit.
func tooLargeAsJSON(limit int) *httpapi.Error {
	e := httpapi.TooLarge(limit)
	e.Message = fmt.Sprintf("request body is larger than %d bytes once read as JSON (a file part counts as its base64)", limit)
	return e
}

// maxPartHeader bounds the header block of one multipart part (its Content-Disposition,
// Content-Type, …): the same 16 KiB as a request's header fields (docs/limits.md).
const maxPartHeader = httpapi.DefaultMaxHeaderBytes

// multipartPairs reads a multipart/form-data body into its fields, in order; a file part's
// value is the base64 of its bytes.
func multipartPairs(body []byte, boundary string) ([]phpform.Pair, error) {
	var out []phpform.Pair
	err := eachPart(body, boundary, func(p *multipart.Part, name string) error {
		data, err := io.ReadAll(p)
		if err != nil {
			return httpapi.BadRequest(fmt.Sprintf("multipart/form-data part %q is malformed: %v", name, err))
		}
		val := string(data)
		if p.FileName() != "" {
			val = base64.StdEncoding.EncodeToString(data)
		}
		out = append(out, phpform.Pair{Key: name, Value: val})
		return nil
	})
	return out, err
}

// eachPart gives fn the parts of a multipart/form-data body one at a time, with their field
// names, each checked as a form's key (phpform.CheckKey); what fn does not read of a part is
// skipped. It refuses (400) a body without a boundary, cut short or malformed, a part
// without a name, more than phpform.MaxPairs parts, and a part whose header block is over
// maxPartHeader bytes (checked before the multipart reader reads any of them).
func eachPart(body []byte, boundary string, fn func(p *multipart.Part, name string) error) error {
	if boundary == "" {
		return httpapi.BadRequest("multipart/form-data body without a boundary parameter in its Content-Type")
	}
	if err := checkParts(body, boundary); err != nil {
		return err
	}
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	for n := 0; ; n++ {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			// The reader ends quietly when it finds no boundary at all: a body cut short (or
			// one that is no multipart body) lacks the closing one.
			if len(bytes.TrimSpace(body)) > 0 && !bytes.Contains(body, []byte("--"+boundary+"--")) {
				return httpapi.BadRequest("multipart/form-data body is cut short: it has no closing boundary --" + boundary + "--")
			}
			return nil
		}
		if err != nil {
			return httpapi.BadRequest("multipart/form-data body is malformed: " + err.Error())
		}
		if n >= phpform.MaxPairs {
			return tooManyParts()
		}
		name := p.FormName()
		if name == "" {
			return httpapi.BadRequest("multipart/form-data body has a part without a field name (Content-Disposition: form-data; name=…)")
		}
		if err := phpform.CheckKey(name); err != nil {
			return httpapi.BadRequest(err.Error())
		}
		if err := fn(p, name); err != nil {
			return err
		}
	}
}

func tooManyParts() error {
	return httpapi.BadRequest(fmt.Sprintf("multipart/form-data body has more than %d parts; edge reads at most %d", phpform.MaxPairs, phpform.MaxPairs))
}

// checkParts counts the delimiter lines of a multipart body (`--boundary` at the start of a
// line, then only spaces or tabs, as mime/multipart reads them) and measures the header block
// after each, without allocating: more than phpform.MaxPairs parts, or a header block over
// maxPartHeader bytes, is refused 400.
func checkParts(body []byte, boundary string) error {
	delim := []byte("--" + boundary)
	parts := 0
	for rest, at := body, 0; ; {
		i := bytes.Index(rest, delim)
		if i < 0 {
			return nil
		}
		lineStart := at+i == 0 || body[at+i-1] == '\n'
		rest, at = rest[i+len(delim):], at+i+len(delim)
		if !lineStart {
			continue
		}
		if bytes.HasPrefix(rest, []byte("--")) {
			continue // the closing delimiter
		}
		eol := bytes.TrimLeft(rest, " \t")
		if !bytes.HasPrefix(eol, []byte("\n")) && !bytes.HasPrefix(eol, []byte("\r\n")) {
			continue // not a delimiter line: the boundary followed by more text
		}
		if parts++; parts > phpform.MaxPairs {
			return tooManyParts()
		}
		// The header block ends at the first empty line.
		head := rest[len(rest)-len(eol):]
		window := head[:min(len(head), maxPartHeader+4)]
		if !bytes.Contains(window, []byte("\n\r\n")) && !bytes.Contains(window, []byte("\n\n")) && len(head) > maxPartHeader {
			return httpapi.BadRequest(fmt.Sprintf("multipart/form-data part %d has a header block larger than %d bytes", parts, maxPartHeader))
		}
	}
}

// readParams is the JSON object edge sends catalog-svc for an owner-token read: the query
// parameters (bracket notation) merged with the body's fields (the body wins), property_id
// normalised to one string: /property/{id}, else property_id, else propertyId.
func readParams(c *fiber.Ctx, body []byte, limit int) ([]byte, error) {
	pairs, err := phpform.Split(string(c.Request().URI().QueryString()))
	if err != nil {
		return nil, httpapi.BadRequest("query: " + err.Error())
	}
	params, err := phpform.Build(pairs)
	if err != nil {
		return nil, httpapi.BadRequest("query: " + err.Error())
	}
	if len(bytes.TrimSpace(body)) > 0 {
		js, err := jsonBody(c, body, limit)
		if err != nil {
			return nil, err
		}
		if err := checkJSONDepth(js); err != nil {
			return nil, err
		}
		var fields map[string]any
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.UseNumber()
		if err := dec.Decode(&fields); err != nil || dec.More() {
			var list []any
			if json.Unmarshal(js, &list) == nil && len(list) == 0 {
				fields = nil // PHP's json_encode of an empty array
			} else {
				return nil, httpapi.InvalidField("body", "must be a JSON object, a form or a multipart form")
			}
		}
		for k, v := range fields {
			params[k] = v
		}
	}
	id := c.Params("id")
	if id == "" {
		for _, name := range []string{"property_id", "propertyId"} {
			v, ok := params[name]
			if !ok {
				continue
			}
			switch v := v.(type) {
			case string:
				id = strings.TrimSpace(v)
			case json.Number:
				id = v.String()
			case nil:
			default:
				return nil, httpapi.InvalidField(name, "must be one property id (a number)")
			}
			if id != "" {
				break
			}
		}
	}
	delete(params, "propertyId")
	delete(params, "property_id")
	if id != "" {
		params["property_id"] = id
	}
	return json.Marshal(params)
}

// MaxJSONDepth bounds the nesting of a JSON body edge decodes into generic values (an
// owner-token read's parameters): PHP's max_input_nesting_level, 64 (docs/limits.md).
const MaxJSONDepth = 64

// checkJSONDepth refuses (400) JSON nested deeper than MaxJSONDepth, counting brackets
// outside strings, before anything is decoded.
func checkJSONDepth(js []byte) error {
	depth := 0
	for i := 0; i < len(js); i++ {
		switch js[i] {
		case '"':
			for i++; i < len(js) && js[i] != '"'; i++ {
				if js[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth++; depth > MaxJSONDepth {
				return httpapi.BadRequest(fmt.Sprintf("request body is nested deeper than %d levels", MaxJSONDepth))
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}
