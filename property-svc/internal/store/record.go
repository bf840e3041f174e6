package store

import (
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/property-svc/internal/property"
)

// Record is one property as stored in vros_property.properties, and — field for field, less
// the sealed secrets and deleted_at (json:"-") — the `data` of the property's change events. One schema
// for both means what consumers receive is exactly what was stored; docs/events.md is its
// reference. Money is a decimal string ("120.50"), dates are YYYY-MM-DD.
type Record struct {
	ID           string    `bson:"_id" json:"-"` // "<accountId>:<propertyId>"
	AccountID    string    `bson:"account_id" json:"account_id"`
	PropertyID   int64     `bson:"property_id" json:"property_id"`
	InternalCode string    `bson:"internal_code" json:"internal_code"`
	Version      int64     `bson:"version" json:"version"`
	Deleted      bool      `bson:"deleted" json:"deleted"`
	LastChange   string    `bson:"last_change" json:"-"`
	CreatedAt    time.Time `bson:"created_at" json:"created_at"`
	UpdatedAt    time.Time `bson:"updated_at" json:"updated_at"`
	// DeletedAt is when the property was deleted (usage counts deletions by it); zero in
	// properties deleted before the field, whose updated_at tells, since a deleted property
	// takes no further write.
	DeletedAt time.Time `bson:"deleted_at,omitempty" json:"-"`

	Content   ContentRec          `bson:"content" json:"content"`
	Photos    map[string]PhotoRec `bson:"photos" json:"photos"` // by photo id
	Policy    *PolicyRec          `bson:"policy,omitempty" json:"policy"`
	Rates     *RatesRec           `bson:"rates,omitempty" json:"rates"`
	Methods   *MethodsRec         `bson:"methods,omitempty" json:"methods"`
	Taxes     []TaxRec            `bson:"taxes" json:"taxes"`
	Services  []ServiceRec        `bson:"services" json:"services"`
	Amenities *AmenitiesRec       `bson:"amenities,omitempty" json:"amenities"`
	Prices    map[string]DayRec   `bson:"prices,omitempty" json:"prices"`
	// ICal is the property's iCal export link (ical.go); nil until the first get. The token
	// is a credential: events carry its hash only, the account export leaves it out.
	ICal *ICalRec `bson:"ical,omitempty" json:"-"`
	// StandardPlan, RatePlans, Restrictions and ChannelMarkups are the revenue controls
	// (revenue.go); LastRatePlanID is the largest rate plan id given (not published).
	StandardPlan   *PlanTermsRec    `bson:"standard_plan,omitempty" json:"standard_plan,omitempty"`
	RatePlans      []RatePlanRec    `bson:"rate_plans,omitempty" json:"rate_plans,omitempty"`
	LastRatePlanID int64            `bson:"last_rate_plan_id,omitempty" json:"-"`
	Restrictions   []RestrictionRec `bson:"restrictions,omitempty" json:"restrictions,omitempty"`
	ChannelMarkups []MarkupRec      `bson:"channel_markups,omitempty" json:"channel_markups,omitempty"`
}

// ContentRec is A1.
type ContentRec struct {
	Name          string `bson:"name" json:"name"`
	Type          string `bson:"type" json:"type"`
	Brief         string `bson:"brief,omitempty" json:"brief"`
	MaxGuest      int    `bson:"maxguest" json:"maxguest"`
	Bedrooms      int    `bson:"bedrooms" json:"bedrooms"`
	Bathrooms     int    `bson:"bathrooms" json:"bathrooms"`
	Kitchens      int    `bson:"kitchens" json:"kitchens"`
	Floor         string `bson:"floor" json:"floor"`
	SpaceValue    string `bson:"space_value" json:"space_value"`
	SpaceUnit     string `bson:"space_unit" json:"space_unit"`
	Phone         string `bson:"phone,omitempty" json:"phone"`
	Address       string `bson:"address" json:"address"`
	City          string `bson:"city" json:"city"`
	State         string `bson:"state,omitempty" json:"state"`
	Postcode      string `bson:"postcode" json:"postcode"`
	Country       string `bson:"country" json:"country"`
	Latitude      string `bson:"latitude" json:"latitude"`
	Longitude     string `bson:"longitude" json:"longitude"`
	AllowChildren *bool  `bson:"allowchildren,omitempty" json:"allowchildren"`
	AllowPet      *bool  `bson:"allowpet,omitempty" json:"allowpet"`
	AllowSmoking  *bool  `bson:"allowsmoking,omitempty" json:"allowsmoking"`
	Timezone      string `bson:"timezone,omitempty" json:"timezone"`
	IsFeatured    bool   `bson:"isfeatured,omitempty" json:"isfeatured"`
}

