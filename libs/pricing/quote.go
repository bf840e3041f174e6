package pricing

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Request is what a quote (getinfo) or a booking (create, update) asks for.
type Request struct {
	Checkin, Checkout Date
	Adults, Children  int
	// Services: nil uses the property's default services; a non-nil empty slice means no
	// services; otherwise exactly these lines (B1's service semantics).
	Services *[]ServiceLine
	// Now is the booking moment. Booking-window rules and the payment schedule read it in
	// the property's time zone. For an update that keeps the check-in, pass the original
	// booking's creation time, so that the rules and the due dates stay those of the booking.
	Now time.Time
	// IgnoreRules is for owner and back-office bookings: it skips the stay rules (minimum
	// stay, check-in and check-out days, past dates, advance notice, same-day cut-off,
	// booking horizon, no children, the restrictions, where a plan is sold) but never the date range, the adult count or maxguest,
	// which are facts of the stay rather than the owner's sales policy.
	IgnoreRules bool
	// Promotion, when set, is a promotion code the caller has already found valid for this
	// stay (its date window, minimum nights, properties and uses are the caller's rules): it
	// adds one discount line after the length-of-stay discount. Nil: no promotion.
	Promotion *Promotion
	// Plan is the rate plan (0: the standard plan). Channel ("": none) and Brand (0: none)
	// say where the stay is sold: the plan must be sold there (a channel's quote, a brand's
	// website, else direct) and the channel's markup applies. SkipSoldOn (back-office
	// bookings) and IgnoreRules skip the "sold there" rule, never an unknown plan.
	Plan       int64
	Channel    string
	Brand      int64
	SkipSoldOn bool
}

// Night is one night of a stay and its price before discounts, surcharge excluded.
type Night struct {
	Date   Date
	Price  decimal.Decimal
	Basis  Basis
	Season string // the season holding the night; "" for the base rate
}

// TaxLine is a charged tax.
type TaxLine struct {
	Name   string
	Amount decimal.Decimal
}

// ServiceCharge is a priced service line.
type ServiceCharge struct {
	Name       string
	Type       int
	Applicable int
	Unit       int
	Rate       decimal.Decimal // the line's amount as given: money, or a percent of the total rent
	Quantity   int             // what Rate was multiplied by (unit × nights/guests); 0 for a percent
	Amount     decimal.Decimal
	TaxAmount  decimal.Decimal
	Taxes      []TaxLine
}

// Discount is a discount off the total rent.
type Discount struct {
	Name          string
	Percent       decimal.Decimal
	Amount        decimal.Decimal
	PromotionCode string // set when a promotion applies; length-of-stay discounts have none
	// Nights is the tier a length-of-stay discount applies from (0 for a promotion); Flat
	// marks a promotion of a fixed amount (Percent is then zero). DiscountText reads them.
	Nights int
	Flat   bool
}

// Installment labels.
const (
	LabelFull      = "full"
	LabelFirst     = "first"
	LabelRemaining = "remaining"
	LabelDeposit   = "deposit"
)

// Installment is a due payment. The rent installments (all but the deposit) add up to
// the grand total exactly.
type Installment struct {
	Label   string
	DueDate Date
	Amount  decimal.Decimal
}

