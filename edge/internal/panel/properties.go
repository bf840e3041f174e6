package panel

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/events/contract"
)

// propertyItem is one row of interface A's property list.
type propertyItem struct {
	PropertyID   string `json:"property_id"`
	InternalCode string `json:"internal_code"`
	Name         string `json:"name"`
	Type         string `json:"type"`
	City         string `json:"city"`
	Country      string `json:"country"`
	MaxGuest     int    `json:"maxguest"`
	UpdatedAt    string `json:"updated_at"`
}

type propertyPage struct {
	Total      int            `json:"total"`
	Page       int            `json:"page"`
	Limit      int            `json:"limit"`
	Properties []propertyItem `json:"properties"`
}

type propertiesData struct {
	List     propertyPage
	Search   string
	Prev     int
	Next     int
	LastPage int
}

func (p *Panel) properties(c *fiber.Ctx) error {
	page, _ := strconv.Atoi(c.Query("page"))
	page = max(page, 1)
	search := c.Query("search")
	var list propertyPage
	if err := p.must(c, gateway.InterfaceA, "property", map[string]any{"action": "list", "page": page, "search": search}, &list); err != nil {
		return err
	}
	d := propertiesData{List: list, Search: search}
	if page > 1 {
		d.Prev = page - 1
	}
	if list.Limit > 0 && page*list.Limit < list.Total {
		d.Next = page + 1
	}
	return p.render(c, "properties", view{Title: "Properties", Session: sessionOf(c), Nav: "properties", Notice: notice(c), Data: d})
}

// getProperty reads the account's property code as its events carry it.
func (p *Panel) getProperty(c *fiber.Ctx, code string) (contract.Property, error) {
	var prop contract.Property
	err := p.must(c, gateway.InterfaceA, "property", map[string]any{"action": "get", "property": map[string]any{"internal_code": code}}, &prop)
	return prop, err
}

// propertyData is what the property form pages show beside the form.
type propertyData struct {
	Code   string
	New    bool
	Prop   contract.Property
	Tab    string
	Extra  any
	Photos []photoView
}

// contentValues are A1's form values of a stored property.
func contentValues(code string, ct contract.Content) map[string]string {
	yn := func(b *bool) string {
		if b == nil {
			return ""
		}
		if *b {
			return "1"
		}
		return "0"
	}
	v := map[string]string{
		"property[internal_code]": code, "property[name]": ct.Name, "property[type]": ct.Type, "property[brief]": ct.Brief,
		"property[maxguest]": strconv.Itoa(ct.MaxGuest), "property[bedrooms]": strconv.Itoa(ct.Bedrooms),
		"property[bathrooms]": strconv.Itoa(ct.Bathrooms), "property[kitchens]": strconv.Itoa(ct.Kitchens),
		"property[floor]": ct.Floor, "property[space][value]": ct.SpaceValue, "property[space][unit]": ct.SpaceUnit,
		"property[phone]": ct.Phone, "property[address]": ct.Address, "property[city]": ct.City, "property[state]": ct.State,
		"property[postcode]": ct.Postcode, "property[country]": ct.Country, "property[latitude]": ct.Latitude,
		"property[longitude]": ct.Longitude, "property[allowchildren]": yn(ct.AllowChildren), "property[allowpet]": yn(ct.AllowPet),
		"property[allowsmoking]": yn(ct.AllowSmoking), "property[timezone]": ct.Timezone, "property[isfeatured]": yn(&ct.IsFeatured),
	}
	return v
}

func (p *Panel) newProperty(c *fiber.Ctx) error {
	sess := sessionOf(c)
	return p.render(c, "property", view{Title: "New property", Session: sess, Nav: "properties",
		Values: map[string]string{"property[space][unit]": "meters", "property[type]": "House"}, Data: propertyData{New: true}})
}

func (p *Panel) createProperty(c *fiber.Ctx) error {
	values, obj, err := form(c)
	if err != nil {
		return err
	}
	obj["action"] = "create"
	o, err := p.call(c, gateway.InterfaceA, "property", obj)
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error {
			return p.render(c, "property", view{Title: "New property", Session: sessionOf(c), Nav: "properties", Message: o.Message,
				Values: values, Errors: o.Violations, Data: propertyData{New: true}})
		})
	}
	return redirect(c, "/panel/properties/"+seg(values["property[internal_code]"]), "created")
}

func (p *Panel) editProperty(c *fiber.Ctx) error {
	code := strings.Clone(c.Params("code"))
	prop, err := p.getProperty(c, code)
	if err != nil {
		return err
	}
	return p.render(c, "property", view{Title: prop.Content.Name, Session: sessionOf(c), Nav: "properties", Notice: notice(c),
		Values: contentValues(code, prop.Content), Data: propertyData{Code: code, Prop: prop, Tab: "content"}})
}

