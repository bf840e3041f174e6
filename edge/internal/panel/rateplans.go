package panel

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/events/contract"
)

// The rate plan pages (docs/rate-plans.md, "Panel"): a property's plans through
// /api/property-rateplan (list; create, update, delete a derived plan; the standard plan's
// terms) and the channel markups of the property and of the account through
// /api/channel-markup. The forms' fields are named after the resources' JSON paths
// (rate_plan[cancellation][tiers][0][percent]), so that the services' violations land at
// their fields; the standard plan's form says standard[…] instead, so that a refusal of
// one form is not shown in the other.

const (
	maxTiers  = 10
	maxRanges = 50
	// spareRows are the empty rows a form offers beyond the stored ones.
	spareRows = 2
)

// policies are the cancellation policies, as the form offers them.
var policies = []string{contract.CancelFlexible, contract.CancelModerate, contract.CancelStrict, contract.CancelNonRefundable, contract.CancelCustom}

type ratePlansData struct {
	Code, Tab string
	Prop      contract.Property
	Plans     []contract.RatePlan
	// EditID is the derived plan the plan form edits (0: the form makes a new one).
	EditID                          int64
	Brands                          []contract.Brand
	PropertyMarkups, AccountMarkups []contract.Markup
	// Rows of the repeated groups: the plan form's ranges and tiers, the standard's tiers.
	RangeRows, TierRows, StandardTierRows int
	Policies                              []string
}

// planForm is the state of the page's forms: the values and violations of the form sent
// (nil: every form shows the stored values).
type planForm struct {
	values map[string]string
	errs   map[string]string
	msg    string
	editID int64
	rows   map[string]int
}

func (p *Panel) ratePlansPage(c *fiber.Ctx) error {
	id, _ := strconv.ParseInt(c.Query("edit"), 10, 64)
	return p.ratePlansView(c, planForm{editID: max(id, 0)})
}

