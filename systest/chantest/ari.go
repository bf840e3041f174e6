package chantest

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// The ARI a channel manager was sent, read back from the requests a Recorder kept, per
// protocol as the channel managers document it (docs/channels.md): Channex's
// POST /api/v1/availability and /api/v1/restrictions, OpenTravel's OTA_HotelAvailNotifRQ
// and OTA_HotelRateAmountNotifRQ in a SOAP envelope.

// Field names of one date's values.
const (
	FAvail          = "availability"
	FRate           = "rate"
	FMinStayArrival = "min_stay_arrival"
	FMinStayThrough = "min_stay_through"
	FMaxStay        = "max_stay"
	FCTA            = "closed_to_arrival"
	FCTD            = "closed_to_departure"
	FStopSell       = "stop_sell"
)

// Update is one value of one date as a request set it: Target is the room type (for
// availability) or the remote rate plan, Value the value as text (a rate as a decimal
// normalised to 2 places, a boolean "true"/"false", a number).
type Update struct {
	Seq      int // the exchange's
	Kind     string
	Property string
	Target   string
	Date     string
	Field    string
	Value    string
}

// Call is one ARI request read back: its kind ("availability", "restrictions", "rates"),
// the property, and the ranges it carried (as sent: one per change object or status
// message), with the updates they make per date.
type Call struct {
	Exchange
	Kind     string
	Property string
	Ranges   []Range
	Updates  []Update
}

// Range is one change object of a request: its target, its first and last dates and the
// fields it set.
type Range struct {
	Target   string
	From, To string
	Values   map[string]string
}

