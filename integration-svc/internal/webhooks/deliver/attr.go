package deliver

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

func attrOutcome(o string) attribute.KeyValue { return attribute.String("outcome", o) }

// The outcomes of vros.webhook.deliveries, their attribute sets built once.
var (
	outcomeDelivered = metric.WithAttributeSet(attribute.NewSet(attrOutcome("delivered")))
	outcomeRetry     = metric.WithAttributeSet(attribute.NewSet(attrOutcome("retry")))
	outcomeFailed    = metric.WithAttributeSet(attribute.NewSet(attrOutcome("failed")))
)

// deliveryOutcome is an attempt's outcome: delivered, retry (it failed and another follows)
// or failed (it failed and was the last).
func deliveryOutcome(ok, retry bool) metric.MeasurementOption {
	switch {
	case ok:
		return outcomeDelivered
	case retry:
		return outcomeRetry
	}
	return outcomeFailed
}
