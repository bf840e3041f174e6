package panel

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/gateway"
)

// bookingFilters are listbooking's filters, as the bookings page's query carries them.
var bookingFilters = []string{"propertyId", "bookingId", "brandId", "userId", "checkin", "checkout", "keyword"}

type bookingsData struct {
	Total    int
	Bookings []bookingItem
	Query    string
	Prev     int
	Next     int
}

func (p *Panel) bookings(c *fiber.Ctx) error {
	page, _ := strconv.Atoi(c.Query("page"))
	page = max(page, 1)
	body := map[string]any{"page": page, "limit": 25}
	values := map[string]string{}
	var q []string
	for _, f := range bookingFilters {
		if v := strings.TrimSpace(c.Query(f)); v != "" {
			body[f], values[f] = v, v
			q = append(q, f+"="+v)
		}
	}
	o, err := p.call(c, gateway.InterfaceB, "listbooking", body)
	if err != nil {
		return err
	}
	d := bookingsData{Query: strings.Join(q, "&")}
	if !o.OK {
		return refused(c, o, func() error {
			// A filter the service refused: shown by its field, as on any form.
			return p.render(c, "bookings", view{Title: "Bookings", Session: sessionOf(c), Nav: "bookings", Message: o.Message,
				Values: values, Errors: o.Violations, Data: d})
		})
	}
	var list struct {
		TotalRecords int           `json:"totalRecords"`
		ListBooking  []bookingItem `json:"listBooking"`
	}
	if err := unmarshal(o.Data, &list); err != nil {
		return err
	}
	d.Total, d.Bookings = list.TotalRecords, list.ListBooking
	if page > 1 {
		d.Prev = page - 1
	}
	if page*25 < d.Total {
		d.Next = page + 1
	}
	return p.render(c, "bookings", view{Title: "Bookings", Session: sessionOf(c), Nav: "bookings", Notice: notice(c), Values: values, Data: d})
}

// getBooking reads one booking of the account through listbooking.
func (p *Panel) getBooking(c *fiber.Ctx, id int64) (bookingItem, error) {
	var list struct {
		ListBooking []bookingItem `json:"listBooking"`
	}
	if err := p.must(c, gateway.InterfaceB, "listbooking", map[string]any{"bookingId": id}, &list); err != nil {
		return bookingItem{}, err
	}
	if len(list.ListBooking) == 0 {
		return bookingItem{}, errNotYours
	}
	return list.ListBooking[0], nil
}

func bookingID(c *fiber.Ctx) (int64, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, errNotYours
	}
	return id, nil
}

func (p *Panel) booking(c *fiber.Ctx) error {
	return p.bookingView(c, "", nil, nil)
}

func (p *Panel) bookingView(c *fiber.Ctx, msg string, values, errs map[string]string) error {
	id, err := bookingID(c)
	if err != nil {
		return err
	}
	b, err := p.getBooking(c, id)
	if err != nil {
		return err
	}
	if values == nil {
		values = map[string]string{}
		if af := b.ArrivalForm; af != nil {
			for _, k := range []string{"arriveBy", "transportNumber", "expectedTime", "isCompleted"} {
				if s, ok := af[k].(string); ok {
					values[k] = s
				}
			}
		}
	}
	d, err := bookingPageOf(b)
	if err != nil {
		return err
	}
	return p.render(c, "booking", view{Title: "Booking " + strconv.FormatInt(id, 10), Session: sessionOf(c), Nav: "bookings",
		Notice: notice(c), Message: msg, Values: values, Errors: errs, Data: d})
}

// bookingChange sends one of the booking page's forms as the interface B action, with the
// booking id, and shows the booking again. A field "form=name" is the form's field form
// sent as the action's name (and the action's violation of name shown at form).
func (p *Panel) bookingChange(c *fiber.Ctx, action, ok string, fields ...string) error {
	id, err := bookingID(c)
	if err != nil {
		return err
	}
	body := map[string]any{"bookingId": id}
	values := map[string]string{}
	renamed := map[string]string{}
	for _, f := range fields {
		field, name, cut := strings.Cut(f, "=")
		if !cut {
			name = field
		}
		renamed[name] = field
		v := c.FormValue(field)
		values[field] = v
		if v != "" {
			body[name] = v
		}
	}
	o, err := p.call(c, gateway.InterfaceB, action, body)
	if err != nil {
		return err
	}
	if !o.OK {
		errs := o.Violations
		if len(errs) > 0 {
			errs = map[string]string{}
			for k, v := range o.Violations {
				if f, ok := renamed[k]; ok {
					k = f
				}
				errs[k] = v
			}
		}
		return refused(c, o, func() error {
			return p.bookingView(c, o.Message, values, errs)
		})
	}
	return redirect(c, "/panel/bookings/"+strconv.FormatInt(id, 10), ok)
}

// cancelBooking cancels the booking: its refund is the policy's unless an amount is given
// with a reason (docs/money.md, "Override").
func (p *Panel) cancelBooking(c *fiber.Ctx) error {
	return p.bookingChange(c, "cancel", "cancelled", "refundAmount", "refundReason")
}
func (p *Panel) addPayment(c *fiber.Ctx) error {
	return p.bookingChange(c, "addbookingpayment", "payment", "amount", "description", "currency")
}

// removePayment removes one of the booking's payments (removebookingpayment names only the
// payment; the service finds it among the account's).
func (p *Panel) removePayment(c *fiber.Ctx) error {
	id, err := bookingID(c)
	if err != nil {
		return err
	}
	o, err := p.call(c, gateway.InterfaceB, "removebookingpayment", map[string]any{"paymentId": c.FormValue("paymentId")})
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error {
			return p.bookingView(c, o.Message, nil, nil)
		})
	}
	return redirect(c, "/panel/bookings/"+strconv.FormatInt(id, 10), "removed")
}

func (p *Panel) arrivalForm(c *fiber.Ctx) error {
	return p.bookingChange(c, "updatearrivalform", "arrival", "arriveBy", "transportNumber", "expectedTime", "isCompleted")
}
