package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/vros/vros/edge/internal/phpform"
	"github.com/vros/vros/libs/httpapi"
)

// The fuzz targets of the body conversion (body.go): what edge makes of a form, a multipart
// form or a JSON body before a service reads it. Seeds: testdata/fuzz/<target> (the
// compatibility tests' bodies and original-clients.md's).

const (
	formCT      = "application/x-www-form-urlencoded"
	multipartCT = "multipart/form-data"
)

// FuzzJSONBody: jsonBody never panics and is deterministic; a body that starts with `{` or
// `[`, or whose content type is neither a form nor multipart, reaches the service as it was
// sent; a form or multipart body becomes a JSON object of strings no larger than the limit,
// or is refused 400 (malformed) or 413 (over the limit once JSON) and nothing else; and the
// limit is exact: the JSON fits a limit of its own length and not one byte less.
func FuzzJSONBody(f *testing.F) {
	f.Add(formCT, []byte("key=k&pass=p&action=getinfo&include[]=discounttexts"), uint16(64))
	f.Fuzz(func(t *testing.T, ct string, body []byte, small uint16) {
		full, fullErr := callJSONBody(t, ct, "", body, MaxBody)
		again, againErr := callJSONBody(t, ct, "", body, MaxBody)
		if !bytes.Equal(full, again) || fmt.Sprint(fullErr) != fmt.Sprint(againErr) {
			t.Fatalf("jsonBody(%q, %q) is not deterministic: %q %v / %q %v", ct, body, full, fullErr, again, againErr)
		}
		conv := converted(seenCT, body)
		if !conv {
			if fullErr != nil || !bytes.Equal(full, body) {
				t.Fatalf("jsonBody(%q, %q) = %q, %v; want the body as sent", ct, body, full, fullErr)
			}
			return
		}
		if fullErr != nil {
			e := clientError(t, fullErr)
			if e.HTTP != http.StatusBadRequest {
				t.Fatalf("jsonBody(%q, %q) under MaxBody: %v; want a 400", ct, body, fullErr)
			}
		} else {
			checkFormJSON(t, full)
			if !bytes.HasPrefix(full, []byte("{")) {
				t.Fatalf("jsonBody(%q, %q) = %q: not an object", ct, body, full)
			}
		}
		// The limit counts the JSON exactly.
		limit := int(small)
		got, err := callJSONBody(t, ct, "", body, limit)
		switch {
		case fullErr != nil:
			if err == nil || clientError(t, err).HTTP != http.StatusBadRequest && clientError(t, err).HTTP != http.StatusRequestEntityTooLarge {
				t.Fatalf("jsonBody(%q, %q) limit %d: %q %v, want a refusal (%v under MaxBody)", ct, body, limit, got, err, fullErr)
			}
		case len(full) <= limit:
			if err != nil || !bytes.Equal(got, full) {
				t.Fatalf("jsonBody(%q, %q) limit %d: %q %v, want %q", ct, body, limit, got, err, full)
			}
		default:
			if err == nil || clientError(t, err).HTTP != http.StatusRequestEntityTooLarge || !strings.Contains(err.Error(), strconv.Itoa(limit)) {
				t.Fatalf("jsonBody(%q, %q) limit %d: %q %v, want a 413 naming the limit (JSON is %d bytes)", ct, body, limit, got, err, len(full))
			}
		}
		if fullErr == nil {
			if got, err := callJSONBody(t, ct, "", body, len(full)); err != nil || !bytes.Equal(got, full) {
				t.Fatalf("jsonBody(%q, %q) limit %d (its own length): %q %v", ct, body, len(full), got, err)
			}
		}
	})
}

