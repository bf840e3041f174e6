package api

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vros/vros/testkit/together"
)

// TestBrandAnswers: /api/account-brand's answers, and what account-settings then shows.
func TestBrandAnswers(t *testing.T) {
	app, acc := newServer(t)
	createProperty(t, app, acc, "V1")
	for _, r := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"create", `{"action":"create","brand":{"name":"Aurora","domains":["Aurora.example"],"lead_source":2,"properties":["V1"]}}`, 200,
			`{"code":200,"data":{"brand_id":"1"}}`},
		{"another", `{"action":"create","brand":{"name":"Borea","domains":["borea.example"]}}`, 200, `{"code":200,"data":{"brand_id":"2"}}`},
		{"a domain of another brand", `{"action":"update","brand":{"id":2,"domains":["aurora.example"]}}`, 400,
			`{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field: brand.domains aurora.example is already a domain of brand 1: a domain belongs to one brand (with or without www.)","errors":[{"field":"brand.domains","message":"aurora.example is already a domain of brand 1: a domain belongs to one brand (with or without www.)"}]}`},
		{"origins", `{"action":"update","brand":{"id":2,"origins":["https://Borea.example:443/","http://localhost:3000"]}}`, 200,
			`{"code":200,"data":{"brand_id":"2"}}`},
		{"an origin of another brand's domain", `{"action":"update","brand":{"id":2,"origins":["https://www.aurora.example"]}}`, 400,
			`{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field: brand.origins[0] https://www.aurora.example is an origin of brand 1: an origin belongs to one brand","errors":[{"field":"brand.origins[0]","message":"https://www.aurora.example is an origin of brand 1: an origin belongs to one brand"}]}`},
		{"an origin with a path", `{"action":"update","brand":{"id":2,"origins":["https://borea.example/book"]}}`, 400,
			`{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field: brand.origins[0] must be http:// or https://, a host and an optional port, nothing else: \"https://borea.example/book\" has a path","errors":[{"field":"brand.origins[0]","message":"must be http:// or https://, a host and an optional port, nothing else: \"https://borea.example/book\" has a path"}]}`},
		{"an unknown code", `{"action":"update","brand":{"id":2,"properties":["NOPE"]}}`, 400,
			`{"code":400,"error_type":"validation_error","error_message":"request has 1 invalid field: brand.properties no property of this account has internal_code \"NOPE\"","errors":[{"field":"brand.properties","message":"no property of this account has internal_code \"NOPE\""}]}`},
		{"an unknown brand", `{"action":"delete","brand":{"id":99}}`, 404, `{"code":404,"error_type":"not_found","error_message":"brand 99 does not exist"}`},
		{"delete", `{"action":"delete","brand":{"id":2}}`, 200, `{"code":200,"data":{"brand_id":"2"}}`},
		{"a deleted brand's id is not given again", `{"action":"create","brand":{"name":"Cirrus"}}`, 200, `{"code":200,"data":{"brand_id":"3"}}`},
		{"delete it", `{"action":"delete","brand":{"id":3}}`, 200, `{"code":200,"data":{"brand_id":"3"}}`},
	} {
		t.Run(r.name, func(t *testing.T) {
			status, out := call(t, app, acc, "/internal/a/account-brand", r.body)
			if status != r.status || string(out) != r.want {
				t.Errorf("%d %s\nwant %d %s", status, out, r.status, r.want)
			}
		})
	}
	_, out := call(t, app, acc, "/internal/a/account-settings", `{}`)
	var a struct {
		Data struct {
			Brands []map[string]any `json:"brands"`
		} `json:"data"`
	}
	_ = json.Unmarshal(out, &a)
	if len(a.Data.Brands) != 1 || a.Data.Brands[0]["domain"] != "aurora.example" || a.Data.Brands[0]["name"] != "Aurora" {
		t.Errorf("account-settings brands: %s", out)
	}
	// account-settings shows every field of the brand, as the settings event carries it.
	if _, out := call(t, app, acc, "/internal/a/account-brand", `{"action":"update","brand":{"id":1,"origins":["https://aurora.example"]}}`); !strings.Contains(string(out), `"brand_id":"1"`) {
		t.Fatalf("origins of brand 1: %s", out)
	}
	_, out = call(t, app, acc, "/internal/a/account-settings", `{}`)
	if !strings.Contains(string(out), `"brands":[{"id":1,"name":"Aurora","domain":"aurora.example","domains":["aurora.example"],"origins":["https://aurora.example"],"lead_source":2,"properties":[`) {
		t.Errorf("account-settings brand fields: %s", out)
	}
}

