package stripemock

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestPaymentIntents: what the package comment says stripe-mock answers for payment
// intents, with the fixture Start sets.
func TestPaymentIntents(t *testing.T) {
	base := Start(t, "succeeded", IntentAmount(98765, "EUR"))
	type intent struct {
		ID           string `json:"id"`
		Status       string `json:"status"`
		Amount       int64  `json:"amount"`
		Currency     string `json:"currency"`
		ClientSecret string `json:"client_secret"`
	}
	call := func(method, path, key string, form url.Values) (int, http.Header, intent) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if method == http.MethodPost {
			req.Header.Set("Idempotency-Key", "k/"+path)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		var in intent
		if resp.StatusCode == http.StatusOK {
			if err := json.Unmarshal(raw, &in); err != nil {
				t.Fatalf("%s %s: %v: %s", method, path, err, raw)
			}
		}
		return resp.StatusCode, resp.Header, in
	}

	code, h, created := call(http.MethodPost, "/v1/payment_intents", "sk_test_1",
		url.Values{"amount": {"5000"}, "currency": {"jpy"}, "payment_method_types[]": {"card"}})
	if code != http.StatusOK || !strings.HasPrefix(created.ID, "pi_") || created.Amount != 5000 || created.Currency != "jpy" ||
		created.Status != "succeeded" || !strings.Contains(created.ClientSecret, "_secret_") {
		t.Errorf("create: HTTP %d %+v, want the request's amount and currency, the fixture's status", code, created)
	}
	if got := h.Get("Idempotency-Key"); got != "k//v1/payment_intents" {
		t.Errorf("create: Idempotency-Key echoed %q", got)
	}

	for _, path := range []string{"/v1/payment_intents/pi_Checkout7", "/v1/payment_intents/pi_Checkout7/cancel"} {
		method := http.MethodGet
		if strings.HasSuffix(path, "/cancel") {
			method = http.MethodPost
		}
		code, _, in := call(method, path, "sk_test_1", nil)
		if code != http.StatusOK || in.ID != "pi_Checkout7" || in.Amount != 98765 || in.Currency != "eur" || in.Status != "succeeded" {
			t.Errorf("%s %s: HTTP %d %+v, want the URL's id and the fixture's amount, currency and status", method, path, code, in)
		}
	}

	if code, _, _ := call(http.MethodGet, "/v1/payment_intents/pi_Checkout7", "sk_live_1", nil); code != http.StatusUnauthorized {
		t.Errorf("a live key: HTTP %d, want 401", code)
	}
}
