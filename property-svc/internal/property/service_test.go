package property_test

import (
	"testing"

	"github.com/vros/vros/property-svc/internal/property"
)

const servicesExample = `{
	"internal_code": "VR-001",
	"services": [
		{"name": "Final cleaning", "amount": 60, "type": 1, "def": 1, "taxes": [{"name": "VAT", "perc": "22"}]},
		{"name": "Service fee", "amount": "5", "type": 2, "applicable": 1},
		{"name": "Breakfast", "amount": 12.5, "type": 1, "applicable": 4, "unit": 1}
	]
}`

func decodeServices(body []byte) error {
	_, err := property.DecodeServices(body)
	return err
}

func TestDecodeServices(t *testing.T) {
	rows := []row{
		tc("valid example", ""),
		tc("internal_code missing", "internal_code: is required", set("internal_code", del)),
		tc("services missing", "services: is required", set("services", del)),
		tc("services 50 items", "", set("services", many(50, `{"name":"s","amount":1,"type":1}`))),
		tc("services 51 items", "services: must have at most 50 items", set("services", many(51, `{"name":"s","amount":1,"type":1}`))),
		tc("name missing", "services[0].name: is required", set("services[0].name", del)),
		tc("name 101 chars", "services[0].name: must be at most 100 characters", set("services[0].name", chars(101))),
		tc("type missing", "services[1].type: is required", set("services[1].type", del)),
		tc("type 0", "services[1].type: must be one of 1, 2", set("services[1].type", 0)),
		tc("amount missing", "services[0].amount: is required", set("services[0].amount", del)),
		tc("fixed amount negative", "services[0].amount: must be between 0 and 2147483647", set("services[0].amount", -1)),
		tc("fixed amount 3 decimals", "services[0].amount: must have at most 2 decimal places", set("services[0].amount", 60.001)),
		tc("percent amount 100", "", set("services[1].amount", 100)),
		tc("percent amount 101", "services[1].amount: must be between 0 and 100", set("services[1].amount", 101)),
		tc("applicable 5", "services[1].applicable: must be one of 1, 2, 3, 4", set("services[1].applicable", 5)),
		tc("unit 0", "services[2].unit: must be at least 1", set("services[2].unit", 0)),
		tc("unit fraction", "services[2].unit: must be a whole number", set("services[2].unit", 1.5)),
		tc("def not boolean", "services[0].def: must be a boolean", set("services[0].def", "yes")),
		tc("tax name missing", "services[0].taxes[0].name: is required", set("services[0].taxes[0].name", del)),
		tc("tax perc missing", "services[0].taxes[0].perc: is required", set("services[0].taxes[0].perc", del)),
		tc("tax perc 100", "", set("services[0].taxes[0].perc", 100)),
		tc("tax perc 100.01", "services[0].taxes[0].perc: must be between 0 and 100", set("services[0].taxes[0].perc", "100.01")),
		tc("tax perc negative", "services[0].taxes[0].perc: must be between 0 and 100", set("services[0].taxes[0].perc", -1)),
		tc("taxes 11 items", "services[0].taxes: must have at most 10 items", set("services[0].taxes", many(11, `{"name":"t","perc":1}`))),
	}
	check(t, servicesExample, rows, decodeServices)
}

func TestDecodeServicesValues(t *testing.T) {
	s, err := property.DecodeServices([]byte(servicesExample))
	if err != nil {
		t.Fatal(err)
	}
	clean, fee, breakfast := s.Services[0], s.Services[1], s.Services[2]
	if clean.Type != property.ServiceFixed || !clean.Amount.Equal(dec("60")) || clean.Applicable != property.ServicePerStay || clean.Unit != 1 || !clean.Default ||
		len(clean.Taxes) != 1 || clean.Taxes[0].Name != "VAT" || !clean.Taxes[0].Percent.Equal(dec("22")) {
		t.Errorf("cleaning: %+v", clean)
	}
	if fee.Type != property.ServicePercent || fee.Default || fee.Taxes != nil {
		t.Errorf("fee: %+v", fee)
	}
	if breakfast.Applicable != property.ServicePerOccupantPerNight || !breakfast.Amount.Equal(dec("12.5")) {
		t.Errorf("breakfast: %+v", breakfast)
	}
}
