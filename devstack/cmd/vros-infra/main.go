//go:build unix

// Command vros-infra runs the real servers of devstack/realinfra — PostgreSQL with FerretDB
// in front of it, and a single-node Apache Kafka — on loopback ports, each in a temporary
// folder; or the embedded ones of devstack/embedded in a process of their own.
//
//	vros-infra run -- CMD ARGS…   start them, run CMD with VROS_MONGO_URI, VROS_KAFKA_BROKERS
//	                              and VROS_INFRA_CONTROL set, stop them; exit with CMD's status
//	                              (make test-real)
//	vros-infra up                 start them in the background, print the variables to
//	                              export (make infra-up); state in .data/infra
//	vros-infra env                print them again
//	vros-infra down               stop what up started (make infra-down)
//	vros-infra embedded           run the embedded servers (FerretDB on SQLite, kfake) until
//	                              stdin closes or a signal; print where they listen on one
//	                              line (testkit/testinfra, the services' tests, runs it)
//
// The variables go to standard output as export lines, everything else to standard error,
// so `eval "$(vros-infra up)"` sets them in a shell.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/vros/vros/devstack/embedded"
	"github.com/vros/vros/devstack/realinfra"
	"github.com/vros/vros/testkit/servers"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	stateDir := fs.String("state", ".data/infra", "folder of the state of `up` (state.json, infra.log); of the data of `embedded` (default: a temporary folder)")
	_ = fs.Parse(os.Args[2:])
	stateSet := false
	fs.Visit(func(f *flag.Flag) { stateSet = stateSet || f.Name == "state" })
	var err error
	switch os.Args[1] {
	case "run":
		var code int
		code, err = runWith(fs.Args())
		if err == nil {
			os.Exit(code)
		}
	case "up":
		err = up(*stateDir)
	case "env":
		var st *state
		if st, err = readState(*stateDir); err == nil {
			printEnv(st)
		}
	case "down":
		err = down(*stateDir)
	case "serve":
		err = serve(*stateDir)
	case "embedded":
		dir := ""
		if stateSet {
			dir = *stateDir
		}
		err = runEmbedded(dir)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vros-infra:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: vros-infra run -- CMD [ARGS…] | up | env | down | embedded   [-state DIR]")
	os.Exit(2)
}

func logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
			return slog.Attr{}
		}
		return a
	}})).With("component", "vros-infra")
}

// runEmbedded runs the embedded servers (FerretDB on SQLite and kfake, devstack/embedded,
// what make run uses) with their data in dir (a temporary folder, removed at the end, when
// dir is empty) and a control endpoint that stops and starts the broker. It prints where
// they listen on one line of standard output (testkit/servers.ReadyLine) and runs until
// SIGTERM, Ctrl-C or, when standard input is a pipe, until that pipe closes: a test
// package runs it as its child (testkit/testinfra), and the scale benchmark so that the
// servers' memory and processor time are not the load generator's.
func runEmbedded(dir string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			cancel()
		}()
	}
	in, err := embedded.Start(ctx, embedded.Options{Dir: dir, Log: logger()})
	if err != nil {
		return err
	}
	defer in.Close()
	ctl, err := servers.ServeControl(
		func(context.Context) error { in.StopKafka(); return nil },
		func(context.Context) error { return in.StartKafka() })
	if err != nil {
		return err
	}
	defer ctl.Close()
	s := &servers.Servers{MongoURI: in.MongoURI, KafkaBrokers: in.KafkaBrokers, Control: ctl.URL}
	if _, err := fmt.Println(s.ReadyLine()); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// runWith starts the servers, runs the command against them and stops them.
func runWith(args []string) (int, error) {
	if len(args) == 0 {
		return 0, errors.New("run: no command given (vros-infra run -- CMD ARGS…)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	start := time.Now()
	in, err := realinfra.Start(ctx, realinfra.Options{Log: logger()})
	stop()
	if err != nil {
		return 0, err
	}
	defer func() {
		if err := in.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "vros-infra: stopping the servers:", err)
		}
	}()
	if _, err := in.ServeControl(); err != nil {
		return 0, err
	}
	fmt.Fprintf(os.Stderr, "vros-infra: real servers up in %v: %s\n", time.Since(start).Round(100*time.Millisecond), in.Describe())

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), in.Env()...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// A Ctrl-C reaches the command from the terminal; a SIGTERM is passed on. Either way the
	// servers are stopped once the command has ended.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	go func() {
		for s := range sigs {
			if s == syscall.SIGTERM {
				_ = cmd.Process.Signal(s)
			}
		}
	}()
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return max(exit.ExitCode(), 1), nil
	}
	return 0, err
}

