//go:build e2e

package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	// kafkaPod is the dev Kafka of k8s/dev/kafka.yaml: StatefulSet kafka, one replica.
	kafkaPod = "kafka-0"
)

var services = []string{"edge", "property-svc", "booking-svc", "catalog-svc", "integration-svc", "messaging-svc"}

// deployment is a kind cluster with dev MongoDB and Kafka and the chart installed.
type deployment struct {
	root       string
	name       string
	tmp        string // kubeconfig, image archives, secret file
	kubeconfig string
	helm       string
	imageRepo  string
	imageTag   string
	built      []string // services whose images exist, hence deployed
	baseURL    string
	adminToken string
	// edgeKey signs the tenant context edge sends the services (libs/tenancy,
	// docs/internal-auth.md); the scenarios that call a service pod directly sign with it
	// as edge does. booking-svc's, integration-svc's and messaging-svc's keys are drawn and
	// stored only.
	edgeKey  string
	created  bool
	provider *cluster.Provider
}

// newDeployment checks the tools and settles names and paths; nothing is created yet.
func newDeployment(t tb) *deployment {
	t.Helper()
	for _, tool := range []string{"docker", "kubectl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the e2e suite needs %s on PATH: %v", tool, err)
		}
	}
	root, err := repo.Root()
	if err != nil {
		t.Fatalf("%v", err)
	}
	tmp, err := os.MkdirTemp("", "vros-e2e-")
	if err != nil {
		t.Fatalf("%v", err)
	}
	d := &deployment{
		root:       root,
		name:       envOr("VROS_E2E_CLUSTER", "vros-e2e"),
		tmp:        tmp,
		kubeconfig: filepath.Join(tmp, "kubeconfig"),
		helm:       envOr("VROS_E2E_HELM", filepath.Join(root, "bin", "helm")),
		imageRepo:  envOr("VROS_E2E_IMAGE_REPO", "vros"),
		imageTag:   envOr("VROS_E2E_IMAGE_TAG", "dev"),
		provider:   cluster.NewProvider(cluster.ProviderWithLogger(kindcmd.NewLogger())),
	}
	if _, err := os.Stat(d.helm); err != nil {
		t.Fatalf("helm not found at %s; run `make helm`: %v", d.helm, err)
	}
	for _, s := range services {
		// Same rule as `make images`: a service is built once its module exists.
		if _, err := os.Stat(filepath.Join(root, s, "go.mod")); err == nil {
			d.built = append(d.built, s)
		}
	}
	return d
}

// create makes the kind cluster: the same as `make kind-up`, but on a free host port so that
// both can coexist.
func (d *deployment) create(t tb) {
	t.Helper()
	// make e2e passes the air-gapped config (the node image k8s/airgap/build.sh assembles).
	config := envOr("VROS_E2E_KIND_CONFIG", filepath.Join(d.root, repo.KindAirgapConfig))
	cfg, err := repo.LoadKindConfig(config)
	if err != nil {
		t.Fatalf("%v", err)
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
		t.Fatalf("%s does not publish NodePort %d", config, edgeNodePort)
	}
	d.baseURL = fmt.Sprintf("http://127.0.0.1:%d", hostPort)

	if existing, err := d.provider.List(); err == nil && slices.Contains(existing, d.name) {
		t.Logf("deleting the leftover cluster %s", d.name)
		if err := d.provider.Delete(d.name, ""); err != nil {
			t.Fatalf("%v", err)
		}
	}
	t.Logf("creating kind cluster %s (edge on %s)", d.name, d.baseURL)
	d.created = true // from here on, tearDown deletes it, even after a failed create
	if err := d.provider.Create(d.name,
		cluster.CreateWithV1Alpha4Config(cfg),
		cluster.CreateWithKubeconfigPath(d.kubeconfig),
		cluster.CreateWithWaitForReady(3*time.Minute),
		cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false),
	); err != nil {
		t.Fatalf("kind create: %v", err)
	}
}

