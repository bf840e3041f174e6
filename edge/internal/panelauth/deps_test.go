package panelauth_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDomainImportsNoAdapter keeps the dependencies pointing inward: the domain names the
// storage it needs (Repository) and never imports Fiber, the Mongo driver or its store.
func TestDomainImportsNoAdapter(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/gofiber/", "go.mongodb.org/mongo-driver", "edge/internal/panelstore", "libs/mongostore"} {
			if strings.Contains(dep, banned) {
				t.Errorf("the domain depends on %s", dep)
			}
		}
	}
}
