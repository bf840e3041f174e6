package chartcheck

import (
	"cmp"
	"fmt"
	"k8s.io/apimachinery/pkg/api/meta"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/vros/vros/k8s/internal/repo"
)

// component is what the chart must do for one service: the fixed conventions the services
// are written to.
type component struct {
	name    string
	port    int32
	addrEnv string
	// secretEnv are the variables read from the referenced Secret, and only those.
	secretEnv []string
}

// Each pod gets only the internal keys it signs with or accepts (docs/internal-auth.md): a
// compromised integration-svc must hold no key property-svc accepts, nor edge's.
var components = []component{
	{"edge", 8080, "VROS_EDGE_ADDR", []string{"VROS_EDGE_ADMIN_TOKEN", "VROS_INTERNAL_KEY_EDGE"}},
	{"property-svc", 8081, "VROS_PROPERTY_ADDR", []string{"VROS_INTERNAL_KEY_EDGE", "VROS_INTERNAL_KEY_BOOKING", "VROS_ENCRYPTION_KEY"}},
	{"booking-svc", 8082, "VROS_BOOKING_ADDR", []string{"VROS_INTERNAL_KEY_EDGE", "VROS_INTERNAL_KEY_INTEGRATION", "VROS_INTERNAL_KEY_MESSAGING", "VROS_INTERNAL_KEY_BOOKING", "VROS_ENCRYPTION_KEY"}},
	{"catalog-svc", 8083, "VROS_CATALOG_ADDR", []string{"VROS_INTERNAL_KEY_EDGE"}},
	{"integration-svc", 8084, "VROS_INTEGRATION_ADDR", []string{"VROS_INTERNAL_KEY_EDGE", "VROS_INTERNAL_KEY_INTEGRATION", "VROS_ENCRYPTION_KEY"}},
	{"messaging-svc", 8085, "VROS_MESSAGING_ADDR", []string{"VROS_INTERNAL_KEY_EDGE", "VROS_INTERNAL_KEY_MESSAGING", "VROS_ENCRYPTION_KEY"}},
}

var secretEnvNames = []string{"VROS_EDGE_ADMIN_TOKEN", "VROS_INTERNAL_KEY_EDGE", "VROS_INTERNAL_KEY_BOOKING", "VROS_INTERNAL_KEY_INTEGRATION", "VROS_INTERNAL_KEY_MESSAGING", "VROS_ENCRYPTION_KEY",
	"VROS_MESSAGING_SMTP_PASSWORD"}

const (
	// internalPort serves /healthz, /readyz and /metrics (VROS_INTERNAL_ADDR): probes and
	// Prometheus, never the Ingress.
	internalPort int32 = 9090
	mongoPort    int32 = 27017
	kafkaPort    int32 = 9092
	dnsPort      int32 = 53
)

// renderCase is one set of values and what the rendered chart must then contain.
type renderCase struct {
	name        string
	args        []string
	kubeVersion string // empty: the kind node's version

	enabled           []string // components deployed
	autoscaled        bool     // HPA for every component (else fixed replicas)
	pdb               []string // components with a PodDisruptionBudget
	networkPolicies   bool
	ingress           bool
	topicsJob         bool
	partitions        string
	replicationFactor string
	edgeNodePort      int32
	pullPolicy        corev1.PullPolicy
	imagePrefix       string // image = imagePrefix + "vros/<component>:" + imageTag
	imageTag          string
	mongoFromSecret   bool
	edgePublicURL     string // VROS_EDGE_PUBLIC_URL, always set
	otlp              bool
	serviceMonitors   bool
	prometheusRule    bool // the PrometheusRule of charts/vros/rules/vros-rules.yaml
	grafanaDashboard  bool // the dashboard ConfigMap of charts/vros/dashboards/vros.json
	metricsFrom       bool // networkPolicy.metricsFrom admits the "monitoring" namespace
	edgeFrom          bool // networkPolicy.edgeFrom restricts who reaches edge
	// trustedProxies is VROS_EDGE_TRUSTED_PROXIES; empty: not set, edge trusts no proxy.
	trustedProxies string
	// engineLimits are edge's VROS_EDGE_ENGINE_* and checkoutWindow booking-svc's
	// VROS_BOOKING_CHECKOUT_WINDOW; nil and "": the documented defaults (docs/limits.md, "The
	// booking engine"; docs/booking-engine.md).
	engineLimits   map[string]string
	checkoutWindow string
	// egressPeerLabel, when set, is the app.kubernetes.io/name every MongoDB and Kafka egress
	// peer must select (the dev pods of k8s/dev in kind).
	egressPeerLabel bool
	// integrationPrivate: networkPolicy.integrationTargets.allowPrivate, integration-svc may
	// reach any address on the receivers' ports.
	integrationPrivate bool
	// messagingSMTP: messagingSvc.smtp names the operator's mail server, its password in the
	// Secret, and messagingSvc.from the operator's sender.
	messagingSMTP bool
}

var all = []string{"edge", "property-svc", "booking-svc", "catalog-svc", "integration-svc", "messaging-svc"}

// defaultEngineLimits are the booking engine's limits as docs/limits.md documents them (edge's
// own defaults): the chart's defaults must be the same.
var defaultEngineLimits = map[string]string{
	"VROS_EDGE_ENGINE_RATE_RPS": "50", "VROS_EDGE_ENGINE_RATE_BURST": "200",
	"VROS_EDGE_ENGINE_ADDRESS_RPS": "5", "VROS_EDGE_ENGINE_ADDRESS_BURST": "60",
	"VROS_EDGE_ENGINE_ADDRESS_CHECKOUTS": "6", "VROS_EDGE_ENGINE_CHECKOUT_PERIOD": "1h",
}