// install loads the images, installs the dev stores and the chart, and waits until
// everything is ready.
func (d *deployment) install(t tb) {
	t.Helper()
	// The services, the helm test pod, and the dev stores (VROS_E2E_STORE_IMAGES, from make
	// airgap): nothing in the cluster is pulled.
	images := []string{d.image("chart-test", d.imageTag)}
	for _, s := range d.built {
		images = append(images, d.image(s, d.imageTag))
	}
	images = append(images, strings.Fields(os.Getenv("VROS_E2E_STORE_IMAGES"))...)
	d.loadImages(t, images)
	d.installStores(t)
	d.createSecret(t)
	d.installChart(t)
}

// tearDown deletes the cluster unless VROS_E2E_KEEP=1; after a failure it first prints the
// diagnostics.
func (d *deployment) tearDown(t tb, failed bool) {
	if !d.created {
		_ = os.RemoveAll(d.tmp)
		return
	}
	if failed {
		d.dumpDiagnostics(t)
	}
	if os.Getenv("VROS_E2E_KEEP") == "1" {
		t.Logf("keeping cluster %s; kubeconfig: %s (or kind get kubeconfig --name %s)", d.name, d.kubeconfig, d.name)
		return
	}
	if err := d.provider.Delete(d.name, d.kubeconfig); err != nil {
		t.Logf("kind delete cluster %s: %v", d.name, err)
	}
	_ = os.RemoveAll(d.tmp)
}

// image is the reference of a service's image, as `make images` tags it.
func (d *deployment) image(service, tag string) string {
	return fmt.Sprintf("%s/%s:%s", d.imageRepo, service, tag)
}

// loadImages does what `kind load docker-image` does: docker save, then import the archive
// into every node's containerd.
func (d *deployment) loadImages(t tb, images []string) {
	t.Helper()
	archive, err := os.CreateTemp(d.tmp, "images-*.tar")
	if err != nil {
		t.Fatalf("%v", err)
	}
	archive.Close()
	defer os.Remove(archive.Name())
	run(t, d.root, "docker", append([]string{"save", "-o", archive.Name()}, images...)...)
	nodes, err := d.provider.ListInternalNodes(d.name)
	if err != nil || len(nodes) == 0 {
		t.Fatalf("nodes of %s: %v", d.name, err)
	}
	for _, n := range nodes {
		f, err := os.Open(archive.Name())
		if err != nil {
			t.Fatalf("%v", err)
		}
		err = nodeutils.LoadImageArchive(n, f)
		f.Close()
		if err != nil {
			t.Fatalf("loading images into %s: %v", n, err)
		}
	}
	t.Logf("loaded %v", images)
}

// installStores applies k8s/dev (FerretDB on PostgreSQL, single-node KRaft Kafka).
func (d *deployment) installStores(t tb) {
	t.Helper()
	d.kubectl(t, "create", "namespace", namespace)
	d.kubectl(t, "-n", namespace, "apply", "-f", filepath.Join(d.root, repo.DevManifestDir))
	for _, s := range []string{"statefulset/mongodb", "statefulset/kafka"} {
		d.kubectl(t, "-n", namespace, "rollout", "status", s, "--timeout=6m")
	}
}

// createSecret stores fresh keys, as an operator would; the chart only references them.
func (d *deployment) createSecret(t tb) {
	t.Helper()
	d.adminToken = randomHex(t, 32)
	d.edgeKey = randomHex(t, 32)
	encKey := make([]byte, 32)
	if _, err := rand.Read(encKey); err != nil {
		t.Fatalf("%v", err)
	}
	envFile := filepath.Join(d.tmp, "secret.env")
	body := fmt.Sprintf("admin-token=%s\ninternal-key-edge=%s\ninternal-key-booking=%s\ninternal-key-integration=%s\ninternal-key-messaging=%s\nencryption-key=%s\n",
		d.adminToken, d.edgeKey, randomHex(t, 32), randomHex(t, 32), randomHex(t, 32), base64.StdEncoding.EncodeToString(encKey))
	if err := os.WriteFile(envFile, []byte(body), 0o600); err != nil {
		t.Fatalf("%v", err)
	}
	defer os.Remove(envFile)
	d.kubectl(t, "-n", namespace, "create", "secret", "generic", secretName, "--from-env-file="+envFile)
}

