package targets

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	ctx := context.Background()
	long := "https://example.com/" + strings.Repeat("a", MaxURL)
	tests := []struct {
		url   string
		rules Rules
		want  string
	}{
		{"https://example.com/hook", Rules{}, ""},
		{"https://93.184.215.14/hook", Rules{}, ""},
		{"", Rules{}, "is required"},
		{long, Rules{}, "must be at most 2000 characters"},
		{"example.com/hook", Rules{}, "must be an absolute http(s) link"},
		{"http://example.com/hook", Rules{}, "must be an https link"},
		{"http://example.com/hook", Rules{AllowHTTP: true}, ""},
		{"ftp://example.com/hook", Rules{}, "must be an https link"},
		{"ftp://example.com/hook", Rules{AllowHTTP: true}, "must be an http or https link"},
		{"https://user:pw@example.com/hook", Rules{}, "must not carry a user name or password"},
		{"https://127.0.0.1:8443/hook", Rules{}, "must not be a private, loopback or link-local address"},
		{"https://10.0.0.7/hook", Rules{}, "must not be a private, loopback or link-local address"},
		{"https://169.254.169.254/latest", Rules{}, "must not be a private, loopback or link-local address"},
		{"https://[::1]/hook", Rules{}, "must not be a private, loopback or link-local address"},
		{"https://[fe80::1]/hook", Rules{}, "must not be a private, loopback or link-local address"},
		{"https://localhost/hook", Rules{}, "must not be a private, loopback or link-local address"},
		{"https://api.localhost/hook", Rules{}, "must not be a private, loopback or link-local address"},
		{"https://127.0.0.1:8443/hook", Rules{AllowPrivate: true}, ""},
		{"http://localhost:9000/hook", Rules{AllowHTTP: true, AllowPrivate: true}, ""},
	}
	for _, tc := range tests {
		if got := Check(ctx, tc.url, tc.rules); got != tc.want {
			t.Errorf("Check(%.60q, %+v) = %q, want %q", tc.url, tc.rules, got, tc.want)
		}
	}
}

// TestClientRefusesPrivateAtConnect: the client refuses a loopback server unless private
// targets are allowed, whatever the link said when it was saved.
func TestClientRefusesPrivateAtConnect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	_, err := Client(Rules{}, 2*time.Second).Get(srv.URL)
	if err == nil || !IsForbidden(err) {
		t.Fatalf("strict client: err = %v, want a forbidden address", err)
	}
	c := Client(Rules{AllowPrivate: true}, 2*time.Second)
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("status %d", resp.StatusCode)
	}
	resp, err = c.Get(srv.URL + "/redirect")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("a redirect was followed: status %d", resp.StatusCode)
	}
}
