package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
)

// The iCal export through catalog-svc's real app over the in-memory view (now: 2030-01-10,
// so the feed starts at 2029-11-11).

const (
	tokA = "AAAAaaaaBBBBbbbbCCCCccccDDDDddddEEEEeeee012" // 43 base64url characters
	tokB = "ZZZZzzzzYYYYyyyyXXXXxxxxWWWWwwwwVVVVvvvv-_9"
	tokC = "QQQQqqqqRRRRrrrrSSSSssssTTTTttttUUUUuuuu345"
)

func hashOf(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

func icalProperty(acc string, pid, version int64, name, tok string) contract.Property {
	p := contract.Property{AccountID: acc, PropertyID: pid, InternalCode: fmt.Sprint("V", pid), Version: version,
		Content: contract.Content{Name: name, MaxGuest: 4}}
	if tok != "" {
		p.ICalTokenSHA256 = hashOf(tok)
	}
	return p
}

func nightsOf(checkin, checkout string) []string {
	in, _ := pricing.ParseDate(checkin)
	out, _ := pricing.ParseDate(checkout)
	var n []string
	for d := in; d.Before(out); d = d.AddDays(1) {
		n = append(n, d.String())
	}
	return n
}

func booking(acc string, id, pid, version int64, status, checkin, checkout string) contract.Booking {
	b := contract.Booking{AccountID: acc, BookingID: id, PropertyID: pid, Version: version, Status: status,
		Checkin: checkin, Checkout: checkout, Nights: []string{}, CreatedAt: time.Date(2029, 12, 1, 9, 0, 0, 0, time.UTC)}
	if status == "reserved" {
		b.Nights = nightsOf(checkin, checkout)
	}
	return b
}

func block(acc string, id, pid, version int64, start, end string, feed int64) contract.Block {
	return contract.Block{AccountID: acc, BlockID: id, PropertyID: pid, Version: version, StartDate: start, EndDate: end,
		Memo: "Owner stay of Mr Rossi", FeedID: feed, CreatedAt: "2029-12-02 10:00:00"}
}

// fetch GETs (or HEADs) a feed path with an empty tenant and no signature, as edge forwards it.
func (s *server) fetch(method, path, inm string) (int, http.Header, []byte) {
	s.t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if inm != "" {
		req.Header.Set("If-None-Match", inm)
	}
	resp, err := s.app.Test(req, -1)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, body
}

// feedNights parses a feed with golang-ical and returns its nights and its events by UID.
func feedNights(t *testing.T, body []byte) (map[string]bool, map[string]*ics.VEvent) {
	t.Helper()
	cal, err := ics.ParseCalendar(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, body)
	}
	nights, byUID := map[string]bool{}, map[string]*ics.VEvent{}
	for _, e := range cal.Events() {
		start, err1 := e.GetAllDayStartAt()
		end, err2 := e.GetAllDayEndAt()
		if err1 != nil || err2 != nil {
			t.Fatalf("event %s: %v %v", e.Id(), err1, err2)
		}
		for d := start; d.Before(end); d = d.AddDate(0, 0, 1) {
			nights[d.Format(time.DateOnly)] = true
		}
		byUID[e.Id()] = e
	}
	return nights, byUID
}

