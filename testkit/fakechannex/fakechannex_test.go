package fakechannex

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a manual clock for the fake's rate limits and dates.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func call(t *testing.T, s *Server, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("user-api-key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: answer is not JSON: %s", method, path, raw)
	}
	return resp.StatusCode, out
}

func setup(t *testing.T) (*Server, *clock, Property) {
	c := &clock{t: time.Date(2027, 1, 5, 14, 0, 0, 0, time.UTC)}
	s := Start(t, Options{Now: c.Now})
	p := s.CertificationProperty("k1")
	return s, c, p
}

// TestRefusals: each row is a request Channex refuses, and the status the fake answers.
func TestRefusals(t *testing.T) {
	s, _, p := setup(t)
	other := s.CertificationProperty("k2")
	rt, plan := p.RoomTypes[0].ID, p.RoomTypes[0].RatePlans[0]
	av := func(extra string) string {
		return `{"values":[{"property_id":"` + p.ID + `","room_type_id":"` + rt + `","date":"2027-01-10","availability":1` + extra + `}]}`
	}
	for _, tc := range []struct {
		name, method, path, key, body string
		status                        int
	}{
		{"no key → 401", "POST", "/api/v1/availability", "", av(""), 401},
		{"unknown key → 401", "POST", "/api/v1/availability", "nope", av(""), 401},
		{"GET of availability update → 405", "PUT", "/api/v1/availability", "k1", av(""), 405},
		{"unknown path → 404", "GET", "/api/v1/nothing", "k1", "", 404},
		{"unknown field → 422", "POST", "/api/v1/availability", "k1", av(`,"colour":"red"`), 422},
		{"availability as a string → 422", "POST", "/api/v1/availability", "k1",
			`{"values":[{"property_id":"` + p.ID + `","room_type_id":"` + rt + `","date":"2027-01-10","availability":"1"}]}`, 422},
		{"availability 1.5 → 422", "POST", "/api/v1/availability", "k1",
			`{"values":[{"property_id":"` + p.ID + `","room_type_id":"` + rt + `","date":"2027-01-10","availability":1.5}]}`, 422},
		{"no availability → 422", "POST", "/api/v1/availability", "k1",
			`{"values":[{"property_id":"` + p.ID + `","room_type_id":"` + rt + `","date":"2027-01-10"}]}`, 422},
		{"rate in an availability value → 422", "POST", "/api/v1/availability", "k1", av(`,"rate":"10.00"`), 422},
		{"empty values → 422", "POST", "/api/v1/availability", "k1", `{"values":[]}`, 422},
		{"not JSON → 422", "POST", "/api/v1/restrictions", "k1", `{"values":[`, 422},
		{"stop_sell as a string → 422", "POST", "/api/v1/restrictions", "k1",
			`{"values":[{"property_id":"` + p.ID + `","rate_plan_id":"` + plan + `","date":"2027-01-10","stop_sell":"true"}]}`, 422},
		{"room_type_id in a restriction → 422", "POST", "/api/v1/restrictions", "k1",
			`{"values":[{"property_id":"` + p.ID + `","rate_plan_id":"` + plan + `","room_type_id":"` + rt + `","date":"2027-01-10","stop_sell":true}]}`, 422},
		{"feed limit 101 → 400", "GET", "/api/v1/booking_revisions/feed?pagination[limit]=101", "k1", "", 400},
		{"feed unknown parameter → 400", "GET", "/api/v1/booking_revisions/feed?page=2", "k1", "", 400},
		{"ack of unknown revision → 404", "POST", "/api/v1/booking_revisions/" + NewID() + "/ack", "k1", "", 404},
		{"another key's property is unknown → 200 with a warning", "POST", "/api/v1/availability", "k1",
			`{"values":[{"property_id":"` + other.ID + `","room_type_id":"` + other.RoomTypes[0].ID + `","date":"2027-01-10","availability":1}]}`, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := call(t, s, tc.method, tc.path, tc.key, tc.body)
			if code != tc.status {
				t.Fatalf("HTTP %d %v, want %d", code, out, tc.status)
			}
			if code >= 400 {
				if e, ok := out["errors"].(map[string]any); !ok || e["code"] == "" || e["title"] == "" {
					t.Errorf("error body %v is not Channex's {errors:{code,title}}", out)
				}
			}
		})
	}
	if got := len(s.Problems()); got != 17 {
		t.Errorf("Problems: %d calls, want the 17 above", got)
	}
}