func (p *Panel) updateProperty(c *fiber.Ctx) error {
	code := strings.Clone(c.Params("code"))
	values, obj, err := form(c)
	if err != nil {
		return err
	}
	obj["action"] = "update"
	if m, ok := obj["property"].(map[string]any); ok {
		m["internal_code"] = code // the page's property, whatever the form says
	}
	o, err := p.call(c, gateway.InterfaceA, "property", obj)
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error {
			return p.render(c, "property", view{Title: "Edit property", Session: sessionOf(c), Nav: "properties", Message: o.Message,
				Values: values, Errors: o.Violations, Data: propertyData{Code: code, Tab: "content"}})
		})
	}
	return redirect(c, "/panel/properties/"+seg(code), "saved")
}

func (p *Panel) deleteProperty(c *fiber.Ctx) error {
	code := strings.Clone(c.Params("code"))
	if err := p.must(c, gateway.InterfaceA, "property", map[string]any{"action": "delete", "property": map[string]any{"internal_code": code}}, nil); err != nil {
		return err
	}
	return redirect(c, "/panel/properties", "deleted")
}

// section is one of a property's A resources edited on a page of its own: the form's page
// name, how the stored value becomes the form's values, and the resource it is sent to.
type section struct {
	page, title, resource string
	values                func(contract.Property) map[string]string
	// prepare turns the form's object into the resource's body (nil: as it is).
	prepare func(obj map[string]any)
}

var (
	ratesSection   = section{page: "rates", title: "Rates and seasons", resource: "property-rate", values: rateValues}
	policySection  = section{page: "policy", title: "Payment policy", resource: "property-policy", values: policyValues}
	methodsSection = section{page: "methods", title: "Payment methods", resource: "property-method", values: methodValues, prepare: enabledMethods}
)

// sectionRows are the rows a repeated group's form shows: the stored ones and spare ones.
type sectionRows struct{ LOS, Seasons int }

func (p *Panel) sectionPage(c *fiber.Ctx, s section) error {
	code := strings.Clone(c.Params("code"))
	prop, err := p.getProperty(c, code)
	if err != nil {
		return err
	}
	v := s.values(prop)
	v["internal_code"] = code
	return p.render(c, s.page, view{Title: s.title + " · " + prop.Content.Name, Session: sessionOf(c), Nav: "properties", Notice: notice(c),
		Values: v, Data: propertyData{Code: code, Prop: prop, Tab: s.page, Extra: rowsOf(prop)}})
}

func rowsOf(prop contract.Property) sectionRows {
	r := sectionRows{LOS: 3, Seasons: 2}
	if prop.Rates != nil {
		r.LOS += len(prop.Rates.LOS)
		r.Seasons += len(prop.Rates.Seasons)
	}
	return r
}

func (p *Panel) saveSection(c *fiber.Ctx, s section) error {
	code := strings.Clone(c.Params("code"))
	values, obj, err := form(c)
	if err != nil {
		return err
	}
	if s.prepare != nil {
		s.prepare(obj)
	}
	obj["internal_code"] = code
	o, err := p.call(c, gateway.InterfaceA, s.resource, obj)
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error {
			prop, err := p.getProperty(c, code)
			if err != nil {
				return err
			}
			values["internal_code"] = code
			return p.render(c, s.page, view{Title: s.title + " · " + prop.Content.Name, Session: sessionOf(c), Nav: "properties",
				Message: o.Message, Values: values, Errors: o.Violations, Data: propertyData{Code: code, Prop: prop, Tab: s.page, Extra: rowsOf(prop)}})
		})
	}
	return redirect(c, "/panel/properties/"+seg(code)+"/"+s.page, "saved")
}

func (p *Panel) ratesPage(c *fiber.Ctx) error   { return p.sectionPage(c, ratesSection) }
func (p *Panel) saveRates(c *fiber.Ctx) error   { return p.saveSection(c, ratesSection) }
func (p *Panel) policyPage(c *fiber.Ctx) error  { return p.sectionPage(c, policySection) }
func (p *Panel) savePolicy(c *fiber.Ctx) error  { return p.saveSection(c, policySection) }
func (p *Panel) methodsPage(c *fiber.Ctx) error { return p.sectionPage(c, methodsSection) }
func (p *Panel) saveMethods(c *fiber.Ctx) error { return p.saveSection(c, methodsSection) }