// Result is a priced stay. Every amount is rounded to the currency's minor units once,
// and every total is the sum of the rounded parts, so these hold exactly:
//
//	TotalRent     = Σ Nights[i].Price + Surcharge
//	TaxTotal      = Σ Taxes[i].Amount
//	ServiceTotal  = Σ (Services[i].Amount + Services[i].TaxAmount)
//	DiscountTotal = Σ Discounts[i].Amount
//	GrandTotal    = TotalRent + TaxTotal + ServiceTotal − DiscountTotal
//
// DamageDeposit is not part of GrandTotal.
type Result struct {
	Currency          string
	Scale             int32 // minor digits of Currency; format amounts with StringFixed(Scale)
	Checkin, Checkout Date
	NightCount        int // qtyofnights
	Guests            int // adults and children
	ExtraGuests       int // guests paying the extra-guest price
	// MinimumStay is the minimum the stay had to meet: the min stay on arrival of the
	// check-in date, the largest min stay through of its nights, the plan's minimum stay.
	MinimumStay int
	Nights      []Night
	Surcharge   decimal.Decimal // first_day_surcharge, when the stay pays it

	TotalRent, TaxTotal, ServiceTotal, DiscountTotal, GrandTotal decimal.Decimal

	DamageDeposit    decimal.Decimal
	DamageDepositDue Date // zero without a deposit

	// The rate plan quoted (0: standard), its terms, and the channel asked for ("": none).
	Plan         int64
	PlanName     string
	Inclusions   string
	Cancellation Cancellation
	Channel      string

	Taxes     []TaxLine
	Services  []ServiceCharge
	Discounts []Discount
	Schedule  []Installment
}

// NightlyPriceDetail is B2's nightlyPriceDetail: date → nightly price.
func (r *Result) NightlyPriceDetail() map[Date]decimal.Decimal {
	m := make(map[Date]decimal.Decimal, len(r.Nights))
	for _, n := range r.Nights {
		m[n.Date] = n.Price
	}
	return m
}

// MinNightlyPrice is B2's minNightlyPrice: the lowest nightly price of the stay.
func (r *Result) MinNightlyPrice() decimal.Decimal {
	if len(r.Nights) == 0 {
		return decimal.Zero
	}
	m := r.Nights[0].Price
	for _, n := range r.Nights[1:] {
		if n.Price.LessThan(m) {
			m = n.Price
		}
	}
	return m
}

// MaxNightlyPrice is B2's maxNightlyPrice: the highest nightly price of the stay.
func (r *Result) MaxNightlyPrice() decimal.Decimal {
	if len(r.Nights) == 0 {
		return decimal.Zero
	}
	m := r.Nights[0].Price
	for _, n := range r.Nights[1:] {
		if n.Price.GreaterThan(m) {
			m = n.Price
		}
	}
	return m
}

