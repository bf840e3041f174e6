package request_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vros/vros/booking-svc/internal/card"
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
		tc("checkin invalid", "checkin: must be a valid date (YYYY-MM-DD)", set("checkin", "tomorrow")),
		tc("birthday tomorrow", "birthday: must not be in the future", set("birthday", "2026-06-16")),
		tc("optional text cleared", "", set("phone2", ""), set("other", ""), set("promotionCode", "")),
		tc("postcode letters", "postcode: must contain digits only", set("postcode", "AB1")),
		tc("country replaced, not refused", "", set("country", "Narnia")),
		tc("currency invalid", "currency: must be an ISO 4217 currency code", set("currency", "EURO")),
		tc("service line checked", "service[0].type: is required", set("service", obj(`[{"name":"x","amount":1}]`))),

		// Rules spanning fields are judged on the body only when all their
		// fields were sent; the rest waits for CheckBooking after Merge.
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

// stored is a booking as the service keeps it (services resolved).
func storedBooking() request.Booking {
	return request.Booking{
		PropertyID: 12, FirstName: "Ann", LastName: "Smith", Email: "ann@example.com",
		City: "Springfield", State: "IL", Postcode: "62701", Country: "US",
		Adults: 2, Children: 1, LeadSourceID: 4, Checkin: day("2026-07-01"), Checkout: day("2026-07-08"),
		Services:         []request.Service{{Name: "Cleaning", Applicable: 1, Amount: dec("50"), Type: 1, Unit: 1}},
		Currency:         "EUR",
		DamageProtection: true,
		PaymentAuto:      true,
		Other:            "late arrival",
	}
}

func TestMerge(t *testing.T) {
	cleaningOnly := storedBooking().Services
	for _, c := range []struct {
		name  string
		body  string
		check func(t *testing.T, got request.Booking)
	}{
		{"nothing sent keeps everything", `{"bookingId":9}`, func(t *testing.T, got request.Booking) {
			if !equalBooking(got, storedBooking()) {
				t.Fatalf("got %+v", got)
			}
		}},
		{"sent fields replace, others stay", `{"bookingId":9,"firstName":"Bea","numberofadults":"3","other":""}`, func(t *testing.T, got request.Booking) {
			want := storedBooking()
			want.FirstName, want.Adults, want.Other = "Bea", 3, ""
			if !equalBooking(got, want) {
				t.Fatalf("got %+v", got)
			}
		}},
		{"csa absent is unchanged", `{"bookingId":9,"csaTravelInsurance":1}`, func(t *testing.T, got request.Booking) {
			if !got.DamageProtection || !got.TravelInsurance {
				t.Fatalf("protection %v/%v", got.DamageProtection, got.TravelInsurance)
			}
		}},
		{"csa 0 turns it off", `{"bookingId":9,"csaDamageProtection":"0"}`, func(t *testing.T, got request.Booking) {
			if got.DamageProtection {
				t.Fatal("still on")
			}
		}},
		{"service absent, same property: kept", `{"bookingId":9,"propertyId":12}`, func(t *testing.T, got request.Booking) {
			if len(got.Services) != 1 || !equalService(got.Services[0], cleaningOnly[0]) {
				t.Fatalf("services %+v", got.Services)
			}
		}},
		{"service absent, new property: its defaults", `{"bookingId":9,"propertyId":13}`, func(t *testing.T, got request.Booking) {
			if got.PropertyID != 13 || got.Services != nil {
				t.Fatalf("property %d services %#v; want nil (defaults)", got.PropertyID, got.Services)
			}
		}},
		{"service empty removes", `{"bookingId":9,"service":""}`, func(t *testing.T, got request.Booking) {
			if got.Services == nil || len(got.Services) != 0 {
				t.Fatalf("services %#v", got.Services)
			}
		}},
		{"service replaces, even with a new property", `{"bookingId":9,"propertyId":13,"service":[{"name":"Bikes","amount":10,"type":1}]}`, func(t *testing.T, got request.Booking) {
			if len(got.Services) != 1 || got.Services[0].Name != "Bikes" {
				t.Fatalf("services %+v", got.Services)
			}
		}},
		{"paymentCharge and card are per request", `{"bookingId":9}`, func(t *testing.T, got request.Booking) {
			if got.PaymentCharge || got.Card != nil || !got.PaymentAuto {
				t.Fatalf("charge %v card %v auto %v", got.PaymentCharge, got.Card, got.PaymentAuto)
			}
		}},
		{"country replaced flag from the update", `{"bookingId":9,"country":"Germany"}`, func(t *testing.T, got request.Booking) {
			if got.Country != "US" || !got.CountryReplaced {
				t.Fatalf("country %q replaced %v", got.Country, got.CountryReplaced)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, err := request.DecodeUpdate([]byte(c.body), now)
			if err != nil {
				t.Fatal(err)
			}
			stored := storedBooking()
			stored.PaymentCharge, stored.CountryReplaced = true, true
			stored.Card = &card.Card{Number: "4242424242424242"}
			c.check(t, u.Merge(stored))
		})
	}
}

func TestMergeDoesNotAliasStored(t *testing.T) {
	stored := storedBooking()
	u, err := request.DecodeUpdate([]byte(`{"bookingId":9,"firstName":"Bea"}`), now)
	if err != nil {
		t.Fatal(err)
	}
	_ = u.Merge(stored)
	if stored.FirstName != "Ann" || !reflect.DeepEqual(stored.Services[0].Name, "Cleaning") {
		t.Fatal("Merge changed its argument")
	}
}

func TestCheckBooking(t *testing.T) {
	const protect = "is required when csaDamageProtection or csaTravelInsurance is 1"
	for _, c := range []struct {
		name string
		edit func(b *request.Booking)
		want string
	}{
		{"stored booking is valid", func(b *request.Booking) {}, ""},
		{"checkout moved before checkin", func(b *request.Booking) { b.Checkout = day("2026-06-30") }, "checkout: must be after checkin"},
		{"366 nights", func(b *request.Booking) { b.Checkout = day("2027-07-02") }, "checkout: must be at most 365 nights after checkin"},
		{"protection without city", func(b *request.Booking) { b.City = "" }, "city: " + protect},
		{"protection without an address", func(b *request.Booking) { b.City, b.State, b.Postcode = "", "", "" },
			"city: " + protect + "\nstate: " + protect + "\npostcode: " + protect},
		{"protection abroad", func(b *request.Booking) { b.Country = "IT" }, "csaDamageProtection: is only available for US addresses (country US)"},
		{"no protection abroad", func(b *request.Booking) { b.Country, b.DamageProtection, b.City = "IT", false, "" }, ""},
		{"charge without card", func(b *request.Booking) { b.PaymentCharge = true }, "creditCard: is required when paymentCharge is 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := storedBooking()
			c.edit(&b)
			got := strings.Join(violations(t, request.CheckBooking(b)), "\n")
			if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}