// PhotoRec is one photo; its renditions are served at /media/<key>/<rendition>.jpg. Photos
// are shown in the order of contract.ComparePhotos (by position); the first is the main
// photo.
type PhotoRec struct {
	PhotoID   int64     `bson:"photo_id" json:"photo_id"`
	Key       string    `bson:"key" json:"key"`
	Width     int       `bson:"width" json:"width"`
	Height    int       `bson:"height" json:"height"`
	Source    string    `bson:"source,omitempty" json:"source,omitempty"` // the link it came from
	CreatedAt time.Time `bson:"created_at" json:"created_at"`
	// Position is the photo's place in the order, from 1; every write of the photos numbers
	// them all 1..n (photos.go). 0 in photos stored before photos could be ordered, until
	// the property's next photo write.
	Position int `bson:"position,omitempty" json:"position,omitempty"`
}

// ChargeRec is a due amount of the payment policy.
type ChargeRec struct {
	IsDueAt    string `bson:"is_due_at" json:"is_due_at"`
	XDay       int    `bson:"x_day,omitempty" json:"x_day,omitempty"`
	AmountType string `bson:"amount_type,omitempty" json:"amount_type,omitempty"`
	Amount     string `bson:"amount,omitempty" json:"amount,omitempty"`
}

// PolicyRec is A3's short_stay.
type PolicyRec struct {
	PaymentType      string     `bson:"payment_type" json:"payment_type"`
	DamageDeposit    *ChargeRec `bson:"damage_deposit,omitempty" json:"damage_deposit"`
	PaymentFull      *ChargeRec `bson:"payment_full,omitempty" json:"payment_full"`
	FirstPayment     *ChargeRec `bson:"first_payment,omitempty" json:"first_payment"`
	RemainingPayment *ChargeRec `bson:"remaining_payment,omitempty" json:"remaining_payment"`
}

// PricesRec are the prices of the base rate or of a season; absent prices are "".
type PricesRec struct {
	Daily        string `bson:"daily_price" json:"daily_price"`
	Weekend      string `bson:"weekend_price,omitempty" json:"weekend_price,omitempty"`
	Weekly       string `bson:"weekly_price,omitempty" json:"weekly_price,omitempty"`
	Monthly      string `bson:"monthly_price,omitempty" json:"monthly_price,omitempty"`
	ExtraDaily   string `bson:"extra_daily_price,omitempty" json:"extra_daily_price,omitempty"`
	ExtraWeekend string `bson:"extra_weekend_price,omitempty" json:"extra_weekend_price,omitempty"`
	ExtraWeekly  string `bson:"extra_weekly_price,omitempty" json:"extra_weekly_price,omitempty"`
	ExtraMonthly string `bson:"extra_monthly_price,omitempty" json:"extra_monthly_price,omitempty"`
}

// RatesRec is A4.
type RatesRec struct {
	Rate        PricesRec   `bson:"rate" json:"rate"`
	MinimumStay int         `bson:"minimum_stay" json:"minimum_stay"`
	LOS         []LOSRec    `bson:"los" json:"los"`
	Setting     SettingRec  `bson:"setting" json:"setting"`
	Seasons     []SeasonRec `bson:"seasons" json:"seasons"`
}

// LOSRec is a length-of-stay discount.
type LOSRec struct {
	Days     int    `bson:"days" json:"days"`
	Discount string `bson:"discount" json:"discount"`
}

