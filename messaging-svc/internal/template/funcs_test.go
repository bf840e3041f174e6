package template

import "testing"

func TestMoney(t *testing.T) {
	for _, tc := range []struct{ lang, amount, currency, want string }{
		{"en", "1234.5", "EUR", "€1,234.50"},
		{"en", "1234567.891", "USD", "$1,234,567.89"},
		{"en", "12", "CHF", "CHF\u00a012.00"},
		{"en", "", "EUR", "€0.00"},
		{"en", "-35", "GBP", "-£35.00"},
		{"en", "-0.001", "EUR", "€0.00"},
		{"en", "15000", "JPY", "¥15,000"},
		{"it", "1234.5", "EUR", "1.234,50\u00a0€"},
		{"de", "999.999", "EUR", "1.000,00\u00a0€"},
		{"fr", "1234.5", "EUR", "1\u00a0234,50\u00a0€"},
		{"nl", "1234.5", "EUR", "€\u00a01.234,50"},
		{"es", "1234.5", "EUR", "1.234,50\u00a0€"},
		{"pt", "1234.5", "BRL", "1.234,50\u00a0R$"},
		{"de", "-35", "USD", "-35,00\u00a0$"},
		{"nl", "15000", "JPY", "¥\u00a015.000"},
		{"xx", "5", "EUR", "€5.00"},
	} {
		got, err := localeOf(tc.lang).money(tc.amount, tc.currency)
		if err != nil || got != tc.want {
			t.Errorf("money(%s %q %s) = %q, %v; want %q", tc.lang, tc.amount, tc.currency, got, err, tc.want)
		}
	}
	if _, err := localeOf("en").money("12,50", "EUR"); err == nil {
		t.Error("money accepted a malformed amount")
	}
}

func TestDates(t *testing.T) {
	for _, tc := range []struct{ lang, in, want string }{
		{"en", "2026-07-10", "Friday 10 July 2026"},
		{"it", "2026-07-10", "venerdì 10 luglio 2026"},
		{"es", "2026-07-10", "viernes 10 de julio de 2026"},
		{"fr", "2026-08-01", "samedi 1 août 2026"},
		{"de", "2026-03-01", "Sonntag, 1. März 2026"},
		{"pt", "2026-07-10", "sexta-feira, 10 de julho de 2026"},
		{"nl", "2026-07-10", "vrijdag 10 juli 2026"},
		{"en", "", ""},
	} {
		got, err := localeOf(tc.lang).date(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("date(%s %q) = %q, %v; want %q", tc.lang, tc.in, got, err, tc.want)
		}
	}
	for lang, want := range map[string]string{"es": "viernes 10 de julio de 2026, 15:00", "fr": "vendredi 10 juillet 2026, 15:00",
		"de": "Freitag, 10. Juli 2026, 15:00", "pt": "sexta-feira, 10 de julho de 2026, 15:00", "nl": "vrijdag 10 juli 2026, 15:00"} {
		if got, err := localeOf(lang).datetime("2026-07-10", "15:00"); err != nil || got != want {
			t.Errorf("datetime(%s) = %q, %v; want %q", lang, got, err, want)
		}
	}
	l := localeOf("en")
	for _, in := range [][]string{{"2026-07-10 15:00"}, {"2026-07-10T15:00"}, {"2026-07-10", "15:00"}} {
		if got, err := l.datetime(in...); err != nil || got != "Friday 10 July 2026, 15:00" {
			t.Errorf("datetime(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := l.date("10/07/2026"); err == nil {
		t.Error("date accepted 10/07/2026")
	}
	if _, err := l.datetime("2026-07-10"); err == nil {
		t.Error("datetime accepted a date alone")
	}
}

func TestDefaultFunc(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want any
	}{{"", "x"}, {"a", "a"}, {0, "x"}, {3, 3}, {nil, "x"}, {[]Payment{}, "x"}, {[]Payment{{}}, []Payment{{}}}} {
		got := orDefault("x", tc.v)
		if _, isSlice := tc.want.([]Payment); isSlice {
			if _, ok := got.([]Payment); !ok {
				t.Errorf("default(%v) = %v", tc.v, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("default(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}