// installChart installs charts/vros with values-kind.yaml, waits for the rollout (the topic
// job runs first, as a pre-install hook), then runs `helm test`.
func (d *deployment) installChart(t tb) {
	t.Helper()
	args := []string{"upgrade", "--install", releaseName, repo.Chart,
		"--kubeconfig", d.kubeconfig, "--namespace", namespace,
		"-f", repo.KindValues,
		"--set", "image.registry=",
		"--set", "image.tag=" + d.imageTag,
		"--set", "secrets.existingSecret=" + secretName,
		"--set", "tests.image.repository=" + d.imageRepo + "/chart-test",
		"--wait", "--timeout", "10m"}
	for _, s := range services {
		if !slices.Contains(d.built, s) {
			args = append(args, "--set", valuesKey(s)+".enabled=false")
		}
	}
	for _, s := range d.built {
		args = append(args, "--set", valuesKey(s)+".image.repository="+d.imageRepo+"/"+s)
	}
	run(t, d.root, d.helm, args...)
	d.rolledOut(t)
	run(t, d.root, d.helm, "test", releaseName, "--kubeconfig", d.kubeconfig, "--namespace", namespace, "--logs", "--timeout", "5m")
}

// helmUpgrade upgrades the release with its current values plus args (--set ...), as an
// operator changes one setting, and waits for the rollout. Every upgrade also runs the
// chart's topic Job again (a pre-upgrade hook).
func (d *deployment) helmUpgrade(t tb, args ...string) {
	t.Helper()
	all := append([]string{"upgrade", releaseName, repo.Chart,
		"--kubeconfig", d.kubeconfig, "--namespace", namespace,
		"--reuse-values", "--wait", "--timeout", "10m"}, args...)
	run(t, d.root, d.helm, all...)
	d.rolledOut(t)
}

// rolledOut waits until every deployed service's Deployment has finished its rollout.
func (d *deployment) rolledOut(t tb) {
	t.Helper()
	for _, s := range d.built {
		d.kubectl(t, "-n", namespace, "rollout", "status", "deployment/"+deploymentName(s), "--timeout=5m")
	}
}

// deploymentName is the Deployment of a service: <fullname>-<component>, and the release
// "vros" is the full name (vros.componentName in _helpers.tpl).
func deploymentName(service string) string { return releaseName + "-" + service }

// valuesKey is a service's block in values.yaml: property-svc -> propertySvc.
func valuesKey(service string) string { return strings.ReplaceAll(service, "-svc", "Svc") }

// componentSelector selects a service's pods by the chart's selector labels
// (vros.selectorLabels in _helpers.tpl; the release is vros, the chart name vros).
func componentSelector(service string) string {
	return "app.kubernetes.io/name=vros,app.kubernetes.io/instance=" + releaseName + ",app.kubernetes.io/component=" + service
}

// podInfo is what the scenarios need of a pod.
type podInfo struct {
	name, uid   string
	images      []string
	ready       bool
	terminating bool
	// httpPort is the container port named http (the service's port in values.yaml),
	// internalPort the one named internal (/healthz, /readyz, /metrics).
	httpPort, internalPort int
}

func podInfoOf(p corev1.Pod) podInfo {
	out := podInfo{name: p.Name, uid: string(p.UID), terminating: p.DeletionTimestamp != nil}
	for _, c := range p.Spec.Containers {
		out.images = append(out.images, c.Image)
		for _, port := range c.Ports {
			switch port.Name {
			case "http":
				out.httpPort = int(port.ContainerPort)
			case "internal":
				out.internalPort = int(port.ContainerPort)
			}
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			out.ready = true
		}
	}
	return out
}

// pods lists the pods matching a label selector. Safe from any goroutine.
func (d *deployment) pods(selector string) ([]podInfo, error) {
	out, err := d.kubectlStdout("-n", namespace, "get", "pods", "-l", selector, "-o", "json")
	if err != nil {
		return nil, err
	}
	var list corev1.PodList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, fmt.Errorf("decoding the pod list: %w", err)
	}
	var pods []podInfo
	for _, p := range list.Items {
		pods = append(pods, podInfoOf(p))
	}
	return pods, nil
}

