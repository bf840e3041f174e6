package gateway

import (
	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
)

// Register mounts the public routes on app, each as its pipeline: the steps a request meets,
// in order, each a Fiber handler in a file of its own (step_<name>.go) that passes what it
// learned to the next in the request's state (request.go) and calls c.Next(), or refuses the
// request. An interface's pipeline differs from another's only where listed here.
//
// Before any of them, for every route of the app: libs/httpapi's request id, server span and
// target and header size checks, then the body intake (step_intake.go, Intake.Handler: the
// body read within its budget and decoded; edge/service registers it before every route).
//
// The order is the rules of docs/limits.md ("Bodies", "Rates", "Plans", "Requests in
// flight"): the throttle before any credential is read, the credentials read before the body
// is parsed (a scan builds nothing) and checked before any limit of the caller's, the
// caller's rate and body limit before the body is parsed, the account's slot held only while
// its request is forwarded.
func (g *Gateway) Register(app *fiber.App) {
	// Interface A: POST /api/{resource}, HTTP Basic plus servicekey/servicepass.
	a := app.Group("/api", httpapi.Use(httpapi.EnvelopeA)) // refusals in A's envelope
	a.Post("/:resource",
		g.routeA,        // 404 unknown resource; its service, path and body limit; the body
		g.count,         // usage of the caller by outcome, once answered; 413s as body_size
		g.routeLimit,    // 413 for a refusal before authentication of a body over that limit
		g.throttle,      // 429 when the address's failed authentications are spent
		g.credentialsA,  // 401 without Basic and servicekey/servicepass (headers, else a body scan)
		g.authenticateA, // 401 unless both are right and of one account
		g.rateLimit,     // 429 over the account's rate
		g.bodyLimit,     // 413 over the caller's body limit (its plan's)
		g.parse,         // a form or multipart body into JSON
		g.service,       // 503 when the service is not deployed
		g.concurrency,   // 429 when the account's requests in flight are spent
		g.forward,       // signed, to /internal/a/{resource}
	)

	// Interface B: POST /vros/external-booking, key and pass in the body. It answers every
	// application outcome with HTTP 200, as the original's clients read only a 200's body
	// (docs/interface-b.md).
	b := app.Group("/vros",
		httpapi.Use(httpapi.EnvelopeB), // refusals in B's envelope
		httpapi.ApplicationOutcomesOK,  // 4xx outcomes on HTTP 200 (after count), transport failures kept
	)
	interfaceB := []fiber.Handler{
		g.routeB,        // the body (the action is in it)
		g.count,         // usage of the caller by outcome, once answered; 413s as body_size
		g.routeLimit,    // 413 for a refusal before authentication of a body over 1 MiB
		g.throttle,      // 429 when the address's failed authentications are spent
		g.credentialsB,  // key and pass from a scan of the body: refused without them
		g.authenticateB, // 401 unless they are right
		g.rateLimit,     // 429 over the account's rate
		g.bodyLimit,     // 413 over the caller's body limit (its plan's)
		g.parse,         // a form or multipart body into JSON
		g.action,        // the action: its service and path; 400 unknown or missing
		g.service,       // 503 when the service is not deployed
		g.concurrency,   // 429 when the account's requests in flight are spent
		g.forward,       // signed, to /internal/b/{action}
	}
	b.Post("/external-booking", interfaceB...)
	b.Post("/external-booking/", interfaceB...)

	// Owner-token reads: GET or POST /vros/api/{name}/owner_token/{token}[/property/{id}],
	// the token in the path.
	read := []fiber.Handler{
		g.routeRead,        // 404 unknown read; its service, path and body limit; the body
		g.count,            // usage of the caller by outcome, once answered; 413s as body_size
		g.routeLimit,       // 413 for a refusal before authentication of a body over 64 KiB
		g.throttle,         // 429 when the address's failed authentications are spent
		g.credentialsRead,  // the token, from the path
		g.authenticateRead, // 401 unless it is right
		g.rateLimit,        // 429 over the account's rate
		g.bodyLimit,        // 413 over the caller's body limit (its plan's)
		g.service,          // 503 when the service is not deployed
		g.parseRead,        // the query and the body's fields into one JSON object
		g.linkBase,         // X-Vros-Public-Base for the answer's links; 400 a bad Host
		g.concurrency,      // 429 when the account's requests in flight are spent
		g.forward,          // signed, to /internal/read/{name}
	}
	for _, p := range []string{"/api/:name/owner_token/:token", "/api/:name/owner_token/:token/property/:id"} {
		b.Get(p, read...)
		b.Post(p, read...)
	}

	// The public booking API (docs/booking-engine.md): /widget/api/v1/{owner_token}/{route},
	// called from guests' browsers; every refusal in its envelope {"error": {code, field,
	// message}}. Its key is the owner token in the path; the page's origin names the brand.
	engineAPI := []fiber.Handler{
		g.routeEngine,       // 404 unknown route, 405 another method; its service and path; OPTIONS is its preflight
		g.count,             // usage of the caller (engine) by outcome, once answered
		g.routeLimit,        // 413 for a refusal before authentication of a body over 16 KiB
		g.throttle,          // 429 when the address's failed authentications are spent
		g.credentialsEngine, // the owner token, from the path
		g.authenticateRead,  // 401 unless it is right (and its account not suspended)
		g.origin,            // 403 unless Origin is one of the account's brands'; the brand; CORS headers
		g.engineLimit,       // 429 over the address's, its checkouts' or the account's booking rate
		g.preflight,         // an OPTIONS answered here: 204 with the allowed method and headers
		g.engineBody,        // 413 over 16 KiB, 400 not a JSON object or no Idempotency-Key; brand_id, checkout_id
		g.engineLinkBase,    // catalog-svc's reads: X-Vros-Public-Base for the answer's links; 400 a bad Host
		g.service,           // 503 when the service is not deployed
		g.concurrency,       // 429 when the account's requests in flight are spent
		g.forward,           // signed, to /internal/engine/{route}; the answer relayed with its status
	}
	api := app.Group("/widget/api", httpapi.Use(httpapi.EnvelopeEngine)) // refusals in the API's envelope
	api.All("/v1/:token/*", engineAPI...)
	api.All("/*", engineNotFound) // another version, no token: 404

	// The widget's files (GET and HEAD): the engine under its names, its styles and
	// translations; public, cached, any origin.
	app.Get("/widget/*",
		g.script, // 404 (no-store) unless a file of edge/widget's assets; 304 for a matching ETag
	)

	// The public reads: no credentials (the photo's key, the feed's token is the
	// capability), no usage, no limits of an account; forwarded unsigned. Get serves HEAD too.
	app.Get("/media/:key/:file",
		g.routeMedia, // 404 (no-store) unless a key and file name property-svc makes
		g.service,    // 503 when property-svc is not deployed
		g.forward,    // to /media/{key}/{file}
	)
	app.Get("/ical/:file",
		g.routeICal, // 404 (no-store) unless {token}.ics; never a failed authentication
		g.service,   // 503 when catalog-svc is not deployed
		g.forward,   // to /internal/ical/{token}.ics
	)

	// The channel managers' messages (docs/channels.md, "Inbound routes"): public, the
	// connection's token in the path is the capability; forwarded unsigned, with the body and
	// its content type as sent, and the answer relayed with its status.
	app.Post("/channels/:adapter/:token",
		g.routeChannel, // 404 (no-store) unless a known adapter and a token; 413 over 1 MiB; never a failed authentication
		g.service,      // 503 when integration-svc is not deployed
		g.forward,      // to /internal/channels/inbound/{adapter}/{token}
	)
}