// ratePlansView draws the page: stored values in every form but the one sent (st.values).
func (p *Panel) ratePlansView(c *fiber.Ctx, st planForm) error {
	code := strings.Clone(c.Params("code"))
	prop, err := p.getProperty(c, code)
	if err != nil {
		return err
	}
	a := askerOf(c)
	var plans struct {
		RatePlans []contract.RatePlan `json:"rate_plans"`
	}
	var own, acc struct {
		Markups []contract.Markup `json:"channel_markups"`
	}
	var settings accountSettings
	for _, r := range []struct {
		resource string
		body     map[string]any
		out      any
	}{
		{"property-rateplan", map[string]any{"action": "list", "internal_code": code}, &plans},
		{"channel-markup", map[string]any{"action": "list", "internal_code": code}, &own},
		{"channel-markup", map[string]any{"action": "list"}, &acc},
		{"account-settings", map[string]any{}, &settings},
	} {
		if err := p.mustAs(a, gateway.InterfaceA, r.resource, r.body, r.out); err != nil {
			return err
		}
	}
	d := ratePlansData{Code: code, Tab: "rateplans", Prop: prop, Plans: plans.RatePlans, EditID: st.editID, Brands: settings.Brands,
		PropertyMarkups: own.Markups, AccountMarkups: acc.Markups, Policies: policies}
	// The standard plan first, as the list answers it; kept first whatever the order.
	slices.SortStableFunc(d.Plans, func(x, y contract.RatePlan) int { return boolInt(x.ID != 0) - boolInt(y.ID != 0) })

	values := map[string]string{"markup[type]": contract.AdjustPercent, "level": "property"}
	var editing, standard *contract.RatePlan
	for i := range d.Plans {
		switch d.Plans[i].ID {
		case contract.StandardPlanID:
			standard = &d.Plans[i]
		case st.editID:
			editing = &d.Plans[i]
		}
	}
	if st.editID != 0 && editing == nil && st.values == nil {
		return errNotYours
	}
	if editing != nil {
		planValues(values, "rate_plan", *editing)
	} else {
		values["rate_plan[adjustment][type]"] = contract.AdjustPercent
		values["rate_plan[cancellation][policy]"] = contract.CancelFlexible
		values["rate_plan[sold_on][direct]"] = "1"
	}
	if standard != nil {
		planValues(values, "standard", *standard)
	}
	d.RangeRows, d.TierRows, d.StandardTierRows = spareRows+1, spareRows+1, spareRows+1
	if editing != nil {
		d.RangeRows = min(len(editing.Ranges)+spareRows, maxRanges)
		if editing.Cancellation != nil {
			d.TierRows = min(len(editing.Cancellation.Tiers)+spareRows, maxTiers)
		}
	}
	if standard != nil && standard.Cancellation != nil {
		d.StandardTierRows = min(len(standard.Cancellation.Tiers)+spareRows, maxTiers)
	}
	if st.values != nil {
		// The form sent, as it was sent: its own values only.
		prefix := map[string]string{"standard": "standard[", "markup": "markup["}[st.values["form"]]
		if prefix == "" {
			prefix = "rate_plan["
		}
		for k := range values {
			if strings.HasPrefix(k, prefix) || strings.HasPrefix(k, "brand:") && prefix == "rate_plan[" {
				delete(values, k)
			}
		}
		for k, v := range st.values {
			values[k] = v
		}
		d.RangeRows = max(d.RangeRows, st.rows["ranges"])
		d.TierRows = max(d.TierRows, st.rows["tiers"])
		d.StandardTierRows = max(d.StandardTierRows, st.rows["standard"])
	}
	return p.render(c, "rateplans", view{Title: "Rate plans · " + prop.Content.Name, Session: sessionOf(c), Nav: "properties",
		Notice: notice(c), Message: st.msg, Errors: st.errs, Values: values, Data: d})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// planValues are the form values of a stored plan, under prefix.
func planValues(v map[string]string, prefix string, pl contract.RatePlan) {
	v[prefix+"[id]"] = strconv.FormatInt(pl.ID, 10)
	v[prefix+"[name]"], v[prefix+"[inclusions]"] = pl.Name, pl.Inclusions
	v[prefix+"[cancellation][policy]"] = contract.CancelFlexible
	if cn := pl.Cancellation; cn != nil {
		v[prefix+"[cancellation][policy]"] = cn.Policy
		for i, t := range cn.Tiers {
			pre := fmt.Sprintf("%s[cancellation][tiers][%d]", prefix, i)
			v[pre+"[days_before]"], v[pre+"[percent]"] = strconv.Itoa(t.DaysBefore), t.Percent
		}
	}
	if pl.ID == contract.StandardPlanID {
		return
	}
	v[prefix+"[adjustment][type]"], v[prefix+"[adjustment][value]"] = pl.Adjustment.Type, pl.Adjustment.Value
	for i, r := range pl.Ranges {
		pre := fmt.Sprintf("%s[ranges][%d]", prefix, i)
		v[pre+"[start_date]"], v[pre+"[end_date]"], v[pre+"[type]"], v[pre+"[value]"] = r.StartDate, r.EndDate, r.Type, r.Value
	}
	if pl.MinimumStay > 0 {
		v[prefix+"[minimum_stay]"] = strconv.Itoa(pl.MinimumStay)
	}
	if pl.SoldOn.Direct {
		v[prefix+"[sold_on][direct]"] = "1"
	}
	if pl.SoldOn.AllBrands {
		v[prefix+"[sold_on][all_brands]"] = "1"
	}
	for _, b := range pl.SoldOn.Brands {
		v["brand:"+strconv.FormatInt(b, 10)] = "1"
	}
	v[prefix+"[sold_on][channels]"] = strings.Join(pl.SoldOn.Channels, ", ")
}

// rowIndex reads a repeated row's index from a field name: group[3][…] is row 3.
var rowIndex = regexp.MustCompile(`\[(ranges|tiers)\]\[(\d+)\]`)

// parsePlan reads a plan form: the fields under prefix (rate_plan, or standard for the
// standard plan's terms, which sends only name, inclusions and cancellation). It answers
// the /api/property-rateplan rate_plan object, or the violations by field name. Blank rows
// of ranges and tiers are dropped; the lists are always sent, so an update replaces them.
func parsePlan(f url.Values, prefix string) (map[string]any, map[string]string) {
	errs := map[string]string{}
	get := func(name string) string { return strings.TrimSpace(f.Get(prefix + name)) }
	plan := map[string]any{"name": get("[name]"), "inclusions": get("[inclusions]")}
	standard := prefix == "standard"

	policy := get("[cancellation][policy]")
	if !slices.Contains(policies, policy) {
		errs[prefix+"[cancellation][policy]"] = "must be one of " + strings.Join(policies, ", ")
	}
	cancellation := map[string]any{"policy": policy}
	var tiers []map[string]any
	for i := range maxTiers {
		pre := fmt.Sprintf("[cancellation][tiers][%d]", i)
		days, pct := get(pre+"[days_before]"), get(pre+"[percent]")
		if days == "" && pct == "" {
			continue
		}
		tier := map[string]any{"percent": pct}
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 730 {
			errs[prefix+pre+"[days_before]"] = "must be a whole number of days from 0 to 730"
		}
		tier["days_before"] = n
		if d, err := decimal.NewFromString(pct); err != nil || d.IsNegative() || d.GreaterThan(decimal.NewFromInt(100)) {
			errs[prefix+pre+"[percent]"] = "must be a percent from 0 to 100"
		}
		tiers = append(tiers, tier)
	}
	switch {
	case policy == contract.CancelCustom && len(tiers) == 0:
		errs[prefix+"[cancellation][tiers]"] = "a custom policy needs at least one tier"
	case policy == contract.CancelCustom:
		cancellation["tiers"] = tiers
	case len(tiers) > 0:
		errs[prefix+"[cancellation][tiers]"] = "only a custom policy has tiers: choose custom, or empty them"
	}
	plan["cancellation"] = cancellation
	if standard {
		plan["id"] = contract.StandardPlanID
		if plan["name"] == "" {
			delete(plan, "name") // kept as it is (a name may not be blank)
		}
		return plan, nilIfEmpty(errs)
	}

	if s := get("[id]"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id < 1 {
			errs[prefix+"[id]"] = "must be the id of a derived plan"
		}
		plan["id"] = id
	}
	adjType, adjValue := get("[adjustment][type]"), get("[adjustment][value]")
	if adjType != contract.AdjustPercent && adjType != contract.AdjustAmount {
		errs[prefix+"[adjustment][type]"] = "must be percent or amount"
	}
	if _, err := decimal.NewFromString(adjValue); err != nil {
		errs[prefix+"[adjustment][value]"] = "must be a number, such as -10 or 5.50 (negative: off the standard price)"
	}
	plan["adjustment"] = map[string]string{"type": adjType, "value": adjValue}

	ranges := []map[string]string{}
	for i := range maxRanges {
		pre := fmt.Sprintf("[ranges][%d]", i)
		r := map[string]string{"start_date": get(pre + "[start_date]"), "end_date": get(pre + "[end_date]"),
			"type": get(pre + "[type]"), "value": get(pre + "[value]")}
		if r["start_date"] == "" && r["end_date"] == "" && r["value"] == "" {
			continue
		}
		if r["type"] == "" {
			r["type"] = contract.AdjustPercent
		}
		if _, err := decimal.NewFromString(r["value"]); err != nil {
			errs[prefix+pre+"[value]"] = "must be a number, such as -10 or 5.50"
		}
		ranges = append(ranges, r)
	}
	plan["ranges"] = ranges

	minStay := 0
	if s := get("[minimum_stay]"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 365 {
			errs[prefix+"[minimum_stay]"] = "must be a whole number of nights from 0 to 365"
		}
		minStay = n
	}
	plan["minimum_stay"] = minStay

	brands := []int64{}
	for _, s := range f["brand"] {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			errs[prefix+"[sold_on][brands]"] = "must be ids of your brands"
			continue
		}
		brands = append(brands, id)
	}
	channels := append([]string{}, strings.FieldsFunc(get("[sold_on][channels]"), func(r rune) bool {
		return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t'
	})...)
	plan["sold_on"] = map[string]any{"direct": get("[sold_on][direct]") == "1", "all_brands": get("[sold_on][all_brands]") == "1",
		"brands": brands, "channels": channels}
	return plan, nilIfEmpty(errs)
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// formState is a sent form as the page shows it again: its values (a ticked brand as
// brand:<id>), and the rows its repeated groups had.
func formState(f url.Values) planForm {
	st := planForm{values: map[string]string{}, rows: map[string]int{}}
	for k := range f {
		if k == csrfField {
			continue
		}
		st.values[k] = f.Get(k)
		if m := rowIndex.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[2])
			group := m[1]
			if group == "tiers" && strings.HasPrefix(k, "standard[") {
				group = "standard"
			}
			st.rows[group] = max(st.rows[group], n+1)
		}
	}
	for _, b := range f["brand"] {
		st.values["brand:"+b] = "1"
	}
	return st
}

