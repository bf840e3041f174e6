package e2e

// Helpers of the rate plan and restriction tests (restrictions_e2e_test.go,
// restrictions_property_test.go): the new answer fields as a client reads them, requests
// that may be sent from any goroutine, and the rule engine (libs/pricing) fed with the
// property exactly as property-svc publishes it.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/systest/apitest"
)

// rpDay is a getcalendar day with the fields docs/rate-plans.md appends.
type rpDay struct {
	Date              string          `json:"date"`
	Availability      string          `json:"availability"`
	Price             decimal.Decimal `json:"price"`
	MinimumStay       int             `json:"minimumstay"`
	CheckInOut        *int            `json:"check_in_out_type"`
	MinimumStayThru   *int            `json:"minimumstay_through"`
	MaximumStay       *int            `json:"maximumstay"`
	ClosedToArrival   *bool           `json:"closed_to_arrival"`
	ClosedToDeparture *bool           `json:"closed_to_departure"`
	StopSell          *bool           `json:"stop_sell"`
}

// checkinAllowed and checkoutAllowed read check_in_out_type (docs/catalog.md): 0 both, 1
// check-in only, 2 check-out only, 3 neither.
func (d rpDay) checkinAllowed() bool {
	return d.CheckInOut != nil && (*d.CheckInOut == 0 || *d.CheckInOut == 1)
}
func (d rpDay) checkoutAllowed() bool {
	return d.CheckInOut != nil && (*d.CheckInOut == 0 || *d.CheckInOut == 2)
}

