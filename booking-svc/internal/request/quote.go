package request

import (
	"slices"
	"strings"
	"time"

	"github.com/vros/vros/libs/fields"
)

// Quote is a decoded getinfo body: a temporary quote.
type Quote struct {
	PropertyID int
	Adults     int
	Children   int // 0 when not sent
	Checkin    time.Time
	Checkout   time.Time

	// Services nil: not sent, the property's default services apply.
	// Non-nil and empty: no services.
	Services []Service
	Currency string // "" means the main currency
	// PromotionCode is the promotion asked for, "" none.
	PromotionCode string
	// Include are the optional answer fields asked for (include[]), each once, in the
	// order first sent.
	Include []string

	DamageProtection bool
	TravelInsurance  bool

	// RatePlanID is the plan quoted (0: the standard plan); Channel the channel it is quoted
	// for ("": none); BrandID the brand whose website asks (0: none). With neither a brand
	// nor a channel the quote is direct (docs/rate-plans.md).
	RatePlanID int
	Channel    string
	BrandID    int
}

// DecodeQuote reads a getinfo body.
func DecodeQuote(body []byte) (Quote, error) {
	return decode(body, func(o *fields.Object, v *fields.Violations) Quote {
		var q Quote
		q.PropertyID, _ = o.Int(FieldPropertyID, idRule(true))
		q.Adults, _ = o.Int(FieldAdults, fields.Int{Required: true, Min: 1, Max: MaxGuests})
		q.Children, _ = o.Int(FieldChildren, fields.Int{Max: MaxGuests})
		q.Checkin, _ = readStayDate(o, FieldCheckin, true)
		q.Checkout, _ = readStayDate(o, FieldCheckout, true)
		q.Services, _ = readServices(o, FieldService, false)
		q.Currency, _ = readCurrency(o, FieldCurrency)
		q.PromotionCode, _ = o.String(FieldPromotionCode, fields.Str{Max: MaxPromotion})
		q.Include = readInclude(o)
		q.DamageProtection, _ = readFlag(o, FieldDamageProtection)
		q.TravelInsurance, _ = readFlag(o, FieldTravelInsurance)
		q.RatePlanID, _ = readRatePlan(o)
		q.Channel, _ = readChannel(o)
		q.BrandID, _ = o.Int(FieldBrandID, idRule(false))
		if !violated(*v, FieldCheckin) && !violated(*v, FieldCheckout) {
			checkStay(v, q.Checkin, q.Checkout)
		}
		return q
	})
}

// Optional fields of the getinfo answer (include[]).
const (
	IncludeDiscountTexts        = "discounttexts"
	IncludeGrandTotalBeforeDisc = "grandTotalBeforeDiscounted"
	FieldInclude                = "include"
	maxInclude                  = 10
)

// readInclude reads include[]: a list (or a single string) of the optional fields, named as
// the original names them (any case). PHP forms send `include[]=…`, which edge turns into
// "include"; a JSON client may send the key "include[]" itself, read alike.
func readInclude(o *fields.Object) []string {
	name := FieldInclude
	if !o.Has(name) && o.Has(name+"[]") {
		name += "[]"
	}
	if o.Kind(name) == fields.KindString {
		s, _ := o.String(name, fields.Str{})
		if s == "" {
			return nil
		}
		return includeNames(o, name, []string{s}, false)
	}
	if o.Has(name) && o.Empty(name) {
		return nil
	}
	list, ok := o.Strings(name, fields.List{Max: maxInclude}, fields.Str{Max: 100})
	if !ok {
		return nil
	}
	return includeNames(o, name, list, true)
}

func includeNames(o *fields.Object, name string, list []string, indexed bool) []string {
	var out []string
	for i, s := range list {
		field := name
		if indexed {
			field = fields.Index(name, i)
		}
		var known string
		for _, k := range []string{IncludeDiscountTexts, IncludeGrandTotalBeforeDisc} {
			if strings.EqualFold(strings.TrimSpace(s), k) {
				known = k
			}
		}
		if known == "" {
			o.Add(field, "must be one of "+IncludeDiscountTexts+", "+IncludeGrandTotalBeforeDisc)
			continue
		}
		if !slices.Contains(out, known) {
			out = append(out, known)
		}
	}
	return out
}
