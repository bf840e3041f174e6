//go:build !linux

package proc

import "os/exec"

// dieWithParent: only Linux can tie the child's life to the parent's; elsewhere the starter's
// deferred Kill is what stops it.
func dieWithParent(*exec.Cmd) {}

// ownGroup: elsewhere the child stays in its parent's process group.
func ownGroup(*exec.Cmd) {}