// SettingRec is A4's setting. Day sets are "All" or comma-separated day names.
type SettingRec struct {
	StandardOccupants         int    `bson:"standard_occupants" json:"standard_occupants"`
	AcceptBookingUpto         int    `bson:"accept_booking_upto" json:"accept_booking_upto"`
	ApplyWeekendPrice         bool   `bson:"apply_weekend_price" json:"apply_weekend_price"`
	DefaultAllowCheckin       string `bson:"default_allow_checkin" json:"default_allow_checkin"`
	DefaultAllowCheckout      string `bson:"default_allow_checkout" json:"default_allow_checkout"`
	ApplyExtraFeePerSeason    bool   `bson:"apply_extra_fee_per_season" json:"apply_extra_fee_per_season"`
	AllowSameDayBookingUntil  string `bson:"allow_same_day_booking_until,omitempty" json:"allow_same_day_booking_until,omitempty"`
	AdvancedNoticeBookingFrom *int   `bson:"advanced_notice_booking_from,omitempty" json:"advanced_notice_booking_from,omitempty"`
	Apply6NightsWeeklyRate    bool   `bson:"apply_6_nights_weekly_rate" json:"apply_6_nights_weekly_rate"`
	FirstDaySurcharge         string `bson:"first_day_surcharge" json:"first_day_surcharge"`
	FirstDaySurchargeOneNight bool   `bson:"first_day_surcharge_apply_one_night" json:"first_day_surcharge_apply_one_night"`
}

// SeasonRec is one season.
type SeasonRec struct {
	Name          string    `bson:"name" json:"name"`
	MinimumStay   int       `bson:"minimum_stay,omitempty" json:"minimum_stay,omitempty"`
	StartDate     string    `bson:"start_date" json:"start_date"`
	EndDate       string    `bson:"end_date" json:"end_date"`
	Prices        PricesRec `bson:"prices" json:"prices"`
	AllowCheckin  string    `bson:"allow_checkin,omitempty" json:"allow_checkin,omitempty"`
	AllowCheckout string    `bson:"allow_checkout,omitempty" json:"allow_checkout,omitempty"`
}

// MethodsRec is A5. Secrets are sealed and never leave the service in events.
type MethodsRec struct {
	Gateways []GatewayRec `bson:"gateways" json:"gateways"`
}

// GatewayRec is one payment method. Public holds values safe to show (a publishable key,
// a PayPal email, the 3-D Secure flag); Sealed holds the encrypted secrets.
type GatewayRec struct {
	Provider    string            `bson:"provider" json:"provider"`
	Description string            `bson:"description,omitempty" json:"description"`
	Public      map[string]string `bson:"public,omitempty" json:"public,omitempty"`
	Sealed      map[string]string `bson:"sealed,omitempty" json:"-"`
}

// TaxRec is one tax (docs/interface-a.md defines type and calculationType).
type TaxRec struct {
	Name            string `bson:"name" json:"name"`
	Amount          string `bson:"amount" json:"amount"`
	Type            int    `bson:"type" json:"type"`
	CalculationType int    `bson:"calculation_type" json:"calculation_type"`
	Def             bool   `bson:"def" json:"def"`
}

// ServiceRec is one default service of the property.
type ServiceRec struct {
	Name       string          `bson:"name" json:"name"`
	Amount     string          `bson:"amount" json:"amount"`
	Type       int             `bson:"type" json:"type"`
	Applicable int             `bson:"applicable" json:"applicable"`
	Unit       int             `bson:"unit" json:"unit"`
	Def        bool            `bson:"def" json:"def"`
	Taxes      []ServiceTaxRec `bson:"taxes" json:"taxes"`
}

// ServiceTaxRec is a tax on a service line.
type ServiceTaxRec struct {
	Name string `bson:"name" json:"name"`
	Perc string `bson:"perc" json:"perc"`
}

// AmenitiesRec is the property's amenity list and its display options.
type AmenitiesRec struct {
	Items       []AmenityRec `bson:"items" json:"items"`
	BedOption   int          `bson:"bedoption,omitempty" json:"bedoption,omitempty"`
	UseIcon     *bool        `bson:"useicon,omitempty" json:"useicon,omitempty"`
	Description string       `bson:"description,omitempty" json:"description,omitempty"`
}

