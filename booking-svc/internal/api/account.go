package api

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
)

// The internal account routes edge's admin API calls with the account's signed tenant
// (docs/booking.md, "Export and erasure"): plain JSON answers, errors in interface A's shape.

// service names booking-svc in the export.
const service = "booking-svc"

type usageJSON struct {
	Bookings struct {
		Created   int64 `json:"created"`
		Cancelled int64 `json:"cancelled"`
		Nights    int64 `json:"nights"`
	} `json:"bookings"`
	Blocks struct {
		Created int64 `json:"created"`
	} `json:"blocks"`
}

// usage: GET /internal/account/usage?from=&to= (RFC 3339; from included, to excluded).
func (a *API) usage(c *fiber.Ctx) error {
	var v fields.Violations
	instant := func(name string) time.Time {
		s := c.Query(name)
		if s == "" {
			v.Add(name, "is required")
			return time.Time{}
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			v.Add(name, "must be an RFC 3339 time (2026-11-01T00:00:00Z)")
		}
		return t
	}
	from, to := instant("from"), instant("to")
	if v.Len() == 0 && !to.After(from) {
		v.Add("to", "must be later than from")
	}
	if err := v.Err(); err != nil {
		return err
	}
	u, err := a.bookings.Usage(c.UserContext(), account(c), from.UTC(), to.UTC())
	if err != nil {
		return err
	}
	var out usageJSON
	out.Bookings.Created, out.Bookings.Cancelled, out.Bookings.Nights = u.BookingsCreated, u.BookingsCancelled, u.Nights
	out.Blocks.Created = u.BlocksCreated
	return c.JSON(out)
}

// eraseGuest: POST /internal/account/guests/erase {"email": …}.
func (a *API) eraseGuest(c *fiber.Ctx) error {
	var v fields.Violations
	o := fields.Parse(c.Body(), "", &v)
	email := ""
	if o != nil {
		email, _ = o.Email("email", true)
	}
	if err := v.Err(); err != nil {
		return err
	}
	acct := account(c)
	res, err := a.bookings.EraseGuest(c.UserContext(), acct, email, func(ctx context.Context, f booking.Forgotten) error {
		return a.keys.RewriteAnswers(ctx, acct, func(body []byte) ([]byte, bool, error) { return eraseFromAnswer(body, f) })
	})
	if errors.Is(err, booking.ErrBusy) {
		// What was erased stays erased; the same request again finishes the rest.
		return httpapi.Conflict(httpapi.StatusConflict, "a change of one of the guest's bookings is still in progress; send the request again")
	}
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"bookings": res.Bookings, "users": res.Users})
}