// Dates is every date the call set, sorted, once each.
func (c Call) Dates() []string {
	seen := map[string]bool{}
	for _, u := range c.Updates {
		seen[u.Date] = true
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// ReadCalls reads every ARI request among xs (other requests — feeds, acks, tests — are
// skipped); an ARI request that cannot be read is an error (the fake would have refused it
// too).
func ReadCalls(adapter string, xs []Exchange) ([]Call, error) {
	var out []Call
	for _, x := range xs {
		if x.Held || x.Status == 0 {
			continue
		}
		var (
			c   *Call
			err error
		)
		switch adapter {
		case "channex":
			c, err = readChannex(x)
		case "opentravel":
			c, err = readOTA(x)
		default:
			return nil, fmt.Errorf("adapter %q", adapter)
		}
		if err != nil {
			return nil, fmt.Errorf("request %d %s: %w", x.Seq, x.Path, err)
		}
		if c != nil {
			out = append(out, *c)
		}
	}
	return out, nil
}

// Accepted keeps the calls the fake answered 2xx.
func Accepted(cs []Call) []Call {
	var out []Call
	for _, c := range cs {
		if c.Status >= 200 && c.Status < 300 {
			out = append(out, c)
		}
	}
	return out
}

// State is the ARI a channel manager holds after the calls it accepted, by property, target,
// date and field.
type State map[string]string

func stateKey(property, target, date, field string) string {
	return property + "|" + target + "|" + date + "|" + field
}

// Apply applies the updates of the accepted calls in order.
func (s State) Apply(cs []Call) {
	for _, c := range Accepted(cs) {
		for _, u := range c.Updates {
			s[stateKey(u.Property, u.Target, u.Date, u.Field)] = u.Value
		}
	}
}

// Get is one value ("" when never sent).
func (s State) Get(property, target, date, field string) string {
	return s[stateKey(property, target, date, field)]
}

// Want is a desired value of one date.
type Want struct {
	Target, Date, Field, Value string
}

// Diff lists the desired values the state does not hold.
func (s State) Diff(property string, want []Want) []string {
	var out []string
	for _, w := range want {
		if got := s.Get(property, w.Target, w.Date, w.Field); got != w.Value {
			out = append(out, fmt.Sprintf("%s %s %s: %q, want %q", w.Target, w.Date, w.Field, got, w.Value))
		}
	}
	return out
}

// Dates are the count dates from first, as YYYY-MM-DD.
func Dates(first string, count int) []string {
	d, err := time.Parse(time.DateOnly, first)
	if err != nil {
		panic(err)
	}
	out := make([]string, count)
	for i := range out {
		out[i] = d.AddDate(0, 0, i).Format(time.DateOnly)
	}
	return out
}

// AddDays is date + n days.
func AddDays(date string, n int) string {
	d, err := time.Parse(time.DateOnly, date)
	if err != nil {
		panic(err)
	}
	return d.AddDate(0, 0, n).Format(time.DateOnly)
}

func expand(from, to string, days []string) ([]string, error) {
	a, err := time.Parse(time.DateOnly, from)
	if err != nil {
		return nil, fmt.Errorf("date %q", from)
	}
	b, err := time.Parse(time.DateOnly, to)
	if err != nil {
		return nil, fmt.Errorf("date %q", to)
	}
	if b.Before(a) {
		return nil, fmt.Errorf("range %s..%s ends before it starts", from, to)
	}
	var only map[time.Weekday]bool
	if len(days) > 0 {
		only = map[time.Weekday]bool{}
		for _, d := range days {
			switch strings.ToLower(d)[:2] {
			case "mo":
				only[time.Monday] = true
			case "tu":
				only[time.Tuesday] = true
			case "we":
				only[time.Wednesday] = true
			case "th":
				only[time.Thursday] = true
			case "fr":
				only[time.Friday] = true
			case "sa":
				only[time.Saturday] = true
			case "su":
				only[time.Sunday] = true
			}
		}
	}
	var out []string
	for d := a; !d.After(b); d = d.AddDate(0, 0, 1) {
		if only == nil || only[d.Weekday()] {
			out = append(out, d.Format(time.DateOnly))
		}
	}
	return out, nil
}

// Money is a rate as text with two decimals.
func Money(s string) string {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return "bad:" + s
	}
	return d.StringFixed(2)
}

// readChannex reads Channex's ARI requests (POST /api/v1/availability, /api/v1/restrictions).
func readChannex(x Exchange) (*Call, error) {
	var kind string
	switch {
	case x.Method == "POST" && strings.HasSuffix(x.Path, "/api/v1/availability"):
		kind = "availability"
	case x.Method == "POST" && strings.HasSuffix(x.Path, "/api/v1/restrictions"):
		kind = "restrictions"
	default:
		return nil, nil
	}
	var body struct {
		Values []map[string]json.RawMessage `json:"values"`
	}
	dec := json.NewDecoder(bytes.NewReader(x.Body))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		return nil, err
	}
	c := &Call{Exchange: x, Kind: kind}
	for i, v := range body.Values {
		str := func(k string) string {
			var s string
			if raw, ok := v[k]; ok {
				_ = json.Unmarshal(raw, &s)
			}
			return s
		}
		prop := str("property_id")
		if c.Property == "" {
			c.Property = prop
		}
		target := str("room_type_id")
		if kind == "restrictions" {
			target = str("rate_plan_id")
		}
		from, to := str("date_from"), str("date_to")
		if d := str("date"); d != "" {
			from, to = d, d
		}
		var days []string
		if raw, ok := v["days"]; ok {
			_ = json.Unmarshal(raw, &days)
		}
		dates, err := expand(from, to, days)
		if err != nil {
			return nil, fmt.Errorf("values[%d]: %w", i, err)
		}
		vals := map[string]string{}
		for k, raw := range v {
			switch k {
			case "property_id", "room_type_id", "rate_plan_id", "date", "date_from", "date_to", "days":
				continue
			case "rate":
				var s string
				if json.Unmarshal(raw, &s) != nil {
					s = string(raw) // a number: Channex reads it as the amount
				}
				vals[FRate] = Money(s)
			case "availability", "min_stay_arrival", "min_stay_through", "max_stay", "min_stay":
				vals[k] = strings.Trim(string(raw), `"`)
			case "closed_to_arrival", "closed_to_departure", "stop_sell":
				s := strings.Trim(string(raw), `"`)
				switch s {
				case "1":
					s = "true"
				case "0":
					s = "false"
				}
				vals[k] = s
			default:
				vals[k] = string(raw)
			}
		}
		c.Ranges = append(c.Ranges, Range{Target: target, From: from, To: to, Values: vals})
		for _, d := range dates {
			for f, val := range vals {
				c.Updates = append(c.Updates, Update{Seq: x.Seq, Kind: kind, Property: prop, Target: target, Date: d, Field: f, Value: val})
			}
		}
	}
	return c, nil
}

