package paneltest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vros/vros/devstack/demo"
	"github.com/vros/vros/systest/browser"
)

// bulkCity is the city of the multi-property calendar test's properties: the page is
// filtered by it (the owner's first property is elsewhere).
const bulkCity = "Bulkton"

// addProperties creates n properties with rates through interface A, coded M01…, in city.
func (o owner) addProperties(t *testing.T, n int, city string) []owner {
	t.Helper()
	out := make([]owner, n)
	for i := range n {
		code := fmt.Sprintf("M%02d", i+1)
		prop := strings.NewReplacer(`"DEMO1"`, `"`+code+`"`, "Seaside Villa with Garden", fmt.Sprintf("Harbour villa number %02d of the bay", i+1),
			`"Miami Beach"`, `"`+city+`"`).Replace(demo.Property)
		var created struct {
			Data struct {
				PropertyID string `json:"property_id"`
			} `json:"data"`
		}
		o.a(t, "property", `{"action":"create","property":`+prop+`}`, &created)
		o.a(t, "property-rate", strings.Replace(demo.Rates, `"DEMO1"`, `"`+code+`"`, 1), nil)
		p := o
		p.Code = code
		fmt.Sscan(created.Data.PropertyID, &p.PID)
		out[i] = p
	}
	return out
}

// calendarDays is getcalendar's answer for the property from..to, day by day, each as the
// raw JSON object it answered (nil until the catalog has the property and its rates).
func (o owner) calendarDays(t *testing.T, from, to string) map[string]map[string]json.RawMessage {
	t.Helper()
	a := b(t, o.Key, o.Pass, "getcalendar", map[string]any{"propertyId": fmt.Sprintf("%s_%d", o.AccountID, o.PID), "startDate": from, "endDate": to})
	if a.Status != 0 {
		return nil
	}
	var days []map[string]json.RawMessage
	if err := json.Unmarshal(a.Data, &days); err != nil {
		t.Fatalf("getcalendar: %v: %s", err, a.Data)
	}
	out := map[string]map[string]json.RawMessage{}
	for _, d := range days {
		var date string
		_ = json.Unmarshal(d["date"], &date)
		out[date] = d
	}
	return out
}

// calendars reads getcalendar of every property (in parallel).
func calendars(t *testing.T, props []owner, from, to string) []map[string]map[string]json.RawMessage {
	t.Helper()
	out := make([]map[string]map[string]json.RawMessage, len(props))
	var wg sync.WaitGroup
	for i, p := range props {
		wg.Go(func() { out[i] = p.calendarDays(t, from, to) })
	}
	wg.Wait()
	return out
}