// storedAnswer is an interface B answer as the idempotency records keep it.
type storedAnswer struct {
	Status  int             `json:"status"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// eraseFromAnswer anonymises a guest in a stored answer that is a booking object (create's
// and update's) of a booking f names, as the booking itself is anonymised. The answer is
// read into the very type that wrote it and written again, so only the erased fields change.
func eraseFromAnswer(body []byte, f booking.Forgotten) ([]byte, bool, error) {
	var ans storedAnswer
	if json.Unmarshal(body, &ans) != nil || len(ans.Data) == 0 || ans.Data[0] != '{' {
		return body, false, nil
	}
	// Only a booking object: cancel's answer, say, holds the booking id alone.
	var members map[string]json.RawMessage
	if json.Unmarshal(ans.Data, &members) != nil || members["firstName"] == nil || members["email"] == nil {
		return body, false, nil
	}
	var b bookingJSON
	if json.Unmarshal(ans.Data, &b) != nil || b.BookingID == 0 || !f.Own[b.BookingID] && !f.Party[b.BookingID] {
		return body, false, nil
	}
	if f.Own[b.BookingID] {
		g := booking.Guest{FirstName: booking.ErasedName, Email: booking.ErasedEmail}
		b.FirstName, b.LastName, b.FullName, b.Email = g.FirstName, g.LastName, g.FirstName+" "+g.LastName, g.Email
		b.Birthday, b.Birthplace, b.Phone1, b.Phone2, b.Country, b.PhoneCountryCode = "", "", "", "", "", ""
		b.Address, b.City, b.State, b.Postcode, b.FiscalCode, b.Other = "", "", "", "", "", ""
		b.AgreeTermNote, b.ManagerNote = "", ""
		if len(b.Payments) > 0 {
			scrub := booking.Scrubber(f.Names)
			for i, p := range b.Payments {
				b.Payments[i].Description = scrub(p.Description)
			}
		}
		if b.ArrivalForm != nil {
			af := arrivalJSON{IsCompleted: b.ArrivalForm.IsCompleted, DetailInformation: []arrivalGuestJSON{}}
			for _, g := range b.ArrivalForm.DetailInformation {
				af.DetailInformation = append(af.DetailInformation, erasedArrivalGuestJSON(g))
			}
			b.ArrivalForm = &af
		}
	} else if b.ArrivalForm != nil {
		for i, g := range b.ArrivalForm.DetailInformation {
			if strings.EqualFold(g.Email, f.Email) {
				b.ArrivalForm.DetailInformation[i] = erasedArrivalGuestJSON(g)
			}
		}
	}
	data, err := json.Marshal(b)
	if err != nil {
		return nil, false, fmt.Errorf("rewrite stored answer: %w", err)
	}
	ans.Data = data
	out, err := json.Marshal(ans)
	if err != nil {
		return nil, false, fmt.Errorf("rewrite stored answer: %w", err)
	}
	return out, !bytes.Equal(out, body), nil
}

func erasedArrivalGuestJSON(g arrivalGuestJSON) arrivalGuestJSON {
	out := arrivalGuestJSON{Name: booking.ErasedName}
	if g.Email != "" {
		out.Email = booking.ErasedEmail
	}
	return out
}

// The export's records: the account's data as booking-svc keeps it, without secrets (a kept
// card shows only its masked number, brand and expiry; users no password hash).

type guestExport struct {
	FirstName        string `json:"first_name"`
	LastName         string `json:"last_name"`
	Email            string `json:"email"`
	Birthday         string `json:"birthday"`
	Birthplace       string `json:"birthplace"`
	Phone1           string `json:"phone1"`
	Phone2           string `json:"phone2"`
	Country          string `json:"country"`
	PhoneCountryCode string `json:"phone_country_code"`
	Address          string `json:"address"`
	City             string `json:"city"`
	State            string `json:"state"`
	Postcode         string `json:"postcode"`
	FiscalCode       string `json:"fiscal_code"`
	Other            string `json:"other"`
}

type bookingExport struct {
	BookingID     int64        `json:"booking_id"`
	Status        string       `json:"status"`
	Version       int64        `json:"version"`
	PropertyID    int64        `json:"property_id"`
	PropertyName  string       `json:"property_name"`
	UserID        int64        `json:"user_id"`
	BrandID       int64        `json:"brand_id"`
	LeadSourceID  int64        `json:"leadsource_id"`
	OwnerBook     int          `json:"owner_book"`
	Guest         guestExport  `json:"guest"`
	Checkin       string       `json:"checkin"`
	Checkout      string       `json:"checkout"`
	Nights        []string     `json:"nights"`
	Adults        int          `json:"adults"`
	Children      int          `json:"children"`
	Price         priceJSON    `json:"price"`
	PromotionCode string       `json:"promotion_code"`
	CSADamage     int          `json:"csa_damage_protection"`
	CSATravel     int          `json:"csa_travel_insurance"`
	PaymentAuto   bool         `json:"payment_auto"`
	Sandbox       bool         `json:"sandbox"`
	PaymentIDs    []string     `json:"payment_ids"`
	Card          *cardJSON    `json:"card"`
	Arrival       *arrivalJSON `json:"arrival"`
	CreatedAt     time.Time    `json:"created_at"`
	UpdatedAt     time.Time    `json:"updated_at"`
	CancelledAt   *time.Time   `json:"cancelled_at"`
}

type paymentExport struct {
	PaymentID   string      `json:"payment_id"`
	BookingID   int64       `json:"booking_id"`
	Amount      json.Number `json:"amount"`
	Currency    string      `json:"currency"`
	Description string      `json:"description"`
	Time        time.Time   `json:"time"`
	Method      string      `json:"method"`
	ChargeID    string      `json:"charge_id,omitempty"`
	CreatedAt   time.Time   `json:"created_at"`
}

type blockExport struct {
	BlockID    int64     `json:"block_id"`
	PropertyID int64     `json:"property_id"`
	StartDate  string    `json:"start_date"`
	EndDate    string    `json:"end_date"`
	Memo       string    `json:"memo"`
	Deleted    bool      `json:"deleted"`
	Version    int64     `json:"version"`
	CreatedAt  time.Time `json:"created_at"`
}

type userExport struct {
	UserID  int    `json:"user_id"`
	Email   string `json:"email"`
	Name    string `json:"name"`
	Company string `json:"company"`
	Address string `json:"address"`
	Country string `json:"country"`
	Phone1  string `json:"phone1"`
	Phone2  string `json:"phone2"`
}

// guestRecord is one person who booked, by email (lower case): their contact data as their
// latest booking gives it, and every booking they made.
type guestRecord struct {
	Email    string      `json:"email"`
	Guest    guestExport `json:"guest"`
	Bookings []int64     `json:"bookings"`
}

type manifestJSON struct {
	Service   string              `json:"service"`
	AccountID string              `json:"account_id"`
	Records   map[string][]string `json:"records"`
}

// export: GET /internal/account/export, a zip of booking-svc/<collection>.json and
// booking-svc/manifest.json.
func (a *API) export(c *fiber.Ctx) error {
	acct := account(c)
	e, err := a.bookings.Export(c.UserContext(), acct)
	if err != nil {
		return err
	}
	files, records := exportFiles(e)
	var raw map[string][]byte
	if a.owners != nil {
		if raw, err = a.ownerExport(c.UserContext(), acct, files, records); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	files["manifest"] = manifestJSON{Service: service, AccountID: acct, Records: records}
	names = append(names, "manifest")
	for _, n := range names {
		w, err := zw.Create(service + "/" + n + ".json")
		if err != nil {
			return err
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		if err := enc.Encode(files[n]); err != nil {
			return err
		}
	}
	rawNames := slices.Sorted(maps.Keys(raw))
	for _, n := range rawNames {
		w, err := zw.Create(service + "/" + n)
		if err != nil {
			return err
		}
		if _, err := w.Write(raw[n]); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/zip")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+service+`-`+acct+`.zip"`)
	return c.Send(buf.Bytes())
}

