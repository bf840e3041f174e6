package request_test

import (
	"slices"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/request"
)

const includeRule = "must be one of discounttexts, grandTotalBeforeDiscounted"

func TestDecodeQuote(t *testing.T) {
	base := `{"action":"getinfo","propertyId":12,"numberofadults":"2","checkin":"2026-07-01","checkout":"2026-07-08"}`
	rows := []row{
		tc("valid example", ""),
		tc("propertyId missing", "propertyId: is required", set("propertyId", del)),
		tc("propertyId 0", "propertyId: must be between 1 and 2147483647", set("propertyId", 0)),
		tc("numberofadults missing", "numberofadults: is required", set("numberofadults", del)),
		tc("numberofadults 0", "numberofadults: must be between 1 and 50", set("numberofadults", 0)),
		tc("numberofadults 51", "numberofadults: must be between 1 and 50", set("numberofadults", 51)),
		tc("numberofchildren 50", "", set("numberofchildren", 50)),
		tc("numberofchildren 51", "numberofchildren: must be between 0 and 50", set("numberofchildren", 51)),
		tc("checkin missing", "checkin: is required", set("checkin", del)),
		tc("checkout missing", "checkout: is required", set("checkout", del)),
		tc("checkout not after checkin", "checkout: must be after checkin", set("checkout", "2026-07-01")),
		tc("366 nights", "checkout: must be at most 365 nights after checkin", set("checkout", "2027-07-02")),
		tc("service empty", "", set("service", "")),
		tc("service line checked", "service[0].name: is required", set("service", obj(`[{"amount":1,"type":1}]`))),
		tc("currency invalid", "currency: must be an ISO 4217 currency code", set("currency", "ABC")),
		tc("csaDamageProtection 1 needs no address here", "", set("csaDamageProtection", 1)),
		tc("csaTravelInsurance 2", "csaTravelInsurance: must be one of 0, 1", set("csaTravelInsurance", 2)),
		tc("booking fields not checked", "", set("firstName", ""), set("email", "x")),
		tc("checkin with a time", "", set("checkin", "2026-07-01 15:00:00")),
		tc("checkout with a bad time", "checkout: "+stayDate, set("checkout", "2026-07-08 11:61:00")),
		tc("promotionCode", "", set("promotionCode", "SPRING10")),
		tc("promotionCode 51 chars", "promotionCode: must be at most 50 characters", set("promotionCode", chars(51))),
		tc("include both", "", set("include", []any{"discounttexts", "grandTotalBeforeDiscounted"})),
		tc("include any case", "", set("include", []any{"DiscountTexts"})),
		tc("include as one string", "", set("include", "grandTotalBeforeDiscounted")),
		tc("include empty", "", set("include", []any{})),
		tc("include[] key of a JSON client", "", set("include[]", []any{"discounttexts"})),
		tc("include unknown", "include[1]: "+includeRule, set("include", []any{"discounttexts", "taxes"})),
		tc("include unknown single string", "include: "+includeRule, set("include", "everything")),
		tc("include number", "include[0]: "+includeRule, set("include", []any{7})),
		tc("include an object", "include: must be an array", set("include", obj(`{"a":{"b":1}}`))),
	}
	check(t, base, rows, func(b []byte) error {
		_, err := request.DecodeQuote(b)
		return err
	})
	inc, err := request.DecodeQuote(apply(t, base, set("include", []any{"grandtotalbeforediscounted", "discounttexts", "discounttexts"}),
		set("promotionCode", "SPRING10")))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(inc.Include, []string{"grandTotalBeforeDiscounted", "discounttexts"}) || inc.PromotionCode != "SPRING10" {
		t.Fatalf("include %q promotion %q", inc.Include, inc.PromotionCode)
	}
	timed, err := request.DecodeQuote(apply(t, base, set("checkin", "2026-07-01 23:59:59"), set("checkout", " 2026-07-08 00:00:01 ")))
	if err != nil || !timed.Checkin.Equal(day("2026-07-01")) || !timed.Checkout.Equal(day("2026-07-08")) {
		t.Fatalf("dates with a time part: %v %v %v", timed.Checkin, timed.Checkout, err)
	}
	q, err := request.DecodeQuote(apply(t, base, set("currency", "usd"), set("csaTravelInsurance", "1")))
	if err != nil {
		t.Fatal(err)
	}
	want := request.Quote{PropertyID: 12, Adults: 2, Checkin: day("2026-07-01"), Checkout: day("2026-07-08"),
		Currency: "USD", TravelInsurance: true}
	if q.PropertyID != want.PropertyID || q.Adults != 2 || q.Children != 0 || !q.Checkin.Equal(want.Checkin) ||
		!q.Checkout.Equal(want.Checkout) || q.Services != nil || q.Currency != "USD" || !q.TravelInsurance || q.DamageProtection {
		t.Fatalf("got %+v", q)
	}
}

