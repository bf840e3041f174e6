// Package testinfra gives a service's or a library's tests the servers they run against
// without linking them: the embedded MongoDB-wire server (FerretDB on SQLite) and Kafka
// broker (kfake) run in a child process, `vros-infra embedded` (devstack/cmd/vros-infra), one
// per test package, so that no module but devstack and systest requires FerretDB, SQLite
// or franz-go. The tests talk to them with the real MongoDB driver and the real Kafka
// client, exactly as to real servers.
//
// The child is the binary VROS_INFRA_BIN names (the Makefile builds bin/vros-infra and sets
// it), else `go run github.com/vros/vros/devstack/cmd/vros-infra embedded`, which works
// inside the workspace (go.work) and is cached by Go after the first build. It ends with the
// test process: its standard input is a pipe it watches, and on Linux the kernel signals it
// when its parent dies.
package testinfra

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/vros/vros/testkit/servers"
)

// EnvBin names the environment variable holding the path of a built vros-infra.
const EnvBin = "VROS_INFRA_BIN"

// Infra is the embedded servers a child process runs for one test package.
type Infra struct {
	MongoURI     string
	KafkaBrokers []string

	ctl    *servers.Servers
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{} // closed when the child has exited
	once   sync.Once
}

// startTimeout bounds the wait for the child's servers: a `go run` may first build
// vros-infra (a minute or two on a cold cache of this 2-core machine); a built binary starts
// them in about a second.
func startTimeout(goRun bool) time.Duration {
	if goRun {
		return 5 * time.Minute
	}
	return time.Minute
}

// Start runs `vros-infra embedded` and returns once it has said where its servers listen.
// Close stops it.
func Start(ctx context.Context) (*Infra, error) {
	var cmd *exec.Cmd
	bin := os.Getenv(EnvBin)
	if bin != "" {
		cmd = exec.Command(bin, "embedded")
	} else {
		cmd = exec.Command("go", "run", "github.com/vros/vros/devstack/cmd/vros-infra", "embedded")
	}
	// The child gets no VROS_ server variables: its servers are its own.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "VROS_MONGO_URI=") && !strings.HasPrefix(kv, "VROS_KAFKA_BROKERS=") &&
			!strings.HasPrefix(kv, servers.EnvControl+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.SysProcAttr = sysProcAttr()
	tail := &tailWriter{max: 16 << 10}
	cmd.Stderr = io.MultiWriter(os.Stderr, tail)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("testinfra: start %s: %w", strings.Join(cmd.Args, " "), err)
	}
	in := &Infra{cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	ready := make(chan *servers.Servers, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			if s, ok := servers.ParseReadyLine(sc.Text()); ok && !sent {
				ready <- s
				sent = true
			}
		}
		// Its output read to the end, the child is gone or going.
		_ = cmd.Wait()
		close(in.exited)
	}()
	timeout := startTimeout(bin == "")
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	fail := func(why string) error {
		in.Close()
		return fmt.Errorf("testinfra: %s %s; its standard error ended with:\n%s",
			strings.Join(cmd.Args, " "), why, tail.String())
	}
	select {
	case s := <-ready:
		in.MongoURI, in.KafkaBrokers, in.ctl = s.MongoURI, s.KafkaBrokers, s
		return in, nil
	case <-in.exited:
		return nil, fail(fmt.Sprintf("exited (%v) before its servers were up", cmd.ProcessState))
	case <-timer.C:
		return nil, fail(fmt.Sprintf("did not report its servers within %v", timeout))
	case <-ctx.Done():
		return nil, fail(ctx.Err().Error())
	}
}

// StopKafka stops the broker; its data stays for StartKafka.
func (in *Infra) StopKafka() error { return in.ctl.StopKafka(context.Background()) }

// StartKafka starts the broker again on its port with its data. Tests use StopKafka and
// StartKafka to show that events written while Kafka is down are delivered later.
func (in *Infra) StartKafka() error { return in.ctl.StartKafka(context.Background()) }

// Close stops the child (closing its standard input) and waits for it to have removed its
// data; it kills the child if it has not exited within 30 seconds.
func (in *Infra) Close() {
	in.once.Do(func() {
		_ = in.stdin.Close()
		select {
		case <-in.exited:
		case <-time.After(30 * time.Second):
			_ = in.cmd.Process.Kill()
			<-in.exited
		}
	})
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > w.max {
		w.b = append(w.b[:0], w.b[len(w.b)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.b) == 0 {
		return "(nothing)"
	}
	return string(w.b)
}
