// Package jaeger runs Jaeger (v2 all-in-one, bin/jaeger of `make jaeger`, with
// tools/jaeger/all-in-one.yaml) as a child process on loopback ports, and reads traces back
// through its query API: the OTLP receiver of the trace test (systest/tracetest) and of
// `make observe` (vros-dev with VROS_DEV_JAEGER).
package jaeger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vros/vros/devstack/proc"
)

// Options of Start.
type Options struct {
	// Bin is the jaeger binary and Config its configuration (tools/jaeger/all-in-one.yaml).
	Bin, Config string
	// LogPath receives Jaeger's output.
	LogPath string
	// OTLPAddr (the OTLP/HTTP receiver), QueryAddr (query API and UI) and GRPCAddr (query
	// gRPC API) are host:port; empty means a free loopback port.
	OTLPAddr, QueryAddr, GRPCAddr string
	// OwnGroup keeps Jaeger out of the terminal's Ctrl-C (proc.Service.OwnGroup): the
	// starter stops it after the services have sent their last spans.
	OwnGroup bool
}

// Jaeger is a running Jaeger.
type Jaeger struct {
	// OTLPEndpoint is the value of OTEL_EXPORTER_OTLP_ENDPOINT that sends spans here.
	OTLPEndpoint string
	// QueryURL serves the query API (/api/...) and the UI.
	QueryURL string
	Client

	svc *proc.Service
}

// Client reads traces from the query API at URL (http://host:port).
type Client struct{ URL string }

// ErrNotFound is Trace's error for a trace Jaeger does not hold (yet).
var ErrNotFound = errors.New("trace not found")

var client = &http.Client{Timeout: 10 * time.Second}

