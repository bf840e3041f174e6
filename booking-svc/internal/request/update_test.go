package request_test

import (
	"slices"
	"testing"

	"github.com/vros/vros/booking-svc/internal/request"
)

func decodeUpdate(body []byte) error {
	_, err := request.DecodeUpdate(body, now)
	return err
}

func TestDecodeUpdate(t *testing.T) {
	const protect = "is required when csaDamageProtection or csaTravelInsurance is 1"
	full := string(apply(t, create, set("action", "update"), set("bookingId", 9)))
	base := `{"action":"update","bookingId":9}`
	rows := []row{
		tc("only bookingId", ""),
		tc("bookingId missing", "bookingId: is required", set("bookingId", del)),
		tc("bookingId 0", "bookingId: must be between 1 and 2147483647", set("bookingId", 0)),
		tc("bookingId as string", "", set("bookingId", "9")),

		tc("firstName blank", "firstName: must not be blank", set("firstName", "")),
		tc("lastName blank", "lastName: must not be blank", set("lastName", " ")),
		tc("email blank", "email: must not be blank", set("email", "")),
		tc("email invalid", "email: must be a valid email address", set("email", "ann")),
		tc("firstName 101 chars", "firstName: must be at most 100 characters", set("firstName", chars(101))),
		tc("numberofadults 0", "numberofadults: must be between 1 and 50", set("numberofadults", 0)),
		tc("numberofadults blank is not sent", "", set("numberofadults", "")),
		tc("numberofchildren 51", "numberofchildren: must be between 0 and 50", set("numberofchildren", 51)),
		tc("propertyId 0", "propertyId: must be between 1 and 2147483647", set("propertyId", 0)),
		tc("checkin alone", "", set("checkin", "2026-07-01")),
		tc("checkout alone", "", set("checkout", "2026-07-01")),
		tc("checkout before checkin, both sent", "checkout: must be after checkin", set("checkin", "2026-07-05"), set("checkout", "2026-07-01")),
		tc("checkin invalid", "checkin: "+stayDate, set("checkin", "tomorrow")),
		tc("birthday tomorrow", "birthday: must not be in the future", set("birthday", "2026-06-16")),
		tc("optional text cleared", "", set("phone2", ""), set("other", ""), set("promotionCode", "")),
		tc("postcode letters", "", set("postcode", "AB1")),
		tc("postcode with a slash", "postcode: "+postcodeRule, set("postcode", "A/1")),
		tc("checkin with a time", "", set("checkin", "2026-07-01 10:30:00")),
		tc("leadsourceId blank is not sent", "", set("leadsourceId", "")),
		tc("country replaced, not refused", "", set("country", "Narnia")),
		tc("currency invalid", "currency: must be an ISO 4217 currency code", set("currency", "EURO")),
		tc("service line checked", "service[0].type: is required", set("service", obj(`[{"name":"x","amount":1}]`))),

		// Rules spanning fields are judged on the body only when all their
		// fields were sent; the domain checks the rest on the booking the update makes.
		tc("protection alone waits for the merge", "", set("csaDamageProtection", 1)),
		tc("protection with city sent blank", "city: "+protect, set("csaDamageProtection", 1), set("city", "")),
		tc("protection with a foreign country sent", "csaDamageProtection: is only available for US addresses (country US)",
			set("csaDamageProtection", 1), set("country", "FR")),
		tc("paymentCharge needs a card in the same body", "creditCard: is required when paymentCharge is 1", set("paymentCharge", 1)),
		tc("paymentCharge with card", "", set("paymentCharge", 1),
			set("creditCard", obj(`{"CCNumber":"5555555555554444","NameOnCard":"A","Expiration":"01/2027","CVC":"321"}`))),
		tc("creditCard checked", "creditCard.Expiration: must be MM/YYYY",
			set("creditCard", obj(`{"CCNumber":"5555555555554444","NameOnCard":"A","Expiration":"2027-01","CVC":"321"}`))),
	}
	check(t, base, rows, decodeUpdate)
	if err := decodeUpdate([]byte(full)); err != nil {
		t.Fatalf("a full create body with bookingId is a valid update: %v", err)
	}
}

func TestDecodeUpdateSent(t *testing.T) {
	u, err := request.DecodeUpdate([]byte(`{"bookingId":9,"firstName":"Bea","phone2":"","numberofchildren":0,
		"csaTravelInsurance":0,"service":[],"country":"zz","checkout":"2026-07-10","numberofadults":"","email":null}`), now)
	if err != nil {
		t.Fatal(err)
	}
	var sent []string
	for k := range u.Sent {
		sent = append(sent, k)
	}
	slices.Sort(sent)
	want := []string{"checkout", "country", "csaTravelInsurance", "firstName", "numberofchildren", "phone2", "service"}
	if !slices.Equal(sent, want) {
		t.Fatalf("sent %v, want %v", sent, want)
	}
	if u.BookingID != 9 || u.Booking.FirstName != "Bea" || u.Booking.Services == nil || u.Booking.Country != "US" || !u.Booking.CountryReplaced {
		t.Fatalf("update %+v", u)
	}
}
