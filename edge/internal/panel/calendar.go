package panel

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/httpapi"
)

// calendarDay is getcalendar's day, with the restrictions' fields (docs/rate-plans.md,
// "Interface B").
type calendarDay struct {
	Date               string      `json:"date"`
	Availability       string      `json:"availability"`
	Currency           string      `json:"currency"`
	Price              json.Number `json:"price"`
	MinimumStay        int         `json:"minimumstay"`
	MinimumStayThrough int         `json:"minimumstay_through"`
	MaximumStay        int         `json:"maximumstay"`
	ClosedToArrival    bool        `json:"closed_to_arrival"`
	ClosedToDeparture  bool        `json:"closed_to_departure"`
	StopSell           bool        `json:"stop_sell"`
}

// blockItem is getblockdates' block.
type blockItem struct {
	ID         json.Number `json:"id"`
	PropertyID int64       `json:"property_id"`
	Memo       string      `json:"memo"`
	StartDate  string      `json:"startDate"`
	EndDate    string      `json:"endDate"`
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
	// RefundRaw and DepositRaw are the refund its cancellation decided and the damage
	// deposit's hold (docs/money.md), read by the booking page (bookingPageOf).
	RefundRaw  json.RawMessage `json:"refund"`
	DepositRaw json.RawMessage `json:"depositHold"`
}

// Day is one cell of a calendar: a day of the month grid, a cell of the multi-property
// calendar.
type Day struct {
	Date    string
	Num     int
	Price   string
	MinStay int
	// MinThrough and MaxStay are the min stay through and max stay (0: none); CTA and CTD
	// the date closed to arrival or departure by a restriction; Stopped a stop-sell.
	MinThrough, MaxStay int
	CTA, CTD, Stopped   bool
	Past                bool
	// Free: neither booked nor blocked (a stopped night is free to block).
	Free bool
	// Booking is the booking holding the night, BlockID/Memo the block.
	Booking *bookingItem
	BlockID string
	Memo    string
	// Arrival marks the booking's first night.
	Arrival bool
}

// State is what holds the night: booked, blocked, stopped (a stop-sell) or free.
func (d Day) State() string {
	switch {
	case d.Booking != nil:
		return "booked"
	case d.BlockID != "":
		return "blocked"
	case d.Stopped:
		return "stopped"
	}
	return "free"
}

// StateText is State as the cell says it.
func (d Day) StateText() string {
	return map[string]string{"booked": "Booked", "blocked": "Blocked", "stopped": "Stopped", "free": "Free"}[d.State()]
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
	rows, err := p.readCalendars(askerOf(c), []calendarProp{{Code: code, ID: prop.PropertyID}}, first, last, today(time.UTC))
	if err != nil {
		return err
	}
	// A property without rates has no calendar to read yet: its days are shown without prices.
	if rows[0].Err != nil && prop.Rates != nil {
		return rows[0].Err
	}
	d := calendarData{Code: code, Tab: "calendar", Prop: prop, Month: first.Format("2006-01"), Title: first.Format("January 2006"),
		Prev: first.AddDate(0, -1, 0).Format("2006-01"), Next: first.AddDate(0, 1, 0).Format("2006-01"),
		Days: rows[0].Days, Currency: rows[0].Currency}
	d.Lead = make([]int, (int(first.Weekday())+6)%7)
	return p.render(c, "calendar", view{Title: "Calendar · " + prop.Content.Name, Session: sessionOf(c), Nav: "properties",
		Notice: notice(c), Message: msg, Errors: errs, Values: map[string]string{}, Data: d})
}

// calendarProp is a property a calendar shows.
type calendarProp struct {
	Code string
	ID   int64
}

// calendarRow is what a calendar shows of one property: its days, the currency of their
// prices, and Err when getcalendar refused it (the days then carry no price nor rule).
type calendarRow struct {
	Days     []Day
	Currency string
	Err      error
}

// bookingPages bounds the bookings a calendar reads (pages of 100): past it, the nights of the
// bookings not read show free.
const bookingPages = 20

// readCalendars reads what a calendar shows of props from first to last (both included):
// getcalendar of each property (at most callsAtOnce at once), and the window's blocks
// (getblockdates) and bookings (listbooking) — of the property when there is one, else of
// the account, one read for every row. It is the one code path of the month grid of a
// property and of the multi-property calendar. today marks the past days.
func (p *Panel) readCalendars(a asker, props []calendarProp, first, last time.Time, today string) ([]calendarRow, error) {
	from, to := first.Format(time.DateOnly), last.Format(time.DateOnly)
	acc := a.caller.Tenant.AccountID
	rows := make([]calendarRow, len(props))
	days := make([][]calendarDay, len(props))
	var failed error
	var mu sync.Mutex
	each(len(props), func(i int) {
		err := p.mustAs(a, gateway.InterfaceB, "getcalendar", map[string]any{"propertyId": acc + "_" + strconv.FormatInt(props[i].ID, 10),
			"startDate": from, "endDate": to}, &days[i])
		var he *httpapi.Error
		switch {
		case err == nil:
		case errors.Is(err, errNotYours) || errors.As(err, &he):
			rows[i].Err = err // the service's refusal: the row says so
		default:
			mu.Lock()
			failed = err
			mu.Unlock()
		}
	})
	if failed != nil {
		return nil, failed
	}
	blockQuery := map[string]any{"startDate": from, "endDate": to}
	bookingQuery := map[string]any{}
	if len(props) == 1 {
		pid := strconv.FormatInt(props[0].ID, 10)
		blockQuery["propertyId"], bookingQuery["propertyId"] = pid, pid
	}
	var blocks []blockItem
	if err := p.mustAs(a, gateway.InterfaceB, "getblockdates", blockQuery, &blocks); err != nil {
		return nil, err
	}
	bookings, _, err := p.bookingsOverlapping(a, first, last.AddDate(0, 0, 1), bookingPages, bookingQuery)
	if err != nil {
		return nil, err
	}
	for i, prop := range props {
		byDate := make(map[string]calendarDay, len(days[i]))
		for _, d := range days[i] {
			byDate[d.Date] = d
		}
		row := &rows[i]
		for t := first; !t.After(last); t = t.AddDate(0, 0, 1) {
			ds := t.Format(time.DateOnly)
			cd := byDate[ds]
			day := Day{Date: ds, Num: t.Day(), Price: cd.Price.String(), MinStay: cd.MinimumStay, MinThrough: cd.MinimumStayThrough,
				MaxStay: cd.MaximumStay, CTA: cd.ClosedToArrival, CTD: cd.ClosedToDeparture, Stopped: cd.StopSell, Past: ds < today, Free: true}
			if cd.Currency != "" {
				row.Currency = cd.Currency
			}
			for _, b := range blocks {
				if (b.PropertyID == prop.ID || len(props) == 1) && b.StartDate <= ds && ds <= b.EndDate {
					day.BlockID, day.Memo, day.Free = b.ID.String(), b.Memo, false
				}
			}
			for j := range bookings {
				bk := &bookings[j]
				if bk.PropertyID != prop.ID && len(props) > 1 {
					continue
				}
				in, out := dateOf(bk.Checkin), dateOf(bk.Checkout)
				if in <= ds && ds < out {
					day.Booking, day.Free, day.Arrival = bk, false, in == ds
				}
			}
			row.Days = append(row.Days, day)
		}
	}
	return rows, nil
}

// today is today's date in loc.
func today(loc *time.Location) string { return time.Now().In(loc).Format(time.DateOnly) }

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
