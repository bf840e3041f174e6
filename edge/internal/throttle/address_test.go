package throttle

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
)

// TestAddressKey: the key of every per-address bucket.
func TestAddressKey(t *testing.T) {
	for _, tt := range []struct{ ip, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"192.0.2.8", "192.0.2.8"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"2001:DB8:1:2::abcd", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"::1", "::/64"},
		{"", ""},
		{"not an address", "not an address"},
	} {
		if got := AddressKey(tt.ip); got != tt.want {
			t.Errorf("AddressKey(%q) = %q, want %q", tt.ip, got, tt.want)
		}
	}
}

// failuresApp serves one route that fails every authentication through f, with edge's
// client address rules (proxies trusted: none, by default).
func failuresApp(t *testing.T, f *Failures, proxies []string) string {
	t.Helper()
	tel, err := telemetry.Setup(context.Background(), "throttle-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	trusted, err := httpapi.ParseProxies(proxies)
	if err != nil {
		t.Fatal(err)
	}
	app := httpapi.New(httpapi.Options{Telemetry: tel, TrustedProxies: trusted})
	app.Post("/auth", func(c *fiber.Ctx) error {
		if err := f.Check(c); err != nil {
			return err
		}
		f.Failed(c)
		return c.SendStatus(fiber.StatusUnauthorized)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return "http://" + ln.Addr().String()
}

func failFrom(t *testing.T, url, xff string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/auth", nil)
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestFailuresIgnoreForwardedForByDefault: with no trusted proxy (edge's default), a client
// that names a new X-Forwarded-For address on every request is still one address.
func TestFailuresIgnoreForwardedForByDefault(t *testing.T) {
	url := failuresApp(t, NewFailures(0.001, 3), nil)
	for i := range 3 {
		if code := failFrom(t, url, "198.51.100."+strconv.Itoa(i+1)); code != http.StatusUnauthorized {
			t.Fatalf("failure %d: HTTP %d, want 401", i+1, code)
		}
	}
	if code := failFrom(t, url, "198.51.100.99"); code != http.StatusTooManyRequests {
		t.Fatalf("4th failure with a fresh X-Forwarded-For: HTTP %d, want 429 (the header is not believed)", code)
	}
}

// TestFailuresPerIPv6Slash64: the addresses of one IPv6 /64 share one bucket; another /64
// or IPv4 address has its own (IPv4-mapped addresses: TestAddressKey).
func TestFailuresPerIPv6Slash64(t *testing.T) {
	url := failuresApp(t, NewFailures(0.001, 3), []string{"127.0.0.1"})
	for _, tt := range []struct {
		name   string
		spend  []string // three failures, which spend the burst
		then   string
		status int
	}{
		{"one /64", []string{"2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:aaaa::3"}, "2001:db8:1:2:ffff:ffff:ffff:fffe", http.StatusTooManyRequests},
		{"another /64", []string{"2001:db8:5:6::1", "2001:db8:5:6::2", "2001:db8:5:6::3"}, "2001:db8:5:7::1", http.StatusUnauthorized},
		{"IPv4 per address", []string{"192.0.2.20", "192.0.2.20", "192.0.2.20"}, "192.0.2.21", http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for i, a := range tt.spend {
				if code := failFrom(t, url, a); code != http.StatusUnauthorized {
					t.Fatalf("failure %d from %s: HTTP %d, want 401", i+1, a, code)
				}
			}
			if code := failFrom(t, url, tt.then); code != tt.status {
				t.Fatalf("then from %s: HTTP %d, want %d", tt.then, code, tt.status)
			}
		})
	}
}
