package pricing

import (
	"encoding/json"
	"testing"
	"time"
)

func TestDateAgreesWithTime(t *testing.T) {
	t.Parallel()
	start := time.Date(1899, 12, 25, 0, 0, 0, 0, time.UTC)
	first := NewDate(1899, time.December, 25)
	for i := range 80000 { // to 2118
		tm := start.AddDate(0, 0, i)
		d := NewDate(tm.Date())
		y, m, dd := d.Civil()
		if ty, tmo, td := tm.Date(); y != ty || m != tmo || dd != td {
			t.Fatalf("%s: civil %d-%d-%d", tm.Format(time.DateOnly), y, m, dd)
		}
		if d.Weekday() != tm.Weekday() || d.String() != tm.Format(time.DateOnly) || DaysBetween(first, d) != i ||
			first.AddDays(i) != d || DateOf(tm) != d {
			t.Fatalf("%s: weekday %s string %s days %d", tm.Format(time.DateOnly), d.Weekday(), d, DaysBetween(first, d))
		}
		if p, err := ParseDate(d.String()); err != nil || p != d {
			t.Fatalf("%s: parse %v %v", d, p, err)
		}
	}
}

func TestDateParseAndMonths(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "2027-02-29", "2027-13-01", "2027-00-10", "2027-04-31", "27-01-01", "2027-1-01", "2027/01/01",
		"2027-01-1x", "0000-01-01", "+027-01-01"} {
		if _, err := ParseDate(bad); err == nil {
			t.Errorf("ParseDate(%q) accepted", bad)
		}
	}
	if _, err := ParseDate("2028-02-29"); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		from   string
		months int
		want   string
	}{{"2027-01-31", 1, "2027-02-28"}, {"2028-01-31", 1, "2028-02-29"}, {"2027-12-15", 1, "2028-01-15"},
		{"2027-03-31", -1, "2027-02-28"}, {"2027-01-10", 6, "2027-07-10"}, {"2027-01-10", -13, "2025-12-10"}, {"2027-05-31", 12, "2028-05-31"}} {
		if got := MustDate(c.from).AddMonths(c.months).String(); got != c.want {
			t.Errorf("%s + %d months = %s, want %s", c.from, c.months, got, c.want)
		}
	}
	if NewDate(2027, time.February, 30) != MustDate("2027-03-02") || NewDate(2027, 13, 1) != MustDate("2028-01-01") {
		t.Error("NewDate does not normalise like time.Date")
	}
	a, b := MustDate("2027-03-01"), MustDate("2027-03-08")
	if !a.Before(b) || !b.After(a) || a.Compare(b) != -1 || b.Compare(a) != 1 || a.Compare(a) != 0 || DaysBetween(b, a) != -7 {
		t.Error("comparisons")
	}
	if (Date{}).String() != "" || !(Date{}).IsZero() || a.IsZero() {
		t.Error("zero date")
	}
}

func TestDateJSON(t *testing.T) {
	t.Parallel()
	type doc struct {
		Checkin Date                 `json:"checkin"`
		Nights  map[Date]int         `json:"nights"`
		Missing Date                 `json:"missing"`
		Ptr     *Date                `json:"ptr"`
		Detail  map[Date]json.Number `json:"detail"`
	}
	in := doc{Checkin: MustDate("2027-03-01"), Nights: map[Date]int{MustDate("2027-03-02"): 1}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"checkin":"2027-03-01","nights":{"2027-03-02":1},"missing":"","ptr":null,"detail":null}` {
		t.Errorf("marshal: %s", b)
	}
	var out doc
	if err := json.Unmarshal(b, &out); err != nil || out.Checkin != in.Checkin || out.Nights[MustDate("2027-03-02")] != 1 || !out.Missing.IsZero() {
		t.Errorf("unmarshal: %+v %v", out, err)
	}
	if err := json.Unmarshal([]byte(`{"checkin":"2027-02-30"}`), &out); err == nil {
		t.Error("an impossible date was accepted")
	}
}

func TestWeekdaysAndClock(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want Weekdays
		str  string
	}{{"All", AllDays, "All"}, {"all", AllDays, "All"}, {"", 0, ""}, {"Friday,Saturday", FriSat, "Friday,Saturday"},
		{" friday , SATURDAY ,sunday", FriSatSun, "Sunday,Friday,Saturday"}} {
		got, err := ParseWeekdays(c.in)
		if err != nil || got != c.want || got.String() != c.str {
			t.Errorf("ParseWeekdays(%q) = %v (%s), %v", c.in, got, got, err)
		}
	}
	if _, err := ParseWeekdays("Friday,Funday"); err == nil {
		t.Error("Funday accepted")
	}
	for in, want := range map[string]string{"14:00": "14:00", "9:05": "09:05", "00:00": "00:00", "23:59": "23:59"} {
		if c, err := ParseClock(in); err != nil || c.String() != want {
			t.Errorf("ParseClock(%q) = %s, %v", in, c, err)
		}
	}
	for _, bad := range []string{"24:00", "12:60", "1200", "12:5", ":30", "ab:cd", "-1:00"} {
		if _, err := ParseClock(bad); err == nil {
			t.Errorf("ParseClock(%q) accepted", bad)
		}
	}
}
