package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vros/vros/edge/openapi"
)

// Contract checks requests and answers against vros's OpenAPI documents (edge/openapi),
// with kin-openapi's validator: an answer that drifts from its document, an answer with a
// status the document does not list, and a request the document refuses that vros accepted
// are violations. As a RoundTripper it checks every exchange of a client; the violations
// are collected (a transport cannot fail a test) and read with Violations.
//
// What it reads as the documents promise:
//   - a request body as edge reads it (openapi.RequestJSON: JSON whatever its content type
//     says, PHP form and multipart bodies in bracket notation), checked as JSON; a body of
//     another type (the channel inbound route's XML) only by its content type, as answers;
//   - interface B: a success answer's `data` against the schema `<action>Data` of the
//     request's action, since one operation serves every action;
//   - a request the document refuses, or one to a path no document has, must be refused:
//     interface A with an HTTP error, interface B with a non-zero `status`.
type Contract struct {
	// Next sends the requests; http.DefaultTransport when nil.
	Next http.RoundTripper
	// Host is edge's host:port: exchanges with other hosts (a test's webhook receiver or
	// feed server, a service's own listener) are not checked.
	Host string

	docs []*contractDoc
	// bData is the pointer of each interface B action's success data schema, by action.
	bData map[string]string
	alias map[string]string

	mu         sync.Mutex
	violations []string
	checked    int
}

type contractDoc struct {
	name   string
	doc    *openapi3.T
	router routers.Router
	// schemas compiles the document's schemas once each (kin-openapi compiles a 3.1
	// schema at every validation: 30 ms an exchange, the suite three times slower).
	schemas *jsonschema.Compiler
	url     string
	mu      sync.Mutex
	cache   map[string]*jsonschema.Schema
}

// schema is the compiled schema at ptr, a JSON pointer into the document.
func (d *contractDoc) schema(ptr string) (*jsonschema.Schema, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.cache[ptr]; ok {
		return s, nil
	}
	s, err := d.schemas.Compile(d.url + "#" + ptr)
	if err != nil {
		return nil, fmt.Errorf("openapi %s: schema %s: %w", d.name, ptr, err)
	}
	d.cache[ptr] = s
	return s, nil
}

// validate checks the JSON body against the schema at ptr.
func (d *contractDoc) validate(ptr string, body []byte) error {
	s, err := d.schema(ptr)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.Validate(v)
}

// pointer is the JSON pointer of tokens.
func pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString("/")
		b.WriteString(url.PathEscape(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")))
	}
	return b.String()
}

// refOr is the pointer of a $ref ("#/components/…") when there is one, else at.
func refOr(ref, at string) string {
	if p, ok := strings.CutPrefix(ref, "#"); ok {
		return p
	}
	return at
}

// unchecked are the paths no document describes on purpose: the documents and the
// reference page themselves.
var unchecked = []string{"/openapi/", "/reference"}

// NewContract loads every document (each checked, examples too).
func NewContract(ctx context.Context) (*Contract, error) {
	c := &Contract{bData: map[string]string{}, alias: map[string]string{"addservice": "insertservice"}}
	for _, name := range openapi.Documents {
		doc, err := openapi.Load(ctx, name)
		if err != nil {
			return nil, err
		}
		// The documents name make run's addresses; the tests' edge listens elsewhere.
		doc.Servers = openapi3.Servers{{URL: "/"}}
		// Paths with servers of their own (edge's internal listener) are not on edge's
		// public port, which the tests talk to.
		for p, item := range doc.Paths.Map() {
			if len(item.Servers) > 0 {
				doc.Paths.Delete(p)
			}
		}
		r, err := gorillamux.NewRouter(doc)
		if err != nil {
			return nil, fmt.Errorf("openapi %s: %w", name, err)
		}
		js, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		whole, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
		if err != nil {
			return nil, err
		}
		comp := jsonschema.NewCompiler()
		comp.DefaultDraft(jsonschema.Draft2020)
		u := "urn:vros:openapi:" + name
		if err := comp.AddResource(u, whole); err != nil {
			return nil, fmt.Errorf("openapi %s: %w", name, err)
		}
		c.docs = append(c.docs, &contractDoc{name: name, doc: doc, router: r, schemas: comp, url: u, cache: map[string]*jsonschema.Schema{}})
		if doc.Components == nil {
			continue
		}
		for key := range doc.Components.Schemas {
			if action, ok := strings.CutSuffix(key, "Data"); ok && name == "interface-b" {
				c.bData[action] = pointer("components", "schemas", key)
			}
		}
	}
	return c, nil
}

