package chartcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/vros/vros/k8s/internal/repo"
)

// devManifests decodes k8s/dev/*.yaml strictly, like the chart's output.
func devManifests(t *testing.T, f fixture) []Manifest {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(f.root, repo.DevManifestDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", repo.DevManifestDir, err)
	}
	var all []Manifest
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := f.decoder.Decode(raw, filepath.Base(file))
		if err != nil {
			t.Fatalf("strict decoding: %v", err)
		}
		all = append(all, ms...)
	}
	return all
}

// TestDevManifests needs no helm: the kind config and the dev MongoDB/Kafka manifests are
// decoded strictly and hold what the chart's kind values rely on.
func TestDevManifests(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	dec, err := NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{root: root, decoder: dec}

	cfg, err := repo.LoadKindConfig(filepath.Join(root, repo.KindConfig))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Nodes) == 0 || !strings.Contains(cfg.Nodes[0].Image, "@sha256:") {
		t.Errorf("kind node image must be pinned by digest")
	}
	images := airgapImages(t, root)
	air, err := repo.LoadKindConfig(filepath.Join(root, repo.KindAirgapConfig))
	if err != nil {
		t.Fatal(err)
	}
	// A locally built image has no registry digest; kind would try to pull a digest reference.
	if len(air.Nodes) != 1 || air.Nodes[0].Image != images["AIRGAP_NODE_IMAGE"] {
		t.Errorf("%s: node image must be %q (build.sh env), without digest", repo.KindAirgapConfig, images["AIRGAP_NODE_IMAGE"])
	}
	if !air.Networking.DisableDefaultCNI {
		t.Errorf("%s: kindnetd cannot be built here; the default CNI must be off (the node image has a bridge)", repo.KindAirgapConfig)
	}
	if !strings.Contains(strings.Join(air.KubeadmConfigPatches, "\n"), "failCgroupV1: false") {
		t.Errorf("%s: the kubelet must accept cgroup v1 hosts (failCgroupV1: false)", repo.KindAirgapConfig)
	}
	if len(air.Nodes) == 1 && len(cfg.Nodes) == 1 && !slices.Equal(air.Nodes[0].ExtraPortMappings, cfg.Nodes[0].ExtraPortMappings) {
		t.Errorf("%s and %s publish different ports", repo.KindAirgapConfig, repo.KindConfig)
	}

	sets := map[string]*appsv1.StatefulSet{}
	services := map[string]*corev1.Service{}
	for _, m := range devManifests(t, f) {
		switch o := m.Object.(type) {
		case *appsv1.StatefulSet:
			sets[o.Name] = o
		case *corev1.Service:
			services[o.Name] = o
		default:
			t.Errorf("%s: unexpected %T in the dev manifests", m.Source, o)
		}
	}
	for name, port := range map[string]int32{"mongodb": mongoPort, "kafka": kafkaPort} {
		s, svc := sets[name], services[name]
		if s == nil || svc == nil {
			t.Fatalf("k8s/dev must define StatefulSet and Service %s", name)
		}
		if *s.Spec.Replicas != 1 {
			t.Errorf("%s: single node expected", name)
		}
		if svc.Spec.Ports[0].Port != port {
			t.Errorf("Service %s port %d, want %d", name, svc.Spec.Ports[0].Port, port)
		}
		if !selects(t, s.Spec.Selector, s.Spec.Template.Labels) || !selects(t, metaSelector(svc.Spec.Selector), s.Spec.Template.Labels) {
			t.Errorf("%s: selectors do not match the pod labels", name)
		}
		spec := s.Spec.Template.Spec
		// The database images write next to their binaries, so only the root filesystem may stay writable.
		checkPodHardened(t, "StatefulSet/"+name, spec, false)
		if spec.EnableServiceLinks == nil || *spec.EnableServiceLinks {
			t.Errorf("%s: enableServiceLinks must be false (KAFKA_PORT=tcp://... breaks the Kafka image)", name)
		}
		if spec.Containers[0].ReadinessProbe == nil {
			t.Errorf("%s: no readiness probe; kind-deploy waits on it", name)
		}
	}
	// The images are built here (make airgap): the manifests name exactly what build.sh tags.
	for name, want := range map[string]string{"mongodb": images["AIRGAP_FERRETDB_IMAGE"], "kafka": images["AIRGAP_KAFKA_IMAGE"]} {
		for _, c := range sets[name].Spec.Template.Spec.Containers {
			if want == "" || c.Image != want {
				t.Errorf("%s container %s: image %q, want %q (k8s/airgap/build.sh env)", name, c.Name, c.Image, want)
			}
		}
	}
	kafkaEnv := map[string]string{}
	for _, e := range sets["kafka"].Spec.Template.Spec.Containers[0].Env {
		kafkaEnv[e.Name] = e.Value
	}
	for k, want := range map[string]string{
		"KAFKA_PROCESS_ROLES":             "broker,controller",
		"KAFKA_AUTO_CREATE_TOPICS_ENABLE": "false",
		"KAFKA_ADVERTISED_LISTENERS":      "PLAINTEXT://kafka:9092",
	} {
		if kafkaEnv[k] != want {
			t.Errorf("kafka %s=%q, want %q", k, kafkaEnv[k], want)
		}
	}
}

// airgapImages returns the image names k8s/airgap/build.sh gives (build.sh env: no Docker).
func airgapImages(t *testing.T, root string) map[string]string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join(root, repo.AirgapBuild), "env").Output()
	if err != nil {
		t.Fatalf("%s env: %v", repo.AirgapBuild, err)
	}
	images := map[string]string{}
	for _, line := range strings.Fields(string(out)) {
		k, v, _ := strings.Cut(line, "=")
		images[k] = v
	}
	return images
}
