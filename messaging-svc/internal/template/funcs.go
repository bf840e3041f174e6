package template

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// funcs are the only functions a template may call besides Go's built-in logic and
// comparisons: date, datetime and money format in the message's language.
func funcs(lang string) map[string]any {
	l := localeOf(lang)
	return map[string]any{
		"date":     l.date,
		"datetime": l.datetime,
		"money":    l.money,
		"upper":    strings.ToUpper,
		"lower":    strings.ToLower,
		"default":  orDefault,
	}
}

// orDefault is `default`: {{.Guest.FirstName | default "guest"}} is v, or def when v is
// empty (its type's zero value).
func orDefault(def, v any) any {
	if v == nil {
		return def
	}
	if r := reflect.ValueOf(v); r.IsZero() || (r.Kind() == reflect.Slice && r.Len() == 0) {
		return def
	}
	return v
}

// locale is how one language writes dates and amounts.
type locale struct {
	weekdays [7]string  // Sunday first
	months   [12]string // January first
	// dateLayout: %W weekday, %D day, %M month, %Y year.
	dateLayout string
	thousands  string
	decimal    string
	// symbolFirst: "€1,234.50" (en), else "1.234,50 €".
	symbolFirst bool
	symbolSpace bool
}

var locales = map[string]locale{
	"en": {weekdays: [7]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"},
		months:     [12]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"},
		dateLayout: "%W %D %M %Y", thousands: ",", decimal: ".", symbolFirst: true},
	"it": {weekdays: [7]string{"domenica", "lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato"},
		months:     [12]string{"gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre", "ottobre", "novembre", "dicembre"},
		dateLayout: "%W %D %M %Y", thousands: ".", decimal: ",", symbolSpace: true},
	"es": {weekdays: [7]string{"domingo", "lunes", "martes", "miércoles", "jueves", "viernes", "sábado"},
		months:     [12]string{"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"},
		dateLayout: "%W %D de %M de %Y", thousands: ".", decimal: ",", symbolSpace: true},
	"fr": {weekdays: [7]string{"dimanche", "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi"},
		months:     [12]string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"},
		dateLayout: "%W %D %M %Y", thousands: "\u00a0", decimal: ",", symbolSpace: true},
	"de": {weekdays: [7]string{"Sonntag", "Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag"},
		months:     [12]string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"},
		dateLayout: "%W, %D. %M %Y", thousands: ".", decimal: ",", symbolSpace: true},
	"pt": {weekdays: [7]string{"domingo", "segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado"},
		months:     [12]string{"janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro", "novembro", "dezembro"},
		dateLayout: "%W, %D de %M de %Y", thousands: ".", decimal: ",", symbolSpace: true},
	"nl": {weekdays: [7]string{"zondag", "maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "zaterdag"},
		months:     [12]string{"januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus", "september", "oktober", "november", "december"},
		dateLayout: "%W %D %M %Y", thousands: ".", decimal: ",", symbolFirst: true, symbolSpace: true},
}

func localeOf(lang string) locale {
	if l, ok := locales[lang]; ok {
		return l
	}
	return locales[Fallback]
}

// date writes a YYYY-MM-DD date in full ("Friday 12 June 2026", "venerdì 12 giugno 2026");
// "" stays "".
func (l locale) date(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return "", fmt.Errorf("date: %q is not a date (YYYY-MM-DD)", s)
	}
	return l.formatDate(t), nil
}

func (l locale) formatDate(t time.Time) string {
	return strings.NewReplacer("%W", l.weekdays[t.Weekday()], "%D", fmt.Sprint(t.Day()),
		"%M", l.months[t.Month()-1], "%Y", fmt.Sprint(t.Year())).Replace(l.dateLayout)
}

// datetime writes a date and a time of day, given as "YYYY-MM-DD HH:MM" (or
// "YYYY-MM-DDTHH:MM") or as two arguments, the date and the time: "Friday 12 June 2026,
// 15:00".
func (l locale) datetime(parts ...string) (string, error) {
	s := strings.Replace(strings.Join(parts, " "), "T", " ", 1)
	if s == "" {
		return "", nil
	}
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		return "", fmt.Errorf("datetime: %q is not a date and time (YYYY-MM-DD HH:MM)", s)
	}
	return l.formatDate(t) + ", " + t.Format("15:04"), nil
}

// symbols of the usual currencies; another is written with its code.
var symbols = map[string]string{"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥", "BRL": "R$", "AUD": "A$", "CAD": "C$"}

// zeroDecimals are the currencies without minor units.
var zeroDecimals = map[string]bool{"JPY": true, "KRW": true, "ISK": true, "CLP": true, "VND": true}

// money writes a decimal amount in a currency, rounded to its minor unit, the language's way:
// "€1,234.50" in English, "1.234,50 €" in Italian; "" is zero.
func (l locale) money(amount, currency string) (string, error) {
	if amount == "" {
		amount = "0"
	}
	d, err := decimal.NewFromString(amount)
	if err != nil {
		return "", fmt.Errorf("money: %q is not an amount", amount)
	}
	places := int32(2)
	if zeroDecimals[strings.ToUpper(currency)] {
		places = 0
	}
	s := d.Abs().StringFixed(places)
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteString(l.thousands)
		}
		b.WriteRune(c)
	}
	num := b.String()
	if frac != "" {
		num += l.decimal + frac
	}
	sym, ok := symbols[strings.ToUpper(currency)]
	if !ok {
		sym = strings.ToUpper(currency)
	}
	sign := ""
	if d.Round(places).IsNegative() {
		sign = "-"
	}
	switch {
	case sym == "":
		return sign + num, nil
	case l.symbolFirst && l.symbolSpace || l.symbolFirst && !ok:
		return sign + sym + "\u00a0" + num, nil
	case l.symbolFirst:
		return sign + sym + num, nil
	}
	return sign + num + "\u00a0" + sym, nil
}
