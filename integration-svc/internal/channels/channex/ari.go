package channex

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
)

// availabilityValue is one change object of POST /api/v1/availability.
type availabilityValue struct {
	PropertyID   string `json:"property_id"`
	RoomTypeID   string `json:"room_type_id"`
	Date         string `json:"date,omitempty"`
	DateFrom     string `json:"date_from,omitempty"`
	DateTo       string `json:"date_to,omitempty"`
	Availability int    `json:"availability"`
}

// restrictionValue is one change object of POST /api/v1/restrictions: the rate and every
// restriction, always all of them (vros sends the whole state of the dates).
type restrictionValue struct {
	PropertyID        string `json:"property_id"`
	RatePlanID        string `json:"rate_plan_id"`
	Date              string `json:"date,omitempty"`
	DateFrom          string `json:"date_from,omitempty"`
	DateTo            string `json:"date_to,omitempty"`
	Rate              string `json:"rate,omitempty"`
	MinStayArrival    int    `json:"min_stay_arrival"`
	MinStayThrough    int    `json:"min_stay_through"`
	MaxStay           int    `json:"max_stay"`
	ClosedToArrival   bool   `json:"closed_to_arrival"`
	ClosedToDeparture bool   `json:"closed_to_departure"`
	StopSell          bool   `json:"stop_sell"`
}

// dates sets a value's dates: date for a single day, date_from/date_to for a range.
func dates(from, to channel.Date) (date, dfrom, dto string) {
	if from == to {
		return from, "", ""
	}
	return "", from, to
}

