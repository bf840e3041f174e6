package fields

import (
	"strings"
	"unicode"
)

// MaxEmail is the longest address (RFC 5321's path limit), in characters.
const MaxEmail = 254

const (
	maxEmailLocal = 64
	emailMsg      = "must be a valid email address"
)

// Email reads member name as a bare email address (ValidEmail) of at most 254 characters.
// An optional member sent blank reads as "", present. The one rule of an address in every
// service, so that what edge lets through a service never refuses.
func (o *Object) Email(name string, required bool) (string, bool) {
	s, ok := o.String(name, Str{Required: required, Max: MaxEmail})
	if !ok || s == "" {
		return s, ok
	}
	if !ValidEmail(s) {
		o.Add(name, emailMsg)
		return "", false
	}
	return s, true
}

// ValidEmail reports whether s is a bare address local@domain: no display name, comments,
// quoting or IP literal; a dot-atom local part of at most 64 characters; a domain of at least
// two labels of letters, digits and inner hyphens, with a top-level label that is not all
// digits. Non-ASCII letters are allowed (internationalised addresses).
func ValidEmail(s string) bool {
	if len(s) > 4*MaxEmail {
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
