// Package roundtrips holds the store round trips of the requests whose cost issue 35 cuts: a
// whole vros (embedded servers) serves each request kind a few times through edge, and the
// mean of vros_store_operations for that kind, read from the service's /metrics, must equal
// the table's value exactly (docs/observability.md). A change that adds a round trip fails
// here, and so does one that cuts one until the table says so.
package roundtrips

import (
	"testing"
	"time"

	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/systest/apitest"
)

const adminToken = "roundtrips-admin-token-0123456789"

var st *stack.Stack

func TestMain(m *testing.M) {
	apitest.Main(m, stack.Options{Keys: stack.NewKeys(), EncryptionKey: seal.NewKey(),
		AdminToken: adminToken, LogLevel: "error", PasswordCost: 4, OutboxLease: time.Second,
		RateLimitRPS: 1000, RateLimitBurst: 5000,
		// messaging-svc only consumes the bookings' events: it makes no request counted here.
		NoMessaging: true}, &st)
}