// TestConcurrentBrandCreates: 30 clients create brands of one account at once, 10 of them
// with one domain: every other brand lands with its own id, and the shared domain once.
func TestConcurrentBrandCreates(t *testing.T) {
	app, acc := newServer(t)
	const n = 30
	status := make([]int, n)
	ids := make([]string, n)
	together.Run(n, func(i int) {
		domain := fmt.Sprintf("b%d.example", i)
		if i < 10 {
			domain = "same.example"
		}
		var out []byte
		status[i], out = call(t, app, acc, "/internal/a/account-brand", `{"action":"create","brand":{"name":"B","domains":["`+domain+`"]}}`)
		var a struct {
			Data struct {
				BrandID string `json:"brand_id"`
			} `json:"data"`
		}
		_ = json.Unmarshal(out, &a)
		ids[i] = a.Data.BrandID
	})
	seen := map[string]bool{}
	ok := 0
	for i, s := range status {
		switch {
		case s == 200 && !seen[ids[i]]:
			ok++
			seen[ids[i]] = true
		case s == 200:
			t.Errorf("request %d: id %s given twice", i, ids[i])
		case s != 400 || i >= 10:
			t.Errorf("request %d: HTTP %d", i, s)
		}
	}
	_, out := call(t, app, acc, "/internal/a/account-settings", `{}`)
	var a struct {
		Data struct {
			Brands []struct{ ID int } `json:"brands"`
		} `json:"data"`
	}
	_ = json.Unmarshal(out, &a)
	if ok != 21 || len(a.Data.Brands) != 21 {
		t.Errorf("%d creates succeeded, %d brands stored; want 21", ok, len(a.Data.Brands))
	}
}

// TestConcurrentBrandOrigins: 30 clients create brands of one account at once, 10 listing
// the origin https://same.example and 10 with the domain same.example (which allows it):
// one of those 20 lands, and the 10 others with origins of their own.
func TestConcurrentBrandOrigins(t *testing.T) {
	app, acc := newServer(t)
	const n = 30
	status := make([]int, n)
	together.Run(n, func(i int) {
		brand := fmt.Sprintf(`{"name":"B","origins":["http://localhost:%d"]}`, 3000+i)
		switch {
		case i < 10:
			brand = `{"name":"B","origins":["https://same.example"]}`
		case i < 20:
			brand = `{"name":"B","domains":["same.example"]}`
		}
		status[i], _ = call(t, app, acc, "/internal/a/account-brand", `{"action":"create","brand":`+brand+`}`)
	})
	same := 0
	for i, s := range status {
		switch {
		case s == 200 && i < 20:
			same++
		case s == 200:
		case s != 400 || i >= 20:
			t.Errorf("request %d: HTTP %d", i, s)
		}
	}
	_, out := call(t, app, acc, "/internal/a/account-settings", `{}`)
	var a struct {
		Data struct {
			Brands []struct {
				Domains []string `json:"domains"`
				Origins []string `json:"origins"`
			} `json:"brands"`
		} `json:"data"`
	}
	_ = json.Unmarshal(out, &a)
	claims := 0
	for _, b := range a.Data.Brands {
		if slices.Contains(b.Origins, "https://same.example") || slices.Contains(b.Domains, "same.example") {
			claims++
		}
	}
	if same != 1 || claims != 1 || len(a.Data.Brands) != 11 {
		t.Errorf("%d creates of the shared origin succeeded, %d brands claim it, %d brands; want 1, 1, 11", same, claims, len(a.Data.Brands))
	}
}
