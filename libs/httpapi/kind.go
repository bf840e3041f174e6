package httpapi

import (
	"context"
	"strings"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/vros/vros/libs/telemetry"
)

// kindKey holds the request kind a handler named (SetKind).
const kindKey = "vros.request.kind"

// SetKind names the kind of the request being served, e.g. "B.create" or
// "A.property.update": the vros.request.kind of its vros.store.operations. Give it bounded
// values only (an interface's action, never a key or an id); the last call wins. A request no
// handler names is of its route's path template (Kind).
func SetKind(c *fiber.Ctx, kind string) { c.Locals(kindKey, kind) }

// Kind is the request's kind: the one SetKind named, else its route's path template
// (c.Route().Path, "/internal/a/property-photo"), never the raw path.
func Kind(c *fiber.Ctx) string {
	if k, ok := c.Locals(kindKey).(string); ok && k != "" {
		return k
	}
	return c.Route().Path
}

// KindAfter is a route group's middleware naming the kind of a request that no handler
// named: as followed by its route's path after prefix, e.g. KindAfter("/internal/b/", "B.")
// makes /internal/b/create "B.create". A route with parameters keeps its path template.
func KindAfter(prefix, as string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		err := c.Next()
		if k, ok := c.Locals(kindKey).(string); ok && k != "" {
			return err
		}
		if name, ok := strings.CutPrefix(c.Route().Path, prefix); ok && name != "" && !strings.ContainsAny(name, ":*/") {
			SetKind(c, as+name)
		}
		return err
	}
}

// StoreOpsBuckets are the bucket boundaries of vros.store.operations: every count a request
// is expected to make is a boundary of its own, so that a change by one shows.
var StoreOpsBuckets = []float64{0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 30, 50}

// maxKinds bounds the cached attribute sets of request kinds (routes and named actions are a
// few hundred); past it a set is built per request.
const maxKinds = 1024

// storeOps records in vros.store.operations the store round trips of each request
// (mongostore.Tally), by its kind.
type storeOps struct {
	hist  metric.Int64Histogram
	kinds *telemetry.AttrSets[string]
}

func newStoreOps(meter metric.Meter) *storeOps {
	h, _ := meter.Int64Histogram("vros.store.operations", metric.WithUnit("{operation}"),
		metric.WithDescription("Store commands issued with a request's context before its answer, one per command, batched writes counting one per request that waited for them; by request kind."),
		metric.WithExplicitBucketBoundaries(StoreOpsBuckets...))
	return &storeOps{hist: h, kinds: telemetry.NewAttrSets[string](maxKinds)}
}

func (s *storeOps) record(ctx context.Context, kind string, n int) {
	set := s.kinds.Get(kind, func() []attribute.KeyValue {
		return []attribute.KeyValue{attribute.String("vros.request.kind", kind)}
	})
	s.hist.Record(ctx, int64(n), set)
}
