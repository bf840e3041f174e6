package main

import (
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// root is the repository root, seen from this package's directory.
const root = "../.."

// TestCleanTree: every declared domain of the tree as it is keeps the rule.
func TestCleanTree(t *testing.T) {
	res, err := Check(root, "")
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() {
		var b strings.Builder
		res.Print(&b)
		t.Fatalf("the tree breaks the rule:\n%s", b.String())
	}
	if len(res.Domains) == 0 || res.Services < 5 {
		t.Fatalf("checked %d domains of %d services", len(res.Domains), res.Services)
	}
}

// TestPlantedImport plants one import, through a go list overlay (the tree is not touched),
// into a domain of each service and into every kind of banned package, and expects the
// check to name the domain, the banned package and the chain. TestEveryDomainPlanted covers
// every declared domain.
func TestPlantedImport(t *testing.T) {
	for _, tc := range []struct {
		domain, imp string
		want        string // the line the check prints, without "archcheck: "
	}{
		{"edge/internal/account", "github.com/vros/vros/edge/internal/accountstore",
			"edge/internal/account imports a store (edge/internal/accountstore): edge/internal/account → edge/internal/accountstore"},
		// Transitively: libs/tenancy, which the domain imports, holds no Fiber; its
		// middleware package does.
		{"edge/internal/account", "github.com/vros/vros/libs/tenancy/tenancyfiber",
			"edge/internal/account imports Fiber (github.com/gofiber/fiber/v2): edge/internal/account → libs/tenancy/tenancyfiber → github.com/gofiber/fiber/v2"},
		{"edge/internal/panelauth", "github.com/gofiber/fiber/v2",
			"edge/internal/panelauth imports Fiber (github.com/gofiber/fiber/v2): edge/internal/panelauth → github.com/gofiber/fiber/v2"},
		{"edge/internal/panelauth", "github.com/vros/vros/edge/internal/panelstore",
			"edge/internal/panelauth imports a store (edge/internal/panelstore): edge/internal/panelauth → edge/internal/panelstore"},
		{"edge/internal/usage", "github.com/vros/vros/edge/internal/usagestore",
			"edge/internal/usage imports a store (edge/internal/usagestore): edge/internal/usage → edge/internal/usagestore"},
		{"property-svc/internal/property", "go.mongodb.org/mongo-driver/v2/bson",
			"property-svc/internal/property imports the MongoDB driver (go.mongodb.org/mongo-driver/v2/bson): property-svc/internal/property → go.mongodb.org/mongo-driver/v2/bson"},
		{"property-svc/internal/property", "github.com/vros/vros/property-svc/internal/store",
			"property-svc/internal/property imports a store (property-svc/internal/store): property-svc/internal/property → property-svc/internal/store"},
		{"property-svc/internal/property", "github.com/vros/vros/libs/mongostore",
			"property-svc/internal/property imports libs/mongostore (libs/mongostore): property-svc/internal/property → libs/mongostore"},
		{"booking-svc/internal/booking", "github.com/segmentio/kafka-go",
			"booking-svc/internal/booking imports kafka-go (github.com/segmentio/kafka-go): booking-svc/internal/booking → github.com/segmentio/kafka-go"},
		{"booking-svc/internal/booking", "github.com/vros/vros/booking-svc/internal/store",
			"booking-svc/internal/booking imports a store (booking-svc/internal/store): booking-svc/internal/booking → booking-svc/internal/store"},
		{"booking-svc/internal/ledger", "github.com/vros/vros/booking-svc/internal/ledger/nightstore",
			"booking-svc/internal/ledger imports a store (booking-svc/internal/ledger/nightstore): booking-svc/internal/ledger → booking-svc/internal/ledger/nightstore"},
		{"booking-svc/internal/booking", "github.com/vros/vros/booking-svc/internal/propertyview",
			"booking-svc/internal/booking imports an adapter (booking-svc/internal/propertyview): booking-svc/internal/booking → booking-svc/internal/propertyview"},
		{"booking-svc/internal/guest", "github.com/vros/vros/booking-svc/internal/propertyview",
			"booking-svc/internal/guest imports an adapter (booking-svc/internal/propertyview): booking-svc/internal/guest → booking-svc/internal/propertyview"},
		{"booking-svc/internal/erasure", "github.com/vros/vros/booking-svc/internal/erasure/erasurestore",
			"booking-svc/internal/erasure imports a store (booking-svc/internal/erasure/erasurestore): booking-svc/internal/erasure → booking-svc/internal/erasure/erasurestore"},
		// Transitively: the consumer is an adapter (and libs/events, which it imports, reads
		// Kafka).
		{"booking-svc/internal/erasure", "github.com/vros/vros/booking-svc/internal/erasure/consumer",
			"booking-svc/internal/erasure imports an adapter (booking-svc/internal/erasure/consumer): booking-svc/internal/erasure → booking-svc/internal/erasure/consumer"},
		{"booking-svc/internal/erasure", "github.com/vros/vros/libs/events",
			"booking-svc/internal/erasure imports kafka-go (github.com/segmentio/kafka-go): booking-svc/internal/erasure → libs/events → github.com/segmentio/kafka-go"},
		// Transitively: libs/httpapi is no adapter, but it imports Fiber.
		{"booking-svc/internal/request", "github.com/vros/vros/libs/httpapi",
			"booking-svc/internal/request imports Fiber (github.com/gofiber/fiber/v2): booking-svc/internal/request → libs/httpapi → github.com/gofiber/fiber/v2"},
		{"catalog-svc/internal/catalog", "github.com/vros/vros/catalog-svc/internal/store",
			"catalog-svc/internal/catalog imports a store (catalog-svc/internal/store): catalog-svc/internal/catalog → catalog-svc/internal/store"},
		// Transitively: the consumer is no store, but it imports kafka-go.
		{"catalog-svc/internal/catalog", "github.com/vros/vros/catalog-svc/internal/consumer",
			"catalog-svc/internal/catalog imports kafka-go (github.com/segmentio/kafka-go): catalog-svc/internal/catalog → catalog-svc/internal/consumer → github.com/segmentio/kafka-go"},
		{"integration-svc/internal/ical/feed", "github.com/vros/vros/integration-svc/internal/ical/store",
			"integration-svc/internal/ical/feed imports a store (integration-svc/internal/ical/store): integration-svc/internal/ical/feed → integration-svc/internal/ical/store"},
		{"integration-svc/internal/webhooks/webhook", "github.com/gofiber/fiber/v2",
			"integration-svc/internal/webhooks/webhook imports Fiber (github.com/gofiber/fiber/v2): integration-svc/internal/webhooks/webhook → github.com/gofiber/fiber/v2"},
		{"integration-svc/internal/webhooks/hooks", "github.com/vros/vros/integration-svc/internal/webhooks/store",
			"integration-svc/internal/webhooks/hooks imports a store (integration-svc/internal/webhooks/store): integration-svc/internal/webhooks/hooks → integration-svc/internal/webhooks/store"},
	} {
		t.Run(tc.domain+"+"+tc.imp, func(t *testing.T) {
			res := checkPlanted(t, tc.domain, tc.imp)
			var lines []string
			for _, v := range res.Violations {
				lines = append(lines, v.String())
			}
			if !slices.Contains(lines, tc.want) {
				t.Errorf("the check printed\n%s\nwant the line\n%s", strings.Join(lines, "\n"), tc.want)
			}
		})
	}
}

// TestEveryDomainPlanted: every domain domains.txt declares fails the check when it imports
// Fiber, and every service with a domain has one planted in it.
func TestEveryDomainPlanted(t *testing.T) {
	decl, err := ReadDecl(root)
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := services(root)
	if err != nil {
		t.Fatal(err)
	}
	planted := map[string]bool{}
	for _, dir := range decl.Domains {
		res := checkPlanted(t, dir, "github.com/gofiber/fiber/v2")
		if !slices.ContainsFunc(res.Violations, func(v Violation) bool {
			return v.Domain == dir && v.What == "Fiber"
		}) {
			t.Errorf("Fiber planted in %s: the check printed %v", dir, res.Violations)
		}
		svc, _, _ := strings.Cut(dir, "/")
		planted[svc] = true
	}
	for _, svc := range svcs {
		if _, none := decl.NoDomain[svc]; !none && !planted[svc] {
			t.Errorf("no domain of %s was planted", svc)
		}
	}
}

// TestDeclarationKept: a directory that is gone and a service without a line both fail.
func TestDeclarationKept(t *testing.T) {
	tmp := t.TempDir()
	for _, name := range []string{"go.work", declFile} {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == declFile {
			b = []byte(strings.ReplaceAll(string(b), "\ndomain catalog-svc/", "\n# domain catalog-svc/") +
				"domain property-svc/internal/gone\n")
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(tmp, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Check(tmp, "")
	if err != nil {
		t.Fatal(err)
	}
	// go.work's modules are not copied, so no service has a service/ directory: the
	// missing nodomain line is checked against the real tree below.
	if want := declFile + " names property-svc/internal/gone, which is no directory: update it"; !slices.Contains(res.Problems, want) {
		t.Errorf("problems %q, want %q", res.Problems, want)
	}
	for _, svc := range []string{"booking-svc", "catalog-svc", "edge", "integration-svc", "property-svc"} {
		if err := os.MkdirAll(filepath.Join(tmp, svc, "service"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	res, err = Check(tmp, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := "service catalog-svc has no line in " + declFile + ": name its domain packages, or say why it has none (nodomain)"; !slices.Contains(res.Problems, want) {
		t.Errorf("problems %q, want %q", res.Problems, want)
	}
	if res.OK() {
		t.Error("a wrong declaration passed")
	}
}

// checkPlanted runs the check with a file in dir (from the repository root) that imports
// imp, given to go list as an overlay; it expects the check to fail.
func checkPlanted(t *testing.T, dir, imp string) Result {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(root, dir))
	if err != nil {
		t.Fatal(err)
	}
	name := packageName(t, abs)
	tmp := t.TempDir()
	src := filepath.Join(tmp, "planted.go")
	if err := os.WriteFile(src, fmt.Appendf(nil, "package %s\n\nimport _ %q\n", name, imp), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(abs, "zz_archcheck_planted.go"): src}})
	if err != nil {
		t.Fatal(err)
	}
	ov := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Check(root, ov)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() {
		t.Fatalf("%s imports %s, and the check passed", dir, imp)
	}
	return res
}

// packageName is the package clause of the first non-test Go file in dir.
func packageName(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		return af.Name.Name
	}
	t.Fatalf("no Go file in %s", dir)
	return ""
}
