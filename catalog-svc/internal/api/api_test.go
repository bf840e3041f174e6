package api

import "testing"

func TestCurrencySymbol(t *testing.T) {
	for code, want := range map[string]string{"USD": "$", "EUR": "€", "GBP": "£", "nope": "nope"} {
		if got := currencySymbol(code); got != want {
			t.Errorf("currencySymbol(%s) = %q, want %q", code, got, want)
		}
	}
}

func TestCountries(t *testing.T) {
	if len(countryNames) < 240 || countryNames["US"] != "United States" || countryNames["DE"] != "Germany" {
		t.Fatalf("%d countries, US %q DE %q", len(countryNames), countryNames["US"], countryNames["DE"])
	}
}
