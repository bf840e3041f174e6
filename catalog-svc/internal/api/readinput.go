package api

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/fields"
)

// HeaderPublicBase is the header in which edge passes the base URL the client reached it
// at (its configured public URL, else the request's own scheme and host).
const HeaderPublicBase = "X-Vros-Public-Base"

// readInput is an owner-token read's parameters. Edge forwards every read as POST with a
// JSON object: the client's query parameters merged with its body fields, property_id
// normalised to a string. A GET with the parameters in the query (what edge sent before) is
// read the same way, so that edge and catalog-svc can be upgraded one after the other.
func readInput(c *fiber.Ctx) *input {
	if c.Method() == fiber.MethodPost {
		return parse(c)
	}
	q := map[string]string{}
	c.Context().QueryArgs().VisitAll(func(k, v []byte) { q[string(k)] = string(v) })
	body, _ := json.Marshal(q) // a map of strings always marshals
	in := &input{}
	in.o = fields.Parse(body, "", &in.v)
	return in
}

// readPropertyID is the optional property id of a read: property_id (a number or a numeric
// string, as edge normalises it), else propertyId; 0 when neither is sent (or is blank).
func (in *input) readPropertyID() int64 {
	name := "property_id"
	if in.o.Empty(name) && !in.o.Empty("propertyId") {
		name = "propertyId"
	}
	n, _ := in.o.Int(name, fields.Int{Min: 1, Max: maxID})
	return int64(n)
}

// mediaBase is the prefix of the request's photo links: VROS_CATALOG_MEDIA_BASE_URL when
// set, else edge's X-Vros-Public-Base when it is an http(s) base URL, else "" (relative
// links).
func (a *API) mediaBase(c *fiber.Ctx) string {
	if a.MediaBase != "" {
		return a.MediaBase
	}
	return publicBase(c.Get(HeaderPublicBase))
}

// publicBase validates an http(s) base URL (scheme, host, optional path; no user, query or
// fragment) and returns it without its trailing slash, or "" when it is not one. The result
// is a copy: the header's bytes belong to fasthttp's pooled request.
func publicBase(h string) string {
	h = strings.TrimSpace(h)
	if h == "" || len(h) > 2048 {
		return ""
	}
	u, err := url.Parse(h)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" ||
		u.Fragment != "" || u.Opaque != "" || strings.ContainsAny(h, " \t\r\n\"'<>\\") {
		return ""
	}
	return strings.Clone(strings.TrimRight(h, "/"))
}

// mediaLink is a rendition's link under base.
func mediaLink(base, key, rendition string) string {
	return base + "/media/" + key + "/" + rendition + ".jpg"
}

// readProperty returns the live property a read names (property_id is required); a
// property the scope does not show is status 16, as an unknown one.
func (a *API) readProperty(c *fiber.Ctx, in *input, sc *scope) (*catalog.Property, error) {
	pid := in.readPropertyID()
	if err := in.err(); err != nil {
		return nil, err
	}
	if pid == 0 {
		in.v.Add("property_id", "is required")
		return nil, in.err()
	}
	return a.scopedProperty(c, sc, pid)
}

// scopedProperty is live property pid when the scope shows it, else status 16.
func (a *API) scopedProperty(c *fiber.Ctx, sc *scope, pid int64) (*catalog.Property, error) {
	p, ok := a.catalog.Property(account(c), pid)
	if !ok || !sc.has(pid) {
		return nil, errNoProperty()
	}
	return p, nil
}

// readProperties is the property a read names, or every live property (by id) the scope
// shows when it names none.
func (a *API) readProperties(c *fiber.Ctx, in *input, sc *scope) ([]*catalog.Property, int64, error) {
	pid := in.readPropertyID()
	if err := in.err(); err != nil {
		return nil, 0, err
	}
	if pid == 0 {
		return sc.filter(a.catalog.Properties(account(c))), 0, nil
	}
	p, err := a.scopedProperty(c, sc, pid)
	if err != nil {
		return nil, 0, err
	}
	return []*catalog.Property{p}, pid, nil
}