// Violations are the violations seen so far.
func (c *Contract) Violations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.violations)
}

// Checked is how many exchanges were checked.
func (c *Contract) Checked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.checked
}

// RoundTrip sends r with Next and checks the exchange.
func (c *Contract) RoundTrip(r *http.Request) (*http.Response, error) {
	return c.roundTrip(c.Next, r)
}

// Through is a RoundTripper that sends with next and checks every exchange with c (its
// violations are c's).
func (c *Contract) Through(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) { return c.roundTrip(next, r) })
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (c *Contract) roundTrip(next http.RoundTripper, r *http.Request) (*http.Response, error) {
	var reqBody []byte
	if r.Body != nil {
		var err error
		if reqBody, err = io.ReadAll(r.Body); err != nil {
			return nil, err
		}
		_ = r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	respBody, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	if err != nil {
		return resp, err
	}
	if c.Host != "" && r.URL.Host != c.Host {
		return resp, nil
	}
	if err := c.Check(r.Context(), r.Method, r.URL, r.Header, reqBody, resp.StatusCode, resp.Header, respBody); err != nil {
		c.mu.Lock()
		c.violations = append(c.violations, err.Error())
		c.mu.Unlock()
	}
	return resp, nil
}

// Check checks one exchange: nil when it keeps to the documents.
func (c *Contract) Check(ctx context.Context, method string, u *url.URL, header http.Header, reqBody []byte,
	status int, respHeader http.Header, respBody []byte) error {
	for _, p := range unchecked {
		if strings.HasPrefix(u.Path, p) {
			return nil
		}
	}
	c.mu.Lock()
	c.checked++
	c.mu.Unlock()
	what := fmt.Sprintf("%s %s → %d", method, u.Path, status)
	reqBody = openapi.RequestBody(reqBody)
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(reqBody))
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	req.Header = header.Clone()
	// edge reads a body that looks like JSON as JSON, whatever its content type says.
	if len(reqBody) > 0 && openapi.IsJSON(reqBody) {
		req.Header.Set("Content-Type", "application/json")
	}
	d, route, params := c.find(req)
	if route == nil {
		if refused(u.Path, status, respBody) {
			return nil
		}
		return fmt.Errorf("%s: no document has this operation, and vros accepted it: %.300s", what, respBody)
	}
	// kin-openapi checks parameters, statuses and content types; the bodies are checked
	// with the compiled schemas.
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true, ExcludeRequestBody: true}}
	reqErr := openapi3filter.ValidateRequest(ctx, in)
	if reqErr == nil {
		reqErr = d.requestBody(route, req.Header.Get("Content-Type"), reqBody)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: respHeader,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: true}}
	out.SetBodyBytes(respBody)
	err = openapi3filter.ValidateResponse(ctx, out)
	if err == nil {
		err = d.responseBody(route, status, respHeader.Get("Content-Type"), respBody)
	}
	if err != nil {
		return fmt.Errorf("%s (%s %s): the answer breaks the document: %v; answer: %.500s", what, d.name, route.Operation.OperationID, err, respBody)
	}
	if reqErr != nil && !refused(u.Path, status, respBody) {
		return fmt.Errorf("%s (%s %s): the document refuses the request, vros accepted it: %v; request: %.300s; answer: %.300s",
			what, d.name, route.Operation.OperationID, reqErr, reqBody, respBody)
	}
	if d.name == "interface-b" && strings.HasPrefix(u.Path, "/vros/external-booking") {
		return c.checkBData(d, what, req.Header.Get("Content-Type"), reqBody, respBody)
	}
	return nil
}

