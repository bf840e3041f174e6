package booking_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDomainImportsNoAdapter: the domain packages (this one and the ledger's protocol) never
// depend on HTTP, MongoDB, Kafka or the adapters that satisfy their interfaces, directly or
// through another package.
func TestDomainImportsNoAdapter(t *testing.T) {
	forbidden := []string{
		"github.com/gofiber/",
		"go.mongodb.org/mongo-driver",
		"github.com/segmentio/kafka-go",
		"github.com/vros/vros/libs/mongostore",
		"github.com/vros/vros/booking-svc/internal/store",
		"github.com/vros/vros/booking-svc/internal/ledger/nightstore",
		"github.com/vros/vros/booking-svc/internal/view",
		"github.com/vros/vros/booking-svc/internal/properties",
	}
	for _, dir := range []string{".", "../ledger"} {
		out, err := exec.Command("go", "list", "-deps", dir).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", dir, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 2 {
			t.Fatalf("go list -deps %s listed %v", dir, deps)
		}
		for _, d := range deps {
			for _, f := range forbidden {
				if strings.HasPrefix(d, f) {
					t.Errorf("%s depends on %s", dir, d)
				}
			}
		}
	}
}
