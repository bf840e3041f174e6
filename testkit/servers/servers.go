// Package servers is the tests' side of the servers another process runs for them: the real
// ones of `make test-real` (devstack/realinfra, through vros-infra run) and the embedded
// ones a test package starts in a child process (testkit/testinfra, through vros-infra
// embedded). Tests find them through VROS_MONGO_URI, VROS_KAFKA_BROKERS and
// VROS_INFRA_CONTROL (FromEnv), and stop and start the broker through the control endpoint
// of the process that owns it (ServeControl).
package servers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// EnvControl names the environment variable holding the control address of running
// servers (ServeControl), through which a test in another process restarts the broker.
const EnvControl = "VROS_INFRA_CONTROL"

// Servers are servers another process runs: where they listen, and the control address
// through which the broker can be stopped and started (empty when it cannot).
type Servers struct {
	MongoURI     string   `json:"mongo_uri"`
	KafkaBrokers []string `json:"kafka_brokers"`
	Control      string   `json:"control,omitempty"`
}

// FromEnv returns the servers the environment names, or nil when it names none: the tests
// then use embedded ones.
func FromEnv() *Servers {
	s := &Servers{MongoURI: os.Getenv("VROS_MONGO_URI"), Control: os.Getenv(EnvControl)}
	if b := os.Getenv("VROS_KAFKA_BROKERS"); b != "" {
		s.KafkaBrokers = strings.Split(b, ",")
	}
	if s.MongoURI == "" && len(s.KafkaBrokers) == 0 {
		return nil
	}
	return s
}

// CanRestartKafka reports whether StopKafka and StartKafka can work: the broker is one that
// vros-infra started.
func (s *Servers) CanRestartKafka() bool {
	return s != nil && s.Control != "" && len(s.KafkaBrokers) > 0
}

// StopKafka stops the broker cleanly; its data stays.
func (s *Servers) StopKafka(ctx context.Context) error { return s.call(ctx, pathStopKafka) }

// StartKafka starts the broker again and returns once the vros topics have leaders.
func (s *Servers) StartKafka(ctx context.Context) error { return s.call(ctx, pathStartKafka) }

func (s *Servers) call(ctx context.Context, path string) error {
	if !s.CanRestartKafka() {
		return errors.New("the broker is not one vros-infra started (" + EnvControl + " is unset)")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Control+path, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: 3 * time.Minute}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d: %s", path, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

// readyPrefix starts the one line of standard output on which `vros-infra embedded` says
// where its servers listen (ReadyLine, ParseReadyLine).
const readyPrefix = "VROS_SERVERS "

// ReadyLine is the line (without its newline) announcing s: readyPrefix and s in JSON.
func (s *Servers) ReadyLine() string {
	b, _ := json.Marshal(s)
	return readyPrefix + string(b)
}

// ParseReadyLine reads a ReadyLine; ok is false for any other line.
func ParseReadyLine(line string) (s *Servers, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), readyPrefix)
	if !ok {
		return nil, false
	}
	s = &Servers{}
	if err := json.Unmarshal([]byte(rest), s); err != nil || s.MongoURI == "" || len(s.KafkaBrokers) == 0 {
		return nil, false
	}
	return s, true
}

const (
	pathStopKafka  = "/kafka/stop"
	pathStartKafka = "/kafka/start"
)

// Control is the endpoint through which tests in another process stop and start a broker
// (Servers.StopKafka, Servers.StartKafka). It listens on loopback, under a random path.
type Control struct {
	URL string
	srv *http.Server
}

// ServeControl starts a control endpoint calling stop and start.
func ServeControl(stop, start func(context.Context) error) (*Control, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	prefix := "/" + hex.EncodeToString(tok[:])
	mux := http.NewServeMux()
	handle := func(path string, f func(context.Context) error) {
		mux.HandleFunc("POST "+prefix+path, func(w http.ResponseWriter, r *http.Request) {
			if err := f(r.Context()); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			_, _ = io.WriteString(w, "ok\n")
		})
	}
	handle(pathStopKafka, stop)
	handle(pathStartKafka, start)
	c := &Control{URL: "http://" + l.Addr().String() + prefix, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = c.srv.Serve(l) }()
	return c, nil
}

// Close stops the endpoint.
func (c *Control) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.srv.Shutdown(ctx)
}
