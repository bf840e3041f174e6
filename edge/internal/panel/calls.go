package panel

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/edge/internal/phpform"
	"github.com/vros/vros/libs/httpapi"
)

// outcome is a service's answer to a panel call, read in its interface's envelope.
type outcome struct {
	// OK: the change or read succeeded; Data is its data.
	OK   bool
	Data json.RawMessage
	// HTTP is the service's status; Message its error message; Violations its field errors
	// by form field (bracket notation, as the forms name their inputs).
	HTTP       int
	Message    string
	Violations map[string]string
	// Details are the violations as the service wrote them ("set.max_stay: must be …").
	Details []string
}

// envelope reads both interfaces' envelopes.
type envelope struct {
	Code         int             `json:"code"`
	Status       *int            `json:"status"`
	Message      string          `json:"message"`
	ErrorMessage string          `json:"error_message"`
	Data         json.RawMessage `json:"data"`
	Errors       []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"errors"`
}

// asker is who a panel call acts for, taken off the request: the request's context, the
// signed-in owner's account and the request id (copied). Calls made beside each other
// (bounded, in goroutines: the multi-property calendar, a bulk edit) use it instead of the
// fiber.Ctx, which is the request's and is not for other goroutines.
type asker struct {
	ctx       context.Context
	caller    account.Caller
	requestID string
}

func askerOf(c *fiber.Ctx) asker {
	return asker{ctx: c.UserContext(), caller: callerOf(c), requestID: strings.Clone(httpapi.RequestID(c))}
}

// call sends body (a value to encode as JSON, or []byte already JSON) to name of iface as the
// signed-in owner's account, through the gateway. A service's refusal (a 4xx, interface B's
// non-zero status) is an outcome to show; an error is a failure to reach it or a 5xx.
func (p *Panel) call(c *fiber.Ctx, iface gateway.Interface, name string, body any) (outcome, error) {
	return p.callAs(askerOf(c), iface, name, body)
}

// callAs is call for a, safe to run beside other calls of the same request.
func (p *Panel) callAs(a asker, iface gateway.Interface, name string, body any) (outcome, error) {
	js, ok := body.([]byte)
	if !ok {
		var err error
		if js, err = json.Marshal(body); err != nil {
			return outcome{}, err
		}
	}
	ans, err := p.cfg.Gateway.Call(a.ctx, a.caller, iface, name, js, a.requestID)
	if err != nil {
		return outcome{}, err
	}
	if ans.Status >= 500 {
		return outcome{}, fmt.Errorf("%s %s answered HTTP %d: %.300s", iface, name, ans.Status, ans.Body)
	}
	var env envelope
	if err := json.Unmarshal(ans.Body, &env); err != nil {
		return outcome{}, fmt.Errorf("%s %s answered %d with no envelope: %.300s", iface, name, ans.Status, ans.Body)
	}
	o := outcome{HTTP: ans.Status, Data: env.Data, Message: env.ErrorMessage}
	if o.Message == "" {
		o.Message = env.Message
	}
	o.OK = ans.Status == fiber.StatusOK && (env.Status == nil || *env.Status == 0)
	if len(env.Errors) > 0 {
		o.Violations = map[string]string{}
		for _, v := range env.Errors {
			o.Violations[bracket(v.Field)] = v.Message
			o.Details = append(o.Details, v.Field+": "+v.Message)
		}
	}
	return o, nil
}

// must is call for a read the page needs: anything but success fails the page (404 for
// something the account does not have).
func (p *Panel) must(c *fiber.Ctx, iface gateway.Interface, name string, body any, out any) error {
	return p.mustAs(askerOf(c), iface, name, body, out)
}

// mustAs is must for a, safe to run beside other calls of the same request.
func (p *Panel) mustAs(a asker, iface gateway.Interface, name string, body any, out any) error {
	data, err := p.mustRaw(a, iface, name, body)
	if err != nil || out == nil {
		return err
	}
	return unmarshal(data, out)
}

// mustRaw is mustAs answering the call's data as it came, for a page that reads it its own
// way (loose, listOf).
func (p *Panel) mustRaw(a asker, iface gateway.Interface, name string, body any) (json.RawMessage, error) {
	o, err := p.callAs(a, iface, name, body)
	if err != nil {
		return nil, err
	}
	if !o.OK {
		if o.HTTP == fiber.StatusNotFound {
			return nil, errNotYours
		}
		return nil, &httpapi.Error{HTTP: max(o.HTTP, 400), Message: o.Message}
	}
	return o.Data, nil
}

// callsAtOnce bounds the calls one page makes at the same time (the multi-property calendar's
// reads, a bulk edit's writes): they count against the account's in-flight and rate limits
// like its API requests, and a page must not take them all.
const callsAtOnce = 4

// each runs f(i) for i in [0, n), at most callsAtOnce at a time, and returns when all have.
func each(n int, f func(i int)) {
	sem := make(chan struct{}, callsAtOnce)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(i)
		})
	}
	wg.Wait()
}

// refused shows a service's refusal on the page the form came from (show draws it, with the
// service's status): a 404 — something the account does not have, or another account's — is
// the not-found page instead, whichever form asked.
func refused(c *fiber.Ctx, o outcome, show func() error) error {
	if o.HTTP == fiber.StatusNotFound {
		return errNotYours
	}
	c.Status(o.HTTP)
	return show()
}

// unmarshal decodes a call's data; no data leaves out as it is.
func unmarshal(data json.RawMessage, out any) error {
	if len(data) == 0 || string(data) == "null" {
		return nil
	}
	return json.Unmarshal(data, out)
}

// bracket writes a violation's JSON path (property.space.value, season[1].start_date) as a
// form field's name (property[space][value], season[1][start_date]).
func bracket(path string) string {
	parts := strings.Split(path, ".")
	for i := 1; i < len(parts); i++ {
		parts[i] = "[" + strings.Replace(parts[i], "[", "][", 1) + "]"
		parts[i] = strings.Replace(parts[i], "]]", "]", 1)
	}
	return strings.Join(parts, "")
}

// rowKey is a form field of a repeated row: season[2][daily_price] is row "season[2]".
var rowKey = regexp.MustCompile(`^([a-z_]+\[\d+\])\[`)

// form is a posted form: its values by field name, and the JSON object it makes in the
// bracket notation interface A reads (PHP's), without the CSRF token, the fields named in
// skip, and rows whose every field is blank (the spare rows a form offers).
func form(c *fiber.Ctx, skip ...string) (map[string]string, map[string]any, error) {
	pairs, err := phpform.Split(string(c.Body()))
	if err != nil {
		return nil, nil, &httpapi.Error{HTTP: fiber.StatusBadRequest, Message: err.Error()}
	}
	values := map[string]string{}
	filled := map[string]bool{}
	for _, pr := range pairs {
		values[pr.Key] = pr.Value
		if m := rowKey.FindStringSubmatch(pr.Key); m != nil && strings.TrimSpace(pr.Value) != "" {
			filled[m[1]] = true
		}
	}
	kept := pairs[:0]
	for _, pr := range pairs {
		if pr.Key == csrfField || contains(skip, pr.Key) {
			continue
		}
		if m := rowKey.FindStringSubmatch(pr.Key); m != nil && !filled[m[1]] {
			continue
		}
		kept = append(kept, pr)
	}
	obj, err := phpform.Build(kept)
	if err != nil {
		return nil, nil, &httpapi.Error{HTTP: fiber.StatusBadRequest, Message: err.Error()}
	}
	prune(obj)
	return values, obj, nil
}

// prune drops the objects within obj whose every value is blank: a form's optional group
// left empty (a policy's damage deposit, a payment kind not chosen) is not sent, as a
// client that has none sends none.
func prune(obj map[string]any) (blank bool) {
	blank = true
	for k, v := range obj {
		switch x := v.(type) {
		case map[string]any:
			if prune(x) {
				delete(obj, k)
				continue
			}
		case string:
			if strings.TrimSpace(x) == "" {
				continue
			}
		}
		blank = false
	}
	return blank
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
