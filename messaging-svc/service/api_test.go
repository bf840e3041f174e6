package service

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/libs/tenancy"
)

// callA sends an interface A request to the running service, signed as edge signs it.
func callA(t *testing.T, signer *tenancy.Signer, account, resource, body string) (int, string) {
	t.Helper()
	path := "/internal/a/" + resource
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	signer.SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: account}, http.MethodPost, path, []byte(body), time.Now())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// TestAPI: the interface A resources are mounted behind edge's key: the trigger settings
// answer, a preview renders a real booking read from booking-svc (404 for one it does not
// have), the settings' test sends through the operator's server; messaging-svc's own key is
// refused.
func TestAPI(t *testing.T) {
	acct := newAccount()
	edge := tenancy.NewSigner(tenancy.CallerEdge, edgeKey)
	if code, body := callA(t, edge, acct, "message-trigger", `{"action":"get"}`); code != http.StatusOK || !strings.Contains(body, `"stay.arrival"`) {
		t.Errorf("message-trigger get: HTTP %d %s", code, body)
	}
	code, body := callA(t, edge, acct, "message-template", `{"action":"preview","booking_id":42,"trigger":"booking.confirmed","language":"en"}`)
	if code != http.StatusOK || !strings.Contains(body, "Anna") || !strings.Contains(body, `"source":"default"`) {
		t.Errorf("preview of booking 42: HTTP %d %s", code, body)
	}
	if code, body := callA(t, edge, acct, "message-template", `{"action":"preview","booking_id":43,"trigger":"booking.confirmed","language":"en"}`); code != http.StatusNotFound {
		t.Errorf("preview of a booking booking-svc does not have: HTTP %d %s, want 404", code, body)
	}
	address := acct + "@test.example"
	if code, body := callA(t, edge, acct, "messaging-settings", `{"action":"test","address":"`+address+`"}`); code != http.StatusOK {
		t.Errorf("settings test: HTTP %d %s", code, body)
	} else if m := waitMail(t, address); m.EnvelopeFrom != "mail@vros.example" {
		t.Errorf("the test message came from %s", m.EnvelopeFrom)
	}
	if code, _ := callA(t, tenancy.NewSigner(tenancy.CallerMessaging, messagingKey), acct, "message-trigger", `{"action":"get"}`); code != http.StatusUnauthorized {
		t.Errorf("messaging-svc's key: HTTP %d, want 401", code)
	}
}
