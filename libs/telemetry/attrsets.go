package telemetry

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// AttrSets keeps the attribute sets of an instrument's label values, built once each and
// then looked up without allocating: for labels of a few fixed values (operations, topics,
// collections, error types) recorded on hot paths. Past max distinct keys a set is built
// for each measurement instead of kept, so an unexpected spread of values costs
// allocations, never memory.
type AttrSets[K comparable] struct {
	mu   sync.RWMutex
	sets map[K]metric.MeasurementOption
	max  int
}

// NewAttrSets returns a cache of at most max sets.
func NewAttrSets[K comparable](max int) *AttrSets[K] {
	return &AttrSets[K]{sets: map[K]metric.MeasurementOption{}, max: max}
}

// Get is the set of k, made by attrs the first time.
func (a *AttrSets[K]) Get(k K, attrs func() []attribute.KeyValue) metric.MeasurementOption {
	a.mu.RLock()
	set, ok := a.sets[k]
	a.mu.RUnlock()
	if ok {
		return set
	}
	set = metric.WithAttributeSet(attribute.NewSet(attrs()...))
	a.mu.Lock()
	if len(a.sets) < a.max {
		a.sets[k] = set
	}
	a.mu.Unlock()
	return set
}
