package card_test

import "github.com/vros/vros/libs/fields/fieldstest"

// The table helpers are fieldstest's; these names keep the rows short.
type row = fieldstest.Row

var (
	set, tc, del = fieldstest.Set, fieldstest.TC, fieldstest.Del
	check        = fieldstest.Check
	apply, chars = fieldstest.Apply, fieldstest.Chars
)
