package e2e

import (
	"net/http"
	"testing"

	"github.com/vros/vros/systest/apitest"
)

// testCard is a card body with number.
func testCard(number string) obj {
	return obj{"CCNumber": number, "NameOnCard": "Ada Lovelace", "Expiration": "12/2035", "CVC": "123"}
}

// TestCardGatewayPerAccount: the gateway of a charge is the account's and the property's. A
// live account's property without a card payment method refuses the charge (status 111,
// the reason named) and keeps nothing; with its Stripe method set up, the charge goes to
// Stripe (stripe-mock here, which approves even the test gateway's declined number: a live
// account never reaches the test gateway); a sandbox account's charges reach only the test
// gateway, even where Stripe is set up.
func TestCardGatewayPerAccount(t *testing.T) {
	t.Parallel()
	live, err := apitest.NewAccountOf(http.DefaultClient, st.EdgeURL, adminToken, "Live Owner", false)
	if err != nil {
		t.Fatal(err)
	}
	acc := account{live}
	pid := bookable(t, acc, "GW1")
	charged := func(checkin, checkout int, number string) obj {
		g := guest(pid, day(checkin), day(checkout))
		g["paymentCharge"], g["creditCard"] = 1, testCard(number)
		return g
	}

	a := acc.b(t, "create", charged(140, 142, "4242424242424242")).wantStatus(t, 111)
	if want := "payment did not succeed: no card payment method is set up for this property"; a.Message != want {
		t.Fatalf("message %q, want %q", a.Message, want)
	}
	var none struct {
		Bookings []any `json:"bookings"`
	}
	if acc.b(t, "listbooking", obj{"propertyId": pid}).ok(t, &none); len(none.Bookings) != 0 {
		t.Fatalf("a refused charge left bookings: %v", none.Bookings)
	}
	create(t, acc, guest(pid, day(140), day(142))) // the nights were not kept

	acc.a(t, "property-method", obj{"internal_code": "GW1",
		"stripe": obj{"secret_key": "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "public_key": "pk_test_owner_gw1"}}).status(t, http.StatusOK)
	d := create(t, acc, charged(150, 152, "4000000000000002"))
	if len(d.Payments) != 1 || d.Payments[0].Method != "card" || !d.Payments[0].Amount.Equal(d.GrandTotal) {
		t.Fatalf("live account through Stripe: payments %+v (grand total %s)", d.Payments, d.GrandTotal)
	}

	sandbox := newAccount(t)
	spid := bookable(t, sandbox, "GW2")
	sandbox.a(t, "property-method", obj{"internal_code": "GW2",
		"stripe": obj{"secret_key": "sk_test_51Hx9ExampleOwnerTwo", "public_key": "pk_test_owner_gw2"}}).status(t, http.StatusOK)
	g := guest(spid, day(140), day(142))
	g["paymentCharge"], g["creditCard"] = 1, testCard("4000000000000002")
	if a := sandbox.b(t, "create", g).wantStatus(t, 111); a.Message != "payment did not succeed: card declined" {
		t.Fatalf("sandbox account: %q, want the test gateway's refusal", a.Message)
	}
}

// TestAccountMode: an account is live unless created as a sandbox, and the admin API says
// which it is.
func TestAccountMode(t *testing.T) {
	t.Parallel()
	admin := map[string]string{"Authorization": "Bearer " + adminToken}
	for _, c := range []struct {
		body    string
		sandbox bool
	}{{`{"name":"Live"}`, false}, {`{"name":"Trial","sandbox":true}`, true}, {`{"sandbox":"1"}`, true}} {
		r := do(t, http.MethodPost, "/admin/v1/accounts", admin, c.body)
		r.status(t, http.StatusCreated)
		var created struct {
			Data struct {
				AccountID string `json:"account_id"`
				Sandbox   bool   `json:"sandbox"`
			} `json:"data"`
		}
		r.decode(t, &created)
		var got struct {
			Data struct {
				Sandbox bool `json:"sandbox"`
			} `json:"data"`
		}
		do(t, http.MethodGet, "/admin/v1/accounts/"+created.Data.AccountID, admin, "").decode(t, &got)
		if created.Data.Sandbox != c.sandbox || got.Data.Sandbox != c.sandbox {
			t.Errorf("%s: created sandbox=%v, read sandbox=%v; want %v", c.body, created.Data.Sandbox, got.Data.Sandbox, c.sandbox)
		}
	}
	do(t, http.MethodPost, "/admin/v1/accounts", admin, `{"sandbox":"yes"}`).wantViolation(t, "sandbox", "boolean")
}
