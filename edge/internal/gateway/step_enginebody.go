package gateway

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
)

// Step: the booking API's body, into the JSON the service reads. A body over 16 KiB is 413;
// a POST's body must be a JSON object (empty reads as {}; the Content-Type is not asked:
// JSON whatever it says), else 400 bad_request before anything is forwarded; a GET's query
// parameters become string fields (the last of a repeated one counts). Then edge sets what
// only it knows, over anything the page sent under those names: brand_id, the brand of the
// page's origin, and for a checkout's routes checkout_id, the id in the path.
// POST /checkouts needs an Idempotency-Key (≤ 255 characters, as every Idempotency-Key
// here), passed on as a header.
func (g *Gateway) engineBody(c *fiber.Ctx) error {
	st := requestOf(c)
	if len(st.body) > bodyLimitEngine {
		return httpapi.TooLarge(bodyLimitEngine)
	}
	fields := map[string]json.RawMessage{}
	if st.engine.method == fiber.MethodGet {
		c.Request().URI().QueryArgs().VisitAll(func(k, v []byte) {
			fields[string(k)] = jsonString(string(v)) // copies: the args are fasthttp's
		})
	} else if body := bytes.TrimSpace(st.body); len(body) > 0 {
		if body[0] != '{' || json.Unmarshal(body, &fields) != nil {
			return httpapi.BadRequest("the request body must be a JSON object")
		}
	}
	key := c.Get("Idempotency-Key")
	switch {
	case st.engine.create && key == "":
		return httpapi.InvalidField("Idempotency-Key", "required: a key of the checkout, the same when the request is sent again")
	case len(key) > maxIdempotencyKey:
		return httpapi.InvalidField("Idempotency-Key", "at most "+strconv.Itoa(maxIdempotencyKey)+" characters")
	}
	fields["brand_id"] = json.RawMessage(strconv.FormatInt(st.brandID, 10))
	if st.engine.checkout {
		fields["checkout_id"] = jsonString(st.checkoutID)
	}
	body, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	st.body = body
	return c.Next()
}

// jsonString is s as a JSON string.
func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
