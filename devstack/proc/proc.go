// Package proc runs vros's services as child processes, each its own binary built from the
// workspace, as a deployment runs them: the tests that kill a service with kill -9
// (systest/hookcrash) and the scale benchmark, which measures each service's resident
// memory (systest/bench, BenchmarkScale).
package proc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Build builds the main package at path (relative to the caller's folder, resolved through
// go.work) into dir and returns the binary's path.
func Build(dir, name, path string) (string, error) {
	bin := filepath.Join(dir, name)
	out, err := exec.Command("go", "build", "-o", bin, path).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", name, err, out)
	}
	return bin, nil
}

// BuildService builds the service's main package at path (as Build) into dir and picks the
// two loopback addresses it is to listen on, its API's and its internal port's (FreeAddr):
// what a test needs to run a service as its own process, so that a kill is a real kill -9.
func BuildService(dir, name, path string) (bin, addr, internal string, err error) {
	if bin, err = Build(dir, name, path); err != nil {
		return "", "", "", err
	}
	if addr, err = FreeAddr(); err != nil {
		return "", "", "", err
	}
	if internal, err = FreeAddr(); err != nil {
		return "", "", "", err
	}
	return bin, addr, internal, nil
}

// FreeAddr is a loopback address whose port is free now. A service started on it binds it
// again on every restart, so that the routes to it stay the same.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// WithoutVROS is env without the VROS_ variables a shell may have exported (make
// test-real's servers): a child gets exactly the variables its starter names.
func WithoutVROS(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "VROS_") {
			out = append(out, kv)
		}
	}
	return out
}

// Service is one service running, or not, as a child process. Its output goes to LogPath.
type Service struct {
	Name, Bin, LogPath string
	Args, Env          []string
	// InternalURL is the service's internal listener (VROS_INTERNAL_ADDR): Start waits until
	// its /readyz answers 200.
	InternalURL string
	// Ready, when set, is asked instead of /readyz.
	Ready func() bool
	// OwnGroup runs the child in a process group of its own (Linux): a terminal's Ctrl-C then
	// reaches only the parent, which stops the child when it is done with it (make observe's
	// Jaeger outlives the services' last spans).
	OwnGroup bool

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	starts int
}

var probe = &http.Client{Timeout: 5 * time.Second}

// Start runs the binary and returns once its /readyz answers 200 (or Ready reports true),
// within a minute.
func (p *Service) Start(ctx context.Context) error {
	p.mu.Lock()
	if p.cmd != nil {
		p.mu.Unlock()
		return fmt.Errorf("%s is already running", p.Name)
	}
	logf, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		p.mu.Unlock()
		return err
	}
	p.starts++
	fmt.Fprintf(logf, "---- start %d at %s\n", p.starts, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(p.Bin, p.Args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = p.Env, logf, logf
	dieWithParent(cmd)
	if p.OwnGroup {
		ownGroup(cmd)
	}
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		_ = logf.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = logf.Close()
		close(exited)
	}()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()

	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			p.mu.Lock()
			p.cmd = nil
			p.mu.Unlock()
			return fmt.Errorf("%s exited before it was ready", p.Name)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if p.Ready != nil {
			if p.Ready() {
				return nil
			}
		} else if r, err := probe.Get(p.InternalURL + "/readyz"); err == nil {
			_ = r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("%s not ready within a minute", p.Name)
}

// Kill sends SIGKILL (kill -9) and waits until the process is gone. It does nothing when
// the process is not running.
func (p *Service) Kill() { p.signal(syscall.SIGKILL) }

// Stop sends SIGTERM, the way Kubernetes stops a pod, and waits until the process is gone.
func (p *Service) Stop() { p.signal(syscall.SIGTERM) }

func (p *Service) signal(s os.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(s)
	<-p.exited
	p.cmd = nil
}

// Running reports whether the child runs.
func (p *Service) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// LogTail is the end of the child's log, for failure messages.
func (p *Service) LogTail() string {
	b, _ := os.ReadFile(p.LogPath)
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	return string(b)
}

// CPU is the processor time the running child has used so far (user and system, from
// /proc/<pid>/stat; Linux only).
func (p *Service) CPU() (time.Duration, error) {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd == nil {
		return 0, fmt.Errorf("%s is not running", p.Name)
	}
	return CPUOf(cmd.Process.Pid)
}

// CPUOf is the processor time process pid has used so far (user and system, at the kernel's
// 100 ticks a second; Linux only).
func CPUOf(pid int) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	// The fields after the command's name, which is in parentheses and may hold spaces:
	// state is field 3, utime 14 and stime 15.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	user, err1 := strconv.ParseInt(f[11], 10, 64)
	sys, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %v %v", pid, err1, err2)
	}
	return time.Duration(user+sys) * 10 * time.Millisecond, nil
}

// Memory is what the kernel counts of a process's memory, in bytes: what a container's
// memory limit is compared with.
type Memory struct {
	RSS  int64 // resident now (VmRSS)
	Peak int64 // the most resident since it started (VmHWM)
}

// Memory reads the running child's /proc/<pid>/status (Linux only).
func (p *Service) Memory() (Memory, error) {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd == nil {
		return Memory{}, fmt.Errorf("%s is not running", p.Name)
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "status"))
	if err != nil {
		return Memory{}, err
	}
	var m Memory
	for _, line := range strings.Split(string(b), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		switch {
		case err != nil:
		case name == "VmRSS":
			m.RSS = kb << 10
		case name == "VmHWM":
			m.Peak = kb << 10
		}
	}
	if m.RSS == 0 {
		return m, errors.New("no VmRSS in " + p.Name + "'s status")
	}
	return m, nil
}
