package metricscheck

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The chart's files whose queries are checked, from this package's directory.
const (
	dashboardFile = "../../charts/vros/dashboards/vros.json"
	rulesFile     = "../../charts/vros/rules/vros-rules.yaml"
)

// query is one PromQL expression of the dashboard or the rules, and where it is.
type query struct {
	where, expr string
}

// use is a metric a query selects, with the job its selector names ("" when none).
type use struct {
	metric, job string
}

// promqlWords are PromQL's keywords and aggregation operators: identifiers that are never a
// metric, whether or not a parenthesis follows (sum by (le) (...), rate(x[5m]) > 0 and y).
var promqlWords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "by": true, "without": true,
	"on": true, "ignoring": true, "group_left": true, "group_right": true, "inf": true, "nan": true, "atan2": true,
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true, "count": true,
	"count_values": true, "bottomk": true, "topk": true, "quantile": true, "limitk": true, "limit_ratio": true,
}

// labelLists are the keywords followed by a list of label names, not of expressions.
var labelLists = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// metricsOf lists the metrics an expression selects. It reads PromQL's lexical structure
// only: strings, ranges ([5m], [$__rate_interval]) and label lists (by (le)) are skipped,
// an identifier followed by "(" is a function, keywords and aggregation operators are never
// metrics, and a selector's braces are read for its job="..." matcher. Grafana's
// label_values(<selector>, <label>) keeps its selector only.
func metricsOf(expr string) []use {
	if m := labelValues.FindStringSubmatch(expr); m != nil {
		expr = m[1]
	}
	var out []use
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			i = skipString(expr, i)
		case c == '[':
			i = skipTo(expr, i, ']')
		case c == '{': // a selector without a metric name: {__name__=...} is not used here
			i = skipTo(expr, i, '}')
		case isDigit(c) || c == '.':
			for i < len(expr) && (isIdent(expr[i]) || expr[i] == '.') {
				i++
			}
		case isIdentStart(c):
			j := i
			for j < len(expr) && isIdent(expr[j]) {
				j++
			}
			word := expr[i:j]
			k := j
			for k < len(expr) && strings.IndexByte(" \t\r\n", expr[k]) >= 0 {
				k++
			}
			next := byte(0)
			if k < len(expr) {
				next = expr[k]
			}
			switch {
			case labelLists[word] && next == '(':
				i = skipTo(expr, k, ')')
			case promqlWords[word] || next == '(':
				i = j
			default:
				u := use{metric: word}
				i = j
				if next == '{' {
					end := skipTo(expr, k, '}')
					if m := jobMatcher.FindStringSubmatch(expr[k:end]); m != nil {
						u.job = m[1]
					}
					i = end
				}
				out = append(out, u)
			}
		default:
			i++
		}
	}
	return out
}

var (
	labelValues = regexp.MustCompile(`^\s*label_values\(\s*(.*?)\s*,\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*$`)
	jobMatcher  = regexp.MustCompile(`\bjob\s*=\s*"([^"]*)"`)
)

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isIdent(c byte) bool { return isIdentStart(c) || isDigit(c) }

// skipString returns the index after the string literal that starts at i.
func skipString(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		if s[j] == '\\' && q != '`' {
			j++
			continue
		}
		if s[j] == q {
			return j + 1
		}
	}
	return len(s)
}

// skipTo returns the index after the first close at or after i outside strings.
func skipTo(s string, i int, close byte) int {
	for j := i + 1; j < len(s); {
		switch s[j] {
		case '"', '\'', '`':
			j = skipString(s, j)
		case close:
			return j + 1
		default:
			j++
		}
	}
	return len(s)
}

// dashboardQueries are the expressions of every panel and of the template variables.
func dashboardQueries(t *testing.T) []query {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var out []query
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			out = append(out, query{"panel " + p.Title, q.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil || q.Query == "" {
			if err := json.Unmarshal(v.Query, &q.Query); err != nil {
				t.Fatalf("variable %s: query %s", v.Name, v.Query)
			}
		}
		out = append(out, query{"variable " + v.Name, q.Query})
	}
	if len(out) == 0 {
		t.Fatalf("%s: no query", dashboardFile)
	}
	return out
}

// ruleQueries are the expr of every rule, read from the rule file's lines: `expr: <inline>`
// or a block scalar (`expr: |`) whose lines are indented deeper than the key.
func ruleQueries(t *testing.T) []query {
	t.Helper()
	f, err := os.Open(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keyLine := regexp.MustCompile(`^(\s*)(?:-\s+)?(alert|record|expr):\s*(.*)$`)
	var out []query
	name, block, indent := "", false, 0
	var lines []string
	flush := func() {
		if block {
			out = append(out, query{"rule " + name, strings.Join(lines, "\n")})
		}
		block, lines = false, nil
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if block {
			trimmed := strings.TrimLeft(line, " ")
			if trimmed == "" || len(line)-len(trimmed) > indent {
				lines = append(lines, trimmed)
				continue
			}
			flush()
		}
		m := keyLine.FindStringSubmatch(line)
		if m == nil || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		switch value := strings.TrimSpace(m[3]); {
		case m[2] != "expr":
			name = strings.Trim(value, `'"`)
		case strings.HasPrefix(value, "|") || strings.HasPrefix(value, ">"):
			block, indent = true, len(m[1])
		default:
			out = append(out, query{"rule " + name, strings.Trim(value, `'"`)})
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no expr", rulesFile)
	}
	return out
}

// TestMetricsOf: the reading of PromQL the check relies on.
func TestMetricsOf(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []use
	}{
		{`sum by (http_route) (rate(http_server_request_duration_seconds_count{namespace="$namespace", job="edge"}[$__rate_interval]))`,
			[]use{{"http_server_request_duration_seconds_count", "edge"}}},
		{`histogram_quantile(0.99, sum by (le, db_operation_name) (rate(db_client_operation_duration_seconds_bucket{job="booking-svc", error_type!=""}[5m]))) > 1`,
			[]use{{"db_client_operation_duration_seconds_bucket", "booking-svc"}}},
		{"vros_consumer_lag > 100\n  and\nderiv(vros_consumer_lag[5m]) > 0",
			[]use{{"vros_consumer_lag", ""}, {"vros_consumer_lag", ""}}},
		{`sum without (instance) (a_total offset 5m) / on (job) group_left (kind) b{x="}", job="catalog-svc"} or vector(0)`,
			[]use{{"a_total", ""}, {"b", "catalog-svc"}}},
		{`label_values(process_resident_memory_bytes{job=~"edge|property-svc"}, namespace)`,
			[]use{{"process_resident_memory_bytes", ""}}},
		{`count(up) * 1e3 + max(x:y:rate5m) + inf`, []use{{"up", ""}, {"x:y:rate5m", ""}}},
	} {
		if got := metricsOf(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("metricsOf(%q) = %v, want %v", tc.expr, got, tc.want)
		}
	}
	// The files' own queries parse into metrics, and those of a service's row name its job.
	for _, q := range append(dashboardQueries(t), ruleQueries(t)...) {
		if len(metricsOf(q.expr)) == 0 {
			t.Errorf("%s: no metric found in %s", q.where, q.expr)
		}
	}
	if n := len(ruleQueries(t)); n < 7 {
		t.Errorf("%d rule expressions read from %s, want every alert's", n, rulesFile)
	}
}

func (u use) String() string {
	if u.job == "" {
		return u.metric
	}
	return fmt.Sprintf("%s{job=%q}", u.metric, u.job)
}
