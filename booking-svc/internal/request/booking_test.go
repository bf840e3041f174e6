package request_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/request"
)

// now is the clock of every test: 15 June 2026, 12:00 UTC.
var now = time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

const create = `{
	"key": "k", "pass": "p", "action": "create",
	"userId": 3,
	"propertyId": "12",
	"firstName": "Ann",
	"lastName": "Smith",
	"birthday": "1980-02-29",
	"birthplace": "H501",
	"address": "1 Main St",
	"phone1": "+1 555 0100",
	"phone2": "",
	"email": "Ann@Example.com",
	"numberofadults": 2,
	"numberofchildren": "1",
	"leadsourceId": 4,
	"checkin": "2026-07-01",
	"checkout": "2026-07-08",
	"service": [
		{"name": "Cleaning", "applicable": 1, "amount": 50, "type": 1},
		{"name": "Linen", "applicable": "2", "amount": "7.50", "type": "1", "unit": 2,
		 "taxes": [{"name": "VAT", "perc": "22"}, {"name": "City", "perc": 1.5}]},
		{"name": "Booking fee", "amount": "3.5", "type": 2}
	],
	"currency": "eur",
	"csaDamageProtection": 1,
	"csaTravelInsurance": "0",
	"city": "Springfield",
	"state": "IL",
	"postcode": "06201",
	"country": "us",
	"fiscal_code": "SMTNNA80B69Z404X",
	"promotionCode": "SUMMER",
	"paymentCharge": 1,
	"paymentAuto": 0,
	"creditCard": {"CCNumber": "4242424242424242", "NameOnCard": "ANN SMITH", "Expiration": "12/2030", "CVC": "123"},
	"brandId": 1,
	"other": "late arrival"
}`

func decodeCreate(body []byte) error {
	_, err := request.DecodeCreate(body, now)
	return err
}

const (
	postcodeRule = "must contain only letters, digits, spaces and hyphens, starting with a letter or digit"
	stayDate     = "must be a valid date (YYYY-MM-DD or YYYY-MM-DD HH:MM:SS)"
)

