package panel

import (
	"errors"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/httpapi"
)

// The multi-property calendar (docs/panel.md, docs/rate-plans.md "Panel"): rows are the
// account's properties, filtered by brand and city, columns the days of a window; each row
// is read through readCalendars, the month grid's code path. Bulk edit sends one
// /api/property-restriction per property selected.

const (
	// propertyPages bounds the property list read for the filters (pages of 100): the
	// calendar shows at most the account's first 2000 properties by code, and says so.
	propertyPages = 20
	// defaultRows is the rows of a page unless ?rows= asks for more: each row is one
	// getcalendar call, counted against the account's rate like an API request.
	defaultRows = 25
	multiPath   = "/panel/multicalendar"
)

// The choices of the page: rows per page, days shown.
var (
	rowChoices = []int{25, 50, 100}
	dayChoices = []int{14, 31}
)

// multiQuery is the window and the filters the page shows: from its query on a GET, from the
// bulk form's hidden fields on a POST.
type multiQuery struct {
	From  time.Time
	Days  int
	Brand int64
	City  string
	Page  int
	Rows  int
}

// readMultiQuery reads the page's parameters through get; a missing one takes its default
// (from: today, 14 days, 25 rows, page 1), a malformed one is refused.
func readMultiQuery(get func(string) string, today time.Time) (multiQuery, error) {
	q := multiQuery{From: today, Days: dayChoices[0], Page: 1, Rows: defaultRows, City: strings.TrimSpace(get("city"))}
	bad := func(msg string) (multiQuery, error) {
		return multiQuery{}, &httpapi.Error{HTTP: fiber.StatusBadRequest, Message: msg}
	}
	if s := get("from"); s != "" {
		t, err := time.Parse(time.DateOnly, s)
		if err != nil || t.Year() < 2000 || t.Year() > 2100 {
			return bad("from must be a date YYYY-MM-DD, such as 2027-01-31")
		}
		q.From = t
	}
	if s := get("days"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || !slices.Contains(dayChoices, n) {
			return bad("days must be 14 or 31")
		}
		q.Days = n
	}
	if s := get("rows"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || !slices.Contains(rowChoices, n) {
			return bad("rows must be 25, 50 or 100")
		}
		q.Rows = n
	}
	if s := get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			return bad("page must be a whole number from 1")
		}
		q.Page = n
	}
	if s := get("brand"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			return bad("brand must be the id of one of your brands")
		}
		q.Brand = n
	}
	if len(q.City) > 200 {
		return bad("city must be at most 200 characters")
	}
	return q, nil
}

// values are q as a query (the defaults left out).
func (q multiQuery) values() url.Values {
	v := url.Values{"from": {q.From.Format(time.DateOnly)}}
	if q.Days != dayChoices[0] {
		v.Set("days", strconv.Itoa(q.Days))
	}
	if q.Rows != defaultRows {
		v.Set("rows", strconv.Itoa(q.Rows))
	}
	if q.Page > 1 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	if q.Brand > 0 {
		v.Set("brand", strconv.FormatInt(q.Brand, 10))
	}
	if q.City != "" {
		v.Set("city", q.City)
	}
	return v
}

// link is the page showing q.
func (q multiQuery) link() string { return multiPath + "?" + q.values().Encode() }

// accountSettings is what the panel reads of the account's settings.
type accountSettings struct {
	Timezone string           `json:"timezone"`
	Brands   []contract.Brand `json:"brands"`
}

func (s accountSettings) location() *time.Location {
	if loc, err := time.LoadLocation(s.Timezone); err == nil && s.Timezone != "" {
		return loc
	}
	return time.UTC
}

// allProperties reads the account's properties, sorted by code, at most propertyPages pages
// of 100; partial reports that there were more.
func (p *Panel) allProperties(a asker) ([]propertyItem, bool, error) {
	var out []propertyItem
	for page := 1; page <= propertyPages; page++ {
		var list propertyPage
		if err := p.mustAs(a, gateway.InterfaceA, "property", map[string]any{"action": "list", "page": page, "limit": 100}, &list); err != nil {
			return nil, false, err
		}
		out = append(out, list.Properties...)
		if len(list.Properties) < 100 || page*100 >= list.Total {
			return out, false, nil
		}
	}
	return out, true, nil
}

// dateHead is a column of the multi-property calendar.
type dateHead struct {
	Date, Dow        string
	Num              int
	Weekend, IsToday bool
}

// multiRow is a row of the multi-property calendar.
type multiRow struct {
	Code, Name, City string
	Days             []Day
	// Problem is getcalendar's refusal of the property (no rates yet, say).
	Problem string
}

