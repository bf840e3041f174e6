// Package egress guards connections vros opens to addresses its clients name: photo links
// (property-svc), webhook targets and iCal feeds (integration-svc). The check runs in the
// dialer's Control hook, after DNS resolution and for every connection attempt (each redirect
// hop, each Happy Eyeballs candidate), so a name that resolves to a public address when it is
// saved and to a private one when it is used (DNS rebinding) is still refused.
package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// ErrForbidden is the error of a connection refused by Control.
var ErrForbidden = errors.New("dial to forbidden address")

// Control returns a net.Dialer Control hook that lets a TCP connection through only to a
// public address (IsPublicAddr) or to one that allow, when not nil, accepts.
func Control(allow func(netip.AddrPort) bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		if network != "tcp4" && network != "tcp6" {
			return fmt.Errorf("%w: network %s", ErrForbidden, network)
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %q: %w", ErrForbidden, address, err)
		}
		if allow != nil && allow(ap) {
			return nil
		}
		if !IsPublicAddr(ap.Addr()) {
			return fmt.Errorf("%w: %s", ErrForbidden, ap.Addr())
		}
		return nil
	}
}

// Special-purpose ranges not covered by the netip predicates.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),     // "this network"
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),  // TEST-NET-1
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"), // reserved, includes broadcast
	netip.MustParsePrefix("::/96"),       // IPv4-compatible (deprecated)
	netip.MustParsePrefix("100::/64"),    // discard-only
	netip.MustParsePrefix("fec0::/10"),   // site-local (deprecated)
	netip.MustParsePrefix("2001:db8::/32"),
}

var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// IsPublicAddr reports whether ip is an address on the public internet: it rejects loopback,
// private (RFC 1918, fc00::/7), link-local (including cloud metadata 169.254.169.254),
// multicast, unspecified and other special-purpose ranges, and looks inside IPv4-mapped,
// NAT64 and 6to4 addresses.
func IsPublicAddr(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() {
		return false
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return false
		}
	}
	if ip.Is6() {
		b := ip.As16()
		if nat64Prefix.Contains(ip) {
			return IsPublicAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		}
		if sixToFour.Contains(ip) {
			return IsPublicAddr(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	return true
}