func TestDecodeCreate(t *testing.T) {
	const protect = "is required when csaDamageProtection or csaTravelInsurance is 1"
	rows := []row{
		tc("valid example", ""),
		tc("unknown fields ignored", "", set("bedrooms", 3)),

		tc("propertyId missing", "propertyId: is required", set("propertyId", del)),
		tc("propertyId 0", "propertyId: must be between 1 and 2147483647", set("propertyId", 0)),
		tc("propertyId 2147483648", "propertyId: must be between 1 and 2147483647", set("propertyId", 2147483648)),
		tc("propertyId composite", "propertyId: must be a number", set("propertyId", "3_12")),
		tc("userId absent", "", set("userId", del)),
		tc("userId 0", "userId: must be between 1 and 2147483647", set("userId", 0)),

		tc("firstName missing", "firstName: is required", set("firstName", del)),
		tc("firstName blank", "firstName: is required", set("firstName", "  ")),
		tc("firstName 100 chars", "", set("firstName", chars(100))),
		tc("firstName 101 chars", "firstName: must be at most 100 characters", set("firstName", chars(101))),
		tc("lastName missing", "lastName: is required", set("lastName", del)),
		tc("lastName 101 chars", "lastName: must be at most 100 characters", set("lastName", chars(101))),

		tc("email missing", "email: is required", set("email", del)),
		tc("email invalid", "email: must be a valid email address", set("email", "ann@example")),
		tc("email 255 chars", "email: must be at most 254 characters", set("email", chars(64)+"@"+chars(63)+"."+chars(63)+"."+chars(58)+".com")),

		tc("numberofadults missing", "numberofadults: is required", set("numberofadults", del)),
		tc("numberofadults 0", "numberofadults: must be between 1 and 50", set("numberofadults", 0)),
		tc("numberofadults 1", "", set("numberofadults", 1)),
		tc("numberofadults 50", "", set("numberofadults", "50")),
		tc("numberofadults 51", "numberofadults: must be between 1 and 50", set("numberofadults", 51)),
		tc("numberofadults fraction", "numberofadults: must be a whole number", set("numberofadults", 1.5)),
		tc("numberofchildren absent", "", set("numberofchildren", del)),
		tc("numberofchildren 0", "", set("numberofchildren", 0)),
		tc("numberofchildren 50", "", set("numberofchildren", 50)),
		tc("numberofchildren 51", "numberofchildren: must be between 0 and 50", set("numberofchildren", 51)),
		tc("numberofchildren -1", "numberofchildren: must be between 0 and 50", set("numberofchildren", -1)),

		tc("leadsourceId missing: the account's default", "", set("leadsourceId", del)),
		tc("leadsourceId blank: the account's default", "", set("leadsourceId", "")),
		tc("leadsourceId 0", "leadsourceId: must be between 1 and 2147483647", set("leadsourceId", 0)),

		tc("checkin missing", "checkin: is required", set("checkin", del)),
		tc("checkin impossible", "checkin: must be a valid date (YYYY-MM-DD or YYYY-MM-DD HH:MM:SS)", set("checkin", "2026-02-30")),
		tc("checkout missing", "checkout: is required", set("checkout", del)),
		tc("checkout with a time: the time is ignored", "", set("checkout", "2026-07-08 10:00:00")),
		tc("checkout same day", "checkout: must be after checkin", set("checkout", "2026-07-01")),
		tc("checkout before checkin", "checkout: must be after checkin", set("checkout", "2026-06-30")),
		tc("one night", "", set("checkout", "2026-07-02")),
		tc("365 nights", "", set("checkout", "2027-07-01")),
		tc("366 nights", "checkout: must be at most 365 nights after checkin", set("checkout", "2027-07-02")),
		tc("bad checkin skips the order rule", "checkin: must be a valid date (YYYY-MM-DD or YYYY-MM-DD HH:MM:SS)", set("checkin", "2026-13-01")),

		tc("birthday absent", "", set("birthday", del)),
		tc("birthday today", "", set("birthday", "2026-06-15")),
		tc("birthday tomorrow", "birthday: must not be in the future", set("birthday", "2026-06-16")),
		tc("birthday not a date", "birthday: must be a valid date (YYYY-MM-DD)", set("birthday", "29/02/1980")),
		tc("birthplace 100 chars", "", set("birthplace", chars(100))),
		tc("birthplace 101 chars", "birthplace: must be at most 100 characters", set("birthplace", chars(101))),
		tc("address 500 chars", "", set("address", chars(500))),
		tc("address 501 chars", "address: must be at most 500 characters", set("address", chars(501))),
		tc("phone1 30 chars", "", set("phone1", chars(30))),
		tc("phone1 31 chars", "phone1: must be at most 30 characters", set("phone1", chars(31))),
		tc("phone2 31 chars", "phone2: must be at most 30 characters", set("phone2", chars(31))),
		tc("city 200 chars", "", set("city", chars(200))),
		tc("city 201 chars", "city: must be at most 200 characters", set("city", chars(201))),
		tc("state 201 chars", "state: must be at most 200 characters", set("state", chars(201))),

		tc("postcode as number", "", set("postcode", 62701)),
		tc("postcode 20 digits", "", set("postcode", digits(20))),
		tc("postcode 21 digits", "postcode: must be at most 20 characters", set("postcode", digits(21))),
		tc("postcode HA3 0BL", "", set("postcode", "HA3 0BL")),
		tc("postcode SW1A 1AA", "", set("postcode", "SW1A 1AA")),
		tc("postcode ZIP+4", "", set("postcode", "62701-1234")),
		tc("postcode Canada lower case", "", set("postcode", "k1a 0b1")),
		tc("postcode 20 characters with spaces", "", set("postcode", "AB12 CD34 EF56 GH78X")),
		tc("postcode 21 characters", "postcode: must be at most 20 characters", set("postcode", "AB12 CD34 EF56 GH78XY")),
		tc("postcode fraction", "postcode: "+postcodeRule, set("postcode", 627.01)),
		tc("postcode with a slash", "postcode: "+postcodeRule, set("postcode", "12/34")),
		tc("postcode starting with a hyphen", "postcode: "+postcodeRule, set("postcode", "-1234")),
		tc("postcode with a non-ASCII letter", "postcode: "+postcodeRule, set("postcode", "ÅB 12")),
		tc("checkin with a time", "", set("checkin", "2026-07-01 15:00:00")),
		tc("checkin and checkout with times", "", set("checkin", "2026-07-01 00:00:00"), set("checkout", "2026-07-08 23:59:59")),
		tc("checkin with an impossible time", "checkin: "+stayDate, set("checkin", "2026-07-01 25:00:00")),
		tc("checkin with a short time", "checkin: "+stayDate, set("checkin", "2026-07-01 15:00")),
		tc("checkin with a T", "checkin: "+stayDate, set("checkin", "2026-07-01T15:00:00")),
		tc("checkin as a number", "checkin: "+stayDate, set("checkin", 20260701)),
		tc("checkout with a time on the check-in day", "checkout: must be after checkin", set("checkout", "2026-07-01 23:00:00")),

		tc("country invalid is replaced, not refused", "", set("country", "USA")),
		tc("country unknown is replaced", "", set("country", "XX")),
		tc("country not a string", "country: must be a string", set("country", true)),

		tc("fiscal_code 32 chars", "", set("fiscal_code", chars(32))),
		tc("fiscal_code 33 chars", "fiscal_code: must be at most 32 characters", set("fiscal_code", chars(33))),
		tc("promotionCode 50 chars", "", set("promotionCode", chars(50))),
		tc("promotionCode 51 chars", "promotionCode: must be at most 50 characters", set("promotionCode", chars(51))),
		tc("other 5000 chars", "", set("other", chars(5000))),
		tc("other 5001 chars", "other: must be at most 5000 characters", set("other", chars(5001))),

		tc("currency absent", "", set("currency", del)),
		tc("currency blank", "", set("currency", "")),
		tc("currency unknown", "currency: must be an ISO 4217 currency code", set("currency", "EUX")),
		tc("currency symbol", "currency: must be an ISO 4217 currency code", set("currency", "€")),
		tc("currency XXX", "currency: must be an ISO 4217 currency code", set("currency", "XXX")),
		tc("currency 4 letters", "currency: must be an ISO 4217 currency code", set("currency", "EURO")),

		tc("csaDamageProtection 2", "csaDamageProtection: must be one of 0, 1", set("csaDamageProtection", 2)),
		tc("csaDamageProtection true", "", set("csaDamageProtection", true)),
		tc("csaDamageProtection \"true\"", "", set("csaDamageProtection", "true")),
		tc("csaDamageProtection yes", "csaDamageProtection: must be one of 0, 1", set("csaDamageProtection", "yes")),
		tc("csaTravelInsurance -1", "csaTravelInsurance: must be one of 0, 1", set("csaTravelInsurance", -1)),
		tc("csaTravelInsurance object", "csaTravelInsurance: must be one of 0, 1", set("csaTravelInsurance", obj(`{"a":1}`))),
		tc("csaTravelInsurance blank is not sent", "", set("csaTravelInsurance", "")),
		tc("protection: city required", "city: "+protect, set("city", del)),
		tc("protection: city blank", "city: "+protect, set("city", "")),
		tc("protection: state required", "state: "+protect, set("state", del)),
		tc("protection: postcode required", "postcode: "+protect, set("postcode", del)),
		tc("protection by travel insurance", "city: "+protect+"\nstate: "+protect+"\npostcode: "+protect,
			set("csaDamageProtection", 0), set("csaTravelInsurance", 1), set("city", del), set("state", del), set("postcode", del)),
		tc("no protection: address not required", "",
			set("csaDamageProtection", 0), set("city", del), set("state", del), set("postcode", del)),
		tc("protection: a bad postcode is reported once", "postcode: "+postcodeRule, set("postcode", "A/C")),
		tc("protection outside the US", "csaDamageProtection: is only available for US addresses (country US)", set("country", "IT")),
		tc("protection outside the US by travel insurance", "csaTravelInsurance: is only available for US addresses (country US)",
			set("country", "IT"), set("csaDamageProtection", 0), set("csaTravelInsurance", 1)),
		tc("protection with country replaced by US", "", set("country", "United States")),
		tc("protection without country", "", set("country", del)),

		tc("paymentCharge 2", "paymentCharge: must be one of 0, 1", set("paymentCharge", 2)),
		tc("paymentAuto 2", "paymentAuto: must be one of 0, 1", set("paymentAuto", "2")),
		tc("paymentCharge without creditCard", "creditCard: is required when paymentCharge is 1", set("creditCard", del)),
		tc("paymentCharge 0 without creditCard", "", set("paymentCharge", 0), set("creditCard", del)),
		tc("creditCard not an object", "creditCard: must be an object", set("creditCard", "4242424242424242")),
		tc("creditCard checked without paymentCharge", "creditCard.CCNumber: is not a valid card number",
			set("paymentCharge", 0), set("creditCard.CCNumber", "4242424242424241")),
		tc("creditCard.CVC missing", "creditCard.CVC: is required", set("creditCard.CVC", del)),
		tc("creditCard expired", "creditCard.Expiration: has expired", set("creditCard.Expiration", "05/2026")),

		tc("brandId 0", "brandId: must be between 1 and 2147483647", set("brandId", 0)),

		tc("every violation listed",
			"firstName: is required\nnumberofadults: must be between 1 and 50\nservice[0].amount: is required\ncheckout: must be after checkin",
			set("firstName", del), set("numberofadults", 0), set("checkout", "2026-06-01"), set("service[0].amount", del)),
	}
	check(t, create, rows, decodeCreate)
}

