package mongostore

import (
	"context"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/dbconv"

	"github.com/vros/vros/libs/telemetry"
)

// DurationBuckets are the bucket boundaries (seconds) of the client operation durations,
// MongoDB's and Kafka's: OpenTelemetry's advice for them.
var DurationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// perKey are the prefixes of collections named per key (booking-svc's per-account booking
// lists, "booking_list.<account>"): their label is the prefix and "*", never the key.
var perKey struct {
	sync.RWMutex
	prefixes []string
}

// PerKeyCollections declares that the collections whose names start with prefix are one per
// key (an account, say): metrics label them "<prefix>*", so that no label carries the key.
func PerKeyCollections(prefix string) {
	perKey.Lock()
	defer perKey.Unlock()
	for _, p := range perKey.prefixes {
		if p == prefix {
			return
		}
	}
	perKey.prefixes = append(perKey.prefixes, prefix)
}

// CollectionLabel is the db.collection.name a metric gives collection name.
func CollectionLabel(name string) string {
	perKey.RLock()
	defer perKey.RUnlock()
	for _, p := range perKey.prefixes {
		if strings.HasPrefix(name, p) {
			return p + "*"
		}
	}
	return name
}

// opMetrics is the histogram db.client.operation.duration and the attribute sets of the
// label values seen so far: commands, collections and error codes are a few fixed names, so
// the sets are built once and looked up without allocating.
type opMetrics struct {
	duration dbconv.ClientOperationDuration
	sets     *telemetry.AttrSets[opKey]
}

type opKey struct{ op, coll, errType string }

// maxSets bounds the cached attribute sets; past it a set is built per command.
const maxSets = 4096

func newOpMetrics(meter metric.Meter) *opMetrics {
	d, _ := dbconv.NewClientOperationDuration(meter, metric.WithExplicitBucketBoundaries(DurationBuckets...))
	return &opMetrics{duration: d, sets: telemetry.NewAttrSets[opKey](maxSets)}
}

func (m *opMetrics) record(ctx context.Context, seconds float64, op, coll, errType string) {
	k := opKey{op: op, coll: CollectionLabel(coll), errType: errType}
	set := m.sets.Get(k, func() []attribute.KeyValue {
		attrs := []attribute.KeyValue{semconv.DBSystemNameMongoDB, semconv.DBOperationName(op)}
		if k.coll != "" {
			attrs = append(attrs, semconv.DBCollectionName(k.coll))
		}
		if errType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		}
		return attrs
	})
	m.duration.Inst().Record(ctx, seconds, set)
}