// AmenityRec is one amenity.
type AmenityRec struct {
	ID          int               `bson:"id" json:"id"`
	Name        string            `bson:"name" json:"name"`
	DefaultName string            `bson:"default_name" json:"default_name"`
	Value       string            `bson:"value" json:"value"`
	Qty         int               `bson:"qty" json:"qty"`
	Type        int               `bson:"type" json:"type"`
	Class       string            `bson:"class" json:"class"`
	Languages   map[string]string `bson:"languages" json:"languages"`
}

// DayRec is a per-date price and minimum stay set by setprices_minnights.
type DayRec struct {
	Price       string `bson:"price" json:"price"`
	WeeklyPrice string `bson:"weekly_price,omitempty" json:"weekly_price,omitempty"`
	MonthPrice  string `bson:"monthly_price,omitempty" json:"monthly_price,omitempty"`
	MinNights   int    `bson:"min_nights,omitempty" json:"min_nights,omitempty"`
}

// stored is what the domain reads of a property before it changes it.
func (r Record) stored() property.Stored {
	photos := make(map[int64]string, len(r.Photos))
	for _, ph := range r.Photos {
		photos[ph.PhotoID] = ph.Key
	}
	return property.Stored{Account: r.AccountID, ID: r.PropertyID, InternalCode: r.InternalCode, MaxGuest: r.Content.MaxGuest,
		Photos: photos}
}

func money(d decimal.Decimal) string { return d.String() }

func optMoney(d *decimal.Decimal) string {
	if d == nil {
		return ""
	}
	return d.String()
}

func date(t time.Time) string { return t.Format(time.DateOnly) }

// contentSet is the $set of an A1 create or update: every required field, and the optional
// ones the request carries (absent optional fields keep their stored value).
func contentSet(p property.Property) bson.D {
	set := bson.D{
		{Key: "content.name", Value: p.Name}, {Key: "content.type", Value: string(p.Type)},
		{Key: "content.maxguest", Value: p.MaxGuest}, {Key: "content.bedrooms", Value: p.Bedrooms},
		{Key: "content.bathrooms", Value: p.Bathrooms}, {Key: "content.kitchens", Value: p.Kitchens},
		{Key: "content.space_value", Value: money(p.Space.Value)}, {Key: "content.space_unit", Value: string(p.Space.Unit)},
		{Key: "content.address", Value: p.Address}, {Key: "content.city", Value: p.City}, {Key: "content.country", Value: p.Country},
		{Key: "content.latitude", Value: p.Latitude.String()}, {Key: "content.longitude", Value: p.Longitude.String()},
	}
	for _, o := range []struct {
		key string
		v   *string
	}{{"brief", p.Brief}, {"floor", p.Floor}, {"phone", p.Phone}, {"state", p.State}, {"postcode", p.Postcode}, {"timezone", p.Timezone}} {
		if o.v != nil {
			set = append(set, bson.E{Key: "content." + o.key, Value: *o.v})
		}
	}
	for _, o := range []struct {
		key string
		v   *bool
	}{{"allowchildren", p.AllowChildren}, {"allowpet", p.AllowPet}, {"allowsmoking", p.AllowSmoking}, {"isfeatured", p.IsFeatured}} {
		if o.v != nil {
			set = append(set, bson.E{Key: "content." + o.key, Value: *o.v})
		}
	}
	return set
}

func chargeRec(c *property.Charge) *ChargeRec {
	if c == nil {
		return nil
	}
	return &ChargeRec{IsDueAt: string(c.Due), XDay: c.XDay, AmountType: string(c.AmountType), Amount: money(c.Amount)}
}

func deadlineRec(d *property.Deadline) *ChargeRec {
	if d == nil {
		return nil
	}
	return &ChargeRec{IsDueAt: string(d.Due), XDay: d.XDay}
}

// policyRec converts A3.
func policyRec(p property.Policy) *PolicyRec {
	return &PolicyRec{PaymentType: string(p.PaymentType), DamageDeposit: chargeRec(p.DamageDeposit),
		PaymentFull: deadlineRec(p.FullPayment), FirstPayment: chargeRec(p.FirstPayment), RemainingPayment: deadlineRec(p.RemainingPayment)}
}

func pricesRec(p property.Prices) PricesRec {
	return PricesRec{Daily: money(p.Daily), Weekend: optMoney(p.Weekend), Weekly: optMoney(p.Weekly), Monthly: optMoney(p.Monthly),
		ExtraDaily: optMoney(p.ExtraDaily), ExtraWeekend: optMoney(p.ExtraWeekend), ExtraWeekly: optMoney(p.ExtraWeekly),
		ExtraMonthly: optMoney(p.ExtraMonthly)}
}