func TestDecodeCreateServices(t *testing.T) {
	const s = "service[0]."
	rows := []row{
		tc("service absent", "", set("service", del)),
		tc("service empty list", "", set("service", []any{})),
		tc("service empty string", "", set("service", "")),
		tc("service empty object", "", set("service", obj(`{}`))),
		tc("service not a list", "service: must be an array", set("service", "Cleaning")),
		tc("service 50 lines", "", set("service", many(50, `{"name":"x","amount":1,"type":1}`))),
		tc("service 51 lines", "service: must have at most 50 items", set("service", many(51, `{"name":"x","amount":1,"type":1}`))),
		tc("service line not an object", "service[1]: must be an object", set("service[1]", "Linen")),
		tc("PHP list with gaps", "", set("service", obj(`{"0":{"name":"x","amount":1,"type":1},"2":{"name":"y","amount":2,"type":1}}`))),

		tc("name missing", s+"name: is required", set(s+"name", del)),
		tc("name blank", s+"name: is required", set(s+"name", " ")),
		tc("name 100 chars", "", set(s+"name", chars(100))),
		tc("name 101 chars", s+"name: must be at most 100 characters", set(s+"name", chars(101))),

		tc("applicable absent", "", set(s+"applicable", del)),
		tc("applicable 4", "", set(s+"applicable", 4)),
		tc("applicable 0", s+"applicable: must be between 1 and 4", set(s+"applicable", 0)),
		tc("applicable 5", s+"applicable: must be between 1 and 4", set(s+"applicable", 5)),

		tc("amount missing", s+"amount: is required", set(s+"amount", del)),
		tc("amount 0", "", set(s+"amount", 0)),
		tc("amount negative", s+"amount: must be between 0 and 2147483647", set(s+"amount", -1)),
		tc("amount 2147483647", "", set(s+"amount", 2147483647)),
		tc("amount 2147483648", s+"amount: must be between 0 and 2147483647", set(s+"amount", 2147483648)),
		tc("amount cents", "", set(s+"amount", "49.99")),
		tc("amount 3 decimals", s+"amount: must have at most 2 decimal places", set(s+"amount", "49.999")),
		tc("amount text", s+"amount: must be a number", set(s+"amount", "fifty")),
		tc("percent 100", "", set(s+"type", 2), set(s+"amount", 100)),
		tc("percent 100.01", s+"amount: must be between 0 and 100", set(s+"type", 2), set(s+"amount", "100.01")),
		tc("percent 4 decimals", "", set(s+"type", 2), set(s+"amount", "8.875")),

		tc("type missing", s+"type: is required", set(s+"type", del)),
		tc("type 3", s+"type: must be one of 1, 2", set(s+"type", 3)),
		tc("type 3 keeps outer amount bounds", s+"type: must be one of 1, 2\n"+s+"amount: must be between 0 and 2147483647",
			set(s+"type", 3), set(s+"amount", -1)),

		tc("unit absent", "", set(s+"unit", del)),
		tc("unit 0", s+"unit: must be between 1 and 2147483647", set(s+"unit", 0)),
		tc("unit fraction", s+"unit: must be a whole number", set(s+"unit", 1.5)),

		tc("taxes absent", "", set("service[1].taxes", del)),
		tc("taxes empty string", "", set("service[1].taxes", "")),
		tc("taxes not a list", "service[1].taxes: must be an array", set("service[1].taxes", "VAT")),
		tc("taxes 10", "", set("service[1].taxes", many(10, `{"name":"t","perc":"1"}`))),
		tc("taxes 11", "service[1].taxes: must have at most 10 items", set("service[1].taxes", many(11, `{"name":"t","perc":"1"}`))),
		tc("tax name missing", "service[1].taxes[0].name: is required", set("service[1].taxes[0].name", del)),
		tc("tax name 101 chars", "service[1].taxes[0].name: must be at most 100 characters", set("service[1].taxes[0].name", chars(101))),
		tc("tax perc missing", "service[1].taxes[1].perc: is required", set("service[1].taxes[1].perc", del)),
		tc("tax perc 100", "", set("service[1].taxes[1].perc", "100")),
		tc("tax perc 101", "service[1].taxes[1].perc: must be between 0 and 100", set("service[1].taxes[1].perc", 101)),
		tc("tax perc negative", "service[1].taxes[1].perc: must be between 0 and 100", set("service[1].taxes[1].perc", "-1")),
		tc("tax perc with percent sign", "service[1].taxes[1].perc: must be a number", set("service[1].taxes[1].perc", "22%")),
	}
	check(t, create, rows, decodeCreate)
}

