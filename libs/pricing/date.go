package pricing

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Date is a civil date (year, month, day) with no time of day and no zone: a night is
// named by the date it starts on, whatever the zone of whoever asks. The zero Date is "no
// date". Dates compare with ==, <, Before and After and may be map keys.
//
// It is held as a day count rather than as a time.Time because the engine looks dates up
// hundreds of times per calendar and steps through them night by night.
type Date struct {
	n int32 // days since 0000-03-01 (proleptic Gregorian) plus 1, so that 0 is no date
}

// NewDate returns the date y-m-d. Out-of-range months and days are normalised the way
// time.Date does it (2027-02-30 is 2027-03-02); ParseDate is the strict reader. Years
// outside 1..9999 have no string form and are not supported.
func NewDate(y int, m time.Month, d int) Date {
	if m < time.January || m > time.December || d < 1 || d > 28 {
		t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		y, m, d = t.Date()
	}
	return Date{n: int32(daysFromCivil(y, int(m), d)) + 1}
}

// DateOf returns the civil date of t in t's location. Convert t first (t.In(loc)) to get
// the date somewhere else.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return NewDate(y, m, d)
}

// ParseDate reads YYYY-MM-DD; the date must exist (2027-02-29 is refused).
func ParseDate(s string) (Date, error) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return Date{}, errors.New("date must be YYYY-MM-DD")
	}
	num := func(s string) int {
		v := 0
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, m, d := num(s[:4]), num(s[5:7]), num(s[8:])
	if y < 1 || m < 1 || m > 12 || d < 1 || d > daysIn(y, time.Month(m)) {
		return Date{}, errors.New("date must be a real calendar date YYYY-MM-DD")
	}
	return Date{n: int32(daysFromCivil(y, m, d)) + 1}, nil
}

// MustDate is ParseDate for constants in tests and examples; it panics on bad input.
func MustDate(s string) Date {
	d, err := ParseDate(s)
	if err != nil {
		panic("pricing.MustDate(" + strconv.Quote(s) + "): " + err.Error())
	}
	return d
}

// IsZero reports whether d is the zero Date.
func (d Date) IsZero() bool { return d.n == 0 }

// Civil returns the year, month and day.
func (d Date) Civil() (year int, month time.Month, day int) {
	y, m, dd := civilFromDays(int(d.n) - 1)
	return y, time.Month(m), dd
}

// Year returns the year of d.
func (d Date) Year() int { y, _, _ := d.Civil(); return y }

// Month returns the month of d.
func (d Date) Month() time.Month { _, m, _ := d.Civil(); return m }

// Day returns the day of the month of d.
func (d Date) Day() int { _, _, dd := d.Civil(); return dd }

// Weekday returns the day of the week. 0000-03-01 was a Wednesday.
func (d Date) Weekday() time.Weekday { return time.Weekday((int(d.n) - 1 + 3) % 7) }

// AddDays returns d moved by n days (n may be negative).
func (d Date) AddDays(n int) Date { return Date{n: d.n + int32(n)} }

// AddMonths returns d moved by n months, with the day clamped to the end of the target
// month: 2027-01-31 plus one month is 2027-02-28, not 2027-03-03. That is how a person
// reads "bookings are open for one month".
func (d Date) AddMonths(n int) Date {
	y, m, dd := d.Civil()
	mm := int(m) - 1 + n
	y += mm / 12
	mm %= 12
	if mm < 0 {
		mm += 12
		y--
	}
	month := time.Month(mm + 1)
	if last := daysIn(y, month); dd > last {
		dd = last
	}
	return NewDate(y, month, dd)
}

// Before reports whether d is before e.
func (d Date) Before(e Date) bool { return d.n < e.n }

// After reports whether d is after e.
func (d Date) After(e Date) bool { return d.n > e.n }

// Compare returns -1, 0 or +1 as d is before, equal to or after e.
func (d Date) Compare(e Date) int {
	switch {
	case d.n < e.n:
		return -1
	case d.n > e.n:
		return 1
	}
	return 0
}

// DaysBetween returns the number of days from a to b: the nights of a stay from check-in a
// to check-out b. It is negative when b is before a.
func DaysBetween(a, b Date) int { return int(b.n - a.n) }

// String writes YYYY-MM-DD, or "" for the zero Date.
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return string(d.AppendFormat(make([]byte, 0, 10)))
}

// AppendFormat appends YYYY-MM-DD to b.
func (d Date) AppendFormat(b []byte) []byte {
	y, m, dd := d.Civil()
	return append(b, byte('0'+y/1000%10), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(m)/10), byte('0'+int(m)%10), '-', byte('0'+dd/10), byte('0'+dd%10))
}

// MarshalText writes YYYY-MM-DD, so a Date is a JSON string and can key a JSON object
// (nightlyPriceDetail is a map from date to price).
func (d Date) MarshalText() ([]byte, error) {
	if d.IsZero() {
		return []byte{}, nil
	}
	return d.AppendFormat(make([]byte, 0, 10)), nil
}