// Quote prices a stay and checks it against the property's rules. A broken rule is a
// *RuleError; any other error is a property that cannot be priced (bad configuration).
func Quote(p Property, r Request) (Result, error) {
	pl, err := p.compiled()
	if err != nil {
		return Result{}, err
	}
	if pl == nil {
		return Result{}, ruleErr(NotBookable, "propertyId", "the property cannot be booked: it has no rates")
	}
	cp := pl.planOf(r.Plan)
	if cp == nil {
		return Result{}, ruleErr(UnknownPlan, "ratePlanId", "rate plan "+strconv.FormatInt(r.Plan, 10)+" does not exist")
	}
	if !r.IgnoreRules && !r.SkipSoldOn {
		if where := cp.notSold(r); where != "" {
			return Result{}, ruleErr(NotSold, "ratePlanId", "rate plan "+strconv.FormatInt(r.Plan, 10)+" is not sold "+where)
		}
	}
	if err := checkStay(&p, r); err != nil {
		return Result{}, err
	}
	if r.Now.IsZero() {
		return Result{}, errors.New("pricing: Request.Now is required")
	}
	st := &p.Rates.Setting
	nights := DaysBetween(r.Checkin, r.Checkout)
	guests := r.Adults + r.Children
	local := r.Now.In(p.location())
	today := DateOf(local)
	res := Result{Currency: p.Currency, Scale: pl.scale, Checkin: r.Checkin, Checkout: r.Checkout, NightCount: nights,
		Guests: guests, ExtraGuests: pl.extraGuests(guests), Plan: cp.id, PlanName: cp.terms.Name, Inclusions: cp.terms.Inclusions,
		Cancellation: cp.terms.Cancellation, Channel: r.Channel}

	minStay, dayErr := checkDays(r.Checkin, r.Checkout, cp.minStay, func(d Date) DayRules {
		return pl.rulesAt(cp, d, pl.sourceOf(d), pl.day(d))
	}, pl.restricted(cp))
	res.MinimumStay = minStay
	if !r.IgnoreRules {
		if err := checkRules(&p, pl, r, local); err != nil {
			return Result{}, err
		}
		if dayErr != nil {
			return Result{}, dayErr
		}
	}

	// Rent: nights summed exactly, each night shown as the step of the rounded running
	// total, so the nights add up to the rounded exact rent to the cent.
	// A plan that changes prices, or a channel markup, adjusts each night's exact price: the
	// nights are then priced by adjustNights from their exact standard prices.
	mk := pl.markupFor(r.Channel)
	adjusted := cp.adjusts() || mk != nil
	var qs []int64
	if adjusted {
		qs = make([]int64, nights)
	}
	m := stayMode(nights, pl.six)
	res.Nights = make([]Night, nights)
	var sum, shown int64
	for i := range nights {
		d := r.Checkin.AddDays(i)
		rate := pl.rate(d)
		nq := rate.at(m)
		q, ok := nq.price(res.ExtraGuests)
		if ok {
			sum, ok = add(sum, q)
		}
		if !ok {
			return Result{}, ErrTooLarge
		}
		if adjusted {
			qs[i] = q
			res.Nights[i] = Night{Date: d, Basis: nq.basis, Season: nq.src.name}
			continue
		}
		upto := pl.minor(sum)
		res.Nights[i] = Night{Date: d, Price: pl.money(upto - shown), Basis: nq.basis, Season: nq.src.name}
		shown = upto
	}
	if adjusted {
		var ok bool
		if shown, ok = pl.adjustNights(res.Nights, qs, cp, mk); !ok {
			return Result{}, ErrTooLarge
		}
	}
	rent := pl.money(shown)
	res.Surcharge = decimal.Zero
	if st.FirstDaySurcharge.Sign() > 0 && (nights > 1 || st.FirstDaySurchargeOneNight) {
		res.Surcharge = st.FirstDaySurcharge.Round(pl.scale)
	}
	res.TotalRent = rent.Add(res.Surcharge)

	round := func(d decimal.Decimal) decimal.Decimal { return d.Round(pl.scale) }
	percent := func(base, pct decimal.Decimal) decimal.Decimal { return round(base.Mul(pct).Shift(-2)) }

	// Length-of-stay discount: the best tier the stay reaches.
	res.DiscountTotal = decimal.Zero
	var best *LOS
	for i := range p.Rates.LOS {
		l := &p.Rates.LOS[i]
		if l.Days >= 1 && l.Days <= nights && l.Percent.Sign() > 0 && (best == nil || l.Percent.GreaterThan(best.Percent)) {
			best = l
		}
	}
	if best != nil {
		amt := percent(res.TotalRent, best.Percent)
		res.Discounts = []Discount{{Name: fmt.Sprintf("length of stay discount (%d+ nights)", best.Days), Percent: best.Percent, Amount: amt,
			Nights: best.Days}}
		res.DiscountTotal = amt
	}
	if pr := r.Promotion; pr != nil {
		d := pr.discount(res.TotalRent, res.DiscountTotal, round, percent)
		res.Discounts = append(res.Discounts, d)
		res.DiscountTotal = res.DiscountTotal.Add(d.Amount)
	}

	// Rent taxes, on the total rent before discounts (B2: the discount is subtracted after
	// the taxes are added).
	res.TaxTotal = decimal.Zero
	for _, t := range p.Taxes {
		if !t.Default {
			continue
		}
		var amt decimal.Decimal
		switch t.Type {
		case TaxPercent:
			amt = percent(res.TotalRent, t.Amount)
		case TaxFixed:
			switch t.Calculation {
			case PerStay, 0:
				amt = round(t.Amount)
			case PerNight:
				amt = round(t.Amount.Mul(decimal.NewFromInt(int64(nights))))
			case PerGuestNight:
				amt = round(t.Amount.Mul(decimal.NewFromInt(int64(nights * guests))))
			default:
				return Result{}, fmt.Errorf("pricing: tax %q has unknown calculation type %d", t.Name, t.Calculation)
			}
		default:
			return Result{}, fmt.Errorf("pricing: tax %q has unknown type %d", t.Name, t.Type)
		}
		res.Taxes = append(res.Taxes, TaxLine{Name: t.Name, Amount: amt})
		res.TaxTotal = res.TaxTotal.Add(amt)
	}

	// Services.
	lines, field := r.Services, "service"
	if lines == nil {
		field = "property service"
		var defs []ServiceLine
		for _, s := range p.Services {
			if s.Default {
				defs = append(defs, s.ServiceLine)
			}
		}
		lines = &defs
	}
	res.ServiceTotal = decimal.Zero
	for i, l := range *lines {
		sc, err := priceService(l, fmt.Sprintf("%s[%d]", field, i), nights, guests, res.TotalRent, round, percent)
		if err != nil {
			return Result{}, err
		}
		res.Services = append(res.Services, sc)
		res.ServiceTotal = res.ServiceTotal.Add(sc.Amount).Add(sc.TaxAmount)
	}

	res.GrandTotal = res.TotalRent.Add(res.TaxTotal).Add(res.ServiceTotal).Sub(res.DiscountTotal)

	res.DamageDeposit = decimal.Zero
	if err := schedule(&res, p.Policy, today, round, percent); err != nil {
		return Result{}, err
	}
	return res, nil
}