// bulkResult is what one property's /api/property-restriction answered.
type bulkResult struct {
	Code    string
	OK      bool
	Dates   int
	Message string
}

type multiData struct {
	Q                                       multiQuery
	From, To                                string
	Dates                                   []dateHead
	Rows                                    []multiRow
	Brands                                  []contract.Brand
	Cities                                  []string
	Total, Page, Pages                      int
	Partial                                 bool
	PrevMonth, PrevWeek, Today              string
	NextWeek, NextMonth, PrevPage, NextPage string
	DayChoices, RowChoices                  []int
	Weekdays                                []string
	Members                                 []bulkMember
	// The bulk form's state: the properties, weekdays and members ticked, and the answers.
	Selected, Ticked, Cleared map[string]bool
	Results                   []bulkResult
	ResultsOK                 int
	Currency                  string
}

func (p *Panel) multiCalendar(c *fiber.Ctx) error {
	return p.multiView(c, func(k string) string { return strings.Clone(c.Query(k)) }, nil, "", nil, nil)
}

// multiView draws the page for the parameters get reads; form is a bulk form sent (its
// values and ticks shown again), results its answers per property.
func (p *Panel) multiView(c *fiber.Ctx, get func(string) string, form url.Values, msg string, errs map[string]string, results []bulkResult) error {
	a := askerOf(c)
	var settings accountSettings
	if err := p.mustAs(a, gateway.InterfaceA, "account-settings", map[string]any{}, &settings); err != nil {
		return err
	}
	loc := settings.location()
	now := time.Now().In(loc)
	todayDate := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	q, err := readMultiQuery(get, todayDate)
	if err != nil {
		return err
	}
	props, partial, err := p.allProperties(a)
	if err != nil {
		return err
	}
	d := multiData{Q: q, Brands: settings.Brands, Partial: partial, DayChoices: dayChoices, RowChoices: rowChoices, Weekdays: weekdayNames, Members: bulkMembers,
		Results: results, Selected: map[string]bool{}, Ticked: map[string]bool{}, Cleared: map[string]bool{}}
	for _, r := range results {
		if r.OK {
			d.ResultsOK++
		}
	}
	d.Cities = citiesOf(props)
	shown := filterProperties(props, settings.Brands, q.Brand, q.City)
	d.Total = len(shown)
	d.Pages = max((len(shown)+q.Rows-1)/q.Rows, 1)
	q.Page = min(q.Page, d.Pages)
	d.Q = q
	shown = shown[min((q.Page-1)*q.Rows, len(shown)):min(q.Page*q.Rows, len(shown))]

	last := q.From.AddDate(0, 0, q.Days-1)
	d.From, d.To = q.From.Format(time.DateOnly), last.Format(time.DateOnly)
	todayS := todayDate.Format(time.DateOnly)
	for t := q.From; !t.After(last); t = t.AddDate(0, 0, 1) {
		ds := t.Format(time.DateOnly)
		d.Dates = append(d.Dates, dateHead{Date: ds, Dow: t.Format("Mon"), Num: t.Day(),
			Weekend: t.Weekday() == time.Saturday || t.Weekday() == time.Sunday, IsToday: ds == todayS})
	}
	at := func(from time.Time, page int) string {
		r := q
		r.From, r.Page = from, page
		return r.link()
	}
	d.PrevMonth, d.PrevWeek, d.Today = at(q.From.AddDate(0, -1, 0), q.Page), at(q.From.AddDate(0, 0, -7), q.Page), at(todayDate, q.Page)
	d.NextWeek, d.NextMonth = at(q.From.AddDate(0, 0, 7), q.Page), at(q.From.AddDate(0, 1, 0), q.Page)
	if q.Page > 1 {
		d.PrevPage = at(q.From, q.Page-1)
	}
	if q.Page < d.Pages {
		d.NextPage = at(q.From, q.Page+1)
	}

	cps := make([]calendarProp, 0, len(shown))
	for _, it := range shown {
		id, _ := strconv.ParseInt(it.PropertyID, 10, 64)
		cps = append(cps, calendarProp{Code: it.InternalCode, ID: id})
	}
	cal, err := p.readCalendars(a, cps, q.From, last, todayS)
	if err != nil {
		return err
	}
	for i, it := range shown {
		row := multiRow{Code: it.InternalCode, Name: it.Name, City: it.City, Days: cal[i].Days}
		if e := cal[i].Err; e != nil {
			row.Problem = problemOf(e)
		}
		if d.Currency == "" {
			d.Currency = cal[i].Currency
		}
		d.Rows = append(d.Rows, row)
	}

	values := map[string]string{"start_date": d.From, "end_date": d.To}
	if form == nil {
		for _, w := range weekdayNames {
			d.Ticked[w] = true
		}
	} else {
		for k := range form {
			values[k] = form.Get(k)
		}
		for _, code := range form["property"] {
			d.Selected[code] = true
		}
		for _, w := range form["weekday"] {
			d.Ticked[w] = true
		}
		for _, m := range form["clear"] {
			d.Cleared[m] = true
		}
	}
	return p.render(c, "multicalendar", view{Title: "Multi-property calendar", Session: sessionOf(c), Nav: "multicalendar",
		Notice: notice(c), Message: msg, Errors: errs, Values: values, Data: d})
}

