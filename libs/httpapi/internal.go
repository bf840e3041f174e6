package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The internal listener serves /healthz, /readyz and /metrics on an address of its own
// (VROS_INTERNAL_ADDR, default :9090) that the Ingress never routes to: probes, Prometheus
// and operators reach it inside the cluster, clients never. The public app has none of
// these routes, so they answer 404 there.
//
// The address reaches Serve through its context (WithInternal): daemon.Main puts the
// configured one there, the dev stack one per service, so a service's Run needs no
// change to gain the listener.

type internalKey struct{}

type internalListener struct {
	addr  string
	ready func(addr string)
}

// WithInternal returns ctx carrying the internal listener's address for Serve; ready, when
// set, receives the address actually bound (":0" picks a free port). Without it Serve runs
// no internal listener (unit tests of a single app).
func WithInternal(ctx context.Context, addr string, ready func(addr string)) context.Context {
	return context.WithValue(ctx, internalKey{}, internalListener{addr: addr, ready: ready})
}

func internalFrom(ctx context.Context) (internalListener, bool) {
	l, ok := ctx.Value(internalKey{}).(internalListener)
	return l, ok && l.addr != ""
}

// opsHandler answers the internal routes of one app.
func opsHandler(o Options, drain *draining) http.Handler {
	log := o.Telemetry.Logger
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if drain.Load() {
			http.Error(w, "not ready: shutting down", http.StatusServiceUnavailable)
			return
		}
		if o.Ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			defer cancel()
			if err := o.Ready(ctx); err != nil {
				// The cause goes to the log only: a probe needs the status, and the text of
				// a driver error names hosts and settings.
				log.WarnContext(ctx, "not ready", "err", err)
				http.Error(w, "not ready", http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = w.Write([]byte("ready"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(o.Telemetry.Registry, promhttp.HandlerOpts{}))
	return mux
}
