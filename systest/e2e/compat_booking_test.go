package e2e

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/vros/vros/testkit/phpjson"
)

// Issue #11's booking compatibility: getinfo and create as the original's docs and PHP
// clients send them (form bodies, every number a string, include[]), a promotion code set
// up through /api/property-promotion, a currency conversion with the account's rate, the
// default lead source, an alphanumeric postcode and a check-in with a time part.

// form sends an interface B action as a PHP form body (bracket notation for lists).
func (acc account) form(t *testing.T, action string, fields url.Values) response {
	t.Helper()
	v := url.Values{"key": {acc.Key}, "pass": {acc.Pass}, "action": {action}}
	for k, vs := range fields {
		v[k] = vs
	}
	return do(t, http.MethodPost, "/vros/external-booking", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, v.Encode())
}

// dataKeys are the keys of an interface B answer's data, in the order written: PHP clients
// read answers positionally.
func dataKeys(t *testing.T, r response) []string {
	t.Helper()
	out, err := phpjson.Keys(r.b(t).Data)
	if err != nil {
		t.Fatalf("data is not an object: %v: %s", err, r.Body)
	}
	return out
}

// compatQuote is the getinfo data the original's clients read.
type compatQuote struct {
	TotalRent                  decimal.Decimal  `json:"totalRent"`
	TaxTotal                   decimal.Decimal  `json:"taxTotal"`
	ServiceTotal               decimal.Decimal  `json:"serviceTotal"`
	DiscountTotal              decimal.Decimal  `json:"discountTotal"`
	GrandTotal                 decimal.Decimal  `json:"grandTotal"`
	GrandTotalBeforeDiscounted *decimal.Decimal `json:"grandTotalBeforeDiscounted"`
	QtyOfNights                int              `json:"qtyofnights"`
	MinimumStay                int              `json:"minimumStay"`
	CreatedDate                *string          `json:"createdDate"`
	CancellationDate           *string          `json:"cancellationDate"`
	Currency                   string           `json:"currency"`
	ExchangeRate               decimal.Decimal  `json:"exchangeRate"`
	Discount                   []struct {
		Name          string          `json:"name"`
		Amount        decimal.Decimal `json:"amount"`
		PromotionCode string          `json:"promotion_code"`
	} `json:"discount"`
	DiscountTexts []string `json:"discounttexts"`
}

