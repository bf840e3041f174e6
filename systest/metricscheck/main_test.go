// Package metricscheck checks that the chart's Grafana dashboard (charts/vros/dashboards/vros.json)
// and alert rules (charts/vros/rules/vros-rules.yaml) query only metrics that the services
// really export: it starts a whole vros (embedded servers), drives a little of every kind of
// traffic the panels show through edge, scrapes each service's internal /metrics, and names
// every metric of a query that no service exports — or, for a query that selects a service
// (job="booking-svc"), that this service does not export. docs/operations.md.
package metricscheck

import (
	"testing"
	"time"

	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/systest/apitest"
)

const adminToken = "test-admin-token-0123456789"

var st *stack.Stack

func TestMain(m *testing.M) {
	apitest.Main(m, stack.Options{Keys: stack.NewKeys(), EncryptionKey: seal.NewKey(),
		AdminToken: adminToken, LogLevel: "error", PasswordCost: 4, OutboxLease: time.Second,
		RateLimitRPS: 1000, RateLimitBurst: 5000,
		// Two failed authentications from one address, then the throttle refuses: the test
		// sends three at once, so that a rejection is counted too; ten a second come back, so
		// that a run of the test again (-count) is not refused.
		AuthFailureRPS: 10, AuthFailureBurst: 2}, &st)
}
