package proc

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the child when its parent dies (a test's panic or
// timeout), so that no service outlives the run.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// ownGroup puts the child in a process group of its own, out of reach of the terminal's
// signals (dieWithParent's SysProcAttr stays).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr.Setpgid = true }