func TestDecodeInsertService(t *testing.T) {
	base := `{"action":"insertservice","bookingId":9,"service":[{"name":"Bikes","amount":"10","type":1,"unit":3}]}`
	rows := []row{
		tc("valid example", ""),
		tc("bookingId missing", "bookingId: is required", set("bookingId", del)),
		tc("service missing", "service: is required", set("service", del)),
		tc("service null", "service: is required", set("service", nil)),
		tc("service empty list", "service: must have at least 1 item", set("service", []any{})),
		tc("service empty string", "service: must have at least 1 item", set("service", "")),
		tc("service 51 lines", "service: must have at most 50 items", set("service", many(51, `{"name":"x","amount":1,"type":1}`))),
		tc("service line checked", "service[0].amount: must have at most 2 decimal places", set("service[0].amount", "1.005")),
	}
	check(t, base, rows, func(b []byte) error {
		_, err := request.DecodeInsertService(b)
		return err
	})
	s, err := request.DecodeInsertService([]byte(base))
	if err != nil || s.BookingID != 9 || len(s.Services) != 1 || s.Services[0].Unit != 3 {
		t.Fatalf("got %+v, %v", s, err)
	}
}

func TestDecodeCancel(t *testing.T) {
	rows := []row{
		tc("valid", ""),
		tc("bookingId missing", "bookingId: is required", set("bookingId", del)),
		tc("bookingId negative", "bookingId: must be between 1 and 2147483647", set("bookingId", -9)),
		tc("bookingId text", "bookingId: must be a number", set("bookingId", "nine")),
		tc("an override", "", set("refundAmount", "120.50"), set("refundReason", "goodwill")),
		tc("an override of 0", "", set("refundAmount", 0), set("refundReason", "no show")),
		tc("an override as a number", "", set("refundAmount", 99.5), set("refundReason", "x")),
		tc("an override without a reason", "refundReason: is required", set("refundAmount", "10")),
		tc("an override with an empty reason", "refundReason: is required", set("refundAmount", "10"), set("refundReason", "")),
		tc("a reason of 500 characters", "", set("refundAmount", "10"), set("refundReason", chars(500))),
		tc("a reason of 501 characters", "refundReason: must be at most 500 characters", set("refundAmount", "10"), set("refundReason", chars(501))),
		tc("a reason without an override", "refundReason: is sent only with refundAmount", set("refundReason", "x")),
		tc("a negative override", "refundAmount: must be between 0 and 2147483647", set("refundAmount", "-1"), set("refundReason", "x")),
		tc("an override that is not a number", "refundAmount: must be a number", set("refundAmount", "all"), set("refundReason", "x")),
	}
	check(t, `{"bookingId":"9"}`, rows, func(b []byte) error {
		_, err := request.DecodeCancel(b)
		return err
	})
	if c, err := request.DecodeCancel([]byte(`{"bookingId":"9"}`)); err != nil || c.BookingID != 9 || c.RefundAmount != nil {
		t.Fatalf("got %+v, %v", c, err)
	}
	if c, err := request.DecodeCancel([]byte(`{"bookingId":9,"refundAmount":"450.00","refundReason":"storm"}`)); err != nil ||
		c.RefundAmount == nil || c.RefundAmount.String() != "450" || c.RefundReason != "storm" {
		t.Fatalf("got %+v, %v", c, err)
	}
}

func TestDecodeRetryRefund(t *testing.T) {
	rows := []row{
		tc("valid", ""),
		tc("bookingId missing", "bookingId: is required", set("bookingId", del)),
		tc("bookingId 0", "bookingId: must be between 1 and 2147483647", set("bookingId", 0)),
	}
	check(t, `{"bookingId":9}`, rows, func(b []byte) error {
		_, err := request.DecodeRetryRefund(b)
		return err
	})
}

