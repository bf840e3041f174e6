package api

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Instrument counts, in meter, every answer of the interface routes in
// vros.booking.requests by action and outcome (requestMetrics). Call it before Register; a
// nil meter counts nothing.
func (a *API) Instrument(meter metric.Meter) {
	if meter == nil {
		return
	}
	c, _ := meter.Int64Counter("vros.booking.requests", metric.WithUnit("{request}"),
		metric.WithDescription("Interface B actions and interface A resources (block dates, owners) answered by booking-svc, by action and outcome (success, status_<interface B status>, http_<code> for interface A)."))
	a.requests = &requestMetrics{counter: c, sets: map[requestKey]metric.MeasurementOption{}}
}

// requestMetrics counts answers. Labels: action, the canonical interface B action (the
// route's last segment: create, getinfo, listbooking…; unknown for a path no route serves) or
// blockdate for interface A's property-blockdate, the route's name for its other resources
// (owner, owner-agreement, …); outcome, success or status_<n> with
// interface B's status (status_8 dates unavailable, status_4 invalid…), http_<code> for an
// interface A error. Both are read from the answer as written, so that an answer replayed
// for an Idempotency-Key counts as what it says. Each pair's attribute set is built once.
type requestMetrics struct {
	counter metric.Int64Counter
	mu      sync.RWMutex
	sets    map[requestKey]metric.MeasurementOption
}

type requestKey struct {
	action string
	http   bool // outcome is an HTTP code (interface A), else interface B's status
	code   int  // 0: success
}

// maxRequestSets bounds the cached sets (actions × statuses are a few dozen).
const maxRequestSets = 1024

// ActionUnknown is the action of a request under /internal/b/ that no route serves.
const ActionUnknown = "unknown"

// ActionBlockDate is the action of interface A's property-blockdate.
const ActionBlockDate = "blockdate"

// countB is the middleware of the /internal/b group: the action is the route's last segment.
func (m *requestMetrics) countB(c *fiber.Ctx) error {
	err := answer(c, c.Next())
	action, ok := strings.CutPrefix(c.Route().Path, "/internal/b/")
	if !ok || action == "" || strings.ContainsAny(action, ":/*") {
		action = ActionUnknown
	}
	k := requestKey{action: action}
	if status, ok := bStatus(c.Response().Body()); ok {
		k.code = status
	} else if code := c.Response().StatusCode(); code >= 300 {
		k.http, k.code = true, code // not an envelope: a failure before any answer
	}
	m.count(c.UserContext(), k)
	return err
}

// countA is the middleware of the /internal/a group: property-blockdate counts as blockdate,
// the other resources (owner, owner-agreement, …) by their route's name, a path no route
// serves as unknown.
func (m *requestMetrics) countA(c *fiber.Ctx) error {
	err := answer(c, c.Next())
	k := requestKey{action: ActionUnknown, http: true}
	switch r, ok := strings.CutPrefix(c.Route().Path, "/internal/a/"); {
	case r == "property-blockdate":
		k.action = ActionBlockDate
	case ok && r != "" && !strings.ContainsAny(r, ":/*"):
		k.action = r // a route's own name: the label set stays the routes'
	}
	if code := c.Response().StatusCode(); code >= 300 {
		k.code = code
	}
	m.count(c.UserContext(), k)
	return err
}

// answer writes err's answer, in the route's envelope, as observe would after this
// middleware, so that the answer can be read; the request is then answered (nil).
func answer(c *fiber.Ctx, err error) error {
	if err == nil {
		return nil
	}
	return c.App().ErrorHandler(c, err)
}

// bStatus reads interface B's status from an answer, `{"status":<n>,…` as every answer of
// the envelope begins.
func bStatus(body []byte) (int, bool) {
	rest, ok := bytes.CutPrefix(body, []byte(`{"status":`))
	if !ok {
		return 0, false
	}
	n, digits := 0, 0
	for _, ch := range rest {
		if ch < '0' || ch > '9' || digits == 6 {
			break
		}
		n = 10*n + int(ch-'0')
		digits++
	}
	return n, digits > 0
}

func (m *requestMetrics) count(ctx context.Context, k requestKey) {
	m.mu.RLock()
	set, ok := m.sets[k]
	m.mu.RUnlock()
	if !ok {
		outcome := "success"
		switch {
		case k.code != 0 && k.http:
			outcome = "http_" + strconv.Itoa(k.code)
		case k.code != 0:
			outcome = "status_" + strconv.Itoa(k.code)
		}
		set = metric.WithAttributeSet(attribute.NewSet(attribute.String("action", k.action), attribute.String("outcome", outcome)))
		m.mu.Lock()
		if len(m.sets) < maxRequestSets {
			m.sets[k] = set
		}
		m.mu.Unlock()
	}
	m.counter.Add(ctx, 1, set)
}
