package browser

import "testing"

// TestAllowed: loopback and data: URLs pass, an address beyond loopback only under an
// allowed prefix.
func TestAllowed(t *testing.T) {
	stripe := "https://js.stripe.com/v3/"
	for _, c := range []struct {
		u     string
		allow []string
		want  bool
	}{
		{"http://127.0.0.1:8080/widget/engine.js", nil, true},
		{"data:image/png;base64,AAAA", nil, true},
		{"https://js.stripe.com/v3/", nil, false},
		{"https://js.stripe.com/v3/", []string{stripe}, true},
		{"https://js.stripe.com/v2/", []string{stripe}, false},
		{"http://localhost:8080/", nil, false},
		{"http://127.0.0.10:8080/", nil, false},
	} {
		if got := allowed(c.u, c.allow); got != c.want {
			t.Errorf("allowed(%q, %q) = %v, want %v", c.u, c.allow, got, c.want)
		}
	}
}