func TestDecodeList(t *testing.T) {
	rows := []row{
		tc("empty body", ""),
		tc("all filters", "", set("userId", 1), set("bookingId", 2), set("propertyId", 3), set("brandId", 4),
			set("page", 2), set("limit", 100), set("checkin", "2026-07-01"), set("checkout", "2026-07-31"), set("keyword", "smith")),
		tc("userId 0", "userId: must be between 1 and 2147483647", set("userId", 0)),
		tc("bookingId 0", "bookingId: must be between 1 and 2147483647", set("bookingId", 0)),
		tc("propertyId 0", "propertyId: must be between 1 and 2147483647", set("propertyId", 0)),
		tc("brandId 0", "brandId: must be between 1 and 2147483647", set("brandId", 0)),
		tc("page 0", "page: must be between 1 and 2147483647", set("page", 0)),
		tc("limit 0", "limit: must be between 1 and 100", set("limit", 0)),
		tc("limit 100", "", set("limit", "100")),
		tc("limit 101", "limit: must be between 1 and 100", set("limit", 101)),
		tc("checkin alone", "", set("checkin", "2026-07-01")),
		tc("checkout alone", "", set("checkout", "2026-07-01")),
		tc("checkout not after checkin", "checkout: must be after checkin", set("checkin", "2026-07-01"), set("checkout", "2026-07-01")),
		tc("checkin invalid", "checkin: must be a valid date (YYYY-MM-DD)", set("checkin", "07/01/2026")),
		tc("keyword 100 chars", "", set("keyword", chars(100))),
		tc("keyword 101 chars", "keyword: must be at most 100 characters", set("keyword", chars(101))),
	}
	check(t, `{}`, rows, func(b []byte) error {
		_, err := request.DecodeList(b)
		return err
	})
	l, err := request.DecodeList([]byte(`{"page":"","limit":null}`))
	if err != nil || l.Page != 1 || l.Limit != 10 || l.Offset() != 0 {
		t.Fatalf("defaults %+v, %v", l, err)
	}
	l, _ = request.DecodeList([]byte(`{"page":3,"limit":20}`))
	if l.Offset() != 40 {
		t.Fatalf("offset %d", l.Offset())
	}
}

func TestListOverlaps(t *testing.T) {
	l := request.List{Checkin: day("2026-07-10"), Checkout: day("2026-07-20")}
	for _, c := range []struct {
		in, out string
		want    bool
	}{
		{"2026-07-01", "2026-07-10", false}, // checks out on the first day
		{"2026-07-01", "2026-07-11", true},
		{"2026-07-12", "2026-07-15", true}, // inside
		{"2026-07-01", "2026-07-31", true}, // around
		{"2026-07-19", "2026-07-25", true},
		{"2026-07-20", "2026-07-25", false}, // checks in on the end day
	} {
		if got := l.Overlaps(day(c.in), day(c.out)); got != c.want {
			t.Errorf("stay %s–%s: %v, want %v", c.in, c.out, got, c.want)
		}
	}
	open := request.List{Checkin: day("2026-07-10")}
	if !open.Overlaps(day("2030-01-01"), day("2030-01-05")) || open.Overlaps(day("2026-07-01"), day("2026-07-10")) {
		t.Error("open end")
	}
	if !(request.List{}).Overlaps(day("2000-01-01"), day("2000-01-02")) {
		t.Error("no filter")
	}
}

func decodePayment(action request.PaymentAction) func([]byte) error {
	return func(b []byte) error {
		_, err := request.DecodePayment(b, action, now)
		return err
	}
}

