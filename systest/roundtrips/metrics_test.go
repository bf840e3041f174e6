package roundtrips

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sample is one line of a Prometheus text exposition.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape reads a service's /metrics on its internal listener.
func scrape(t *testing.T, internalURL string) []sample {
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
	var out []sample
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := parse(line)
		if err != nil {
			t.Fatalf("%s/metrics: %v in %q", internalURL, err, line)
		}
		out = append(out, s)
	}
	return out
}

// parse reads `name{label="value",…} value`; label values escape \\, \" and \n.
func parse(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return s, fmt.Errorf("no metric name")
	}
	s.name, line = line[:i], line[i:]
	if line[0] == '{' {
		line = line[1:]
		for !strings.HasPrefix(line, "}") {
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
					if line[0] == 'n' {
						v.WriteByte('\n')
					} else {
						v.WriteByte(line[0])
					}
					line = line[1:]
					continue
				}
				v.WriteByte(c)
			}
			s.labels[name] = v.String()
			line = strings.TrimPrefix(line, ",")
		}
		line = line[1:]
	}
	f := strings.Fields(line)
	if len(f) == 0 {
		return s, fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	s.value = v
	return s, err
}

// opsOf is vros_store_operations' sum and count for kind.
func opsOf(samples []sample, kind string) (sum, count float64) {
	for _, s := range samples {
		if s.labels["vros_request_kind"] != kind {
			continue
		}
		switch s.name {
		case "vros_store_operations_sum":
			sum += s.value
		case "vros_store_operations_count":
			count += s.value
		}
	}
	return sum, count
}

// commands are db_client_operation_duration_seconds' counts by "<operation> <collection>":
// every MongoDB command of the service, its background work's included.
func commands(samples []sample) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		if s.name == "db_client_operation_duration_seconds_count" {
			out[strings.TrimSpace(s.labels["db_operation_name"]+" "+s.labels["db_collection_name"])] += s.value
		}
	}
	return out
}