func TestCompatBooking(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "COMPAT-B1")
	ps := strconv.Itoa(pid)
	acc.a(t, "account-settings", obj{"timezone": "America/New_York", "exchange_rates": obj{"EUR": "0.92"}, "default_lead_source": 3}).
		status(t, http.StatusOK)
	if r := acc.a(t, "property-promotion", obj{"action": "create", "promotion": obj{"code": "SPRING10", "name": "Spring ten",
		"type": "percent", "amount": "10", "start_date": day(0), "usage_limit": 2}}); r.Code/100 != 2 {
		t.Fatalf("promotion: HTTP %d %s", r.Code, r.Body)
	}
	in, out := day(20), day(23)
	// booking-svc's view is fed by the settings event: wait until it prices the code.
	deadline := time.Now().Add(viewsWithin)
	for {
		r := acc.b(t, "getinfo", obj{"propertyId": ps, "numberofadults": "2", "checkin": in, "checkout": out, "promotionCode": "SPRING10",
			"currency": "EUR"})
		if r.b(t).Status == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("booking-svc never saw the promotion and rate: %s", r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}

	t.Run("getinfo as the docs send it, with include[] and a promotion", func(t *testing.T) {
		r := acc.form(t, "getinfo", url.Values{"propertyId": {ps}, "numberofadults": {"2"}, "numberofchildren": {"1"},
			"checkin": {in}, "checkout": {out}, "promotionCode": {"spring10"},
			"include[]": {"discounttexts", "grandTotalBeforeDiscounted"}})
		if r.Code != http.StatusOK {
			t.Fatalf("HTTP %d %s", r.Code, r.Body)
		}
		var q compatQuote
		r.ok(t, &q)
		keys := dataKeys(t, r)
		if keys[0] != "totalRent" || keys[5] != "grandTotalBeforeDiscounted" || keys[4] != "grandTotal" {
			t.Fatalf("key order %v", keys)
		}
		if !slicesIndexBefore(keys, "checkout", "createdDate") || !slicesIndexBefore(keys, "createdDate", "cancellationDate") ||
			!slicesIndexBefore(keys, "discount", "discounttexts") {
			t.Fatalf("key order %v", keys)
		}
		if q.CreatedDate != nil || q.CancellationDate != nil || !strings.Contains(string(r.Body), `"createdDate":null`) {
			t.Fatalf("createdDate/cancellationDate: %s", r.Body)
		}
		if !q.TotalRent.Equal(decimal.NewFromInt(300)) || !q.DiscountTotal.Equal(decimal.NewFromInt(30)) ||
			!q.GrandTotal.Equal(decimal.NewFromInt(270)) || q.GrandTotalBeforeDiscounted == nil ||
			!q.GrandTotalBeforeDiscounted.Equal(q.GrandTotal.Add(q.DiscountTotal)) {
			t.Fatalf("totals %s", r.Body)
		}
		if len(q.Discount) != 1 || q.Discount[0].PromotionCode != "SPRING10" || len(q.DiscountTexts) != 1 ||
			q.DiscountTexts[0] != "Promotion SPRING10: 10% off" || q.Currency != "USD" || !q.ExchangeRate.Equal(decimal.NewFromInt(1)) {
			t.Fatalf("discount %s", r.Body)
		}
	})

	t.Run("getinfo without include[] carries neither optional field", func(t *testing.T) {
		r := acc.b(t, "getinfo", obj{"propertyId": ps, "numberofadults": "2", "checkin": in, "checkout": out})
		var q compatQuote
		r.ok(t, &q)
		if q.GrandTotalBeforeDiscounted != nil || q.DiscountTexts != nil || !q.DiscountTotal.IsZero() {
			t.Fatalf("%s", r.Body)
		}
	})

	t.Run("getinfo in another currency", func(t *testing.T) {
		var q compatQuote
		acc.form(t, "getinfo", url.Values{"propertyId": {ps}, "numberofadults": {"2"}, "checkin": {in + " 15:00:00"},
			"checkout": {out + " 11:00:00"}, "currency": {"eur"}, "promotionCode": {"SPRING10"}}).ok(t, &q)
		if q.Currency != "EUR" || !q.ExchangeRate.Equal(decimal.RequireFromString("0.92")) ||
			!q.TotalRent.Equal(decimal.RequireFromString("276")) || !q.DiscountTotal.Equal(decimal.RequireFromString("27.6")) ||
			!q.GrandTotal.Equal(q.TotalRent.Add(q.TaxTotal).Add(q.ServiceTotal).Sub(q.DiscountTotal)) {
			t.Fatalf("%+v", q)
		}
	})

	t.Run("clear errors on HTTP 200", func(t *testing.T) {
		cases := []struct {
			name   string
			fields url.Values
			want   string
		}{
			{"unknown include", url.Values{"include[]": {"discounttexts", "everything"}}, "include[1]"},
			{"unknown promotion", url.Values{"promotionCode": {"NOPE"}}, "NOPE is not a promotion code of this account"},
			{"a currency without a rate", url.Values{"currency": {"GBP"}}, "no exchange rate is configured for GBP"},
			{"a malformed time", url.Values{"checkin": {in + " 25:00:00"}}, "checkin"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				f := url.Values{"propertyId": {ps}, "numberofadults": {"2"}, "checkin": {in}, "checkout": {out}}
				for k, v := range c.fields {
					f[k] = v
				}
				r := acc.form(t, "getinfo", f)
				a := r.b(t)
				if r.Code != http.StatusOK || a.Status != 4 || !strings.Contains(a.Message, c.want) {
					t.Fatalf("HTTP %d %s, want status 4 naming %q", r.Code, r.Body, c.want)
				}
			})
		}
	})

	t.Run("create as the docs send it", func(t *testing.T) {
		before := time.Now()
		r := acc.form(t, "create", url.Values{"propertyId": {ps}, "firstName": {"Ann"}, "lastName": {"Lee"},
			"email": {"ann@example.com"}, "numberofadults": {"2"}, "numberofchildren": {"0"},
			"checkin": {in + " 15:00:00"}, "checkout": {out + " 11:00:00"}, "postcode": {"HA3 0BL"}, "country": {"GB"},
			"promotionCode": {"SPRING10"}, "currency": {"EUR"}})
		var b struct {
			BookingID     int64           `json:"bookingId"`
			LeadSourceID  int             `json:"leadsourceId"`
			Postcode      string          `json:"postcode"`
			Checkin       string          `json:"checkin"`
			CreatedDate   string          `json:"createdDate"`
			PromotionCode string          `json:"promotionCode"`
			Currency      string          `json:"currency"`
			ExchangeRate  decimal.Decimal `json:"exchangeRate"`
			GrandTotal    decimal.Decimal `json:"grandTotal"`
		}
		r.ok(t, &b)
		if b.LeadSourceID != 3 || b.Postcode != "HA3 0BL" || b.Checkin != in+" 15:00:00" || b.PromotionCode != "SPRING10" ||
			b.Currency != "EUR" || !b.ExchangeRate.Equal(decimal.RequireFromString("0.92")) ||
			!b.GrandTotal.Equal(decimal.RequireFromString("248.4")) {
			t.Fatalf("%s", r.Body)
		}
		ny, _ := time.LoadLocation("America/New_York")
		created, err := time.ParseInLocation("2006-01-02 15:04:05", b.CreatedDate, ny)
		if err != nil || created.Before(before.Add(-2*time.Second)) || created.After(time.Now().Add(2*time.Second)) {
			t.Fatalf("createdDate %s is not now in the property's zone (America/New_York): %v", b.CreatedDate, err)
		}
		// A postcode over 20 characters is still refused.
		r = acc.form(t, "create", url.Values{"propertyId": {ps}, "firstName": {"Ann"}, "lastName": {"Lee"},
			"email": {"ann@example.com"}, "numberofadults": {"2"}, "checkin": {day(40)}, "checkout": {day(41)},
			"postcode": {"HA3 0BL HA3 0BL HA3 0B"}})
		if a := r.b(t); a.Status != 4 || !strings.Contains(a.Message, "postcode") {
			t.Fatalf("long postcode: %s", r.Body)
		}
	})

	t.Run("the usage limit", func(t *testing.T) {
		// One use is held by the booking above; the limit is 2.
		acc.form(t, "create", url.Values{"propertyId": {ps}, "firstName": {"Bo"}, "lastName": {"Lee"}, "email": {"bo@example.com"},
			"numberofadults": {"2"}, "checkin": {day(50)}, "checkout": {day(52)}, "promotionCode": {"SPRING10"}}).ok(t, nil)
		r := acc.form(t, "create", url.Values{"propertyId": {ps}, "firstName": {"Cy"}, "lastName": {"Lee"}, "email": {"cy@example.com"},
			"numberofadults": {"2"}, "checkin": {day(60)}, "checkout": {day(62)}, "promotionCode": {"SPRING10"}})
		if a := r.b(t); r.Code != http.StatusOK || a.Status != 4 || !strings.Contains(a.Message, "used up") {
			t.Fatalf("third use: %s", r.Body)
		}
		if h := held(t, acc, pid, day(60), 2); len(h) != 0 {
			t.Fatalf("the refused create holds nights %v", h)
		}
	})
}

func slicesIndexBefore(list []string, a, b string) bool {
	ia, ib := -1, -1
	for i, k := range list {
		switch k {
		case a:
			ia = i
		case b:
			ib = i
		}
	}
	return ia >= 0 && ib > ia
}