// checkStay checks what no booking may break, owner bookings included.
func checkStay(p *Property, r Request) error {
	switch {
	case r.Checkin.IsZero():
		return ruleErr(BadRange, "checkin", "checkin is required")
	case r.Checkout.IsZero():
		return ruleErr(BadRange, "checkout", "checkout is required")
	case !r.Checkout.After(r.Checkin):
		return ruleErr(BadRange, "checkout", "checkout must be after checkin")
	case DaysBetween(r.Checkin, r.Checkout) > MaxNights:
		return ruleErr(BadRange, "checkout", "a stay may last at most "+strconv.Itoa(MaxNights)+" nights")
	case r.Adults < 1:
		return ruleErr(BadGuests, "numberofadults", "at least one adult is required")
	case r.Children < 0:
		return ruleErr(BadGuests, "numberofchildren", "the number of children must not be negative")
	case p.MaxGuest > 0 && r.Adults+r.Children > p.MaxGuest:
		return ruleErr(TooManyGuests, "numberofadults", fmt.Sprintf("the property accepts at most %d %s (adults and children)",
			p.MaxGuest, plural(p.MaxGuest, "guest", "guests")))
	}
	return nil
}

// checkRules checks the owner's sales rules that come before the dates' own (checkDays): the
// children, then the booking window.
func checkRules(p *Property, pl *plan, r Request, local time.Time) error {
	st := &p.Rates.Setting
	if r.Children > 0 && p.NoChildren {
		return ruleErr(ChildrenNotAllowed, "numberofchildren", "the property does not accept children")
	}
	w := bookingWindow(st, local)
	switch {
	case r.Checkin.Before(w.today):
		return ruleErr(PastDate, "checkin", "check-in "+r.Checkin.String()+" is in the past")
	case r.Checkin.Before(w.first) && w.sameDayClosed && r.Checkin == w.today:
		return ruleErr(TooSoon, "checkin", "same-day bookings close at "+st.SameDayUntil.String()+
			" property time: the earliest check-in is "+w.today.AddDays(1).String())
	case r.Checkin.Before(w.first):
		return ruleErr(TooSoon, "checkin", fmt.Sprintf("bookings need %d %s advance notice: the earliest check-in is %s",
			st.AdvanceNoticeDays, plural(st.AdvanceNoticeDays, "day's", "days'"), w.first))
	case !w.last.IsZero() && r.Checkin.After(w.last):
		return ruleErr(TooFarAhead, "checkin", fmt.Sprintf("bookings are taken up to %d %s ahead: check-in must be before %s",
			st.AcceptBookingUpto, plural(st.AcceptBookingUpto, "month", "months"), w.last.AddDays(1)))
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// dayList writes a day set for a message, Monday first as people read a week:
// "Saturday", "Saturday or Sunday", "Friday, Saturday or Sunday".
func dayList(w Weekdays) string {
	var days []string
	for i := range 7 {
		if d := time.Weekday((i + 1) % 7); w.Has(d) {
			days = append(days, d.String())
		}
	}
	if len(days) <= 1 {
		return strings.Join(days, "")
	}
	return strings.Join(days[:len(days)-1], ", ") + " or " + days[len(days)-1]
}

type window struct {
	today, first, last Date // last is zero without a horizon
	sameDayClosed      bool
}

func bookingWindow(st *Setting, local time.Time) window {
	w := window{today: DateOf(local)}
	w.first = w.today
	if st.SameDayUntil != nil && Clock(local.Hour()*60+local.Minute()) >= *st.SameDayUntil {
		w.first, w.sameDayClosed = w.today.AddDays(1), true
	}
	if st.AdvanceNoticeDays > 0 {
		if f := w.today.AddDays(st.AdvanceNoticeDays); f.After(w.first) {
			w.first, w.sameDayClosed = f, false
		}
	}
	if st.AcceptBookingUpto > 0 {
		w.last = w.today.AddMonths(st.AcceptBookingUpto).AddDays(-1)
	}
	return w
}

// BookingWindow returns the check-in dates the booking-window rules accept at now: from
// first to last, both included; last is zero when there is no horizon. A calendar shows
// the days outside as unavailable. Quote applies the same window.
func (p Property) BookingWindow(now time.Time) (first, last Date) {
	local := now.In(p.location())
	if p.Rates == nil {
		d := DateOf(local)
		return d, Date{}
	}
	w := bookingWindow(&p.Rates.Setting, local)
	return w.first, w.last
}

func priceService(l ServiceLine, field string, nights, guests int, rent decimal.Decimal,
	round func(decimal.Decimal) decimal.Decimal, percent func(base, pct decimal.Decimal) decimal.Decimal) (ServiceCharge, error) {
	unit := l.Unit
	if unit == 0 {
		unit = 1
	}
	app := l.Applicable
	if app == 0 {
		app = ApplyPerStay
	}
	sc := ServiceCharge{Name: l.Name, Type: l.Type, Applicable: app, Unit: unit, Rate: l.Amount}
	switch {
	case l.Type != ServiceFixed && l.Type != ServicePercent:
		return sc, ruleErr(BadService, field+".type", "type must be 1 (fixed price) or 2 (percent)")
	case app < ApplyPerStay || app > ApplyPerGuestNight:
		return sc, ruleErr(BadService, field+".applicable", "applicable must be 1 (per stay), 2 (per night), 3 (per occupant) or 4 (per occupant per night)")
	case unit < 0:
		return sc, ruleErr(BadService, field+".unit", "unit must be at least 1")
	case l.Amount.Sign() < 0:
		return sc, ruleErr(BadService, field+".amount", "amount must not be negative")
	}
	if l.Type == ServiceFixed {
		sc.Quantity = unit * [...]int{ApplyPerStay: 1, ApplyPerNight: nights, ApplyPerGuest: guests, ApplyPerGuestNight: guests * nights}[app]
		sc.Amount = round(l.Amount.Mul(decimal.NewFromInt(int64(sc.Quantity))))
	} else {
		// A percent of the total rent already scales with the stay, so unit and applicable
		// do not multiply it (B2: "with type 2 it is amount percent of totalRent").
		sc.Amount = percent(rent, l.Amount)
	}
	sc.TaxAmount = decimal.Zero
	for j, t := range l.Taxes {
		if t.Perc.Sign() < 0 {
			return sc, ruleErr(BadService, fmt.Sprintf("%s.taxes[%d].perc", field, j), "perc must not be negative")
		}
		amt := percent(sc.Amount, t.Perc)
		sc.Taxes = append(sc.Taxes, TaxLine{Name: t.Name, Amount: amt})
		sc.TaxAmount = sc.TaxAmount.Add(amt)
	}
	return sc, nil
}

// schedule fills the damage deposit and the payment schedule from the policy.
func schedule(res *Result, pol *Policy, booked Date, round func(decimal.Decimal) decimal.Decimal,
	percent func(base, pct decimal.Decimal) decimal.Decimal) error {
	if pol == nil {
		return nil
	}
	amount := func(c *Charge) (decimal.Decimal, error) {
		switch c.AmountType {
		case Flat:
			return round(c.Amount), nil
		case PercentOfRent:
			return percent(res.TotalRent, c.Amount), nil
		case PercentOfGrandTotal:
			return percent(res.GrandTotal, c.Amount), nil
		}
		return decimal.Zero, fmt.Errorf("pricing: policy amount_type %q is unknown", c.AmountType)
	}
	due := func(c *Charge) (Date, error) {
		var d Date
		switch c.Due {
		case DueBooking:
			d = booked
		case DueArrival:
			d = res.Checkin
		case DueCheckout:
			d = res.Checkout
		case DueXDayPriorArrival:
			d = res.Checkin.AddDays(-c.XDay)
		case DueXDayAfterBooking:
			d = booked.AddDays(c.XDay)
			if d.After(res.Checkin) {
				d = res.Checkin
			}
		default:
			return Date{}, fmt.Errorf("pricing: policy is_due_at %q is unknown", c.Due)
		}
		// Nothing falls due before it is booked (a late booking, or an owner's past stay).
		if d.Before(booked) {
			d = booked
		}
		return d, nil
	}
	add := func(label string, d Date, amt decimal.Decimal) {
		if amt.Sign() > 0 {
			res.Schedule = append(res.Schedule, Installment{Label: label, DueDate: d, Amount: amt})
		}
	}
	grand := res.GrandTotal
	switch pol.PaymentType {
	case PayNone, "":
	case PayFull:
		if pol.Full == nil {
			return errors.New("pricing: policy payment_full is missing")
		}
		d, err := due(pol.Full)
		if err != nil {
			return err
		}
		add(LabelFull, d, grand)
	case PayPartial:
		if pol.First == nil || pol.Remaining == nil {
			return errors.New("pricing: policy payment_partial is incomplete")
		}
		first, err := amount(pol.First)
		if err != nil {
			return err
		}
		if first.GreaterThan(grand) {
			first = grand
		}
		d1, err := due(pol.First)
		if err != nil {
			return err
		}
		d2, err := due(pol.Remaining)
		if err != nil {
			return err
		}
		if d2.Before(d1) {
			d2 = d1 // the rest never falls due before the first payment
		}
		add(LabelFirst, d1, first)
		add(LabelRemaining, d2, grand.Sub(first))
	default:
		return fmt.Errorf("pricing: policy payment_type %q is unknown", pol.PaymentType)
	}
	if c := pol.DamageDeposit; c != nil {
		amt, err := amount(c)
		if err != nil {
			return err
		}
		d, err := due(c)
		if err != nil {
			return err
		}
		res.DamageDeposit = amt
		if amt.Sign() > 0 {
			res.DamageDepositDue = d
		}
		add(LabelDeposit, d, amt)
	}
	return nil
}
