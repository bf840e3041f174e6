package throttle

import (
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
)

// DefaultKeys bounds the keys (accounts, client addresses) a Buckets of edge keeps.
const DefaultKeys = 1 << 16

// Failures throttles failed authentications by client address (httpapi.ClientIP, keyed by
// AddressKey: an IPv6 client's whole /64 shares one bucket): each address has a bucket of
// failures, and once it is empty every authentication from the
// address is refused, before any credential is looked up, until the bucket refills.
// Successful authentications take nothing from it.
type Failures struct{ b *Buckets }

// NewFailures allows burst failures per client address, refilled at rps per second;
// rps ≤ 0 disables the throttle.
func NewFailures(rps float64, burst int) *Failures {
	return &Failures{b: New(rps, burst, DefaultKeys)}
}

// Check refuses (429, Retry-After) a client whose failures are spent; call it before
// authenticating.
func (f *Failures) Check(c *fiber.Ctx) error {
	if f == nil {
		return nil
	}
	wait := f.b.Wait(ClientKey(c))
	if wait <= 0 {
		return nil
	}
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(max(int(math.Ceil(wait.Seconds())), 1)))
	return httpapi.TooManyFailures(wait)
}

// Failed counts one failed authentication of c's client.
func (f *Failures) Failed(c *fiber.Ctx) {
	if f != nil {
		f.b.Take(ClientKey(c))
	}
}

// SetClock makes the throttle read the time from now (tests).
func (f *Failures) SetClock(now func() time.Time) { f.b.SetClock(now) }

// ClientKey is the key of c's client address in every per-address bucket (AddressKey of
// httpapi.ClientIP).
func ClientKey(c *fiber.Ctx) string { return AddressKey(httpapi.ClientIP(c)) }

// AddressKey is the bucket key of a client address: an IPv4 address is its own key (an
// IPv4-mapped IPv6 address is its IPv4 address), an IPv6 address is keyed by its /64. One
// IPv6 host is usually given a whole /64 and may pick a new address in it for every
// request: keyed by address it would never run out of failures. Anything else (no address
// at all) is its own key.
func AddressKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		// A copy: keys outlive the request, and ip may be a view of its header buffer.
		return strings.Clone(ip)
	}
	a = a.WithZone("").Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}
