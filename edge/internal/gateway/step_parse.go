package gateway

import (
	"github.com/gofiber/fiber/v2"
)

// Step: parse. Only now, for an authenticated caller within its body limit, is the body
// read as more than its credentials: turned into the JSON the services read (body.go),
// within the caller's limit and phpform's bounds (docs/limits.md, "Bodies").

// parse is interface A's and B's: a JSON body is passed on as it is, a form or multipart
// body becomes JSON (jsonBody).
func (g *Gateway) parse(c *fiber.Ctx) error {
	st := requestOf(c)
	body, err := jsonBody(c, st.body, st.limit)
	if err != nil {
		return err
	}
	st.body = body
	return c.Next()
}

// parseRead is an owner-token read's: its parameters, the query merged with the body's
// fields, as one JSON object (readParams).
func (g *Gateway) parseRead(c *fiber.Ctx) error {
	st := requestOf(c)
	params, err := readParams(c, st.body, st.limit)
	if err != nil {
		return err
	}
	st.body = params
	return c.Next()
}
