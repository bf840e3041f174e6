package channex

import (
	"encoding/json"
	"regexp"
	"strings"
)

// cardKeys are the JSON keys whose values are card data (Channex's guarantee object and the
// names other payloads use); Mask replaces their values.
var cardKeys = map[string]bool{
	"card_number": true, "cvv": true, "cvc": true, "cvv2": true, "card_cvc": true, "security_code": true,
	"expiration_date": true, "expiry": true, "card_expiry": true, "exp_month": true, "exp_year": true,
	"cardholder_name": true, "card_holder_name": true, "pan": true, "card_token": true,
}

// panRE finds card-number-like digit runs (13 to 19 digits, spaces or dashes between).
var panRE = regexp.MustCompile(`\d(?:[ -]?\d){12,18}`)

// Mask returns body with card data masked, for the channel log: in a JSON body the values of
// card keys (card_number, cvv, expiration_date, cardholder_name, …) become "***", and in any
// body every digit run that passes the Luhn check as a 13–19 digit card number keeps only
// its last four digits. A nil body stays nil.
func Mask(body []byte) []byte {
	if body == nil {
		return nil
	}
	out := body
	var v any
	if json.Unmarshal(body, &v) == nil {
		if maskJSON(v) {
			if b, err := json.Marshal(v); err == nil {
				out = b
			}
		}
	}
	return panRE.ReplaceAllFunc(out, func(m []byte) []byte {
		digits := make([]byte, 0, len(m))
		for _, c := range m {
			if c >= '0' && c <= '9' {
				digits = append(digits, c)
			}
		}
		if !luhn(digits) {
			return m
		}
		return []byte(strings.Repeat("*", len(digits)-4) + string(digits[len(digits)-4:]))
	})
}

// maskJSON masks card keys in place; true when something changed.
func maskJSON(v any) bool {
	changed := false
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if cardKeys[strings.ToLower(k)] && x != nil {
				t[k] = "***"
				changed = true
				continue
			}
			if maskJSON(x) {
				changed = true
			}
		}
	case []any:
		for _, x := range t {
			if maskJSON(x) {
				changed = true
			}
		}
	}
	return changed
}

func luhn(d []byte) bool {
	if len(d) < 13 || len(d) > 19 {
		return false
	}
	sum := 0
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if (len(d)-1-i)%2 == 1 {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
	}
	return sum%10 == 0
}
