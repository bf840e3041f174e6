package property

import (
	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/fields"
)

// TaxType says how a tax's amount is read (extension /api/property-tax).
type TaxType int

// Tax types. Note the order differs from ServiceType's.
const (
	TaxPercent TaxType = 1 // percent of the rent
	TaxFixed   TaxType = 2 // fixed amount of money
)

// TaxCalculation says what a fixed tax is multiplied by (calculationType).
// It has no effect on a percent tax.
type TaxCalculation int

// Tax calculations.
const (
	TaxPerStay          TaxCalculation = 1
	TaxPerNight         TaxCalculation = 2
	TaxPerGuestPerNight TaxCalculation = 3
)

// Tax is a tax the property charges on bookings.
type Tax struct {
	Name        string
	Amount      decimal.Decimal // percent or money, per Type
	Type        TaxType
	Calculation TaxCalculation // TaxPerStay when not given
	Default     bool           // applied to every booking
}

// Taxes is a decoded /api/property-tax body; it replaces the property's
// list of taxes.
type Taxes struct {
	InternalCode string
	Taxes        []Tax
}

const maxTaxes = 20

// DecodeTaxes reads an /api/property-tax body.
func DecodeTaxes(body []byte) (Taxes, error) {
	var v fields.Violations
	o := fields.Parse(body, "", &v)
	var t Taxes
	t.InternalCode, _ = o.String("internal_code", internalCodeRule)
	items, _ := o.Array("taxes", fields.List{Required: true, Max: maxTaxes})
	t.Taxes = make([]Tax, 0, len(items))
	for _, it := range items {
		var x Tax
		x.Name, _ = it.String("name", fields.Str{Required: true, Min: 1, Max: 100})
		typ, typOK := it.Int("type", fields.Int{Required: true, OneOf: []int64{int64(TaxPercent), int64(TaxFixed)}})
		x.Type = TaxType(typ)
		x.Amount, _ = it.Decimal("amount", amountRule(typOK && x.Type == TaxPercent, typOK && x.Type == TaxFixed))
		calc, ok := it.Int("calculationType", fields.Int{OneOf: []int64{int64(TaxPerStay), int64(TaxPerNight), int64(TaxPerGuestPerNight)}})
		x.Calculation = TaxPerStay
		if ok {
			x.Calculation = TaxCalculation(calc)
		}
		x.Default, _ = it.Bool("def", false)
		t.Taxes = append(t.Taxes, x)
	}
	if err := v.Err(); err != nil {
		return Taxes{}, err
	}
	return t, nil
}
