package e2e

// Answers kept at edge (docs/catalog.md, "Answers kept at edge"), end to end: catalog-svc
// marks its search-rental and property-detail answers, edge keeps them and answers the same
// request again itself until its Feed hears a change of the account the answer does not
// hold. These tests read through edge as a website does and make every kind of change
// through the public interfaces: each must show within viewsWithin, and the read must then
// be kept again (the kept answer replaced, neither left stale nor given up for good).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/systest/apitest"
)

// keptServedMetric is edge's count of the catalog answers it served again itself
// (vros.edge.kept_answers).
const keptServedMetric = "vros_edge_kept_answers_total"

// keptBurst is how many times in a row a read is sent to tell whether edge serves it kept.
const keptBurst = 8

// keptRead is an owner-token read as a website sends it: POST, a form body. The body is
// encoded once (url.Values.Encode sorts the keys): edge keeps an answer under the whole
// request, and the website asks the same bytes again.
type keptRead struct {
	what string // for messages
	name string // search-rental, property-detail
	body string
}

func newKeptRead(what, name string, form url.Values) keptRead {
	return keptRead{what: what, name: name, body: form.Encode()}
}

// send sends the read as acc through c, from any goroutine.
func (r keptRead) send(c *http.Client, acc account) (apitest.Response, error) {
	return apitest.Send(c, http.MethodPost, st.EdgeURL+"/vros/api/"+r.name+"/owner_token/"+acc.OwnerToken,
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, r.body)
}

// answer sends the read and answers its body; anything but a 200 with a read's answer
// fails t.
func (r keptRead) answer(t *testing.T, acc account) []byte {
	t.Helper()
	body, err := r.try(acc)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// try sends the read and answers its body, or what is wrong with the answer.
func (r keptRead) try(acc account) ([]byte, error) {
	res, err := r.send(http.DefaultClient, acc)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", r.what, err)
	}
	if res.Code != http.StatusOK || bError(res.Body) || !json.Valid(res.Body) {
		return res.Body, fmt.Errorf("%s: HTTP %d %s", r.what, res.Code, res.Body)
	}
	return res.Body, nil
}

// keptTally is what tells the answers edge kept from those it forwarded, though every test
// of the suite reads through the same edge and catalog: edge's count of kept answers served,
// and catalog-svc's count of the requests it answered on the read's route. Other tests only
// add to both, so when a burst of n reads raises the catalog's count by less than n, edge
// answered some of them itself.
type keptTally struct{ served, answered float64 }

func tallyOf(t *testing.T, read string) keptTally {
	t.Helper()
	served, _ := findMetric(scrapeMetrics(t, st.EdgeInternalURL), keptServedMetric)
	answered, _ := findMetric(scrapeMetrics(t, st.CatalogInternalURL), "http_server_request_duration_seconds_count",
		"http_route", "/internal/read/"+read)
	return keptTally{served, answered}
}

// burst sends r keptBurst times in a row and tells whether edge answered any of them
// itself (and its kept-answers counter rose), and the first answer that fails want ("" when
// all hold).
func (r keptRead) burst(t *testing.T, acc account, want func([]byte) bool) (kept bool, wrong string) {
	t.Helper()
	before := tallyOf(t, r.name)
	for range keptBurst {
		if body := r.answer(t, acc); !want(body) && wrong == "" {
			wrong = string(body)
		}
	}
	after := tallyOf(t, r.name)
	return after.answered-before.answered < keptBurst && after.served > before.served, wrong
}

