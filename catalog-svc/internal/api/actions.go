package api

import (
	"encoding/json"
	"sort"
	"strconv"
	"time"

	"github.com/biter777/countries"
	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/ifaceb"
	"github.com/vros/vros/libs/pricing"
)

// property reads the plain numeric propertyId and returns the live property.
func (a *API) property(c *fiber.Ctx) (*catalog.Property, *input, error) {
	in := parse(c)
	pid := in.propertyID(true)
	if err := in.err(); err != nil {
		return nil, in, err
	}
	p, ok := a.catalog.Property(account(c), pid)
	if !ok {
		return nil, in, errNoProperty()
	}
	return p, in, nil
}

// composite reads a `<user_id>_<property_id>` propertyId and returns the live property.
func (a *API) composite(c *fiber.Ctx) (*catalog.Property, *input, error) {
	in := parse(c)
	pid, other := in.compositeID("propertyId", account(c))
	if err := in.err(); err != nil {
		return nil, in, err
	}
	if other {
		return nil, in, errNoProperty()
	}
	p, ok := a.catalog.Property(account(c), pid)
	if !ok {
		return nil, in, errNoProperty()
	}
	return p, in, nil
}

type taxJSON struct {
	Name            string      `json:"name"`
	Amount          json.Number `json:"amount"`
	Def             int         `json:"def"`
	Type            int         `json:"type"`
	CalculationType int         `json:"calculationType"`
}

func (a *API) getTax(c *fiber.Ctx) error {
	p, _, err := a.property(c)
	if err != nil {
		return err
	}
	out := []taxJSON{}
	for _, t := range p.Snap.Taxes {
		out = append(out, taxJSON{Name: t.Name, Amount: ifaceb.Money(t.Amount), Def: flag(t.Def), Type: t.Type, CalculationType: t.CalculationType})
	}
	return httpapi.B(c, out)
}

type serviceTaxJSON struct {
	Name string      `json:"name"`
	Perc json.Number `json:"perc"`
}

type serviceJSON struct {
	Name   string           `json:"name"`
	Amount json.Number      `json:"amount"`
	Def    int              `json:"def"`
	Type   int              `json:"type"`
	Taxes  []serviceTaxJSON `json:"taxes,omitempty"`
}

func (a *API) getService(c *fiber.Ctx) error {
	p, _, err := a.property(c)
	if err != nil {
		return err
	}
	out := []serviceJSON{}
	for _, s := range p.Snap.Services {
		sj := serviceJSON{Name: s.Name, Amount: ifaceb.Money(s.Amount), Def: flag(s.Def), Type: s.Type}
		for _, t := range s.Taxes {
			sj.Taxes = append(sj.Taxes, serviceTaxJSON{Name: t.Name, Perc: ifaceb.Money(t.Perc)})
		}
		out = append(out, sj)
	}
	return httpapi.B(c, out)
}

type blockJSON struct {
	ID          int64  `json:"id"`
	PropertyID  int64  `json:"property_id"`
	Memo        string `json:"memo"`
	StartDate   string `json:"startDate"`
	EndDate     string `json:"endDate"`
	CreatedDate string `json:"createdDate"`
}

// getBlockDates lists the live blocks, of one property when propertyId is sent, that share
// a night with [startDate, endDate] (each bound optional, both inclusive).
func (a *API) getBlockDates(c *fiber.Ctx) error {
	in := parse(c)
	pid := in.propertyID(false)
	from, hasFrom := in.date("startDate", false)
	to, hasTo := in.date("endDate", false)
	if err := in.err(); err != nil {
		return err
	}
	acc := account(c)
	if pid != 0 {
		if _, ok := a.catalog.Property(acc, pid); !ok {
			return errNoProperty()
		}
	}
	st := a.catalog.Settings(acc)
	out := []blockJSON{}
	for _, b := range a.catalog.Blocks(acc, pid) {
		p, live := a.catalog.Property(acc, b.PropertyID)
		if !live {
			continue // blocks of deleted properties are not shown
		}
		if hasFrom && b.EndDate < from.String() || hasTo && b.StartDate > to.String() {
			continue
		}
		out = append(out, blockJSON{ID: b.BlockID, PropertyID: b.PropertyID, Memo: b.Memo, StartDate: b.StartDate, EndDate: b.EndDate,
			CreatedDate: localTimestamp(b.CreatedAt, zone(p, st))})
	}
	return httpapi.B(c, out)
}

