package feed

import (
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
		{"past skipped, ending today skipped, running kept", cal(
			vevent("UID:g1", "DTSTART;VALUE=DATE:20261201", "DTEND;VALUE=DATE:20261205"),
			vevent("UID:g2", "DTSTART;VALUE=DATE:20270101", "DTEND;VALUE=DATE:20270105"),
			vevent("UID:g3", "DTSTART;VALUE=DATE:20270101", "DTEND;VALUE=DATE:20270106")),
			[]Event{{"g3", "2027-01-01", "2027-01-06"}}, false},
		{"no UID skipped", cal(vevent("DTSTART;VALUE=DATE:20270110", "DTEND;VALUE=DATE:20270113")), nil, false},
		{"no DTSTART skipped", cal(vevent("UID:h", "DTEND;VALUE=DATE:20270113")), nil, false},
		{"garbage", []byte("<html>not a calendar</html>"), nil, true},
		{"empty file", []byte(""), nil, true},
		{"empty calendar", cal(), nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(c.body, today)
			if c.err {
				if !errors.Is(err, ErrParse) {
					t.Fatalf("err = %v, want ErrParse", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestParseKeepsNoSummary: nothing but the uid and the dates leaves Parse.
func TestParseKeepsNoSummary(t *testing.T) {
	got, err := Parse(cal(vevent("UID:x", "SUMMARY:Reserved - Jane Doe", "DESCRIPTION:phone 555", "DTSTART;VALUE=DATE:20270110")), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
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