var cases = []renderCase{
	{
		// The defaults plus the one value they lack: a public host (TestEdgePublicURLRequired).
		name: "default", args: []string{"--set", "ingress.host=vros.example.com"}, enabled: all, autoscaled: true, pdb: all,
		networkPolicies: true, ingress: true, topicsJob: true, partitions: "6", replicationFactor: "3",
		pullPolicy: corev1.PullIfNotPresent, imageTag: "0.1.0", edgePublicURL: "http://vros.example.com",
	},
	{
		name: "default-min-kube", kubeVersion: minKubeVersion, args: []string{"--set", "edge.publicURL=https://vros.example.com"},
		enabled: all, autoscaled: true, pdb: all, networkPolicies: true, ingress: true, topicsJob: true, partitions: "6",
		replicationFactor: "3", pullPolicy: corev1.PullIfNotPresent, imageTag: "0.1.0", edgePublicURL: "https://vros.example.com",
	},
	{
		name: "kind", args: []string{"-f", repo.KindValues}, enabled: all, autoscaled: true, pdb: all,
		networkPolicies: true, topicsJob: true, partitions: "6", replicationFactor: "1",
		edgeNodePort: 30080, pullPolicy: corev1.PullNever, imageTag: "0.1.0", egressPeerLabel: true,
		edgePublicURL: "http://127.0.0.1:30080",
	},
	{
		name: "full", args: []string{"-f", "k8s/chartcheck/testdata/values-full.yaml"}, enabled: all,
		autoscaled: true, pdb: all, networkPolicies: true, ingress: true, topicsJob: true,
		partitions: "12", replicationFactor: "3", pullPolicy: corev1.PullIfNotPresent,
		imagePrefix: "ghcr.io/acme/", imageTag: "1.2.3", mongoFromSecret: true, otlp: true,
		edgePublicURL:   "https://api.example.com",
		serviceMonitors: true, metricsFrom: true, edgeFrom: true, integrationPrivate: true, trustedProxies: "10.244.0.0/16",
		messagingSMTP:  true,
		prometheusRule: true, grafanaDashboard: true,
		engineLimits: map[string]string{
			"VROS_EDGE_ENGINE_RATE_RPS": "100", "VROS_EDGE_ENGINE_RATE_BURST": "400",
			"VROS_EDGE_ENGINE_ADDRESS_RPS": "2.5", "VROS_EDGE_ENGINE_ADDRESS_BURST": "30",
			"VROS_EDGE_ENGINE_ADDRESS_CHECKOUTS": "0", "VROS_EDGE_ENGINE_CHECKOUT_PERIOD": "30m",
		},
		checkoutWindow: "20m",
	},
	{
		name: "minimal", args: []string{"-f", "k8s/chartcheck/testdata/values-minimal.yaml"},
		enabled: []string{"edge", "property-svc"}, pdb: []string{"property-svc"},
		pullPolicy: corev1.PullIfNotPresent, imageTag: "0.1.0", edgePublicURL: "https://vros.example.net",
	},
}

func TestHelmLintStrict(t *testing.T) {
	f := newFixture(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"lint", repo.Chart, "--strict", "--namespace", namespace,
				"--kube-version", cmp.Or(c.kubeVersion, f.kubeVersion)}, c.args...)
			out, err := f.helm.Run(args...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), "0 chart(s) failed") {
				t.Fatalf("helm lint:\n%s", out)
			}
		})
	}
}

func TestRenderedChart(t *testing.T) {
	f := newFixture(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := index(f.render(t, cmp.Or(c.kubeVersion, f.kubeVersion), c.args...))
			t.Run("no secret material", func(t *testing.T) { checkNoSecrets(t, r) })
			t.Run("every pod hardened", func(t *testing.T) { checkPodsHardened(t, r) })
			t.Run("deployments", func(t *testing.T) { checkDeployments(t, c, r) })
			t.Run("services", func(t *testing.T) { checkServices(t, c, r) })
			t.Run("autoscaling and disruption budgets", func(t *testing.T) { checkScaling(t, c, r) })
			t.Run("network policies", func(t *testing.T) { checkNetworkPolicies(t, c, r) })
			t.Run("ingress", func(t *testing.T) { checkIngress(t, c, r) })
			t.Run("topics job", func(t *testing.T) { checkTopicsJob(t, c, r) })
			t.Run("helm test pod", func(t *testing.T) { checkTestPod(t, r) })
			t.Run("service monitors", func(t *testing.T) { checkServiceMonitors(t, c, r) })
			t.Run("prometheus rule", func(t *testing.T) { checkPrometheusRule(t, f, c, r) })
			t.Run("grafana dashboard", func(t *testing.T) { checkGrafanaDashboard(t, f, c, r) })
		})
	}
}

// TestSecretNameRequired: without a Secret to reference the chart refuses to render rather
// than start pods that can never get their keys.
func TestSecretNameRequired(t *testing.T) {
	f := newFixture(t)
	_, err := f.helm.Run("template", release, repo.Chart, "--kube-version", f.kubeVersion,
		"--set", "ingress.host=api.example.com", "--set", "secrets.existingSecret=")
	if err == nil || !strings.Contains(err.Error(), "secrets.existingSecret") {
		t.Fatalf("want a render error naming secrets.existingSecret, got %v", err)
	}
}

// TestEdgePublicURLRequired: with neither edge.publicURL nor an ingress host the chart
// refuses to render, rather than start an edge that issues no credentials; an explicit
// edge.publicURL wins over the ingress host.
func TestEdgePublicURLRequired(t *testing.T) {
	f := newFixture(t)
	for _, args := range [][]string{nil, {"--set", "ingress.enabled=false", "--set", "ingress.host=api.example.com"}} {
		_, err := f.helm.Run(append([]string{"template", release, repo.Chart, "--kube-version", f.kubeVersion}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "edge.publicURL") {
			t.Errorf("%v: want a render error naming edge.publicURL, got %v", args, err)
		}
	}
	r := index(f.render(t, f.kubeVersion, "--set", "ingress.host=api.example.com", "--set", "edge.publicURL=https://edge.example.com"))
	for _, e := range r.deployments[objName("edge")].Spec.Template.Spec.Containers[0].Env {
		if e.Name == "VROS_EDGE_PUBLIC_URL" && e.Value != "https://edge.example.com" {
			t.Errorf("VROS_EDGE_PUBLIC_URL = %q, want edge.publicURL", e.Value)
		}
	}
}

// rendered indexes the decoded objects by kind and name.
type rendered struct {
	all             []Manifest
	deployments     map[string]*appsv1.Deployment
	services        map[string]*corev1.Service
	hpas            map[string]*autoscalingv2.HorizontalPodAutoscaler
	pdbs            map[string]*policyv1.PodDisruptionBudget
	policies        map[string]*networkingv1.NetworkPolicy
	ingresses       []*networkingv1.Ingress
	jobs            []*batchv1.Job
	pods            []*corev1.Pod
	secrets         []*corev1.Secret
	serviceMonitors map[string]*monitoringv1.ServiceMonitor
	prometheusRules []*monitoringv1.PrometheusRule
	configMaps      []*corev1.ConfigMap
	// podLabels of each Deployment by component, to evaluate selectors against.
	podLabels map[string]labels.Set
}

func index(ms []Manifest) rendered {
	r := rendered{
		all:             ms,
		deployments:     map[string]*appsv1.Deployment{},
		services:        map[string]*corev1.Service{},
		hpas:            map[string]*autoscalingv2.HorizontalPodAutoscaler{},
		pdbs:            map[string]*policyv1.PodDisruptionBudget{},
		policies:        map[string]*networkingv1.NetworkPolicy{},
		serviceMonitors: map[string]*monitoringv1.ServiceMonitor{},
		podLabels:       map[string]labels.Set{},
	}
	for _, m := range ms {
		switch o := m.Object.(type) {
		case *appsv1.Deployment:
			r.deployments[o.Name] = o
			r.podLabels[o.Labels["app.kubernetes.io/component"]] = o.Spec.Template.Labels
		case *corev1.Service:
			r.services[o.Name] = o
		case *autoscalingv2.HorizontalPodAutoscaler:
			r.hpas[o.Name] = o
		case *policyv1.PodDisruptionBudget:
			r.pdbs[o.Name] = o
		case *networkingv1.NetworkPolicy:
			r.policies[o.Name] = o
		case *networkingv1.Ingress:
			r.ingresses = append(r.ingresses, o)
		case *batchv1.Job:
			r.jobs = append(r.jobs, o)
		case *corev1.Pod:
			r.pods = append(r.pods, o)
		case *corev1.Secret:
			r.secrets = append(r.secrets, o)
		case *monitoringv1.ServiceMonitor:
			r.serviceMonitors[o.Name] = o
		case *monitoringv1.PrometheusRule:
			r.prometheusRules = append(r.prometheusRules, o)
		case *corev1.ConfigMap:
			r.configMaps = append(r.configMaps, o)
		}
	}
	return r
}

func objName(component string) string { return release + "-" + component }

func componentOf(name string) (component, bool) {
	for _, c := range components {
		if c.name == name {
			return c, true
		}
	}
	return component{}, false
}

// selects reports whether sel matches the pod labels.
func selects(t *testing.T, sel *metav1.LabelSelector, pod labels.Set) bool {
	t.Helper()
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("selector %v: %v", sel, err)
	}
	return s.Matches(pod)
}

