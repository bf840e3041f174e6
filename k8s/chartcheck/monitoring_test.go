package chartcheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/vros/vros/k8s/internal/repo"
)

// The monitoring the chart ships (docs/operations.md): the alert rules, which promtool checks
// and tests as they are (make test-charts), and the Grafana dashboard, whose metric names
// systest/metricscheck checks against a running stack.
const (
	rulesFile      = "charts/vros/rules/vros-rules.yaml"
	rulesTestFile  = "charts/vros/rules/vros-rules.test.yaml"
	dashboardFile  = "charts/vros/dashboards/vros.json"
	operationsDoc  = "docs/operations.md"
	runbookBaseURL = "https://github.com/vros/vros/blob/main/docs/operations.md#"
	// componentLabel names the service on every object of the chart; the ServiceMonitors
	// make it the job of the service's metrics.
	componentLabel = "app.kubernetes.io/component"
	// dashboardLabel is the label Grafana's dashboard sidecar looks for by default.
	dashboardLabel = "grafana_dashboard"
)

// loadRules reads the rules file strictly as a PrometheusRule's spec: a field the Prometheus
// Operator does not know fails here, not in the cluster.
func loadRules(t *testing.T, root string) monitoringv1.PrometheusRuleSpec {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, rulesFile))
	if err != nil {
		t.Fatal(err)
	}
	var spec monitoringv1.PrometheusRuleSpec
	if err := yaml.UnmarshalStrict(raw, &spec); err != nil {
		t.Fatalf("%s is not a PrometheusRule spec: %v", rulesFile, err)
	}
	if len(spec.Groups) == 0 {
		t.Fatalf("%s: no rule groups", rulesFile)
	}
	return spec
}

// checkPrometheusRule: prometheusRule.enabled renders one PrometheusRule whose groups are the
// rules file's, exactly (the file promtool tests); off, none.
func checkPrometheusRule(t *testing.T, f fixture, c renderCase, r rendered) {
	if !c.prometheusRule {
		if len(r.prometheusRules) != 0 {
			t.Errorf("%d PrometheusRules with prometheusRule.enabled=false", len(r.prometheusRules))
		}
		return
	}
	if len(r.prometheusRules) != 1 {
		t.Fatalf("%d PrometheusRules, want one", len(r.prometheusRules))
	}
	pr := r.prometheusRules[0]
	if pr.Name != release || pr.Labels["app.kubernetes.io/part-of"] != "vros" {
		t.Errorf("PrometheusRule %s labels %v, want name %s and the chart's labels", pr.Name, pr.Labels, release)
	}
	got, _ := json.Marshal(pr.Spec)
	want, _ := json.Marshal(loadRules(t, f.root))
	if string(got) != string(want) {
		t.Errorf("PrometheusRule %s is not %s:\n got %s\nwant %s", pr.Name, rulesFile, got, want)
	}
}

// dashboardJSON is what the checks read of a Grafana dashboard.
type dashboardJSON struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource *datasourceRef  `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		Type       string         `json:"type"`
		Title      string         `json:"title"`
		Datasource *datasourceRef `json:"datasource"`
		Targets    []struct {
			Expr       string         `json:"expr"`
			Datasource *datasourceRef `json:"datasource"`
		} `json:"targets"`
	} `json:"panels"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// checkGrafanaDashboard: grafanaDashboard.enabled renders one ConfigMap with the sidecar's
