package panel

import (
	"errors"
	"sort"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/gateway"
)

// Dashboard bounds: the bookings read for the month's figures (pages of 100).
const dashboardPages = 20

type movement struct {
	Date    string
	Kind    string // "Arrival" or "Departure"
	Booking bookingItem
}

type money struct {
	Currency string
	Amount   string
}

type dashboardData struct {
	Month      string
	From, To   string
	Movements  []movement
	Occupancy  string // percent of the month's property-nights booked
	Nights     int
	Capacity   int
	Revenue    []money
	Bookings   int
	Properties int
	Partial    bool // more bookings than read: figures are a lower bound
}

// dashboard: the next 14 days' arrivals and departures, and this month's occupancy and
// revenue (the rent of the nights booked in the month, by currency, from each booking's
// nightly prices; cancelled bookings left out).
func (p *Panel) dashboard(c *fiber.Ctx) error {
	now := time.Now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	next := first.AddDate(0, 1, 0)
	d := dashboardData{Month: first.Format("January 2006"), From: today.Format(time.DateOnly), To: today.AddDate(0, 0, 14).Format(time.DateOnly)}

	var props propertyPage
	if err := p.must(c, gateway.InterfaceA, "property", map[string]any{"action": "list", "limit": 1}, &props); err != nil {
		return err
	}
	d.Properties = props.Total

	soon, _, err := p.bookingsOverlapping(askerOf(c), today, today.AddDate(0, 0, 15), 1, nil)
	if err != nil {
		return err
	}
	for _, b := range soon {
		if in := dateOf(b.Checkin); in >= d.From && in <= d.To {
			d.Movements = append(d.Movements, movement{Date: in, Kind: "Arrival", Booking: b})
		}
		if out := dateOf(b.Checkout); out >= d.From && out <= d.To {
			d.Movements = append(d.Movements, movement{Date: out, Kind: "Departure", Booking: b})
		}
	}
	sort.SliceStable(d.Movements, func(i, j int) bool { return d.Movements[i].Date < d.Movements[j].Date })

	month, partial, err := p.bookingsOverlapping(askerOf(c), first, next, dashboardPages, nil)
	if err != nil {
		return err
	}
	d.Partial = partial
	revenue := map[string]decimal.Decimal{}
	lo, hi := first.Format(time.DateOnly), next.Format(time.DateOnly)
	for _, b := range month {
		d.Bookings++
		for date, price := range b.Nightly {
			if date < lo || date >= hi {
				continue
			}
			d.Nights++
			if amt, err := decimal.NewFromString(price.String()); err == nil {
				revenue[b.Currency] = revenue[b.Currency].Add(amt)
			}
		}
	}
	for cur, amt := range revenue {
		d.Revenue = append(d.Revenue, money{Currency: cur, Amount: amt.StringFixed(2)})
	}
	sort.Slice(d.Revenue, func(i, j int) bool { return d.Revenue[i].Currency < d.Revenue[j].Currency })
	d.Capacity = d.Properties * int(next.Sub(first).Hours()/24)
	if d.Capacity > 0 {
		d.Occupancy = decimal.NewFromInt(int64(d.Nights * 100)).Div(decimal.NewFromInt(int64(d.Capacity))).StringFixed(1)
	}
	return p.render(c, "dashboard", view{Title: "Dashboard", Session: sessionOf(c), Nav: "dashboard", Notice: notice(c), Data: d})
}

// bookingsOverlapping reads the account's live bookings whose stay overlaps [from, to), at
// most pages pages of 100, with listbooking's other filters in filter (propertyId); partial
// reports that there were more.
func (p *Panel) bookingsOverlapping(a asker, from, to time.Time, pages int, filter map[string]any) ([]bookingItem, bool, error) {
	var out []bookingItem
	for page := 1; page <= pages; page++ {
		var list struct {
			TotalRecords int           `json:"totalRecords"`
			ListBooking  []bookingItem `json:"listBooking"`
		}
		q := map[string]any{"page": page, "limit": 100, "checkin": from.Format(time.DateOnly), "checkout": to.Format(time.DateOnly)}
		for k, v := range filter {
			q[k] = v
		}
		if err := p.mustAs(a, gateway.InterfaceB, "listbooking", q, &list); err != nil {
			return nil, false, err
		}
		for _, b := range list.ListBooking {
			if b.CancellationDate == nil || *b.CancellationDate == "" {
				out = append(out, b)
			}
		}
		if page*100 >= list.TotalRecords {
			return out, false, nil
		}
	}
	return out, true, nil
}

// credentialsData is the credentials page: the public halves, and a secret just issued.
type credentialsData struct {
	Identifiers map[account.Kind]string
	Issued      *account.Secret
	Revoked     account.Kind
	Kinds       []account.Kind
}

func (p *Panel) credentials(c *fiber.Ctx) error { return p.credentialsView(c, credentialsData{}) }

func (p *Panel) credentialsView(c *fiber.Ctx, d credentialsData) error {
	acc, err := p.cfg.Accounts.Get(c.UserContext(), sessionOf(c).AccountID)
	if err != nil {
		return err
	}
	d.Identifiers, d.Kinds = acc.Identifiers, account.Kinds
	return p.render(c, "credentials", view{Title: "Credentials", Session: sessionOf(c), Nav: "credentials", Notice: notice(c), Data: d})
}

// changeCredential rotates one credential (the new secret is shown once, on this answer
// only) or revokes it: a rotation whose new secret nobody is shown, so that the old one is
// refused and no working one is known until the next rotation.
func (p *Panel) changeCredential(c *fiber.Ctx) error {
	kind := account.Kind(c.FormValue("kind"))
	valid := false
	for _, k := range account.Kinds {
		valid = valid || k == kind
	}
	if !valid {
		return fiber.NewError(fiber.StatusBadRequest, "kind must be one of basic, service, key, owner_token")
	}
	sess := sessionOf(c)
	ctx := account.WithActor(c.UserContext(), panelActor(c))
	_, secrets, err := p.cfg.Accounts.Rotate(ctx, sess.AccountID, []account.Kind{kind})
	if errors.Is(err, account.ErrDeleting) {
		return fiber.NewError(fiber.StatusConflict, "this account is being deleted")
	}
	if err != nil {
		return err
	}
	d := credentialsData{}
	if c.FormValue("do") == "revoke" {
		d.Revoked = kind
	} else if len(secrets) == 1 {
		d.Issued = &secrets[0]
	}
	return p.credentialsView(c, d)
}
