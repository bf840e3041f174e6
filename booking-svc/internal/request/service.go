package request

import (
	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/fields"
)

// ServiceType says how a service line's amount is read (B1 service type).
type ServiceType int

// Service types.
const (
	Fixed   ServiceType = 1 // amount of money, times unit
	Percent ServiceType = 2 // percent of the total rent
)

// Applicable says what a service line's amount is multiplied by.
type Applicable int

// Applicable values.
const (
	PerStay             Applicable = 1 // the default
	PerNight            Applicable = 2
	PerOccupant         Applicable = 3
	PerOccupantPerNight Applicable = 4
)

// Service is one line of B1's service array.
type Service struct {
	Name       string
	Applicable Applicable
	Amount     decimal.Decimal // money (Fixed) or a percent (Percent)
	Type       ServiceType
	Unit       int // quantity, 1 when not sent
	Taxes      []ServiceTax
}

// ServiceTax is a tax on a service line, a percent of its amount.
type ServiceTax struct {
	Name    string
	Percent decimal.Decimal
}

// Bounds of a service list.
const (
	MaxServices     = 50
	MaxServiceTaxes = 10
	MaxServiceName  = 100
)

var (
	hundred = decimal.NewFromInt(100)
	// money: 0 to 2147483647, cents.
	moneyRule = fields.Dec{Required: true, Max: maxAmount, MaxScale: 2}
	// percent: 0 to 100, room for rates such as 8.875 %.
	percentRule = fields.Dec{Required: true, Max: hundred, MaxScale: 4}
)

// InsertService is a decoded insertservice (addservice) body.
type InsertService struct {
	BookingID int
	Services  []Service // at least one line
}

// DecodeInsertService reads an insertservice body: bookingId and a
// non-empty service list, added to the booking's services.
func DecodeInsertService(body []byte) (InsertService, error) {
	return decode(body, func(o *fields.Object, v *fields.Violations) InsertService {
		var s InsertService
		s.BookingID, _ = o.Int(FieldBookingID, idRule(true))
		if o.Has(FieldService) && o.Empty(FieldService) {
			o.Add(FieldService, "must have at least 1 item")
			return s
		}
		s.Services, _ = readServices(o, FieldService, true)
		return s
	})
}

// readServices reads a service array. Absent (or null) gives nil and false.
// Sent with empty content ([], "", {}) gives an empty, non-nil slice: "no
// services" (B1).
func readServices(o *fields.Object, name string, required bool) ([]Service, bool) {
	if o.Has(name) && o.Empty(name) {
		return []Service{}, true
	}
	items, ok := o.Array(name, fields.List{Required: required, Min: boolInt(required), Max: MaxServices})
	if !ok {
		return nil, false
	}
	out := make([]Service, 0, len(items))
	for _, it := range items {
		out = append(out, readService(it))
	}
	return out, true
}

func readService(o *fields.Object) Service {
	var s Service
	s.Name, _ = o.String("name", fields.Str{Required: true, Min: 1, Max: MaxServiceName})
	typ, typOK := o.Int("type", fields.Int{Required: true, OneOf: []int64{int64(Fixed), int64(Percent)}})
	s.Type = ServiceType(typ)
	switch {
	case typOK && s.Type == Percent:
		s.Amount, _ = o.Decimal("amount", percentRule)
	case typOK:
		s.Amount, _ = o.Decimal("amount", moneyRule)
	default: // type unknown: only the outer bounds apply
		s.Amount, _ = o.Decimal("amount", fields.Dec{Required: true, Max: maxAmount, MaxScale: 4})
	}
	s.Applicable = PerStay
	if a, ok := o.Int("applicable", fields.Int{Min: 1, Max: 4}); ok {
		s.Applicable = Applicable(a)
	}
	s.Unit = 1
	if u, ok := o.Int("unit", fields.Int{Min: 1, Max: maxInt32}); ok {
		s.Unit = u
	}
	if o.Empty("taxes") {
		return s
	}
	taxes, _ := o.Array("taxes", fields.List{Max: MaxServiceTaxes})
	for _, tx := range taxes {
		var t ServiceTax
		t.Name, _ = tx.String("name", fields.Str{Required: true, Min: 1, Max: MaxServiceName})
		t.Percent, _ = tx.Decimal("perc", percentRule)
		s.Taxes = append(s.Taxes, t)
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
