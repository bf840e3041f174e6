package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/request"
	"github.com/vros/vros/testkit/phpjson"
)

// keys lists the top-level keys of a JSON object in the order they were written.
func keys(t *testing.T, b []byte) []string {
	t.Helper()
	out, err := phpjson.Keys(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestQuoteAnswerOrderAndIncludes(t *testing.T) {
	q := booking.Quote{Currency: "EUR", ExchangeRate: "0.92", TotalRent: "276.00", TaxTotal: "0.00", ServiceTotal: "0.00",
		DiscountTotal: "27.60", GrandTotal: "248.40", DamageDeposit: "0.00", MinNightly: "92.00", MaxNightly: "92.00",
		Nightly:   map[string]string{"2027-03-01": "92.00"},
		Discounts: []booking.Discount{{Name: "Spring ten", Amount: "27.60", PromotionCode: "SPRING10"}}}
	p := priceOf(q, 3, "Villa", 21, "2027-03-01 15:00:00", "2027-03-04 11:00:00", 2, 1)
	base := []string{"totalRent", "taxTotal", "serviceTotal", "discountTotal", "grandTotal", "damageDeposit", "qtyofnights",
		"minNightlyPrice", "maxNightlyPrice", "nightlyPriceDetail", "propertyName", "propertyId", "checkin", "checkout",
		"createdDate", "cancellationDate", "numberofadults", "numberofchildren", "minimumStay", "currency", "exchangeRate", "tax",
		"service", "discount", "paymentSchedule"}
	cases := []struct {
		name    string
		include []string
		want    []string
		extra   string
	}{
		{"nothing asked", nil, base, ""},
		{"both", []string{request.IncludeDiscountTexts, request.IncludeGrandTotalBeforeDisc},
			insert(insert(base, "grandTotal", "grandTotalBeforeDiscounted"), "discount", "discounttexts"),
			`"grandTotalBeforeDiscounted":276.00`},
		{"texts only", []string{request.IncludeDiscountTexts}, insert(base, "discount", "discounttexts"),
			`"discounttexts":["Promotion SPRING10: 10% off"]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(quoteOf(p, c.include, []string{"Promotion SPRING10: 10% off"}))
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(t, b); strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Fatalf("keys\n got %v\nwant %v", got, c.want)
			}
			for _, s := range []string{`"createdDate":null`, `"cancellationDate":null`, `"exchangeRate":0.92`, `"promotion_code":"SPRING10"`, c.extra} {
				if !strings.Contains(string(b), s) {
					t.Errorf("%s lacks %s", b, s)
				}
			}
		})
	}
	// Asked for with no discount: an empty list, not an absent field.
	b, _ := json.Marshal(quoteOf(p, []string{request.IncludeDiscountTexts}, nil))
	if !strings.Contains(string(b), `"discounttexts":[]`) {
		t.Fatalf("%s", b)
	}
}

func insert(list []string, after, name string) []string {
	var out []string
	for _, k := range list {
		out = append(out, k)
		if k == after {
			out = append(out, name)
		}
	}
	return out
}

// Timestamps are shown in the property's time zone (docs/booking.md, "Timestamps").
func TestBookingTimestampsInThePropertyZone(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2027, 1, 10, 3, 30, 0, 0, time.UTC)
	cancelled := time.Date(2027, 7, 1, 12, 0, 0, 0, time.UTC)
	b := booking.Booking{CreatedAt: created, CancelledAt: &cancelled,
		Payments: map[int64]booking.Payment{7: {Amount: "10.00", Time: created}}}
	cases := []struct {
		loc                *time.Location
		created, cancelled string
	}{
		{time.UTC, "2027-01-10 03:30:00", "2027-07-01 12:00:00"},
		{ny, "2027-01-09 22:30:00", "2027-07-01 08:00:00"}, // EST, then EDT
	}
	for _, c := range cases {
		out := bookingOf(b, c.loc)
		if out.CreatedDate != c.created || *out.CancellationDate != c.cancelled || out.Payments[0].Time != c.created {
			t.Errorf("%s: created %s cancelled %s payment %s", c.loc, out.CreatedDate, *out.CancellationDate, out.Payments[0].Time)
		}
	}
	if out := bookingOf(b, time.UTC); out.ExchangeRate != "1" {
		t.Errorf("a booking without a stored rate shows %s", out.ExchangeRate)
	}
}

func TestInsertServiceAnswerOrder(t *testing.T) {
	b := bookingOf(booking.Booking{BookingID: 9, Quote: booking.Quote{Currency: "USD", ExchangeRate: "1"}}, time.UTC)
	out, err := json.Marshal(insertedOf(b))
	if err != nil {
		t.Fatal(err)
	}
	want := "bookingId,totalRent,taxTotal,serviceTotal,discountTotal,grandTotal,damageDeposit,qtyofnights,propertyName,propertyId," +
		"checkin,checkout,numberofadults,numberofchildren,currency,exchangeRate,tax,service"
	if got := strings.Join(keys(t, out), ","); got != want {
		t.Fatalf("keys %s\nwant %s", got, want)
	}
}