// selectedComponents lists the deployed components whose pods sel matches.
func (r rendered) selectedComponents(t *testing.T, sel *metav1.LabelSelector) []string {
	var out []string
	for name, l := range r.podLabels {
		if selects(t, sel, l) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func checkNoSecrets(t *testing.T, r rendered) {
	for _, s := range r.secrets {
		t.Errorf("Secret %s rendered: secrets must be referenced (secrets.existingSecret), never templated", s.Name)
	}
}

// podSpecs returns every pod the release creates: workloads, hook jobs and test pods.
func podSpecs(r rendered) map[string]corev1.PodSpec {
	specs := map[string]corev1.PodSpec{}
	for _, m := range r.all {
		switch o := m.Object.(type) {
		case *appsv1.Deployment:
			specs["Deployment/"+o.Name] = o.Spec.Template.Spec
		case *appsv1.StatefulSet:
			specs["StatefulSet/"+o.Name] = o.Spec.Template.Spec
		case *batchv1.Job:
			specs["Job/"+o.Name] = o.Spec.Template.Spec
		case *corev1.Pod:
			specs["Pod/"+o.Name] = o.Spec
		}
	}
	return specs
}

func checkPodsHardened(t *testing.T, r rendered) {
	specs := podSpecs(r)
	if len(specs) == 0 {
		t.Fatal("no pods rendered")
	}
	for name, spec := range specs {
		checkPodHardened(t, name, spec, true)
	}
}

// checkPodHardened: non-root, no privilege escalation, no capabilities, RuntimeDefault
// seccomp, resources; with readOnlyRoot also a read-only root filesystem.
func checkPodHardened(t *testing.T, name string, spec corev1.PodSpec, readOnlyRoot bool) {
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Errorf("%s: automountServiceAccountToken must be false", name)
	}
	psc := spec.SecurityContext
	if psc == nil {
		t.Errorf("%s: no pod securityContext", name)
		psc = &corev1.PodSecurityContext{}
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		t.Errorf("%s: uses host namespaces", name)
	}
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		where := name + " container " + c.Name
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("%s: no securityContext", where)
			continue
		}
		nonRoot := psc.RunAsNonRoot
		if sc.RunAsNonRoot != nil {
			nonRoot = sc.RunAsNonRoot
		}
		if nonRoot == nil || !*nonRoot {
			t.Errorf("%s: runAsNonRoot must be true", where)
		}
		if uid := cmp.Or(ptrVal(sc.RunAsUser), ptrVal(psc.RunAsUser)); uid == 0 {
			t.Errorf("%s: needs a numeric non-zero runAsUser", where)
		}
		seccomp := psc.SeccompProfile
		if sc.SeccompProfile != nil {
			seccomp = sc.SeccompProfile
		}
		if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: seccompProfile must be RuntimeDefault, got %v", where, seccomp)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: allowPrivilegeEscalation must be false", where)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("%s: privileged", where)
		}
		if readOnlyRoot && (sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem) {
			t.Errorf("%s: readOnlyRootFilesystem must be true", where)
		}
		if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
			t.Errorf("%s: capabilities must drop ALL and add none, got %v", where, sc.Capabilities)
		}
		for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := c.Resources.Requests[res]; !ok || q.IsZero() {
				t.Errorf("%s: no %s request", where, res)
			}
			if q, ok := c.Resources.Limits[res]; !ok || q.IsZero() {
				t.Errorf("%s: no %s limit", where, res)
			}
		}
		if strings.HasSuffix(c.Image, ":latest") || !strings.Contains(c.Image[strings.LastIndex(c.Image, "/")+1:], ":") {
			t.Errorf("%s: image %q must carry a fixed tag", where, c.Image)
		}
	}
}

func checkDeployments(t *testing.T, c renderCase, r rendered) {
	var got []string
	for _, d := range r.deployments {
		got = append(got, d.Labels["app.kubernetes.io/component"])
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(c.enabled))
	if !slices.Equal(got, want) {
		t.Fatalf("deployments for %v, want %v", got, want)
	}
	for _, name := range c.enabled {
		comp, _ := componentOf(name)
		d := r.deployments[objName(name)]
		if d == nil {
			t.Errorf("no Deployment %s", objName(name))
			continue
		}
		checkDeployment(t, c, r, comp, d)
	}
}