func boolText(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func pricesInto(v map[string]string, prefix string, pr contract.Prices) {
	for k, x := range map[string]string{"daily_price": pr.Daily, "weekend_price": pr.Weekend, "weekly_price": pr.Weekly,
		"monthly_price": pr.Monthly, "extra_daily_price": pr.ExtraDaily, "extra_weekend_price": pr.ExtraWeekend,
		"extra_weekly_price": pr.ExtraWeekly, "extra_monthly_price": pr.ExtraMonthly} {
		v[prefix+"["+k+"]"] = x
	}
}

// rateValues are A4's form values of the stored rates.
func rateValues(prop contract.Property) map[string]string {
	v := map[string]string{}
	r := prop.Rates
	if r == nil {
		v["setting[advanced_notice_booking_from]"] = "0"
		return v
	}
	pricesInto(v, "rate", r.Rate)
	v["rate[minimum_stay]"] = strconv.Itoa(r.MinimumStay)
	st := r.Setting
	v["setting[standard_occupants]"] = strconv.Itoa(st.StandardOccupants)
	v["setting[accept_booking_upto]"] = strconv.Itoa(st.AcceptBookingUpto)
	v["setting[apply_weekend_price]"] = boolText(st.ApplyWeekendPrice)
	v["setting[apply_extra_fee_per_season]"] = boolText(st.ApplyExtraFeePerSeason)
	v["setting[apply_6_nights_weekly_rate]"] = boolText(st.Apply6NightsWeeklyRate)
	v["setting[first_day_surcharge_apply_one_night]"] = boolText(st.FirstDaySurchargeOneNight)
	v["setting[default_allow_checkin]"] = st.DefaultAllowCheckin
	v["setting[default_allow_checkout]"] = st.DefaultAllowCheckout
	v["setting[allow_same_day_booking_until]"] = st.AllowSameDayBookingUntil
	if st.AdvancedNoticeBookingFrom != nil {
		v["setting[advanced_notice_booking_from]"] = strconv.Itoa(*st.AdvancedNoticeBookingFrom)
	}
	v["setting[first_day_surcharge]"] = st.FirstDaySurcharge
	for i, l := range r.LOS {
		v[fmt.Sprintf("los[%d][days]", i)] = strconv.Itoa(l.Days)
		v[fmt.Sprintf("los[%d][discount]", i)] = l.Discount
	}
	for i, s := range r.Seasons {
		pre := fmt.Sprintf("season[%d]", i)
		pricesInto(v, pre, s.Prices)
		v[pre+"[name]"], v[pre+"[start_date]"], v[pre+"[end_date]"] = s.Name, s.StartDate, s.EndDate
		if s.MinimumStay > 0 {
			v[pre+"[minimum_stay]"] = strconv.Itoa(s.MinimumStay)
		}
		v[pre+"[allow_checkin]"], v[pre+"[allow_checkout]"] = s.AllowCheckin, s.AllowCheckout
	}
	return v
}

// policyValues are A3's form values of the stored policy.
func policyValues(prop contract.Property) map[string]string {
	v := map[string]string{}
	pol := prop.Policy
	if pol == nil {
		v["short_stay[payment_type]"] = "None"
		return v
	}
	v["short_stay[payment_type]"] = pol.PaymentType
	charge := func(pre string, ch *contract.Charge) {
		if ch == nil {
			return
		}
		v[pre+"[is_due_at]"] = ch.IsDueAt
		if ch.XDay > 0 {
			v[pre+"[x_day]"] = strconv.Itoa(ch.XDay)
		}
		v[pre+"[amount_type]"], v[pre+"[amount]"] = ch.AmountType, ch.Amount
	}
	charge("short_stay[damage_deposit]", pol.DamageDeposit)
	charge("short_stay[payment_full]", pol.PaymentFull)
	charge("short_stay[payment_partial][first_payment]", pol.FirstPayment)
	charge("short_stay[payment_partial][remaining_payment]", pol.RemainingPayment)
	return v
}

// enabledMethods keeps the payment methods whose "use" is Yes, without that switch: A5's
// body is the set of methods in use; a method not sent is disabled.
func enabledMethods(obj map[string]any) {
	for k, v := range obj {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if m["enabled"] != "1" {
			delete(obj, k)
			continue
		}
		delete(m, "enabled")
	}
}

// methodValues are A5's form values of the stored methods, without secrets.
func methodValues(prop contract.Property) map[string]string {
	v := map[string]string{}
	if prop.Methods == nil {
		return v
	}
	for _, g := range prop.Methods.Gateways {
		v[g.Provider+"[enabled]"] = "1"
		v[g.Provider+"[description]"] = g.Description
		for k, x := range g.Public {
			v[g.Provider+"["+k+"]"] = x
		}
	}
	return v
}

// photoView is one photo as the photos page shows it.
type photoView struct {
	ID  int64
	URL string
}

// photosOf are the property's photos in the owner's order, the main one first.
func photosOf(prop contract.Property) []photoView {
	var out []photoView
	for _, ph := range prop.OrderedPhotos() {
		out = append(out, photoView{ID: ph.PhotoID, URL: "/media/" + ph.Key + "/small.jpg"})
	}
	return out
}

// orderPhotos moves one photo (first: it becomes the main photo; up, down: one place) and
// sends the whole order through property-photo's order action, which refuses an order that
// is no longer the property's photos (another change came first): the page then says so.
func (p *Panel) orderPhotos(c *fiber.Ctx) error {
	code := strings.Clone(c.Params("code"))
	prop, err := p.getProperty(c, code)
	if err != nil {
		return err
	}
	id, _ := strconv.ParseInt(c.FormValue("photo_id"), 10, 64)
	photos := prop.OrderedPhotos()
	order := make([]int64, len(photos))
	at := -1
	for i, ph := range photos {
		order[i] = ph.PhotoID
		if ph.PhotoID == id {
			at = i
		}
	}
	if at < 0 {
		return errNotYours
	}
	switch to := c.FormValue("move"); {
	case to == "first":
		copy(order[1:at+1], order[:at])
		order[0] = id
	case to == "up" && at > 0:
		order[at-1], order[at] = order[at], order[at-1]
	case to == "down" && at < len(order)-1:
		order[at+1], order[at] = order[at], order[at+1]
	}
	o, err := p.call(c, gateway.InterfaceA, "property-photo", map[string]any{"action": "order",
		"photo": map[string]any{"internal_code": code, "order": order}})
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error {
			return p.photosView(c, code, prop, o.Message, nil)
		})
	}
	return redirect(c, "/panel/properties/"+seg(code)+"/photos", "saved")
}

