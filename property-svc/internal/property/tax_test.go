package property_test

import (
	"testing"

	"github.com/vros/vros/property-svc/internal/property"
)

const taxesExample = `{
	"internal_code": "VR-001",
	"taxes": [
		{"name": "VAT", "amount": 10, "type": 1, "def": 1},
		{"name": "City tax", "amount": "2.50", "type": 2, "calculationType": 3, "def": "0"}
	]
}`

func decodeTaxes(body []byte) error {
	_, err := property.DecodeTaxes(body)
	return err
}

func TestDecodeTaxes(t *testing.T) {
	rows := []row{
		tc("valid example", ""),
		tc("internal_code missing", "internal_code: is required", set("internal_code", del)),
		tc("taxes missing", "taxes: is required", set("taxes", del)),
		tc("taxes empty clears the list", "", set("taxes", []any{})),
		tc("taxes 20 items", "", set("taxes", many(20, `{"name":"t","amount":1,"type":1}`))),
		tc("taxes 21 items", "taxes: must have at most 20 items", set("taxes", many(21, `{"name":"t","amount":1,"type":1}`))),
		tc("name missing", "taxes[0].name: is required", set("taxes[0].name", del)),
		tc("name 100 chars", "", set("taxes[0].name", chars(100))),
		tc("name 101 chars", "taxes[0].name: must be at most 100 characters", set("taxes[0].name", chars(101))),
		tc("type missing", "taxes[0].type: is required", set("taxes[0].type", del)),
		tc("type 3", "taxes[0].type: must be one of 1, 2", set("taxes[0].type", 3)),
		tc("amount missing", "taxes[1].amount: is required", set("taxes[1].amount", del)),
		tc("amount negative", "taxes[1].amount: must be between 0 and 2147483647", set("taxes[1].amount", -1)),
		tc("percent amount 100", "", set("taxes[0].amount", 100)),
		tc("percent amount 100.5", "taxes[0].amount: must be between 0 and 100", set("taxes[0].amount", 100.5)),
		tc("percent amount 4 decimals", "", set("taxes[0].amount", 8.875)),
		tc("percent amount 5 decimals", "taxes[0].amount: must have at most 4 decimal places", set("taxes[0].amount", 8.87501)),
		tc("fixed amount 150", "", set("taxes[1].amount", 150)),
		tc("fixed amount 3 decimals", "taxes[1].amount: must have at most 2 decimal places", set("taxes[1].amount", 2.505)),
		tc("calculationType 4", "taxes[1].calculationType: must be one of 1, 2, 3", set("taxes[1].calculationType", 4)),
		tc("calculationType as string", "", set("taxes[1].calculationType", "2")),
		tc("def 2", "taxes[0].def: must be a boolean", set("taxes[0].def", 2)),
		tc("def true", "", set("taxes[0].def", true)),
		tc("item not an object", "taxes[1]: must be an object", set("taxes[1]", 5)),
	}
	check(t, taxesExample, rows, decodeTaxes)
}

func TestDecodeTaxesValues(t *testing.T) {
	x, err := property.DecodeTaxes([]byte(taxesExample))
	if err != nil {
		t.Fatal(err)
	}
	vat, city := x.Taxes[0], x.Taxes[1]
	if x.InternalCode != "VR-001" || vat.Name != "VAT" || vat.Type != property.TaxPercent || !vat.Amount.Equal(dec("10")) || vat.Calculation != property.TaxPerStay || !vat.Default {
		t.Errorf("vat: %+v", vat)
	}
	if city.Type != property.TaxFixed || !city.Amount.Equal(dec("2.5")) || city.Calculation != property.TaxPerGuestPerNight || city.Default {
		t.Errorf("city tax: %+v", city)
	}
}
