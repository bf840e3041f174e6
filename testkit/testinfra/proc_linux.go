package testinfra

import "syscall"

// sysProcAttr has the kernel send the child SIGTERM when the test process dies, even by
// SIGKILL: it then stops its servers and removes its data.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} }
