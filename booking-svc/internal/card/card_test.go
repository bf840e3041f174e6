package card_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/libs/fields"
)

// now is the clock of every test: 15 June 2026, 12:00 UTC.
var now = time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)

// decode reads the creditCard member of body as create and update do.
func decode(body []byte) (card.Card, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	c := card.Read(o.Object("creditCard", true), now)
	return c, v.Err()
}

const withCard = `{"creditCard": {
	"CCNumber": "4242 4242 4242 4242",
	"NameOnCard": "ANN SMITH",
	"Expiration": "12/2030",
	"CVC": "123",
	"FirstName": "Ann",
	"LastName": "Smith",
	"Phone": "+1 555 0100",
	"Address": "1 Main St",
	"City": "Springfield",
	"State": "IL",
	"PostCode": "62701",
	"Country": "us"
}}`

func TestRead(t *testing.T) {
	const p = "creditCard."
	rows := []row{
		tc("valid example", ""),
		tc("creditCard not an object", "creditCard: must be an object", set("creditCard", "4242")),

		tc("CCNumber missing", p+"CCNumber: is required", set("creditCard.CCNumber", del)),
		tc("CCNumber blank", p+"CCNumber: is required", set("creditCard.CCNumber", "  ")),
		tc("CCNumber with dashes", "", set("creditCard.CCNumber", "4242-4242-4242-4242")),
		tc("CCNumber as JSON number", "", set("creditCard.CCNumber", json.Number("4242424242424242"))),
		tc("CCNumber letters", p+"CCNumber: must contain digits only", set("creditCard.CCNumber", "4242 4242 4242 424x")),
		tc("CCNumber dots", p+"CCNumber: must contain digits only", set("creditCard.CCNumber", "4242.4242.4242.4242")),
		tc("CCNumber 11 digits", p+"CCNumber: must have 12 to 19 digits", set("creditCard.CCNumber", "42424242424")),
		tc("CCNumber 12 digits Luhn-valid", "", set("creditCard.CCNumber", "123456789015"), set("creditCard.CVC", "1234")),
		tc("CCNumber 19 digits Luhn-valid", "", set("creditCard.CCNumber", "4242424242424242428")),
		tc("CCNumber 20 digits", p+"CCNumber: must have 12 to 19 digits", set("creditCard.CCNumber", "42424242424242424242")),
		tc("CCNumber fails Luhn", p+"CCNumber: is not a valid card number", set("creditCard.CCNumber", "4242424242424241")),
		tc("CCNumber 39 chars", p+"CCNumber: must be at most 38 characters", set("creditCard.CCNumber", strings.Repeat("4 ", 19)+"4")),

		tc("NameOnCard missing", p+"NameOnCard: is required", set("creditCard.NameOnCard", del)),
		tc("NameOnCard 100 chars", "", set("creditCard.NameOnCard", chars(100))),
		tc("NameOnCard 101 chars", p+"NameOnCard: must be at most 100 characters", set("creditCard.NameOnCard", chars(101))),

		tc("Expiration missing", p+"Expiration: is required", set("creditCard.Expiration", del)),
		tc("Expiration MM/YY", "", set("creditCard.Expiration", "12/30")),
		tc("Expiration M/YYYY", "", set("creditCard.Expiration", "7/2027")),
		tc("Expiration month 13", p+"Expiration: must be MM/YYYY", set("creditCard.Expiration", "13/2030")),
		tc("Expiration month 00", p+"Expiration: must be MM/YYYY", set("creditCard.Expiration", "00/2030")),
		tc("Expiration dash", p+"Expiration: must be MM/YYYY", set("creditCard.Expiration", "12-2030")),
		tc("Expiration three-digit year", p+"Expiration: must be MM/YYYY", set("creditCard.Expiration", "12/203")),
		tc("Expiration ISO", p+"Expiration: must be MM/YYYY", set("creditCard.Expiration", "2030-12")),
		tc("Expiration current month is valid", "", set("creditCard.Expiration", "06/2026")),
		tc("Expiration last month expired", p+"Expiration: has expired", set("creditCard.Expiration", "05/2026")),
		tc("Expiration last year expired", p+"Expiration: has expired", set("creditCard.Expiration", "12/25")),
		tc("Expiration 20 years ahead", "", set("creditCard.Expiration", "12/2046")),
		tc("Expiration 21 years ahead", p+"Expiration: must be at most 20 years ahead", set("creditCard.Expiration", "01/2047")),

		tc("CVC missing", p+"CVC: is required", set("creditCard.CVC", del)),
		tc("CVC as number", "", set("creditCard.CVC", 123)),
		tc("CVC leading zero", "", set("creditCard.CVC", "012")),
		tc("CVC 2 digits", p+"CVC: must be 3 or 4 digits", set("creditCard.CVC", "12")),
		tc("CVC 5 digits", p+"CVC: must be 3 or 4 digits", set("creditCard.CVC", "12345")),
		tc("CVC letters", p+"CVC: must be 3 or 4 digits", set("creditCard.CVC", "12a")),
		tc("CVC 4 digits on visa", p+"CVC: must be 3 digits", set("creditCard.CVC", "1234")),
		tc("CVC 4 digits on amex", "", set("creditCard.CCNumber", "378282246310005"), set("creditCard.CVC", "1234")),
		tc("CVC 3 digits on amex", p+"CVC: must be 4 digits for American Express cards",
			set("creditCard.CCNumber", "378282246310005"), set("creditCard.CVC", "123")),

		tc("optional fields absent", "",
			set("creditCard.FirstName", del), set("creditCard.LastName", del), set("creditCard.Phone", del),
			set("creditCard.Address", del), set("creditCard.City", del), set("creditCard.State", del),
			set("creditCard.PostCode", del), set("creditCard.Country", del)),
		tc("FirstName 101 chars", p+"FirstName: must be at most 100 characters", set("creditCard.FirstName", chars(101))),
		tc("LastName 101 chars", p+"LastName: must be at most 100 characters", set("creditCard.LastName", chars(101))),
		tc("Phone 31 chars", p+"Phone: must be at most 30 characters", set("creditCard.Phone", chars(31))),
		tc("Address 501 chars", p+"Address: must be at most 500 characters", set("creditCard.Address", chars(501))),
		tc("City 201 chars", p+"City: must be at most 200 characters", set("creditCard.City", chars(201))),
		tc("State 201 chars", p+"State: must be at most 200 characters", set("creditCard.State", chars(201))),
		tc("PostCode 20 chars", "", set("creditCard.PostCode", chars(20))),
		tc("PostCode 21 chars", p+"PostCode: must be at most 20 characters", set("creditCard.PostCode", chars(21))),
		tc("Country invalid", p+"Country: must be an ISO 3166-1 alpha-2 country code", set("creditCard.Country", "USA")),

		tc("every violation listed",
			p+"CCNumber: is not a valid card number\n"+p+"Expiration: has expired\n"+p+"CVC: must be 3 or 4 digits",
			set("creditCard.CCNumber", "4242424242424241"), set("creditCard.Expiration", "01/2020"), set("creditCard.CVC", "1")),
	}
	check(t, withCard, rows, func(b []byte) error {
		_, err := decode(b)
		return err
	})
}