// requestBody checks a request body (read as edge reads it) against its operation's schema.
func (d *contractDoc) requestBody(route *routers.Route, contentType string, body []byte) error {
	rb := route.Operation.RequestBody
	if rb == nil || rb.Value == nil {
		return nil
	}
	if len(body) == 0 {
		if rb.Value.Required {
			return errors.New("request body is required")
		}
		return nil
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if rb.Value.Content.Get(mt) == nil {
		return fmt.Errorf("content type %q is not one of the operation's", contentType)
	}
	js, err := openapi.RequestJSON(contentType, body)
	if err != nil {
		return err
	}
	if mt != "application/json" && mt != "application/x-www-form-urlencoded" && mt != "multipart/form-data" {
		return nil // XML (the channel inbound route's SOAP): the content type is the operation's, as for answers
	}
	at := pointer("paths", route.Path, strings.ToLower(route.Method), "requestBody")
	return d.validate(refOr(rb.Ref, at)+pointer("content", mt, "schema"), js)
}

// responseBody checks a JSON answer against the schema of its status.
func (d *contractDoc) responseBody(route *routers.Route, status int, contentType string, body []byte) error {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt != "application/json" {
		return nil // text, calendars and files: kin-openapi checked the content type
	}
	key, ref := "", ""
	code := strconv.Itoa(status)
	for _, k := range []string{code, code[:1] + "XX", "default"} {
		if r := route.Operation.Responses.Value(k); r != nil {
			key, ref = k, r.Ref
			break
		}
	}
	if key == "" {
		return fmt.Errorf("status %d is not documented", status)
	}
	at := pointer("paths", route.Path, strings.ToLower(route.Method), "responses", key)
	r := route.Operation.Responses.Value(key).Value
	if r == nil || r.Content.Get(mt) == nil || r.Content.Get(mt).Schema == nil {
		return nil
	}
	return d.validate(refOr(ref, at)+pointer("content", mt, "schema"), body)
}

// find is the document and operation of req, if a document has it.
func (c *Contract) find(req *http.Request) (*contractDoc, *routers.Route, map[string]string) {
	for _, d := range c.docs {
		route, params, err := d.router.FindRoute(req)
		if err == nil {
			return d, route, params
		}
	}
	return nil, nil, nil
}

// refused reports whether vros refused the request: an HTTP error, or interface B's
// non-zero status.
func refused(path string, status int, body []byte) bool {
	if status >= 400 {
		return true
	}
	if !strings.HasPrefix(path, "/vros/") {
		return false
	}
	var env struct {
		Status *json.Number `json:"status"`
	}
	if json.Unmarshal(body, &env) != nil || env.Status == nil {
		return false
	}
	return env.Status.String() != "0"
}

// checkBData checks a successful interface B answer's data against its action's schema.
func (c *Contract) checkBData(d *contractDoc, what, contentType string, reqBody, respBody []byte) error {
	var env struct {
		Status json.Number     `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	if json.Unmarshal(respBody, &env) != nil || env.Status.String() != "0" {
		return nil
	}
	asJSON, err := openapi.RequestJSON(contentType, reqBody)
	if err != nil {
		return nil // refused by edge: no success to check
	}
	var fields struct {
		Action string `json:"action"`
	}
	if json.Unmarshal(asJSON, &fields) != nil {
		return nil
	}
	action := strings.ToLower(fields.Action)
	if a, ok := c.alias[action]; ok {
		action = a
	}
	ptr, ok := c.bData[action]
	if !ok {
		return fmt.Errorf("%s: interface B action %q succeeded but the document has no schema %sData", what, action, action)
	}
	data := env.Data
	if len(data) == 0 {
		data = []byte("null")
	}
	if err := d.validate(ptr, data); err != nil {
		return fmt.Errorf("%s: action %s: data breaks %sData: %v; answer: %.500s", what, action, action, err, respBody)
	}
	return nil
}

// Body decoders: kin-openapi reads form and multipart bodies as edge does.
func init() {
	decode := func(body io.Reader, h http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		raw, err := io.ReadAll(body)
		if err != nil {
			return nil, err
		}
		js, err := openapi.RequestJSON(h.Get("Content-Type"), raw)
		if err != nil {
			return nil, err
		}
		var v any
		if err := json.Unmarshal(js, &v); err != nil {
			return nil, err
		}
		return v, nil
	}
	openapi3filter.RegisterBodyDecoder("application/x-www-form-urlencoded", decode)
	openapi3filter.RegisterBodyDecoder("multipart/form-data", decode)
}
