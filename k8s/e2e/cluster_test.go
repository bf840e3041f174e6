//go:build e2e

package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	kindcmd "sigs.k8s.io/kind/pkg/cmd"

	"github.com/vros/vros/k8s/internal/repo"
)

const (
	namespace   = "vros"
	releaseName = "vros"
	secretName  = "vros-secrets"
	// edgeNodePort is the NodePort values-kind.yaml gives edge; kind publishes it on the host.
	edgeNodePort = 30080
)

var services = []string{"edge", "property-svc", "booking-svc", "catalog-svc"}

// deployment is a kind cluster with dev MongoDB and Kafka and the chart installed.
type deployment struct {
	root       string
	name       string
	kubeconfig string
	helm       string
	baseURL    string
	adminToken string
	provider   *cluster.Provider
}

// deploy creates the cluster, loads the images, installs the dev stores and the chart and
// waits until everything is ready. The cluster is deleted when the test ends.
func deploy(t *testing.T) *deployment {
	t.Helper()
	for _, tool := range []string{"docker", "kubectl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the e2e suite needs %s on PATH: %v", tool, err)
		}
	}
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	d := &deployment{
		root:       root,
		name:       envOr("VROS_E2E_CLUSTER", "vros-e2e"),
		kubeconfig: filepath.Join(t.TempDir(), "kubeconfig"),
		helm:       envOr("VROS_E2E_HELM", filepath.Join(root, "bin", "helm")),
		provider:   cluster.NewProvider(cluster.ProviderWithLogger(kindcmd.NewLogger())),
	}
	if _, err := os.Stat(d.helm); err != nil {
		t.Fatalf("helm not found at %s; run `make helm`: %v", d.helm, err)
	}

	// Same cluster as `make kind-up`, but on a free host port so that both can coexist.
	cfg, err := repo.LoadKindConfig(filepath.Join(root, repo.KindConfig))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Name = d.name
	hostPort := freePort(t)
	mapped := false
	for i := range cfg.Nodes {
		for j := range cfg.Nodes[i].ExtraPortMappings {
			if m := &cfg.Nodes[i].ExtraPortMappings[j]; m.ContainerPort == edgeNodePort {
				m.HostPort, mapped = int32(hostPort), true
			}
		}
	}
	if !mapped {
		t.Fatalf("%s does not publish NodePort %d", repo.KindConfig, edgeNodePort)
	}
	d.baseURL = fmt.Sprintf("http://127.0.0.1:%d", hostPort)

	if existing, err := d.provider.List(); err == nil && slices.Contains(existing, d.name) {
		t.Logf("deleting the leftover cluster %s", d.name)
		if err := d.provider.Delete(d.name, ""); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("creating kind cluster %s (edge on %s)", d.name, d.baseURL)
	if err := d.provider.Create(d.name,
		cluster.CreateWithV1Alpha4Config(cfg),
		cluster.CreateWithKubeconfigPath(d.kubeconfig),
		cluster.CreateWithWaitForReady(3*time.Minute),
		cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false),
	); err != nil {
		t.Fatalf("kind create: %v", err)
	}
	t.Cleanup(func() { d.tearDown(t) })

	built := d.loadImages(t)
	d.installStores(t)
	d.createSecret(t)
	d.installChart(t, built)
	return d
}

func (d *deployment) tearDown(t *testing.T) {
	if t.Failed() {
		d.dumpDiagnostics(t)
	}
	if os.Getenv("VROS_E2E_KEEP") == "1" {
		t.Logf("keeping cluster %s; kubeconfig: kind get kubeconfig --name %s", d.name, d.name)
		return
	}
	if err := d.provider.Delete(d.name, d.kubeconfig); err != nil {
		t.Errorf("kind delete cluster %s: %v", d.name, err)
	}
}

// loadImages does what `kind load docker-image` does: docker save, then import the archive
// into every node's containerd. Returns the services whose images were loaded.
func (d *deployment) loadImages(t *testing.T) []string {
	t.Helper()
	repoName, tag := envOr("VROS_E2E_IMAGE_REPO", "vros"), envOr("VROS_E2E_IMAGE_TAG", "dev")
	var built, images []string
	for _, s := range services {
		// Same rule as `make images`: a service is built once its module exists.
		if _, err := os.Stat(filepath.Join(d.root, s, "go.mod")); err == nil {
			built = append(built, s)
			images = append(images, fmt.Sprintf("%s/%s:%s", repoName, s, tag))
		}
	}
	archive := filepath.Join(t.TempDir(), "images.tar")
	run(t, d.root, "docker", append([]string{"save", "-o", archive}, images...)...)
	nodes, err := d.provider.ListInternalNodes(d.name)
	if err != nil || len(nodes) == 0 {
		t.Fatalf("nodes of %s: %v", d.name, err)
	}
	for _, n := range nodes {
		f, err := os.Open(archive)
		if err != nil {
			t.Fatal(err)
		}
		err = nodeutils.LoadImageArchive(n, f)
		f.Close()
		if err != nil {
			t.Fatalf("loading images into %s: %v", n, err)
		}
	}
	t.Logf("loaded %v", images)
	return built
}

