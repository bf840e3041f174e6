// Package tracetest proves vros's traces end to end: Jaeger (bin/jaeger, v2 all-in-one built by
// `make jaeger`) runs as a child process and receives every service's spans over OTLP/HTTP,
// a whole vros runs in this process (apitest.StartStack, embedded servers), a booking goes
// through edge with a known W3C trace context, and the trace is read back through Jaeger's
// query API (docs/tracing.md).
//
// Without bin/jaeger the tests are skipped, unless VROS_REQUIRE_JAEGER=1 (make test-go sets
// it, after building bin/jaeger), which makes that a failure.
package tracetest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/devstack/jaeger"
	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/systest/apitest"
)

const (
	adminToken = "test-admin-token-0123456789"
	jaegerBin  = "../../bin/jaeger"
	jaegerConf = "../../tools/jaeger/all-in-one.yaml"
)

var (
	st *stack.Stack
	jg *jaeger.Jaeger
	// skip, when set, is why the tests cannot run (no bin/jaeger).
	skip string
	// logs holds every line the services logged (their JSON logs go to os.Stderr).
	logs serviceLogs
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if _, err := os.Stat(jaegerBin); err != nil {
		skip = fmt.Sprintf("%s: %v: `make jaeger` builds it (VROS_REQUIRE_JAEGER=1 makes this a failure)", jaegerBin, err)
		if os.Getenv("VROS_REQUIRE_JAEGER") == "1" {
			fmt.Fprintln(os.Stderr, "tracetest:", skip)
			return 1
		}
		return m.Run()
	}
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "vros-tracetest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)

	jg, err = jaeger.Start(ctx, jaeger.Options{Bin: jaegerBin, Config: jaegerConf, LogPath: filepath.Join(tmp, "jaeger.log")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracetest: jaeger:", err)
		return 1
	}
	defer jg.Stop()

	// Every service reads these in telemetry.Setup: spans go to this Jaeger, in batches sent
	// every 100 ms rather than every 5 s (the SDK's OTEL_BSP_SCHEDULE_DELAY), so that a test
	// waits little for them. Any other OTEL_ setting of the shell is left out.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OTEL_") {
			_ = os.Unsetenv(k)
		}
	}
	_ = os.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", jg.OTLPEndpoint)
	_ = os.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")

	// The services log JSON lines to os.Stderr (telemetry.Setup takes os.Stderr when each
	// starts): a pipe in its place keeps them, for the tests that read the logs, and in
	// services.log.
	stderr := os.Stderr
	defer func() { os.Stderr = stderr }()
	stop, err := logs.capture(filepath.Join(tmp, "services.log"))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer stop()

	s, db, err := apitest.StartStack(ctx, stack.Options{Keys: stack.NewKeys(), EncryptionKey: seal.NewKey(),
		AdminToken: adminToken, LogLevel: "info", PasswordCost: 4, OutboxLease: time.Second})
	if err != nil {
		fmt.Fprintln(stderr, "tracetest:", err)
		return 1
	}
	st = s
	code := m.Run()
	_ = db.Disconnect(ctx)
	if err := st.Close(); err != nil {
		fmt.Fprintln(stderr, "stack close:", err)
	}
	return code
}

// serviceLogs is what the services wrote to os.Stderr, line by line.
type serviceLogs struct {
	mu    sync.Mutex
	lines []string
}

// capture puts a pipe in place of os.Stderr and keeps every line written to it, also in
// path; stop puts the pipe's end away and waits for the last line.
func (l *serviceLogs) capture(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	os.Stderr = w
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(io.TeeReader(r, f))
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			l.mu.Lock()
			l.lines = append(l.lines, sc.Text())
			l.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	return func() {
		_ = w.Close()
		<-done
		_ = r.Close()
		_ = f.Close()
	}, nil
}

// logLine is one JSON log line of a service.
type logLine map[string]any

func (l logLine) str(key string) string { s, _ := l[key].(string); return s }

// withTrace is every JSON line that carries trace id id.
func (l *serviceLogs) withTrace(id string) (out []logLine, raw []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if !strings.Contains(s, id) {
			continue
		}
		var line logLine
		if json.Unmarshal([]byte(s), &line) == nil && line.str("trace_id") == id {
			out = append(out, line)
			raw = append(raw, s)
		}
	}
	return out, raw
}