// Start runs Jaeger and returns once its query API answers (within a minute).
func Start(ctx context.Context, o Options) (*Jaeger, error) {
	for _, f := range []string{o.Bin, o.Config} {
		if _, err := os.Stat(f); err != nil {
			return nil, err
		}
	}
	for _, a := range []*string{&o.OTLPAddr, &o.QueryAddr, &o.GRPCAddr} {
		if *a != "" {
			continue
		}
		free, err := proc.FreeAddr()
		if err != nil {
			return nil, err
		}
		*a = free
	}
	j := &Jaeger{OTLPEndpoint: "http://" + o.OTLPAddr, QueryURL: "http://" + o.QueryAddr, Client: Client{URL: "http://" + o.QueryAddr}}
	// The OTEL_ variables a shell or a test set are for vros, not for Jaeger's own telemetry;
	// JAEGER_UI_ASSETS passes (the ports below win over any JAEGER_ a shell exported).
	var env []string
	for _, kv := range proc.WithoutVROS(os.Environ()) {
		if !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	env = append(env, "JAEGER_OTLP_HTTP="+o.OTLPAddr, "JAEGER_QUERY_HTTP="+o.QueryAddr, "JAEGER_QUERY_GRPC="+o.GRPCAddr)
	j.svc = &proc.Service{Name: "jaeger", Bin: o.Bin, LogPath: o.LogPath, Args: []string{"--config", o.Config}, Env: env, OwnGroup: o.OwnGroup,
		Ready: func() bool {
			// The query extension starts before the pipelines: the receiver is asked too.
			c, err := net.DialTimeout("tcp", o.OTLPAddr, time.Second)
			if err != nil {
				return false
			}
			_ = c.Close()
			r, err := client.Get(j.QueryURL + "/api/services")
			if err != nil {
				return false
			}
			_ = r.Body.Close()
			return r.StatusCode == http.StatusOK
		}}
	if err := j.svc.Start(ctx); err != nil {
		j.svc.Kill()
		return nil, fmt.Errorf("%w\n%s", err, j.svc.LogTail())
	}
	return j, nil
}

// Stop ends Jaeger (SIGTERM) and waits until it is gone.
func (j *Jaeger) Stop() { j.svc.Stop() }

// Running reports whether Jaeger runs.
func (j *Jaeger) Running() bool { return j.svc.Running() }

// LogTail is the end of Jaeger's output, for failure messages.
func (j *Jaeger) LogTail() string { return j.svc.LogTail() }

// Trace reads the trace whose id is traceID (32 hex digits) from GET /api/traces/<id>: the
// spans Jaeger holds of it so far (ErrNotFound when none).
func (c Client) Trace(ctx context.Context, traceID string) (*Trace, error) {
	traces, err := c.get(ctx, "/api/traces/"+url.PathEscape(traceID))
	if err != nil {
		return nil, err
	}
	if len(traces) == 0 {
		return nil, ErrNotFound
	}
	return &traces[0], nil
}

// Search reads the latest traces (at most limit) that have a span of service within
// lookback (GET /api/traces?service=...).
func (c Client) Search(ctx context.Context, service string, limit int, lookback time.Duration) ([]Trace, error) {
	q := url.Values{"service": {service}, "limit": {strconv.Itoa(limit)}, "lookback": {lookback.String()}}
	traces, err := c.get(ctx, "/api/traces?"+q.Encode())
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return traces, err
}

func (c Client) get(ctx context.Context, path string) ([]Trace, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, ErrNotFound
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d %.300s", path, resp.StatusCode, body)
	}
	var out struct {
		Data []Trace `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	return out.Data, nil
}

// Trace is one trace as Jaeger's query API (v1 JSON) answers it.
type Trace struct {
	TraceID   string             `json:"traceID"`
	Spans     []Span             `json:"spans"`
	Processes map[string]Process `json:"processes"`
}

// Span is one span; its attributes are Tags, the span kind among them (span.kind).
type Span struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []Reference `json:"references"`
	// StartTime is in microseconds since the epoch, Duration in microseconds.
	StartTime int64      `json:"startTime"`
	Duration  int64      `json:"duration"`
	Tags      []KeyValue `json:"tags"`
	// Logs are the span's events.
	Logs      []Log    `json:"logs"`
	ProcessID string   `json:"processID"`
	Warnings  []string `json:"warnings"`
}

// Reference is a span's parent (CHILD_OF) or another span it follows or links to.
type Reference struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// KeyValue is an attribute; Value is a string, bool or number as JSON has it.
type KeyValue struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Log is a span event.
type Log struct {
	Timestamp int64      `json:"timestamp"`
	Fields    []KeyValue `json:"fields"`
}

// Process is the service that reported spans: its service.name and resource attributes.
type Process struct {
	ServiceName string     `json:"serviceName"`
	Tags        []KeyValue `json:"tags"`
}

// Service is the name of the service that reported s.
func (t *Trace) Service(s Span) string { return t.Processes[s.ProcessID].ServiceName }

// Parent is the id of s's parent span in the same trace ("" for a root).
func (s Span) Parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" && r.TraceID == s.TraceID {
			return r.SpanID
		}
	}
	return ""
}

// Tag is the value of attribute key, as text ("" and false when s has none).
func (s Span) Tag(key string) (string, bool) {
	for _, kv := range s.Tags {
		if kv.Key == key {
			return fmt.Sprint(kv.Value), true
		}
	}
	return "", false
}

// Kind is s's span kind: server, client, producer, consumer or internal.
func (s Span) Kind() string {
	k, ok := s.Tag("span.kind")
	if !ok {
		return "internal"
	}
	return k
}

// treeAttrs are the attributes Tree shows of a span, when it has them.
var treeAttrs = []string{"http.route", "url.template", "http.response.status_code", "db.collection.name",
	"messaging.destination.name", "messaging.consumer.group.name", "error.type"}

// Tree is t as text: one span a line (name, service, kind, duration, a few attributes),
// children indented under their parent in the order they started; a span whose parent is not
// in t is a root.
func (t *Trace) Tree() string {
	ids := map[string]bool{}
	for _, s := range t.Spans {
		ids[s.SpanID] = true
	}
	children := map[string][]Span{}
	var roots []Span
	for _, s := range t.Spans {
		if p := s.Parent(); p != "" && ids[p] {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	byStart := func(a, b Span) int { return int(a.StartTime - b.StartTime) }
	var b strings.Builder
	var walk func(s Span, depth int)
	walk = func(s Span, depth int) {
		fmt.Fprintf(&b, "%s%s [%s %s] %s", strings.Repeat("  ", depth), s.OperationName, t.Service(s), s.Kind(),
			(time.Duration(s.Duration) * time.Microsecond).String())
		for _, k := range treeAttrs {
			if v, ok := s.Tag(k); ok {
				fmt.Fprintf(&b, " %s=%s", k, v)
			}
		}
		b.WriteByte('\n')
		kids := children[s.SpanID]
		slices.SortFunc(kids, byStart)
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	slices.SortFunc(roots, byStart)
	for _, r := range roots {
		walk(r, 0)
	}
	return b.String()
}
