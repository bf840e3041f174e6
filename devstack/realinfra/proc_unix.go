//go:build unix

package realinfra

import "syscall"

func sysProcAttr(cred *credential) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(a)
	if cred != nil {
		a.Credential = &syscall.Credential{Uid: cred.uid, Gid: cred.gid, NoSetGroups: true}
	}
	return a
}

// killGroup kills the process group pid leads.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
