package gateway

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/usage"
	"github.com/vros/vros/libs/httpapi"
)

// Step: the route. The first step of each pipeline: what the path asks for (an unknown
// name is 404, before anything else is read), the service and path that answer it
// (routes.go), the route's own body limit, and the body as sent. It starts the request's
// state (request.go), and ends it once the steps after it have returned.

// routeA: POST /api/{resource}.
func (g *Gateway) routeA(c *fiber.Ctx) error {
	name := c.Params("resource")
	r, ok := resources[name]
	if !ok {
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("unknown resource %q", name))
	}
	st := newRequest(c, usage.A, fiber.MethodPost)
	defer st.release(c)
	st.kind, st.name = "resource", name
	st.service, st.path, st.routeLimit = r.service, "/internal/a/"+name, r.bodyLimit
	st.body = WithoutBOM(c.Body())
	return c.Next()
}

// routeB: POST /vros/external-booking. The action, and so the service, is in the body: it
// is read once the caller is authenticated and the body parsed (step_action.go).
func (g *Gateway) routeB(c *fiber.Ctx) error {
	st := newRequest(c, usage.B, fiber.MethodPost)
	defer st.release(c)
	st.routeLimit = bodyLimitB
	st.body = WithoutBOM(c.Body())
	return c.Next()
}

// routeRead: GET or POST /vros/api/{name}/owner_token/{token}[/property/{id}], forwarded as
// POST /internal/read/{name} with the read's parameters (step_parse.go).
func (g *Gateway) routeRead(c *fiber.Ctx) error {
	name := c.Params("name")
	svc, ok := reads[name]
	if !ok {
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("unknown endpoint %q", name))
	}
	st := newRequest(c, usage.Read, fiber.MethodPost)
	defer st.release(c)
	st.kind, st.name = "endpoint", name
	st.service, st.path, st.routeLimit = svc, "/internal/read/"+name, bodyLimitRead
	st.body = WithoutBOM(c.Body())
	return c.Next()
}

// routeEngine: the booking API, /widget/api/v1/{token}/{route} (engine.go's table), forwarded
// as POST {service}/internal/engine/…. An OPTIONS is the route's preflight; HEAD is read as
// GET. Another method is 405 naming the route's (Allow), a path of no route 404, before
// anything else is read. Every answer of the API varies by Origin (step_origin.go).
func (g *Gateway) routeEngine(c *fiber.Ctx) error {
	c.Set(fiber.HeaderVary, fiber.HeaderOrigin)
	r, id, ok := engineRouteOf(c.Params("*"))
	if !ok {
		return engineNotFound(c)
	}
	method := c.Method()
	preflight := method == fiber.MethodOptions
	if method == fiber.MethodHead {
		method = fiber.MethodGet
	}
	if !preflight && method != r.method {
		c.Set(fiber.HeaderAllow, r.method+", OPTIONS")
		return &httpapi.Error{HTTP: fiber.StatusMethodNotAllowed, Type: "method_not_allowed", Status: httpapi.StatusInvalid,
			Message: fmt.Sprintf("%s %s: use %s", c.Method(), r.name, r.method)}
	}
	st := newRequest(c, usage.Engine, fiber.MethodPost)
	defer st.release(c)
	st.kind, st.name = "booking API", r.name
	st.engine, st.checkoutID, st.preflight = r, strings.Clone(id), preflight
	st.service, st.path, st.routeLimit = r.service, r.path, bodyLimitEngine
	st.body = WithoutBOM(c.Body())
	return c.Next()
}

// engineNotFound answers a path under /widget/api/ that is no route of the booking API.
// The path is not repeated: an owner token may be in it.
func engineNotFound(c *fiber.Ctx) error {
	c.Set(fiber.HeaderVary, fiber.HeaderOrigin)
	return httpapi.NotFound(httpapi.StatusNotFound, "no such route of the booking API (docs/booking-engine.md)")
}

// routeMedia: GET /media/{key}/{file}, public (websites embed photos); keys are
// unguessable. Only a key and a file name property-svc could have made are forwarded
// (mediaName): the parameters are the path as sent, and the outgoing request would decode
// an escaped `/` or `.` in them and resolve `..`, reaching property-svc's internal paths.
// Anything else is 404 with Cache-Control: no-store, as for the iCal feed.
func (g *Gateway) routeMedia(c *fiber.Ctx) error {
	if !mediaName(c.Params("key"), "") || !mediaName(c.Params("file"), ".jpg") {
		c.Set(fiber.HeaderCacheControl, "no-store")
		return httpapi.NotFound(httpapi.StatusNotFound, "no such image")
	}
	st := newRequest(c, 0, fiber.MethodGet)
	defer st.release(c)
	st.kind, st.service, st.path = "media", PropertySvc, "/media/"+c.Params("key")+"/"+c.Params("file")
	return c.Next()
}