func checkDeployment(t *testing.T, c renderCase, r rendered, comp component, d *appsv1.Deployment) {
	where := "Deployment " + d.Name
	if !selects(t, d.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("%s: selector does not match its pod labels", where)
	}
	if c.autoscaled && d.Spec.Replicas != nil {
		t.Errorf("%s: replicas set although an HPA owns the count", where)
	}
	if !c.autoscaled && d.Spec.Replicas == nil {
		t.Errorf("%s: replicas missing without an HPA", where)
	}
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%s: want one container, got %d", where, len(d.Spec.Template.Spec.Containers))
	}
	ctr := d.Spec.Template.Spec.Containers[0]
	wantImage := c.imagePrefix + "vros/" + comp.name + ":" + c.imageTag
	if ctr.Image != wantImage || ctr.ImagePullPolicy != c.pullPolicy {
		t.Errorf("%s: image %s (%s), want %s (%s)", where, ctr.Image, ctr.ImagePullPolicy, wantImage, c.pullPolicy)
	}

	// Ports and probes: the API on "http"; liveness on /healthz, readiness on /readyz on
	// "internal", the listener the Ingress never reaches.
	if len(ctr.Ports) != 2 || resolvePort(ctr, "http") != comp.port || resolvePort(ctr, "internal") != internalPort {
		t.Errorf("%s: ports %v, want http %d and internal %d", where, ctr.Ports, comp.port, internalPort)
	}
	probes := map[string]struct {
		p    *corev1.Probe
		path string
	}{
		"liveness":  {ctr.LivenessProbe, "/healthz"},
		"readiness": {ctr.ReadinessProbe, "/readyz"},
		"startup":   {ctr.StartupProbe, "/healthz"},
	}
	for kind, pr := range probes {
		if pr.p == nil || pr.p.HTTPGet == nil {
			t.Errorf("%s: no HTTP %s probe", where, kind)
			continue
		}
		if pr.p.HTTPGet.Path != pr.path {
			t.Errorf("%s: %s probe on %s, want %s", where, kind, pr.p.HTTPGet.Path, pr.path)
		}
		if port := resolvePort(ctr, pr.p.HTTPGet.Port.String()); port != internalPort {
			t.Errorf("%s: %s probe on port %s (%d), want the internal port %d", where, kind, pr.p.HTTPGet.Port.String(), port, internalPort)
		}
	}

	env := map[string]corev1.EnvVar{}
	for _, e := range ctr.Env {
		if _, dup := env[e.Name]; dup {
			t.Errorf("%s: env %s set twice", where, e.Name)
		}
		env[e.Name] = e
	}
	// The Go runtime reads the CPU limit itself (Go 1.25+); its memory limit is 90 % of the
	// container's.
	if _, ok := env["GOMAXPROCS"]; ok {
		t.Errorf("%s: GOMAXPROCS set; the runtime follows the CPU limit by itself", where)
	}
	checkGoMemLimit(t, where, ctr, env["GOMEMLIMIT"])
	// A rolling update loses no request: the pod drains (Connection: close, /readyz 503)
	// before it stops accepting, and the grace period covers the drain and the 10 s the
	// service then gives requests in flight.
	if drain, err := time.ParseDuration(env["VROS_SHUTDOWN_DRAIN"].Value); err != nil || drain <= 0 {
		t.Errorf("%s: VROS_SHUTDOWN_DRAIN %q, want a positive duration", where, env["VROS_SHUTDOWN_DRAIN"].Value)
	} else if grace := ptrVal(d.Spec.Template.Spec.TerminationGracePeriodSeconds); time.Duration(grace)*time.Second < drain+10*time.Second {
		t.Errorf("%s: terminationGracePeriodSeconds %d < drain %s + 10 s", where, grace, drain)
	}
	// Plain settings.
	plain := map[string]string{
		comp.addrEnv:          fmt.Sprintf(":%d", comp.port),
		"VROS_INTERNAL_ADDR":  fmt.Sprintf(":%d", internalPort),
		"GOMEMLIMIT":          "",
		"OTEL_SERVICE_NAME":   comp.name,
		"VROS_KAFKA_BROKERS":  "",
		"VROS_LOG_LEVEL":      "",
		"VROS_SHUTDOWN_DRAIN": "",
	}
	if comp.name == "edge" {
		// edge registers the services whose URL is set and its /readyz pings each one, so a
		// disabled service must have no URL at all.
		for _, backend := range []string{"property-svc", "booking-svc", "catalog-svc", "integration-svc", "messaging-svc"} {
			bc, _ := componentOf(backend)
			envName := "VROS_EDGE_" + strings.ToUpper(strings.TrimSuffix(backend, "-svc")) + "_URL"
			if slices.Contains(c.enabled, backend) {
				plain[envName] = fmt.Sprintf("http://%s:%d", objName(backend), bc.port)
			} else if _, ok := env[envName]; ok {
				t.Errorf("%s: %s set although %s is disabled", where, envName, backend)
			}
		}
		plain["VROS_EDGE_RATE_LIMIT_RPS"] = ""
		plain["VROS_EDGE_RATE_LIMIT_BURST"] = ""
		plain["VROS_EDGE_AUTH_FAILURE_RPS"] = ""
		plain["VROS_EDGE_AUTH_FAILURE_BURST"] = ""
		plain["VROS_EDGE_ACCOUNT_CONCURRENCY"] = ""
		limits := c.engineLimits
		if limits == nil {
			limits = defaultEngineLimits
		}
		for name, v := range limits {
			plain[name] = v
		}
		// X-Forwarded-For is believed only from the proxies the values name: by default none,
		// or any client in a trusted range (every pod, every private address when the chart
		// trusted the RFC 1918 ranges) could name a new address on every request and never
		// be throttled.
		if c.trustedProxies != "" {
			plain["VROS_EDGE_TRUSTED_PROXIES"] = c.trustedProxies
		} else if e, ok := env["VROS_EDGE_TRUSTED_PROXIES"]; ok {
			t.Errorf("%s: VROS_EDGE_TRUSTED_PROXIES=%q although the values name no proxy: edge must trust none by default", where, e.Value)
		}
		// edge issues no credentials without it: every rendering sets it.
		plain["VROS_EDGE_PUBLIC_URL"] = c.edgePublicURL
	}
	if comp.name == "booking-svc" {
		plain["VROS_BOOKING_CHECKOUT_WINDOW"] = cmp.Or(c.checkoutWindow, "15m")
		// A live account's card charge reads the property's Stripe key from property-svc.
		if pc, _ := componentOf("property-svc"); slices.Contains(c.enabled, "property-svc") {
			plain["VROS_BOOKING_PROPERTY_URL"] = fmt.Sprintf("http://%s:%d", objName("property-svc"), pc.port)
		}
	}
	if comp.name == "integration-svc" {
		// A booking webhook's booking is read from booking-svc; imported feeds are written there.
		if bc, _ := componentOf("booking-svc"); slices.Contains(c.enabled, "booking-svc") {
			plain["VROS_INTEGRATION_BOOKING_URL"] = fmt.Sprintf("http://%s:%d", objName("booking-svc"), bc.port)
		}
	}
	if comp.name == "messaging-svc" {
		// A message's booking is read from booking-svc when it is composed.
		if bc, _ := componentOf("booking-svc"); slices.Contains(c.enabled, "booking-svc") {
			plain["VROS_MESSAGING_BOOKING_URL"] = fmt.Sprintf("http://%s:%d", objName("booking-svc"), bc.port)
		}
		plain["VROS_MESSAGING_RATE"] = "60"
		if c.messagingSMTP {
			plain["VROS_MESSAGING_SMTP_HOST"] = "smtp.example.com"
			plain["VROS_MESSAGING_SMTP_PORT"] = "587"
			plain["VROS_MESSAGING_SMTP_TLS"] = "starttls"
			plain["VROS_MESSAGING_SMTP_USERNAME"] = "vros"
			plain["VROS_MESSAGING_FROM"] = "Acme Stays <stays@example.com>"
		} else {
			for _, name := range []string{"VROS_MESSAGING_SMTP_HOST", "VROS_MESSAGING_FROM", "VROS_MESSAGING_DOMAIN"} {
				if _, ok := env[name]; ok {
					t.Errorf("%s: %s set although the values name none", where, name)
				}
			}
		}
	}
	if c.otlp {
		plain["OTEL_EXPORTER_OTLP_ENDPOINT"] = ""
	} else if _, ok := env["OTEL_EXPORTER_OTLP_ENDPOINT"]; ok {
		t.Errorf("%s: OTEL_EXPORTER_OTLP_ENDPOINT set although otel.endpoint is empty", where)
	}
	if !c.mongoFromSecret {
		plain["VROS_MONGO_URI"] = ""
	}
	for name, want := range plain {
		e, ok := env[name]
		switch {
		case !ok || e.ValueFrom != nil || e.Value == "":
			t.Errorf("%s: %s must be a plain non-empty value, got %+v", where, name, e)
		case want != "" && e.Value != want:
			t.Errorf("%s: %s=%q, want %q", where, name, e.Value, want)
		}
	}
	// Secrets: referenced, each service gets exactly the keys it needs.
	wantSecret := slices.Clone(comp.secretEnv)
	if comp.name == "messaging-svc" && c.messagingSMTP {
		wantSecret = append(wantSecret, "VROS_MESSAGING_SMTP_PASSWORD")
	}
	if c.mongoFromSecret {
		wantSecret = append(wantSecret, "VROS_MONGO_URI")
	}
	for _, name := range append(slices.Clone(secretEnvNames), "VROS_MONGO_URI") {
		e, present := env[name]
		want := slices.Contains(wantSecret, name)
		switch {
		case want && (!present || e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil):
			t.Errorf("%s: %s must come from a secretKeyRef, got %+v", where, name, e)
		case want && e.ValueFrom.SecretKeyRef.Name == "":
			t.Errorf("%s: %s references a Secret without a name", where, name)
		case !want && present && slices.Contains(secretEnvNames, name):
			t.Errorf("%s: %s given to a service that does not need it", where, name)
		}
	}
	// Only the variables the services read (plus whatever extraEnv adds, none here).
	for name := range env {
		_, isPlain := plain[name]
		if !isPlain && !slices.Contains(wantSecret, name) {
			t.Errorf("%s: unexpected env %s", where, name)
		}
	}
	// The read-only root filesystem needs a writable /tmp.
	if !slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/tmp" }) {
		t.Errorf("%s: no /tmp mount", where)
	}
}

