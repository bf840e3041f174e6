// Package targets holds the rules for the addresses integration-svc connects to on an
// account's behalf (webhook endpoints, iCal feeds) and the HTTP client that connects to them.
//
// A link is checked twice: when it is saved (Check: the scheme, and a host that is, or
// resolves to, a private, loopback or link-local address is refused) and at every connection
// (Client: libs/egress's dialer hook refuses such an address after DNS resolution, so a name
// that later resolves elsewhere — DNS rebinding — is still refused). An operator may allow an
// account private targets (docs/webhooks.md, "Address safety").
package targets

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vros/vros/libs/egress"
)

// MaxURL bounds a link's length in characters.
const MaxURL = 2000

// Rules are what a link may be.
type Rules struct {
	// AllowHTTP accepts http:// links (development); otherwise only https://.
	AllowHTTP bool
	// AllowPrivate accepts private, loopback and link-local addresses (an operator's choice
	// for one account).
	AllowPrivate bool
}

// Check returns the rule a link breaks, as the message of a field error ("must be an https
// link"), or "" when it keeps them all. Names are resolved with the resolver of ctx's
// deadline; a name that does not resolve now is accepted (the connection is checked again).
func Check(ctx context.Context, raw string, r Rules) string {
	if raw == "" {
		return "is required"
	}
	if utf8.RuneCountInString(raw) > MaxURL {
		return "must be at most 2000 characters"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "must be an absolute http(s) link"
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !r.AllowHTTP {
			return "must be an https link"
		}
	default:
		if r.AllowHTTP {
			return "must be an http or https link"
		}
		return "must be an https link"
	}
	if u.User != nil {
		return "must not carry a user name or password"
	}
	if r.AllowPrivate {
		return ""
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if !egress.IsPublicAddr(ip) {
			return "must not be a private, loopback or link-local address"
		}
		return ""
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return "must not be a private, loopback or link-local address"
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(rctx, "ip", host)
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if !egress.IsPublicAddr(a) {
			return "must not resolve to a private, loopback or link-local address"
		}
	}
	return ""
}

// ErrForbidden wraps a connection the address rules refused.
var ErrForbidden = egress.ErrForbidden

// IsForbidden reports whether err is a connection the address rules refused.
func IsForbidden(err error) bool { return errors.Is(err, egress.ErrForbidden) }

// Client returns an HTTP client for links under r: every connection is checked by
// libs/egress unless r.AllowPrivate, redirects are not followed (a 3xx is the answer), no
// proxy is used (a proxy would resolve the name and the check would see only the proxy),
// and a request ends after timeout.
func Client(r Rules, timeout time.Duration) *http.Client {
	var allow func(netip.AddrPort) bool
	if r.AllowPrivate {
		allow = func(netip.AddrPort) bool { return true }
	}
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: egress.Control(allow)}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    16,
		IdleConnTimeout:        90 * time.Second,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
