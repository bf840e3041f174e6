package guest

import (
	"strings"

	"github.com/biter777/countries"
	"golang.org/x/text/language"

	"github.com/vros/vros/libs/fields"
)

const (
	countryMsg = "must be an ISO 3166-1 alpha-2 country code"
)

// ReadCountry reads member name as an ISO 3166-1 alpha-2 code in any case
// and returns it upper case. Aliases such as UK are refused: the country
// list names GB. An optional member sent blank reads as "", present.
func ReadCountry(o *fields.Object, name string, required bool) (string, bool) {
	s, ok := o.String(name, fields.Str{Required: required})
	if !ok || s == "" {
		return s, ok
	}
	code, valid := ParseCountry(s)
	if !valid {
		o.Add(name, countryMsg)
		return "", false
	}
	return code, true
}

// ParseCountry returns s upper-cased when it is an assigned ISO 3166-1
// alpha-2 code.
func ParseCountry(s string) (string, bool) {
	if len(s) != 2 {
		return "", false
	}
	code := strings.ToUpper(s)
	if code[0] < 'A' || code[0] > 'Z' || code[1] < 'A' || code[1] > 'Z' {
		return "", false
	}
	c := countries.ByName(code)
	if !c.IsValid() || c.Alpha2() != code {
		return "", false
	}
	return code, true
}

// CountryFromLocale converts a social-login locale to a country code.
// "en_US", "en-US", "en_US.UTF-8" and "it-IT" carry their region. A bare
// language takes its most likely region ("fr" → FR, "en" → US, "pt" → BR).
// A region that is unknown or not a country (such as "es-419" or Facebook's
// "en_PI") falls back to the language's likely region; anything else falls
// back to DefaultCountry.
func CountryFromLocale(locale string) string {
	s := strings.TrimSpace(locale)
	if i := strings.IndexAny(s, ".@"); i >= 0 {
		s = s[:i] // POSIX codeset and modifier: en_US.UTF-8@euro
	}
	s = strings.ReplaceAll(s, "_", "-")
	if s == "" || len(s) > maxLocale {
		return DefaultCountry
	}
	tag, err := language.Parse(s)
	if err == nil {
		if code, ok := regionOf(tag); ok {
			return code
		}
	}
	// Retry with the language alone: "en-PI" → "en" → US.
	base := s
	if i := strings.IndexByte(s, '-'); i >= 0 {
		base = s[:i]
	}
	if b, err := language.ParseBase(base); err == nil {
		if tag, err := language.Compose(b); err == nil {
			if code, ok := regionOf(tag); ok {
				return code
			}
		}
	}
	return DefaultCountry
}

func regionOf(tag language.Tag) (string, bool) {
	if tag == language.Und {
		return "", false
	}
	r, conf := tag.Region()
	if conf == language.No || !r.IsCountry() {
		return "", false
	}
	return ParseCountry(r.String())
}