func (p *Panel) photosPage(c *fiber.Ctx) error {
	code := strings.Clone(c.Params("code"))
	prop, err := p.getProperty(c, code)
	if err != nil {
		return err
	}
	return p.photosView(c, code, prop, "", nil)
}

func (p *Panel) photosView(c *fiber.Ctx, code string, prop contract.Property, msg string, errs map[string]string) error {
	sess := sessionOf(c)
	return p.render(c, "photos", view{Title: "Photos · " + prop.Content.Name, Session: sess, Nav: "properties", Notice: notice(c), Message: msg,
		Errors: errs, Values: map[string]string{}, Data: propertyData{Code: code, Prop: prop, Tab: "photos", Photos: photosOf(prop)}})
}

// addPhoto uploads a photo: the file goes to interface A's property-photo as base64, as a
// client's multipart upload does.
func (p *Panel) addPhoto(c *fiber.Ctx) error {
	code := strings.Clone(c.Params("code"))
	fh, err := c.FormFile("image")
	var image string
	if err == nil {
		f, err := fh.Open()
		if err != nil {
			return err
		}
		b, err := io.ReadAll(io.LimitReader(f, gateway.MaxBody))
		_ = f.Close()
		if err != nil {
			return err
		}
		image = "data:" + http.DetectContentType(b) + ";base64," + base64.StdEncoding.EncodeToString(b)
	}
	if image == "" {
		image = strings.TrimSpace(c.FormValue("link"))
	}
	o, err := p.call(c, gateway.InterfaceA, "property-photo", map[string]any{"action": "create",
		"photo": map[string]any{"internal_code": code, "image": image}})
	if err != nil {
		return err
	}
	if !o.OK {
		return refused(c, o, func() error {
			prop, err := p.getProperty(c, code)
			if err != nil {
				return err
			}
			errs := map[string]string{}
			if m, ok := o.Violations["photo[image]"]; ok {
				errs["image"] = m
			}
			return p.photosView(c, code, prop, o.Message, errs)
		})
	}
	return redirect(c, "/panel/properties/"+seg(code)+"/photos", "uploaded")
}

func (p *Panel) deletePhoto(c *fiber.Ctx) error {
	code := strings.Clone(c.Params("code"))
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil {
		return errNotYours
	}
	if err := p.must(c, gateway.InterfaceA, "property-photo", map[string]any{"action": "delete",
		"photo": map[string]any{"internal_code": code, "photo_id": id}}, nil); err != nil {
		return err
	}
	return redirect(c, "/panel/properties/"+seg(code)+"/photos", "deleted")
}
