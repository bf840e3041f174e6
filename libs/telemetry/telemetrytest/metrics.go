package telemetrytest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/vros/vros/libs/telemetry"
)

// Metrics is a meter whose instruments are exported as a service's /metrics exports them
// (telemetry.NewMetrics), so that a test reads them by their Prometheus names and labels.
type Metrics struct {
	reg      *prometheus.Registry
	provider *sdkmetric.MeterProvider
}

// NewMetrics returns a meter exported to a registry of its own, shut down when the test ends.
func NewMetrics(t testing.TB) *Metrics {
	t.Helper()
	reg, mp, err := telemetry.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return &Metrics{reg: reg, provider: mp}
}

// Meter is the meter to give the component under test.
func (m *Metrics) Meter() metric.Meter { return m.provider.Meter("telemetrytest") }

// Series is one series of a scrape: its labels (without the exporter's otel_scope_*), and
// its value (a counter's or gauge's), or a histogram's count and sum.
type Series struct {
	Labels map[string]string
	Value  float64
	Count  uint64
	Sum    float64
}

// Family is the type and series of one metric, by its Prometheus name.
type Family struct {
	Type   dto.MetricType
	Series []Series
}

// Scrape reads every metric, by Prometheus name.
func (m *Metrics) Scrape(t testing.TB) map[string]Family {
	t.Helper()
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Family{}
	for _, mf := range mfs {
		f := Family{Type: mf.GetType()}
		for _, s := range mf.GetMetric() {
			x := Series{Labels: map[string]string{}}
			for _, l := range s.GetLabel() {
				if !strings.HasPrefix(l.GetName(), "otel_scope_") {
					x.Labels[l.GetName()] = l.GetValue()
				}
			}
			switch {
			case s.Counter != nil:
				x.Value = s.Counter.GetValue()
			case s.Gauge != nil:
				x.Value = s.Gauge.GetValue()
			case s.Histogram != nil:
				x.Count, x.Sum = s.Histogram.GetSampleCount(), s.Histogram.GetSampleSum()
			}
			f.Series = append(f.Series, x)
		}
		out[mf.GetName()] = f
	}
	return out
}

// Matching returns the series of metric name whose labels include every pair of labels
// ("key", "value", ...).
func (m *Metrics) Matching(t testing.TB, name string, labels ...string) []Series {
	t.Helper()
	var out []Series
	for _, s := range m.Scrape(t)[name].Series {
		if has(s.Labels, labels) {
			out = append(out, s)
		}
	}
	return out
}

// Value is the sum of the values of the series of name that carry labels (0 when none).
func (m *Metrics) Value(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	var v float64
	for _, s := range m.Matching(t, name, labels...) {
		v += s.Value
	}
	return v
}

// Count is the number of observations of histogram name in the series that carry labels.
func (m *Metrics) Count(t testing.TB, name string, labels ...string) uint64 {
	t.Helper()
	var n uint64
	for _, s := range m.Matching(t, name, labels...) {
		n += s.Count
	}
	return n
}

// LabelNames are the label names of the series of name, sorted and without repeats.
func (m *Metrics) LabelNames(t testing.TB, name string) []string {
	t.Helper()
	var out []string
	for _, s := range m.Scrape(t)[name].Series {
		for k := range s.Labels {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

func has(got map[string]string, pairs []string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		if got[pairs[i]] != pairs[i+1] {
			return false
		}
	}
	return true
}