func days(w pricing.Weekdays) string {
	if w == 0 {
		return ""
	}
	return w.String()
}

// ratesRec converts A4.
func ratesRec(r property.Rates) *RatesRec {
	s := r.Setting
	out := &RatesRec{Rate: pricesRec(r.Rate.Prices), MinimumStay: r.Rate.MinimumStay, LOS: []LOSRec{}, Seasons: []SeasonRec{},
		Setting: SettingRec{
			StandardOccupants: s.StandardOccupants, AcceptBookingUpto: s.AcceptBookingUpto, ApplyWeekendPrice: s.ApplyWeekendPrice,
			DefaultAllowCheckin: days(s.DefaultCheckin), DefaultAllowCheckout: days(s.DefaultCheckout),
			ApplyExtraFeePerSeason: s.ApplyExtraFeePerSeason, AdvancedNoticeBookingFrom: s.AdvanceNoticeDays,
			Apply6NightsWeeklyRate: s.Apply6NightsWeeklyRate, FirstDaySurcharge: money(s.FirstDaySurcharge),
			FirstDaySurchargeOneNight: s.FirstDaySurchargeOneNight,
		}}
	if s.SameDayBookingUntil != nil {
		out.Setting.AllowSameDayBookingUntil = s.SameDayBookingUntil.String()
	}
	for _, l := range r.LOS {
		out.LOS = append(out.LOS, LOSRec{Days: l.Days, Discount: money(l.Discount)})
	}
	for _, se := range r.Seasons {
		out.Seasons = append(out.Seasons, SeasonRec{Name: se.Name, MinimumStay: se.MinimumStay, StartDate: date(se.Start),
			EndDate: date(se.End), Prices: pricesRec(se.Prices), AllowCheckin: days(se.AllowCheckin), AllowCheckout: days(se.AllowCheckout)})
	}
	return out
}

// taxRecs converts the tax list.
func taxRecs(t property.Taxes) []TaxRec {
	out := make([]TaxRec, len(t.Taxes))
	for i, x := range t.Taxes {
		out[i] = TaxRec{Name: x.Name, Amount: money(x.Amount), Type: int(x.Type), CalculationType: int(x.Calculation), Def: x.Default}
	}
	return out
}

// serviceRecs converts the default services.
func serviceRecs(s property.Services) []ServiceRec {
	out := make([]ServiceRec, len(s.Services))
	for i, x := range s.Services {
		taxes := make([]ServiceTaxRec, len(x.Taxes))
		for j, t := range x.Taxes {
			taxes[j] = ServiceTaxRec{Name: t.Name, Perc: money(t.Percent)}
		}
		out[i] = ServiceRec{Name: x.Name, Amount: money(x.Amount), Type: int(x.Type), Applicable: int(x.Applicable), Unit: x.Unit,
			Def: x.Default, Taxes: taxes}
	}
	return out
}

// amenitiesSet is the $set of an amenity request: the list is replaced; bedoption, useicon
// and description change only when sent. Amenity ids are positions from 1, stable while
// the list is.
func amenitiesSet(a property.Amenities) bson.D {
	items := make([]AmenityRec, len(a.Amenities))
	for i, x := range a.Amenities {
		langs := x.Languages
		if langs == nil {
			langs = map[string]string{}
		}
		items[i] = AmenityRec{ID: i + 1, Name: x.Name, DefaultName: x.DefaultName, Value: x.Value, Qty: x.Qty, Type: int(x.Type),
			Class: x.Class, Languages: langs}
	}
	set := bson.D{{Key: "amenities.items", Value: items}}
	if a.BedOption != nil {
		set = append(set, bson.E{Key: "amenities.bedoption", Value: *a.BedOption})
	}
	if a.UseIcon != nil {
		set = append(set, bson.E{Key: "amenities.useicon", Value: *a.UseIcon})
	}
	if a.Description != nil {
		set = append(set, bson.E{Key: "amenities.description", Value: *a.Description})
	}
	return set
}