// problemOf is the message of a service's refusal shown in a row.
func problemOf(err error) string {
	var he *httpapi.Error
	if errors.As(err, &he) {
		return he.Message
	}
	return "Not found."
}

// citiesOf are the distinct cities of props, sorted ignoring case.
func citiesOf(props []propertyItem) []string {
	seen := map[string]bool{}
	var out []string
	for _, it := range props {
		c := strings.TrimSpace(it.City)
		if c == "" || seen[strings.ToLower(c)] {
			continue
		}
		seen[strings.ToLower(c)] = true
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i]) < strings.ToLower(out[j]) })
	return out
}

// filterProperties keeps the properties of brand (0: any; a brand that lists no property
// shows every property, as its websites do: docs/brands.md) in city (any case; "": any).
func filterProperties(props []propertyItem, brands []contract.Brand, brand int64, city string) []propertyItem {
	var ids map[int64]bool
	if brand > 0 {
		ids = map[int64]bool{}
		for _, b := range brands {
			if int64(b.ID) != brand {
				continue
			}
			if len(b.Properties) == 0 {
				ids = nil // every property
				break
			}
			for _, id := range b.Properties {
				ids[id] = true
			}
		}
	}
	var out []propertyItem
	for _, it := range props {
		if city != "" && !strings.EqualFold(strings.TrimSpace(it.City), city) {
			continue
		}
		if ids != nil {
			id, _ := strconv.ParseInt(it.PropertyID, 10, 64)
			if !ids[id] {
				continue
			}
		}
		out = append(out, it)
	}
	return out
}

// postValues are the posted form's fields, every value of each (copied: fasthttp's buffers
// are the request's).
func postValues(c *fiber.Ctx) url.Values {
	v := url.Values{}
	c.Context().PostArgs().VisitAll(func(k, val []byte) {
		v.Add(string(k), string(val))
	})
	return v
}

// bulkEdit sends a bulk edit: one /api/property-restriction per property selected, at most
// callsAtOnce at a time, then the page again with each property's answer and the grid read
// again. The panel checks the form first (bulkForm); the API is the authority.
func (p *Panel) bulkEdit(c *fiber.Ctx) error {
	f := postValues(c)
	get := func(k string) string { return f.Get(k) }
	edit, errs := parseBulk(f)
	if len(errs) > 0 {
		c.Status(fiber.StatusBadRequest)
		msg := errs[""]
		delete(errs, "")
		return p.multiView(c, get, f, msg, errs, nil)
	}
	a := askerOf(c)
	results := make([]bulkResult, len(edit.Codes))
	failed := make([]error, len(edit.Codes))
	each(len(edit.Codes), func(i int) {
		code := edit.Codes[i]
		results[i].Code = code
		o, err := p.callAs(a, gateway.InterfaceA, "property-restriction", edit.body(code))
		if err != nil {
			var he *httpapi.Error
			if !errors.As(err, &he) {
				failed[i] = err
				return
			}
			results[i].Message = he.Message // edge's own refusal (the account's rate)
			return
		}
		if !o.OK {
			results[i].Message = o.Message
			if len(o.Details) > 0 {
				results[i].Message += ": " + strings.Join(o.Details, "; ")
			}
			return
		}
		var ans struct {
			Dates int `json:"dates"`
		}
		_ = unmarshal(o.Data, &ans)
		results[i].OK, results[i].Dates = true, ans.Dates
	})
	for _, err := range failed {
		if err != nil {
			return err
		}
	}
	msg, status := "", fiber.StatusOK
	for _, r := range results {
		if !r.OK {
			msg, status = "Some properties were not changed: see their answers below.", fiber.StatusBadRequest
			break
		}
	}
	c.Status(status)
	return p.multiView(c, get, f, msg, nil, results)
}
