//go:build !linux

package testinfra

import "syscall"

// sysProcAttr: elsewhere the child ends when its standard input closes, which the kernel
// does when the test process dies.
func sysProcAttr() *syscall.SysProcAttr { return nil }