// listMember folds a violation of a list member (rate_plan[sold_on][channels][1]) onto the
// list's field.
var listMember = regexp.MustCompile(`^(.*\[sold_on\]\[(?:channels|brands)\])\[\d+\]$`)

// savePlan creates, updates or deletes a derived plan, or saves the standard plan's terms
// (do: create, update, delete, standard).
func (p *Panel) savePlan(c *fiber.Ctx) error {
	code := strings.Clone(c.Params("code"))
	f := postValues(c)
	do := f.Get("do")
	back := "/panel/properties/" + seg(code) + "/rateplans"
	var body map[string]any
	var errs map[string]string
	prefix := "rate_plan"
	switch do {
	case "delete":
		id, err := strconv.ParseInt(f.Get("rate_plan[id]"), 10, 64)
		if err != nil || id < 1 {
			return errNotYours
		}
		body = map[string]any{"action": "delete", "internal_code": code, "rate_plan": map[string]any{"id": id}}
	case "create", "update":
		var plan map[string]any
		plan, errs = parsePlan(f, prefix)
		if do == "create" {
			delete(plan, "id")
		} else if _, ok := plan["id"]; !ok && errs == nil {
			errs = map[string]string{"rate_plan[id]": "is required"}
		}
		body = map[string]any{"action": do, "internal_code": code, "rate_plan": plan}
	case "standard":
		prefix = "standard"
		var plan map[string]any
		plan, errs = parsePlan(f, prefix)
		body = map[string]any{"action": "update", "internal_code": code, "rate_plan": plan}
	default:
		return &fiber.Error{Code: fiber.StatusBadRequest, Message: "do must be create, update, delete or standard"}
	}
	st := formState(f)
	if do == "standard" {
		st.values["form"] = "standard"
	}
	if id, err := strconv.ParseInt(f.Get("rate_plan[id]"), 10, 64); err == nil && do == "update" {
		st.editID = id
	}
	if errs != nil {
		c.Status(fiber.StatusBadRequest)
		st.errs, st.msg = errs, "Nothing was saved: correct the fields marked below."
		return p.ratePlansView(c, st)
	}
	o, err := p.call(c, gateway.InterfaceA, "property-rateplan", body)
	if err != nil {
		return err
	}
	if !o.OK {
		if o.HTTP == fiber.StatusNotFound && do != "delete" && !strings.Contains(o.Message, "rate plan") {
			return errNotYours
		}
		c.Status(o.HTTP)
		st.msg, st.errs = o.Message, map[string]string{}
		for k, m := range o.Violations {
			if prefix == "standard" {
				k = strings.Replace(k, "rate_plan[", "standard[", 1)
			}
			if mm := listMember.FindStringSubmatch(k); mm != nil {
				k = mm[1]
			}
			st.errs[k] = m
		}
		if do == "delete" {
			st.values, st.editID = nil, 0
		}
		return p.ratePlansView(c, st)
	}
	ok := map[string]string{"create": "created", "delete": "deleted"}[do]
	if ok == "" {
		ok = "saved"
	}
	return redirect(c, back, ok)
}

