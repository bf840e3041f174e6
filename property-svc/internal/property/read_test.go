package property_test

import (
	"testing"

	"github.com/vros/vros/property-svc/internal/property"
)

const unknownAction = "action: must be one of create, update, delete, get, list"

func TestDecodePropertyGet(t *testing.T) {
	base := `{"action":"get","property":{"internal_code":"VR-001"}}`
	rows := []row{
		tc("only internal_code", ""),
		tc("action any case is not an action", unknownAction, set("action", "GET")),
		tc("property missing", "property: is required", set("property", del)),
		tc("property null", "property: is required", set("property", nil)),
		tc("property not an object", "property: must be an object", set("property", "VR-001")),
		tc("internal_code missing", "property.internal_code: is required", set("property.internal_code", del)),
		tc("internal_code blank", "property.internal_code: is required", set("property.internal_code", "  ")),
		tc("internal_code 10 chars", "", set("property.internal_code", chars(10))),
		tc("internal_code 11 chars", "property.internal_code: must be at most 10 characters", set("property.internal_code", chars(11))),
		tc("internal_code as number", "", set("property.internal_code", 42)),
		tc("other fields not checked", "", set("property.name", "x"), set("property.maxguest", 99)),
		tc("list members not read", "", set("page", 0), set("limit", "x")),
	}
	check(t, base, rows, decodeProperty)
	req, err := property.DecodeProperty([]byte(base))
	if err != nil || req.Action != property.Get || req.Property.InternalCode != "VR-001" {
		t.Errorf("got %+v, %v", req, err)
	}
}

func TestDecodePropertyList(t *testing.T) {
	base := `{"action":"list","page":2,"limit":10,"search":"sea"}`
	rows := []row{
		tc("valid", ""),
		tc("no member but action", "", set("page", del), set("limit", del), set("search", del)),
		tc("property not required", "", set("property", del)),
		tc("property ignored", "", set("property", "anything")),
		tc("page as string", "", set("page", "3")),
		tc("page blank means not sent", "", set("page", "")),
		tc("page null means not sent", "", set("page", nil)),
		tc("page huge", "", set("page", "9223372036854775807")),
		tc("page 0", "page: must be at least 1", set("page", 0)),
		tc("page negative", "page: must be at least 1", set("page", -1)),
		tc("page fraction", "page: must be a whole number", set("page", 1.5)),
		tc("page text", "page: must be a number", set("page", "two")),
		tc("page beyond int64", "page: is out of range", set("page", "92233720368547758070")),
		tc("limit 1", "", set("limit", 1)),
		tc("limit 100", "", set("limit", 100)),
		tc("limit 0", "limit: must be between 1 and 100", set("limit", 0)),
		tc("limit 101", "limit: must be between 1 and 100", set("limit", 101)),
		tc("limit fraction", "limit: must be a whole number", set("limit", "10.5")),
		tc("limit bool", "limit: must be a number", set("limit", true)),
		tc("search blank", "", set("search", "   ")),
		tc("search 100 chars", "", set("search", chars(100))),
		tc("search 101 chars", "search: must be at most 100 characters", set("search", chars(101))),
		tc("search as number", "", set("search", 17)),
		tc("search not a string", "search: must be a string", set("search", []any{"a"})),
		tc("search regex metacharacters are text", "", set("search", `.*(a|b)[^x]\d{2,}$`)),
		tc("every violation listed", "page: must be a whole number\nlimit: must be between 1 and 100\nsearch: must be at most 100 characters",
			set("page", "1.5"), set("limit", 500), set("search", chars(101))),
		tc("unknown action checks only action and internal_code",
			unknownAction+"\nproperty: is required", set("action", "count")),
	}
	check(t, base, rows, decodeProperty)

	for _, c := range []struct {
		body string
		want property.ListQuery
	}{
		{`{"action":"list"}`, property.ListQuery{Page: 1, Limit: property.DefaultListLimit}},
		{`{"action":"list","page":"","limit":null,"search":""}`, property.ListQuery{Page: 1, Limit: 50}},
		{`{"action":"list","page":"3","limit":" 7 ","search":"Sea View"}`, property.ListQuery{Page: 3, Limit: 7, Search: "Sea View"}},
	} {
		req, err := property.DecodeProperty([]byte(c.body))
		if err != nil || req.Action != property.List || req.List != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.body, req.List, err, c.want)
		}
	}
}
