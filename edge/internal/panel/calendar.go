package panel

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/httpapi"
)

// calendarDay is getcalendar's day.
type calendarDay struct {
	Date         string      `json:"date"`
	Availability string      `json:"availability"`
	Currency     string      `json:"currency"`
	Price        json.Number `json:"price"`
	MinimumStay  int         `json:"minimumstay"`
}

// blockItem is getblockdates' block.
type blockItem struct {
	ID        json.Number `json:"id"`
	Memo      string      `json:"memo"`
	StartDate string      `json:"startDate"`
	EndDate   string      `json:"endDate"`
}

// bookingItem is what the panel reads of a booking object (B2).
type bookingItem struct {
	BookingID        int64                  `json:"bookingId"`
	FirstName        string                 `json:"firstName"`
	LastName         string                 `json:"lastName"`
	Email            string                 `json:"email"`
	Phone            string                 `json:"phone1"`
	PropertyID       int64                  `json:"propertyId"`
	PropertyName     string                 `json:"propertyName"`
	Checkin          string                 `json:"checkin"`
	Checkout         string                 `json:"checkout"`
	CreatedDate      string                 `json:"createdDate"`
	CancellationDate *string                `json:"cancellationDate"`
	Adults           int                    `json:"numberofadults"`
	Children         int                    `json:"numberofchildren"`
	Nights           int                    `json:"qtyofnights"`
	Currency         string                 `json:"currency"`
	TotalRent        json.Number            `json:"totalRent"`
	TaxTotal         json.Number            `json:"taxTotal"`
	ServiceTotal     json.Number            `json:"serviceTotal"`
	DiscountTotal    json.Number            `json:"discountTotal"`
	GrandTotal       json.Number            `json:"grandTotal"`
	DamageDeposit    json.Number            `json:"damageDeposit"`
	Nightly          map[string]json.Number `json:"nightlyPriceDetail"`
	Tax              []map[string]any       `json:"tax"`
	Service          []map[string]any       `json:"service"`
	Discount         []map[string]any       `json:"discount"`
	Payments         []map[string]any       `json:"payments"`
	ArrivalForm      map[string]any         `json:"arrivalForm"`
}

// Day is one cell of the month grid.
type Day struct {
	Date    string
	Num     int
	Price   string
	MinStay int
	Past    bool
	Free    bool
	// Booking is the booking holding the night, BlockID/Memo the block.
	Booking *bookingItem
	BlockID string
	Memo    string
	// Arrival marks the booking's first night.
	Arrival bool
}

type calendarData struct {
	Code     string
	Tab      string
	Prop     contract.Property
	Month    string
	Title    string
	Prev     string
	Next     string
	Lead     []int // empty cells before the 1st (weeks start on Monday)
	Days     []Day
	Currency string
}

// month reads ?month=YYYY-MM (default: this month).
func month(c *fiber.Ctx) (time.Time, error) {
	m := c.Query("month")
	if m == "" {
		n := time.Now().UTC()
		return time.Date(n.Year(), n.Month(), 1, 0, 0, 0, 0, time.UTC), nil
	}
	t, err := time.Parse("2006-01", m)
	if err != nil || t.Year() < 2000 || t.Year() > 2100 {
		return time.Time{}, &httpapi.Error{HTTP: fiber.StatusBadRequest, Message: "month must be YYYY-MM, such as 2027-01"}
	}
	return t, nil
}

func (p *Panel) calendar(c *fiber.Ctx) error {
	return p.calendarView(c, "", nil)
}

func (p *Panel) calendarView(c *fiber.Ctx, msg string, errs map[string]string) error {
	code := strings.Clone(c.Params("code"))
	first, err := month(c)
	if err != nil {
		return err
	}
	prop, err := p.getProperty(c, code)
	if err != nil {
		return err
	}
	last := first.AddDate(0, 1, -1)
	acc := callerOf(c).Tenant.AccountID
	pid := strconv.FormatInt(prop.PropertyID, 10)
	var days []calendarDay
	if err := p.must(c, gateway.InterfaceB, "getcalendar", map[string]any{"propertyId": acc + "_" + pid,
		"startDate": first.Format(time.DateOnly), "endDate": last.Format(time.DateOnly)}, &days); err != nil && prop.Rates != nil {
		return err
	}
	var blocks []blockItem
	if err := p.must(c, gateway.InterfaceB, "getblockdates", map[string]any{"propertyId": pid,
		"startDate": first.Format(time.DateOnly), "endDate": last.Format(time.DateOnly)}, &blocks); err != nil {
		return err
	}
	var list struct {
		ListBooking []bookingItem `json:"listBooking"`
	}
	if err := p.must(c, gateway.InterfaceB, "listbooking", map[string]any{"propertyId": pid, "limit": 100,
		"checkin": first.Format(time.DateOnly), "checkout": last.AddDate(0, 0, 1).Format(time.DateOnly)}, &list); err != nil {
		return err
	}
	byDate := map[string]calendarDay{}
	for _, d := range days {
		byDate[d.Date] = d
	}
	d := calendarData{Code: code, Tab: "calendar", Prop: prop, Month: first.Format("2006-01"), Title: first.Format("January 2006"),
		Prev: first.AddDate(0, -1, 0).Format("2006-01"), Next: first.AddDate(0, 1, 0).Format("2006-01")}
	d.Lead = make([]int, (int(first.Weekday())+6)%7)
	today := time.Now().UTC().Format(time.DateOnly)
	for t := first; !t.After(last); t = t.AddDate(0, 0, 1) {
		ds := t.Format(time.DateOnly)
		cd := byDate[ds]
		day := Day{Date: ds, Num: t.Day(), Price: cd.Price.String(), MinStay: cd.MinimumStay, Past: ds < today, Free: true}
		if cd.Currency != "" {
			d.Currency = cd.Currency
		}
		for _, b := range blocks {
			if b.StartDate <= ds && ds <= b.EndDate {
				day.BlockID, day.Memo, day.Free = b.ID.String(), b.Memo, false
			}
		}
		for i := range list.ListBooking {
			bk := &list.ListBooking[i]
			if bk.CancellationDate != nil && *bk.CancellationDate != "" {
				continue
			}
			in, out := dateOf(bk.Checkin), dateOf(bk.Checkout)
			if in <= ds && ds < out {
				day.Booking, day.Free, day.Arrival = bk, false, in == ds
			}
		}
		d.Days = append(d.Days, day)
	}
	return p.render(c, "calendar", view{Title: "Calendar · " + prop.Content.Name, Session: sessionOf(c), Nav: "properties",
		Notice: notice(c), Message: msg, Errors: errs, Values: map[string]string{}, Data: d})
}

