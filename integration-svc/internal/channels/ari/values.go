package ari

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
)

// Day is a calendar date.
type Day = pricing.Date

// RateValue is what one plan has on one date: every member of a channel.Rate but its dates
// and plan. The zero value (Rate "") is "not known" in a sent state; a desired value always
// has a Rate.
type RateValue struct {
	Rate              string
	MinStayArrival    int
	MinStayThrough    int
	MaxStay           int
	ClosedToArrival   bool
	ClosedToDeparture bool
	StopSell          bool
}

// Values are the ARI of one mapped property for the days [From, From+Days): availability
// (1 free, 0 held; -1 not known, in a sent state) and, per remote plan (the mapping's
// order), a RateValue per day.
type Values struct {
	From  Day
	Days  int
	Avail []int8
	Plans []string
	Rates [][]RateValue
	// Currency is the property's (the rates' currency).
	Currency string
}

// RatesOf returns the rate values of a remote plan (nil when it has none).
func (v Values) RatesOf(plan string) []RateValue {
	for i, p := range v.Plans {
		if p == plan {
			return v.Rates[i]
		}
	}
	return nil
}

// NoPrice is the rate sent on a date without a price (no rates, a plan that no longer
// exists, rates that cannot be priced): it always comes with StopSell.
const NoPrice = "0"

// Today is the date at now in the property's time zone: its own, else the account's (as
// every quote judges "today": pricing.Property.BookingWindow).
func Today(p *pricing.Property, now time.Time) Day {
	loc := time.UTC
	if p != nil && p.Location != nil {
		loc = p.Location
	}
	return pricing.DateOf(now.In(loc))
}

// Compute returns the desired values of a mapped property from its projection, for the
// connection's horizon starting today (in the property's zone at now). A property deleted
// is unavailable on every date and has no rates; a property not projected yet is
// ErrNotProjected.
func Compute(st State, conn channel.Connection, m channel.Mapping, now time.Time) (Values, error) {
	if st.Property == nil {
		return Values{}, ErrNotProjected
	}
	days := conn.Days
	if days <= 0 {
		days = channel.DefaultDays
	}
	channelName := conn.Channel
	if channelName == "" {
		channelName = conn.Adapter
	}
	p, perr := pricing.Priced(*st.Property, st.Settings)
	if errors.Is(perr, pricing.ErrDeleted) || st.Property.Deleted {
		// The zone of a deleted property is the account's.
		zone := pricing.Property{}
		if loc, err := time.LoadLocation(st.Settings.Timezone); err == nil && st.Settings.Timezone != "" {
			zone.Location = loc
		}
		v := Values{From: Today(&zone, now), Days: days, Avail: make([]int8, days), Currency: st.Settings.Currency}
		return v, nil
	}
	if perr != nil {
		// Rates that cannot be priced: the zone and currency as far as they are known, and
		// every plan stopped.
		p = pricing.Property{Currency: st.Settings.Currency}
		if loc, err := time.LoadLocation(st.Property.Content.Timezone); err == nil && st.Property.Content.Timezone != "" {
			p.Location = loc
		} else if loc, err := time.LoadLocation(st.Settings.Timezone); err == nil && st.Settings.Timezone != "" {
			p.Location = loc
		}
	}
	from := Today(&p, now)
	v := Values{From: from, Days: days, Avail: make([]int8, days), Currency: p.Currency}
	buf := make([]byte, 0, 10)
	for i := range days {
		buf = from.AddDays(i).AppendFormat(buf[:0])
		if !st.Held[string(buf)] {
			v.Avail[i] = 1
		}
	}
	guests := 1
	if p.Rates != nil && p.Rates.Setting.StandardOccupants > 1 {
		guests = p.Rates.Setting.StandardOccupants
	}
	scale := pricing.Scale(p.Currency)
	for _, pm := range m.RatePlans {
		rs := make([]RateValue, days)
		for i := range days {
			d := from.AddDays(i)
			var r RateValue
			if perr == nil {
				if day, ok := pricing.NightPriceOn(p, pm.RatePlanID, channelName, d, guests); ok {
					r = RateValue{Rate: day.Price.StringFixed(scale), MinStayArrival: day.MinimumStay,
						MinStayThrough: day.MinStayThrough, MaxStay: day.MaxStay,
						ClosedToArrival: !day.CheckinAllowed, ClosedToDeparture: !day.CheckoutAllowed,
						StopSell: day.StopSell}
				} else {
					dr := p.Rules(pm.RatePlanID, d)
					r = RateValue{MinStayArrival: dr.MinStayArrival, MinStayThrough: dr.MinStayThrough,
						MaxStay: dr.MaxStay, ClosedToArrival: !dr.CheckinAllowed, ClosedToDeparture: !dr.CheckoutAllowed}
				}
			}
			if r.Rate == "" {
				r.Rate, r.StopSell = NoPrice, true
			}
			rs[i] = r
		}
		v.Plans = append(v.Plans, pm.RemoteRatePlanID)
		v.Rates = append(v.Rates, rs)
	}
	return v, nil
}

// ErrNotProjected: no snapshot of the property was received yet.
var ErrNotProjected = errors.New("ari: the property is not projected yet")

// HolderOf reads the nights a booking or block event holds. A booking holds its nights
// while reserved (the event lists none otherwise); a block its dates from StartDate to
// EndDate unless deleted. Held checkouts are never published (booking-svc publishes a
// booking once reserved), so they hold nothing here.
func HolderOf(account, kind string, data []byte) (Holder, error) {
	switch kind {
	case "booking":
		var b contract.Booking
		if err := json.Unmarshal(data, &b); err != nil {
			return Holder{}, err
		}
		h := Holder{Account: account, Key: "booking:" + strconv.FormatInt(b.BookingID, 10), PropertyID: b.PropertyID, Version: b.Version}
		if b.Status == "reserved" {
			h.Nights = b.Nights
		}
		return h, nil
	case "block":
		var b contract.Block
		if err := json.Unmarshal(data, &b); err != nil {
			return Holder{}, err
		}
		h := Holder{Account: account, Key: "block:" + strconv.FormatInt(b.BlockID, 10), PropertyID: b.PropertyID, Version: b.Version}
		if !b.Deleted {
			start, err1 := pricing.ParseDate(b.StartDate)
			end, err2 := pricing.ParseDate(b.EndDate)
			if err1 != nil || err2 != nil || end.Before(start) || pricing.DaysBetween(start, end) > 3660 {
				return Holder{}, errors.New("block dates cannot be read")
			}
			for d := start; !d.After(end); d = d.AddDays(1) {
				h.Nights = append(h.Nights, d.String())
			}
		}
		return h, nil
	}
	return Holder{}, errors.New("not a booking or a block")
}