// exportFiles are the export's collections and the ids of their records (as text, sorted).
func exportFiles(e booking.Export) (map[string]any, map[string][]string) {
	bookings, payments, blocks, users := []bookingExport{}, []paymentExport{}, []blockExport{}, []userExport{}
	guests := map[string]*guestRecord{}
	ids := map[string][]string{"bookings": {}, "payments": {}, "blocks": {}, "users": {}, "guests": {}}
	for _, b := range e.Bookings {
		g := b.Guest
		ge := guestExport{FirstName: g.FirstName, LastName: g.LastName, Email: g.Email, Birthday: g.Birthday, Birthplace: g.Birthplace,
			Phone1: g.Phone1, Phone2: g.Phone2, Country: g.Country, PhoneCountryCode: g.PhoneCountryCode, Address: g.Address,
			City: g.City, State: g.State, Postcode: g.Postcode, FiscalCode: g.FiscalCode, Other: g.Other}
		x := bookingExport{BookingID: b.BookingID, Status: b.Status, Version: b.Version, PropertyID: b.PropertyID,
			PropertyName: b.PropertyName, UserID: b.UserID, BrandID: b.BrandID, LeadSourceID: b.LeadSourceID, OwnerBook: b.OwnerBook,
			Guest: ge, Checkin: b.Checkin, Checkout: b.Checkout, Nights: append([]string{}, b.Nights...), Adults: b.Adults,
			Children: b.Children, Price: priceOf(b.Quote, len(b.Nights), b.PropertyName, b.PropertyID, b.Checkin, b.Checkout, b.Adults, b.Children),
			PromotionCode: b.PromotionCode, CSADamage: b.CSADamage, CSATravel: b.CSATravel, PaymentAuto: b.PaymentAuto,
			Sandbox: b.Sandbox, PaymentIDs: []string{}, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt, CancelledAt: b.CancelledAt}
		if b.Card != nil {
			x.Card = &cardJSON{Number: b.Card.Masked, Brand: b.Card.Brand, Expiry: b.Card.Expiry}
		}
		if b.Arrival != nil {
			af := arrivalOf(*b.Arrival)
			x.Arrival = &af
		}
		pids := make([]int64, 0, len(b.Payments))
		for id := range b.Payments {
			pids = append(pids, id)
		}
		slices.Sort(pids)
		for _, id := range pids {
			p := b.Payments[id]
			sid := strconv.FormatInt(id, 10)
			x.PaymentIDs = append(x.PaymentIDs, sid)
			payments = append(payments, paymentExport{PaymentID: sid, BookingID: b.BookingID, Amount: money(p.Amount), Currency: p.Currency,
				Description: p.Description, Time: p.Time, Method: p.Method, ChargeID: p.ChargeID, CreatedAt: p.CreatedAt})
			ids["payments"] = append(ids["payments"], sid)
		}
		bookings = append(bookings, x)
		ids["bookings"] = append(ids["bookings"], strconv.FormatInt(b.BookingID, 10))
		if key := strings.ToLower(strings.TrimSpace(g.Email)); key != "" {
			r := guests[key]
			if r == nil {
				r = &guestRecord{Email: key, Bookings: []int64{}}
				guests[key] = r
				ids["guests"] = append(ids["guests"], key)
			}
			r.Guest = ge // bookings come by id: the latest booking's contact data
			r.Bookings = append(r.Bookings, b.BookingID)
		}
	}
	for _, b := range e.Blocks {
		blocks = append(blocks, blockExport{BlockID: b.BlockID, PropertyID: b.PropertyID, StartDate: b.StartDate, EndDate: b.EndDate,
			Memo: b.Memo, Deleted: b.Deleted, Version: b.Version, CreatedAt: b.CreatedAt})
		ids["blocks"] = append(ids["blocks"], strconv.FormatInt(b.BlockID, 10))
	}
	for _, u := range e.Users {
		users = append(users, userExport{UserID: u.UserID, Email: u.Email, Name: u.Name, Company: u.Company, Address: u.Address,
			Country: u.Country, Phone1: u.Phone1, Phone2: u.Phone2})
		ids["users"] = append(ids["users"], strconv.Itoa(u.UserID))
	}
	for _, l := range ids {
		sort.Strings(l)
	}
	guestList := make([]guestRecord, 0, len(guests))
	for _, k := range ids["guests"] {
		guestList = append(guestList, *guests[k])
	}
	return map[string]any{"bookings": bookings, "payments": payments, "blocks": blocks, "users": users, "guests": guestList}, ids
}
