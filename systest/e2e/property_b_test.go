package e2e

import (
	"net/http"
	"strconv"
	"testing"
)

// TestGetPayment: getpayment lists the property's methods keyed by provider, with what a
// website needs to take a payment; another account's property is unknown.
func TestGetPayment(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	pid, _ := strconv.Atoi(createProperty(t, acc, "GP1"))
	acc.a(t, "property-method", obj{"internal_code": "GP1",
		"stripe":       obj{"secret_key": "sk_test_1", "public_key": "pk_test_1", "description": "Cards"},
		"paypal":       obj{"email": "pay@example.com"},
		"authorizenet": obj{"login_id": "login", "transaction_key": "txkey"},
		"cash":         obj{"description": "Pay at check-in"},
	}).status(t, http.StatusOK)
	var m map[string]map[string]any
	acc.b(t, "getpayment", obj{"propertyId": pid}).ok(t, &m)
	want := map[string]map[string]any{
		"stripe":       {"method": "stripe", "detail": "Cards", "secret_key": "sk_test_1", "publishable_key": "pk_test_1"},
		"paypal":       {"method": "paypal", "detail": "", "email": "pay@example.com"},
		"authorizenet": {"method": "authorizenet", "detail": "", "apiloginid": "login", "transactionkey": "txkey"},
		"cash":         {"method": "cash", "detail": "Pay at check-in"},
	}
	for k, fields := range want {
		for f, v := range fields {
			if m[k][f] != v {
				t.Fatalf("%s.%s = %v, want %v (all: %v)", k, f, m[k][f], v, m)
			}
		}
	}
	if len(m) != len(want) {
		t.Fatalf("methods %v", m)
	}
	other.b(t, "getpayment", obj{"propertyId": pid}).wantStatus(t, 16)
	acc.b(t, "getpayment", obj{}).wantStatus(t, 4)
}

// TestSetPricesMinNights: a dynamic-pricing tool's per-date prices become the nightly price
// and minimum stay of those dates, in quotes too.
func TestSetPricesMinNights(t *testing.T) {
	t.Parallel()
	acc, other := newAccount(t), newAccount(t)
	pid := bookable(t, acc, "DP1")
	id := acc.AccountID + "_" + strconv.Itoa(pid)
	d1, d2 := day(30), day(31)
	arr := `[{"date":"` + d1 + `","recommended_price":"150.50","current_price":"100","minNights":"3","reason":"event"},` +
		`{"date":"` + d2 + `","recommended_price":"160","minNights":"1"}]`
	var empty []any
	acc.b(t, "setprices_minnights", obj{"propertyId": id, "pricingArray": arr}).ok(t, &empty)
	if empty == nil || len(empty) != 0 {
		t.Fatalf("answer %v, want an empty list", empty)
	}
	waitVersion(t, acc, pid)
	var q bookingData
	acc.b(t, "getinfo", obj{"propertyId": pid, "numberofadults": 1, "checkin": d1, "checkout": day(33)}).ok(t, &q)
	if !q.NightlyDetail[d1].Equal(dec("150.5")) || !q.NightlyDetail[d2].Equal(dec("160")) || !q.NightlyDetail[day(32)].Equal(dec("100")) {
		t.Fatalf("nightly prices %v", q.NightlyDetail)
	}
	acc.b(t, "getinfo", obj{"propertyId": pid, "numberofadults": 1, "checkin": d1, "checkout": day(31)}).wantStatus(t, 4) // minNights 3
	for _, c := range []struct {
		name string
		body obj
	}{
		{"not JSON", obj{"propertyId": id, "pricingArray": "[{"}},
		{"bad date", obj{"propertyId": id, "pricingArray": `[{"date":"2027-02-30","recommended_price":"1"}]`}},
		{"price missing", obj{"propertyId": id, "pricingArray": `[{"date":"` + d1 + `"}]`}},
		{"negative price", obj{"propertyId": id, "pricingArray": `[{"date":"` + d1 + `","recommended_price":"-1"}]`}},
		{"date twice", obj{"propertyId": id, "pricingArray": `[{"date":"` + d1 + `","recommended_price":"1"},{"date":"` + d1 + `","recommended_price":"2"}]`}},
		{"plain property id", obj{"propertyId": strconv.Itoa(pid), "pricingArray": "[]"}},
	} {
		t.Run(c.name, func(t *testing.T) { acc.b(t, "setprices_minnights", c.body).wantStatus(t, 4) })
	}
	other.b(t, "setprices_minnights", obj{"propertyId": id, "pricingArray": arr}).wantStatus(t, 16)
	other.b(t, "setprices_minnights", obj{"propertyId": other.AccountID + "_" + strconv.Itoa(pid), "pricingArray": arr}).wantStatus(t, 16)
}