// viewNights are the nights the view holds of the property in bookings and blocks whose
// last night is on or after the feed's first day (2029-11-11): each is exported whole.
func (s *server) viewNights(acc string, pid int64) map[string]bool {
	out := map[string]bool{}
	add := func(nights []string) {
		if len(nights) > 0 && nights[len(nights)-1] >= "2029-11-11" {
			for _, n := range nights {
				out[n] = true
			}
		}
	}
	for _, b := range s.view.Bookings(acc, pid) {
		add(b.Nights)
	}
	for _, b := range s.view.Blocks(acc, pid) {
		end, _ := pricing.ParseDate(b.EndDate)
		add(nightsOf(b.StartDate, end.AddDays(1).String()))
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

func TestICalRendering(t *testing.T) {
	s := newServer(t, "")
	s.load(contract.PropertyUpdated, icalProperty("1001", 17, 3, "Villa Aurora", tokA))
	for _, r := range []struct {
		name string
		load func()
		uid  string // the event it adds ("" none); its dates
		from string
		to   string
	}{
		{"a reserved booking", func() {
			s.load(contract.BookingReserved, booking("1001", 5, 17, 1, "reserved", "2030-01-20", "2030-01-23"))
		},
			"booking-5@vros", "2030-01-20", "2030-01-23"},
		{"a cancelled booking is absent", func() {
			s.load(contract.BookingCancelled, booking("1001", 6, 17, 2, "cancelled", "2030-02-10", "2030-02-12"))
		}, "", "", ""},
		{"an owner block (end date included)", func() { s.load(contract.BlockCreated, block("1001", 7, 17, 1, "2030-02-01", "2030-02-03", 0)) },
			"block-7@vros", "2030-02-01", "2030-02-04"},
		{"an imported block", func() { s.load(contract.BlockCreated, block("1001", 8, 17, 1, "2030-03-01", "2030-03-02", 5)) },
			"block-8@vros", "2030-03-01", "2030-03-03"},
		{"the imported block moved", func() { s.load(contract.BlockUpdated, block("1001", 8, 17, 2, "2030-03-05", "2030-03-06", 5)) },
			"block-8@vros", "2030-03-05", "2030-03-07"},
		{"a deleted block is absent", func() {
			b := block("1001", 9, 17, 2, "2030-04-01", "2030-04-01", 0)
			b.Deleted = true
			s.load(contract.BlockDeleted, b)
		}, "", "", ""},
		{"a booking whose last night is today−60 days is kept", func() {
			s.load(contract.BookingReserved, booking("1001", 10, 17, 1, "reserved", "2029-11-09", "2029-11-12"))
		}, "booking-10@vros", "2029-11-09", "2029-11-12"},
		{"a booking whose last night is before today−60 days is left out", func() {
			s.load(contract.BookingReserved, booking("1001", 11, 17, 1, "reserved", "2029-11-01", "2029-11-11"))
		}, "", "", ""},
		{"an old block is left out", func() { s.load(contract.BlockCreated, block("1001", 12, 17, 1, "2029-10-01", "2029-11-10", 0)) },
			"", "", ""},
		{"another property's booking is absent", func() {
			s.load(contract.BookingReserved, booking("1001", 13, 18, 1, "reserved", "2030-01-01", "2030-01-05"))
		}, "", "", ""},
	} {
		t.Run(r.name, func(t *testing.T) {
			r.load()
			status, h, body := s.fetch(http.MethodGet, "/internal/ical/"+tokA+".ics", "")
			if status != 200 || h.Get("Content-Type") != "text/calendar; charset=utf-8" || h.Get("Cache-Control") != "no-cache" {
				t.Fatalf("%d %v %s", status, h, body)
			}
			nights, events := feedNights(t, body)
			want := s.viewNights("1001", 17)
			if !slices.Equal(sortedKeys(nights), sortedKeys(want)) {
				t.Errorf("feed nights %v, view nights %v", sortedKeys(nights), sortedKeys(want))
			}
			if r.uid != "" {
				e := events[r.uid]
				if e == nil {
					t.Fatalf("no event %s in\n%s", r.uid, body)
				}
				start, _ := e.GetAllDayStartAt()
				end, _ := e.GetAllDayEndAt()
				if start.Format(time.DateOnly) != r.from || end.Format(time.DateOnly) != r.to {
					t.Errorf("%s: %s..%s, want %s..%s", r.uid, start.Format(time.DateOnly), end.Format(time.DateOnly), r.from, r.to)
				}
			}
			for _, no := range []string{"booking-6@", "booking-11@", "block-9@", "block-12@", "booking-13@", "Rossi", "memo", "DESCRIPTION"} {
				if strings.Contains(string(body), no) {
					t.Errorf("the feed shows %q:\n%s", no, body)
				}
			}
		})
	}
	_, _, body := s.fetch(http.MethodGet, "/internal/ical/"+tokA+".ics", "")
	for _, line := range []string{"BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//vros//iCal export//EN", "CALSCALE:GREGORIAN",
		"METHOD:PUBLISH", "X-WR-CALNAME:Villa Aurora", "UID:booking-5@vros", "DTSTART;VALUE=DATE:20300120", "DTEND;VALUE=DATE:20300123",
		"SUMMARY:Reserved", "SUMMARY:Not available", "DTSTAMP:20291201T090000Z"} {
		if !strings.Contains(string(body), line+"\r\n") {
			t.Errorf("no line %q in\n%s", line, body)
		}
	}
}

func TestICalETagAndLinks(t *testing.T) {
	s := newServer(t, "")
	pathA := "/internal/ical/" + tokA + ".ics"
	s.load(contract.PropertyCreated, icalProperty("1001", 17, 1, "Villa Aurora", tokA))
	s.load(contract.PropertyCreated, icalProperty("1002", 17, 1, "Other account's villa", tokB))
	s.load(contract.BookingReserved, booking("1002", 5, 17, 1, "reserved", "2030-06-01", "2030-06-05"))

	status, h, body := s.fetch(http.MethodGet, pathA, "")
	etag := h.Get("ETag")
	if sum := sha256.Sum256(body); status != 200 || etag != `"`+hex.EncodeToString(sum[:16])+`"` {
		t.Fatalf("%d etag %q", status, etag)
	}
	for _, r := range []struct {
		name, method, path, inm string
		status                  int
		empty                   bool
	}{
		{"If-None-Match matching", http.MethodGet, pathA, etag, 304, true},
		{"in a list, weak", http.MethodGet, pathA, `"x", W/` + etag, 304, true},
		{"*", http.MethodGet, pathA, `*`, 304, true},
		{"another tag", http.MethodGet, pathA, `"deadbeef"`, 200, false},
		{"HEAD", http.MethodHead, pathA, "", 200, true},
		{"no .ics", http.MethodGet, "/internal/ical/" + tokA, "", 404, false},
		{"short token", http.MethodGet, "/internal/ical/abc.ics", "", 404, false},
		{"not base64url", http.MethodGet, "/internal/ical/" + strings.Repeat("*", 43) + ".ics", "", 404, false},
		{"unknown token", http.MethodGet, "/internal/ical/" + tokC + ".ics", "", 404, false},
	} {
		t.Run(r.name, func(t *testing.T) {
			status, h, body := s.fetch(r.method, r.path, r.inm)
			if status != r.status || (r.empty && len(body) != 0) {
				t.Fatalf("%d %s, want %d", status, body, r.status)
			}
			if status == 404 && !strings.Contains(string(body), "no such calendar") {
				t.Errorf("404 body %s", body)
			}
			if status < 400 && h.Get("ETag") != etag {
				t.Errorf("etag %q, want %q", h.Get("ETag"), etag)
			}
		})
	}

	// Another account's token shows its own calendar only.
	_, _, other := s.fetch(http.MethodGet, "/internal/ical/"+tokB+".ics", "")
	if !strings.Contains(string(other), "X-WR-CALNAME:Other account's villa") || strings.Contains(string(other), "Villa Aurora") {
		t.Fatalf("account 1002's feed:\n%s", other)
	}
	if _, _, mine := s.fetch(http.MethodGet, pathA, ""); strings.Contains(string(mine), "booking-5@") {
		t.Fatalf("account 1001's feed shows account 1002's booking:\n%s", mine)
	}

	// A new booking: 200 with a new ETag for the old one.
	s.load(contract.BookingReserved, booking("1001", 6, 17, 1, "reserved", "2030-02-01", "2030-02-03"))
	status, h, body = s.fetch(http.MethodGet, pathA, etag)
	if status != 200 || h.Get("ETag") == etag || !strings.Contains(string(body), "UID:booking-6@vros") {
		t.Fatalf("after a booking: %d %q\n%s", status, h.Get("ETag"), body)
	}

	// Rotate: the old token 404, the new one serves the calendar.
	s.load(contract.PropertyUpdated, icalProperty("1001", 17, 2, "Villa Aurora", tokC))
	if status, _, _ := s.fetch(http.MethodGet, pathA, ""); status != 404 {
		t.Fatalf("old token after rotate: %d", status)
	}
	if status, _, body := s.fetch(http.MethodGet, "/internal/ical/"+tokC+".ics", ""); status != 200 || !strings.Contains(string(body), "booking-6@") {
		t.Fatalf("new token: %d %s", status, body)
	}
	// Revoke, then delete, then erasure: 404 each time.
	s.load(contract.PropertyUpdated, icalProperty("1001", 17, 3, "Villa Aurora", ""))
	if status, _, _ := s.fetch(http.MethodGet, "/internal/ical/"+tokC+".ics", ""); status != 404 {
		t.Fatalf("after revoke: %d", status)
	}
	s.load(contract.PropertyUpdated, icalProperty("1001", 17, 4, "Villa Aurora", tokA))
	del := icalProperty("1001", 17, 5, "Villa Aurora", tokA)
	del.Deleted = true
	s.load(contract.PropertyDeleted, del)
	if status, _, _ := s.fetch(http.MethodGet, pathA, ""); status != 404 {
		t.Fatalf("after delete: %d", status)
	}
	s.load(contract.AccountErased, contract.AccountErasure{AccountID: "1002", ErasedAt: time.Now()})
	if status, _, _ := s.fetch(http.MethodGet, "/internal/ical/"+tokB+".ics", ""); status != 404 {
		t.Fatalf("after the account's erasure: %d", status)
	}
}

// Pollers while bookings arrive (run with -race): every answer is a whole calendar whose ETag
// is its body's, one ETag never names two bodies, and the last poll shows every booking.
func TestICalConcurrentPollers(t *testing.T) {
	s := newServer(t, "")
	path := "/internal/ical/" + tokA + ".ics"
	s.load(contract.PropertyCreated, icalProperty("1001", 17, 1, "Villa Aurora", tokA))
	var (
		mu     sync.Mutex
		bodies = map[string]string{}
		wg     sync.WaitGroup
		stop   = make(chan struct{})
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				status, h, body := s.fetch(http.MethodGet, path, "")
				sum := sha256.Sum256(body)
				if status != 200 || h.Get("ETag") != `"`+hex.EncodeToString(sum[:16])+`"` {
					t.Errorf("%d %q", status, h.Get("ETag"))
					return
				}
				if _, err := ics.ParseCalendar(bytes.NewReader(body)); err != nil {
					t.Errorf("parse: %v", err)
					return
				}
				mu.Lock()
				if prev, ok := bodies[h.Get("ETag")]; ok && prev != string(body) {
					t.Errorf("ETag %s names two bodies", h.Get("ETag"))
				}
				bodies[h.Get("ETag")] = string(body)
				mu.Unlock()
			}
		}()
	}
	start, _ := pricing.ParseDate("2030-02-01")
	for i := range 100 {
		in := start.AddDays(3 * i)
		if err := s.view.Load(contract.BookingReserved, mustJSON(booking("1001", int64(100+i), 17, 1, "reserved", in.String(), in.AddDays(2).String()))); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	_, _, body := s.fetch(http.MethodGet, path, "")
	nights, events := feedNights(t, body)
	if len(events) != 100 || len(nights) != 200 {
		t.Fatalf("last poll: %d events, %d nights, want 100 and 200", len(events), len(nights))
	}
	if len(bodies) < 2 {
		t.Logf("the pollers saw %d versions", len(bodies))
	}
}

// TestICalNameControlCharacters: control characters in the property's name (the owner's
// text) become spaces, so the feed stays valid RFC 5545 (no bare CR or LF in a value).
func TestICalNameControlCharacters(t *testing.T) {
	s := newServer(t, "")
	s.load(contract.PropertyUpdated, icalProperty("1001", 17, 3, "Villa\rAurora\nby\tthe\x00Sea", tokA))
	_, _, body := s.fetch(http.MethodGet, "/internal/ical/"+tokA+".ics", "")
	if !strings.Contains(string(body), "X-WR-CALNAME:Villa Aurora by the Sea\r\n") {
		t.Fatalf("calendar name in\n%q", body)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(body), "\r\n"), "\r\n") {
		if strings.ContainsAny(line, "\r\n\x00") {
			t.Fatalf("a line holds a control character: %q", line)
		}
	}
}

// TestFeedsCacheBounded: the rendered feeds kept never exceed icalCacheBytes, and replacing
// or dropping one keeps the count of bytes exact.
func TestFeedsCacheBounded(t *testing.T) {
	var f feeds
	body := make([]byte, 1<<20)
	for i := range 100 {
		f.put(fmt.Sprint(i), &feed{account: "a", gen: 1, body: body})
		if f.bytes > icalCacheBytes {
			t.Fatalf("after %d feeds of 1 MiB the cache holds %d bytes", i+1, f.bytes)
		}
	}
	f = feeds{}
	f.put("x", &feed{gen: 1, body: make([]byte, 10)})
	f.put("x", &feed{gen: 2, body: make([]byte, 30)})
	f.put("y", &feed{account: "gone", gen: 1, body: make([]byte, 5)})
	f.Forget("gone")
	if f.bytes != 30 {
		t.Fatalf("bytes %d, want 30", f.bytes)
	}
	f.drop("x")
	if f.bytes != 0 || len(f.m) != 0 {
		t.Fatalf("after the drop: %d bytes, %d feeds", f.bytes, len(f.m))
	}
}