// checkGoMemLimit: GOMEMLIMIT is a plain byte count, 90 % of the memory limit (rounded down;
// the template computes in floating point, so one byte either way is allowed).
func checkGoMemLimit(t *testing.T, where string, ctr corev1.Container, e corev1.EnvVar) {
	t.Helper()
	limit := ctr.Resources.Limits.Memory().Value()
	got, err := strconv.ParseInt(e.Value, 10, 64)
	if want := limit * 9 / 10; err != nil || e.ValueFrom != nil || got < want-1 || got > want+1 {
		t.Errorf("%s: GOMEMLIMIT %+v, want %d bytes (90 %% of the %d-byte limit)", where, e, want, limit)
	}
}

// resolvePort maps a named or numeric port to the container's port number.
func resolvePort(ctr corev1.Container, port string) int32 {
	for _, p := range ctr.Ports {
		if p.Name == port || fmt.Sprint(p.ContainerPort) == port {
			return p.ContainerPort
		}
	}
	return -1
}

func checkServices(t *testing.T, c renderCase, r rendered) {
	if len(r.services) != len(c.enabled) {
		t.Errorf("%d Services, want %d", len(r.services), len(c.enabled))
	}
	for _, name := range c.enabled {
		comp, _ := componentOf(name)
		s := r.services[objName(name)]
		if s == nil {
			t.Errorf("no Service %s", objName(name))
			continue
		}
		if got := r.selectedComponents(t, metaSelector(s.Spec.Selector)); !slices.Equal(got, []string{name}) {
			t.Errorf("Service %s selects %v, want only %s", s.Name, got, name)
		}
		// The API under "http", the internal listener under "internal" (for the
		// ServiceMonitor and operators; the Ingress routes only to "http").
		if len(s.Spec.Ports) != 2 || s.Spec.Ports[0].Name != "http" || s.Spec.Ports[0].Port != comp.port || s.Spec.Ports[0].TargetPort.String() != "http" ||
			s.Spec.Ports[1].Name != "internal" || s.Spec.Ports[1].Port != internalPort || s.Spec.Ports[1].TargetPort.String() != "internal" {
			t.Errorf("Service %s ports %v, want http %d -> http and internal %d -> internal", s.Name, s.Spec.Ports, comp.port, internalPort)
		}
		wantType, wantNodePort := corev1.ServiceTypeClusterIP, int32(0)
		if name == "edge" && c.edgeNodePort != 0 {
			wantType, wantNodePort = corev1.ServiceTypeNodePort, c.edgeNodePort
		}
		if s.Spec.Type != wantType || s.Spec.Ports[0].NodePort != wantNodePort {
			t.Errorf("Service %s: %s nodePort %d, want %s nodePort %d", s.Name, s.Spec.Type, s.Spec.Ports[0].NodePort, wantType, wantNodePort)
		}
	}
}

func checkScaling(t *testing.T, c renderCase, r rendered) {
	wantHPAs := 0
	if c.autoscaled {
		wantHPAs = len(c.enabled)
	}
	if len(r.hpas) != wantHPAs {
		t.Errorf("%d HPAs, want %d", len(r.hpas), wantHPAs)
	}
	if len(r.pdbs) != len(c.pdb) {
		t.Errorf("%d PodDisruptionBudgets, want %d", len(r.pdbs), len(c.pdb))
	}
	for _, name := range c.enabled {
		if c.autoscaled {
			h := r.hpas[objName(name)]
			switch {
			case h == nil:
				t.Errorf("no HPA for %s", name)
			case h.Spec.ScaleTargetRef.Kind != "Deployment" || h.Spec.ScaleTargetRef.Name != objName(name) || h.Spec.ScaleTargetRef.APIVersion != "apps/v1":
				t.Errorf("HPA %s targets %+v", h.Name, h.Spec.ScaleTargetRef)
			case h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 1 || h.Spec.MaxReplicas < *h.Spec.MinReplicas:
				t.Errorf("HPA %s: bad replica bounds", h.Name)
			case len(h.Spec.Metrics) == 0:
				t.Errorf("HPA %s: no metrics", h.Name)
			}
		}
		if !slices.Contains(c.pdb, name) {
			continue
		}
		p := r.pdbs[objName(name)]
		if p == nil {
			t.Errorf("no PodDisruptionBudget for %s", name)
			continue
		}
		if got := r.selectedComponents(t, p.Spec.Selector); !slices.Equal(got, []string{name}) {
			t.Errorf("PDB %s selects %v, want only %s", p.Name, got, name)
		}
		// maxUnavailable, so that one replica never blocks a node drain.
		if p.Spec.MaxUnavailable == nil || p.Spec.MinAvailable != nil {
			t.Errorf("PDB %s must use maxUnavailable only", p.Name)
		}
	}
}