// TestValueWarnings: change objects with bad values are left out and reported under
// meta.warnings while the others apply, as Channex documents.
func TestValueWarnings(t *testing.T) {
	s, _, p := setup(t)
	rt, plan := p.RoomTypes[0].ID, p.RoomTypes[0].RatePlans[0]
	otherPlan := p.RoomTypes[1].RatePlans[1]
	body := `{"values":[
	 {"property_id":"` + p.ID + `","rate_plan_id":"` + plan + `","date":"2027-01-10","rate":"120.50"},
	 {"property_id":"` + p.ID + `","rate_plan_id":"` + NewID() + `","date":"2027-01-10","rate":"1.00"},
	 {"property_id":"` + p.ID + `","rate_plan_id":"` + plan + `","date":"2027-02-30","rate":"1.00"},
	 {"property_id":"` + p.ID + `","rate_plan_id":"` + plan + `","date":"2027-01-04","rate":"1.00"},
	 {"property_id":"` + p.ID + `","rate_plan_id":"` + plan + `","date":"2027-01-11","date_from":"2027-01-11","date_to":"2027-01-12","rate":"1.00"},
	 {"property_id":"` + p.ID + `","rate_plan_id":"` + plan + `","rate":"1.00"},
	 {"property_id":"` + p.ID + `","rate_plan_id":"` + plan + `","date":"2027-01-12","rate":"1.001"},
	 {"property_id":"` + p.ID + `","rate_plan_id":"` + plan + `","date":"2027-01-12","min_stay_arrival":0},
	 {"property_id":"` + p.ID + `","rate_plan_id":"` + otherPlan + `","date_from":"2027-01-01","date_to":"2027-01-06","rate":9900,"stop_sell":true}
	]}`
	code, out := call(t, s, "POST", "/api/v1/restrictions", "k1", body)
	if code != 200 {
		t.Fatalf("HTTP %d %v", code, out)
	}
	warns, _ := out["meta"].(map[string]any)["warnings"].([]any)
	if len(warns) != 7 {
		t.Fatalf("warnings %v, want 7 (unknown plan, bad date, past date, date and range, no date, 3 decimals, min stay 0)", warns)
	}
	if data, _ := out["data"].([]any); len(data) != 1 {
		t.Errorf("data %v, want one task for the one property", out["data"])
	}
	r, ok := s.Restriction(p.ID, plan, "2027-01-10")
	if !ok || *r.Rate != "120.50" {
		t.Errorf("rate on 2027-01-10: %+v", r)
	}
	// The range starting in the past was clamped to today (2027-01-05); the integer rate
	// is minor units.
	if _, ok := s.Restriction(p.ID, otherPlan, "2027-01-04"); ok {
		t.Error("a past date was set")
	}
	for _, d := range []string{"2027-01-05", "2027-01-06"} {
		r, ok := s.Restriction(p.ID, otherPlan, d)
		if !ok || *r.Rate != "99.00" || !*r.StopSell {
			t.Errorf("%s: %+v", d, r)
		}
	}
	// A partial change keeps the other fields.
	call(t, s, "POST", "/api/v1/restrictions", "k1", `{"values":[{"property_id":"`+p.ID+`","rate_plan_id":"`+otherPlan+`","date":"2027-01-05","min_stay_arrival":3}]}`)
	if r, _ := s.Restriction(p.ID, otherPlan, "2027-01-05"); *r.Rate != "99.00" || *r.MinStayArrival != 3 {
		t.Errorf("after a partial change: %+v", r)
	}
	if h := s.History(p.ID, otherPlan, "2027-01-05"); len(h) != 2 || h[0].Seq >= h[1].Seq {
		t.Errorf("history %+v", h)
	}
	// Availability with days: only the named weekdays.
	call(t, s, "POST", "/api/v1/availability", "k1", `{"values":[{"property_id":"`+p.ID+`","room_type_id":"`+rt+`","date_from":"2027-01-11","date_to":"2027-01-17","days":["sa","su"],"availability":0}]}`)
	for d, want := range map[string]bool{"2027-01-15": false, "2027-01-16": true, "2027-01-17": true} {
		if _, _, ok := s.Availability(p.ID, rt, d); ok != want {
			t.Errorf("availability on %s set: %v, want %v", d, ok, want)
		}
	}
}

