package api

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/property-svc/internal/property"
	"github.com/vros/vros/property-svc/internal/store"
)

// registerB mounts the interface B actions property-svc owns.
func (a *API) registerB(app *fiber.App, signer *tenancy.Signer) {
	b := app.Group("/internal/b", httpapi.Use(httpapi.EnvelopeB), signer.Require())
	b.Post("/getpayment", a.getPayment)
	b.Post("/setprices_minnights", a.setPrices)
}

var errNoProperty = httpapi.NotFound(httpapi.StatusNoProperty, "property does not exist")

// getPayment: the property's payment methods, with the keys a website needs to take a
// payment (the spec's getpayment shape: entries keyed by provider name).
func (a *API) getPayment(c *fiber.Ctx) error {
	pid, err := property.DecodePaymentQuery(c.Body())
	if err != nil {
		return err
	}
	acc := tenancy.From(c).AccountID
	rec, err := a.store.Resolve(c.UserContext(), acc, property.PropertyRef{ID: pid})
	if errors.Is(err, store.ErrNotFound) {
		return errNoProperty
	}
	if err != nil {
		return err
	}
	out := fiber.Map{}
	if rec.Methods == nil {
		return httpapi.B(c, out)
	}
	for _, g := range rec.Methods.Gateways {
		sec, err := a.store.Secrets(acc, g)
		if err != nil {
			return err
		}
		e := fiber.Map{"method": g.Provider, "detail": g.Description}
		switch g.Provider {
		case "stripe":
			e["secret_key"], e["publishable_key"] = sec["secret_key"], g.Public["public_key"]
		case "openpay":
			e["secret_key"], e["publishable_key"] = sec["secret_key"], g.Public["open_key"]
		case "paypal":
			e["email"] = g.Public["email"]
		case "authorizenet":
			e["apiloginid"], e["transactionkey"] = sec["login_id"], sec["transaction_key"]
		case "firstdata":
			e["gateway_id"], e["encryption_key"] = g.Public["gateway_id"], sec["encryption_key"]
		case "nexi":
			e["merchant_id"], e["password"] = g.Public["merchant_id"], sec["password"]
			e["secure_3d"] = g.Public["secure_3d"] == "true"
		}
		out[g.Provider] = e
	}
	return httpapi.B(c, out)
}

// setPrices: setprices_minnights from a dynamic-pricing tool; recommended_price becomes
// the nightly price of its date and minNights its minimum stay.
func (a *API) setPrices(c *fiber.Ctx) error {
	req, err := property.DecodeDailyPrices(c.Body())
	if err != nil {
		return err
	}
	acc := tenancy.From(c).AccountID
	if req.AccountID != acc { // another account's id is as unknown as a missing one
		return errNoProperty
	}
	id, err := a.store.Locate(c.UserContext(), acc, property.PropertyRef{ID: req.PropertyID})
	if errors.Is(err, store.ErrNotFound) {
		return errNoProperty
	}
	if err != nil {
		return err
	}
	if _, err := a.store.SetDailyPrices(c.UserContext(), id, req.Days); err != nil {
		return err
	}
	return httpapi.B(c, []any{})
}
