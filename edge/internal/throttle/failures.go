package throttle

import (
	"math"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
)

// DefaultKeys bounds the keys (accounts, client addresses) a Buckets of edge keeps.
const DefaultKeys = 1 << 16

// Failures throttles failed authentications by client address (httpapi.ClientIP): each
// address has a bucket of failures, and once it is empty every authentication from the
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
	wait := f.b.Wait(httpapi.ClientIP(c))
	if wait <= 0 {
		return nil
	}
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(max(int(math.Ceil(wait.Seconds())), 1)))
	return httpapi.TooManyFailures(wait)
}

// Failed counts one failed authentication of c's client.
func (f *Failures) Failed(c *fiber.Ctx) {
	if f != nil {
		f.b.Take(httpapi.ClientIP(c))
	}
}
