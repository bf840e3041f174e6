package e2e

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"
)

// The iCal export through edge (docs/ical.md, "Export"): the link made with property-ical,
// fetched without credentials, parsed with golang-ical, equals the ledger as interface B shows
// it through edge; ETag/304; rotate, revoke; another account's link.

type icalLink struct {
	URL     *string `json:"url"`
	Path    *string `json:"path"`
	Revoked bool    `json:"revoked"`
}

func (acc account) icalLink(t *testing.T, action, code string) icalLink {
	t.Helper()
	r := acc.a(t, "property-ical", obj{"action": action, "property": obj{"internal_code": code}})
	r.status(t, http.StatusOK)
	var out struct {
		Data icalLink `json:"data"`
	}
	r.decode(t, &out)
	return out.Data
}

type feedAnswer struct {
	code int
	etag string
	body []byte
}

func fetchFeed(t *testing.T, url, inm string) feedAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if inm != "" {
		req.Header.Set("If-None-Match", inm)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK && (resp.Header.Get("Content-Type") != "text/calendar; charset=utf-8" || resp.Header.Get("Cache-Control") != "no-cache") {
		t.Fatalf("feed headers: %v", resp.Header)
	}
	return feedAnswer{code: resp.StatusCode, etag: resp.Header.Get("ETag"), body: body}
}

// icalNights parses a feed and returns its nights and its events' UIDs.
func icalNights(t *testing.T, body []byte) (map[string]bool, []string) {
	t.Helper()
	cal, err := ics.ParseCalendar(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse the feed: %v\n%s", err, body)
	}
	nights := map[string]bool{}
	var uids []string
	for _, e := range cal.Events() {
		start, err1 := e.GetAllDayStartAt()
		end, err2 := e.GetAllDayEndAt()
		if err1 != nil || err2 != nil {
			t.Fatalf("event %s: %v %v", e.Id(), err1, err2)
		}
		for d := start; d.Before(end); d = d.AddDate(0, 0, 1) {
			nights[d.Format(time.DateOnly)] = true
		}
		uids = append(uids, e.Id())
	}
	return nights, uids
}

// ledgerNights are the nights getnonavailabledate shows through edge (bookings and blocks).
func (acc account) ledgerNights(t *testing.T, pid int) (map[string]bool, bool) {
	t.Helper()
	var ranges []nonAvail
	if !acc.try(t, "getnonavailabledate", obj{"propertyId": pid}, &ranges) {
		return nil, false
	}
	out := map[string]bool{}
	for _, r := range ranges {
		start, err1 := time.Parse(time.DateOnly, r.StartDate)
		end, err2 := time.Parse(time.DateOnly, r.EndDate)
		if err1 != nil || err2 != nil {
			t.Fatalf("range %+v", r)
		}
		for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
			out[d.Format(time.DateOnly)] = true
		}
	}
	return out, true
}

func sameNights(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for n := range a {
		if !b[n] {
			return false
		}
	}
	return true
}

func TestICalExport(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	pid := bookable(t, acc, "ICX1")
	create(t, acc, guest(pid, day(10), day(13)))
	cancelled := create(t, acc, guest(pid, day(15), day(17)))
	acc.b(t, "cancel", obj{"bookingId": cancelled.BookingID}).ok(t, nil)
	acc.a(t, "property-blockdate", obj{"action": "create", "block": obj{"internal_code": "ICX1", "start_date": day(30), "end_date": day(31), "memo": "Owner stay"}}).
		status(t, http.StatusOK)

	link := acc.icalLink(t, "get", "ICX1")
	if link.URL == nil || link.Path == nil || !strings.HasSuffix(*link.URL, *link.Path) || !strings.HasPrefix(*link.Path, "/ical/") {
		t.Fatalf("link %+v", link)
	}
	url := *link.URL

	// The feed equals the ledger (getnonavailabledate: 10..12 and 30..31), once the catalog
	// has the link and every change.
	var feed feedAnswer
	eventually(t, "the feed equals the ledger", func() bool {
		ledger, ok := acc.ledgerNights(t, pid)
		if !ok || len(ledger) != 5 {
			return false
		}
		feed = fetchFeed(t, url, "")
		if feed.code != http.StatusOK {
			return false
		}
		nights, _ := icalNights(t, feed.body)
		return sameNights(nights, ledger)
	})
	var blocks []struct {
		ID        any    `json:"id"`
		StartDate string `json:"startDate"`
		EndDate   string `json:"endDate"`
	}
	acc.b(t, "getblockdates", obj{"propertyId": pid}).ok(t, &blocks)
	_, uids := icalNights(t, feed.body)
	if len(blocks) != 1 || !strings.Contains(strings.Join(uids, " "), "block-"+strings.Trim(jsonText(blocks[0].ID), `"`)+"@vros") {
		t.Fatalf("getblockdates %+v, feed UIDs %v", blocks, uids)
	}
	if strings.Contains(strings.Join(uids, " "), "booking-"+strconv.FormatInt(cancelled.BookingID, 10)+"@") {
		t.Fatalf("the cancelled booking is in the feed: %v", uids)
	}
	for _, private := range []string{"Ada", "Lovelace", "ada@example.com", "Owner stay"} {
		if bytes.Contains(feed.body, []byte(private)) {
			t.Fatalf("the feed shows %q:\n%s", private, feed.body)
		}
	}

	// Conditional GET; a new booking changes the ETag.
	if a := fetchFeed(t, url, feed.etag); a.code != http.StatusNotModified || len(a.body) != 0 {
		t.Fatalf("If-None-Match: %d %s", a.code, a.body)
	}
	create(t, acc, guest(pid, day(50), day(52)))
	eventually(t, "a new booking changes the feed", func() bool {
		a := fetchFeed(t, url, feed.etag)
		if a.code != http.StatusOK || a.etag == feed.etag {
			return false
		}
		nights, _ := icalNights(t, a.body)
		return nights[day(50)] && nights[day(51)] && !nights[day(52)]
	})

	// Another account's link never shows this account's calendar.
	other := newAccount(t)
	createProperty(t, other, "ICX1")
	otherURL := *other.icalLink(t, "get", "ICX1").URL
	eventually(t, "the other account's feed", func() bool { return fetchFeed(t, otherURL, "").code == http.StatusOK })
	if _, u := icalNights(t, fetchFeed(t, otherURL, "").body); len(u) != 0 {
		t.Fatalf("the other account's feed shows %v", u)
	}

	// Rotate: the old link 404, the new one works; revoke: 404.
	rotated := acc.icalLink(t, "rotate", "ICX1")
	if rotated.URL == nil || *rotated.URL == url {
		t.Fatalf("rotate: %+v", rotated)
	}
	eventually(t, "rotate retires the old link", func() bool {
		return fetchFeed(t, url, "").code == http.StatusNotFound && fetchFeed(t, *rotated.URL, "").code == http.StatusOK
	})
	if rev := acc.icalLink(t, "revoke", "ICX1"); !rev.Revoked || rev.URL != nil {
		t.Fatalf("revoke: %+v", rev)
	}
	eventually(t, "revoke retires the link", func() bool { return fetchFeed(t, *rotated.URL, "").code == http.StatusNotFound })
	if a := fetchFeed(t, otherURL, ""); a.code != http.StatusOK {
		t.Fatalf("the other account's link after this account's revoke: %d", a.code)
	}
}
