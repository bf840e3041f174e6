package pricing

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Promotion is a promotion code as the engine applies it: Amount percent off the total rent
// (Percent), or Amount off it in the property's currency. Whether a code may be used for a
// stay (its date window, minimum nights, properties, uses left) is the caller's rule; the
// engine only prices it.
type Promotion struct {
	Code    string
	Name    string // the discount line's name; "" names it after the code
	Percent bool
	Amount  decimal.Decimal
}

// discount is the promotion's line for a rent of which already is discounted: a percent of
// the rent before discounts (as the length-of-stay discount is), or the flat amount, but never
// more than what is left of the rent, so that discounts never make the rent negative.
func (pr *Promotion) discount(rent, already decimal.Decimal, round func(decimal.Decimal) decimal.Decimal,
	percent func(base, pct decimal.Decimal) decimal.Decimal) Discount {
	d := Discount{Name: pr.Name, PromotionCode: pr.Code, Flat: !pr.Percent}
	if d.Name == "" {
		d.Name = "Promotion " + pr.Code
	}
	if pr.Percent {
		d.Percent = pr.Amount
		d.Amount = percent(rent, pr.Amount)
	} else {
		d.Amount = round(pr.Amount)
	}
	left := rent.Sub(already)
	if left.Sign() < 0 {
		left = decimal.Zero
	}
	if d.Amount.GreaterThan(left) {
		d.Amount = left
	}
	if d.Amount.Sign() < 0 {
		d.Amount = decimal.Zero
	}
	return d
}

// DiscountText is a discount line as a guest reads it (getinfo's discounttexts), in the
// currency of the result it belongs to:
//
//	"10% off stays of 7 nights or more"       a length-of-stay discount
//	"Promotion SPRING10: 10% off"             a percent promotion
//	"Promotion SPRING10: 25.00 EUR off"       a flat promotion (the amount taken off)
func DiscountText(d Discount, currency string, scale int32) string {
	pct := d.Percent.String() + "% off"
	switch {
	case d.PromotionCode != "" && d.Flat:
		return fmt.Sprintf("Promotion %s: %s %s off", d.PromotionCode, d.Amount.StringFixed(scale), currency)
	case d.PromotionCode != "":
		return fmt.Sprintf("Promotion %s: %s", d.PromotionCode, pct)
	case d.Nights > 0:
		return fmt.Sprintf("%s stays of %d %s or more", pct, d.Nights, plural(d.Nights, "night", "nights"))
	}
	return strings.TrimSpace(d.Name + ": " + pct)
}