// routeICal: GET|HEAD /ical/{token}.ics, the iCal export of a property, public (channels
// read it without credentials: the token is the capability) → catalog-svc GET
// /internal/ical/{file} with an empty tenant, as /media is. If-None-Match goes along; ETag,
// Cache-Control, Content-Type and a 304 come back unchanged. Nothing is counted in usage (no
// account is known). An unknown token is not a failed authentication of the caller's
// address: tokens are 256 random bits, so the throttle would not slow guessing, while
// channels poll from a few shared addresses and keep polling links that died (rotated,
// revoked, deleted), so counting them would refuse those addresses every other owner's
// feeds, and anyone could lock a channel out by subscribing it to made-up links
// (docs/limits.md).
func (g *Gateway) routeICal(c *fiber.Ctx) error {
	file := c.Params("file")
	if !icalFile(file) {
		c.Set(fiber.HeaderCacheControl, "no-store")
		return httpapi.NotFound(httpapi.StatusNotFound, "no such calendar")
	}
	st := newRequest(c, 0, fiber.MethodGet)
	defer st.release(c)
	st.kind, st.service, st.path = "the iCal export", CatalogSvc, "/internal/ical/"+file
	return c.Next()
}

// routeChannel: POST /channels/{adapter}/{token}, a channel manager's message for one
// connection (Channex's webhook, an OpenTravel reservation push), public (the channel
// manager sends no vros credentials: the connection's token is the capability) →
// integration-svc POST /internal/channels/inbound/{adapter}/{token} with an empty tenant,
// as the iCal export is reached. The body and its Content-Type go as sent (SOAP is XML), up
// to 1 MiB (413 over it, before anything is forwarded); the answer comes back with its
// status and type. Nothing is counted in usage. An unknown token (integration-svc's 404),
// like an unknown adapter or a malformed token, is not a failed authentication of the
// address, for the iCal export's reasons (docs/limits.md): tokens are 256 random bits, and
// a channel manager posts every account's messages from a few shared addresses and keeps
// posting to a connection that was deleted or whose token was rotated, so counting those
// 404s would refuse it every other owner's reservations.
func (g *Gateway) routeChannel(c *fiber.Ctx) error {
	adapter, token := c.Params("adapter"), c.Params("token")
	if !channelAdapters[adapter] || !nameWith(token, "", 128) {
		c.Set(fiber.HeaderCacheControl, "no-store")
		return httpapi.NotFound(httpapi.StatusNotFound, "no such channel connection")
	}
	body := c.Body()
	if len(body) > bodyLimitChannel {
		return httpapi.TooLarge(bodyLimitChannel)
	}
	st := newRequest(c, 0, fiber.MethodPost)
	defer st.release(c)
	st.kind, st.service, st.path = "the channel inbound route", IntegrationSvc, "/internal/channels/inbound/"+adapter+"/"+token
	st.body, st.contentType = body, c.Get(fiber.HeaderContentType)
	return c.Next()
}

// WithoutBOM drops a leading UTF-8 byte-order mark, which some Windows tools write before
// JSON: the documents say it is ignored, and the services then read plain JSON.
func WithoutBOM(body []byte) []byte { return bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")) }

// mediaName reports whether s is a media key (ext "") or a rendition's file name (ext
// ".jpg"): 1 to 64 letters, digits, '_' or '-', then ext. property-svc's keys are 24
// characters a–z and 0–9, its renditions' names letters, digits and '_' (h_179.jpg).
func mediaName(s, ext string) bool { return nameWith(s, ext, 64) }

// icalFile reports whether file is "<token>.ics" with a token of base64url characters
// (property-svc's tokens are 43 of them; catalog-svc checks the length).
func icalFile(file string) bool { return nameWith(file, ".ics", 128) }

// nameWith reports whether s is 1 to most letters, digits, '-' or '_' followed by ext: the
// names of the public routes (media, iCal) that edge forwards unsigned, so that no '/',
// '.' or escape ever reaches a service's path.
func nameWith(s, ext string, most int) bool {
	name, ok := strings.CutSuffix(s, ext)
	if !ok || name == "" || len(name) > most {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
