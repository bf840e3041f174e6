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

// maxCredential bounds the length of a credential read from a body: every key, pass,
// servicekey and servicepass edge issues is far shorter, so a longer one is wrong without a
// lookup, and reading it costs nothing more.
const maxCredential = 1 << 10

// credentialNames are the body fields a caller's credentials travel in: interface B's
// key/pass, interface A's servicekey/servicepass.
type credentialNames [2]string

var (
	namesB = credentialNames{"key", "pass"}
	namesA = credentialNames{"servicekey", "servicepass"}
)

// errCredentialTooLong is a credential over maxCredential bytes: wrong, as no credential is
// that long.
var errCredentialTooLong = errors.New("credential too long")

// bodyCredentials reads the two fields names of a body before anything else of it, in the
// format BodyJSON reads it in (JSON whatever its content type when it starts with `{` or
// `[`, else a form or a multipart form by its content type), without building the body:
//   - JSON: the members of the top-level object, the others skipped without being decoded
//     (a member matches its field as encoding/json matches it, case aside; the last one
//     counts);
//   - a form: its `&`-separated pairs one at a time, each key decoded and checked
//     (phpform.Scan), only the two values decoded (a key matches as the JSON BodyJSON makes
//     of the form would: see formFields);
//   - multipart: its parts one at a time, only the two read (at most maxCredential bytes),
//     matched as a form's keys are.
//
// strict is interface B's reading, where the body must be an object carrying them: a body
// that is not one is refused 400, as is a credential that is not a string. Otherwise
// (interface A's second pair, which may travel in headers instead) such a body has no
// credentials. A form or multipart body that is malformed, or over a limit of phpform's or
// of multipart's, is refused 400 either way, naming the key or the limit. A credential over
// maxCredential bytes is errCredentialTooLong.
func bodyCredentials(ct string, body []byte, names credentialNames, strict bool) (vals [2]string, err error) {
	if IsJSONBody(body) {
		return jsonCredentials(body, names, strict)
	}
	mt, params, perr := mime.ParseMediaType(ct)
	switch {
	case ct == "" || perr != nil:
	case mt == fiber.MIMEApplicationForm:
		return formCredentials(body, names, strict)
	case mt == fiber.MIMEMultipartForm:
		return multipartCredentials(body, params["boundary"], names, strict)
	}
	if strict {
		return vals, notAnObject()
	}
	return vals, nil
}

func notAnObject() error { return httpapi.BadRequest("request body is not a JSON object") }

// jsonCredentials scans the top level of a JSON body for the two members names.
func jsonCredentials(body []byte, names credentialNames, strict bool) (vals [2]string, err error) {
	// json.Valid keeps one int per level of nesting, up to encoding/json's own bound of
	// 10 000 levels, and builds nothing.
	s := bytes.TrimLeft(body, " \t\r\n")
	if !json.Valid(s) || s[0] != '{' {
		if strict {
			return vals, notAnObject()
		}
		return vals, nil
	}
	s = s[1:]
	for {
		s = skipSpace(s)
		if s[0] == '}' {
			return vals, nil
		}
		if s[0] == ',' {
			s = skipSpace(s[1:])
		}
		end := stringEnd(s)
		rawName := s[:end]
		s = skipSpace(s[end:])[1:] // the ':'
		s = skipSpace(s)
		vend := valueEnd(s)
		raw := s[:vend]
		s = s[vend:]
		for i, name := range names {
			if !memberIs(rawName, name) {
				continue
			}
			switch {
			case raw[0] == '"':
				var v string
				// A character is at most 6 bytes escaped (\u00e9).
				if len(raw) > 6*maxCredential+2 {
					return vals, errCredentialTooLong
				}
				_ = json.Unmarshal(raw, &v) // valid: json.Valid said so
				if len(v) > maxCredential {
					return vals, errCredentialTooLong
				}
				vals[i] = v
			case string(raw) == "null":
				vals[i] = "" // encoding/json leaves the field as it was; null is no credential
			case strict:
				return vals, httpapi.InvalidField(name, "must be a string")
			default:
				vals[i] = ""
			}
		}
	}
}

// memberIs reports whether the JSON string rawName (quoted, valid) names the field name as
// encoding/json matches struct fields: exactly, or else case-insensitively.
func memberIs(rawName []byte, name string) bool {
	if len(rawName) > 6*len(name)+2 {
		return false // a character of name is at most 6 bytes of rawName: escaped, or one folding to it
	}
	n := rawName[1 : len(rawName)-1]
	if bytes.IndexByte(n, '\\') >= 0 {
		var s string
		if json.Unmarshal(rawName, &s) != nil {
			return false
		}
		return strings.EqualFold(s, name)
	}
	return strings.EqualFold(string(n), name)
}

