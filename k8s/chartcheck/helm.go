package chartcheck

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Helm runs one helm binary against the repository's chart, isolated from the user's helm
// configuration and from any cluster: lint and template are purely client-side.
type Helm struct {
	Bin  string
	Root string
	// Home is a scratch directory for helm's config, cache and data and a kubeconfig that
	// points nowhere.
	Home string
}

// Run executes helm in the repository root and returns stdout; stderr ends up in the error.
func (h Helm) Run(args ...string) ([]byte, error) {
	cmd := exec.Command(h.Bin, args...)
	cmd.Dir = h.Root
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(h.Home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(h.Home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(h.Home, "data"),
		"KUBECONFIG="+filepath.Join(h.Home, "no-cluster.kubeconfig"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("helm %v: %w\n%s%s", args, err, stdout.String(), stderr.String())
	}
	return stdout.Bytes(), nil
}