// FuzzFormMultipartAgree: the same fields sent as a form (http_build_query) and as a
// multipart form (PHP curl given an array; a file part as the base64 of its bytes) reach the
// service as the same JSON, or are both refused. The fields come from a form body the
// fuzzer writes; the file is put under photo[image], as property photos are.
func FuzzFormMultipartAgree(f *testing.F) {
	f.Add("action=upload&photo[property_id]=12&photo[main]=1", "photo.jpg", []byte("\xff\xd8\xff\xe0JFIF"))
	f.Fuzz(func(t *testing.T, form, fileName string, file []byte) {
		pairs, err := phpform.Split(form)
		if err != nil {
			return
		}
		var kept []phpform.Pair
		for _, p := range pairs {
			if writable(p.Key) {
				kept = append(kept, p)
			}
		}
		var mp bytes.Buffer
		w := multipart.NewWriter(&mp)
		var enc []string
		for _, p := range kept {
			if err := w.WriteField(p.Key, p.Value); err != nil {
				t.Fatal(err)
			}
			enc = append(enc, phpform.URLEncode(p.Key)+"="+phpform.URLEncode(p.Value))
		}
		if fileName != "" && writable(fileName) {
			fw, err := w.CreateFormFile("photo[image]", fileName)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = fw.Write(file)
			enc = append(enc, phpform.URLEncode("photo[image]")+"="+phpform.URLEncode(base64.StdEncoding.EncodeToString(file)))
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		formBody := []byte(strings.Join(enc, "&"))
		if lead := bytes.TrimLeft(formBody, " \t\r\n"); len(lead) > 0 && (lead[0] == '{' || lead[0] == '[') {
			return // read as JSON whatever its type: not a form
		}
		fromForm, formErr := callJSONBody(t, formCT, "", formBody, MaxBody)
		fromMP, mpErr := callJSONBody(t, w.FormDataContentType(), "", mp.Bytes(), MaxBody)
		if (formErr == nil) != (mpErr == nil) || !bytes.Equal(fromForm, fromMP) {
			t.Fatalf("fields %q (file %q, %d bytes):\n form      %q: %s %v\n multipart %q: %s %v",
				kept, fileName, len(file), formBody, fromForm, formErr, mp.Bytes(), fromMP, mpErr)
		}
		if formErr != nil && clientError(t, formErr).HTTP != clientError(t, mpErr).HTTP {
			t.Fatalf("fields %q: form refused %v, multipart %v", kept, formErr, mpErr)
		}
	})
}

// FuzzReadParams: the parameters of an owner-token read (query merged with a JSON, form or
// multipart body) become one JSON object: the body's fields win over the query's, propertyId
// never reaches the service, property_id is the first of property_id, propertyId that is a
// non-blank string or number (trimmed), else absent; a refusal is a 400 or 413.
func FuzzReadParams(f *testing.F) {
	f.Add("propertyId=21&lang=en", formCT, []byte("property_id=27&domain=example.com"))
	f.Fuzz(func(t *testing.T, query, ct string, body []byte) {
		if strings.ContainsFunc(query, func(r rune) bool { return r <= ' ' || r >= 0x7f || r == '#' }) || len(query) > 4096 {
			return // not a request target a client can send (it percent-encodes those)
		}
		out, err := callReadParams(t, query, ct, body)
		sentCT, sentQuery := seenCT, seenQuery
		out2, err2 := callReadParams(t, query, ct, body)
		if !bytes.Equal(out, out2) || fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("readParams(%q, %q, %q) is not deterministic", query, ct, body)
		}
		if err != nil {
			if e := clientError(t, err); e.HTTP != http.StatusBadRequest && e.HTTP != http.StatusRequestEntityTooLarge {
				t.Fatalf("readParams(%q, %q, %q): %v", query, ct, body, err)
			}
			return
		}
		var got map[string]any
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		if err := dec.Decode(&got); err != nil || got == nil {
			t.Fatalf("readParams(%q, %q, %q) = %q: not a JSON object (%v)", query, ct, body, out, err)
		}
		if _, ok := got["propertyId"]; ok {
			t.Fatalf("readParams(%q, %q, %q) = %s: propertyId passed on", query, ct, body, out)
		}
		// The merge, computed apart: the query's fields, then the body's.
		want, ok := mergedParams(t, sentQuery, sentCT, body)
		if !ok {
			return
		}
		wantID := ""
		for _, name := range []string{"property_id", "propertyId"} {
			switch v := want[name].(type) {
			case string:
				wantID = strings.TrimSpace(v)
			case json.Number:
				wantID = v.String()
			}
			if wantID != "" {
				break
			}
		}
		delete(want, "property_id")
		delete(want, "propertyId")
		if wantID != "" {
			want["property_id"] = wantID
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("readParams(%q, %q, %q) = %s, want %v", query, ct, body, out, want)
		}
	})
}

