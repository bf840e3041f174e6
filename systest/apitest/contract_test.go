package apitest

import (
	"context"
	"net/http"
	"net/url"
	"testing"
)

// TestContractChannelInbound: the channel inbound route (interface B, docs/channels.md) is
// checked as documented: a Channex webhook and its answers as JSON, an OpenTravel push and
// its RS by their content type only (XML), and an answer or an accepted request the document
// refuses is a violation.
func TestContractChannelInbound(t *testing.T) {
	ctx := context.Background()
	c, err := NewContract(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok := "rSHIn5aOs7cuX0FARr6LMeRdGtwxcmsMe5JrqqfCuCw"
	xml := `<?xml version="1.0" encoding="UTF-8"?><SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/"/>`
	j := http.Header{"Content-Type": {"application/json"}}
	x := http.Header{"Content-Type": {"text/xml; charset=utf-8"}}
	for _, tc := range []struct {
		name, path string
		h          http.Header
		body       string
		status     int
		rh         http.Header
		answer     string
		ok         bool
	}{
		{"channex ok", "/channels/channex/" + tok, j, `{"event":"booking_new","payload":{"booking_id":"b"},"property_id":"p","timestamp":"2026","user_id":null}`, 200, j, `{"data":{"status":"received"}}`, true},
		{"channex other", "/channels/channex/" + tok, j, `{"event":"ari","payload":null}`, 200, j, `{"data":{"status":"received"}}`, true},
		{"channex unreadable", "/channels/channex/" + tok, j, `{"payload":1}`, 400, j, `{"errors":{"code":"validation_error","title":"event: missing"}}`, true},
		{"channex not now", "/channels/channex/" + tok, j, `{"event":"booking"}`, 503, j, `{"errors":{"code":"service_unavailable","title":"Service Unavailable"}}`, true},
		{"ota ok", "/channels/opentravel/" + tok, x, xml, 200, x, xml, true},
		{"ota bad", "/channels/opentravel/" + tok, x, `<x/>`, 400, x, xml, true},
		{"ota 401", "/channels/opentravel/" + tok, x, xml, 401, x, xml, true},
		{"ota 500", "/channels/opentravel/" + tok, x, xml, 500, x, xml, true},
		{"unknown", "/channels/channex/" + tok, j, `{"event":"booking"}`, 404, j, `{"code":404,"error_type":"not_found","error_message":"no such channel connection"}`, true},
		{"unknown adapter", "/channels/siteminder/" + tok, x, xml, 404, j, `{"code":404,"error_type":"not_found","error_message":"no such channel connection"}`, true},
		{"edge 503", "/channels/channex/" + tok, j, `{"event":"booking"}`, 503, j, `{"code":503,"error_type":"unavailable","error_message":"x"}`, true},
		{"undocumented answer", "/channels/channex/" + tok, j, `{"event":"booking"}`, 200, j, `{"data":{"status":"x"}}`, false},
		{"accepted but refused by doc", "/channels/channex/" + tok, j, `{"payload":{}}`, 200, j, `{"data":{"status":"received"}}`, false},
	} {
		u, _ := url.Parse("http://x" + tc.path)
		tc.rh.Set("X-Request-Id", "r")
		err := c.Check(ctx, "POST", u, tc.h, []byte(tc.body), tc.status, tc.rh, []byte(tc.answer))
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
