package property

import (
	"slices"
	"strings"

	"github.com/vros/vros/libs/fields"
)

// Provider is the key of a payment-method object in A5: the lowercase name
// of the payment provider, or "cash" for paying on arrival.
type Provider string

// Providers of A5, in the spec's order (<gateway_1> to <gateway_6>), then cash.
const (
	Stripe       Provider = "stripe"
	AuthorizeNet Provider = "authorizenet"
	PayPal       Provider = "paypal"
	OpenPay      Provider = "openpay"
	FirstData    Provider = "firstdata"
	Nexi         Provider = "nexi"
	Cash         Provider = "cash"
)

// Providers lists every provider key accepted by DecodeMethods.
func Providers() []Provider {
	return []Provider{Stripe, AuthorizeNet, PayPal, OpenPay, FirstData, Nexi, Cash}
}

// StripeMethod holds the credentials of <gateway_1>.
type StripeMethod struct{ SecretKey, PublicKey, Description string }

// AuthorizeNetMethod holds the credentials of <gateway_2>.
type AuthorizeNetMethod struct{ LoginID, TransactionKey, Description string }

// PayPalMethod holds the account of <gateway_3>.
type PayPalMethod struct{ Email, Description string }

// OpenPayMethod holds the credentials of <gateway_4>.
type OpenPayMethod struct{ SecretKey, OpenKey, Description string }

// FirstDataMethod holds the credentials of <gateway_5>; GatewayID is the
// merchant identifier at that gateway.
type FirstDataMethod struct{ GatewayID, EncryptionKey, Description string }

// NexiMethod holds the credentials of <gateway_6>.
type NexiMethod struct {
	Secure3D             bool
	MerchantID, Password string
	Description          string
}

// CashMethod is payment on arrival (extension).
type CashMethod struct{ Description string }

// Methods is a decoded /api/property-method body. It replaces the property's
// whole set of payment methods: a nil method is disabled, and a body with no
// method at all leaves the property without online payment.
type Methods struct {
	InternalCode string
	Stripe       *StripeMethod
	AuthorizeNet *AuthorizeNetMethod
	PayPal       *PayPalMethod
	OpenPay      *OpenPayMethod
	FirstData    *FirstDataMethod
	Nexi         *NexiMethod
	Cash         *CashMethod
}

var (
	credential        = fields.Str{Required: true, Max: 255}
	methodDescription = fields.Str{Max: 1000}
)

// DecodeMethods reads an /api/property-method body. A member whose value is
// an object is taken for a payment method, so an unknown key with an object
// value is a violation rather than silently ignored.
func DecodeMethods(body []byte) (Methods, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	var m Methods
	m.InternalCode, _ = o.String("internal_code", internalCodeRule)
	known := Providers()
	for _, key := range o.Keys() {
		if o.Kind(key) == fields.KindObject && !slices.Contains(known, Provider(key)) {
			o.Add(key, "must be one of "+joinProviders(known))
		}
	}
	if g := o.Object(string(Stripe), false); g != nil {
		m.Stripe = &StripeMethod{}
		m.Stripe.SecretKey, _ = g.String("secret_key", credential)
		m.Stripe.PublicKey, _ = g.String("public_key", credential)
		m.Stripe.Description, _ = g.String("description", methodDescription)
	}
	if g := o.Object(string(AuthorizeNet), false); g != nil {
		m.AuthorizeNet = &AuthorizeNetMethod{}
		m.AuthorizeNet.LoginID, _ = g.String("login_id", credential)
		m.AuthorizeNet.TransactionKey, _ = g.String("transaction_key", credential)
		m.AuthorizeNet.Description, _ = g.String("description", methodDescription)
	}
	if g := o.Object(string(PayPal), false); g != nil {
		m.PayPal = &PayPalMethod{}
		m.PayPal.Email = readEmail(g, "email")
		m.PayPal.Description, _ = g.String("description", methodDescription)
	}
	if g := o.Object(string(OpenPay), false); g != nil {
		m.OpenPay = &OpenPayMethod{}
		m.OpenPay.SecretKey, _ = g.String("secret_key", credential)
		m.OpenPay.OpenKey, _ = g.String("open_key", credential)
		m.OpenPay.Description, _ = g.String("description", methodDescription)
	}
	if g := o.Object(string(FirstData), false); g != nil {
		m.FirstData = &FirstDataMethod{}
		m.FirstData.GatewayID, _ = g.String("gateway_id", credential)
		m.FirstData.EncryptionKey, _ = g.String("encryption_key", credential)
		m.FirstData.Description, _ = g.String("description", methodDescription)
	}
	if g := o.Object(string(Nexi), false); g != nil {
		m.Nexi = &NexiMethod{}
		m.Nexi.Secure3D, _ = g.Bool("secure_3d", true)
		m.Nexi.MerchantID, _ = g.String("merchant_id", credential)
		m.Nexi.Password, _ = g.String("password", credential)
		m.Nexi.Description, _ = g.String("description", methodDescription)
	}
	if g := o.Object(string(Cash), false); g != nil {
		m.Cash = &CashMethod{}
		m.Cash.Description, _ = g.String("description", methodDescription)
	}
	if err := v.Err(); err != nil {
		return Methods{}, err
	}
	return m, nil
}

// readEmail reads a credential (255 characters at most, as the spec bounds every gateway
// field) that must also be a bare address by the services' one rule (fields.ValidEmail).
func readEmail(o *fields.Object, name string) string {
	s, ok := o.String(name, credential)
	if ok && !fields.ValidEmail(s) {
		o.Add(name, "must be a valid email address")
		return ""
	}
	return s
}

func joinProviders(ps []Provider) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}
