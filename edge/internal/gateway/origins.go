package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/valyala/fasthttp"
	"golang.org/x/sync/singleflight"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
)

// The account's brands' origins, as catalog-svc tells them (POST /internal/engine/origins,
// signed with the account's tenant): which page origin sells as which brand. They are read
// on the booking API's every request, so each replica keeps them per account for a short
// time (originCache).

// brandOrigins maps an origin (normalOrigin) to the id of the brand it belongs to.
type brandOrigins map[string]int64

// originFetch reads an account's brands' origins from catalog-svc; requestID goes along.
type originFetch func(ctx context.Context, t tenancy.Tenant, requestID string) (brandOrigins, error)

// originCache keeps each account's origins for ttl after they were asked for, in a bounded
// LRU (the least recently used account goes first). Concurrent misses of one account make
// one request to catalog-svc (singleflight). A failed read is not kept: the next request
// asks again. Staleness: a brand's origins changed through interface A are in use on every
// replica within ttl (2 s) plus the time of one read.
type originCache struct {
	ttl   time.Duration
	now   func() time.Time
	fetch originFetch
	// entries hold what was read, with when it was asked for; the LRU is safe for
	// concurrent use.
	entries *lru.Cache[string, originEntry]
	flight  singleflight.Group
}

type originEntry struct {
	asked  time.Time
	brands brandOrigins
}

func newOriginCache(ttl time.Duration, size int, fetch originFetch) *originCache {
	entries, err := lru.New[string, originEntry](size)
	if err != nil {
		panic(err) // size > 0: a constant
	}
	return &originCache{ttl: ttl, now: time.Now, fetch: fetch, entries: entries}
}

// fetchTimeout bounds one read of the origins, shared by every request waiting for it:
// none of their contexts is its own.
const fetchTimeout = 10 * time.Second

// get is the account t's origins: kept ones younger than ttl, else read now (once for all
// the requests of the account that miss meanwhile).
func (o *originCache) get(ctx context.Context, t tenancy.Tenant, requestID string) (brandOrigins, error) {
	if e, ok := o.entries.Get(t.AccountID); ok && o.now().Sub(e.asked) < o.ttl {
		return e.brands, nil
	}
	v, err, _ := o.flight.Do(t.AccountID, func() (any, error) {
		// Another request may have stored them while this one waited to start.
		if e, ok := o.entries.Get(t.AccountID); ok && o.now().Sub(e.asked) < o.ttl {
			return e.brands, nil
		}
		asked := o.now()
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
		defer cancel()
		brands, err := o.fetch(fctx, t, requestID)
		if err != nil {
			return nil, err
		}
		o.entries.Add(t.AccountID, originEntry{asked: asked, brands: brands})
		return brands, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(brandOrigins), nil
}

// Len is how many accounts' origins are kept.
func (o *originCache) Len() int { return o.entries.Len() }

// enginePathOrigins is catalog-svc's route of the origins.
const enginePathOrigins = "/internal/engine/origins"

// fetchOrigins reads t's brands' origins from catalog-svc: {"data":{"brands":[{"id":1,
// "origins":["https://a.example"]}]}}, the effective origins of each brand (its own, else
// its domains'). An origin listed by two brands (catalog-svc never lets one be) sells as
// the first. Anything but a 200 with that shape is 503: the API cannot tell who is selling.
func (g *Gateway) fetchOrigins(ctx context.Context, t tenancy.Tenant, requestID string) (brandOrigins, error) {
	u, err := g.upstream(CatalogSvc, "the booking API")
	if err != nil {
		return nil, err
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	if err := u.send(ctx, req, resp, fiber.MethodPost, enginePathOrigins, []byte("{}"), t, httpapi.HeaderRequestID, requestID); err != nil {
		return nil, err
	}
	unavailable := func(why string) error {
		return httpapi.Unavailable(fmt.Sprintf("catalog-svc could not tell the account's websites (%s); retry later", why))
	}
	if resp.StatusCode() != fiber.StatusOK {
		return nil, unavailable(fmt.Sprintf("HTTP %d", resp.StatusCode()))
	}
	var answer struct {
		Data *struct {
			Brands []struct {
				ID      *int64   `json:"id"`
				Origins []string `json:"origins"`
			} `json:"brands"`
		} `json:"data"`
	}
	// Decoded into new strings: nothing kept refers to resp, which goes back to its pool.
	if err := json.Unmarshal(resp.Body(), &answer); err != nil || answer.Data == nil {
		return nil, unavailable("an answer without data.brands")
	}
	out := brandOrigins{}
	for _, b := range answer.Data.Brands {
		if b.ID == nil {
			return nil, unavailable("a brand without an id")
		}
		for _, raw := range b.Origins {
			o, ok := normalOrigin(raw)
			if !ok {
				continue // not an origin a browser could send
			}
			if _, taken := out[o]; !taken {
				out[o] = *b.ID
			}
		}
	}
	return out, nil
}