// TestRateLimit: the 11th availability request of a property within a minute is answered
// 429 with Channex's body; restrictions count apart, other properties too; the window
// passes on the fake's clock.
func TestRateLimit(t *testing.T) {
	s, c, p := setup(t)
	q := s.CertificationProperty("k1")
	av := func(prop Property) string {
		return `{"values":[{"property_id":"` + prop.ID + `","room_type_id":"` + prop.RoomTypes[0].ID + `","date":"2027-01-10","availability":1}]}`
	}
	for i := 0; i < RequestsPerWindow; i++ {
		if code, out := call(t, s, "POST", "/api/v1/availability", "k1", av(p)); code != 200 {
			t.Fatalf("request %d: HTTP %d %v", i+1, code, out)
		}
		c.Add(time.Second)
	}
	code, out := call(t, s, "POST", "/api/v1/availability", "k1", av(p))
	if e, _ := out["errors"].(map[string]any); code != 429 || e["code"] != "http_too_many_requests" {
		t.Fatalf("11th: HTTP %d %v, want 429 http_too_many_requests", code, out)
	}
	if code, _ := call(t, s, "POST", "/api/v1/availability", "k1", av(q)); code != 200 {
		t.Errorf("another property: HTTP %d", code)
	}
	if code, _ := call(t, s, "POST", "/api/v1/restrictions", "k1", `{"values":[{"property_id":"`+p.ID+`","rate_plan_id":"`+p.RoomTypes[0].RatePlans[0]+`","date":"2027-01-10","rate":"1.00"}]}`); code != 200 {
		t.Errorf("restrictions of the same property: HTTP %d", code)
	}
	c.Add(51 * time.Second) // the first request is now a minute old
	if code, _ := call(t, s, "POST", "/api/v1/availability", "k1", av(p)); code != 200 {
		t.Errorf("after the window: HTTP %d", code)
	}
}