func checkNetworkPolicies(t *testing.T, c renderCase, r rendered) {
	if !c.networkPolicies {
		if len(r.policies) != 0 {
			t.Errorf("%d NetworkPolicies rendered with networkPolicy.enabled=false", len(r.policies))
		}
		return
	}
	if len(r.policies) != len(c.enabled) {
		t.Errorf("%d NetworkPolicies, want one per service (%d)", len(r.policies), len(c.enabled))
	}
	edgeOnly := []string{"edge"}
	for _, name := range c.enabled {
		comp, _ := componentOf(name)
		p := r.policies[objName(name)]
		if p == nil {
			t.Errorf("no NetworkPolicy for %s", name)
			continue
		}
		where := "NetworkPolicy " + p.Name
		if got := r.selectedComponents(t, &p.Spec.PodSelector); !slices.Equal(got, []string{name}) {
			t.Errorf("%s selects %v, want only %s", where, got, name)
		}
		if !slices.Equal(p.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}) {
			t.Errorf("%s: policyTypes %v, want Ingress and Egress", where, p.Spec.PolicyTypes)
		}

		// Ingress: the service's own port to a service only from edge pods, to edge from its
		// configured clients; the internal port only from the configured metrics scrapers
		// (and, on edge, the helm test pod).
		for i, rule := range p.Spec.Ingress {
			isMetrics := c.metricsFrom && len(rule.From) == 1 && rule.From[0].NamespaceSelector != nil &&
				rule.From[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] == "monitoring"
			isTestPod := name == "edge" && len(rule.From) == 1 && rule.From[0].NamespaceSelector == nil && rule.From[0].IPBlock == nil &&
				rule.From[0].PodSelector != nil && rule.From[0].PodSelector.MatchLabels["app.kubernetes.io/component"] == "helm-test"
			switch {
			case isMetrics || isTestPod:
				if !portsAre(rule.Ports, internalPort) {
					t.Errorf("%s: ingress rule %d (scrapers or helm test) ports %v, want only the internal %d/TCP", where, i, rule.Ports, internalPort)
				}
				continue
			case !portsAre(rule.Ports, comp.port):
				t.Errorf("%s: ingress rule %d ports %v, want only %d/TCP", where, i, rule.Ports, comp.port)
			}
			switch {
			case name == "edge":
				if c.edgeFrom && len(rule.From) == 0 {
					t.Errorf("%s: edge open to everyone although networkPolicy.edgeFrom is set", where)
				}
			default:
				if len(rule.From) == 0 {
					t.Errorf("%s: ingress rule %d open to every source", where, i)
				}
				// property-svc also answers booking-svc's getpayment (card charges); booking-svc
				// also integration-svc (bookings of webhooks, imported iCal blocks) and
				// messaging-svc (the booking a message shows).
				callers := edgeOnly
				if name == "property-svc" {
					callers = []string{"edge", "booking-svc"}
				}
				if name == "booking-svc" {
					callers = []string{"edge", "integration-svc", "messaging-svc"}
				}
				for _, peer := range rule.From {
					if peer.NamespaceSelector != nil || peer.IPBlock != nil ||
						!slices.Contains(callers, strings.Join(r.selectedComponents(t, peer.PodSelector), ",")) {
						t.Errorf("%s: ingress rule %d admits %+v, want pods of %v only", where, i, peer, callers)
					}
				}
			}
		}
		if len(p.Spec.Ingress) == 0 {
			t.Errorf("%s: no ingress rule; nothing could reach %s", where, name)
		}

		// Egress: DNS, MongoDB, Kafka (+ OTLP when set); edge also its backends. Never "all".
		seen := map[string]bool{}
		for i, rule := range p.Spec.Egress {
			if len(rule.Ports) == 0 {
				t.Errorf("%s: egress rule %d allows every port", where, i)
				continue
			}
			kind := egressKind(t, r, rule)
			seen[kind] = true
			switch {
			case kind == "":
				t.Errorf("%s: egress rule %d is not DNS, MongoDB, Kafka or a backend: %+v", where, i, rule)
			case kind == "otlp" && !c.otlp:
				t.Errorf("%s: OTLP egress without otel.endpoint", where)
			case strings.HasPrefix(kind, "backend:") && name != "edge" && (name != "booking-svc" || kind != "backend:property-svc") &&
				(name != "integration-svc" || kind != "backend:booking-svc") && (name != "messaging-svc" || kind != "backend:booking-svc"):
				t.Errorf("%s: only edge (and booking-svc → property-svc, integration-svc and messaging-svc → booking-svc) may call the services, got %s", where, kind)
			case kind == "mail":
				if name != "messaging-svc" {
					t.Errorf("%s: only messaging-svc sends mail, yet %s may reach SMTP servers", where, name)
				}
				checkPublicOnly(t, where, rule.To)
			case kind == "stripe":
				if name != "booking-svc" {
					t.Errorf("%s: only booking-svc charges cards, yet %s may reach HTTPS servers", where, name)
				}
				checkPublicOnly(t, where, rule.To)
			case kind == "photos":
				// property-svc downloads photo links; integration-svc delivers webhooks and
				// polls iCal feeds: the only two that connect to addresses clients name.
				if name != "property-svc" && name != "integration-svc" {
					t.Errorf("%s: only property-svc and integration-svc connect to addresses clients name, yet %s may reach web servers", where, name)
				}
				if name == "integration-svc" && c.integrationPrivate {
					checkAllButLinkLocal(t, where, rule.To)
					continue
				}
				checkPublicOnly(t, where, rule.To)
			case (kind == "mongodb" || kind == "kafka") && c.egressPeerLabel:
				if len(rule.To) == 0 {
					t.Errorf("%s: %s egress to any address; values-kind limits it to the dev pods", where, kind)
				}
				for _, peer := range rule.To {
					if peer.PodSelector == nil || peer.PodSelector.MatchLabels["app.kubernetes.io/name"] != kind {
						t.Errorf("%s: %s egress peer %+v does not select the dev %s pods", where, kind, peer, kind)
					}
				}
			case kind == "dns":
				if len(rule.To) == 0 {
					t.Errorf("%s: DNS egress to any address", where)
				}
			}
		}
		want := []string{"dns", "mongodb", "kafka"}
		if c.otlp {
			want = append(want, "otlp")
		}
		if name == "property-svc" {
			want = append(want, "photos")
		}
		if name == "integration-svc" {
			want = append(want, "photos")
			if slices.Contains(c.enabled, "booking-svc") {
				want = append(want, "backend:booking-svc")
			}
		}
		if name == "messaging-svc" {
			want = append(want, "mail")
			if slices.Contains(c.enabled, "booking-svc") {
				want = append(want, "backend:booking-svc")
			}
		}
		if name == "booking-svc" {
			want = append(want, "stripe")
			if slices.Contains(c.enabled, "property-svc") {
				want = append(want, "backend:property-svc")
			}
		}
		if name == "edge" {
			for _, b := range c.enabled {
				if b != "edge" {
					want = append(want, "backend:"+b)
				}
			}
		}
		for _, k := range want {
			if !seen[k] {
				t.Errorf("%s: no egress rule for %s", where, k)
			}
		}
	}
}