type rangeJSON struct {
	StartDate    string `json:"startDate"`
	EndDate      string `json:"endDate"`
	Availability string `json:"availability"`
}

// horizon is how many days a calendar (and the default non-available window) covers.
const horizon = 730

// getNonAvailable merges the nights held (by bookings and live blocks) or stopped (a
// stop-sell of the standard plan) from startDate (default today in the property's zone) to
// endDate (default startDate + 730 days; both inclusive) into ranges: startDate is the first
// such night, endDate the last one (as getblockdates writes blocks), so that the check-out
// day stays free as an arrival in the clients' date pickers.
func (a *API) getNonAvailable(c *fiber.Ctx) error {
	p, in, err := a.property(c)
	if err != nil {
		return err
	}
	from, ok := in.date("startDate", false)
	if !ok {
		from = p.Today(a.now())
	}
	to, ok := in.date("endDate", false)
	if !ok {
		to = from.AddDays(horizon - 1)
	}
	if err := in.err(); err != nil {
		return err
	}
	if to.Before(from) {
		return httpapi.InvalidField("endDate", "must not be before startDate")
	}
	held := a.catalog.Held(account(c), p.Snap.PropertyID)
	days := make([]pricing.Date, 0, len(held))
	for d := range held {
		if !d.Before(from) && !d.After(to) {
			days = append(days, d)
		}
	}
	stoppedNights(p, from, to, func(d pricing.Date) {
		if !held[d] {
			days = append(days, d)
		}
	})
	sort.Slice(days, func(i, j int) bool { return days[i].Before(days[j]) })
	out := []rangeJSON{}
	for i := 0; i < len(days); {
		j := i
		for j+1 < len(days) && days[j+1] == days[j].AddDays(1) {
			j++
		}
		out = append(out, rangeJSON{StartDate: days[i].String(), EndDate: days[j].String(), Availability: "false"})
		i = j + 1
	}
	return httpapi.B(c, out)
}

// getRateTable shows the property's A4 rates (ifaceb.RateTableOf).
func (a *API) getRateTable(c *fiber.Ctx) error {
	p, _, err := a.property(c)
	if err != nil {
		return err
	}
	return httpapi.B(c, ifaceb.RateTableOf(p.Snap))
}

// countryNames is every ISO 3166-1 alpha-2 code with its English name.
var countryNames = func() map[string]string {
	out := map[string]string{}
	for _, c := range countries.All() {
		if a2 := c.Alpha2(); len(a2) == 2 && c.IsValid() {
			out[a2] = c.String()
		}
	}
	return out
}()

func (a *API) listCountry(c *fiber.Ctx) error { return httpapi.B(c, countryNames) }

type propertyEntryJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// getProperties lists the account's live properties, or those of the brand brandId names
// (docs/brands.md).
func (a *API) getProperties(c *fiber.Ctx) error {
	in := parse(c)
	sc := a.readScope(c, in)
	if len(sc.st.Brands) == 0 {
		in.o.Int("brandId", fields.Int{Min: 1, Max: maxID}) // checked, as before brands
	}
	if err := in.err(); err != nil {
		return err
	}
	acc := account(c)
	out := []propertyEntryJSON{}
	for _, p := range sc.filter(a.catalog.Properties(acc)) {
		out = append(out, propertyEntryJSON{ID: ifaceb.CompositeID(acc, p.Snap.PropertyID), Name: p.Snap.Content.Name})
	}
	return httpapi.B(c, out)
}

func (a *API) getPropertyInfo(c *fiber.Ctx) error {
	p, _, err := a.composite(c)
	if err != nil {
		return err
	}
	return httpapi.B(c, []ifaceb.Summary{ifaceb.SummaryOf(account(c), p.Snap)})
}

