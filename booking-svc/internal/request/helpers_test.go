package request_test

import "github.com/vros/vros/libs/fields/fieldstest"

// The table helpers are fieldstest's; these names keep the rows short.
type row = fieldstest.Row

var (
	set, tc, del   = fieldstest.Set, fieldstest.TC, fieldstest.Del
	check, apply   = fieldstest.Check, fieldstest.Apply
	violations     = fieldstest.Violations
	chars, digits  = fieldstest.Chars, fieldstest.Digits
	many, obj, dec = fieldstest.Many, fieldstest.Obj, fieldstest.Dec
)
