package contract

import (
	"errors"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// A brand's origins (docs/brands.md, "Origins") are the web origins its booking engine is
// allowed from: "http://" or "https://", a host and an optional port, nothing else. They are
// carried in ParseOrigin's form, which is the form a browser writes an Origin header in
// (lower case, no default port), so that a consumer compares a request's Origin, put through
// ParseOrigin, with a brand's by string equality.

// The ways a string is not an origin (ParseOrigin's errors).
var (
	ErrOriginScheme   = errors.New("must start with http:// or https://")
	ErrOriginUser     = errors.New("has user info")
	ErrOriginPath     = errors.New("has a path")
	ErrOriginQuery    = errors.New("has a query")
	ErrOriginFragment = errors.New("has a fragment")
	ErrOriginHost     = errors.New("has no valid host (a host name, IDNs in xn-- form, an IPv4 address or an [IPv6] address)")
	ErrOriginPort     = errors.New("has no valid port (1-65535)")
)

// maxHostName is the longest DNS name.
const maxHostName = 253

// ParseOrigin returns s as an origin in its canonical form: lower case, an IPv6 address
// written as netip writes it, a default port (80 for http, 443 for https) dropped. A lone
// trailing "/" is dropped too (what a browser's address bar shows after the host); any other
// path, a query, a fragment or user info is an error, as are a scheme other than http and
// https, a missing or invalid host and a port outside 1-65535. Host names are ASCII: a
// browser sends an internationalised name in its xn-- form.
func ParseOrigin(s string) (string, error) {
	s = strings.ToLower(s)
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return "", ErrOriginScheme
	}
	hostport, tail := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		hostport, tail = rest[:i], rest[i:]
	}
	if strings.Contains(hostport, "@") {
		return "", ErrOriginUser
	}
	if tail == "/" {
		tail = ""
	} else if strings.HasPrefix(tail, "/") && len(tail) > 1 && (tail[1] == '?' || tail[1] == '#') {
		tail = tail[1:]
	}
	switch {
	case tail == "":
	case tail[0] == '?':
		return "", ErrOriginQuery
	case tail[0] == '#':
		return "", ErrOriginFragment
	default:
		return "", ErrOriginPath
	}
	host, port, err := splitHostPort(hostport)
	if err != nil {
		return "", err
	}
	if (scheme == "http" && port == 80) || (scheme == "https" && port == 443) {
		port = 0
	}
	out := scheme + "://" + host
	if port != 0 {
		out += ":" + strconv.Itoa(port)
	}
	return out, nil
}

// splitHostPort reads host[:port] (port 0 when there is none) with the host canonical.
func splitHostPort(hp string) (host string, port int, err error) {
	portText := ""
	if strings.HasPrefix(hp, "[") {
		end := strings.IndexByte(hp, ']')
		if end < 0 {
			return "", 0, ErrOriginHost
		}
		a, err := netip.ParseAddr(hp[1:end])
		if err != nil || !a.Is6() || a.Is4In6() || a.Zone() != "" {
			return "", 0, ErrOriginHost
		}
		host = "[" + a.String() + "]"
		switch after := hp[end+1:]; {
		case after == "":
		case strings.HasPrefix(after, ":"):
			portText = after[1:]
			if portText == "" {
				return "", 0, ErrOriginPort
			}
		default:
			return "", 0, ErrOriginHost
		}
	} else {
		host = hp
		if i := strings.LastIndexByte(hp, ':'); i >= 0 {
			host, portText = hp[:i], hp[i+1:]
			if portText == "" {
				return "", 0, ErrOriginPort
			}
		}
		if host, err = canonicalHost(host); err != nil {
			return "", 0, err
		}
	}
	if portText != "" {
		for _, c := range portText {
			if c < '0' || c > '9' {
				return "", 0, ErrOriginPort
			}
		}
		n, err := strconv.Atoi(portText)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, ErrOriginPort
		}
		port = n
	}
	return host, port, nil
}

// canonicalHost is a lower-case host name or an IPv4 address in dotted-decimal form. A name
// whose last label is a number is taken for an address (as browsers take it), so it must be
// one.
func canonicalHost(h string) (string, error) {
	if h == "" || len(h) > maxHostName {
		return "", ErrOriginHost
	}
	labels := strings.Split(h, ".")
	if last := labels[len(labels)-1]; last != "" && strings.Trim(last, "0123456789") == "" {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is4() {
			return "", ErrOriginHost
		}
		return a.String(), nil
	}
	for _, l := range labels {
		if !hostLabel(l) {
			return "", ErrOriginHost
		}
	}
	return h, nil
}

// hostLabel: 1-63 letters, digits and hyphens, neither first nor last a hyphen (lower
// case: the caller lowered it).
func hostLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// AllowedOrigins are the origins the brand's booking engine is allowed from: its Origins,
// else, when it lists none, https://<domain> and https://www.<domain> for each of its
// domains (HostNames; a domain read lower case, without a trailing dot and a "www." prefix,
// as websites' reads compare domains), in order, each once.
func (b Brand) AllowedOrigins() []string {
	if len(b.Origins) > 0 {
		return b.Origins
	}
	var out []string
	for _, d := range b.HostNames() {
		d = strings.TrimPrefix(strings.TrimSuffix(strings.ToLower(d), "."), "www.")
		if d == "" {
			continue
		}
		for _, o := range []string{"https://" + d, "https://www." + d} {
			if !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	return out
}
