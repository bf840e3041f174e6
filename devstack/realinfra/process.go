package realinfra

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// process is a server this package started, logging to a file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // of Wait, once done is closed
}

// startProcess starts cmd with its output appended to logPath. The process gets its own
// process group, so that a Ctrl-C meant for the caller reaches it only through Close, and
// on Linux it is killed if the caller dies.
func startProcess(name string, cmd *exec.Cmd, logPath string, cred *credential) (*process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = sysProcAttr(cred)
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = f.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// failure describes a process that ended when it should not have, with its last log lines.
func (p *process) failure() error {
	return fmt.Errorf("%s exited (%v); last lines of %s:\n%s", p.name, p.err, p.logPath, tail(p.logPath, 30))
}

// stop sends sig, waits up to grace for the process to end, then kills its process group.
func (p *process) stop(sig os.Signal, grace time.Duration) error {
	if p.exited() {
		return nil
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	killGroup(p.cmd.Process.Pid)
	select {
	case <-p.done:
		return fmt.Errorf("%s did not stop within %v; killed", p.name, grace)
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) survived SIGKILL", p.name, p.cmd.Process.Pid)
	}
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(string(bytes.TrimRight(b, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// run runs a short command to its end, returning its output in the error when it fails.
func run(cmd *exec.Cmd, cred *credential) ([]byte, error) {
	cmd.SysProcAttr = sysProcAttr(cred)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, bytes.TrimSpace(out))
	}
	return out, nil
}

var errNotFound = errors.New("not found")
