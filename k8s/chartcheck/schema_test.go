package chartcheck

import (
	"strconv"
	"strings"
	"testing"

	"github.com/vros/vros/k8s/internal/repo"
)

// TestValuesSchemaRefusesWrongValues: values.schema.json makes helm install and helm template
// fail on a wrong value (a typo, a wrong type, a value out of its set) instead of rendering
// a deployment that breaks later. Each row names the value and the path the error must name.
func TestValuesSchemaRefusesWrongValues(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ set, path string }{
		{"logLevel=verbose", "/logLevel"},
		{"shutdownDrain=five", "/shutdownDrain"},
		{"internalPort=0", "/internalPort"},
		{"internalPort=70000", "/internalPort"},
		{"image.pullPolicy=Sometimes", "/image/pullPolicy"},
		{"edge.port=http", "/edge/port"},
		{"edge.prot=8080", "/edge"},                   // a typo: unknown key
		{"replicas=3", "''"},                          // unknown top-level key
		{"bookingSvc.rateLimit.rps=5", "/bookingSvc"}, // an edge-only key elsewhere
		{"propertySvc.service.type=NodePort", "/propertySvc/service/type"},
		{"catalogSvc.resources.limits.memory=lots", "/catalogSvc/resources/limits/memory"},
		{"edge.resources.limits=null", "/edge/resources"}, // limits are required
		{"edge.autoscaling.targetCPUUtilizationPercentage=150", "/edge/autoscaling/targetCPUUtilizationPercentage"},
		{"edge.rateLimit.rps=-1", "/edge/rateLimit/rps"},
		{"edge.engineLimits.address.burst=-1", "/edge/engineLimits/address/burst"},
		{"edge.engineLimits.checkoutPeriod=hourly", "/edge/engineLimits/checkoutPeriod"},
		{"edge.engineLimits.checkoutWindow=15m", "/edge/engineLimits"}, // not an edge setting
		{"bookingSvc.checkoutWindow=15", "/bookingSvc/checkoutWindow"}, // no unit
		{"propertySvc.checkoutWindow=15m", "/propertySvc"},             // booking-svc's alone
		{"kafka.topics.partitions=0", "/kafka/topics/partitions"},
		{"kafka.brokers=a:9092 b:9092", "/kafka/brokers"}, // space-separated
		{"networkPolicy.enabled=maybe", "/networkPolicy/enabled"},
		{"serviceMonitor.interval=often", "/serviceMonitor/interval"},
		{"edge.publicURL=api.example.com", "/edge/publicURL"},
		{"prometheusRule.enabled=yes", "/prometheusRule/enabled"},
		{"prometheusRule.rules=x", "/prometheusRule"}, // the rules are the chart's file, not a value
		{"grafanaDashboard.enabled=yes", "/grafanaDashboard/enabled"},
		{"grafanaDashboard.label.key=grafana dashboard", "/grafanaDashboard/label/key"},
		{"grafanaDashboard.namespace=Monitoring", "/grafanaDashboard/namespace"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			_, err := f.helm.Run("template", release, repo.Chart, "--kube-version", f.kubeVersion,
				"--set", "ingress.host=api.example.com", "--set", tc.set)
			if err == nil {
				t.Fatalf("--set %s rendered; want a schema error", tc.set)
			}
			if msg := err.Error(); !strings.Contains(msg, "schema") || !strings.Contains(msg, "at '"+strings.Trim(tc.path, "'")) {
				t.Fatalf("--set %s: want a schema error at %s, got %v", tc.set, tc.path, err)
			}
		})
	}
}

// TestGoMemLimit: GOMEMLIMIT is 90 % of the memory limit, whichever way the limit is written.
func TestGoMemLimit(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		set  []string
		want int64
	}{
		{[]string{"--set", "edge.resources.limits.memory=256Mi"}, 256 << 20 * 9 / 10},
		{[]string{"--set", "edge.resources.limits.memory=1.5Gi"}, 3 << 29 * 9 / 10},
		{[]string{"--set", "edge.resources.limits.memory=500M"}, 450_000_000},
		{[]string{"--set-json", "edge.resources.limits.memory=536870912"}, 536870912 * 9 / 10},
	} {
		r := index(f.render(t, f.kubeVersion, append([]string{"--set", "ingress.host=api.example.com"}, tc.set...)...))
		var got string
		for _, e := range r.deployments[objName("edge")].Spec.Template.Spec.Containers[0].Env {
			if e.Name == "GOMEMLIMIT" {
				got = e.Value
			}
		}
		if n, err := strconv.ParseInt(got, 10, 64); err != nil || n < tc.want-1 || n > tc.want+1 {
			t.Errorf("%v: GOMEMLIMIT %q, want %d", tc.set, got, tc.want)
		}
	}
}