func TestReadValues(t *testing.T) {
	c, err := decode([]byte(withCard))
	if err != nil {
		t.Fatal(err)
	}
	want := card.Card{Number: "4242424242424242", NameOnCard: "ANN SMITH", ExpMonth: 12, ExpYear: 2030, CVC: "123",
		FirstName: "Ann", LastName: "Smith", Phone: "+1 555 0100", Address: "1 Main St", City: "Springfield",
		State: "IL", PostCode: "62701", Country: "US"}
	if c != want {
		t.Fatalf("got  %#v\nwant %#v", c.Storable(), want.Storable())
	}
	c, err = decode(apply(t, withCard, set("creditCard.Expiration", "3/31")))
	if err != nil || c.ExpMonth != 3 || c.ExpYear != 2031 || c.Expiry() != "03/2031" {
		t.Fatalf("MM/YY: %d/%d %v", c.ExpMonth, c.ExpYear, err)
	}
}

func TestExpired(t *testing.T) {
	c := card.Card{ExpMonth: 6, ExpYear: 2026}
	if c.Expired(time.Date(2026, 6, 30, 23, 59, 59, 0, time.UTC)) {
		t.Fatal("expired on the last second of its month")
	}
	if !c.Expired(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatal("valid on the first day after its month")
	}
	// Times in other zones are compared in UTC.
	rome := time.FixedZone("CEST", 2*3600)
	if c.Expired(time.Date(2026, 7, 1, 1, 0, 0, 0, rome)) {
		t.Fatal("01:00 CEST on 1 July is still June in UTC")
	}
}