func TestBodyLimitAndFaults(t *testing.T) {
	c := &clock{t: time.Date(2027, 1, 5, 14, 0, 0, 0, time.UTC)}
	s := Start(t, Options{Now: c.Now, MaxBody: 200})
	p := s.CertificationProperty("k1")
	big := `{"values":[{"property_id":"` + p.ID + `","room_type_id":"` + p.RoomTypes[0].ID + `","date":"2027-01-10","availability":1}` +
		strings.Repeat(" ", 200) + `]}`
	if code, _ := call(t, s, "POST", "/api/v1/availability", "k1", big); code != 413 {
		t.Errorf("over the body limit: HTTP %d, want 413", code)
	}
	s.FailNext(1, Fault{Status: 429, RetryAfter: 30 * time.Second})
	s.FailNext(1, Fault{Path: "/api/v1/booking_revisions", Status: 503})
	req, _ := http.NewRequest("GET", s.URL()+"/api/v1/properties", nil)
	req.Header.Set("user-api-key", "k1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "30" {
		t.Errorf("injected 429: HTTP %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if code, _ := call(t, s, "GET", "/api/v1/properties", "k1", ""); code != 200 {
		t.Errorf("after the fault: HTTP %d", code)
	}
	if code, _ := call(t, s, "GET", "/api/v1/booking_revisions/feed", "k1", ""); code != 503 {
		t.Errorf("path fault: HTTP %d", code)
	}
}

// TestFeed: the feed serves unacknowledged revisions in order, in pages; an ack removes
// one; a redelivery serves it again; Wait wakes on the ack.
func TestFeed(t *testing.T) {
	s, _, p := setup(t)
	var ids []string
	for i := 0; i < 3; i++ {
		r := s.EnqueueRevision(Revision{PropertyID: p.ID, ArrivalDate: "2027-02-01", DepartureDate: "2027-02-03",
			Customer: Customer{Name: "Ada", Surname: "Lovelace"}})
		ids = append(ids, r.ID)
	}
	code, out := call(t, s, "GET", "/api/v1/booking_revisions/feed?pagination[page]=2&pagination[limit]=2", "k1", "")
	data, _ := out["data"].([]any)
	if code != 200 || len(data) != 1 || data[0].(map[string]any)["id"] != ids[2] {
		t.Fatalf("page 2: HTTP %d %v", code, out)
	}
	attrs := data[0].(map[string]any)["attributes"].(map[string]any)
	if attrs["status"] != "new" || attrs["guarantee"].(map[string]any)["card_number"] != TestCard.CardNumber {
		t.Errorf("attributes %v", attrs)
	}
	if meta := out["meta"].(map[string]any); meta["total"] != float64(3) {
		t.Errorf("meta %v", meta)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Wait(ctx, func() bool { return len(s.Acks()) == 1 }) }()
	if code, _ := call(t, s, "POST", "/api/v1/booking_revisions/"+ids[0]+"/ack", "k1", ""); code != 200 {
		t.Fatalf("ack: HTTP %d", code)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := s.Pending(); len(got) != 2 || got[0] != ids[1] {
		t.Errorf("pending after ack %v", got)
	}
	if code, _ := call(t, s, "GET", "/api/v1/booking_revisions/feed", "k2", ""); code != 401 {
		t.Errorf("unknown key reads the feed: %d", code)
	}
	s.Redeliver(ids[0])
	if got := s.Pending(); len(got) != 3 || got[2] != ids[0] {
		t.Errorf("pending after redelivery %v", got)
	}
	if code, _ := call(t, s, "POST", "/api/v1/booking_revisions/"+ids[0]+"/ack", "k1", ""); code != 200 || !s.Acks()[1].Known {
		t.Errorf("second ack: HTTP %d %+v", code, s.Acks())
	}
	if code, _ := call(t, s, "POST", "/api/v1/booking_revisions/"+ids[0]+"/ack", "k1", ""); code != 200 || s.Acks()[2].Known {
		t.Errorf("ack of an acknowledged revision: HTTP %d %+v", code, s.Acks())
	}
}

func TestWebhook(t *testing.T) {
	s, _, p := setup(t)
	r := s.EnqueueRevision(Revision{PropertyID: p.ID, ArrivalDate: "2027-02-01", DepartureDate: "2027-02-03"})
	got := make(chan map[string]any, 1)
	hook := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(req.Body).Decode(&m)
		got <- m
		w.WriteHeader(200)
	})}
	l2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hook.Serve(l2) }()
	defer hook.Close()
	code, _, err := s.PostWebhook(context.Background(), "http://"+l2.Addr().String()+"/channels/channex/tok", "booking_new", r.ID)
	if err != nil || code != 200 {
		t.Fatalf("post: %d %v", code, err)
	}
	m := <-got
	pl := m["payload"].(map[string]any)
	if m["event"] != "booking_new" || pl["revision_id"] != r.ID || pl["booking_id"] != r.BookingID || pl["property_id"] != p.ID {
		t.Errorf("webhook %v", m)
	}
}

