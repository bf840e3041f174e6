package feed

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func cal(events ...string) []byte {
	return []byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" + strings.Join(events, "") + "END:VCALENDAR\r\n")
}

func vevent(lines ...string) string {
	return "BEGIN:VEVENT\r\n" + strings.Join(lines, "\r\n") + "\r\nEND:VEVENT\r\n"
}

// synced is what a poll on day today sends booking-svc for body.
func synced(body []byte, today time.Time) ([]Event, error) {
	c, err := Parse(body, today)
	return Window(c.Events, today), err
}

func TestParse(t *testing.T) {
	today := time.Date(2027, 1, 5, 15, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		body []byte
		want []Event
		err  bool
	}{
		{"dates", cal(vevent("UID:a", "DTSTART;VALUE=DATE:20270110", "DTEND;VALUE=DATE:20270113", "SUMMARY:Jane Doe")),
			[]Event{{"a", "2027-01-10", "2027-01-13"}}, false},
		{"date-time with TZID keeps its own zone's date", cal(vevent("UID:b", "DTSTART;TZID=Pacific/Auckland:20270110T230000", "DTEND;TZID=Pacific/Auckland:20270112T100000")),
			[]Event{{"b", "2027-01-10", "2027-01-12"}}, false},
		{"date-time in UTC", cal(vevent("UID:c", "DTSTART:20270110T140000Z", "DTEND:20270111T100000Z")),
			[]Event{{"c", "2027-01-10", "2027-01-11"}}, false},
		{"missing DTEND is one night", cal(vevent("UID:d", "DTSTART;VALUE=DATE:20270110")),
			[]Event{{"d", "2027-01-10", "2027-01-11"}}, false},
		{"DTEND not after DTSTART is one night", cal(vevent("UID:e", "DTSTART;VALUE=DATE:20270110", "DTEND;VALUE=DATE:20270110")),
			[]Event{{"e", "2027-01-10", "2027-01-11"}}, false},
		{"cancelled skipped", cal(vevent("UID:f", "STATUS:CANCELLED", "DTSTART;VALUE=DATE:20270110", "DTEND;VALUE=DATE:20270113")), nil, false},
		// Ended is judged a day late: today (UTC) is still yesterday west of UTC, where an
		// event ending today still holds tonight.
		{"past skipped, ended yesterday skipped, ending today kept, running kept", cal(
			vevent("UID:g1", "DTSTART;VALUE=DATE:20261201", "DTEND;VALUE=DATE:20261205"),
			vevent("UID:g0", "DTSTART;VALUE=DATE:20270101", "DTEND;VALUE=DATE:20270104"),
			vevent("UID:g2", "DTSTART;VALUE=DATE:20270101", "DTEND;VALUE=DATE:20270105"),
			vevent("UID:g3", "DTSTART;VALUE=DATE:20270101", "DTEND;VALUE=DATE:20270106")),
			[]Event{{"g2", "2027-01-01", "2027-01-05"}, {"g3", "2027-01-01", "2027-01-06"}}, false},
		{"ending today in UTC, written as a date-time", cal(vevent("UID:g4", "DTSTART:20270103T150000Z", "DTEND:20270105T100000Z")),
			[]Event{{"g4", "2027-01-03", "2027-01-05"}}, false},
		// 731 nights at most, counted from yesterday for an event begun earlier: an event of
		// 2024..2030 keeps the coming nights, not 2024's.
		{"long event begun long ago keeps yesterday on, 731 nights", cal(vevent("UID:l1", "DTSTART;VALUE=DATE:20240101", "DTEND;VALUE=DATE:20300101")),
			[]Event{{"l1", "2027-01-04", "2029-01-04"}}, false},
		{"long future event cut at 731 nights from its start", cal(vevent("UID:l2", "DTSTART;VALUE=DATE:20270110", "DTEND;VALUE=DATE:20300101")),
			[]Event{{"l2", "2027-01-10", "2029-01-10"}}, false},
		{"731 nights kept whole", cal(vevent("UID:l3", "DTSTART;VALUE=DATE:20270110", "DTEND;VALUE=DATE:20290110")),
			[]Event{{"l3", "2027-01-10", "2029-01-10"}}, false},
		{"running event within 731 nights keeps its start", cal(vevent("UID:l4", "DTSTART;VALUE=DATE:20261201", "DTEND;VALUE=DATE:20270201")),
			[]Event{{"l4", "2026-12-01", "2027-02-01"}}, false},
		{"no UID skipped", cal(vevent("DTSTART;VALUE=DATE:20270110", "DTEND;VALUE=DATE:20270113")), nil, false},
		{"no DTSTART skipped", cal(vevent("UID:h", "DTEND;VALUE=DATE:20270113")), nil, false},
		{"garbage", []byte("<html>not a calendar</html>"), nil, true},
		{"empty file", []byte(""), nil, true},
		{"empty calendar", cal(), nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := synced(c.body, today)
			if c.err {
				if !errors.Is(err, ErrParse) {
					t.Fatalf("err = %v, want ErrParse", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) && (len(got) != 0 || len(c.want) != 0) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestParseKeepsNoSummary: nothing but the uid and the dates leaves Parse.
func TestParseKeepsNoSummary(t *testing.T) {
	got, err := synced(cal(vevent("UID:x", "SUMMARY:Reserved - Jane Doe", "DESCRIPTION:phone 555", "DTSTART;VALUE=DATE:20270110")), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	if s := got[0].UID + got[0].Start + got[0].End; strings.Contains(s, "Jane") || strings.Contains(s, "555") {
		t.Fatal(got)
	}
}

func TestBackoff(t *testing.T) {
	in := 15 * time.Minute
	want := []time.Duration{15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 16 * time.Hour, 24 * time.Hour, 24 * time.Hour}
	for i, w := range want {
		if got := Backoff(in, i+1); got != w {
			t.Fatalf("failure %d: %s, want %s", i+1, got, w)
		}
	}
	if got := Backoff(1440*time.Minute, 1); got != 24*time.Hour {
		t.Fatal(got)
	}
}

// TestWindowLater: events kept from an earlier parse (a 304 answer syncs them again) are
// cut on the day of the sync: a long event's window moves on with the days, an event that
// has ended since is left out, the others keep their dates.
func TestWindowLater(t *testing.T) {
	parsed := time.Date(2027, 1, 5, 8, 0, 0, 0, time.UTC)
	c, err := Parse(cal(
		vevent("UID:long", "DTSTART;VALUE=DATE:20240101", "DTEND;VALUE=DATE:20300101"),
		vevent("UID:soon", "DTSTART;VALUE=DATE:20270106", "DTEND;VALUE=DATE:20270109"),
		vevent("UID:later", "DTSTART;VALUE=DATE:20270301", "DTEND;VALUE=DATE:20270305")), parsed)
	if err != nil || len(c.Events) != 3 {
		t.Fatal(c, err)
	}
	got := Window(c.Events, parsed.AddDate(0, 0, 10))
	want := []Event{{"long", "2027-01-14", "2029-01-14"}, {"later", "2027-03-01", "2027-03-05"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// TestParseOddEvents: a UID too long for booking-svc is kept hashed; an event with an
// unreadable DTSTART or dates past year 9999 is left out and counted; a property between
// components (common in real files, refused by the library's strict default) is read past.
func TestParseOddEvents(t *testing.T) {
	today := time.Date(2027, 1, 5, 0, 0, 0, 0, time.UTC)
	long := "x" + strings.Repeat("é", 200) + "@airbnb.com" // 412 bytes
	sum := sha256.Sum256([]byte(long))
	hashed := "sha256:" + hex.EncodeToString(sum[:])
	body := cal(
		vevent("UID:"+long, "DTSTART;VALUE=DATE:20270110", "DTEND;VALUE=DATE:20270112"),
		vevent("UID:"+long, "DTSTART;VALUE=DATE:20270210", "DTEND;VALUE=DATE:20270212"),
		vevent("UID:bad-start", "DTSTART:tomorrow", "DTEND;VALUE=DATE:20270112"),
		vevent("UID:no-start", "DTEND;VALUE=DATE:20270112"),
		vevent("DTSTART;VALUE=DATE:20270110"),
		vevent("UID:y9999", "DTSTART;VALUE=DATE:99991231"),
		vevent("UID:y9999b", "DTSTART;VALUE=DATE:99991230", "DTEND;VALUE=DATE:99991231"),
	)
	c, err := Parse(body, today)
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{{hashed, "2027-01-10", "2027-01-12"}, {"y9999b", "9999-12-30", "9999-12-31"}}
	if !reflect.DeepEqual(c.Events, want) || c.Skipped != 4 {
		t.Fatalf("got %+v skipped %d, want %+v skipped 4", c.Events, c.Skipped, want)
	}
	if len(hashed) > MaxUID {
		t.Fatal(len(hashed))
	}
	between := []byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n" +
		vevent("UID:a", "DTSTART;VALUE=DATE:20270110") + "X-WR-CALNAME:Listing 1\r\n" +
		vevent("UID:b", "DTSTART;VALUE=DATE:20270120") + "END:VCALENDAR\r\n")
	c, err = Parse(between, today)
	if err != nil || len(c.Events) != 2 {
		t.Fatalf("a property between components: %+v, %v", c, err)
	}
}