// egressKind names the destination of an egress rule from its ports (and, for the services
// behind edge, its peers); "" when the rule fits none.
func egressKind(t *testing.T, r rendered, rule networkingv1.NetworkPolicyEgressRule) string {
	switch {
	case portsAre(rule.Ports, dnsPort) && len(rule.Ports) == 2:
		return "dns"
	case portsAre(rule.Ports, mongoPort):
		return "mongodb"
	case portsAre(rule.Ports, kafkaPort):
		return "kafka"
	case portsAre(rule.Ports, 4317, 4318):
		return "otlp"
	case portsAre(rule.Ports, 443) && len(rule.Ports) == 1:
		return "stripe"
	case portsAre(rule.Ports, 80, 443):
		return "photos"
	case portsAre(rule.Ports, 25, 465, 587, 2525):
		return "mail"
	}
	if len(rule.Ports) != 1 || len(rule.To) != 1 || rule.To[0].NamespaceSelector != nil || rule.To[0].IPBlock != nil {
		return ""
	}
	targets := r.selectedComponents(t, rule.To[0].PodSelector)
	if len(targets) != 1 {
		return ""
	}
	comp, _ := componentOf(targets[0])
	if !portsAre(rule.Ports, comp.port) || comp.name == "edge" {
		return ""
	}
	return "backend:" + comp.name
}

// checkPublicOnly: photo downloads may reach public addresses only, never the cluster's or
// the node's networks (the NetworkPolicy repeats property-svc's SSRF guard).
func checkPublicOnly(t *testing.T, where string, peers []networkingv1.NetworkPolicyPeer) {
	if len(peers) == 0 {
		t.Errorf("%s: photo egress to every address, including the cluster's", where)
	}
	private := map[string][]string{
		"0.0.0.0/0": {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "127.0.0.0/8", "100.64.0.0/10"},
		"::/0":      {"fc00::/7", "fe80::/10", "::1/128"},
	}
	for _, p := range peers {
		if p.IPBlock == nil || p.PodSelector != nil || p.NamespaceSelector != nil {
			t.Errorf("%s: photo egress peer %+v is not an ipBlock", where, p)
			continue
		}
		for _, cidr := range private[p.IPBlock.CIDR] {
			if !slices.Contains(p.IPBlock.Except, cidr) {
				t.Errorf("%s: photo egress to %s does not exclude %s", where, p.IPBlock.CIDR, cidr)
			}
		}
	}
}

// portsAre reports whether every port of the rule is one of want (UDP only for DNS).
func portsAre(ports []networkingv1.NetworkPolicyPort, want ...int32) bool {
	if len(ports) == 0 {
		return false
	}
	for _, p := range ports {
		if p.Port == nil || p.EndPort != nil || !slices.Contains(want, p.Port.IntVal) {
			return false
		}
		if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP && !(*p.Protocol == corev1.ProtocolUDP && p.Port.IntVal == dnsPort) {
			return false
		}
	}
	return true
}

func checkIngress(t *testing.T, c renderCase, r rendered) {
	if !c.ingress {
		if len(r.ingresses) != 0 {
			t.Errorf("%d Ingresses rendered, want none", len(r.ingresses))
		}
		return
	}
	if len(r.ingresses) != 1 {
		t.Fatalf("%d Ingresses, want one (edge)", len(r.ingresses))
	}
	ing := r.ingresses[0]
	edge := r.services[objName("edge")]
	if edge == nil {
		t.Fatal("no edge Service")
	}
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			t.Fatalf("Ingress %s: rule without http", ing.Name)
		}
		for _, p := range rule.HTTP.Paths {
			svc := p.Backend.Service
			if svc == nil || svc.Name != objName("edge") || svc.Port.Name != "http" {
				t.Errorf("Ingress %s: path %s goes to %+v, want %s:http", ing.Name, p.Path, svc, objName("edge"))
				continue
			}
			// The Service port it names leads to the API, never to the internal listener.
			for _, sp := range edge.Spec.Ports {
				if sp.Name == svc.Port.Name && (sp.Port == internalPort || sp.TargetPort.String() != "http") {
					t.Errorf("Ingress %s: path %s reaches Service port %+v, the internal listener", ing.Name, p.Path, sp)
				}
			}
		}
	}
	if len(ing.Spec.Rules) == 0 {
		t.Errorf("Ingress %s has no rules", ing.Name)
	}
}

func checkTopicsJob(t *testing.T, c renderCase, r rendered) {
	if !c.topicsJob {
		if len(r.jobs) != 0 {
			t.Errorf("%d Jobs rendered with kafka.topics.create=false", len(r.jobs))
		}
		return
	}
	if len(r.jobs) != 1 {
		t.Fatalf("%d Jobs, want the topic job", len(r.jobs))
	}
	j := r.jobs[0]
	hooks := strings.Split(j.Annotations["helm.sh/hook"], ",")
	if !slices.Contains(hooks, "pre-install") || !slices.Contains(hooks, "pre-upgrade") {
		t.Errorf("Job %s: hooks %v, want pre-install and pre-upgrade (topics exist before the services start)", j.Name, hooks)
	}
	ctr := j.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range ctr.Env {
		env[e.Name] = e.Value
	}
	if got := strings.Fields(env["TOPICS"]); !slices.Equal(got, []string{"vros.property.v1", "vros.booking.v1", "vros.integration.v1"}) {
		t.Errorf("Job %s: topics %v", j.Name, got)
	}
	configs := strings.Split(env["TOPIC_CONFIGS"], ",")
	if !slices.Contains(configs, "cleanup.policy=compact") || slices.Contains(configs, "cleanup.policy=delete") {
		t.Errorf("Job %s: topic configs %v, want cleanup.policy=compact only", j.Name, configs)
	}
	if env["PARTITIONS"] != c.partitions || env["REPLICATION_FACTOR"] != c.replicationFactor {
		t.Errorf("Job %s: partitions %s replication %s, want %s and %s", j.Name, env["PARTITIONS"], env["REPLICATION_FACTOR"], c.partitions, c.replicationFactor)
	}
	script := strings.Join(ctr.Command, " ")
	for _, want := range []string{"kafka-topics.sh", "--create", "--if-not-exists", "--config", "kafka-configs.sh", "--add-config"} {
		if !strings.Contains(script, want) {
			t.Errorf("Job %s: script lacks %q", j.Name, want)
		}
	}
}

func checkTestPod(t *testing.T, r rendered) {
	if len(r.pods) != 1 {
		t.Fatalf("%d Pods, want the helm test pod", len(r.pods))
	}
	p := r.pods[0]
	if p.Annotations["helm.sh/hook"] != "test" {
		t.Errorf("Pod %s is not a helm test hook", p.Name)
	}
	env := map[string]string{}
	for _, e := range p.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if want := fmt.Sprintf("http://%s:8080", objName("edge")); env["EDGE_URL"] != want {
		t.Errorf("test pod calls %q, want %q", env["EDGE_URL"], want)
	}
	if want := fmt.Sprintf("http://%s:%d", objName("edge"), internalPort); env["EDGE_INTERNAL_URL"] != want {
		t.Errorf("test pod probes %q, want %q", env["EDGE_INTERNAL_URL"], want)
	}
	// The checks are k8s/cmd/vros-chart-test, the image's entrypoint, built with the services.
	if c := p.Spec.Containers[0]; !strings.Contains(c.Image, "chart-test:") || len(c.Command) != 0 {
		t.Errorf("test pod runs %q %v, want the chart-test image's own entrypoint", c.Image, c.Command)
	}
}