func TestDecodeCreateValues(t *testing.T) {
	b, err := request.DecodeCreate([]byte(create), now)
	if err != nil {
		t.Fatal(err)
	}
	cc := b.Card
	b.Card = nil
	want := request.Booking{
		PropertyID: 12, UserID: 3, FirstName: "Ann", LastName: "Smith", Email: "Ann@Example.com",
		Birthday: day("1980-02-29"), Birthplace: "H501", Address: "1 Main St", Phone1: "+1 555 0100",
		City: "Springfield", State: "IL", Postcode: "06201", Country: "US", FiscalCode: "SMTNNA80B69Z404X",
		PromotionCode: "SUMMER", Adults: 2, Children: 1, LeadSourceID: 4,
		Checkin: day("2026-07-01"), Checkout: day("2026-07-08"),
		Services: []request.Service{
			{Name: "Cleaning", Applicable: request.PerStay, Amount: dec("50"), Type: request.Fixed, Unit: 1},
			{Name: "Linen", Applicable: request.PerNight, Amount: dec("7.5"), Type: request.Fixed, Unit: 2,
				Taxes: []request.ServiceTax{{Name: "VAT", Percent: dec("22")}, {Name: "City", Percent: dec("1.5")}}},
			{Name: "Booking fee", Applicable: request.PerStay, Amount: dec("3.5"), Type: request.Percent, Unit: 1},
		},
		Currency: "EUR", DamageProtection: true, PaymentCharge: true, BrandID: 1, Other: "late arrival",
	}
	if !equalBooking(b, want) {
		t.Fatalf("got  %+v\nwant %+v", b, want)
	}
	if cc == nil || cc.Number != "4242424242424242" || cc.CVC != "123" || cc.ExpYear != 2030 {
		t.Fatalf("card %v", cc)
	}
	if b.Nights() != 7 || !b.Protection() {
		t.Fatalf("nights %d, protection %v", b.Nights(), b.Protection())
	}
}