func intOf(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

func boolOf(p *bool) string {
	if p == nil {
		return "absent"
	}
	return strconv.FormatBool(*p)
}

// calendarRefusal reads a stay from a calendar as a client does (docs/rate-plans.md,
// getcalendar): the check-in day allows check-in, every night is available and the stay is at
// least its minimumstay_through, the stay is at least the check-in day's minimumstay and at
// most its maximumstay (0: none), and the departure day allows check-out. It answers the
// field the engine blames for the first rule broken, in the engine's order ("" when the
// stay is sellable), or an error when the calendar lacks a day.
func calendarRefusal(days map[string]rpDay, in, out pricing.Date) (string, error) {
	get := func(d pricing.Date) (rpDay, error) {
		x, ok := days[d.String()]
		if !ok {
			return x, fmt.Errorf("the calendar has no day %s", d)
		}
		return x, nil
	}
	nights := pricing.DaysBetween(in, out)
	first, err := get(in)
	if err != nil {
		return "", err
	}
	last, err := get(out)
	if err != nil {
		return "", err
	}
	through := 0
	for d := in; d.Before(out); d = d.AddDays(1) {
		x, err := get(d)
		if err != nil {
			return "", err
		}
		if x.Availability != "true" {
			return "checkin", nil // StopSell (no booking holds a night here)
		}
		through = max(through, intOf(x.MinimumStayThru))
	}
	switch {
	case !first.checkinAllowed():
		return "checkin", nil // ClosedToArrival, CheckinDay
	case !last.checkoutAllowed():
		return "checkout", nil // ClosedToDeparture, CheckoutDay
	case nights < first.MinimumStay || nights < through:
		return "checkout", nil // MinimumStay
	case intOf(first.MaximumStay) > 0 && nights > intOf(first.MaximumStay):
		return "checkout", nil // MaximumStay
	}
	return "", nil
}

// rpPolicy is a cancellationPolicy as getinfo and the B2 booking object carry it.
type rpPolicy struct {
	Policy string `json:"policy"`
	Tiers  []struct {
		DaysBefore int             `json:"days_before"`
		Percent    decimal.Decimal `json:"percent"`
	} `json:"tiers"`
}

// rpQuote is the part of a getinfo answer or a B2 booking object these tests read.
type rpQuote struct {
	BookingID          int64                      `json:"bookingId"`
	TotalRent          decimal.Decimal            `json:"totalRent"`
	GrandTotal         decimal.Decimal            `json:"grandTotal"`
	QtyOfNights        int                        `json:"qtyofnights"`
	NightlyDetail      map[string]decimal.Decimal `json:"nightlyPriceDetail"`
	RatePlanID         *int64                     `json:"ratePlanId"`
	RatePlanName       *string                    `json:"ratePlanName"`
	Inclusions         *string                    `json:"inclusions"`
	CancellationPolicy *rpPolicy                  `json:"cancellationPolicy"`
	Channel            *string                    `json:"channel"`
	RatePlans          []struct {
		RatePlanID         int64           `json:"ratePlanId"`
		RatePlanName       string          `json:"ratePlanName"`
		Inclusions         string          `json:"inclusions"`
		CancellationPolicy rpPolicy        `json:"cancellationPolicy"`
		TotalRent          decimal.Decimal `json:"totalRent"`
		GrandTotal         decimal.Decimal `json:"grandTotal"`
	} `json:"ratePlans"`
}

// bReply is an interface B answer: its envelope, the violations it names and its data.
type bReply struct {
	HTTP    int
	Body    []byte
	Status  int             `json:"status"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
	Errors  []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"errors"`
}

// names reports whether the answer is status 4 naming field with message.
func (r bReply) names(field, message string) bool {
	if r.Status != 4 {
		return false
	}
	for _, e := range r.Errors {
		if e.Field == field && e.Message == message {
			return true
		}
	}
	return false
}

// sendEdge sends a request through edge; it may be called from any goroutine (no
// testing.T). A 429 (an account's bucket before its plan's rate reaches edge) is retried
// when its Retry-After says, as a client does.
func sendEdge(method, path string, headers map[string]string, body string) (apitest.Response, error) {
	for try := 0; ; try++ {
		r, err := apitest.Send(http.DefaultClient, method, st.EdgeURL+path, headers, body)
		if err != nil || r.Code != http.StatusTooManyRequests || try == 30 {
			return r, err
		}
		wait, _ := strconv.Atoi(r.Header.Get("Retry-After"))
		time.Sleep(time.Duration(max(wait, 1)) * time.Second)
	}
}

// bSend sends an interface B action as acc, from any goroutine.
func (acc account) bSend(action string, fields obj) (bReply, error) {
	r, err := sendEdge(http.MethodPost, "/vros/external-booking", nil, acc.BBody(action, fields))
	if err != nil {
		return bReply{}, err
	}
	a := bReply{HTTP: r.Code, Body: r.Body}
	if err := json.Unmarshal(r.Body, &a); err != nil {
		return a, fmt.Errorf("%s: HTTP %d %s: %v", action, r.Code, r.Body, err)
	}
	return a, nil
}

// bData sends an action that must succeed and decodes its data into v.
func (acc account) bData(action string, fields obj, v any) error {
	a, err := acc.bSend(action, fields)
	if err != nil {
		return err
	}
	if a.HTTP != http.StatusOK || a.Status != 0 {
		return fmt.Errorf("%s %v: HTTP %d %s", action, fields, a.HTTP, a.Body)
	}
	if v != nil {
		if err := json.Unmarshal(a.Data, v); err != nil {
			return fmt.Errorf("%s: data %s: %v", action, a.Data, err)
		}
	}
	return nil
}

// rpSearch is what search-rental lists for a stay: property id → totalRent.
func (acc account) rpSearch(fields url.Values) (map[string]decimal.Decimal, error) {
	r, err := sendEdge(http.MethodPost, "/vros/api/search-rental/owner_token/"+acc.OwnerToken,
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, fields.Encode())
	if err != nil {
		return nil, err
	}
	var out struct {
		Count      int `json:"property_count"`
		Properties []struct {
			ID        string          `json:"id"`
			TotalRent decimal.Decimal `json:"totalRent"`
		} `json:"properties"`
	}
	if r.Code != http.StatusOK || json.Unmarshal(r.Body, &out) != nil || bError(r.Body) {
		return nil, fmt.Errorf("search-rental %v: HTTP %d %s", fields, r.Code, r.Body)
	}
	listed := map[string]decimal.Decimal{}
	for _, p := range out.Properties {
		listed[p.ID] = p.TotalRent
	}
	if out.Count != len(listed) {
		return nil, fmt.Errorf("search-rental %v: property_count %d, %d listed: %s", fields, out.Count, len(listed), r.Body)
	}
	return listed, nil
}

// rpCalendar reads a property's getcalendar from first to last, on a rate plan (0: the
// standard plan, sent without ratePlanId), by date.
func (acc account) rpCalendar(pid int, plan int64, first, last pricing.Date) (map[string]rpDay, error) {
	fields := obj{"propertyId": acc.AccountID + "_" + strconv.Itoa(pid), "startDate": first.String(), "endDate": last.String()}
	if plan != 0 {
		fields["ratePlanId"] = plan
	}
	var days []rpDay
	if err := acc.bData("getcalendar", fields, &days); err != nil {
		return nil, err
	}
	out := make(map[string]rpDay, len(days))
	for _, d := range days {
		out[d.Date] = d
	}
	if want := pricing.DaysBetween(first, last) + 1; len(out) != want {
		return nil, fmt.Errorf("getcalendar %v: %d days, want %d", fields, len(out), want)
	}
	return out, nil
}

// propertyRead is the property as A1 get answers it: the contract Property every service
// prices (docs/interface-a.md, "/api/property get and list").
func (acc account) propertyRead(t *testing.T, code string) contract.Property {
	t.Helper()
	r := acc.a(t, "property", obj{"action": "get", "property": obj{"internal_code": code}})
	r.status(t, http.StatusOK)
	var out struct {
		Data contract.Property `json:"data"`
	}
	r.decode(t, &out)
	return out.Data
}

// engineOf is the rule engine's Property for acc's property code, as the services price it
// (pricing.Priced of the property as published, under settings).
func (acc account) engineOf(t *testing.T, code string, settings contract.Settings) (pricing.Property, contract.Property) {
	t.Helper()
	snap := acc.propertyRead(t, code)
	p, err := pricing.Priced(snap, settings)
	if err != nil {
		t.Fatalf("pricing.Priced(%s): %v", code, err)
	}
	return p, snap
}

// ruleQuote is the engine's answer for a stay on plan for channel ("" direct), two adults.
func ruleQuote(p pricing.Property, in, out pricing.Date, plan int64, channel string) (pricing.Result, *pricing.RuleError, error) {
	res, err := pricing.Quote(p, pricing.Request{Checkin: in, Checkout: out, Adults: 2, Now: time.Now(), Plan: plan, Channel: channel})
	var re *pricing.RuleError
	if errors.As(err, &re) {
		return res, re, nil
	}
	return res, nil, err
}

// pool runs jobs on at most n goroutines and collects what they report: failures by
// surface, counted, the first keep of each surface kept in order of arrival.
type pool struct {
	mu       sync.Mutex
	keep     int
	failed   map[string]int
	failures []string
}

func (p *pool) fail(surface, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed == nil {
		p.failed = map[string]int{}
	}
	p.failed[surface]++
	if p.failed[surface] <= p.keep {
		p.failures = append(p.failures, surface+": "+fmt.Sprintf(format, args...))
	}
}

// report is "" without failures, else their counts by surface and those kept.
func (p *pool) report() string {
	if len(p.failed) == 0 {
		return ""
	}
	var counts []string
	for s, n := range p.failed {
		counts = append(counts, fmt.Sprintf("%s %d", s, n))
	}
	sort.Strings(counts)
	return strings.Join(counts, ", ") + "; the first of each:\n" + strings.Join(p.failures, "\n")
}

// run runs every job, at most n at once, and returns when all have.
func (p *pool) run(n int, jobs []func()) {
	ch := make(chan func())
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				j()
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
}

// aSend sends an interface A request as acc, from any goroutine; an answer other than 200
// is an error.
func (acc account) aSend(resource string, body any, out any) error {
	r, err := sendEdge(http.MethodPost, "/api/"+resource, acc.AHeaders(), jsonText(body))
	if err != nil {
		return err
	}
	if r.Code != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d %s", resource, jsonText(body), r.Code, r.Body)
	}
	if out != nil {
		if err := json.Unmarshal(r.Body, out); err != nil {
			return fmt.Errorf("%s: %s: %v", resource, r.Body, err)
		}
	}
	return nil
}