// UnmarshalText reads YYYY-MM-DD; the empty string is the zero Date.
func (d *Date) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*d = Date{}
		return nil
	}
	v, err := ParseDate(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y int, m time.Month) int {
	switch m {
	case time.February:
		if isLeap(y) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

// daysFromCivil and civilFromDays are Howard Hinnant's algorithms, counted from 0000-03-01
// so that leap days fall at the end of the counting year. Only years ≥ 0 occur here.
func daysFromCivil(y, m, d int) int {
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := m - 3
	if m <= 2 {
		mp = m + 9
	}
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe
}

func civilFromDays(z int) (y, m, d int) {
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// Weekdays is a set of days of the week: A4's day sets ("All", "Friday,Saturday") and the
// weekend nights.
type Weekdays uint8

// AllDays is the spec's "All".
const AllDays Weekdays = 1<<7 - 1

// The two weekend definitions the spec allows ("applies to 2 or 3 weekend days"): the
// nights of Friday and Saturday, or also the night of Sunday.
var (
	FriSat    = DaysOf(time.Friday, time.Saturday)
	FriSatSun = DaysOf(time.Friday, time.Saturday, time.Sunday)
)

// DaysOf returns the set holding days.
func DaysOf(days ...time.Weekday) Weekdays {
	var w Weekdays
	for _, d := range days {
		w |= 1 << d
	}
	return w
}

// Has reports whether d is in the set.
func (w Weekdays) Has(d time.Weekday) bool { return w&(1<<d) != 0 }

// String writes the set the way A4 does: "All", "Friday,Saturday", or "" for none.
func (w Weekdays) String() string {
	if w&AllDays == AllDays {
		return "All"
	}
	var b strings.Builder
	for d := time.Sunday; d <= time.Saturday; d++ {
		if w.Has(d) {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(d.String())
		}
	}
	return b.String()
}

// The rules of A4's day sets and same-day cut-off, as the text that names them in a
// client's error (docs/interface-a.md, "Day sets and times of day"). property-svc's
// validation and the snapshot reader both parse with ParseWeekdays and ParseClock, so a
// value one accepts the other reads.
const (
	WeekdaysRule = "must be All or comma-separated days from Sunday to Saturday"
	ClockRule    = "must be a 24-hour time HH:MM"
)

// ParseWeekdays reads a day set: names from All, Sunday, Monday, Tuesday, Wednesday,
// Thursday, Friday and Saturday, comma-separated, in any case, with spaces around names.
// The set is the union of the names, as the spec lists All among the day names without
// restricting how they combine: "All,Monday" is All, "Monday,monday" is Monday. An empty
// item ("Monday,,Friday") or any other name is refused. A blank string is the empty set,
// which the rules read as "not set" (the default applies).
func ParseWeekdays(s string) (Weekdays, error) {
	var w Weekdays
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	for part := range strings.SplitSeq(s, ",") {
		name := strings.TrimSpace(part)
		if strings.EqualFold(name, "All") {
			w |= AllDays
			continue
		}
		d, ok := weekdayNamed(name)
		if !ok {
			return 0, fmt.Errorf("%q: %s", name, WeekdaysRule)
		}
		w |= 1 << d
	}
	return w, nil
}

func weekdayNamed(name string) (time.Weekday, bool) {
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(name, d.String()) {
			return d, true
		}
	}
	return 0, false
}

// Clock is a local time of day in minutes after midnight: allow_same_day_booking_until.
type Clock int

// ParseClock reads a 24-hour time H:MM or HH:MM, 00:00 to 23:59, digits only, with
// spaces around it ignored as around day names.
func ParseClock(s string) (Clock, error) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	hh, okH := digits(h)
	mm, okM := digits(m)
	if !ok || !okH || !okM || len(m) != 2 || hh > 23 || mm > 59 {
		return 0, fmt.Errorf("%q: %s", s, ClockRule)
	}
	return Clock(hh*60 + mm), nil
}

// digits reads one or two ASCII digits (no sign or space, unlike strconv.Atoi).
func digits(s string) (int, bool) {
	if s == "" || len(s) > 2 {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		v = v*10 + int(s[i]-'0')
	}
	return v, true
}

// String writes HH:MM.
func (c Clock) String() string {
	h, m := int(c)/60, int(c)%60
	return string([]byte{byte('0' + h/10), byte('0' + h%10), ':', byte('0' + m/10), byte('0' + m%10)})
}

// WeekendOf maps the account setting weekend_nights (2 or 3) to the nights that cost the
// weekend price: Friday and Saturday, and Sunday too with 3.
func WeekendOf(nights int) Weekdays {
	if nights == 3 {
		return FriSatSun
	}
	return FriSat
}
