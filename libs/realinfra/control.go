package realinfra

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

// controlServer lets the tests stop and start the broker of servers that another process
// (vros-infra) owns. It listens on loopback, under a random path.
type controlServer struct {
	url string
	srv *http.Server
}

// ServeControl starts the control endpoint and returns its address, which Env then
// carries as VROS_INFRA_CONTROL.
func (in *Infra) ServeControl() (string, error) {
	if in.control != nil {
		return in.control.url, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
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
	handle("/kafka/stop", in.StopKafka)
	handle("/kafka/start", in.StartKafka)
	in.control = &controlServer{url: "http://" + l.Addr().String() + prefix, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = in.control.srv.Serve(l) }()
	return in.control.url, nil
}

func (c *controlServer) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.srv.Shutdown(ctx)
}

// Servers are the real servers the environment names: VROS_MONGO_URI, VROS_KAFKA_BROKERS,
// and VROS_INFRA_CONTROL when they are ours (vros-infra), so that the broker can be
// restarted.
type Servers struct {
	MongoURI     string
	KafkaBrokers []string
	control      string
}

// FromEnv returns the servers the environment names, or nil when it names none: the tests
// then use embedded ones.
func FromEnv() *Servers {
	s := &Servers{MongoURI: os.Getenv("VROS_MONGO_URI"), control: os.Getenv(EnvControl)}
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
	return s != nil && s.control != "" && len(s.KafkaBrokers) > 0
}

// StopKafka stops the broker cleanly; its data stays.
func (s *Servers) StopKafka(ctx context.Context) error { return s.call(ctx, "/kafka/stop") }

// StartKafka starts the broker again and returns once the vros topics have leaders.
func (s *Servers) StartKafka(ctx context.Context) error { return s.call(ctx, "/kafka/start") }

func (s *Servers) call(ctx context.Context, path string) error {
	if !s.CanRestartKafka() {
		return errors.New("the broker is not one vros-infra started (" + EnvControl + " is unset)")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.control+path, nil)
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
