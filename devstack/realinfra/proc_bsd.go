//go:build unix && !linux

package realinfra

import "syscall"

func setParentDeathSignal(*syscall.SysProcAttr) {}