// dateOf is the date of a "YYYY-MM-DD HH:MM:SS" time.
func dateOf(s string) string {
	if len(s) >= 10 {
		return s[:10]
	}
	return s
}

// runs groups the selected days into runs of consecutive days: each run is one block or one
// price change.
func runs(days []string) ([][2]string, error) {
	var ts []time.Time
	for _, d := range days {
		t, err := time.Parse(time.DateOnly, d)
		if err != nil {
			return nil, &httpapi.Error{HTTP: fiber.StatusBadRequest, Message: fmt.Sprintf("day %q is not a date", d)}
		}
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	var out [][2]string
	for i := 0; i < len(ts); {
		j := i
		for j+1 < len(ts) && !ts[j+1].After(ts[j].AddDate(0, 0, 1)) {
			j++
		}
		out = append(out, [2]string{ts[i].Format(time.DateOnly), ts[j].Format(time.DateOnly)})
		i = j + 1
	}
	return out, nil
}

// selectedDays are the days ticked on the month grid.
func selectedDays(c *fiber.Ctx) []string {
	var out []string
	for _, v := range c.Context().PostArgs().PeekMulti("day") {
		out = append(out, string(v))
	}
	return out
}

func (p *Panel) back(c *fiber.Ctx, code string) string {
	to := "/panel/properties/" + seg(code) + "/calendar"
	if m := c.FormValue("month"); len(m) == 7 {
		to += "?month=" + m
	}
	return to
}

// block closes the selected days: one block per run of consecutive days, through interface
// A's property-blockdate, which claims the nights in booking-svc's ledger as a booking does.
func (p *Panel) block(c *fiber.Ctx) error {
	code := strings.Clone(c.Params("code"))
	days := selectedDays(c)
	if len(days) == 0 {
		c.Status(fiber.StatusBadRequest)
		return p.calendarView(c, "Select the days to block first.", nil)
	}
	rs, err := runs(days)
	if err != nil {
		return err
	}
	for _, r := range rs {
		o, err := p.call(c, gateway.InterfaceA, "property-blockdate", map[string]any{"action": "create", "block": map[string]any{
			"internal_code": code, "start_date": r[0], "end_date": r[1], "memo": c.FormValue("memo")}})
		if err != nil {
			return err
		}
		if !o.OK {
			return refused(c, o, func() error {
				return p.calendarView(c, o.Message, nil)
			})
		}
	}
	return redirect(c, p.back(c, code), "blocked")
}

func (p *Panel) unblock(c *fiber.Ctx) error {
	code := strings.Clone(c.Params("code"))
	id, err := strconv.ParseInt(c.FormValue("block_id"), 10, 64)
	if err != nil {
		return errNotYours
	}
	if err := p.must(c, gateway.InterfaceA, "property-blockdate", map[string]any{"action": "delete", "block": map[string]any{"block_id": id}}, nil); err != nil {
		return err
	}
	return redirect(c, p.back(c, code), "unblocked")
}

// setPrices sets the selected days' nightly price and minimum stay through interface B's
// setprices_minnights, as a pricing tool does.
func (p *Panel) setPrices(c *fiber.Ctx) error {
	code := strings.Clone(c.Params("code"))
	days := selectedDays(c)
	if len(days) == 0 {
		c.Status(fiber.StatusBadRequest)
		return p.calendarView(c, "Select the days to price first.", nil)
	}
	prop, err := p.getProperty(c, code)
	if err != nil {
		return err
	}
	var items []map[string]string
	for _, d := range days {
		items = append(items, map[string]string{"date": d, "recommended_price": c.FormValue("price"), "minNights": c.FormValue("minstay"),
			"current_price": "", "reason": "panel"})
	}
	arr, _ := json.Marshal(items)
	o, err := p.call(c, gateway.InterfaceB, "setprices_minnights", map[string]any{
		"propertyId": callerOf(c).Tenant.AccountID + "_" + strconv.FormatInt(prop.PropertyID, 10), "pricingArray": string(arr)})
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error {
			errs := map[string]string{}
			for f, m := range o.Violations {
				switch {
				case strings.Contains(f, "recommended_price"):
					errs["price"] = m
				case strings.Contains(f, "minNights"):
					errs["minstay"] = m
				}
			}
			return p.calendarView(c, o.Message, errs)
		})
	}
	return redirect(c, p.back(c, code), "prices")
}
