package gateway

import (
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/usage"
)

// request is what a request's steps (pipeline.go) have learned of it, passed from one step
// to the next in its locals: each step reads what the steps before it set, and none reads
// the request again for it (the body is read once, scanned once for its credentials, parsed
// once). It lives as long as its request and no longer: its strings and body may be
// fasthttp's buffers. It is pooled (newRequest, release): a request costs no allocation for
// it, and a released one keeps nothing of its request.
type request struct {
	// The route (step_route.go; interface B's action: step_action.go): what the request asks
	// for, which service answers it at which path, and its own body limit.
	iface      usage.Interface
	kind, name string // "resource" and its name, …: the route in messages
	service    Upstream
	method     string
	path       string
	routeLimit int
	// body is the body as sent, a leading byte-order mark dropped; once parsed
	// (step_parse.go), the JSON the service reads; nil for the public GET routes.
	body []byte
	// contentType is the body's type as sent, forwarded as it is (the channel inbound
	// route's: XML or JSON); "" forwards application/json.
	contentType string

	// The credentials as sent, not yet checked (step_credentials.go): interface A's HTTP
	// Basic in user and password and its second pair in key and pass, interface B's key and
	// pass, an owner-token read's token in pass.
	user, password, key, pass string

	// caller is who the request was authenticated as (step_authenticate.go); authenticated
	// tells it was.
	caller        account.Caller
	authenticated bool
	// limit is the caller's body limit: the route's, or its plan's (step_bodylimit.go).
	limit int

	// upstream is the service's client (step_service.go); publicBase the base URL of an
	// owner-token read's links (step_linkbase.go), sent along as X-Vros-Public-Base.
	upstream   *upstream
	publicBase string

	// The booking API's (engine.go): its route and the checkout its path names
	// (step_route.go), whether the request is a preflight (OPTIONS), and the page's Origin as
	// sent and its brand once allowed (step_origin.go).
	engine     engineRoute
	checkoutID string
	preflight  bool
	origin     string
	brandID    int64
}

// requestKey is the locals key of a request's state: a type of its own, so no other
// middleware's key can be it.
type requestKey struct{}

var requests = sync.Pool{New: func() any { return new(request) }}

// newRequest starts the state of c, for the route step: the first step of every pipeline,
// which releases it once the steps after it have returned.
func newRequest(c *fiber.Ctx, iface usage.Interface, method string) *request {
	st := requests.Get().(*request)
	st.iface, st.method = iface, method
	c.Locals(requestKey{}, st)
	return st
}

// release ends the state of c: nothing reads it after its route step returns (the steps run
// within it, and an error they return holds none of it). It is emptied before it goes back
// to the pool, so that it holds nothing of c's buffers.
func (st *request) release(c *fiber.Ctx) {
	c.Locals(requestKey{}, nil)
	*st = request{}
	requests.Put(st)
}

// requestOf is c's state, set by its route step; nil outside it.
func requestOf(c *fiber.Ctx) *request {
	st, _ := c.Locals(requestKey{}).(*request)
	return st
}

// what names the route in messages: "resource property", "action getinfo", "media".
func (st *request) what() string {
	if st.name == "" {
		return st.kind
	}
	return st.kind + " " + st.name
}
