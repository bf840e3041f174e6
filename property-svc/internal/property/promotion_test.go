package property_test

import (
	"slices"
	"testing"

	"github.com/vros/vros/property-svc/internal/property"
)

const promotionCreate = `{"action":"create","promotion":{"code":"SUMMER-27_a","name":"Summer","type":"percent","amount":"10.5",
	"start_date":"2027-06-01","end_date":"2027-08-31","min_nights":"3","usage_limit":100,"properties":["V1","V2"]}}`

func decodePromotion(body []byte) error {
	_, err := property.DecodePromotion(body)
	return err
}

func TestDecodePromotion(t *testing.T) {
	rows := []row{
		tc("valid", ""),
		tc("promotion missing", "promotion: is required", set("promotion", del)),
		tc("code missing", "promotion.code: is required", set("promotion.code", del)),
		tc("code 32 chars", "", set("promotion.code", chars(32))),
		tc("code 33 chars", "promotion.code: must be at most 32 characters", set("promotion.code", chars(33))),
		tc("code with a space", "promotion.code: must contain only letters A-Z, digits, _ and -", set("promotion.code", "SUMMER 27")),
		tc("code with an accent", "promotion.code: must contain only letters A-Z, digits, _ and -", set("promotion.code", "ÉTÉ")),
		tc("name missing", "promotion.name: is required", set("promotion.name", del)),
		tc("name 101 chars", "promotion.name: must be at most 100 characters", set("promotion.name", chars(101))),
		tc("type missing", "promotion.type: is required", set("promotion.type", del)),
		tc("type any case", "", set("promotion.type", "FLAT")),
		tc("type unknown", "promotion.type: must be one of percent, flat", set("promotion.type", "free")),
		tc("amount missing", "promotion.amount: is required", set("promotion.amount", del)),
		tc("percent 0", "promotion.amount: must be greater than 0", set("promotion.amount", 0)),
		tc("percent 99", "", set("promotion.amount", 99)),
		tc("percent 99.01", "promotion.amount: must be at most 99", set("promotion.amount", "99.01")),
		tc("percent 4 decimals", "", set("promotion.amount", "12.3456")),
		tc("percent 5 decimals", "promotion.amount: must have at most 4 decimal places", set("promotion.amount", "12.34567")),
		tc("flat 2147483647", "", set("promotion.type", "flat"), set("promotion.amount", "2147483647")),
		tc("flat 2147483648", "promotion.amount: must be at most 2147483647", set("promotion.type", "flat"), set("promotion.amount", "2147483648")),
		tc("flat 3 decimals", "promotion.amount: must have at most 2 decimal places", set("promotion.type", "flat"), set("promotion.amount", "5.125")),
		tc("flat negative", "promotion.amount: must be greater than 0", set("promotion.type", "flat"), set("promotion.amount", -5)),
		tc("amount not a number", "promotion.amount: must be a number", set("promotion.amount", "ten")),
		tc("start_date missing", "promotion.start_date: is required", set("promotion.start_date", del)),
		tc("start_date impossible", "promotion.start_date: must be a valid date (YYYY-MM-DD)", set("promotion.start_date", "2027-02-29")),
		tc("end_date absent: open-ended", "", set("promotion.end_date", del)),
		tc("end_date blank: open-ended", "", set("promotion.end_date", "")),
		tc("end_date = start_date", "", set("promotion.end_date", "2027-06-01")),
		tc("end_date before start_date", "promotion.end_date: must not be before start_date", set("promotion.end_date", "2027-05-31")),
		tc("end_date another format", "promotion.end_date: must be a valid date (YYYY-MM-DD)", set("promotion.end_date", "31/08/2027")),
		tc("min_nights 365", "", set("promotion.min_nights", 365)),
		tc("min_nights 366", "promotion.min_nights: must be between 0 and 365", set("promotion.min_nights", 366)),
		tc("min_nights negative", "promotion.min_nights: must be between 0 and 365", set("promotion.min_nights", -1)),
		tc("usage_limit 0", "", set("promotion.usage_limit", 0)),
		tc("usage_limit 10000", "", set("promotion.usage_limit", 10000)),
		tc("usage_limit 10001", "promotion.usage_limit: must be between 0 and 10000", set("promotion.usage_limit", 10001)),
		tc("usage_limit fraction", "promotion.usage_limit: must be a whole number", set("promotion.usage_limit", 1.5)),
		tc("properties empty: every property", "", set("promotion.properties", []any{})),
		tc("properties code twice", `promotion.properties: lists "V1" twice`, set("promotion.properties[1]", "V1")),
		tc("properties not a list", "promotion.properties: must be an array", set("promotion.properties", "V1")),
		tc("update as create", "", set("action", "update")),
		tc("update needs the whole promotion", "promotion.type: is required", set("action", "update"), set("promotion.type", del)),
		tc("delete reads only the code", "", set("action", "delete"), set("promotion", obj(`{"code":"SUMMER","amount":-1}`))),
		tc("delete without code", "promotion.code: is required", set("action", "delete"), set("promotion", obj(`{}`))),
	}
	check(t, promotionCreate, rows, decodePromotion)
}

func TestDecodePromotionValues(t *testing.T) {
	req, err := property.DecodePromotion([]byte(promotionCreate))
	if err != nil {
		t.Fatal(err)
	}
	p := req.Promotion
	switch {
	case req.Action != property.Create || p.Code != "SUMMER-27_a" || p.Name != "Summer" || p.Type != property.PercentOff:
		t.Errorf("promotion %+v", p)
	case !p.Amount.Equal(dec("10.5")) || p.Start.Format("2006-01-02") != "2027-06-01" || p.End.Format("2006-01-02") != "2027-08-31":
		t.Errorf("amount and dates %+v", p)
	case p.MinNights != 3 || p.UsageLimit != 100 || !slices.Equal(req.Codes, []string{"V1", "V2"}):
		t.Errorf("limits and properties %+v %v", p, req.Codes)
	}
	req, err = property.DecodePromotion(apply(t, promotionCreate, set("promotion.end_date", del), set("promotion.type", "Flat")))
	if err != nil || !req.Promotion.End.IsZero() || req.Promotion.Type != property.FlatOff {
		t.Errorf("open-ended flat: %+v, %v", req.Promotion, err)
	}
}
