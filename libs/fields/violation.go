// Package fields reads a JSON request body into typed values while collecting
// every violation, each naming the field path as the client sent it
// ("season[2].start_date") and the rule it broke ("must be between 1 and 50").
//
// A decoder creates one Violations list, reads the body with Parse, pulls
// values with the typed getters and finally returns v.Err(). Getters never
// stop at the first problem, so a client learns about every bad field at once.
//
// The reader is lenient in what PHP clients actually send (numbers as JSON
// strings, booleans as 1/0 or "true"/"false", null for "not sent", [] for an
// empty object) but never truncates, rounds or trims a value silently.
package fields

import (
	"fmt"
	"strings"
)

// Violation is one broken rule on one field.
type Violation struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Violations collects the broken rules of one request, in the order found.
type Violations []Violation

// Add records that field breaks the rule stated by msg.
func (v *Violations) Add(field, msg string) {
	*v = append(*v, Violation{Field: field, Message: msg})
}

// Addf is Add with a formatted message.
func (v *Violations) Addf(field, format string, args ...any) {
	v.Add(field, fmt.Sprintf(format, args...))
}

// Len is the number of violations recorded so far.
func (v Violations) Len() int { return len(v) }

// Err returns nil when nothing was violated, otherwise an *Error holding a
// copy of the list.
func (v Violations) Err() error {
	if len(v) == 0 {
		return nil
	}
	return &Error{Violations: append(Violations(nil), v...)}
}

// Error is the error returned by Violations.Err. HTTP adapters turn it into a
// 400 validation response listing every violation.
type Error struct {
	Violations Violations
}

func (e *Error) Error() string {
	var b strings.Builder
	if len(e.Violations) == 1 {
		b.WriteString("1 invalid field: ")
	} else {
		fmt.Fprintf(&b, "%d invalid fields: ", len(e.Violations))
	}
	for i, x := range e.Violations {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(x.Field)
		b.WriteString(": ")
		b.WriteString(x.Message)
	}
	return b.String()
}

// Path joins an object path and a member name: Path("property", "name") is
// "property.name"; an empty parent yields child and an empty child yields
// parent.
func Path(parent, child string) string {
	switch {
	case parent == "":
		return child
	case child == "":
		return parent
	}
	return parent + "." + child
}

// Index names an array element: Index("season", 2) is "season[2]".
func Index(parent string, i int) string {
	return fmt.Sprintf("%s[%d]", parent, i)
}