func TestDecodeCreateDefaultsAndEmpties(t *testing.T) {
	b, err := request.DecodeCreate(apply(t, create,
		set("numberofchildren", del), set("service", del), set("country", del), set("currency", del)), now)
	if err != nil {
		t.Fatal(err)
	}
	if b.Children != 0 || b.Services != nil || b.Country != "" || b.CountryReplaced || b.Currency != "" {
		t.Fatalf("defaults: children %d, services %#v, country %q/%v, currency %q",
			b.Children, b.Services, b.Country, b.CountryReplaced, b.Currency)
	}
	for _, empty := range []any{[]any{}, "", obj(`{}`)} {
		b, err := request.DecodeCreate(apply(t, create, set("service", empty)), now)
		if err != nil || b.Services == nil || len(b.Services) != 0 {
			t.Fatalf("service %v: %#v, %v; want a non-nil empty list", empty, b.Services, err)
		}
	}
	b, err = request.DecodeCreate(apply(t, create, set("service", nil)), now)
	if err != nil || b.Services != nil {
		t.Fatalf("service null: %#v, %v; want nil (defaults)", b.Services, err)
	}
}

func TestCountryReplacement(t *testing.T) {
	for _, c := range []struct {
		sent     any
		want     string
		replaced bool
	}{
		{"it", "IT", false},
		{"GB", "GB", false},
		{"UK", "US", true},
		{"ITA", "US", true},
		{"Italy", "US", true},
		{"12", "US", true},
		{"", "", false},
	} {
		b, err := request.DecodeCreate(apply(t, create, set("country", c.sent), set("csaDamageProtection", 0)), now)
		if err != nil || b.Country != c.want || b.CountryReplaced != c.replaced {
			t.Errorf("country %q: got %q replaced=%v err=%v; want %q replaced=%v",
				c.sent, b.Country, b.CountryReplaced, err, c.want, c.replaced)
		}
	}
}