// xmlNode is any XML element, kept whole (names without their namespace).
type xmlNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []xmlNode  `xml:",any"`
	Text     string     `xml:",chardata"`
}

func (n xmlNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n xmlNode) find(name string) *xmlNode {
	if n.XMLName.Local == name {
		return &n
	}
	for _, c := range n.Children {
		if f := c.find(name); f != nil {
			return f
		}
	}
	return nil
}

func (n xmlNode) all(name string) []xmlNode {
	var out []xmlNode
	for _, c := range n.Children {
		if c.XMLName.Local == name {
			out = append(out, c)
		}
	}
	return out
}

// readOTA reads OpenTravel's ARI messages: OTA_HotelAvailNotifRQ (availability as
// BookingLimit on the room type; per rate plan the restrictions: LengthsOfStay and
// RestrictionStatus) and OTA_HotelRateAmountNotifRQ (BaseByGuestAmt per rate plan).
func readOTA(x Exchange) (*Call, error) {
	if x.Method != "POST" {
		return nil, nil
	}
	var root xmlNode
	if err := xml.Unmarshal(x.Body, &root); err != nil {
		return nil, nil // not XML: not an ARI request of this adapter
	}
	if rq := root.find("OTA_HotelAvailNotifRQ"); rq != nil {
		return readAvailNotif(x, *rq)
	}
	if rq := root.find("OTA_HotelRateAmountNotifRQ"); rq != nil {
		return readRateAmountNotif(x, *rq)
	}
	return nil, nil
}

func readAvailNotif(x Exchange, rq xmlNode) (*Call, error) {
	c := &Call{Exchange: x, Kind: "availability"}
	msgs := rq.find("AvailStatusMessages")
	if msgs == nil {
		return nil, fmt.Errorf("OTA_HotelAvailNotifRQ without AvailStatusMessages")
	}
	c.Property = msgs.attr("HotelCode")
	restrictions := false
	for i, m := range msgs.all("AvailStatusMessage") {
		ctl := m.find("StatusApplicationControl")
		if ctl == nil {
			return nil, fmt.Errorf("AvailStatusMessage %d without StatusApplicationControl", i)
		}
		from, to := ctl.attr("Start"), ctl.attr("End")
		var days []string
		for _, d := range []struct{ attr, day string }{{"Mon", "mo"}, {"Tue", "tu"}, {"Weds", "we"}, {"Thur", "th"}, {"Fri", "fr"}, {"Sat", "sa"}, {"Sun", "su"}} {
			if v := ctl.attr(d.attr); v == "true" || v == "1" {
				days = append(days, d.day)
			}
		}
		dates, err := expand(from, to, days)
		if err != nil {
			return nil, fmt.Errorf("AvailStatusMessage %d: %w", i, err)
		}
		vals := map[string]string{}
		target := ctl.attr("InvTypeCode")
		if bl := m.attr("BookingLimit"); bl != "" {
			vals[FAvail] = bl
		}
		if plan := ctl.attr("RatePlanCode"); plan != "" {
			target = plan
		}
		if los := m.find("LengthsOfStay"); los != nil {
			for _, l := range los.all("LengthOfStay") {
				t := l.attr("Time")
				switch l.attr("MinMaxMessageType") {
				case "SetMinLOS":
					vals[FMinStayArrival] = t
				case "SetForwardMinStay":
					vals[FMinStayThrough] = t
				case "SetMaxLOS":
					vals[FMaxStay] = t
				case "RemoveMinLOS":
					vals[FMinStayArrival] = "0"
				case "RemoveForwardMinStay":
					vals[FMinStayThrough] = "0"
				case "RemoveMaxLOS":
					vals[FMaxStay] = "0"
				}
			}
		}
		for _, rs := range m.all("RestrictionStatus") {
			closed := fmt.Sprint(rs.attr("Status") == "Close")
			switch rs.attr("Restriction") {
			case "Arrival":
				vals[FCTA] = closed
			case "Departure":
				vals[FCTD] = closed
			case "Master", "":
				vals[FStopSell] = closed
			}
		}
		if _, ok := vals[FAvail]; !ok {
			restrictions = true
		}
		c.Ranges = append(c.Ranges, Range{Target: target, From: from, To: to, Values: vals})
		for _, d := range dates {
			for f, v := range vals {
				c.Updates = append(c.Updates, Update{Seq: x.Seq, Kind: c.Kind, Property: c.Property, Target: target, Date: d, Field: f, Value: v})
			}
		}
	}
	if restrictions {
		c.Kind = "restrictions"
		for i := range c.Updates {
			c.Updates[i].Kind = c.Kind
		}
	}
	return c, nil
}