// state is what `up` leaves for `env` and `down`.
type state struct {
	PID      int      `json:"pid"`
	Env      []string `json:"env"`
	Servers  string   `json:"servers"`
	Dir      string   `json:"dir"`
	Started  string   `json:"started"`
	LogFile  string   `json:"log"`
	stateDir string
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

func readState(dir string) (*state, error) {
	b, err := os.ReadFile(statePath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no servers running from %s (make infra-up starts them)", dir)
	}
	if err != nil {
		return nil, err
	}
	st := &state{stateDir: dir}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("%s: %w", statePath(dir), err)
	}
	return st, nil
}

// alive reports whether pid is a running vros-infra (not a pid reused since a crash).
func alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil { // Linux
		return strings.Contains(string(b), "vros-infra")
	}
	return true
}

func printEnv(st *state) {
	fmt.Fprintf(os.Stderr, "vros-infra: %s\nvros-infra: data in %s, log %s; stop them with make infra-down\n", st.Servers, st.Dir, st.LogFile)
	for _, e := range st.Env {
		k, v, _ := strings.Cut(e, "=")
		fmt.Printf("export %s='%s'\n", k, v)
	}
}

// up starts `vros-infra serve` in a session of its own and waits until it has written its
// state.
func up(dir string) error {
	if st, err := readState(dir); err == nil {
		if alive(st.PID) {
			fmt.Fprintln(os.Stderr, "vros-infra: already running")
			printEnv(st)
			return nil
		}
		_ = os.Remove(statePath(dir)) // left by a crash
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	logPath := filepath.Join(dir, "infra.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "serve", "-state", dir)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fmt.Fprintln(os.Stderr, "vros-infra: starting PostgreSQL + FerretDB and Kafka (the first time, Maven fetches Kafka)…")
	deadline := time.After(10 * time.Minute)
	for {
		select {
		case err := <-exited:
			b, _ := os.ReadFile(logPath)
			return fmt.Errorf("the servers did not start (%v):\n%s", err, b)
		case <-deadline:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			return fmt.Errorf("the servers did not start within 10 minutes; see %s", logPath)
		case <-time.After(100 * time.Millisecond):
		}
		if st, err := readState(dir); err == nil {
			printEnv(st)
			return nil
		}
	}
}

// serve starts the servers, writes their state and keeps them until SIGTERM or SIGINT.
func serve(dir string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	in, err := realinfra.Start(ctx, realinfra.Options{Log: logger()})
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(statePath(dir)) }()
	defer func() {
		if err := in.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "vros-infra: stopping the servers:", err)
		}
	}()
	if _, err := in.ServeControl(); err != nil {
		return err
	}
	st := state{PID: os.Getpid(), Env: in.Env(), Servers: in.Describe(), Dir: in.Dir,
		Started: time.Now().UTC().Format(time.RFC3339), LogFile: filepath.Join(dir, "infra.log")}
	b, _ := json.MarshalIndent(st, "", "  ")
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, statePath(dir)); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "vros-infra: serving:", st.Servers)
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "vros-infra: stopping")
	return nil
}

// down stops the servers of up and waits until they are gone.
func down(dir string) error {
	st, err := readState(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vros-infra:", err)
		return nil
	}
	if !alive(st.PID) {
		fmt.Fprintln(os.Stderr, "vros-infra: not running (removing a stale state file)")
		return os.Remove(statePath(dir))
	}
	if err := syscall.Kill(st.PID, syscall.SIGTERM); err != nil {
		return err
	}
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(statePath(dir)); errors.Is(err, os.ErrNotExist) {
			fmt.Fprintln(os.Stderr, "vros-infra: stopped")
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("pid %d did not stop within 3 minutes; see %s", st.PID, st.LogFile)
}
