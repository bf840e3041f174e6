// Package repo locates the deployment files of the vros repository (chart, kind config, dev
// manifests) and the pinned tools installed into its bin/ directory.
package repo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
)

// Paths of the deployment files, relative to the repository root.
const (
	Chart      = "charts/vros"
	KindValues = "charts/vros/values-kind.yaml"
	// KindConfig uses kindest/node from Docker Hub; KindAirgapConfig the node image
	// k8s/airgap/build.sh assembles (make e2e, make kind-up).
	KindConfig       = "k8s/kind-config.yaml"
	KindAirgapConfig = "k8s/kind-config-airgap.yaml"
	AirgapBuild      = "k8s/airgap/build.sh"
	DevManifestDir   = "k8s/dev"
)

// Root walks up from the working directory to the directory that holds the chart.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, Chart, "Chart.yaml")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root not found: no charts/vros/Chart.yaml above the working directory")
		}
		dir = parent
	}
}

// Helm is the helm binary the checks run: $HELM when set, else the one `make helm` installs.
func Helm(root string) string {
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	return filepath.Join(root, "bin", "helm")
}

// LoadKindConfig decodes the kind cluster config strictly: a misspelt field is an error here
// rather than a setting kind silently ignores.
func LoadKindConfig(path string) (*v1alpha4.Cluster, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cfg v1alpha4.Cluster
	if err := yaml.UnmarshalStrict(raw, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if cfg.Kind != "Cluster" || cfg.APIVersion != "kind.x-k8s.io/v1alpha4" {
		return nil, fmt.Errorf("%s: want kind.x-k8s.io/v1alpha4 Cluster, got %s %s", path, cfg.APIVersion, cfg.Kind)
	}
	return &cfg, nil
}
