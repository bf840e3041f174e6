package roundtrips

import (
	"strings"

	"github.com/vros/vros/systest/apitest"
)

// opsOf is vros_store_operations' sum and count for kind.
func opsOf(samples []apitest.MetricSample, kind string) (sum, count float64) {
	for _, s := range samples {
		if s.Labels["vros_request_kind"] != kind {
			continue
		}
		switch s.Name {
		case "vros_store_operations_sum":
			sum += s.Value
		case "vros_store_operations_count":
			count += s.Value
		}
	}
	return sum, count
}

// commands are db_client_operation_duration_seconds' counts by "<operation> <collection>":
// every MongoDB command of the service, its background work's included.
func commands(samples []apitest.MetricSample) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		if s.Name == "db_client_operation_duration_seconds_count" {
			out[strings.TrimSpace(s.Labels["db_operation_name"]+" "+s.Labels["db_collection_name"])] += s.Value
		}
	}
	return out
}
