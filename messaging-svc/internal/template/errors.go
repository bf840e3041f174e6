package template

import (
	"fmt"
	"regexp"
	"strconv"
)

// FieldError is a template refused: the part (template.html), the line in it (0: the part
// as a whole) and Go's error text without its location prefix.
type FieldError struct {
	Field   string
	Line    int
	Message string
	// Err is the bound a render broke (ErrTooLarge, ErrTimeout), for errors.Is.
	Err error
}

func (e *FieldError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: line %d: %s", e.Field, e.Line, e.Message)
	}
	return e.Field + ": " + e.Message
}

func (e *FieldError) Unwrap() error { return e.Err }

// goLocation is the prefix Go's template errors start with: "template: html:3: …",
// "template: html:3:12: executing …", "html/template:html:3:12: …".
var goLocation = regexp.MustCompile(`(?s)^(?:html/)?template: ?[a-z]+:(\d+):(?:\d+:)? ?(.*)$`)

// goError turns Go's template error into a FieldError of the part.
func goError(field string, err error) *FieldError {
	msg := err.Error()
	if m := goLocation.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &FieldError{Field: field, Line: line, Message: m[2]}
	}
	return &FieldError{Field: field, Message: msg}
}

// lineOf reads the line of a parse.Tree ErrorContext location, "html:3:12".
func lineOf(loc string) int {
	m := regexp.MustCompile(`:(\d+):\d+$`).FindStringSubmatch(loc)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
