package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/libs/tenancy"
)

// keptFixture is account k1: properties 1 Alpha (100 a night) and 2 Bravo (80), a brand of
// Alpha only (brand.example), Europe/Rome; and account k2's property 1 Other.
func keptFixture(s *server) contract.Settings {
	st := contract.DefaultSettings("k1")
	st.Version, st.Timezone, st.Languages = 1, "Europe/Rome", []string{"en", "it"}
	st.Brands = []contract.Brand{{ID: 1, Name: "Brand", Domains: []string{"brand.example"}, Properties: []int64{1}}}
	st.Categories = []contract.Category{{ID: 10, Name: "Best", ShowSearchEngine: true, Properties: []int64{1}}}
	s.load(contract.SettingsUpdated, st)
	s.load(contract.PropertyUpdated, searchProp("k1", 1, "Alpha", nil))
	s.load(contract.PropertyUpdated, searchProp("k1", 2, "Bravo", func(p *contract.Property) { p.Rates.Rate.Daily = "80" }))
	s.load(contract.PropertyUpdated, searchProp("k2", 1, "Other", nil))
	return st
}

// keptBy counts the kept answers of acc.
func keptBy(a *API, acc string) int {
	a.answers.mu.Lock()
	defer a.answers.mu.Unlock()
	n := 0
	for k := range a.answers.cache.All() {
		if k.acc == acc {
			n++
		}
	}
	return n
}

// TestKeptSearchFollowsEveryChange: a kept search-rental answer is never served after a
// change of anything it reads: for each kind of change, the search is asked (and kept), the
// change applied, and the next answer shows the change.
func TestKeptSearchFollowsEveryChange(t *testing.T) {
	s := newServer(t, "")
	st := keptFixture(s)
	const stay = `{"checkin":"2030-02-04","checkout":"2030-02-08"}`
	listed := func(id string) func(searchAnswer) bool {
		return func(a searchAnswer) bool {
			for _, p := range a.Properties {
				if p.ID == id {
					return true
				}
			}
			return false
		}
	}
	not := func(f func(searchAnswer) bool) func(searchAnswer) bool {
		return func(a searchAnswer) bool { return !f(a) }
	}
	prop := func(id int64, name string, version int64, mod func(p *contract.Property)) func() {
		return func() {
			s.load(contract.PropertyUpdated, searchProp("k1", id, name, func(p *contract.Property) {
				p.Version = version
				if mod != nil {
					mod(p)
				}
			}))
		}
	}
	booking := func(version int64, status string, nights ...string) func() {
		return func() {
			s.load(contract.BookingReserved, contract.Booking{AccountID: "k1", BookingID: 50, PropertyID: 2, Version: version,
				Status: status, Nights: nights})
		}
	}
	block := func(version int64, deleted bool) func() {
		return func() {
			s.load(contract.BlockCreated, contract.Block{AccountID: "k1", BlockID: 60, PropertyID: 1, Version: version,
				StartDate: "2030-02-05", EndDate: "2030-02-05", Deleted: deleted})
		}
	}
	settings := func(mod func(st *contract.Settings)) func() {
		return func() {
			st.Version++
			mod(&st)
			s.load(contract.SettingsUpdated, st)
		}
	}
	has := func(text string) func(searchAnswer) bool {
		return func(a searchAnswer) bool { return strings.Contains(string(mustJSON(a)), text) }
	}
	for _, c := range []struct {
		what  string
		body  string
		apply func()
		after func(searchAnswer) bool // false before the change, true after it
	}{
		{"property content", stay, prop(1, "Alpha renamed", 2, nil), has("Alpha renamed")},
		{"rates", stay, prop(1, "Alpha renamed", 3, func(p *contract.Property) { p.Rates.Rate.Daily = "130" }), has(`"totalRent":520.00`)},
		{"restriction", stay, prop(1, "Alpha renamed", 4, func(p *contract.Property) {
			p.Rates.Rate.Daily = "130"
			p.Restrictions = []contract.Restriction{{StartDate: "2030-02-05", EndDate: "2030-02-05", StopSell: bp(true)}}
		}), not(listed("1"))},
		{"restriction lifted", stay, prop(1, "Alpha renamed", 5, func(p *contract.Property) { p.Rates.Rate.Daily = "130" }), listed("1")},
		{"photos", stay, prop(1, "Alpha renamed", 6, func(p *contract.Property) {
			p.Rates.Rate.Daily = "130"
			p.Photos = map[string]contract.Photo{"9": {PhotoID: 9, Key: "newphoto"}}
		}), has("newphoto")},
		{"booking", stay, booking(1, "reserved", "2030-02-05"), not(listed("2"))},
		{"cancellation", stay, booking(2, "cancelled"), listed("2")},
		{"block", stay, block(1, false), not(listed("1"))},
		{"block deleted", stay, block(2, true), listed("1")},
		{"settings: category members", `{"category_id":"10"}`, settings(func(st *contract.Settings) {
			st.Categories[0].Properties = []int64{1, 2}
		}), listed("2")},
		{"brand's properties", `{"domain":"https://brand.example/"}`, settings(func(st *contract.Settings) {
			st.Brands[0].Properties = []int64{1, 2}
		}), listed("2")},
		{"settings: default limit", `{}`, settings(func(st *contract.Settings) { st.Search.DefaultLimit = 1 }),
			func(a searchAnswer) bool { return len(a.Properties) == 1 && a.PropertyCount == 2 }},
		{"property deleted", `{"limit":"10"}`, func() {
			s.load(contract.PropertyDeleted, contract.Property{AccountID: "k1", PropertyID: 2, Version: 9, Deleted: true})
		}, not(listed("2"))},
	} {
		_, before := searchIDs(t, s, "k1", c.body)
		if c.after(before) {
			t.Fatalf("%s: the answer shows the change before it: %s", c.what, mustJSON(before))
		}
		_, _ = searchIDs(t, s, "k1", c.body) // served kept
		if keptBy(s.api, "k1") == 0 {
			t.Fatalf("%s: no answer kept", c.what)
		}
		c.apply()
		if _, after := searchIDs(t, s, "k1", c.body); !c.after(after) {
			t.Errorf("%s: the answer after the change is the one before it: %s", c.what, mustJSON(after))
		}
	}
}

