package guest

import (
	"strings"
	"unicode"

	"github.com/biter777/countries"
	"golang.org/x/text/language"

	"github.com/vros/vros/libs/fields"
)

const (
	maxEmail      = 254 // RFC 5321 path limit
	maxEmailLocal = 64
	emailMsg      = "must be a valid email address"
	countryMsg    = "must be an ISO 3166-1 alpha-2 country code"
)

// ReadEmail reads member name as an email address of at most 254
// characters. An optional member sent blank reads as "", present.
func ReadEmail(o *fields.Object, name string, required bool) (string, bool) {
	s, ok := o.String(name, fields.Str{Required: required, Max: maxEmail})
	if !ok || s == "" {
		return s, ok
	}
	if !ValidEmail(s) {
		o.Add(name, emailMsg)
		return "", false
	}
	return s, true
}

// ValidEmail reports whether s is a bare address local@domain: no display
// name, comments, quoting or IP literal; a dot-atom local part of at most 64
// characters; a domain of at least two labels of letters, digits and inner
// hyphens, with a top-level label that is not all digits. Non-ASCII letters
// are allowed (internationalised addresses).
func ValidEmail(s string) bool {
	if len(s) > 4*maxEmail {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at == len(s)-1 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	if len([]rune(local)) > maxEmailLocal || !dotAtom(local) {
		return false
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if !domainLabel(l) {
			return false
		}
	}
	return strings.IndexFunc(labels[len(labels)-1], func(r rune) bool { return !unicode.IsDigit(r) }) >= 0
}

func dotAtom(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if part == "" {
			return false
		}
		for _, r := range part {
			switch {
			case r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			case strings.ContainsRune("!#$%&'*+/=?^_`{|}~-", r):
			case r >= 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)):
			default:
				return false
			}
		}
	}
	return true
}

func domainLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for _, r := range l {
		if r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
			return false
		}
	}
	return true
}

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
