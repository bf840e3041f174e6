// Command vros-runc is an OCI runtime wrapper for Docker engines that run inside a sandbox
// whose capability bounding set is smaller than the default one (CAP_SYS_RESOURCE missing on
// our build machines). runc refuses a container spec that asks for a capability the process
// cannot have, so `docker run --privileged` (kind nodes) fails there. Before `create` and
// `run`, the wrapper removes from the bundle's config.json every capability missing from its
// own bounding set (and before `exec`, from the process spec), then executes the real runc
// with the same arguments. Where nothing is missing it changes nothing.
//
//	dockerd --add-runtime vros-runc=/path/to/vros-runc --default-runtime vros-runc
//
// VROS_RUNC names the real runtime (default: runc on PATH).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// capNames maps capability numbers to the names OCI specs use (linux/capability.h).
var capNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
	"CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
	"CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ",
	"CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "vros-runc:", err)
		os.Exit(1)
	}
}

func run() error {
	runc := os.Getenv("VROS_RUNC")
	if runc == "" {
		runc = "runc"
	}
	path, err := exec.LookPath(runc)
	if err != nil {
		return err
	}
	bundle, isCreate := bundleOf(os.Args[1:])
	process, isExec := processOf(os.Args[1:])
	if isCreate || isExec {
		missing, err := missingCaps()
		if err != nil {
			return err
		}
		if isCreate {
			err = dropMissingCaps(filepath.Join(bundle, "config.json"), missing, "process", "capabilities")
		} else {
			// `docker exec` into a privileged container asks for the same capabilities.
			err = dropMissingCaps(process, missing, "capabilities")
		}
		if err != nil {
			return err
		}
	}
	return syscall.Exec(path, append([]string{runc}, os.Args[1:]...), os.Environ())
}

// bundleOf returns the bundle directory of a `create` or `run` invocation (runc's default
// is the working directory).
func bundleOf(args []string) (string, bool) {
	command := -1
	for i, a := range args {
		if a == "create" || a == "run" {
			command = i
			break
		}
	}
	if command < 0 {
		return "", false
	}
	for i := command + 1; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--bundle" || a == "-b":
			if i+1 < len(args) {
				return args[i+1], true
			}
		case strings.HasPrefix(a, "--bundle="):
			return strings.TrimPrefix(a, "--bundle="), true
		}
	}
	return ".", true
}

// processOf returns the process spec file of an `exec` invocation (--process/-p).
func processOf(args []string) (string, bool) {
	command := slices.Index(args, "exec")
	if command < 0 {
		return "", false
	}
	for i := command + 1; i < len(args); i++ {
		switch a := args[i]; {
		case (a == "--process" || a == "-p") && i+1 < len(args):
			return args[i+1], true
		case strings.HasPrefix(a, "--process="):
			return strings.TrimPrefix(a, "--process="), true
		}
	}
	return "", false
}

// dropMissingCaps rewrites the JSON file at specPath only when the capability sets found
// under path name a missing capability.
func dropMissingCaps(specPath string, missing map[string]bool, path ...string) error {
	if len(missing) == 0 {
		return nil
	}
	raw, err := os.ReadFile(specPath)
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		return fmt.Errorf("%s: %w", specPath, err)
	}
	caps := spec
	for _, key := range path {
		caps, _ = caps[key].(map[string]any)
	}
	changed := false
	for set, list := range caps {
		names, _ := list.([]any)
		kept := names[:0:0]
		for _, n := range names {
			if s, _ := n.(string); missing[s] {
				changed = true
				continue
			}
			kept = append(kept, n)
		}
		caps[set] = kept
	}
	if !changed {
		return nil
	}
	out, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	return os.WriteFile(specPath, out, 0o600)
}

// missingCaps reads CapBnd of this process and names the known capabilities it lacks.
func missingCaps() (map[string]bool, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		hex, ok := strings.CutPrefix(s.Text(), "CapBnd:")
		if !ok {
			continue
		}
		bnd, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
		if err != nil {
			return nil, err
		}
		missing := map[string]bool{}
		for i, name := range capNames {
			if bnd&(1<<i) == 0 {
				missing[name] = true
			}
		}
		return missing, nil
	}
	return nil, fmt.Errorf("no CapBnd in /proc/self/status")
}
