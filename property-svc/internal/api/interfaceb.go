package api

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
	"github.com/vros/vros/property-svc/internal/property"
)

// BookingRoutes are the routes booking-svc may call with its own key (the grant of
// tenancy.CallerBooking, docs/internal-auth.md): reading a property's payment methods for a
// charge; every other route accepts edge's key alone.
var BookingRoutes = []string{"POST /internal/b/getpayment"}

// registerB mounts the interface B actions property-svc owns.
func (a *API) registerB(app *fiber.App, auth *tenancy.Verifier) {
	b := app.Group("/internal/b", httpapi.Use(httpapi.EnvelopeB), httpapi.KindAfter("/internal/b/", "B."),
		tenancyfiber.Require(auth), refuseErased)
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
	gateways, err := a.props.Gateways(c.UserContext(), tenancyfiber.From(c).AccountID, pid)
	if errors.Is(err, property.ErrNotFound) {
		return errNoProperty
	}
	if err != nil {
		return err
	}
	out := fiber.Map{}
	for _, g := range gateways {
		pub, sec := g.Public, g.Secrets
		e := fiber.Map{"method": string(g.Provider), "detail": g.Description}
		switch g.Provider {
		case property.Stripe:
			e["secret_key"], e["publishable_key"] = sec["secret_key"], pub["public_key"]
		case property.OpenPay:
			e["secret_key"], e["publishable_key"] = sec["secret_key"], pub["open_key"]
		case property.PayPal:
			e["email"] = pub["email"]
		case property.AuthorizeNet:
			e["apiloginid"], e["transactionkey"] = sec["login_id"], sec["transaction_key"]
		case property.FirstData:
			e["gateway_id"], e["encryption_key"] = pub["gateway_id"], sec["encryption_key"]
		case property.Nexi:
			e["merchant_id"], e["password"] = pub["merchant_id"], sec["password"]
			e["secure_3d"] = pub["secure_3d"] == "true"
		}
		out[string(g.Provider)] = e
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
	err = a.props.SetDailyPrices(c.UserContext(), tenancyfiber.From(c).AccountID, req)
	if errors.Is(err, property.ErrNotFound) {
		return errNoProperty
	}
	if err != nil {
		return err
	}
	return httpapi.B(c, []any{})
}