// TestToday: a date is in the past by the property's time zone (default the earliest).
func TestToday(t *testing.T) {
	c := &clock{t: time.Date(2027, 1, 5, 5, 0, 0, 0, time.UTC)} // 2027-01-04 19:00 in Honolulu
	s := Start(t, Options{Now: c.Now})
	for _, tc := range []struct {
		zone string
		warn bool
	}{{"UTC", true}, {"Pacific/Honolulu", false}, {"", false}} {
		p := s.AddProperty("k", Property{Timezone: tc.zone, RoomTypes: []RoomType{{RatePlans: []string{""}}}})
		_, out := call(t, s, "POST", "/api/v1/availability", "k",
			`{"values":[{"property_id":"`+p.ID+`","room_type_id":"`+p.RoomTypes[0].ID+`","date":"2027-01-04","availability":1}]}`)
		_, warned := out["meta"].(map[string]any)["warnings"]
		if warned != tc.warn {
			t.Errorf("zone %q: 2027-01-04 warned %v, want %v", tc.zone, warned, tc.warn)
		}
	}
}

// TestChangesSeenWithTheirCall: a value a request set is seen (Restriction, History, Wait)
// only once the request is in Calls, numbered like it: a test that waits for the fake's
// state and then takes the last call's number as its baseline never finds that request
// after it. Requests of several properties at once; a watcher checks every change it sees
// against the calls read after it, and at the end every change's number names a call of
// its kind that carried its property.
func TestChangesSeenWithTheirCall(t *testing.T) {
	s := Start(t, Options{NoRateLimit: true})
	const props, requests = 8, 40
	ps := make([]Property, props)
	for i := range ps {
		ps[i] = s.CertificationProperty("k1")
	}
	date := time.Now().UTC().AddDate(0, 0, 2).Format(time.DateOnly)
	mine := func(c Call, prop string) bool {
		if c.Kind != KindRestrictions || c.Status != http.StatusOK {
			return false
		}
		for _, v := range c.Values {
			if v.PropertyID == prop {
				return true
			}
		}
		return false
	}
	check := func() string {
		seen := make([][]Change, props)
		for i, p := range ps {
			seen[i] = s.History(p.ID, p.RoomTypes[0].RatePlans[0], date)
		}
		bySeq := map[int]Call{}
		for _, c := range s.Calls() {
			bySeq[c.Seq] = c
		}
		for i, h := range seen {
			for _, ch := range h {
				if c, ok := bySeq[ch.Seq]; !ok || !mine(c, ps[i].ID) {
					return fmt.Sprintf("property %d: a change numbered %d is seen, but call %d is not its request "+
						"(recorded: %v, kind %q, values %+v)", i, ch.Seq, ch.Seq, ok, c.Kind, c.Values)
				}
			}
		}
		return ""
	}
	done := make(chan struct{})
	var wrong string
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-done:
				return
			default:
			}
			if w := check(); w != "" {
				wrong = w
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() {
			for n := range requests {
				body := fmt.Sprintf(`{"values":[{"property_id":%q,"rate_plan_id":%q,"date":%q,"rate":"%d.00"}]}`,
					p.ID, p.RoomTypes[0].RatePlans[0], date, 100*i+n+1)
				// Not call: t.Fatal belongs to the test's goroutine.
				req, _ := http.NewRequest("POST", s.URL()+"/api/v1/restrictions", strings.NewReader(body))
				req.Header.Set("user-api-key", "k1")
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Errorf("property %d request %d: %v", i, n, err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("property %d request %d: HTTP %d", i, n, resp.StatusCode)
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	<-watched
	if wrong != "" {
		t.Fatal("while requests went on: " + wrong)
	}
	if w := check(); w != "" {
		t.Fatal("after the requests: " + w)
	}
}