func checkServiceMonitors(t *testing.T, c renderCase, r rendered) {
	if !c.serviceMonitors {
		if len(r.serviceMonitors) != 0 {
			t.Errorf("%d ServiceMonitors with serviceMonitor.enabled=false", len(r.serviceMonitors))
		}
		return
	}
	for _, name := range c.enabled {
		sm := r.serviceMonitors[objName(name)]
		if sm == nil {
			t.Errorf("no ServiceMonitor for %s", name)
			continue
		}
		svc := r.services[objName(name)]
		if svc == nil || !selects(t, &sm.Spec.Selector, svc.Labels) {
			t.Errorf("ServiceMonitor %s does not select Service %s", sm.Name, objName(name))
		}
		if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "internal" || sm.Spec.Endpoints[0].Path != "/metrics" {
			t.Errorf("ServiceMonitor %s endpoints %+v, want internal /metrics", sm.Name, sm.Spec.Endpoints)
		}
		// job is the service's name whatever the release is called: the alert rules and the
		// dashboard select job="edge", job="booking-svc", ...
		if sm.Spec.JobLabel != componentLabel {
			t.Errorf("ServiceMonitor %s: jobLabel %q, want %s", sm.Name, sm.Spec.JobLabel, componentLabel)
		}
		if svc != nil && svc.Labels[componentLabel] != name {
			t.Errorf("Service %s: label %s=%q, want %q (the job of its metrics)", svc.Name, componentLabel, svc.Labels[componentLabel], name)
		}
	}
}

// TestKindFilesAgree: the kind cluster publishes the NodePort that values-kind gives edge, and
// the kind NetworkPolicies let the services reach the dev MongoDB and Kafka pods.
func TestKindFilesAgree(t *testing.T) {
	f := newFixture(t)
	cfg, err := repo.LoadKindConfig(filepath.Join(f.root, repo.KindConfig))
	if err != nil {
		t.Fatal(err)
	}
	r := index(f.render(t, f.kubeVersion, "-f", repo.KindValues))
	edge := r.services[objName("edge")]
	if edge == nil {
		t.Fatal("no edge Service")
	}
	nodePort := edge.Spec.Ports[0].NodePort
	if len(cfg.Nodes) != 1 {
		t.Fatalf("kind config: %d nodes, want one", len(cfg.Nodes))
	}
	published := false
	for _, m := range cfg.Nodes[0].ExtraPortMappings {
		published = published || m.ContainerPort == nodePort
	}
	if !published {
		t.Errorf("kind config does not publish edge's NodePort %d", nodePort)
	}

	dev := devManifests(t, f)
	devPods := map[string]labels.Set{}
	for _, m := range dev {
		if s, ok := m.Object.(*appsv1.StatefulSet); ok {
			devPods[s.Name] = s.Spec.Template.Labels
		}
	}
	for _, name := range []string{"mongodb", "kafka"} {
		if devPods[name] == nil {
			t.Fatalf("k8s/dev has no StatefulSet %s", name)
		}
	}
	for _, p := range r.policies {
		for _, rule := range p.Spec.Egress {
			kind := egressKind(t, r, rule)
			if kind != "mongodb" && kind != "kafka" {
				continue
			}
			for _, peer := range rule.To {
				if !selects(t, peer.PodSelector, devPods[kind]) {
					t.Errorf("NetworkPolicy %s: %s egress peer does not select the dev %s pod", p.Name, kind, kind)
				}
			}
		}
	}
	// The URI points at the dev Service, FerretDB, which no driver selects as a replica set.
	ctr := r.deployments[objName("property-svc")].Spec.Template.Spec.Containers[0]
	for _, e := range ctr.Env {
		if e.Name == "VROS_MONGO_URI" && (!strings.HasPrefix(e.Value, "mongodb://mongodb:27017") || strings.Contains(e.Value, "replicaSet")) {
			t.Errorf("kind MongoDB URI %q: want mongodb://mongodb:27017 without replicaSet (FerretDB)", e.Value)
		}
	}
	// Every image the kind values name is built here: the helm test pod's and the topic Job's.
	images := airgapImages(t, f.root)
	for _, p := range r.pods {
		for _, c := range p.Spec.Containers {
			if !strings.HasPrefix(c.Image, "vros/chart-test:") {
				t.Errorf("helm test pod %s: image %q, want vros/chart-test (built by make images)", p.Name, c.Image)
			}
		}
	}
	for _, j := range r.jobs {
		for _, c := range j.Spec.Template.Spec.Containers {
			if c.Image != images["AIRGAP_KAFKA_IMAGE"] {
				t.Errorf("Job %s: image %q, want the dev Kafka image %q", j.Name, c.Image, images["AIRGAP_KAFKA_IMAGE"])
			}
		}
	}
}

func metaSelector(m map[string]string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: m}
}

func ptrVal[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// TestLongNamesFit: with the longest full name the chart allows (a long fullnameOverride),
// every object's name is still a DNS label of at most 63 characters, the longest component
// suffix ("-integration-svc") included.
func TestLongNamesFit(t *testing.T) {
	f := newFixture(t)
	for _, m := range f.render(t, f.kubeVersion, "--set", "ingress.host=api.example.com", "--set", "fullnameOverride="+strings.Repeat("v", 60),
		"--set", "serviceMonitor.enabled=true", "--set", "prometheusRule.enabled=true", "--set", "grafanaDashboard.enabled=true") {
		obj, err := meta.Accessor(m.Object)
		if err != nil {
			t.Fatalf("%s: %v", m.Source, err)
		}
		if n := obj.GetName(); len(n) > 63 || strings.HasSuffix(n, "-") {
			t.Errorf("%s: name %q (%d characters) is not a DNS label", m.Source, n, len(n))
		}
	}
}

// checkAllButLinkLocal: networkPolicy.integrationTargets.allowPrivate opens every address but
// the link-local ones (clouds' instance metadata and credentials), IPv4 and IPv6.
func checkAllButLinkLocal(t *testing.T, where string, to []networkingv1.NetworkPolicyPeer) {
	t.Helper()
	want := map[string][]string{"0.0.0.0/0": {"169.254.0.0/16"}, "::/0": {"fe80::/10", "fd00:ec2::254/128"}}
	if len(to) != len(want) {
		t.Errorf("%s: allowPrivate receivers %+v, want every address but link-local", where, to)
		return
	}
	for _, p := range to {
		if p.IPBlock == nil || p.PodSelector != nil || p.NamespaceSelector != nil {
			t.Errorf("%s: allowPrivate peer %+v is not an address block", where, p)
			continue
		}
		for _, ex := range want[p.IPBlock.CIDR] {
			if !slices.Contains(p.IPBlock.Except, ex) {
				t.Errorf("%s: allowPrivate block %s does not except %s", where, p.IPBlock.CIDR, ex)
			}
		}
		if _, ok := want[p.IPBlock.CIDR]; !ok {
			t.Errorf("%s: allowPrivate block %s, want 0.0.0.0/0 and ::/0", where, p.IPBlock.CIDR)
		}
	}
}
