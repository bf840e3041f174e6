package chartcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vros/vros/k8s/internal/repo"
)

const (
	release   = "vros"
	namespace = "vros"
	// The floor of Chart.yaml's kubeVersion: the chart must also render for it.
	minKubeVersion = "1.27.0"
)

// fixture is what every test needs: the repository, a runnable helm and the decoder.
type fixture struct {
	root    string
	helm    Helm
	decoder *Decoder
	// kubeVersion is the Kubernetes version of the kind node image, the version the chart is
	// rendered for unless a case says otherwise.
	kubeVersion string
}

// newFixture finds helm. Outside CI a missing helm skips (run `make helm`); under CI=true it
// fails, so a broken install can never pass as "no chart checks".
func newFixture(t *testing.T) fixture {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	bin := repo.Helm(root)
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("helm not found at %s (set HELM or run `make helm`): %v", bin, err)
		}
		t.Skipf("helm not found at %s; run `make helm` (under CI=true this fails)", bin)
	}
	dec, err := NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := repo.LoadKindConfig(filepath.Join(root, repo.KindConfig))
	if err != nil {
		t.Fatal(err)
	}
	return fixture{
		root:        root,
		helm:        Helm{Bin: bin, Root: root, Home: t.TempDir()},
		decoder:     dec,
		kubeVersion: nodeImageVersion(t, cfg.Nodes[0].Image),
	}
}

// nodeImageVersion turns "kindest/node:v1.37.0@sha256:..." into "1.37.0".
func nodeImageVersion(t *testing.T, image string) string {
	t.Helper()
	ref, _, _ := strings.Cut(image, "@")
	_, tag, ok := strings.Cut(ref, ":")
	if !ok || !strings.HasPrefix(tag, "v") {
		t.Fatalf("kind node image %q is not pinned to a kindest/node:vX.Y.Z tag", image)
	}
	return strings.TrimPrefix(tag, "v")
}

// render runs helm template with the given extra arguments and decodes the result strictly.
func (f fixture) render(t *testing.T, kubeVersion string, args ...string) []Manifest {
	t.Helper()
	full := append([]string{"template", release, repo.Chart, "--namespace", namespace,
		"--kube-version", kubeVersion, "--include-crds"}, args...)
	out, err := f.helm.Run(full...)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := f.decoder.Decode(out, "helm template")
	if err != nil {
		t.Fatalf("strict decoding of the rendered chart failed: %v", err)
	}
	if len(ms) == 0 {
		t.Fatal("helm template rendered nothing")
	}
	return ms
}