// installStores applies k8s/dev (single-node MongoDB replica set, single-node KRaft Kafka).
func (d *deployment) installStores(t *testing.T) {
	t.Helper()
	d.kubectl(t, "create", "namespace", namespace)
	d.kubectl(t, "-n", namespace, "apply", "-f", filepath.Join(d.root, repo.DevManifestDir))
	for _, s := range []string{"statefulset/mongodb", "statefulset/kafka"} {
		d.kubectl(t, "-n", namespace, "rollout", "status", s, "--timeout=6m")
	}
}

// createSecret stores fresh keys, as an operator would; the chart only references them.
func (d *deployment) createSecret(t *testing.T) {
	t.Helper()
	d.adminToken = randomHex(t, 32)
	encKey := make([]byte, 32)
	if _, err := rand.Read(encKey); err != nil {
		t.Fatal(err)
	}
	envFile := filepath.Join(t.TempDir(), "secret.env")
	body := fmt.Sprintf("admin-token=%s\ninternal-hmac-key=%s\nencryption-key=%s\n",
		d.adminToken, randomHex(t, 32), base64.StdEncoding.EncodeToString(encKey))
	if err := os.WriteFile(envFile, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	d.kubectl(t, "-n", namespace, "create", "secret", "generic", secretName, "--from-env-file="+envFile)
}

// installChart installs charts/vros with values-kind.yaml, waits for the rollout (the topic
// job runs first, as a pre-install hook), then runs `helm test`.
func (d *deployment) installChart(t *testing.T, built []string) {
	t.Helper()
	args := []string{"upgrade", "--install", releaseName, repo.Chart,
		"--kubeconfig", d.kubeconfig, "--namespace", namespace,
		"-f", repo.KindValues,
		"--set", "image.registry=",
		"--set", "image.tag=" + envOr("VROS_E2E_IMAGE_TAG", "dev"),
		"--set", "secrets.existingSecret=" + secretName,
		"--wait", "--timeout", "10m"}
	for _, s := range services {
		if !slices.Contains(built, s) {
			args = append(args, "--set", strings.ReplaceAll(s, "-svc", "Svc")+".enabled=false")
		}
	}
	repoName := envOr("VROS_E2E_IMAGE_REPO", "vros")
	for _, s := range built {
		args = append(args, "--set", strings.ReplaceAll(s, "-svc", "Svc")+".image.repository="+repoName+"/"+s)
	}
	run(t, d.root, d.helm, args...)
	for _, s := range built {
		d.kubectl(t, "-n", namespace, "rollout", "status", "deployment/"+releaseName+"-"+s, "--timeout=5m")
	}
	run(t, d.root, d.helm, "test", releaseName, "--kubeconfig", d.kubeconfig, "--namespace", namespace, "--logs", "--timeout", "5m")
}

// dumpDiagnostics prints what one needs to understand a failed deployment.
func (d *deployment) dumpDiagnostics(t *testing.T) {
	for _, args := range [][]string{
		{"get", "all,networkpolicy,hpa,pdb,job", "-n", namespace, "-o", "wide"},
		{"get", "events", "-n", namespace, "--sort-by=.lastTimestamp"},
		{"describe", "pods", "-n", namespace},
		{"logs", "-n", namespace, "-l", "app.kubernetes.io/part-of=vros", "--all-containers", "--prefix", "--tail=200"},
	} {
		out, err := d.kubectlOutput(args...)
		t.Logf("kubectl %s (err=%v):\n%s", strings.Join(args, " "), err, out)
	}
	dir := filepath.Join(os.TempDir(), "vros-e2e-logs-"+time.Now().Format("20060102-150405"))
	if err := d.provider.CollectLogs(d.name, dir); err == nil {
		t.Logf("node logs in %s", dir)
	}
}

func (d *deployment) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := d.kubectlOutput(args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (d *deployment) kubectlOutput(args ...string) (string, error) {
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", d.kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// run executes a command in dir, failing the test with its output.
func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	t.Logf("%s %s (%s)", filepath.Base(name), args[0], time.Since(start).Round(time.Second))
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