// saveMarkup sets or deletes a channel markup of the property or of the account (level).
func (p *Panel) saveMarkup(c *fiber.Ctx) error {
	code := strings.Clone(c.Params("code"))
	f := postValues(c)
	do := f.Get("do")
	if do != "set" && do != "delete" {
		return &fiber.Error{Code: fiber.StatusBadRequest, Message: "do must be set or delete"}
	}
	markup := map[string]any{"channel": strings.TrimSpace(f.Get("markup[channel]"))}
	errs := map[string]string{}
	if do == "set" {
		markup["type"], markup["value"] = f.Get("markup[type]"), strings.TrimSpace(f.Get("markup[value]"))
		if _, err := decimal.NewFromString(markup["value"].(string)); err != nil {
			errs["markup[value]"] = "must be a number, such as 15 or -5.50"
		}
	}
	if markup["channel"] == "" {
		errs["markup[channel]"] = "is required"
	}
	body := map[string]any{"action": do, "markup": markup}
	switch f.Get("level") {
	case "property":
		body["internal_code"] = code
	case "account":
	default:
		errs["level"] = "must be this property or the account"
	}
	st := formState(f)
	st.values["form"] = "markup"
	if len(errs) > 0 {
		c.Status(fiber.StatusBadRequest)
		st.errs, st.msg = errs, "Nothing was saved: correct the fields marked below."
		return p.ratePlansView(c, st)
	}
	o, err := p.call(c, gateway.InterfaceA, "channel-markup", body)
	if err != nil {
		return err
	}
	if !o.OK {
		if o.HTTP == fiber.StatusNotFound && do == "set" {
			return errNotYours
		}
		c.Status(o.HTTP)
		st.msg, st.errs = o.Message, o.Violations
		return p.ratePlansView(c, st)
	}
	return redirect(c, "/panel/properties/"+seg(code)+"/rateplans", map[string]string{"set": "saved", "delete": "deleted"}[do])
}