// TestKeptSearchFollowsTheClock: a kept answer is not served once a property's same-day
// cut-off has passed, nor once its local date has changed.
func TestKeptSearchFollowsTheClock(t *testing.T) {
	s := newServer(t, "")
	keptFixture(s)
	s.load(contract.PropertyUpdated, searchProp("k1", 1, "Alpha", func(p *contract.Property) {
		p.Version = 2
		p.Rates.Setting.AllowSameDayBookingUntil = "14:00" // Rome: 13:00 UTC in January
	}))
	const today = `{"checkin":"2030-01-10","checkout":"2030-01-12"}`
	at := func(hh, mm int) {
		s.api.now = func() time.Time { return time.Date(2030, 1, 10, hh, mm, 0, 0, time.UTC) }
	}
	for _, c := range []struct {
		hh, mm int
		want   string
	}{
		{12, 0, "1,2"}, {12, 30, "1,2"}, {12, 59, "1,2"}, // before Alpha's cut-off
		{13, 0, "2"}, {13, 30, "2"}, // past it
		{22, 59, "2"}, {23, 0, ""}, // past midnight in Rome: the 10th is in the past
	} {
		at(c.hh, c.mm)
		for range 2 {
			if ids, _ := searchIDs(t, s, "k1", today); strings.Join(ids, ",") != c.want {
				t.Errorf("%02d:%02d UTC: %v, want %s", c.hh, c.mm, ids, c.want)
			}
		}
	}
}

