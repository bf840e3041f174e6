package apitest

import (
	"context"
	"net/http"
	"net/url"
	"testing"
)

// BenchmarkContractCheck: what checking one exchange costs the end-to-end suite (an
// interface B request, its oneOf of every action, and an error answer).
func BenchmarkContractCheck(b *testing.B) {
	ctx := context.Background()
	c, err := NewContract(ctx)
	if err != nil {
		b.Fatal(err)
	}
	u, _ := url.Parse("http://127.0.0.1:1/vros/external-booking")
	req := []byte(`{"key":"k_x","pass":"p","action":"getinfo","propertyId":1,"numberofadults":2,"checkin":"2027-01-01","checkout":"2027-01-05"}`)
	resp := []byte(`{"status":8,"message":"requested dates are not available"}`)
	h := http.Header{"Content-Type": {"application/json"}}
	rh := http.Header{"Content-Type": {"application/json"}}
	if err := c.Check(ctx, http.MethodPost, u, h, req, 200, rh, resp); err != nil {
		b.Fatal(err)
	}
	if err := c.Check(ctx, http.MethodPost, u, h, req, 200, rh, []byte(`{"status":"8"}`)); err == nil {
		b.Fatal("an answer breaking BAnswer passes")
	}
	b.Run("interface-b action", func(b *testing.B) {
		for b.Loop() {
			_ = c.Check(ctx, http.MethodPost, u, h, req, 200, rh, resp)
		}
	})
	// a read with a path and query parameters
	read, _ := url.Parse("http://127.0.0.1:1/vros/api/default-config/owner_token/ot_abcdefabcdefabcdef?brand_id=2&lang=en&domain=example.com")
	readResp := []byte(`{"status":2,"message":"owner token not valid"}`)
	if err := c.Check(ctx, http.MethodGet, read, http.Header{}, nil, 200, rh, readResp); err != nil {
		b.Fatal(err)
	}
	b.Run("read with parameters", func(b *testing.B) {
		for b.Loop() {
			_ = c.Check(ctx, http.MethodGet, read, http.Header{}, nil, 200, rh, readResp)
		}
	})
}