func TestDecodeAddPayment(t *testing.T) {
	base := `{"action":"addbookingpayment","bookingId":9,"amount":"150.25","description":"deposit","time":"2026-06-15 10:00:00","currency":"eur"}`
	const future = "time: must not be more than 1 day in the future"
	const format = "time: must be a Unix timestamp in seconds, YYYY-MM-DD HH:MM:SS or YYYY-MM-DD (UTC)"
	rows := []row{
		tc("valid example", ""),
		tc("only required", "", set("description", del), set("time", del), set("currency", del)),
		tc("bookingId missing", "bookingId: is required", set("bookingId", del)),
		tc("paymentId not needed", "", set("paymentId", "x y")),

		tc("amount missing", "amount: is required", set("amount", del)),
		tc("amount as number", "", set("amount", 150.25)),
		tc("amount 0", "amount: must be greater than 0", set("amount", "0")),
		tc("amount negative (no refunds)", "amount: must be greater than 0", set("amount", "-20")),
		tc("amount 0.01", "", set("amount", "0.01")),
		tc("amount 2147483647", "", set("amount", "2147483647")),
		tc("amount 2147483647.01", "amount: must be at most 2147483647", set("amount", "2147483647.01")),
		tc("amount 3 decimals", "amount: must have at most 2 decimal places", set("amount", "10.001")),
		tc("amount trailing zeros", "", set("amount", "10.500")),
		tc("amount with comma", "amount: must be a number", set("amount", "10,50")),
		tc("amount with currency", "amount: must be a number", set("amount", "€10")),

		tc("description 1000 chars", "", set("description", chars(1000))),
		tc("description 1001 chars", "description: must be at most 1000 characters", set("description", chars(1001))),

		tc("time unix seconds", "", set("time", 1781517600)),
		tc("time unix seconds as string", "", set("time", "1781517600")),
		tc("time date only", "", set("time", "2026-06-16")),
		tc("time RFC 3339", "", set("time", "2026-06-15T12:00:00+02:00")),
		tc("time blank is now", "", set("time", "")),
		tc("time 24h ahead", "", set("time", "2026-06-16 12:00:00")),
		tc("time 24h and 1s ahead", future, set("time", "2026-06-16 12:00:01")),
		tc("time next year", future, set("time", "2027-01-01")),
		tc("time unix in milliseconds", format, set("time", 1781517600000)),
		tc("time unix fraction", format, set("time", 1781517600.5)),
		tc("time negative", format, set("time", -1)),
		tc("time impossible date", format, set("time", "2026-02-30 10:00:00")),
		tc("time without seconds", format, set("time", "2026-06-15 10:00")),
		tc("time European", format, set("time", "15/06/2026")),
		tc("time boolean", "time: must be a string", set("time", true)),

		tc("currency invalid", "currency: must be an ISO 4217 currency code", set("currency", "eu")),
	}
	check(t, base, rows, decodePayment(request.AddPayment))

	p, err := request.DecodePayment([]byte(base), request.AddPayment, now)
	if err != nil {
		t.Fatal(err)
	}
	if p.Action != request.AddPayment || p.BookingID != 9 || !p.Amount.Equal(dec("150.25")) || *p.Description != "deposit" ||
		!p.Time.Equal(time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)) || *p.Currency != "EUR" {
		t.Fatalf("got %+v", p)
	}
	for in, want := range map[any]time.Time{
		1781517600:                  time.Unix(1781517600, 0).UTC(),
		"2026-06-16":                time.Date(2026, 6, 16, 0, 0, 0, 0, time.UTC),
		"2026-06-15T12:00:00+02:00": time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC),
	} {
		p, err := request.DecodePayment(apply(t, base, set("time", in)), request.AddPayment, now)
		if err != nil || !p.Time.Equal(want) || p.Time.Location() != time.UTC {
			t.Errorf("time %v: %v, %v; want %v", in, p.Time, err, want)
		}
	}
	p, err = request.DecodePayment([]byte(`{"bookingId":9,"amount":"5"}`), request.AddPayment, now)
	if err != nil || p.Time != nil || p.Description != nil || p.Currency != nil {
		t.Fatalf("absent optional fields must be nil: %+v, %v", p, err)
	}
}

func TestDecodeUpdatePayment(t *testing.T) {
	base := `{"action":"updatebookingpayment","paymentId":"1234","amount":"99"}`
	rows := []row{
		tc("valid example", ""),
		tc("paymentId missing", "paymentId: is required", set("paymentId", del)),
		tc("paymentId as number", "", set("paymentId", 1234)),
		tc("paymentId fraction", "paymentId: must be a whole number or a payment id string", set("paymentId", 12.5)),
		tc("paymentId hex string", "", set("paymentId", "665f1c2ab3e4d5f6a7b8c9d0")),
		tc("paymentId with slash", "paymentId: must contain only letters, digits, - and _", set("paymentId", "../1")),
		tc("paymentId 64 chars", "", set("paymentId", chars(64))),
		tc("paymentId 65 chars", "paymentId: must be at most 64 characters", set("paymentId", chars(65))),
		tc("bookingId not needed", "", set("bookingId", "x")),
		tc("amount missing", "amount: is required", set("amount", del)),
		tc("amount 0", "amount: must be greater than 0", set("amount", 0)),
		tc("description cleared", "", set("description", "")),
		tc("time future", "time: must not be more than 1 day in the future", set("time", "2030-01-01")),
	}
	check(t, base, rows, decodePayment(request.UpdatePayment))
	p, err := request.DecodePayment(apply(t, base, set("paymentId", 1234), set("description", "")), request.UpdatePayment, now)
	if err != nil || p.PaymentID != "1234" || p.Description == nil || *p.Description != "" || p.Time != nil {
		t.Fatalf("got %+v, %v", p, err)
	}
}

