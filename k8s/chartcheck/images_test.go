package chartcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vros/vros/k8s/internal/repo"
)

// TestDockerfiles reads the services' one Dockerfile as text (no Docker here) and checks the
// build the images promise: module download as its own layer before the sources, GOWORK=off,
// static binary with the version stamped, distroless non-root final stage, base images that
// k8s/airgap/build.sh can replace by build arguments; and that make images gives each
// service the port the chart runs it on.
func TestDockerfiles(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(raw)
	// Instructions in this order: go.mod files, download, sources, build.
	inOrder(t, df,
		"ARG GO_IMAGE=golang:",
		"ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot",
		"FROM ${GO_IMAGE} AS build",
		"ARG SERVICE",
		"GOWORK=off",
		"COPY libs/go.mod libs/go.sum* /src/libs/",
		"COPY ${SERVICE}/go.mod ${SERVICE}/go.sum* /src/${SERVICE}/",
		"RUN go mod download",
		"COPY libs/ /src/libs/",
		"COPY ${SERVICE}/ /src/${SERVICE}/",
		"-X github.com/vros/vros/libs/buildinfo.Version=${VERSION}",
		"./cmd/${SERVICE}",
		"FROM ${RUNTIME_IMAGE}",
		"USER 65532:65532",
		"EXPOSE ${PORT}",
		`ENTRYPOINT ["/service"]`,
	)
	// BuildKit fetches the frontend a syntax line names: no build without a registry.
	if regexp.MustCompile(`(?m)^# *syntax=`).MatchString(df) {
		t.Error(`a "# syntax=" line makes BuildKit pull its frontend (make e2e builds without a registry)`)
	}
	if !strings.Contains(df, "CGO_ENABLED=0") {
		t.Error("CGO_ENABLED=0 missing: the distroless static base has no libc")
	}
	if froms := regexp.MustCompile(`(?m)^FROM `).FindAllStringIndex(df, -1); len(froms) != 2 {
		t.Errorf("%d stages, want build and final", len(froms))
	}
	mk, err := os.ReadFile(filepath.Join(root, "mk", "k8s.mk"))
	if err != nil {
		t.Fatal(err)
	}
	ports := regexp.MustCompile(`(?m)^SERVICE_PORTS\s*:=(.*)$`).FindSubmatch(mk)
	if ports == nil {
		t.Fatal("mk/k8s.mk: no SERVICE_PORTS")
	}
	for _, comp := range components {
		if want := fmt.Sprintf("%s:%d", comp.name, comp.port); !slices.Contains(strings.Fields(string(ports[1])), want) {
			t.Errorf("mk/k8s.mk SERVICE_PORTS = %q, want %s among them", ports[1], want)
		}
	}

	raw, err = os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	ignore := "\n" + string(raw)
	if !strings.Contains(ignore, "\n*\n") {
		t.Error(".dockerignore must exclude everything by default")
	}
	for _, dir := range append([]string{"libs"}, names(components)...) {
		if !strings.Contains(ignore, "\n!"+dir+"/\n") {
			t.Errorf(".dockerignore does not let %s/ into the build context", dir)
		}
	}
}

// inOrder fails unless every needle occurs in s, each after the previous one.
func inOrder(t *testing.T, s string, needles ...string) {
	t.Helper()
	at := 0
	for _, n := range needles {
		i := strings.Index(s[at:], n)
		if i < 0 {
			t.Errorf("%q missing or out of order", n)
			continue
		}
		at += i + len(n)
	}
}

func names(cs []component) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}
