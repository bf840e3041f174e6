package gateway

import (
	"encoding/base64"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/libs/httpapi"
)

// Step: the credentials, read and not yet checked: from the headers and the path, and from
// a body only by scanning it (bodyCredentials: nothing of it is built; docs/limits.md,
// "Bodies"). A request without its credentials, or whose body they cannot be read from,
// is refused and counts as a failed authentication of its address, as a wrong credential
// does (refused).

// credentialsA: interface A's HTTP Basic, and its second pair servicekey/servicepass from
// the headers (headerPair), else from the body.
func (g *Gateway) credentialsA(c *fiber.Ctx) error {
	st := requestOf(c)
	user, password, ok := basicAuth(c.Get(fiber.HeaderAuthorization))
	if !ok {
		return g.refused(c, edgemetrics.Basic, httpapi.Unauthorized("HTTP Basic credentials are required"))
	}
	key, pass, fromHeaders := headerPair(c)
	if !fromHeaders {
		vals, err := g.credentialsIn(c, st.body, namesA, false, edgemetrics.Service)
		if err != nil {
			return err
		}
		key, pass = vals[0], vals[1]
	}
	if key == "" || pass == "" {
		return g.refused(c, edgemetrics.Service,
			httpapi.Unauthorized("servicekey and servicepass are required (headers or body fields; or the headers 365villaskey and 365villaspass)"))
	}
	st.user, st.password, st.key, st.pass = user, password, key, pass
	return c.Next()
}

// credentialsB: interface B's key and pass, from the body, which must be an object carrying
// them (JSON, a form or a multipart form).
func (g *Gateway) credentialsB(c *fiber.Ctx) error {
	st := requestOf(c)
	if len(st.body) == 0 {
		return g.refused(c, edgemetrics.Key, httpapi.BadRequest("request body is empty; send a JSON object with key, pass and action"))
	}
	vals, err := g.credentialsIn(c, st.body, namesB, true, edgemetrics.Key)
	switch {
	case err != nil:
		return err
	case vals[0] == "" || vals[1] == "":
		return g.refused(c, edgemetrics.Key, httpapi.Unauthorized("key and pass are required"))
	}
	st.key, st.pass = vals[0], vals[1]
	return c.Next()
}

// credentialsRead: an owner-token read's token, from its path; the body is not read for it.
func (g *Gateway) credentialsRead(c *fiber.Ctx) error {
	requestOf(c).pass = c.Params("token")
	return c.Next()
}

// credentialsEngine: the booking API's key, the owner token, from its path (a copy: it is
// kept no longer than the request, but never as a view of fasthttp's buffers).
func (g *Gateway) credentialsEngine(c *fiber.Ctx) error {
	token := strings.Clone(c.Params("token"))
	if token == "" {
		return g.refused(c, edgemetrics.OwnerToken, httpapi.Unauthorized("the owner token is required in the path"))
	}
	requestOf(c).pass = token
	return c.Next()
}

// refused counts a request refused before it authenticated — its credentials missing,
// unreadable or malformed — as one failed authentication of kind, as a wrong credential
// counts (the address's throttle and vros_edge_auth_failures_total), and returns err.
func (g *Gateway) refused(c *fiber.Ctx, kind edgemetrics.AuthKind, err error) error {
	g.failures.Failed(c)
	g.metrics.AuthFailed(c.UserContext(), kind)
	return err
}

// credentialsIn reads the credentials names from body (bodyCredentials), refusing a body
// they cannot be read from, or one too long to be a credential, as a failed authentication
// of kind.
func (g *Gateway) credentialsIn(c *fiber.Ctx, body []byte, names credentialNames, strict bool, kind edgemetrics.AuthKind) ([2]string, error) {
	vals, err := bodyCredentials(c.Get(fiber.HeaderContentType), body, names, strict)
	if errors.Is(err, errCredentialTooLong) {
		err = httpapi.Unauthorized("invalid credentials")
	}
	if err != nil {
		return vals, g.refused(c, kind, err)
	}
	return vals, nil
}

// headerPair is interface A's second credential from the headers servicekey/servicepass,
// else 365villaskey/365villaspass (the original's docs); found is false when neither name
// of either pair was sent (then the body is scanned for it: credentialsIn).
func headerPair(c *fiber.Ctx) (key, pass string, found bool) {
	for _, h := range [][2]string{{"servicekey", "servicepass"}, {"365villaskey", "365villaspass"}} {
		if key, pass = strings.TrimSpace(c.Get(h[0])), strings.TrimSpace(c.Get(h[1])); key != "" || pass != "" {
			return key, pass, true
		}
	}
	return "", "", false
}

func basicAuth(h string) (user, password string, ok bool) {
	const prefix = "Basic "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(h[len(prefix):]))
	if err != nil {
		return "", "", false
	}
	user, password, ok = strings.Cut(string(raw), ":")
	return user, password, ok && user != "" && password != ""
}
