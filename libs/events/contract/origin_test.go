package contract_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/vros/vros/libs/events/contract"
)

// TestParseOrigin: every rule of an origin, and the canonical form.
func TestParseOrigin(t *testing.T) {
	for _, r := range []struct {
		in, want string
		err      error
	}{
		{"https://a.example", "https://a.example", nil},
		{"HTTPS://WWW.A.Example", "https://www.a.example", nil},
		{"http://a.example", "http://a.example", nil},
		{"https://a.example/", "https://a.example", nil}, // a lone trailing slash is dropped
		{"https://a.example:443", "https://a.example", nil},
		{"http://a.example:80", "http://a.example", nil},
		{"http://a.example:080", "http://a.example", nil},
		{"https://a.example:80", "https://a.example:80", nil},
		{"http://a.example:443", "http://a.example:443", nil},
		{"https://a.example:8443/", "https://a.example:8443", nil},
		{"http://localhost:3000", "http://localhost:3000", nil},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080", nil},
		{"http://[::1]:8080", "http://[::1]:8080", nil},
		{"https://[2001:DB8:0:0:0:0:0:1]", "https://[2001:db8::1]", nil},
		{"https://xn--mnchen-3ya.example", "https://xn--mnchen-3ya.example", nil},
		{"a.example", "", contract.ErrOriginScheme},
		{"//a.example", "", contract.ErrOriginScheme},
		{"ftp://a.example", "", contract.ErrOriginScheme},
		{"https:/a.example", "", contract.ErrOriginScheme},
		{" https://a.example", "", contract.ErrOriginScheme},
		{"https://a.example/book", "", contract.ErrOriginPath},
		{"https://a.example//", "", contract.ErrOriginPath},
		{"https://a.example?x=1", "", contract.ErrOriginQuery},
		{"https://a.example/?x=1", "", contract.ErrOriginQuery},
		{"https://a.example#top", "", contract.ErrOriginFragment},
		{"https://a.example/#top", "", contract.ErrOriginFragment},
		{"https://user@a.example", "", contract.ErrOriginUser},
		{"https://user:pass@a.example", "", contract.ErrOriginUser},
		{"https://", "", contract.ErrOriginHost},
		{"https://:8080", "", contract.ErrOriginHost},
		{"https://a.example.", "", contract.ErrOriginHost},
		{"https://a..example", "", contract.ErrOriginHost},
		{"https://-a.example", "", contract.ErrOriginHost},
		{"https://a_b.example", "", contract.ErrOriginHost},
		{"https://*.a.example", "", contract.ErrOriginHost},
		{"https://münchen.example", "", contract.ErrOriginHost},
		{"https://a.example ", "", contract.ErrOriginHost},
		{"http://1.2.3", "", contract.ErrOriginHost},
		{"http://a.123", "", contract.ErrOriginHost},
		{"http://256.0.0.1", "", contract.ErrOriginHost},
		{"http://[::1", "", contract.ErrOriginHost},
		{"http://[fe80::1%25eth0]", "", contract.ErrOriginHost},
		{"http://[::ffff:127.0.0.1]", "", contract.ErrOriginHost},
		{"http://[::1]x", "", contract.ErrOriginHost},
		{"http://" + string(make([]byte, 254)), "", contract.ErrOriginHost},
		{"https://a.example:", "", contract.ErrOriginPort},
		{"https://a.example:0", "", contract.ErrOriginPort},
		{"https://a.example:65536", "", contract.ErrOriginPort},
		{"https://a.example:+80", "", contract.ErrOriginPort},
		{"https://a.example:http", "", contract.ErrOriginPort},
		{"http://[::1]:", "", contract.ErrOriginPort},
	} {
		got, err := contract.ParseOrigin(r.in)
		if got != r.want || !errors.Is(err, r.err) || (r.err == nil) != (err == nil) {
			t.Errorf("ParseOrigin(%q) = %q, %v; want %q, %v", r.in, got, err, r.want, r.err)
		}
	}
}

// TestAllowedOrigins: a brand's origins, else two per domain.
func TestAllowedOrigins(t *testing.T) {
	for _, r := range []struct {
		name string
		b    contract.Brand
		want []string
	}{
		{"none", contract.Brand{}, nil},
		{"its origins", contract.Brand{Origins: []string{"http://localhost:3000"}, Domains: []string{"a.example"}}, []string{"http://localhost:3000"}},
		{"its domains", contract.Brand{Domains: []string{"a.example", "www.b.example"}},
			[]string{"https://a.example", "https://www.a.example", "https://b.example", "https://www.b.example"}},
		{"one domain with and without www.", contract.Brand{Domains: []string{"www.a.example", "A.example."}}, []string{"https://a.example", "https://www.a.example"}},
		{"an older event's domain", contract.Brand{Domain: "a.example"}, []string{"https://a.example", "https://www.a.example"}},
	} {
		if got := r.b.AllowedOrigins(); !slices.Equal(got, r.want) {
			t.Errorf("%s: %q, want %q", r.name, got, r.want)
		}
	}
}
