package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
)

// Step: interface B's action. Interface B's route is in its body, read once the body is
// parsed: the action names the service and its path (routes.go); a missing or unknown one
// is refused.
func (g *Gateway) action(c *fiber.Ctx) error {
	st := requestOf(c)
	var env bEnvelope
	if err := json.Unmarshal(st.body, &env); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return httpapi.InvalidField(te.Field, "must be a string")
		}
		return notAnObject()
	}
	if env.Action == "" {
		return httpapi.InvalidField("action", "is required")
	}
	act, ok := actions[env.route()]
	if !ok {
		return &httpapi.Error{HTTP: fiber.StatusBadRequest, Type: "unknown_action", Status: httpapi.StatusUnknownAction,
			Message: fmt.Sprintf("unknown action %q", env.Action)}
	}
	st.kind, st.name = "action", env.Action
	st.service, st.path = act.service, "/internal/b/"+act.canonical
	return c.Next()
}

// bEnvelope is what edge needs of an interface B body.
type bEnvelope struct {
	Key    string `json:"key"`
	Pass   string `json:"pass"`
	Action string `json:"action"`
	// PricingArray and CreatedDate route the original's getpropertyinfo examples (see
	// route).
	PricingArray json.RawMessage `json:"pricingArray"`
	CreatedDate  json.RawMessage `json:"createdDate"`
}

// route is the action a body asks for. The original's examples of setprices_minnights and
// getreservations send action getpropertyinfo: one that carries pricingArray is a price
// push (never answered Success while the prices are dropped), one that carries createdDate
// a reservations read.
func (e bEnvelope) route() string {
	if e.Action == "getpropertyinfo" {
		switch {
		case sent(e.PricingArray):
			return "setprices_minnights"
		case sent(e.CreatedDate):
			return "getreservations"
		}
	}
	return e.Action
}

// sent reports whether a member was sent with a value (not absent, null or "").
func sent(raw json.RawMessage) bool {
	v := string(bytes.TrimSpace(raw))
	return v != "" && v != "null" && v != `""`
}