// mergedParams is the query's fields overwritten by the body's; false when the body is not
// one the merge reads (it was refused, or is an empty list).
func mergedParams(t *testing.T, query, ct string, body []byte) (map[string]any, bool) {
	params, err := phpform.Parse(query)
	if err != nil {
		t.Fatalf("readParams accepted a query phpform refuses: %q: %v", query, err)
	}
	m := map[string]any{}
	b, _ := json.Marshal(params)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	_ = dec.Decode(&m)
	if len(bytes.TrimSpace(body)) == 0 {
		return m, true
	}
	js, err := callJSONBody(t, ct, "", body, bodyLimitRead)
	if seenCT != ct {
		t.Fatalf("content type %q reached the handler as %q", ct, seenCT)
	}
	if err != nil {
		t.Fatalf("readParams accepted a body jsonBody refuses: %q: %v", body, err)
	}
	var fields map[string]any
	dec = json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		return nil, false // [] (PHP's empty array), read as no fields
	}
	for k, v := range fields {
		m[k] = v
	}
	return m, true
}

// converted: jsonBody reads body as a form or multipart (rather than passing it on).
func converted(ct string, body []byte) bool {
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == formCT || mt == multipartCT)
}

// checkFormJSON: js is a JSON object whose leaves are all strings.
func checkFormJSON(t *testing.T, js []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatalf("%q is not JSON: %v", js, err)
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for _, c := range v {
				if !walk(c) {
					return false
				}
			}
		case []any:
			for _, c := range v {
				if !walk(c) {
					return false
				}
			}
		case string:
		default:
			return false
		}
		return true
	}
	if _, ok := v.(map[string]any); !ok || !walk(v) {
		t.Fatalf("%q is not an object of strings", js)
	}
}

// clientError: err is an *httpapi.Error a client sees as 4xx (anything else answers 500).
func clientError(t *testing.T, err error) *httpapi.Error {
	t.Helper()
	var e *httpapi.Error
	if !errors.As(err, &e) || e.HTTP < 400 || e.HTTP >= 500 {
		t.Fatalf("error %v (%T) is not a client error: it answers 500", err, err)
	}
	return e
}

// writable: a field name or file name PHP curl can put in a Content-Disposition header
// (printable, no quote or backslash, which it does not escape).
func writable(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '"' || r == '\\' })
}

// The functions under test read a *fiber.Ctx: a request is routed through a Fiber app (no
// network) to a handler that calls them.
var (
	fuzzAppOnce sync.Once
	fuzzApp     *fiber.App
	fuzzCall    func(c *fiber.Ctx) error
	// What the last request carried, as the handler saw it (fasthttp may normalise what a
	// test sets).
	seenCT, seenQuery string
)

func serveFuzz(t *testing.T, method, target, ct string, call func(c *fiber.Ctx) error) {
	t.Helper()
	fuzzAppOnce.Do(func() {
		fuzzApp = fiber.New()
		h := func(c *fiber.Ctx) error { return fuzzCall(c) }
		fuzzApp.All("/r", h)
		fuzzApp.All("/r/property/:id", h)
	})
	called := false
	fuzzCall = func(c *fiber.Ctx) error { called = true; return call(c) }
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(target)
	if ct != "" {
		req.Header.SetContentType(ct)
	}
	var fctx fasthttp.RequestCtx
	fctx.Init(&req, nil, nil)
	fuzzApp.Handler()(&fctx)
	if !called {
		t.Fatalf("%s %s (Content-Type %q) did not reach the handler: %d %s", method, target, ct, fctx.Response.StatusCode(), fctx.Response.Body())
	}
}

// callJSONBody runs jsonBody on body with content type ct.
func callJSONBody(t *testing.T, ct, query string, body []byte, limit int) (out []byte, err error) {
	t.Helper()
	serveFuzz(t, fiber.MethodPost, "/r?"+query, ct, func(c *fiber.Ctx) error {
		seenCT, seenQuery = c.Get(fiber.HeaderContentType), string(c.Request().URI().QueryString())
		out, err = jsonBody(c, body, limit)
		return nil
	})
	return out, err
}

func callReadParams(t *testing.T, query, ct string, body []byte) (out []byte, err error) {
	t.Helper()
	serveFuzz(t, fiber.MethodPost, "/r?"+query, ct, func(c *fiber.Ctx) error {
		seenCT, seenQuery = c.Get(fiber.HeaderContentType), string(c.Request().URI().QueryString())
		out, err = readParams(c, body, bodyLimitRead)
		return nil
	})
	return out, err
}
