package pricing

import (
	"strings"
	"testing"
	"time"
)

// The one rule of A4's day sets (default_allow_checkin/-checkout, a season's
// allow_checkin/-checkout): names from All and Sunday to Saturday, comma-separated, any
// case, spaces around names; the set is their union. property-svc validates with it and
// the snapshot reader reads with it (docs/interface-a.md, "Day sets and times of day").
func TestParseWeekdaysRule(t *testing.T) {
	t.Parallel()
	mon, fri := DaysOf(time.Monday), DaysOf(time.Friday)
	for _, c := range []struct {
		name, in string
		want     Weekdays
	}{
		{"All", "All", AllDays},
		{"All in lower case", "all", AllDays},
		{"one day", "Monday", mon},
		{"two days", "Monday,Friday", mon | fri},
		{"any case, spaces around names", " monday , FRIDAY ", mon | fri},
		{"All with a day is All (the spec does not restrict combining)", "All,Monday", AllDays},
		{"a day with All is All", "Sunday, All", AllDays},
		{"a day twice counts once", "Monday,monday", mon},
		{"every day named is All", "Sunday,Monday,Tuesday,Wednesday,Thursday,Friday,Saturday", AllDays},
		{"blank is not set", "", 0},
		{"spaces only is not set", "   ", 0},
	} {
		got, err := ParseWeekdays(c.in)
		if err != nil || got != c.want {
			t.Errorf("%s: ParseWeekdays(%q) = %s, %v; want %s", c.name, c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ name, in, item string }{
		{"unknown name", "Funday", "Funday"},
		{"abbreviation", "Mon", "Mon"},
		{"one bad name among good ones", "Friday,Funday", "Funday"},
		{"empty item", "Monday,,Friday", ""},
		{"trailing comma", "Monday,", ""},
		{"leading comma", ",Monday", ""},
		{"another separator", "Monday;Friday", "Monday;Friday"},
		{"a number", "1", "1"},
	} {
		_, err := ParseWeekdays(c.in)
		want := `"` + c.item + `": ` + WeekdaysRule
		if err == nil || err.Error() != want {
			t.Errorf("%s: ParseWeekdays(%q) error %v; want %s", c.name, c.in, err, want)
		}
	}
}

// The one rule of allow_same_day_booking_until: H:MM or HH:MM, 00:00 to 23:59, digits
// only, spaces around it ignored.
func TestParseClockRule(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"14:00": "14:00", "9:05": "09:05", "09:05": "09:05", "00:00": "00:00", "0:00": "00:00",
		"23:59": "23:59", " 14:30 ": "14:30",
	} {
		if c, err := ParseClock(in); err != nil || c.String() != want {
			t.Errorf("ParseClock(%q) = %s, %v; want %s", in, c, err, want)
		}
	}
	for _, bad := range []string{
		"24:00", "12:60", "1200", "12:5", "12:005", "012:00", ":30", "12:", "ab:cd", "2pm", "14:00:00",
		"-1:00", "-0:00", "+9:30", "9:+5", "9 :30", "", " ",
	} {
		_, err := ParseClock(bad)
		if err == nil || !strings.HasSuffix(err.Error(), ": "+ClockRule) {
			t.Errorf("ParseClock(%q) error %v; want one naming the rule %q", bad, err, ClockRule)
		}
	}
}