var decimalRE = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]{1,2})?$`)

// chunk is one request's change objects and the ranges they carry.
type chunk struct {
	body     []byte
	from, to channel.Date
	avail    []channel.Availability
	rates    []channel.Rate
}

// pack groups encoded change objects into bodies {"values":[…]} of at most maxBody bytes
// and maxValues objects (0: no bound), in order.
func (a *Adapter) pack(values [][]byte, ranges func(i int) (channel.Date, channel.Date), add func(c *chunk, i int)) ([]chunk, error) {
	const frame = len(`{"values":[]}`)
	var out []chunk
	var cur *chunk
	var parts [][]byte
	size := 0
	flush := func() {
		if cur == nil {
			return
		}
		body := make([]byte, 0, size)
		body = append(body, `{"values":[`...)
		for i, p := range parts {
			if i > 0 {
				body = append(body, ',')
			}
			body = append(body, p...)
		}
		body = append(body, `]}`...)
		cur.body = body
		out = append(out, *cur)
		cur, parts, size = nil, nil, 0
	}
	for i, v := range values {
		if frame+len(v) > a.maxBody {
			return nil, fmt.Errorf("channex: one change object is %d bytes, over the %d-byte request limit", len(v), a.maxBody)
		}
		if cur != nil && (size+1+len(v) > a.maxBody || (a.maxValues > 0 && len(parts) >= a.maxValues)) {
			flush()
		}
		if cur == nil {
			cur, size = &chunk{}, frame
		} else {
			size++ // the comma
		}
		parts = append(parts, v)
		size += len(v)
		from, to := ranges(i)
		if cur.from == "" || from < cur.from {
			cur.from = from
		}
		if to > cur.to {
			cur.to = to
		}
		add(cur, i)
	}
	flush()
	return out, nil
}

// PushARI sends b's availability (POST /api/v1/availability) and then its rates and
// restrictions (POST /api/v1/restrictions, both in the same change objects), each in as
// many requests as the size limits need, each within the property's rate limits.
func (a *Adapter) PushARI(ctx context.Context, b channel.Batch, wait func(ctx context.Context, kind string) error,
	sent func(avail []channel.Availability, rates []channel.Rate) error, record func(channel.Exchange)) error {
	m := b.Mapping
	if m.RemotePropertyID == "" || m.RoomTypeID == "" {
		return &channel.RemoteError{Message: "the mapping names no Channex property or room type"}
	}
	avail := make([][]byte, len(b.Availability))
	for i, av := range b.Availability {
		if av.From == "" || av.To < av.From || av.Available < 0 {
			return fmt.Errorf("channex: availability range %+v", av)
		}
		v := availabilityValue{PropertyID: m.RemotePropertyID, RoomTypeID: m.RoomTypeID, Availability: av.Available}
		v.Date, v.DateFrom, v.DateTo = dates(av.From, av.To)
		avail[i], _ = json.Marshal(v)
	}
	rates := make([][]byte, len(b.Rates))
	for i, r := range b.Rates {
		if r.RemoteRatePlanID == "" || r.From == "" || r.To < r.From {
			return fmt.Errorf("channex: rate range %+v", r)
		}
		if r.Rate != "" && !decimalRE.MatchString(r.Rate) {
			return fmt.Errorf("channex: rate %q of %s..%s is not a decimal amount", r.Rate, r.From, r.To)
		}
		v := restrictionValue{PropertyID: m.RemotePropertyID, RatePlanID: r.RemoteRatePlanID, Rate: r.Rate,
			// Channex's minimum stays start at 1 (no minimum); vros's 0 means the same.
			MinStayArrival: max(r.MinStayArrival, 1), MinStayThrough: max(r.MinStayThrough, 1),
			MaxStay: max(r.MaxStay, 0), ClosedToArrival: r.ClosedToArrival, ClosedToDeparture: r.ClosedToDeparture,
			StopSell: r.StopSell}
		v.Date, v.DateFrom, v.DateTo = dates(r.From, r.To)
		rates[i], _ = json.Marshal(v)
	}
	availChunks, err := a.pack(avail, func(i int) (channel.Date, channel.Date) {
		return b.Availability[i].From, b.Availability[i].To
	}, func(c *chunk, i int) { c.avail = append(c.avail, b.Availability[i]) })
	if err != nil {
		return err
	}
	rateChunks, err := a.pack(rates, func(i int) (channel.Date, channel.Date) {
		return b.Rates[i].From, b.Rates[i].To
	}, func(c *chunk, i int) { c.rates = append(c.rates, b.Rates[i]) })
	if err != nil {
		return err
	}
	send := func(kind, path string, c chunk) error {
		rec := func(ex channel.Exchange) {
			if ex.Err == nil {
				ex.Warning = warnings(ex.Response)
			}
			if record != nil {
				record(ex)
			}
		}
		body, err := a.limited(ctx, b.Connection, m.RemotePropertyID,
			request{kind: kind, method: "POST", path: path, body: c.body, from: c.from, to: c.to}, wait, rec)
		if err != nil {
			return err
		}
		if !json.Valid(body) {
			return &channel.RemoteError{Status: 200, Retryable: true, Message: "the answer is not JSON: " + cut(string(body), 200)}
		}
		return nil
	}
	for _, c := range availChunks {
		if err := send(channel.KindAvailability, "/api/v1/availability", c); err != nil {
			return err
		}
		if sent != nil {
			if err := sent(c.avail, nil); err != nil {
				return err
			}
		}
	}
	for _, c := range rateChunks {
		if err := send(channel.KindRestrictions, "/api/v1/restrictions", c); err != nil {
			return err
		}
		if sent != nil {
			if err := sent(nil, c.rates); err != nil {
				return err
			}
		}
	}
	return nil
}

// warnings reads meta.warnings of an ARI answer ("" when none), as compact JSON.
func warnings(body []byte) string {
	var ans struct {
		Meta struct {
			Warnings json.RawMessage `json:"warnings"`
		} `json:"meta"`
	}
	if json.Unmarshal(body, &ans) != nil {
		return ""
	}
	w := strings.TrimSpace(string(ans.Meta.Warnings))
	if w == "" || w == "null" || w == "[]" {
		return ""
	}
	return cut(w, 4000)
}
