//go:build !linux

package hookcrash

import "os/exec"

// dieWithParent: only Linux can tie the child's life to the parent's; elsewhere TestMain's
// deferred kill is what stops it.
func dieWithParent(*exec.Cmd) {}
