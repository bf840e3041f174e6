package realinfra

import "syscall"

// setParentDeathSignal has the kernel kill a server when the process that started it
// dies (a test binary that panicked or timed out), so that none is left behind.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
