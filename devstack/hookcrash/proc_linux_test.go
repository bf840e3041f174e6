package hookcrash

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the child when the test binary dies (a panic, a
// timeout), so that no integration-svc outlives the run.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