// label holding dashboards/vros.json, valid JSON; off, none.
func checkGrafanaDashboard(t *testing.T, f fixture, c renderCase, r rendered) {
	var dashboards []*corev1.ConfigMap
	for _, cm := range r.configMaps {
		if _, ok := cm.Labels[dashboardLabel]; ok {
			dashboards = append(dashboards, cm)
		}
	}
	if !c.grafanaDashboard {
		if len(r.configMaps) != 0 {
			t.Errorf("%d ConfigMaps with grafanaDashboard.enabled=false", len(r.configMaps))
		}
		return
	}
	if len(dashboards) != 1 {
		t.Fatalf("%d ConfigMaps labelled %s, want one", len(dashboards), dashboardLabel)
	}
	cm := dashboards[0]
	if cm.Labels[dashboardLabel] != "1" || cm.Name != release+"-dashboard" {
		t.Errorf("ConfigMap %s: label %s=%q, want \"1\" (the sidecar's default) and name %s-dashboard", cm.Name, dashboardLabel,
			cm.Labels[dashboardLabel], release)
	}
	if c.name == "full" && cm.Annotations["grafana_folder"] != "vros" {
		t.Errorf("ConfigMap %s: annotations %v, want values-full's grafana_folder", cm.Name, cm.Annotations)
	}
	if len(cm.Data) != 1 {
		t.Errorf("ConfigMap %s: keys %v, want vros.json alone", cm.Name, cm.Data)
	}
	file, err := os.ReadFile(filepath.Join(f.root, dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	got := cm.Data["vros.json"]
	if strings.TrimSpace(got) != strings.TrimSpace(string(file)) {
		t.Errorf("ConfigMap %s: vros.json is not %s", cm.Name, dashboardFile)
	}
	checkDashboard(t, []byte(got))
}

// checkDashboard: the data source is a variable of type prometheus, the namespace a variable
// that every query selects on; one row per service whose queries select its job, then
// Freshness and Bookings.
func checkDashboard(t *testing.T, raw []byte) {
	t.Helper()
	var d dashboardJSON
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("dashboard uid %q title %q", d.UID, d.Title)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
		switch v.Name {
		case "datasource":
			if v.Type != "datasource" || string(v.Query) != `"prometheus"` {
				t.Errorf("variable datasource: type %s query %s, want a data source variable of type prometheus", v.Type, v.Query)
			}
		case "namespace":
			if v.Type != "query" || v.Datasource == nil || v.Datasource.UID != "${datasource}" {
				t.Errorf("variable namespace: type %s data source %+v, want a query on ${datasource}", v.Type, v.Datasource)
			}
		}
	}
	if vars["datasource"] == "" || vars["namespace"] == "" {
		t.Errorf("variables %v, want datasource and namespace", vars)
	}
	var rows []string
	row := ""
	for _, p := range d.Panels {
		if p.Type == "row" {
			row = p.Title
			rows = append(rows, row)
			continue
		}
		if row == "" {
			t.Errorf("panel %q is above the first row", p.Title)
		}
		if p.Datasource == nil || p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: data source %+v, want prometheus ${datasource}", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			if q.Datasource == nil || q.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q: a query's data source %+v, want ${datasource}", p.Title, q.Datasource)
			}
			if !strings.Contains(q.Expr, `namespace="$namespace"`) {
				t.Errorf("panel %q: %s does not select the namespace", p.Title, q.Expr)
			}
			if slices.Contains(all, row) && !strings.Contains(q.Expr, `job="`+row+`"`) {
				t.Errorf("panel %q of row %s: %s does not select job=%q", p.Title, row, q.Expr, row)
			}
		}
	}
	if want := append(slices.Clone(all), "Freshness", "Bookings"); !slices.Equal(rows, want) {
		t.Errorf("rows %v, want %v", rows, want)
	}
}

// TestMonitoringValues: the sidecar's label and the ConfigMap's namespace follow the values,
// and prometheusRule.labels reach the PrometheusRule (a Prometheus' ruleSelector).
func TestMonitoringValues(t *testing.T) {
	f := newFixture(t)
	r := index(f.render(t, f.kubeVersion, "--set", "ingress.host=api.example.com",
		"--set", "grafanaDashboard.enabled=true", "--set", "grafanaDashboard.label.key=example.com/dashboard",
		"--set", "grafanaDashboard.label.value=vros", "--set", "grafanaDashboard.namespace=monitoring",
		"--set", "prometheusRule.enabled=true", "--set", "prometheusRule.labels.release=kps"))
	if len(r.configMaps) != 1 {
		t.Fatalf("%d ConfigMaps, want the dashboard", len(r.configMaps))
	}
	cm := r.configMaps[0]
	if cm.Labels["example.com/dashboard"] != "vros" || cm.Labels[dashboardLabel] != "" || cm.Namespace != "monitoring" {
		t.Errorf("dashboard ConfigMap labels %v namespace %q, want example.com/dashboard=vros only, in monitoring", cm.Labels, cm.Namespace)
	}
	if len(r.prometheusRules) != 1 || r.prometheusRules[0].Labels["release"] != "kps" {
		t.Errorf("PrometheusRules %d, want one labelled release=kps", len(r.prometheusRules))
	}
}

