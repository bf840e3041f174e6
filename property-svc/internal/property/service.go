package property

import (
	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/fields"
)

// ServiceType says how a default service's amount is read
// (extension /api/property-service). Note the order differs from TaxType's.
type ServiceType int

// Service types.
const (
	ServiceFixed   ServiceType = 1 // fixed amount of money
	ServicePercent ServiceType = 2 // percent of the total rent
)

// Applicable says what a service's amount is multiplied by.
type Applicable int

// Applicable values.
const (
	ServicePerStay             Applicable = 1
	ServicePerNight            Applicable = 2
	ServicePerOccupant         Applicable = 3
	ServicePerOccupantPerNight Applicable = 4
)

// ServiceTax is a tax charged on a service, as a percentage of its price.
type ServiceTax struct {
	Name    string
	Percent decimal.Decimal
}

// Service is a default service offered with the property's bookings.
type Service struct {
	Name       string
	Amount     decimal.Decimal // money or percent, per Type
	Type       ServiceType
	Applicable Applicable // ServicePerStay when not given
	Unit       int        // quantity; 1 when not given
	Default    bool       // added by default to bookings and quotes
	Taxes      []ServiceTax
}

// Services is a decoded /api/property-service body; it replaces the
// property's list of default services.
type Services struct {
	InternalCode string
	Services     []Service
}

const (
	maxServices     = 50
	maxServiceTaxes = 10
)

// DecodeServices reads an /api/property-service body.
func DecodeServices(body []byte) (Services, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	var s Services
	s.InternalCode, _ = o.String("internal_code", internalCodeRule)
	items, _ := o.Array("services", fields.List{Required: true, Max: maxServices})
	s.Services = make([]Service, 0, len(items))
	for _, it := range items {
		var x Service
		x.Name, _ = it.String("name", fields.Str{Required: true, Min: 1, Max: 100})
		typ, typOK := it.Int("type", fields.Int{Required: true, OneOf: []int64{int64(ServiceFixed), int64(ServicePercent)}})
		x.Type = ServiceType(typ)
		x.Amount, _ = it.Decimal("amount", amountRule(typOK && x.Type == ServicePercent, typOK && x.Type == ServiceFixed))
		x.Applicable = ServicePerStay
		if a, ok := it.Int("applicable", fields.Int{OneOf: []int64{1, 2, 3, 4}}); ok {
			x.Applicable = Applicable(a)
		}
		x.Unit = 1
		if u, ok := it.Int("unit", fields.Int{Min: 1}); ok {
			x.Unit = u
		}
		x.Default, _ = it.Bool("def", false)
		taxes, _ := it.Array("taxes", fields.List{Max: maxServiceTaxes})
		for _, tx := range taxes {
			var t ServiceTax
			t.Name, _ = tx.String("name", fields.Str{Required: true, Min: 1, Max: 100})
			t.Percent, _ = tx.Decimal("perc", percent)
			x.Taxes = append(x.Taxes, t)
		}
		s.Services = append(s.Services, x)
	}
	if err := v.Err(); err != nil {
		return Services{}, err
	}
	return s, nil
}
