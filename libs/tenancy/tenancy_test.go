package tenancy

import (
	"testing"
	"time"
)

func TestVerify(t *testing.T) {
	s := NewSigner("0123456789abcdef0123")
	now := time.Unix(1_800_000_000, 0)
	ts, sig := s.Sign("acc1", "POST", "/internal/a/property", now)
	cases := []struct {
		name                      string
		account, ts, method, path string
		sig                       string
		at                        time.Time
		want                      bool
	}{
		{"valid", "acc1", ts, "POST", "/internal/a/property", sig, now, true},
		{"valid within skew", "acc1", ts, "POST", "/internal/a/property", sig, now.Add(4 * time.Minute), true},
		{"too old", "acc1", ts, "POST", "/internal/a/property", sig, now.Add(6 * time.Minute), false},
		{"from the future", "acc1", ts, "POST", "/internal/a/property", sig, now.Add(-6 * time.Minute), false},
		{"other account", "acc2", ts, "POST", "/internal/a/property", sig, now, false},
		{"other path", "acc1", ts, "POST", "/internal/a/property-rate", sig, now, false},
		{"other method", "acc1", ts, "GET", "/internal/a/property", sig, now, false},
		{"missing signature", "acc1", ts, "POST", "/internal/a/property", "", now, false},
		{"missing account", "", ts, "POST", "/internal/a/property", sig, now, false},
		{"other key", "acc1", ts, "POST", "/internal/a/property", NewSigner("another-key-0123456").mac("acc1", ts, "POST", "/internal/a/property"), now, false},
	}
	for _, c := range cases {
		if got := s.Verify(c.account, c.ts, c.method, c.path, c.sig, c.at); got != c.want {
			t.Errorf("%s: Verify = %v, want %v", c.name, got, c.want)
		}
	}
}