func TestCreditCardNeverInBookingOutput(t *testing.T) {
	b, err := request.DecodeCreate([]byte(create), now)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(b)
	if s := string(js); containsAny(s, "4242424242424242", `"123"`) {
		t.Fatalf("booking JSON shows card secrets: %s", s)
	}
}

// equalBooking compares bookings, decimals by value.
func equalBooking(a, b request.Booking) bool {
	if len(a.Services) != len(b.Services) {
		return false
	}
	for i := range a.Services {
		if !equalService(a.Services[i], b.Services[i]) {
			return false
		}
	}
	a.Services, b.Services = nil, nil
	return reflect.DeepEqual(a, b)
}

func equalService(a, b request.Service) bool {
	if !a.Amount.Equal(b.Amount) || len(a.Taxes) != len(b.Taxes) {
		return false
	}
	for i := range a.Taxes {
		if a.Taxes[i].Name != b.Taxes[i].Name || !a.Taxes[i].Percent.Equal(b.Taxes[i].Percent) {
			return false
		}
	}
	a.Amount, b.Amount, a.Taxes, b.Taxes = dec("0"), dec("0"), nil, nil
	return reflect.DeepEqual(a, b)
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func TestNotAnObject(t *testing.T) {
	for body, want := range map[string]string{
		`{"action":`: "body: must be valid JSON",
		`"create"`:   "body: must be a JSON object",
		``:           "body: must be a JSON object",
	} {
		got := violations(t, decodeCreate([]byte(body)))
		if len(got) != 1 || got[0] != want {
			t.Errorf("%q: %q, want %q", body, got, want)
		}
	}
}