// TestKeptDetailFollowsEveryChange: property-detail's kept answers, of one property and of
// all, follow each change of what they show.
func TestKeptDetailFollowsEveryChange(t *testing.T) {
	s := newServer(t, "")
	st := keptFixture(s)
	detail := func(body string) string {
		t.Helper()
		code, out := s.call("k1", http.MethodPost, "/internal/read/property-detail", body, nil)
		if code != http.StatusOK {
			return fmt.Sprint(code)
		}
		return string(out)
	}
	settings := func(mod func(st *contract.Settings)) func() {
		return func() {
			st.Version++
			mod(&st)
			s.load(contract.SettingsUpdated, st)
		}
	}
	for _, c := range []struct {
		what, body string
		apply      func()
		after      string // absent before the change, present after it
	}{
		{"content", `{"property_id":"1"}`, func() {
			s.load(contract.PropertyUpdated, searchProp("k1", 1, "Alpha renamed", func(p *contract.Property) { p.Version = 2 }))
		}, ""},
		{"content, all", `{}`, func() {
			s.load(contract.PropertyUpdated, searchProp("k1", 2, "Bravo renamed", func(p *contract.Property) { p.Version = 2 }))
		}, "Bravo renamed"},
		{"rates", `{"property_id":"1"}`, func() {
			s.load(contract.PropertyUpdated, searchProp("k1", 1, "Alpha", func(p *contract.Property) { p.Version, p.Rates.Rate.Daily = 3, "175" }))
		}, `"rateValue":175`},
		{"photos", `{"property_id":"1"}`, func() {
			s.load(contract.PropertyUpdated, searchProp("k1", 1, "Alpha", func(p *contract.Property) {
				p.Version, p.Rates.Rate.Daily = 4, "175"
				p.Photos = map[string]contract.Photo{"9": {PhotoID: 9, Key: "newphoto"}}
			}))
		}, "newphoto"},
		{"languages", `{"property_id":"1"}`, settings(func(st *contract.Settings) { st.Languages = []string{"en", "it", "de"} }), `"de":`},
		{"languages, all", `{}`, settings(func(st *contract.Settings) { st.Languages = []string{"en", "it", "de", "fr"} }), `"fr":`},
		{"brand's language", `{"property_id":"1","brandId":"1"}`, settings(func(st *contract.Settings) { st.Brands[0].DefaultLanguage = "fr" }),
			`"brief":{"fr":`},
		{"a property added, all", `{}`, func() { s.load(contract.PropertyUpdated, searchProp("k1", 3, "Charlie", nil)) }, "Charlie"},
		{"deleted", `{"property_id":"1"}`, func() {
			s.load(contract.PropertyDeleted, contract.Property{AccountID: "k1", PropertyID: 1, Version: 9, Deleted: true})
		}, "404"},
	} {
		before := detail(c.body)
		want := c.after
		if want == "" {
			want = "Alpha renamed"
		}
		if strings.Contains(before, want) {
			t.Fatalf("%s: %q before the change: %s", c.what, want, before)
		}
		if again := detail(c.body); again != before {
			t.Fatalf("%s: kept answer differs:\n%s\n%s", c.what, before, again)
		}
		if keptBy(s.api, "k1") == 0 {
			t.Fatalf("%s: no answer kept", c.what)
		}
		c.apply()
		if after := detail(c.body); !strings.Contains(after, want) {
			t.Errorf("%s: no %q after the change: %s", c.what, want, after)
		}
	}
}

