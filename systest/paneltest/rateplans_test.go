package paneltest

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/systest/browser"
)

// ratePlans reads the property's plans through /api/property-rateplan.
func (o owner) ratePlans(t *testing.T) []contract.RatePlan {
	t.Helper()
	var ans struct {
		Data struct {
			RatePlans []contract.RatePlan `json:"rate_plans"`
		} `json:"data"`
	}
	o.a(t, "property-rateplan", fmt.Sprintf(`{"action":"list","internal_code":%q}`, o.Code), &ans)
	return ans.Data.RatePlans
}

// markups reads the channel markups of the property (code) or of the account ("").
func (o owner) markups(t *testing.T, code string) map[string]contract.Adjustment {
	t.Helper()
	body := `{"action":"list"}`
	if code != "" {
		body = fmt.Sprintf(`{"action":"list","internal_code":%q}`, code)
	}
	var ans struct {
		Data struct {
			Markups []contract.Markup `json:"channel_markups"`
		} `json:"data"`
	}
	o.a(t, "channel-markup", body, &ans)
	out := map[string]contract.Adjustment{}
	for _, m := range ans.Data.Markups {
		out[m.Channel] = m.Adjustment
	}
	return out
}

// TestRatePlanPages: in Chromium, an owner creates a derived plan (a mistake first, shown at
// its field), edits it, sets the standard plan's terms, sets and deletes channel markups of
// the property and of the account, and deletes the plan; each change is read back through
// /api/property-rateplan and /api/channel-markup.
func TestRatePlanPages(t *testing.T) {
	o := newOwner(t)
	p := &page{t: t, ctx: browser.Start(t), dir: shots(t)}
	p.open("/panel/login")
	p.fill("email", o.Email, "password", o.Password)
	p.press("Sign in")
	p.expect("h1", "Dashboard")
	p.open("/panel/properties/" + o.Code)
	p.do(chromedp.Click(`//a[normalize-space()="Rate plans"]`))
	p.expect("h1", "Rate plans")
	p.expect(`#plans tr[data-plan="0"]`, "Standard")

	// A plan without its adjustment's value: the panel says so at the field.
	p.fill("rate_plan[name]", "Non-refundable", "rate_plan[minimum_stay]", "2", "rate_plan[inclusions]", "Breakfast for two",
		"rate_plan[cancellation][policy]", "custom",
		"rate_plan[cancellation][tiers][0][percent]", "100", "rate_plan[cancellation][tiers][0][days_before]", "30",
		"rate_plan[cancellation][tiers][1][percent]", "50", "rate_plan[cancellation][tiers][1][days_before]", "7",
		"rate_plan[sold_on][channels]", "airbnb, BookingCom")
	p.press("Create plan")
	p.expect("#f-rate_plan-adjustment-value-err", "must be a number")
	p.fill("rate_plan[adjustment][value]", "-10")
	p.press("Create plan")
	p.expect(".notice", "Created.")
	p.expect(`#plans tr[data-plan="1"]`, "Non-refundable")
	p.shot("rateplans-plan")
	plans := o.ratePlans(t)
	if len(plans) != 2 || plans[0].ID != 0 || plans[1].ID != 1 {
		t.Fatalf("plans after the create: %+v", plans)
	}
	pl := plans[1]
	if pl.Name != "Non-refundable" || pl.Inclusions != "Breakfast for two" || pl.Adjustment != (contract.Adjustment{Type: "percent", Value: "-10"}) ||
		pl.MinimumStay != 2 || pl.Cancellation == nil || pl.Cancellation.Policy != "custom" || len(pl.Cancellation.Tiers) != 2 ||
		pl.Cancellation.Tiers[0].DaysBefore != 30 || pl.Cancellation.Tiers[1].DaysBefore != 7 ||
		!pl.SoldOn.Direct || fmt.Sprint(pl.SoldOn.Channels) != "[airbnb bookingcom]" {
		t.Fatalf("plan 1 stored: %+v (cancellation %+v)", pl, pl.Cancellation)
	}

	// A second plan with the same name: the service's refusal, on the page.
	p.fill("rate_plan[name]", "non-refundable", "rate_plan[adjustment][value]", "5")
	p.press("Create plan")
	p.expect(".problem", "")
	if n := len(o.ratePlans(t)); n != 2 {
		t.Fatalf("%d plans after a refused create", n)
	}

	// Edit it.
	p.open("/panel/properties/" + o.Code + "/rateplans?edit=1")
	p.expect("#plan", "Edit plan 1")
	p.fill("rate_plan[name]", "Non-refundable, breakfast", "rate_plan[adjustment][type]", "amount", "rate_plan[adjustment][value]", "-15.50")
	p.press("Save plan")
	p.expect(".notice", "Saved.")
	if pl := o.ratePlans(t)[1]; pl.Name != "Non-refundable, breakfast" || pl.Adjustment != (contract.Adjustment{Type: "amount", Value: "-15.5"}) &&
		pl.Adjustment != (contract.Adjustment{Type: "amount", Value: "-15.50"}) || pl.MinimumStay != 2 || len(pl.SoldOn.Channels) != 2 {
		t.Fatalf("plan 1 after the edit: %+v", pl)
	}

	// The standard plan's terms. Each change starts on a fresh page, whose notice is not the
	// last change's.
	plansPage := "/panel/properties/" + o.Code + "/rateplans"
	p.open(plansPage)
	p.fill("standard[name]", "Flexible rate", "standard[inclusions]", "Late checkout", "standard[cancellation][policy]", "moderate")
	p.press("Save the standard plan's terms")
	p.expect(".notice", "Saved.")
	if st := o.ratePlans(t)[0]; st.ID != 0 || st.Name != "Flexible rate" || st.Inclusions != "Late checkout" || st.Cancellation == nil || st.Cancellation.Policy != "moderate" {
		t.Fatalf("standard plan after its terms: %+v", st)
	}

	// Channel markups: one of the property, one of the account; then the property's deleted.
	// The set form's fields by id: the delete buttons' forms carry fields of the same names.
	setMarkup := func(level, channel, typ, value string) {
		t.Helper()
		p.open(plansPage)
		for id, v := range map[string]string{"#f-level": level, "#f-markup-channel": channel, "#f-markup-type": typ, "#f-markup-value": value} {
			p.do(chromedp.SetValue(chromedp.CSS(id), v))
		}
		p.press("Set markup")
		p.expect(".notice", "Saved.")
	}
	setMarkup("property", "vrbo", "amount", "5")
	p.expect(`#markups-table tr[data-level="property"][data-channel="vrbo"]`, "5 per night")
	setMarkup("account", "Airbnb", "percent", "15")
	p.expect(`#markups-table tr[data-level="account"][data-channel="airbnb"]`, "15 %")
	p.shot("rateplans-markups")
	if m := o.markups(t, o.Code); len(m) != 1 || m["vrbo"].Type != "amount" || m["vrbo"].Value != "5" {
		t.Fatalf("the property's markups: %+v", m)
	}
	if m := o.markups(t, ""); len(m) != 1 || m["airbnb"].Type != "percent" || m["airbnb"].Value != "15" {
		t.Fatalf("the account's markups: %+v", m)
	}
	p.open(plansPage)
	p.press("Delete the property's vrbo markup")
	p.expect(".notice", "Deleted.")
	if m := o.markups(t, o.Code); len(m) != 0 {
		t.Fatalf("the property's markups after the delete: %+v", m)
	}

	// Delete the plan.
	p.open(plansPage)
	p.press("Delete plan Non-refundable, breakfast")
	p.expect(".notice", "Deleted.")
	if plans := o.ratePlans(t); len(plans) != 1 || plans[0].ID != 0 {
		t.Fatalf("plans after the delete: %+v", plans)
	}
}
