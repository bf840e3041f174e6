package apitest

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// MetricSample is one line of a Prometheus scrape: a series and its value.
type MetricSample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// ScrapeMetrics reads a service's /metrics (Prometheus text format) on its internal listener,
// with a client of its own: the default one checks edge's exchanges against the OpenAPI
// documents.
func ScrapeMetrics(t testing.TB, internalURL string) []MetricSample {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(internalURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s/metrics: HTTP %d", internalURL, resp.StatusCode)
	}
	var out []MetricSample
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := ParseMetricLine(line)
		if err != nil {
			t.Fatalf("%s/metrics: %v in %q", internalURL, err, line)
		}
		out = append(out, s)
	}
	return out
}

// ParseMetricLine reads `name{label="value",…} value [timestamp]`; values escape \\, \" and \n.
func ParseMetricLine(line string) (MetricSample, error) {
	s := MetricSample{Labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return s, fmt.Errorf("no metric name")
	}
	s.Name, line = line[:i], line[i:]
	if line[0] == '{' {
		line = line[1:]
		for {
			if strings.HasPrefix(line, "}") {
				line = line[1:]
				break
			}
			eq := strings.Index(line, `="`)
			if eq <= 0 {
				return s, fmt.Errorf("bad label")
			}
			name := line[:eq]
			line = line[eq+2:]
			var v strings.Builder
			for {
				if line == "" {
					return s, fmt.Errorf("unterminated label value")
				}
				c := line[0]
				line = line[1:]
				if c == '"' {
					break
				}
				if c == '\\' && line != "" {
					switch line[0] {
					case 'n':
						v.WriteByte('\n')
					default:
						v.WriteByte(line[0])
					}
					line = line[1:]
					continue
				}
				v.WriteByte(c)
			}
			s.Labels[name] = v.String()
			line = strings.TrimPrefix(line, ",")
		}
	}
	f := strings.Fields(line)
	if len(f) == 0 {
		return s, fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return s, err
	}
	s.Value = v
	return s, nil
}
