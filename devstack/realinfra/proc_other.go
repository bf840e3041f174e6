//go:build !unix

package realinfra

import "syscall"

func sysProcAttr(*credential) *syscall.SysProcAttr { return nil }

func killGroup(int) {}