// servedKept asks r until edge serves it kept with every answer of a burst holding want, then
// asks a burst more in which every answer must hold want: edge's answer under the request is
// then one that holds it, and none older can come back (t asks nothing else of the account
// meanwhile). An answer that does not hold want before that, within viewsWithin, is edge
// still serving the answer the change replaced while its Feed has not heard the change (a
// bounded lag, docs/catalog.md): it is logged, and the read asked again.
func (r keptRead) servedKept(t *testing.T, acc account, want func([]byte) bool) {
	t.Helper()
	deadline := time.Now().Add(viewsWithin)
	bursts := 0
	for {
		bursts++
		kept, wrong := r.burst(t, acc, want)
		if kept && wrong == "" {
			break
		}
		if wrong != "" {
			t.Logf("%s: an answer before the one kept does not hold: %.400s", r.what, wrong)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: edge did not serve it kept, every answer holding what it must, within %v (%d bursts of %d)",
				r.what, viewsWithin, bursts, keptBurst)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, wrong := r.burst(t, acc, want); wrong != "" {
		t.Fatalf("%s: once kept holding it, edge answers one that does not: %s", r.what, wrong)
	}
}

// shows polls r until its answer holds want, within viewsWithin. An error answer is "not
// yet": a search by a category the catalog has not heard of yet is refused.
func (r keptRead) shows(t *testing.T, acc account, what string, want func([]byte) bool) {
	t.Helper()
	deadline := time.Now().Add(viewsWithin)
	for {
		body, err := r.try(acc)
		if err == nil && want(body) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s not shown within %v; the last answer: %s; %s", r.what, what, viewsWithin, body, pipeline(t, acc))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// keptSearch is the part of search-rental's answer the tests read.
type keptSearch struct {
	PropertyCount int `json:"property_count"`
	Properties    []struct {
		ID        string       `json:"id"`
		Name      string       `json:"name"`
		TotalRent *json.Number `json:"totalRent"`
	} `json:"properties"`
}

// searchHolds adapts a predicate on a search answer to one on its body.
func searchHolds(f func(keptSearch) bool) func([]byte) bool {
	return func(body []byte) bool {
		var a keptSearch
		return json.Unmarshal(body, &a) == nil && f(a)
	}
}

// listed holds when the search lists property pid.
func keptListed(pid int) func([]byte) bool {
	return searchHolds(func(a keptSearch) bool {
		for _, p := range a.Properties {
			if p.ID == strconv.Itoa(pid) {
				return true
			}
		}
		return false
	})
}

// rentOf holds when the search lists property pid at a totalRent of rent.
func keptRent(pid int, rent string) func([]byte) bool {
	return searchHolds(func(a keptSearch) bool {
		for _, p := range a.Properties {
			if p.ID == strconv.Itoa(pid) && p.TotalRent != nil && p.TotalRent.String() == rent {
				return true
			}
		}
		return false
	})
}

func keptNot(f func([]byte) bool) func([]byte) bool { return func(b []byte) bool { return !f(b) } }

func keptHas(text string) func([]byte) bool {
	return func(b []byte) bool { return bytes.Contains(b, []byte(text)) }
}

// keptProperty creates a property named name with simpleRates, and waits until booking-svc
// prices it (a booking of it is then quoted).
func keptProperty(t *testing.T, acc account, code, name string) int {
	t.Helper()
	p := validProperty(code)
	p["name"] = name
	id, err := strconv.Atoi(propData(t, acc.a(t, "property", obj{"action": "create", "property": p}), "property_id"))
	if err != nil {
		t.Fatal(err)
	}
	acc.a(t, "property-rate", simpleRates(code)).status(t, http.StatusOK)
	waitVersion(t, acc, id)
	return id
}

// rename writes the property's content again with another name.
func keptRename(t *testing.T, acc account, code, name string) {
	t.Helper()
	p := validProperty(code)
	p["name"] = name
	acc.a(t, "property", obj{"action": "update", "property": p}).status(t, http.StatusOK)
}

// TestEdgeKeptSearchFollowsEveryChange: the in-process TestKeptSearchFollowsEveryChange,
// through edge and the topics. An account's search-rental, asked as a website asks it, is
// served kept by edge; then, for each kind of change of what it reads (a property's name,
// its rates, a minimum stay and a stop-sell and their lifting, a booking and its
// cancellation, a block and its deletion, a category's members, a brand's properties, the
// account's default limit, a property's deletion), the answers through edge show the change
// within viewsWithin, and edge serves the search kept again, showing it. property-detail, of
// one property and of all, likewise follows a change of content. Each read is asked kept
// before its change too: what it must not show yet is the state the previous change left.
func TestEdgeKeptSearchFollowsEveryChange(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	// The polls and bursts ask far more than the suite's per-account budget (TestRateLimit's).
	setPlan(t, acc, obj{"rate_rps": 1000, "rate_burst": 100000})
	alpha := keptProperty(t, acc, "KEA", "Alpha Lodge by the Sea")
	bravo := keptProperty(t, acc, "KEB", "Bravo Lodge by the Sea")
	charlie := keptProperty(t, acc, "KEC", "Charlie Lodge by the Sea")
	category := propData(t, acc.a(t, "property-category", obj{"action": "create",
		"category": obj{"name": "Kept", "properties": []string{"KEA"}}}), "category_id")
	brand := brandID(t, acc, obj{"name": "Kept Villas", "domains": []string{"kept.example"}, "properties": []string{"KEA"}})

	// Four nights, 100 each (simpleRates); the changes below fall on the second one.
	in, night, out := day(30), day(31), day(34)
	stay := newKeptRead("search-rental of a stay", "search-rental",
		url.Values{"checkin": {in}, "checkout": {out}, "numberadults": {"2"}, "lang": {"en"}})
	ofCategory := newKeptRead("search-rental of a category", "search-rental", url.Values{"category_id": {category}, "lang": {"en"}})
	ofBrand := newKeptRead("search-rental of a brand", "search-rental", url.Values{"domain": {"https://kept.example/"}, "lang": {"en"}})
	plain := newKeptRead("search-rental without a limit", "search-rental", url.Values{"lang": {"en"}})
	limited := newKeptRead("search-rental of 10", "search-rental", url.Values{"limit": {"10"}, "lang": {"en"}})

	// The catalog is fed by events: every property listed for the stay first, and the
	// category and the brand known.
	stay.shows(t, acc, "the three properties", searchHolds(func(a keptSearch) bool {
		return len(a.Properties) == 3 && a.PropertyCount == 3
	}))
	for _, r := range []keptRead{ofCategory, ofBrand} {
		r.shows(t, acc, "Alpha alone", searchHolds(func(a keptSearch) bool {
			return len(a.Properties) == 1 && a.Properties[0].ID == strconv.Itoa(alpha)
		}))
	}

	restriction := func(set obj, clear []string) func() {
		return func() {
			body := obj{"internal_code": "KEA", "dates": []obj{{"start_date": in, "end_date": night}}}
			if set != nil {
				body["set"] = set
			}
			if clear != nil {
				body["clear"] = clear
			}
			acc.a(t, "property-restriction", body).status(t, http.StatusOK)
		}
	}
	var booking bookingData
	var block struct {
		Data struct {
			BlockID int `json:"block_id"`
		} `json:"data"`
	}
	for _, c := range []struct {
		what  string
		read  keptRead
		apply func()
		after func([]byte) bool // false before the change, true once it shows
	}{
		{"property content", stay, func() { keptRename(t, acc, "KEA", "Alpha Lodge by the Sea, renamed") },
			keptHas(`"name":"Alpha Lodge by the Sea, renamed"`)},
		{"rates", stay, func() {
			r := simpleRates("KEA")
			r["rate"].(obj)["daily_price"] = 130
			acc.a(t, "property-rate", r).status(t, http.StatusOK)
		}, keptRent(alpha, "520.00")},
		{"restriction: minimum stay", stay, restriction(obj{"min_stay_arrival": 7}, nil), keptNot(keptListed(alpha))},
		{"minimum stay lifted", stay, restriction(nil, []string{"min_stay_arrival"}), keptListed(alpha)},
		{"restriction: stop-sell", stay, restriction(obj{"stop_sell": true}, nil), keptNot(keptListed(alpha))},
		{"stop-sell lifted", stay, restriction(nil, []string{"stop_sell"}), keptListed(alpha)},
		{"booking", stay, func() { booking = create(t, acc, guest(bravo, night, day(32))) }, keptNot(keptListed(bravo))},
		{"cancellation", stay, func() { acc.b(t, "cancel", obj{"bookingId": booking.BookingID}).ok(t, nil) }, keptListed(bravo)},
		{"block", stay, func() {
			r := acc.a(t, "property-blockdate", obj{"action": "create",
				"block": obj{"internal_code": "KEA", "start_date": night, "end_date": night}})
			r.status(t, http.StatusOK)
			r.decode(t, &block)
		}, keptNot(keptListed(alpha))},
		{"block deleted", stay, func() {
			acc.a(t, "property-blockdate", obj{"action": "delete", "block": obj{"block_id": block.Data.BlockID}}).status(t, http.StatusOK)
		}, keptListed(alpha)},
		{"category's members", ofCategory, func() {
			acc.a(t, "property-category", obj{"action": "update",
				"category": obj{"id": id64(t, category), "name": "Kept", "properties": []string{"KEA", "KEB"}}}).status(t, http.StatusOK)
		}, keptListed(bravo)},
		{"brand's properties", ofBrand, func() {
			acc.a(t, "account-brand", obj{"action": "update", "brand": obj{"id": brand, "properties": []string{"KEA", "KEB"}}}).
				status(t, http.StatusOK)
		}, keptListed(bravo)},
		{"settings: default limit", plain, func() {
			acc.a(t, "account-settings", obj{"search": obj{"default_limit": 1}}).status(t, http.StatusOK)
		}, searchHolds(func(a keptSearch) bool { return len(a.Properties) == 1 && a.PropertyCount == 3 })},
		{"property deleted", limited, func() {
			acc.a(t, "property", obj{"action": "delete", "property": obj{"internal_code": "KEC"}}).status(t, http.StatusOK)
		}, keptNot(keptListed(charlie))},
	} {
		// Kept before the change: edge answers the read itself.
		c.read.servedKept(t, acc, keptNot(c.after))
		c.apply()
		c.read.shows(t, acc, c.what, c.after)
		c.read.servedKept(t, acc, c.after)
	}

	// property-detail, of one property and of all: kept, then a change of content shows in
	// both and both are kept again.
	one := newKeptRead("property-detail of Alpha", "property-detail", url.Values{"property_id": {strconv.Itoa(alpha)}})
	all := newKeptRead("property-detail of every property", "property-detail", url.Values{})
	const detailName = `"name":"Alpha Lodge, as the detail shows it"`
	for _, r := range []keptRead{one, all} {
		r.shows(t, acc, "Alpha", keptHas(`"name":"Alpha Lodge by the Sea, renamed"`))
		r.servedKept(t, acc, keptNot(keptHas(detailName)))
	}
	keptRename(t, acc, "KEA", "Alpha Lodge, as the detail shows it")
	for _, r := range []keptRead{one, all} {
		r.shows(t, acc, "the new name", keptHas(detailName))
		r.servedKept(t, acc, keptHas(detailName))
	}
}

// TestEdgeKeptAnswersOfTwoTenants: the in-process TestKeptAnswersOfTwoTenants, through edge.
// 16 readers of each of two accounts read search-rental and property-detail through edge
// while one account's property is renamed again and again: every answer is its own
// account's (its properties' names, never the other's), and edge serves kept answers
// meanwhile. Once the last name shows, each read is served kept with it, and a last round
// of the 32 readers sees the last name in every answer: no kept answer older than it is left.
func TestEdgeKeptAnswersOfTwoTenants(t *testing.T) {
	t.Parallel()
	const (
		readers  = 16
		versions = 6
	)
	type side struct {
		acc    account
		marker string // in its properties' names, and in no other account's
		reads  []keptRead
	}
	name := func(marker string, v int) string { return fmt.Sprintf("%s villa one v%03d", marker, v) }
	sides := []*side{{marker: "Ambervale"}, {marker: "Birchmoor"}}
	for i, s := range sides {
		s.acc = newAccount(t)
		// The readers ask as fast as edge answers, kept answers the fastest of all.
		setPlan(t, s.acc, obj{"rate_rps": 100000, "rate_burst": 100000})
		code := fmt.Sprintf("KT%c", 'A'+i)
		one := keptProperty(t, s.acc, code+"1", name(s.marker, 0))
		keptProperty(t, s.acc, code+"2", s.marker+" villa number two")
		s.reads = []keptRead{
			newKeptRead(s.marker+" search-rental of a stay", "search-rental",
				url.Values{"checkin": {day(30)}, "checkout": {day(33)}, "numberadults": {"2"}, "lang": {"en"}}),
			newKeptRead(s.marker+" search-rental", "search-rental", url.Values{"lang": {"en"}}),
			newKeptRead(s.marker+" property-detail of one", "property-detail", url.Values{"property_id": {strconv.Itoa(one)}}),
			newKeptRead(s.marker+" property-detail of every property", "property-detail", url.Values{}),
		}
		// The first account's answers are kept at edge when the second's are first read: an
		// answer of the wrong account is a finding at once, not a read to ask again.
		for _, r := range s.reads {
			r.shows(t, s.acc, "its property", func(body []byte) bool {
				if o := sides[1-i]; bytes.Contains(body, []byte(o.marker)) {
					t.Fatalf("%s: the answer carries %s's properties: %.400s", r.what, o.marker, body)
				}
				return bytes.Contains(body, []byte(name(s.marker, 0)))
			})
		}
	}
	changed := sides[0]
	version := regexp.MustCompile(changed.marker + ` villa one v(\d{3})`)

	client := &http.Client{Timeout: 60 * time.Second,
		Transport: apiContract.Through(&http.Transport{MaxIdleConnsPerHost: 2 * readers, MaxConnsPerHost: 2 * readers})}
	var (
		mu       sync.Mutex
		problems []string
		wrong    int
		answers  atomic.Int64
		sent     atomic.Int64 // the changed account's last version sent (acknowledged or about to be)
	)
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		wrong++
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	// findings fails t with what the readers of a phase found, and starts the next afresh.
	findings := func(phase string) {
		mu.Lock()
		defer mu.Unlock()
		if wrong > 0 {
			t.Errorf("%s: %d findings in %d answers; the first ones:\n%s", phase, wrong, answers.Load(), strings.Join(problems, "\n"))
		}
		wrong, problems = 0, nil
		answers.Store(0)
	}
	// check inspects one answer of s's read r: whole, its account's, and (after, the last
	// version, in the last round) showing what it must.
	check := func(s *side, r keptRead, res apitest.Response, err error, last int) {
		answers.Add(1)
		switch {
		case err != nil:
			report("%s: %v", r.what, err)
			return
		case res.Code != http.StatusOK || bError(res.Body) || !json.Valid(res.Body):
			report("%s: HTTP %d %.300s", r.what, res.Code, res.Body)
			return
		}
		for _, o := range sides {
			if o != s && bytes.Contains(res.Body, []byte(o.marker)) {
				report("%s: the answer carries %s's properties: %.400s", r.what, o.marker, res.Body)
			}
		}
		if s != changed {
			if !bytes.Contains(res.Body, []byte(name(s.marker, 0))) {
				report("%s: its property is not in the answer: %.400s", r.what, res.Body)
			}
			return
		}
		m := version.FindSubmatch(res.Body)
		if m == nil {
			report("%s: its property is not in the answer: %.400s", r.what, res.Body)
			return
		}
		v, _ := strconv.Atoi(string(m[1]))
		switch {
		case int64(v) > sent.Load():
			report("%s: version %d, never written (the last sent is %d)", r.what, v, sent.Load())
		case last > 0 && v != last:
			report("%s: version %d once version %d is kept: %.400s", r.what, v, last, res.Body)
		}
	}
	// round runs the readers until stop is closed, each reading at least every read once.
	round := func(stop <-chan struct{}, last int) {
		var wg sync.WaitGroup
		for i := range 2 * readers {
			s := sides[i%2]
			wg.Go(func() {
				for n := 0; ; n++ {
					if n >= len(s.reads) {
						select {
						case <-stop:
							return
						default:
						}
					}
					r := s.reads[(i/2+n)%len(s.reads)]
					res, err := r.send(client, s.acc)
					check(s, r, res, err, last)
				}
			})
		}
		wg.Wait()
	}

	// The readers read while the writer renames the changed account's property, each
	// version after the previous one shows (a fresh read of the stay's search).
	before := tallyOf(t, "search-rental")
	stop := make(chan struct{})
	var writerErr error
	go func() {
		defer close(stop)
		for v := 1; v <= versions; v++ {
			p := validProperty("KTA1")
			p["name"] = name(changed.marker, v)
			sent.Store(int64(v)) // before the write: a reader may see it before its answer comes
			if err := changed.acc.aSend("property", obj{"action": "update", "property": p}, nil); err != nil {
				writerErr = err
				return
			}
			deadline := time.Now().Add(viewsWithin)
			for {
				res, err := changed.reads[0].send(client, changed.acc)
				if err == nil && bytes.Contains(res.Body, []byte(name(changed.marker, v))) {
					break
				}
				if time.Now().After(deadline) {
					if err == nil {
						err = fmt.Errorf("HTTP %d %.300s", res.Code, res.Body)
					}
					writerErr = fmt.Errorf("version %d not shown within %v: the last answer: %v", v, viewsWithin, err)
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}()
	round(stop, 0)
	during := tallyOf(t, "search-rental")
	t.Logf("%d answers while %d versions were written; edge served %.0f kept answers meanwhile", answers.Load(), versions,
		during.served-before.served)
	findings("while the versions were written")
	if writerErr != nil {
		t.Fatal(writerErr)
	}
	if during.served <= before.served {
		t.Errorf("edge served no kept answer while %d readers read", 2*readers)
	}

	// The last version shows in each read, then edge serves each kept with it: every answer
	// edge keeps of the changed account is then the last version's, and none older can come
	// back (the readers have stopped). A last round of every reader must see it everywhere.
	for _, r := range changed.reads {
		r.shows(t, changed.acc, "the last version", keptHas(name(changed.marker, versions)))
		r.servedKept(t, changed.acc, keptHas(name(changed.marker, versions)))
	}
	last := make(chan struct{})
	close(last)
	round(last, versions)
	findings("once the last version is kept")
}