// TestKeptAnswersOfTwoTenants: 16 readers of each of two accounts search and read details
// while one account's property changes again and again: every answer is its own account's,
// and none is older than a change applied before its request started.
func TestKeptAnswersOfTwoTenants(t *testing.T) {
	s := newServer(t, "")
	keptFixture(s)
	name := func(acc string, v int64) string { return fmt.Sprintf("%s version %06d", acc, v) }
	put := func(acc string, v int64) {
		s.load(contract.PropertyUpdated, searchProp(acc, 1, name(acc, v), func(p *contract.Property) { p.Version = v }))
	}
	put("k1", 2)
	put("k2", 2)
	var applied atomic.Int64 // k1's last version applied
	applied.Store(2)
	const readers, rounds = 16, 60
	bodies := []struct{ path, body string }{
		{"search-rental", `{"checkin":"2030-02-04","checkout":"2030-02-08"}`},
		{"search-rental", `{}`},
		{"property-detail", `{"property_id":"1"}`},
		{"get-all-property-info", `{}`},
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for v := int64(3); ; v++ {
			select {
			case <-stop:
				return
			default:
			}
			put("k1", v)
			applied.Store(v)
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan string, 2*readers*rounds)
	for i := range 2 * readers {
		acc := []string{"k1", "k2"}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				b := bodies[(i+r)%len(bodies)]
				floor := applied.Load()
				code, out := s.call(acc, http.MethodPost, "/internal/read/"+b.path, b.body, nil)
				other := map[string]string{"k1": "k2 version", "k2": "k1 version"}[acc]
				switch {
				case code != http.StatusOK:
					errs <- fmt.Sprintf("%s %s: %d %s", acc, b.path, code, out)
				case bytes.Contains(out, []byte(other)) || acc == "k1" && bytes.Contains(out, []byte("Other")):
					errs <- fmt.Sprintf("%s %s sees the other account: %s", acc, b.path, out)
				case acc == "k2" && !bytes.Contains(out, []byte(name("k2", 2))):
					errs <- fmt.Sprintf("k2 %s: %s", b.path, out)
				case acc == "k1":
					i := bytes.Index(out, []byte("k1 version "))
					var v int64
					if i < 0 {
						errs <- fmt.Sprintf("k1 %s: %s", b.path, out)
						continue
					}
					_, _ = fmt.Sscanf(string(out[i+len("k1 version "):]), "%d", &v)
					if v < floor {
						errs <- fmt.Sprintf("k1 %s: version %d, older than %d applied before the request", b.path, v, floor)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-done
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestSearchKeyCoversQuery: every field of a parsed search is either in the kept answer's
// key or derived from fields that are (or from what the key's other members name): a new
// field must choose, or answers differing by it would share a key.
func TestSearchKeyCoversQuery(t *testing.T) {
	keyed := map[string]string{
		"in": "in", "out": "out", "flexible": "flexible", "adults": "adults", "children": "children", "guests": "guests",
		"keyterm": "keyterm", "city": "city", "bedrooms": "bedrooms", "minPrice": "minPrice", "maxPrice": "maxPrice",
		"featured": "featured", "pets": "pets", "smoking": "smoking", "aircon": "aircon", "parking": "parking", "ocean": "ocean",
		"amenities": "amenities", "propertyID": "propertyID", "sortBy": "sortBy", "desc": "desc", "page": "page", "limit": "limit",
		"discountsOnly": "discountsOnly", "categoryID": "categoryID", "tagID": "tagID",
	}
	derived := map[string]string{
		"nights":     "in and out",
		"hasMin":     "minPrice (empty when not sent)",
		"hasMax":     "maxPrice (empty when not sent)",
		"only":       "categoryID, tagID and the settings (the generation)",
		"amenityIDs": "amenities",
		"shifts":     "flexible",
		"ins":        "in and flexible",
		"outs":       "out and flexible",
		"pricedAll":  "sortBy, minPrice, maxPrice, discountsOnly",
		"now":        "the answer's validity (turns)",
		"brand":      "answerKey.brand and the settings",
		"turns":      "not a parameter",
	}
	qt, kt := reflect.TypeFor[searchQuery](), reflect.TypeFor[searchKey]()
	for i := range qt.NumField() {
		f := qt.Field(i).Name
		if k, ok := keyed[f]; ok {
			if _, ok := kt.FieldByName(k); !ok {
				t.Errorf("searchKey has no %s for searchQuery.%s", k, f)
			}
		} else if _, ok := derived[f]; !ok {
			t.Errorf("searchQuery.%s is neither in searchKey nor derived from it", f)
		}
	}
	if kt.NumField() != len(keyed) {
		t.Errorf("searchKey has %d fields, %d listed", kt.NumField(), len(keyed))
	}
}

// TestAnswersBounded: the kept answers stay within their bound, the least recently used
// leave first, an expired one is not served, and an erased account's are forgotten.
func TestAnswersBounded(t *testing.T) {
	now := time.Date(2030, 1, 10, 12, 0, 0, 0, time.UTC)
	s := newAnswers(64 << 10)
	key := func(acc string, i int) answerKey { return answerKey{read: readSearch, acc: acc, gen: uint64(i + 1)} }
	body := bytes.Repeat([]byte("x"), 1000)
	for i := range 200 {
		s.put(key("a", i), answer{body: body, from: now, until: now.Add(time.Hour)})
		if _, ok := s.get(key("a", 0), now); !ok && i < 40 {
			t.Fatalf("the most used answer left at %d", i)
		}
	}
	if n, size := s.held(); size > 64<<10 || n < 40 || n > 64 {
		t.Fatalf("%d answers of %d bytes held", n, size)
	}
	if _, ok := s.get(key("a", 1), now); ok {
		t.Fatal("an old answer stayed")
	}
	if _, ok := s.get(key("a", 199), now.Add(time.Hour)); ok {
		t.Fatal("an expired answer served")
	}
	if _, ok := s.get(key("a", 198), now.Add(-time.Second)); ok {
		t.Fatal("an answer served before it was computed")
	}
	s.put(key("b", 1), answer{body: body, from: now, until: now.Add(time.Hour)})
	s.put(key("a", 500), answer{body: bytes.Repeat([]byte("x"), 9<<10), from: now, until: now.Add(time.Hour)})
	if _, ok := s.get(key("a", 500), now); ok {
		t.Fatal("an answer above an eighth of the bound kept")
	}
	s.Forget("a")
	if n, _ := s.held(); n != 1 {
		t.Fatalf("%d answers after forgetting a, want b's", n)
	}
}

// TestTurn: when a kept answer stops being valid in a zone, with and without a same-day
// cut-off, and across a daylight saving change.
func TestTurn(t *testing.T) {
	rome, err := time.LoadLocation("Europe/Rome")
	if err != nil {
		t.Fatal(err)
	}
	cut := func(hh, mm int) *pricing.Clock { c := pricing.Clock(hh*60 + mm); return &c }
	for _, c := range []struct {
		now  time.Time
		loc  *time.Location
		cut  *pricing.Clock
		want time.Time
	}{
		{time.Date(2030, 1, 10, 12, 0, 0, 0, time.UTC), time.UTC, nil, time.Date(2030, 1, 11, 0, 0, 0, 0, time.UTC)},
		{time.Date(2030, 1, 10, 12, 0, 0, 0, time.UTC), rome, nil, time.Date(2030, 1, 10, 23, 0, 0, 0, time.UTC)},
		{time.Date(2030, 1, 10, 12, 0, 0, 0, time.UTC), rome, cut(14, 0), time.Date(2030, 1, 10, 13, 0, 0, 0, time.UTC)},
		{time.Date(2030, 1, 10, 13, 0, 0, 0, time.UTC), rome, cut(14, 0), time.Date(2030, 1, 10, 23, 0, 0, 0, time.UTC)},
		// 2030-03-31 02:00 in Rome is 03:00: midnight before it is exact; from midnight until
		// the change has passed, the next minute.
		{time.Date(2030, 3, 30, 22, 0, 30, 0, time.UTC), rome, nil, time.Date(2030, 3, 30, 23, 0, 0, 0, time.UTC)},
		{time.Date(2030, 3, 30, 23, 0, 30, 0, time.UTC), rome, nil, time.Date(2030, 3, 30, 23, 1, 0, 0, time.UTC)},
		{time.Date(2030, 3, 31, 1, 0, 0, 0, time.UTC), rome, nil, time.Date(2030, 3, 31, 22, 0, 0, 0, time.UTC)},
	} {
		if got := turn(c.now, c.loc, c.cut); !got.Equal(c.want) {
			t.Errorf("turn(%s, %s, %v) = %s, want %s", c.now, c.loc, c.cut, got.UTC(), c.want)
		}
	}
}

// TestKeptSearchSameBytes: a kept answer is the answer computed afresh, byte for byte.
func TestKeptSearchSameBytes(t *testing.T) {
	s := newServer(t, "https://media.example")
	filterFixture(s)
	for _, body := range []string{`{}`, `{"checkin":"2030-02-04","checkout":"2030-02-08","sortby":"4"}`, `{"amenity":["1","air conditioning"]}`} {
		_, first := s.call("f1", http.MethodPost, "/internal/read/search-rental", body, nil)
		code, kept := s.call("f1", http.MethodPost, "/internal/read/search-rental", body, nil)
		s.api.answers = newAnswers(defaultAnswerBytes)
		_, fresh := s.call("f1", http.MethodPost, "/internal/read/search-rental", body, nil)
		if code != 200 || !bytes.Equal(kept, fresh) || !bytes.Equal(first, fresh) || !json.Valid(kept) {
			t.Errorf("%s: kept %d %s\nfresh %s", body, code, kept, fresh)
		}
	}
}

// handlerCall calls the app's fasthttp handler as the server does, without a connection: the
// in-process cost of a request (its signature's check included), without app.Test's pipe.
type handlerCall struct {
	s   *server
	h   fasthttp.RequestHandler
	ctx fasthttp.RequestCtx
}

func newHandlerCall(s *server) *handlerCall {
	c := &handlerCall{s: s, h: s.app.Handler()}
	c.ctx.Init(&fasthttp.Request{}, nil, nil)
	return c
}

func (c *handlerCall) post(acc, target, body string) (int, []byte) {
	c.ctx.Request.Reset()
	c.ctx.Response.Reset()
	c.ctx.Request.Header.SetMethod(http.MethodPost)
	c.ctx.Request.SetRequestURI(target)
	c.ctx.Request.Header.SetContentType("application/json")
	c.ctx.Request.SetBodyString(body)
	tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(c.ctx.Request.Header.Set, tenancy.Tenant{AccountID: acc}, http.MethodPost,
		target, []byte(body), time.Now())
	c.h(&c.ctx)
	return c.ctx.Response.StatusCode(), c.ctx.Response.Body()
}

// BenchmarkKeptAnswers: search-rental with dates over 1 000 properties, property-detail of one
// of them and get-all-property-info of a brand of 50, each computed every time (no answer
// kept) and kept, through the app's handler.
func BenchmarkKeptAnswers(b *testing.B) {
	s := newServer(&testing.T{}, "")
	st := contract.DefaultSettings("d1")
	st.Version, st.Languages = 1, []string{"en", "it"}
	st.Brands = []contract.Brand{{ID: 1, Name: "Fifty"}}
	for i := int64(1); i <= 1000; i++ {
		p := searchProp("d1", i, fmt.Sprintf("Villa %04d", i), func(p *contract.Property) {
			p.Content.Bedrooms = int(i % 5)
			p.Rates.Rate.Daily = fmt.Sprint(80 + i%100)
		})
		if err := s.view.Load(contract.PropertyUpdated, mustJSON(p)); err != nil {
			b.Fatal(err)
		}
		if i%20 == 0 {
			st.Brands[0].Properties = append(st.Brands[0].Properties, i)
		}
	}
	if err := s.view.Load(contract.SettingsUpdated, mustJSON(st)); err != nil {
		b.Fatal(err)
	}
	kept := s.api.answers
	call := newHandlerCall(s)
	for _, c := range []struct{ name, read, body string }{
		{"search-dates", "search-rental", `{"checkin":"2030-02-04","checkout":"2030-02-11","numberadults":"2"}`},
		{"detail-one", "property-detail", `{"property_id":"500"}`},
		{"detail-brand-of-50", "get-all-property-info", `{"brandId":"1"}`},
	} {
		for _, mode := range []string{"", "kept-"} {
			s.api.answers = map[string]*answers{"": newAnswers(0), "kept-": kept}[mode]
			b.Run(mode+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if code, out := call.post("d1", "/internal/read/"+c.read, c.body); code != 200 {
						b.Fatalf("%d %s", code, out)
					}
				}
			})
		}
	}
}

// TestKeptAnswersToldToEdge: an answer the catalog keeps tells edge until when it holds and
// where the consumer stood before it was read (docs/catalog.md, "Answers kept at edge"),
// computed or served kept alike; nothing is told while the positions are unknown, for an
// error, or for an account the catalog holds nothing of.
func TestKeptAnswersToldToEdge(t *testing.T) {
	s := newServer(t, "https://media.example")
	filterFixture(s)
	s.api.Applied = &events.Applied{}
	marks := func(acc, name, body string) (code int, until, applied string) {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, "/internal/read/"+name, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: acc}, http.MethodPost,
			"/internal/read/"+name, []byte(body), time.Now())
		resp, err := s.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.StatusCode, resp.Header.Get(httpapi.HeaderKeepUntil), resp.Header.Get(httpapi.HeaderApplied)
	}
	if _, until, applied := marks("f1", "search-rental", `{}`); until != "" || applied != "" {
		t.Fatalf("positions unknown: told %q %q", until, applied)
	}
	s.api.answers = newAnswers(defaultAnswerBytes)
	s.api.Applied.Mark("vros.property.v1", 0, 7)
	now := s.api.now()
	for _, c := range []struct{ name, body string }{
		{"search-rental", `{}`}, {"search-rental", `{}`}, // computed, then kept
		{"property-detail", `{"property_id":"1"}`}, {"property-detail", `{"property_id":"1"}`},
		{"property-detail", `{}`}, {"property-detail", `{}`},
	} {
		code, until, applied := marks("f1", c.name, c.body)
		ms, err := strconv.ParseInt(until, 10, 64)
		if code != http.StatusOK || err != nil || !time.UnixMilli(ms).After(now) || applied != "vros.property.v1/0=7" {
			t.Errorf("%s %s: %d, until %q, applied %q", c.name, c.body, code, until, applied)
		}
	}
	s.api.Applied.Mark("vros.property.v1", 0, 9)
	if _, _, applied := marks("f1", "search-rental", `{}`); applied != "vros.property.v1/0=9" {
		t.Errorf("kept answer told %q, want where the consumer stands now", applied)
	}
	for _, c := range []struct{ acc, name, body string }{
		{"f1", "search-rental", `{"checkin":"someday"}`},
		{"f1", "property-detail", `{"property_id":"999"}`},
		{"nobody", "search-rental", `{}`},
	} {
		if code, until, applied := marks(c.acc, c.name, c.body); until != "" || applied != "" {
			t.Errorf("%s %s of %s: %d told %q %q", c.name, c.body, c.acc, code, until, applied)
		}
	}
}