// TestAlertRules: every rule of the rules file is an alert with a severity, a summary, a
// description and a runbook in docs/operations.md (a heading per alert, its expression
// there as it is); and the promtool tests (vros-rules.test.yaml) see each alert both fire and
// stay silent.
func TestAlertRules(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, operationsDoc))
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(string(doc)), " ")
	tests := loadRuleTests(t, root)
	for _, g := range loadRules(t, root).Groups {
		for _, rule := range g.Rules {
			if rule.Alert == "" {
				t.Errorf("group %s: a rule without alert (record %q): the file holds alerts only", g.Name, rule.Record)
				continue
			}
			where := "alert " + rule.Alert
			if s := rule.Labels["severity"]; s != "critical" && s != "warning" {
				t.Errorf("%s: severity %q, want critical or warning", where, s)
			}
			for _, a := range []string{"summary", "description", "runbook_url"} {
				if rule.Annotations[a] == "" {
					t.Errorf("%s: no %s", where, a)
				}
			}
			anchor := strings.ToLower(rule.Alert)
			if got := rule.Annotations["runbook_url"]; got != runbookBaseURL+anchor {
				t.Errorf("%s: runbook_url %q, want %s%s", where, got, runbookBaseURL, anchor)
			}
			if !regexp.MustCompile(`(?m)^### ` + rule.Alert + `$`).Match(doc) {
				t.Errorf("%s: %s has no heading \"### %s\" (anchor #%s)", where, operationsDoc, rule.Alert, anchor)
			}
			if expr := strings.Join(strings.Fields(rule.Expr.String()), " "); !strings.Contains(flat, expr) {
				t.Errorf("%s: %s does not show its expression %s", where, operationsDoc, expr)
			}
			if !tests[rule.Alert][true] || !tests[rule.Alert][false] {
				t.Errorf("%s: %s must expect it both firing and silent (got %v)", where, rulesTestFile, tests[rule.Alert])
			}
		}
	}
}

// loadRuleTests reads which alerts the promtool tests expect firing (true) and silent (false).
func loadRuleTests(t *testing.T, root string) map[string]map[bool]bool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, rulesTestFile))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string           `json:"alertname"`
				ExpAlerts []map[string]any `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatalf("%s: %v", rulesTestFile, err)
	}
	out := map[string]map[bool]bool{}
	for _, tg := range file.Tests {
		for _, a := range tg.AlertRuleTest {
			if out[a.Alertname] == nil {
				out[a.Alertname] = map[bool]bool{}
			}
			out[a.Alertname][len(a.ExpAlerts) > 0] = true
		}
	}
	return out
}

// TestDashboardDocumented: docs/operations.md lists every panel of the dashboard with its
// queries as they are; the panels every service's row repeats are listed once, as
// "<service>: ..." with job="<service>".
func TestDashboardDocumented(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	checkDashboard(t, raw)
	doc, err := os.ReadFile(filepath.Join(root, operationsDoc))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboardJSON
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	documented := func(literal, generic string) bool {
		return strings.Contains(string(doc), literal) || strings.Contains(string(doc), generic)
	}
	row := ""
	for _, p := range d.Panels {
		if p.Type == "row" {
			row = p.Title
			continue
		}
		title, job := p.Title, ""
		if slices.Contains(all, row) {
			title, job = strings.Replace(p.Title, row+": ", "<service>: ", 1), `job="`+row+`"`
		}
		if !documented(p.Title, title) {
			t.Errorf("%s does not name the panel %q", operationsDoc, p.Title)
		}
		for _, q := range p.Targets {
			generic := q.Expr
			if job != "" {
				generic = strings.ReplaceAll(q.Expr, job, `job="<service>"`)
			}
			if !documented(q.Expr, generic) {
				t.Errorf("%s does not show the query of panel %q: %s", operationsDoc, p.Title, q.Expr)
			}
		}
	}
}
