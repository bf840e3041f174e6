package httpapi

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

const proxiesKey = "vros.proxies"

// ParseProxies reads a list of trusted proxies: IP addresses or CIDR ranges.
func ParseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR range", s)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// ClientIP is the address of the client that sent the request: the peer's address, unless
// the peer is a trusted proxy (Options.TrustedProxies). Then it is the right-most address
// of X-Forwarded-For that is not a trusted proxy: each proxy appends the address it was
// reached from, so the entries to its left are whatever the client chose to send.
func ClientIP(c *fiber.Ctx) string {
	remote, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	remote = remote.Unmap()
	proxies, _ := c.Locals(proxiesKey).([]netip.Prefix)
	if len(proxies) == 0 || !trusted(proxies, remote) {
		return remote.String()
	}
	ips := c.IPs() // validated by Fiber (EnableIPValidation)
	for i := len(ips) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(ips[i])
		if err != nil {
			continue
		}
		if a = a.Unmap(); !trusted(proxies, a) {
			return a.String()
		}
	}
	if len(ips) > 0 {
		return ips[0] // a chain of trusted proxies only
	}
	return remote.String()
}

func trusted(proxies []netip.Prefix, a netip.Addr) bool {
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