// calendarsUntil reads the calendars until check finds nothing wrong with them, or the views'
// time is up: the calendar is the catalog's view, which follows the writes' events.
func calendarsUntil(t *testing.T, props []owner, from, to string, check func([]map[string]map[string]json.RawMessage) []string) {
	t.Helper()
	deadline := time.Now().Add(viewsWithin)
	for {
		wrong := check(calendars(t, props, from, to))
		if len(wrong) == 0 {
			return
		}
		if time.Now().After(deadline) {
			if len(wrong) > 20 {
				wrong = append(wrong[:20], fmt.Sprintf("… and %d more", len(wrong)-20))
			}
			t.Fatalf("getcalendar after %s:\n%s", viewsWithin, strings.Join(wrong, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMultiCalendarBulkEdit is the browser test of the multi-property calendar: 20
// properties; in Chromium, a bulk edit of 5 of them over 14 days (minimum stay 3 and closed
// to arrival) shows each property's answer and the cells; interface B's getcalendar then
// answers the new values on exactly those 5 × 14 dates, every other date of the 20
// properties as before; a second bulk edit clears them and getcalendar answers as before
// everywhere.
func TestMultiCalendarBulkEdit(t *testing.T) {
	o := newOwner(t)
	props := o.addProperties(t, 20, bulkCity)
	// The window read back is wider than the one edited, on both sides.
	from, to := day(10), day(23)
	readFrom, readTo := day(7), day(27)

	// The calendars before: once the catalog has every property with its rates.
	var before []map[string]map[string]json.RawMessage
	calendarsUntil(t, props, readFrom, readTo, func(cals []map[string]map[string]json.RawMessage) []string {
		var wrong []string
		for i, c := range cals {
			if len(c) != 21 || string(c[from]["price"]) == "0" || string(c[from]["price"]) == `"0"` {
				wrong = append(wrong, props[i].Code+": no calendar with prices yet")
			}
		}
		before = cals
		return wrong
	})
	for _, field := range []string{"minimumstay_through", "maximumstay", "closed_to_arrival", "closed_to_departure", "stop_sell"} {
		if _, ok := before[0][from][field]; !ok {
			t.Fatalf("getcalendar's day has no %s: %s", field, mustJSON(before[0][from]))
		}
	}

	p := &page{t: t, ctx: browser.Start(t), dir: shots(t)}
	p.open("/panel/login")
	p.fill("email", o.Email, "password", o.Password)
	p.press("Sign in")
	p.expect("h1", "Dashboard")
	p.do(chromedp.Click(`//a[normalize-space()="Multi-calendar"]`))
	p.expect("h1", "Multi-property calendar")
	p.open("/panel/multicalendar?city=" + bulkCity + "&from=" + from)
	p.expect("#window", from+" to "+to)
	if n := p.count(`table.multi tbody tr[data-code]`); n != 20 {
		t.Fatalf("%d rows in %s, want 20", n, bulkCity)
	}
	// "Select every property shown" ticks and unticks the rows (panel.js).
	p.do(chromedp.Click(chromedp.CSS("#select-all")))
	p.waitCount(`input[name=property]:checked`, 20)
	p.do(chromedp.Click(chromedp.CSS("#select-all")))
	p.waitCount(`input[name=property]:checked`, 0)

	// Nothing ticked: the panel says so and sends nothing.
	p.fill("set[min_stay_arrival]", "3")
	p.press("Apply to the ticked properties")
	p.expect("#property-err", "Select at least one property.")

	edited := []owner{props[1], props[4], props[9], props[13], props[19]}
	for _, e := range edited {
		p.do(chromedp.Click(chromedp.CSS("#p-" + e.Code)))
	}
	p.fill("start_date", from, "end_date", to, "set[min_stay_arrival]", "3", "set[closed_to_arrival]", "on")
	p.press("Apply to the ticked properties")
	p.expect("#results-title", "Bulk edit: 5 of 5 properties changed")
	for _, e := range edited {
		p.expect(fmt.Sprintf(`#bulk-results tr[data-code=%q]`, e.Code), "OK: 14 dates changed")
	}
	p.shot("multicalendar-bulk")

	isEdited := func(code string) bool {
		return slices.ContainsFunc(edited, func(e owner) bool { return e.Code == code })
	}
	inWindow := func(date string) bool { return date >= from && date <= to }
	calendarsUntil(t, props, readFrom, readTo, func(cals []map[string]map[string]json.RawMessage) []string {
		var wrong []string
		for i, c := range cals {
			for date, was := range before[i] {
				now := c[date]
				if !isEdited(props[i].Code) || !inWindow(date) {
					if !sameDay(was, now) {
						wrong = append(wrong, fmt.Sprintf("%s %s changed: %s → %s", props[i].Code, date, mustJSON(was), mustJSON(now)))
					}
					continue
				}
				if string(now["minimumstay"]) != "3" || string(now["closed_to_arrival"]) != "true" {
					wrong = append(wrong, fmt.Sprintf("%s %s: %s, want minimumstay 3 and closed_to_arrival", props[i].Code, date, mustJSON(now)))
				}
				// Nothing else of the day changes but what CTA implies (no check-in).
				rest := maps.Clone(now)
				for _, k := range []string{"minimumstay", "closed_to_arrival", "check_in_out_type"} {
					rest[k] = was[k]
				}
				if !sameDay(was, rest) {
					wrong = append(wrong, fmt.Sprintf("%s %s: more changed than the edit: %s → %s", props[i].Code, date, mustJSON(was), mustJSON(now)))
				}
			}
		}
		return wrong
	})

	// The grid shows the edit once the catalog has it.
	cell := fmt.Sprintf(`tr[data-code=%q] td[data-date=%q]`, edited[0].Code, from)
	deadline := time.Now().Add(viewsWithin)
	for {
		p.open("/panel/multicalendar?city=" + bulkCity + "&from=" + from)
		got := p.text(cell)
		if strings.Contains(got, "min 3") && strings.Contains(got, "CTA") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cell %s shows %q, want min 3 and CTA", cell, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	other := fmt.Sprintf(`tr[data-code=%q] td[data-date=%q]`, props[0].Code, from)
	if got := p.text(other); strings.Contains(got, "CTA") || strings.Contains(got, "min 3") {
		t.Fatalf("an unedited property's cell shows %q", got)
	}
	p.shot("multicalendar-edited")

	// Clear what was set: every date reverts to the rates' defaults, as before.
	for _, e := range edited {
		p.do(chromedp.Click(chromedp.CSS("#p-" + e.Code)))
	}
	p.fill("start_date", from, "end_date", to)
	p.do(chromedp.Click(chromedp.CSS(`input[name=clear][value=all]`)))
	p.press("Apply to the ticked properties")
	p.expect("#results-title", "Bulk edit: 5 of 5 properties changed")
	calendarsUntil(t, props, readFrom, readTo, func(cals []map[string]map[string]json.RawMessage) []string {
		var wrong []string
		for i, c := range cals {
			for date, was := range before[i] {
				if !sameDay(was, c[date]) {
					wrong = append(wrong, fmt.Sprintf("%s %s after the clear: %s, want %s", props[i].Code, date, mustJSON(c[date]), mustJSON(was)))
				}
			}
		}
		return wrong
	})
}

// sameDay: two getcalendar days say the same.
func sameDay(a, b map[string]json.RawMessage) bool {
	return maps.EqualFunc(a, b, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// count is how many elements match css now.
func (p *page) count(css string) int {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, css)))
	if err != nil {
		p.t.Fatalf("count %s: %v", css, err)
	}
	return n
}

// waitCount waits until n elements match css.
func (p *page) waitCount(css string, n int) {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := p.count(css)
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%d elements match %s, want %d", got, css, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
