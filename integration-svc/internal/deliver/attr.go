package deliver

import "go.opentelemetry.io/otel/attribute"

func attrOutcome(o string) attribute.KeyValue { return attribute.String("outcome", o) }