type dayJSON struct {
	Date              string      `json:"date"`
	Availability      string      `json:"availability"`
	Currency          string      `json:"currency"`
	Price             json.Number `json:"price"`
	WeeklyPrice       json.Number `json:"weekly_price"`
	MonthlyPrice      json.Number `json:"monthly_price"`
	GuestPrice        json.Number `json:"guest_price"`
	GuestWeeklyPrice  json.Number `json:"guest_weekly_price"`
	GuestMonthlyPrice json.Number `json:"guest_monthly_price"`
	MinimumStay       int         `json:"minimumstay"`
	CheckInOutType    int         `json:"check_in_out_type"`
	// The day's restrictions (docs/rate-plans.md), added after the members above: the minimum
	// stay through the night, the maximum stay of a stay starting that day (0 none), and
	// whether a restriction closes the day to arrival or departure or stops its night.
	MinimumStayThrough int  `json:"minimumstay_through"`
	MaximumStay        int  `json:"maximumstay"`
	ClosedToArrival    bool `json:"closed_to_arrival"`
	ClosedToDeparture  bool `json:"closed_to_departure"`
	StopSell           bool `json:"stop_sell"`
}

// dayJSONSize is about the length of one encoded day, to size a calendar's buffer.
const dayJSONSize = 330

// appendDays appends days as encoding/json writes them (TestAppendDaysIsMarshal), without
// its reflection: a year's calendar is 365 of them, and encoding them was a quarter of
// getcalendar's time.
func appendDays(b []byte, days []dayJSON) []byte {
	b = append(b, '[')
	for i, d := range days {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(append(b, `{"date":`...), d.Date)
		b = appendJSONString(append(b, `,"availability":`...), d.Availability)
		b = appendJSONString(append(b, `,"currency":`...), d.Currency)
		b = appendNumber(append(b, `,"price":`...), d.Price)
		b = appendNumber(append(b, `,"weekly_price":`...), d.WeeklyPrice)
		b = appendNumber(append(b, `,"monthly_price":`...), d.MonthlyPrice)
		b = appendNumber(append(b, `,"guest_price":`...), d.GuestPrice)
		b = appendNumber(append(b, `,"guest_weekly_price":`...), d.GuestWeeklyPrice)
		b = appendNumber(append(b, `,"guest_monthly_price":`...), d.GuestMonthlyPrice)
		b = strconv.AppendInt(append(b, `,"minimumstay":`...), int64(d.MinimumStay), 10)
		b = strconv.AppendInt(append(b, `,"check_in_out_type":`...), int64(d.CheckInOutType), 10)
		b = strconv.AppendInt(append(b, `,"minimumstay_through":`...), int64(d.MinimumStayThrough), 10)
		b = strconv.AppendInt(append(b, `,"maximumstay":`...), int64(d.MaximumStay), 10)
		b = strconv.AppendBool(append(b, `,"closed_to_arrival":`...), d.ClosedToArrival)
		b = strconv.AppendBool(append(b, `,"closed_to_departure":`...), d.ClosedToDeparture)
		b = strconv.AppendBool(append(b, `,"stop_sell":`...), d.StopSell)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendJSONString appends s as a JSON string: printable ASCII but `"`, `\`, `<`, `>` and `&`
// as it is, anything else through encoding/json (its escapes).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// appendNumber appends a json.Number as encoding/json does: "" as 0.
func appendNumber(b []byte, n json.Number) []byte {
	if n == "" {
		return append(b, '0')
	}
	return append(b, n...)
}

// Values of check_in_out_type.
const (
	CheckInOut   = 0 // a stay may start and end on the day
	CheckInOnly  = 1
	CheckOutOnly = 2
	CheckNeither = 3
)

// getCalendar lists one day per date from startDate (default today in the property's zone)
// for 730 days, or up to endDate (inclusive) when it comes first. Prices and rules are
// the engine's (pricing.NightPriceOn) for one guest on the plan ratePlanId (default the
// standard plan): exactly a one-night quote's night price, and the day rules every quote
// applies.
func (a *API) getCalendar(c *fiber.Ctx) error {
	p, in, err := a.composite(c)
	if err != nil {
		return err
	}
	from, ok := in.date("startDate", false)
	if !ok {
		from = p.Today(a.now())
	}
	to := from.AddDays(horizon - 1)
	if end, ok := in.date("endDate", false); ok && end.Before(to) {
		to = end
	}
	if err := in.err(); err != nil {
		return err
	}
	if to.Before(from) {
		return httpapi.InvalidField("endDate", "must not be before startDate")
	}
	plan, err := ratePlan(in, p)
	if err != nil {
		return err
	}
	// The generation is read before the held nights: an answer built from newer nights than
	// its key says is replaced at the next change, never an older one kept under a newer key.
	// Restrictions and plans travel in the property's snapshot: a change is a new p.
	key := calendarKey{p: p, gen: a.catalog.Gen(account(c), p.Snap.PropertyID), plan: plan, from: from, to: to}
	data, ok := a.calendars.get(key)
	if !ok {
		held := a.catalog.Held(account(c), p.Snap.PropertyID)
		out := make([]dayJSON, 0, pricing.DaysBetween(from, to)+1)
		var prices decimals
		for d := from; !d.After(to); d = d.AddDays(1) {
			out = append(out, calendarDay(p, plan, d, held[d], &prices))
		}
		data = appendDays(make([]byte, 0, len(out)*dayJSONSize), out)
		a.calendars.put(key, data)
	}
	return httpapi.BRaw(c, data)
}

// decimals formats a calendar's prices: consecutive days mostly have the same ones, and
// formatting a decimal (math/big) costs far more than comparing two. One entry per price of
// a day, each remembering its last value.
type decimals [6]struct {
	d   decimal.Decimal
	s   json.Number
	set bool
}

func (m *decimals) format(i int, d decimal.Decimal) json.Number {
	l := &m[i]
	if !l.set || !l.d.Equal(d) {
		l.d, l.s, l.set = d, dec(d), true
	}
	return l.s
}

// night is what the calendar says of one date of a property on a plan: the one rule
// getcalendar and the booking engine's calendar (engine.go) read. Priced: the property has
// rates (else nothing can be booked and the rest is zero); Free: priced, not held by a
// booking or a live block, and not stopped (stop-sell); Day: the engine's prices (one
// guest) and day rules (pricing.NightPriceOn: the resolved minimum stays and maximum stay,
// changeover days including a restriction's closed to arrival / departure, stop-sell).
type night struct {
	pricing.Day
	Priced, Free bool
}

// nightOf is the calendar's night d of p on plan (0: the standard plan; a plan of p), held
// telling whether a booking or a live block holds it (catalog.Held).
func nightOf(p *catalog.Property, plan int64, d pricing.Date, held bool) night {
	if p.PricingErr != nil {
		return night{}
	}
	n, ok := pricing.NightPriceOn(p.Pricing, plan, "", d, 1)
	if !ok {
		return night{} // no rates: nothing can be booked
	}
	return night{Day: n, Priced: true, Free: !held && !n.StopSell}
}

// calendarCurrency is the currency of p's calendar prices: the account's, which p is priced in.
func calendarCurrency(p *catalog.Property) string {
	if p.Pricing.Currency == "" {
		return pricing.DefaultCurrency
	}
	return p.Pricing.Currency
}

// calendarDay is getcalendar's day d of p on plan. A client decides a stay from the days as
// the engine does (docs/catalog.md, "Calendar"; TestCalendarAgreesWithEngine).
func calendarDay(p *catalog.Property, plan int64, d pricing.Date, held bool, prices *decimals) dayJSON {
	out := dayJSON{Date: d.String(), Availability: "false", Currency: calendarCurrency(p), Price: "0", WeeklyPrice: "0", MonthlyPrice: "0",
		GuestPrice: "0", GuestWeeklyPrice: "0", GuestMonthlyPrice: "0", CheckInOutType: CheckNeither}
	night := nightOf(p, plan, d, held)
	if !night.Priced {
		return out
	}
	n := night.Day
	if night.Free {
		out.Availability = "true"
	}
	out.Price, out.WeeklyPrice, out.MonthlyPrice = prices.format(0, n.Price), prices.format(1, n.WeeklyPrice), prices.format(2, n.MonthlyPrice)
	out.GuestPrice, out.GuestWeeklyPrice, out.GuestMonthlyPrice = prices.format(3, n.GuestPrice), prices.format(4, n.GuestWeeklyPrice),
		prices.format(5, n.GuestMonthlyPrice)
	out.MinimumStay, out.MinimumStayThrough, out.MaximumStay = n.MinimumStay, n.MinStayThrough, n.MaxStay
	out.ClosedToArrival, out.ClosedToDeparture, out.StopSell = n.ClosedToArrival, n.ClosedToDeparture, n.StopSell
	switch {
	case n.CheckinAllowed && n.CheckoutAllowed:
		out.CheckInOutType = CheckInOut
	case n.CheckinAllowed:
		out.CheckInOutType = CheckInOnly
	case n.CheckoutAllowed:
		out.CheckInOutType = CheckOutOnly
	}
	return out
}

type reservationJSON struct {
	ID        string      `json:"id"`
	StartDate string      `json:"startDate"`
	EndDate   string      `json:"endDate"`
	Amount    json.Number `json:"amount"`
	Currency  string      `json:"currency"`
	Status    string      `json:"status"`
	CreatedAt string      `json:"createdAt"`
	// BrandID is the brand the booking was made through; left out without one.
	BrandID int64 `json:"brandId,omitempty"`
}

// getReservations lists a property's bookings (every status) created on or after
// createdDate (a date in the property's zone, or a Unix time) whose stay shares a night with
// [startDate, endDate]. The list is answered as {"reservations": […]}.
func (a *API) getReservations(c *fiber.Ctx) error {
	p, in, err := a.composite(c)
	if err != nil {
		return err
	}
	var since time.Time
	loc := zone(p, a.catalog.Settings(account(c)))
	if !in.o.Empty("createdDate") {
		var s string
		if in.o.Kind("createdDate") == fields.KindNumber {
			n, _ := in.o.Int("createdDate", fields.Int{})
			s = strconv.Itoa(n)
		} else {
			s, _ = in.o.String("createdDate", fields.Str{})
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
			since = time.Unix(n, 0)
		} else if t, err := time.ParseInLocation(time.DateOnly, s, loc); err == nil && len(s) == len(time.DateOnly) {
			since = t
		} else {
			in.v.Add("createdDate", "must be a date YYYY-MM-DD or a Unix timestamp")
		}
	}
	from, hasFrom := in.date("startDate", false)
	to, hasTo := in.date("endDate", false)
	if err := in.err(); err != nil {
		return err
	}
	acc := account(c)
	list := []reservationJSON{}
	for _, b := range a.catalog.Bookings(acc, p.Snap.PropertyID) {
		if b.CreatedAt.Before(since) {
			continue
		}
		// The stay holds the nights [checkin, checkout).
		if hasFrom && b.Checkout <= from.String() || hasTo && b.Checkin > to.String() {
			continue
		}
		list = append(list, reservationJSON{ID: ifaceb.CompositeID(acc, b.BookingID), StartDate: b.Checkin, EndDate: b.Checkout,
			Amount: ifaceb.Money(b.GrandTotal), Currency: b.Currency, Status: b.Status, CreatedAt: b.CreatedAt.In(loc).Format(timestampLayout),
			BrandID: b.BrandID})
	}
	return httpapi.B(c, fiber.Map{"reservations": list})
}

// localTimestamp rewrites a stored "YYYY-MM-DD HH:MM:SS" UTC timestamp in loc's time; a
// value that is not one is shown as stored.
func localTimestamp(utc string, loc *time.Location) string {
	t, err := time.ParseInLocation(timestampLayout, utc, time.UTC)
	if err != nil {
		return utc
	}
	return t.In(loc).Format(timestampLayout)
}
