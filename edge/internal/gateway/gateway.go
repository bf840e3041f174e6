// Package gateway is edge's public surface: it authenticates the three credential kinds,
// applies the account's rate and body limits, and forwards each request to the service
// that owns it with signed tenant headers. Each route is a pipeline of steps, one file each
// (step_*.go), listed in the order a request meets them in pipeline.go; routes.go is the
// table of what each route reaches.
package gateway

import (
	"cmp"
	"context"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/edge/internal/kept"
	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/edge/internal/usage"
	"github.com/vros/vros/edge/widget"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
)

// Config tells the gateway where the services are. An empty URL means the service is not
// deployed: its routes answer 503 with a clear message.
type Config struct {
	ServiceURLs map[Upstream]string
	// RateLimitRPS and RateLimitBurst are each account's token bucket in this replica
	// (RPS ≤ 0: none).
	RateLimitRPS   float64
	RateLimitBurst int
	// AccountConcurrency is how many requests of one account may be in flight in this
	// replica at once (≤ 0: no limit); one over it waits up to ConcurrencyWait for a slot
	// (0: DefaultConcurrencyWait), then is refused 429.
	AccountConcurrency int
	ConcurrencyWait    time.Duration
	// Failures throttles failed authentications by client address (nil: none).
	Failures *throttle.Failures
	// Tracer starts the client span of each forwarded request (nil: none).
	Tracer trace.Tracer
	// PublicURL is edge's public base URL (VROS_EDGE_PUBLIC_URL, no trailing slash), sent to
	// catalog-svc with every read for its links (empty: the request's own base URL), and to
	// every service with every forwarded request as X-Vros-Public-URL (empty: the address
	// edge listens on, SetListenURL).
	PublicURL string
	// Usage counts the authenticated requests (nil: none are counted).
	Usage *usage.Counter
	// Metrics counts failed authentications and the requests edge refuses itself (nil:
	// none are counted).
	Metrics *edgemetrics.Metrics
	// Engine is the public booking API's limits (zero: none, and DefaultOriginTTL).
	Engine EngineLimits
	// Kept holds catalog-svc's answers that edge serves again itself (nil: none are kept;
	// docs/catalog.md, "Answers kept at edge").
	Kept *kept.Store
}

// Gateway serves the public routes.
type Gateway struct {
	accounts  *account.Service
	upstreams map[Upstream]*upstream
	limits    *throttle.Buckets
	inFlight  *throttle.Concurrency
	failures  *throttle.Failures
	publicURL string
	// listenURL is http://<listen address>, X-Vros-Public-URL when publicURL is empty.
	listenURL atomic.Pointer[string]
	usage     *usage.Counter
	metrics   *edgemetrics.Metrics
	// engine is the booking API's limits and origins; scripts the widget's files by the
	// name they are served as.
	engine  *engine
	scripts map[string]*widgetFile
}

// New builds the gateway.
func New(cfg Config, accounts *account.Service, signer *tenancy.Signer, prop propagation.TextMapPropagator) (*Gateway, error) {
	g := &Gateway{accounts: accounts, upstreams: map[Upstream]*upstream{}, failures: cfg.Failures, publicURL: strings.TrimRight(cfg.PublicURL, "/"), usage: cfg.Usage,
		metrics:  cfg.Metrics,
		limits:   throttle.New(cfg.RateLimitRPS, cfg.RateLimitBurst, throttle.DefaultKeys),
		inFlight: throttle.NewConcurrency(cfg.AccountConcurrency, cmp.Or(cfg.ConcurrencyWait, DefaultConcurrencyWait))}
	g.engine = newEngine(cfg.Engine, g.fetchOrigins)
	scripts, err := loadScripts(widget.Assets)
	if err != nil {
		return nil, err
	}
	g.scripts = scripts
	for name, raw := range cfg.ServiceURLs {
		if raw == "" {
			continue
		}
		u, err := newUpstream(name, raw, signer, prop, cfg.Tracer)
		if err != nil {
			return nil, err
		}
		u.public = g.publicHeader
		if name == CatalogSvc {
			u.kept = cfg.Kept
		}
		g.upstreams[name] = u
	}
	return g, nil
}

// HeaderPublicURL carries, to every service, edge's public base URL (no trailing slash): the
// links a service answers with (property-ical's url) start with it.
const HeaderPublicURL = "X-Vros-Public-URL"

// SetListenURL sets the base URL X-Vros-Public-URL carries when edge has no public URL
// configured: http://<the address edge listens on>, known once it listens.
func (g *Gateway) SetListenURL(u string) {
	u = strings.TrimRight(u, "/")
	g.listenURL.Store(&u)
}

// publicHeader is X-Vros-Public-URL's value: the configured public URL, else the listen
// URL, else nothing (the header is then not sent).
func (g *Gateway) publicHeader() string {
	if g.publicURL != "" {
		return g.publicURL
	}
	if u := g.listenURL.Load(); u != nil {
		return *u
	}
	return ""
}

// EnvelopeFor is the envelope of a request edge answers before routing it (a 414, a 431):
// interface B's under /vros/, the booking API's under /widget/api/, interface A's elsewhere.
func EnvelopeFor(path string) httpapi.Envelope {
	switch {
	case strings.HasPrefix(path, "/vros/"):
		return httpapi.EnvelopeB
	case strings.HasPrefix(path, "/widget/api/"), path == "/widget/api":
		return httpapi.EnvelopeEngine
	}
	return httpapi.EnvelopeA
}

// AuthFailed counts a failed authentication of kind: the gateway's own, and the management
// panel's sign-ins (kind panel). A nil gateway counts nothing.
func (g *Gateway) AuthFailed(ctx context.Context, kind edgemetrics.AuthKind) {
	if g != nil {
		g.metrics.AuthFailed(ctx, kind)
	}
}