func TestBrandMaskLuhn(t *testing.T) {
	for _, c := range []struct{ number, brand, mask string }{
		{"4242424242424242", card.Visa, "•••• 4242"},
		{"4000 0566 5566 5556", card.Visa, "•••• 5556"},
		{"5555555555554444", card.Mastercard, "•••• 4444"},
		{"2223003122003222", card.Mastercard, "•••• 3222"},
		{"2720990000000000", card.Mastercard, "•••• 0000"},
		{"2721000000000000", card.Other, "•••• 0000"},
		{"378282246310005", card.Amex, "•••• 0005"},
		{"371449635398431", card.Amex, "•••• 8431"},
		{"6011111111111117", card.Discover, "•••• 1117"},
		{"6500000000000002", card.Discover, "•••• 0002"},
		{"6445644564456445", card.Discover, "•••• 6445"},
		{"6221260000000000", card.Discover, "•••• 0000"},
		{"3566002020360505", card.Other, "•••• 0505"}, // JCB
		{"", card.Other, "••••"},
		{"4242", card.Visa, "••••"},
	} {
		if got := card.Brand(c.number); got != c.brand {
			t.Errorf("Brand(%q) = %q, want %q", c.number, got, c.brand)
		}
		if got := card.Mask(c.number); got != c.mask {
			t.Errorf("Mask(%q) = %q, want %q", c.number, got, c.mask)
		}
	}
	for n, want := range map[string]bool{
		"4242424242424242": true, "4242424242424241": false, "79927398713": true, "79927398710": false,
		"0": true, "": false, "4242 4242 4242 4242": false,
	} {
		if got := card.Luhn(n); got != want {
			t.Errorf("Luhn(%q) = %v, want %v", n, got, want)
		}
	}
}

var secret = card.Card{Number: "4242424242424242", NameOnCard: "ANN SMITH", ExpMonth: 12, ExpYear: 2030, CVC: "987"}

// leaks reports whether out shows the full number or the CVC.
func leaks(out string) bool {
	return strings.Contains(out, "4242424242424242") || strings.Contains(out, "987") || strings.Contains(out, "42424242")
}

func TestCardNeverPrintsSecrets(t *testing.T) {
	type wrapper struct {
		Card  card.Card
		Ptr   *card.Card
		Saved card.Stored
	}
	stored := secret.Storable()
	w := wrapper{Card: secret, Ptr: &secret, Saved: stored}
	outs := map[string]string{}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		outs["card "+verb] = fmt.Sprintf(verb, secret)
		outs["pointer "+verb] = fmt.Sprintf(verb, &secret)
		outs["stored "+verb] = fmt.Sprintf(verb, stored)
		outs["wrapper "+verb] = fmt.Sprintf(verb, w)
	}
	outs["String"] = secret.String()
	var buf bytes.Buffer
	// Without the time: a timestamp such as 00:37:03.081059873 contains "987", the CVC.
	noTime := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	log := slog.New(slog.NewJSONHandler(&buf, noTime))
	// A Stored inside a struct is written whole by encoding/json, number
	// included (that is its purpose); on its own it logs redacted.
	log.Info("charge", "card", secret, "stored", stored, "wrapper", wrapper{Card: secret, Ptr: &secret})
	outs["slog json"] = buf.String()
	buf.Reset()
	slog.New(slog.NewTextHandler(&buf, noTime)).Info("charge", "card", secret, "stored", stored, "ptr", &secret)
	outs["slog text"] = buf.String()
	js, err := json.Marshal(secret)
	if err != nil {
		t.Fatal(err)
	}
	outs["json card"] = string(js)
	for name, out := range outs {
		if leaks(out) {
			t.Errorf("%s leaks: %s", name, out)
		}
		if !strings.Contains(out, "4242") {
			t.Errorf("%s does not show the last 4 digits: %s", name, out)
		}
	}
	if got := secret.String(); got != "visa •••• 4242 exp 12/2030" {
		t.Errorf("String() = %q", got)
	}
	if got := fmt.Sprintf("%q", secret); got != `"visa •••• 4242 exp 12/2030"` {
		t.Errorf("%%q = %s", got)
	}
	if string(js) != `{"brand":"visa","number":"•••• 4242","expiry":"12/2030"}` {
		t.Errorf("json = %s", js)
	}
}

func TestStorable(t *testing.T) {
	c := secret
	c.FirstName, c.Country = "Ann", "US"
	s := c.Storable()
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"number":"4242424242424242","masked":"•••• 4242","last4":"4242","brand":"visa","expMonth":12,"expYear":2030,"nameOnCard":"ANN SMITH","firstName":"Ann","country":"US"}`
	if string(js) != want {
		t.Fatalf("stored json\n got %s\nwant %s", js, want)
	}
	if strings.Contains(string(js), "987") || strings.Contains(strings.ToLower(string(js)), "cvc") {
		t.Fatal("stored card keeps the CVC")
	}
	var back card.Stored
	if err := json.Unmarshal(js, &back); err != nil || back != s {
		t.Fatalf("round trip %v: %v", err, back == s)
	}
	again := back.Card()
	if again.CVC != "" || again.Number != c.Number || again.ExpYear != 2030 || again.FirstName != "Ann" {
		t.Fatalf("Stored.Card() = %+v", again.Storable())
	}
}