func skipSpace(s []byte) []byte {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\r' || s[0] == '\n') {
		s = s[1:]
	}
	return s
}

// stringEnd is the length of the JSON string s starts with, quotes included (s is valid).
func stringEnd(s []byte) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(s)
}

// valueEnd is the length of the JSON value s starts with (s is valid JSON from a value on):
// a string, a scalar, or an array or object skipped by counting its brackets outside
// strings, with no stack.
func valueEnd(s []byte) int {
	switch s[0] {
	case '"':
		return stringEnd(s)
	case '{', '[':
		depth := 0
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '"':
				i += stringEnd(s[i:]) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(s)
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
	}
	return len(s)
}

// found is the value a plain pair of a form (`key=…`) gave a credential.
type found struct {
	val  string
	long bool // over maxCredential
}

// formFields is what a form's scan has seen of the fields that set the two credentials.
// BodyJSON builds a form into a map, which encoding/json writes with its keys in byte
// order, and the envelope's decoding then matches each of them as encoding/json does: a
// key equal to the name but for case (`KEY`, `Key`, `\u212aey` with the Kelvin sign) sets
// it too, and the last one in that order counts. So per credential the scan keeps the
// greatest such key and its last value, and whether any such key was given a list or
// object (which BodyJSON refuses when the key also has a plain value, and the envelope
// then does not decode).
type formFields struct {
	names  credentialNames
	best   [2]string
	last   [2]found
	nested [2]bool
}

// see records one pair of the form by its key; read gives the value of a plain pair that
// sets a credential, and is called for no other.
func (ff *formFields) see(key string, read func() (found, error)) error {
	name, _, _ := strings.Cut(key, "[")
	for i, n := range ff.names {
		switch {
		case !strings.EqualFold(name, n):
			continue
		case name != key: // `key[]=…`, `KEY[a]=…`
			ff.nested[i] = true
			continue
		}
		f, err := read()
		if err != nil {
			return err
		}
		if name >= ff.best[i] {
			ff.best[i], ff.last[i] = name, f
		}
	}
	return nil
}

// finish is the credentials the form gave: a field set by a list or object is refused in
// strict reading, and is no credential otherwise.
func (ff *formFields) finish(strict bool) (vals [2]string, err error) {
	for i := range ff.last {
		if ff.nested[i] {
			if strict {
				return vals, httpapi.InvalidField(ff.names[i], "must be a string")
			}
			continue
		}
		if ff.last[i].long {
			return vals, errCredentialTooLong
		}
		vals[i] = ff.last[i].val
	}
	return vals, nil
}

// formCredentials scans a form's pairs for the two fields names.
func formCredentials(body []byte, names credentialNames, strict bool) ([2]string, error) {
	ff := formFields{names: names}
	err := phpform.Scan(body, func(key string, rawVal []byte) error {
		return ff.see(key, func() (found, error) {
			if len(rawVal) > 3*maxCredential {
				return found{long: true}, nil
			}
			v, err := phpform.Unescape(key, rawVal)
			if len(v) > maxCredential {
				return found{long: true}, err
			}
			return found{val: v}, err
		})
	})
	if err != nil {
		return [2]string{}, formError(err)
	}
	return ff.finish(strict)
}

// formError is phpform's refusal of a form: 400, naming the key or the limit.
func formError(err error) error {
	return httpapi.BadRequest(err.Error())
}

// multipartCredentials reads a multipart form's parts one at a time for the two fields
// names; the other parts are skipped unread (multipart's reader discards them through a
// small buffer).
func multipartCredentials(body []byte, boundary string, names credentialNames, strict bool) ([2]string, error) {
	ff := formFields{names: names}
	err := eachPart(body, boundary, func(p *multipart.Part, name string) error {
		return ff.see(name, func() (found, error) {
			data, err := io.ReadAll(io.LimitReader(p, maxCredential+1))
			switch {
			case err != nil:
				return found{}, httpapi.BadRequest(fmt.Sprintf("multipart/form-data part %q is malformed: %v", name, err))
			case len(data) > maxCredential:
				return found{long: true}, nil
			case p.FileName() != "":
				return found{val: base64.StdEncoding.EncodeToString(data)}, nil
			}
			return found{val: string(data)}, nil
		})
	})
	if err != nil {
		return [2]string{}, err
	}
	return ff.finish(strict)
}
