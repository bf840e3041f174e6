package property_test

import (
	"testing"

	"github.com/vros/vros/property-svc/internal/property"
)

const methodsExample = `{
	"internal_code": "VR-001",
	"stripe": {"secret_key": "sk_live_1", "public_key": "pk_live_1", "description": "Cards via Stripe"},
	"authorizenet": {"login_id": "login", "transaction_key": "tkey"},
	"paypal": {"email": "owner@example.com"},
	"openpay": {"secret_key": "sk", "open_key": "ok"},
	"firstdata": {"gateway_id": "merchant-7", "encryption_key": "ek"},
	"nexi": {"secure_3d": "true", "merchant_id": "m1", "password": "pw"},
	"cash": {"description": "Pay at the front desk"}
}`

const allProviders = "must be one of stripe, authorizenet, paypal, openpay, firstdata, nexi, cash"

func decodeMethods(body []byte) error {
	_, err := property.DecodeMethods(body)
	return err
}

func TestDecodeMethods(t *testing.T) {
	rows := []row{
		tc("valid example", ""),
		tc("internal_code missing", "internal_code: is required", set("internal_code", del)),
		tc("internal_code 11 chars", "internal_code: must be at most 10 characters", set("internal_code", chars(11))),
		tc("no gateway at all", "", set("stripe", del), set("authorizenet", del), set("paypal", del),
			set("openpay", del), set("firstdata", del), set("nexi", del), set("cash", del)),

		tc("stripe secret_key missing", "stripe.secret_key: is required", set("stripe.secret_key", del)),
		tc("stripe secret_key 255 chars", "", set("stripe.secret_key", chars(255))),
		tc("stripe secret_key 256 chars", "stripe.secret_key: must be at most 255 characters", set("stripe.secret_key", chars(256))),
		tc("stripe public_key missing", "stripe.public_key: is required", set("stripe.public_key", del)),
		tc("stripe description 1000 chars", "", set("stripe.description", chars(1000))),
		tc("stripe description 1001 chars", "stripe.description: must be at most 1000 characters", set("stripe.description", chars(1001))),
		tc("stripe not an object", "stripe: must be an object", set("stripe", "sk_live_1")),

		tc("authorizenet login_id missing", "authorizenet.login_id: is required", set("authorizenet.login_id", del)),
		tc("authorizenet transaction_key 256 chars", "authorizenet.transaction_key: must be at most 255 characters", set("authorizenet.transaction_key", chars(256))),
		tc("authorizenet description 1001 chars", "authorizenet.description: must be at most 1000 characters", set("authorizenet.description", chars(1001))),

		tc("paypal email missing", "paypal.email: is required", set("paypal.email", del)),
		tc("paypal email invalid", "paypal.email: must be a valid email address", set("paypal.email", "owner at example.com")),
		tc("paypal email with display name", "paypal.email: must be a valid email address", set("paypal.email", "Owner <owner@example.com>")),
		tc("paypal email without domain dot", "paypal.email: must be a valid email address", set("paypal.email", "owner@localhost")),
		tc("paypal email 256 chars", "paypal.email: must be at most 255 characters", set("paypal.email", chars(244)+"@example.com")),

		tc("openpay secret_key missing", "openpay.secret_key: is required", set("openpay.secret_key", del)),
		tc("openpay open_key blank", "openpay.open_key: is required", set("openpay.open_key", " ")),

		tc("firstdata gateway_id missing", "firstdata.gateway_id: is required", set("firstdata.gateway_id", del)),
		tc("firstdata encryption_key 256 chars", "firstdata.encryption_key: must be at most 255 characters", set("firstdata.encryption_key", chars(256))),

		tc("nexi secure_3d missing", "nexi.secure_3d: is required", set("nexi.secure_3d", del)),
		tc("nexi secure_3d not boolean", "nexi.secure_3d: must be a boolean", set("nexi.secure_3d", "yes")),
		tc("nexi secure_3d false", "", set("nexi.secure_3d", false)),
		tc("nexi merchant_id missing", "nexi.merchant_id: is required", set("nexi.merchant_id", del)),
		tc("nexi password 256 chars", "nexi.password: must be at most 255 characters", set("nexi.password", chars(256))),

		tc("cash without description", "", set("cash", obj(`{}`))),
		tc("cash description 1001 chars", "cash.description: must be at most 1000 characters", set("cash.description", chars(1001))),

		tc("unknown gateway object", "square: "+allProviders, set("square", obj(`{"token":"x"}`))),
		tc("gateway key is lower case", "Stripe: "+allProviders, set("Stripe", obj(`{"secret_key":"a","public_key":"b"}`))),
		tc("unknown scalar fields ignored", "", set("key", "abc"), set("pass", "def")),
	}
	check(t, methodsExample, rows, decodeMethods)
}

func TestDecodeMethodsValues(t *testing.T) {
	m, err := property.DecodeMethods([]byte(methodsExample))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case m.InternalCode != "VR-001":
		t.Error("internal_code")
	case *m.Stripe != property.StripeMethod{SecretKey: "sk_live_1", PublicKey: "pk_live_1", Description: "Cards via Stripe"}:
		t.Errorf("stripe: %+v", m.Stripe)
	case *m.AuthorizeNet != property.AuthorizeNetMethod{LoginID: "login", TransactionKey: "tkey"}:
		t.Errorf("authorizenet: %+v", m.AuthorizeNet)
	case m.PayPal.Email != "owner@example.com":
		t.Errorf("paypal: %+v", m.PayPal)
	case *m.OpenPay != property.OpenPayMethod{SecretKey: "sk", OpenKey: "ok"}:
		t.Errorf("openpay: %+v", m.OpenPay)
	case *m.FirstData != property.FirstDataMethod{GatewayID: "merchant-7", EncryptionKey: "ek"}:
		t.Errorf("firstdata: %+v", m.FirstData)
	case *m.Nexi != property.NexiMethod{Secure3D: true, MerchantID: "m1", Password: "pw"}:
		t.Errorf("nexi: %+v", m.Nexi)
	case m.Cash.Description != "Pay at the front desk":
		t.Errorf("cash: %+v", m.Cash)
	}

	m, err = property.DecodeMethods([]byte(`{"internal_code":"VR-001"}`))
	if err != nil || m.Stripe != nil || m.AuthorizeNet != nil || m.PayPal != nil || m.OpenPay != nil || m.FirstData != nil || m.Nexi != nil || m.Cash != nil {
		t.Errorf("empty set: %+v, %v", m, err)
	}
}
