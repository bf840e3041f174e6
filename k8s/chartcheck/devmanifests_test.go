package chartcheck

import (
	"os"
	"path/filepath"
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
	mongo := strings.Join(sets["mongodb"].Spec.Template.Spec.Containers[0].Command, " ")
	for _, want := range []string{"--replSet rs0", "rs.initiate", "mongodb-0.mongodb:27017"} {
		if !strings.Contains(mongo, want) {
			t.Errorf("mongodb command lacks %q", want)
		}
	}
	if !services["mongodb"].Spec.PublishNotReadyAddresses || services["mongodb"].Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("mongodb Service must be headless and publish not-ready addresses (the member resolves itself before it is primary)")
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
