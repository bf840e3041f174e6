package admin

import (
	"strings"
	"testing"

	"github.com/vros/vros/edge/internal/account"
)

// TestParsePlan: every bound of every plan field, at and past its edges; a refused body
// names the field and leaves the plan as it was; absent fields keep their value.
func TestParsePlan(t *testing.T) {
	stored := account.Plan{RateRPS: 1, RateBurst: 2, MaxConcurrent: 3, BodyLimit: 4096, MaxProperties: 5}
	for _, c := range []struct {
		body  string
		want  account.Plan
		field string // the field a refusal names; "" for a success
	}{
		{`{}`, stored, ""},
		{`{"rate_rps":0}`, account.Plan{RateBurst: 2, MaxConcurrent: 3, BodyLimit: 4096, MaxProperties: 5}, ""},
		{`{"rate_rps":100000}`, account.Plan{RateRPS: 100000, RateBurst: 2, MaxConcurrent: 3, BodyLimit: 4096, MaxProperties: 5}, ""},
		{`{"rate_rps":0.25}`, account.Plan{RateRPS: 0.25, RateBurst: 2, MaxConcurrent: 3, BodyLimit: 4096, MaxProperties: 5}, ""},
		{`{"rate_rps":"7.5"}`, account.Plan{RateRPS: 7.5, RateBurst: 2, MaxConcurrent: 3, BodyLimit: 4096, MaxProperties: 5}, ""},
		{`{"rate_rps":100000.001}`, stored, "rate_rps"},
		{`{"rate_rps":-0.5}`, stored, "rate_rps"},
		{`{"rate_rps":true}`, stored, "rate_rps"},
		{`{"rate_burst":1000000}`, account.Plan{RateRPS: 1, RateBurst: 1000000, MaxConcurrent: 3, BodyLimit: 4096, MaxProperties: 5}, ""},
		{`{"rate_burst":1000001}`, stored, "rate_burst"},
		{`{"rate_burst":-1}`, stored, "rate_burst"},
		{`{"rate_burst":2.5}`, stored, "rate_burst"},
		{`{"max_concurrent":10000}`, account.Plan{RateRPS: 1, RateBurst: 2, MaxConcurrent: 10000, BodyLimit: 4096, MaxProperties: 5}, ""},
		{`{"max_concurrent":10001}`, stored, "max_concurrent"},
		{`{"max_concurrent":-1}`, stored, "max_concurrent"},
		{`{"body_limit":0}`, account.Plan{RateRPS: 1, RateBurst: 2, MaxConcurrent: 3, MaxProperties: 5}, ""},
		{`{"body_limit":1024}`, account.Plan{RateRPS: 1, RateBurst: 2, MaxConcurrent: 3, BodyLimit: 1024, MaxProperties: 5}, ""},
		{`{"body_limit":26214400}`, account.Plan{RateRPS: 1, RateBurst: 2, MaxConcurrent: 3, BodyLimit: 26214400, MaxProperties: 5}, ""},
		{`{"body_limit":1}`, stored, "body_limit"},
		{`{"body_limit":1023}`, stored, "body_limit"},
		{`{"body_limit":26214401}`, stored, "body_limit"},
		{`{"max_properties":1000000}`, account.Plan{RateRPS: 1, RateBurst: 2, MaxConcurrent: 3, BodyLimit: 4096, MaxProperties: 1000000}, ""},
		{`{"max_properties":0}`, account.Plan{RateRPS: 1, RateBurst: 2, MaxConcurrent: 3, BodyLimit: 4096}, ""},
		{`{"max_properties":1000001}`, stored, "max_properties"},
		{`{"max_properties":-1}`, stored, "max_properties"},
		{`{"rate_limit":5}`, stored, "rate_limit"},
		{`{"rate_burst":10,"max_properties":-1}`, stored, "max_properties"},
		{`[]`, stored, ""}, // PHP clients' empty object
		{`[1]`, stored, "body"},
		{`not json`, stored, "body"},
	} {
		p, only, err := parsePlan([]byte(c.body))
		got := account.MergePlan(stored, p, only)
		if c.field == "" {
			if err != nil || got != c.want {
				t.Errorf("%s: %+v, %v; want %+v", c.body, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.field+":") {
			t.Errorf("%s: %+v, %v; want a refusal naming %s", c.body, got, err, c.field)
		}
	}
}

// TestFingerprint: 8 hex digits of the token's SHA-256, never a part of the token.
func TestFingerprint(t *testing.T) {
	f := Fingerprint("test-admin-token-0123456789")
	if len(f) != 8 || strings.Trim(f, "0123456789abcdef") != "" || f == Fingerprint("other-token") {
		t.Fatalf("fingerprint %q", f)
	}
}
