package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/vros/vros/property-svc/internal/property"
)

// methodsRec converts A5, sealing every secret under the account and provider, so that a
// sealed value copied to another account or field does not open.
func (s *Store) methodsRec(account string, m property.Methods) *MethodsRec {
	out := &MethodsRec{Gateways: []GatewayRec{}}
	add := func(provider, description string, public, secret map[string]string) {
		g := GatewayRec{Provider: provider, Description: description, Public: public, Sealed: map[string]string{}}
		for k, v := range secret {
			g.Sealed[k] = s.box.Seal(v, sealContext(account, provider, k))
		}
		out.Gateways = append(out.Gateways, g)
	}
	if g := m.Stripe; g != nil {
		add("stripe", g.Description, map[string]string{"public_key": g.PublicKey}, map[string]string{"secret_key": g.SecretKey})
	}
	if g := m.AuthorizeNet; g != nil {
		add("authorizenet", g.Description, nil, map[string]string{"login_id": g.LoginID, "transaction_key": g.TransactionKey})
	}
	if g := m.PayPal; g != nil {
		add("paypal", g.Description, map[string]string{"email": g.Email}, nil)
	}
	if g := m.OpenPay; g != nil {
		add("openpay", g.Description, map[string]string{"open_key": g.OpenKey}, map[string]string{"secret_key": g.SecretKey})
	}
	if g := m.FirstData; g != nil {
		add("firstdata", g.Description, map[string]string{"gateway_id": g.GatewayID}, map[string]string{"encryption_key": g.EncryptionKey})
	}
	if g := m.Nexi; g != nil {
		add("nexi", g.Description, map[string]string{"merchant_id": g.MerchantID, "secure_3d": strconv.FormatBool(g.Secure3D)},
			map[string]string{"password": g.Password})
	}
	if g := m.Cash; g != nil {
		add("cash", g.Description, nil, nil)
	}
	return out
}

// Gateways returns the payment methods of a live property of account, secrets opened.
func (s *Store) Gateways(ctx context.Context, account string, ref property.PropertyRef) ([]property.Gateway, error) {
	rec, err := s.resolve(ctx, account, ref)
	if err != nil || rec.Methods == nil {
		return nil, err
	}
	out := make([]property.Gateway, 0, len(rec.Methods.Gateways))
	for _, g := range rec.Methods.Gateways {
		sec, err := s.open(account, g)
		if err != nil {
			return nil, err
		}
		out = append(out, property.Gateway{Provider: property.Provider(g.Provider), Description: g.Description, Public: g.Public,
			Secrets: sec})
	}
	return out, nil
}

// open opens the sealed values of a gateway.
func (s *Store) open(account string, g GatewayRec) (map[string]string, error) {
	out := make(map[string]string, len(g.Sealed))
	for k, v := range g.Sealed {
		plain, err := s.box.Open(v, sealContext(account, g.Provider, k))
		if err != nil {
			return nil, fmt.Errorf("open %s.%s: %w", g.Provider, k, err)
		}
		out[k] = plain
	}
	return out, nil
}

func sealContext(account, provider, field string) string {
	return account + ":" + provider + "." + field
}