func readRateAmountNotif(x Exchange, rq xmlNode) (*Call, error) {
	c := &Call{Exchange: x, Kind: "rates"}
	msgs := rq.find("RateAmountMessages")
	if msgs == nil {
		return nil, fmt.Errorf("OTA_HotelRateAmountNotifRQ without RateAmountMessages")
	}
	c.Property = msgs.attr("HotelCode")
	for i, m := range msgs.all("RateAmountMessage") {
		ctl := m.find("StatusApplicationControl")
		if ctl == nil {
			return nil, fmt.Errorf("RateAmountMessage %d without StatusApplicationControl", i)
		}
		from, to := ctl.attr("Start"), ctl.attr("End")
		dates, err := expand(from, to, nil)
		if err != nil {
			return nil, fmt.Errorf("RateAmountMessage %d: %w", i, err)
		}
		amt := m.find("BaseByGuestAmt")
		if amt == nil {
			return nil, fmt.Errorf("RateAmountMessage %d without BaseByGuestAmt", i)
		}
		v := amt.attr("AmountAfterTax")
		if v == "" {
			v = amt.attr("AmountBeforeTax")
		}
		if dp := amt.attr("DecimalPlaces"); dp != "" && !strings.Contains(v, ".") {
			if d, err := decimal.NewFromString(v); err == nil {
				var places int32
				fmt.Sscan(dp, &places)
				v = d.Shift(-places).String()
			}
		}
		target := ctl.attr("RatePlanCode")
		vals := map[string]string{FRate: Money(v)}
		c.Ranges = append(c.Ranges, Range{Target: target, From: from, To: to, Values: vals})
		for _, d := range dates {
			c.Updates = append(c.Updates, Update{Seq: x.Seq, Kind: c.Kind, Property: c.Property, Target: target, Date: d, Field: FRate, Value: vals[FRate]})
		}
	}
	return c, nil
}

// Stale finds, per property, target, date and field, a value received after a newer one:
// newer is the order of the values the test wrote (order[value] increasing), so a value
// whose rank is below one received before it was sent stale. Values not in order are not
// judged.
func Stale(cs []Call, field string, order map[string]int) []string {
	best := map[string]int{}
	bestVal := map[string]string{}
	var out []string
	for _, c := range Accepted(cs) {
		for _, u := range c.Updates {
			if u.Field != field {
				continue
			}
			rank, ok := order[u.Value]
			if !ok {
				continue
			}
			k := u.Property + "|" + u.Target + "|" + u.Date
			if b, seen := best[k]; seen && rank < b {
				out = append(out, fmt.Sprintf("%s %s %s: %s (request %d) after %s", u.Target, u.Date, field, u.Value, u.Seq, bestVal[k]))
			}
			if rank >= best[k] {
				best[k], bestVal[k] = rank, u.Value
			}
		}
	}
	return out
}
