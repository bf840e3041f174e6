// Command vros-chart-test is the chart's `helm test` pod: edge is alive and ready on its
// internal port (so its MongoDB is reachable), keeps /healthz and /readyz off its public
// port, and refuses a call without credentials before it reaches any service. It reads
// EDGE_URL and EDGE_INTERNAL_URL, retries while edge starts, and exits non-zero on a failure.
// Its image is built from this repository (`make images`), so a cluster without a registry
// can run it.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	edge := strings.TrimSuffix(os.Getenv("EDGE_URL"), "/")
	if edge == "" {
		fail("EDGE_URL is not set")
	}
	internal := strings.TrimSuffix(os.Getenv("EDGE_INTERNAL_URL"), "/")
	if internal == "" {
		fail("EDGE_INTERNAL_URL is not set")
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{"/healthz", "/readyz"} {
		expect(client, http.MethodGet, internal+path, "", http.StatusOK, 15)
		expect(client, http.MethodGet, edge+path, "", http.StatusNotFound, 1)
	}
	expect(client, http.MethodPost, edge+"/api/property", `{"action":"create","property":{}}`, http.StatusUnauthorized, 1)
}

// expect sends the request up to tries times, 2 s apart, until it answers want.
func expect(client *http.Client, method, url, body string, want, tries int) {
	var last string
	for i := 0; i < tries; i++ {
		if i > 0 {
			time.Sleep(2 * time.Second)
		}
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			fail(err.Error())
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			last = err.Error()
			continue
		}
		answer, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(answer)))
		if resp.StatusCode == want {
			fmt.Printf("ok   %s %s: %s\n", method, url, last)
			return
		}
	}
	fail(fmt.Sprintf("%s %s: want %d, last answer: %s", method, url, want, last))
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "FAIL", msg)
	os.Exit(1)
}