func TestDecodeRemovePayment(t *testing.T) {
	rows := []row{
		tc("valid", ""),
		tc("paymentId missing", "paymentId: is required", set("paymentId", del)),
		tc("amount not read", "", set("amount", "-5")),
	}
	check(t, `{"paymentId":"77"}`, rows, decodePayment(request.RemovePayment))
	if got := violations(t, decodePayment("refundpayment")([]byte(`{}`))); len(got) != 1 ||
		got[0] != "action: must be one of addbookingpayment, updatebookingpayment, removebookingpayment" {
		t.Fatalf("unknown action: %q", got)
	}
}

func TestDecodeArrival(t *testing.T) {
	base := `{"action":"updatearrivalform","bookingId":9,"arriveBy":"car","detailInformation":[{"name":"Ann","dateOfBirth":"1990-01-01"},{"name":"Bob"},{"name":"Cy"}]}`
	rows := []row{
		tc("valid example", ""),
		tc("bookingId missing", "bookingId: is required", set("bookingId", del)),
		tc("arriveBy unknown", "arriveBy: must be one of car, plane, bus, ferry, train, coach, other", set("arriveBy", "walk")),
		tc("guest date of birth in the future", "detailInformation[2].dateOfBirth: must not be in the future",
			set("detailInformation[2].dateOfBirth", "2026-06-16")),
	}
	check(t, base, rows, func(b []byte) error {
		_, err := request.DecodeArrival(b, now)
		return err
	})
	a, err := request.DecodeArrival([]byte(base), now)
	if err != nil || a.BookingID != 9 || *a.Form.ArriveBy != "car" || len(*a.Form.DetailInformation) != 3 || a.Form.URL != nil {
		t.Fatalf("got %+v, %v", a, err)
	}
}

func TestDecodeUsers(t *testing.T) {
	check(t, `{"email":"a@example.com","password":"secret1","name":"Ann"}`, []row{
		tc("adduser valid", ""),
		tc("adduser password short", "password: must be at least 6 characters", set("password", "12345")),
		tc("adduser country invalid", "country: must be an ISO 3166-1 alpha-2 country code", set("country", "USA")),
	}, func(b []byte) error {
		_, err := request.DecodeAddUser(b)
		return err
	})
	check(t, `{"userId":5}`, []row{
		tc("updateuser valid", ""),
		tc("updateuser userId missing", "userId: is required", set("userId", del)),
	}, func(b []byte) error {
		_, err := request.DecodeUpdateUser(b)
		return err
	})
	check(t, `{"email":"a@example.com","password":"x"}`, []row{
		tc("login valid", ""),
		tc("login password missing", "password: is required", set("password", del)),
	}, func(b []byte) error {
		_, err := request.DecodeLogin(b)
		return err
	})
	check(t, `{"email":"a@example.com","name":"Ann","locale":"fr"}`, []row{
		tc("usesocialuser valid", ""),
		tc("usesocialuser locale missing", "locale: is required", set("locale", del)),
	}, func(b []byte) error {
		_, err := request.DecodeSocialUser(b)
		return err
	})
	n, err := request.DecodeAddUser([]byte(`{"email":"a@example.com","password":"secret1","name":"Ann"}`))
	if err != nil || n.Country != "US" {
		t.Fatalf("adduser default country: %+v, %v", n, err)
	}
	s, err := request.DecodeSocialUser([]byte(`{"email":"a@example.com","name":"Ann","locale":"fr"}`))
	if err != nil || s.Country != "FR" {
		t.Fatalf("social: %+v, %v", s, err)
	}
}