// pod reads one pod by name. Safe from any goroutine.
func (d *deployment) pod(name string) (podInfo, error) {
	out, err := d.kubectlStdout("-n", namespace, "get", "pod", name, "-o", "json")
	if err != nil {
		return podInfo{}, err
	}
	var p corev1.Pod
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		return podInfo{}, fmt.Errorf("decoding pod %s: %w", name, err)
	}
	return podInfoOf(p), nil
}

// servingPods are a service's pods that are Ready and not being deleted.
func (d *deployment) servingPods(service string) ([]podInfo, error) {
	all, err := d.pods(componentSelector(service))
	if err != nil {
		return nil, err
	}
	var out []podInfo
	for _, p := range all {
		if p.ready && !p.terminating {
			out = append(out, p)
		}
	}
	return out, nil
}

// waitServingPods waits until a service has exactly n serving pods and no other pod (a
// scale-up still starting, a replaced pod still terminating), and returns them.
func (d *deployment) waitServingPods(t tb, service string, n int, within time.Duration) []podInfo {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		all, err := d.pods(componentSelector(service))
		var serving []podInfo
		for _, p := range all {
			if p.ready && !p.terminating {
				serving = append(serving, p)
			}
		}
		if err == nil && len(serving) == n && len(all) == n {
			return serving
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: want %d ready pods and no other within %s; have %d ready of %d (err %v)", service, n, within, len(serving), len(all), err)
		}
		time.Sleep(2 * time.Second)
	}
}

// portForward forwards a free local port to a pod's port with kubectl port-forward, until
// the test ends, and returns the local base URL. The traffic enters the pod's own network
// namespace, so neither the Service nor the NetworkPolicies are in the way: it reaches that
// one replica.
func (d *deployment) portForward(t *testing.T, pod string, port int) string {
	t.Helper()
	local := freePort(t)
	cmd := exec.Command("kubectl", "--kubeconfig", d.kubeconfig, "-n", namespace, "port-forward",
		"--address", "127.0.0.1", "pod/"+pod, fmt.Sprintf("%d:%d", local, port))
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("kubectl port-forward %s: %v", pod, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", local)
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return "http://" + addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("port-forward to %s:%d never listened on %s: %s", pod, port, addr, out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// kafkaTopics lists the dev broker's topics with the CLI inside its pod. The CLI gets a
// small heap of its own: it would otherwise inherit the broker's KAFKA_HEAP_OPTS and share
// the container's 1 GiB limit with it.
func (d *deployment) kafkaTopics() ([]string, error) {
	out, err := d.kubectlStdout("-n", namespace, "exec", kafkaPod, "-c", "kafka", "--", "sh", "-c",
		`KAFKA_HEAP_OPTS="-Xms32m -Xmx128m" LOG_DIR=/tmp/kafka-cli-logs /opt/kafka/bin/kafka-topics.sh --bootstrap-server localhost:9092 --list`)
	if err != nil {
		return nil, err
	}
	var topics []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			topics = append(topics, l)
		}
	}
	return topics, nil
}

// eventTopics are the topics the chart's Job creates (kafka-topics-job.yaml).
var eventTopics = []string{"vros.property.v1", "vros.booking.v1", "vros.integration.v1"}

// dumpDiagnostics prints what one needs to understand a failed deployment.
func (d *deployment) dumpDiagnostics(t tb) {
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

func (d *deployment) kubectl(t tb, args ...string) string {
	t.Helper()
	out, err := d.kubectlOutput(args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// kubectlOutput runs kubectl and returns stdout and stderr together.
func (d *deployment) kubectlOutput(args ...string) (string, error) {
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", d.kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// kubectlStdout runs kubectl for output to parse: stdout alone, stderr in the error.
func (d *deployment) kubectlStdout(args ...string) (string, error) {
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", d.kubeconfig}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// run executes a command in dir, failing the test with its output.
func run(t tb, dir, name string, args ...string) {
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

// lockedBuffer is a bytes.Buffer a running command writes to while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func freePort(t tb) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func randomHex(t tb, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("%v", err)
	}
	return hex.EncodeToString(b)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
