package realinfra

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"time"
)

// credential is the unprivileged user PostgreSQL runs as when we are root: it refuses to
// run as root.
type credential struct {
	name     string
	uid, gid uint32
}

// unprivileged returns nobody's credential when running as root, nil otherwise.
func unprivileged() (*credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL refuses to run as root and there is no user nobody to run it as: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user nobody: uid %q gid %q", u.Uid, u.Gid)
	}
	return &credential{name: u.Username, uid: uint32(uid), gid: uint32(gid)}, nil
}

// postgresBin finds the folder of PostgreSQL's server programs: beside `postgres` on the
// PATH, or Debian's /usr/lib/postgresql/<version>/bin (newest first).
func postgresBin() (string, error) {
	var dirs []string
	if p, err := exec.LookPath("postgres"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	debian, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(debian, func(i, j int) bool { return pgMajor(debian[i]) > pgMajor(debian[j]) })
	dirs = append(dirs, debian...)
	dirs = append(dirs, "/usr/local/pgsql/bin", "/opt/homebrew/bin", "/usr/local/bin")
	for _, d := range dirs {
		if isFile(filepath.Join(d, "postgres")) && isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "pg_isready")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("PostgreSQL (postgres, initdb, pg_isready) %w on the PATH or in /usr/lib/postgresql/*/bin; "+
		"install it (Debian: apt-get install postgresql)", errNotFound)
}

func pgMajor(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// postgres is a running PostgreSQL server.
// ferretPool is the size of FerretDB's PostgreSQL pool, all opened up front (the server's
// max_connections is 300).
const ferretPool = 128

type postgres struct {
	proc *process
	URL  string // FerretDB's: with its pool's size
	// Plain is the same cluster for a client of its own (the _id indexer).
	Plain   string
	Version string
}

// startPostgres creates a cluster in dir (unless there is one) and starts it on a free
// loopback port, without a Unix socket. Durability is traded for speed (fsync off): these
// are test and development servers.
func startPostgres(ctx context.Context, dir string) (*postgres, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	cred, err := unprivileged()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if cred != nil {
		// nobody must reach the folder: its parents are ours (0755, see Start), it is nobody's.
		if err := os.Chown(dir, int(cred.uid), int(cred.gid)); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	pgEnv := append(os.Environ(), "LC_ALL=C", "LANG=C")
	if !isFile(filepath.Join(data, "PG_VERSION")) {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
			"-E", "UTF8", "--locale=C", "--no-sync")
		cmd.Dir, cmd.Env = dir, pgEnv
		if _, err := run(cmd, cred); err != nil {
			if cred != nil {
				err = fmt.Errorf("%w\n(initdb runs as %s: every parent folder of %s must be searchable by it)", err, cred.name, dir)
			}
			return nil, err
		}
	}
	out, err := run(exec.CommandContext(ctx, filepath.Join(bin, "postgres"), "--version"), nil)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=64MB")
	cmd.Dir, cmd.Env = dir, pgEnv
	proc, err := startProcess("postgres", cmd, filepath.Join(dir, "postgres.log"), cred)
	if err != nil {
		return nil, err
	}
	// FerretDB's pool checks every new connection with a query it gives 2 s: opened under a
	// test's load on two cores, a connection could miss that and fail the command that asked
	// for it (seen once in 5 000 requests). The pool opens all its connections up front.
	// FerretDB v1's findAndModify keeps its query's connection while it takes a second one
	// for the update: as many concurrent findAndModify as the pool has connections deadlock
	// FerretDB for good (seen with 20 at once and 16 connections: every command hung). The
	// pool is sized above the tests' concurrency (docs/real-servers.md).
	pg := &postgres{proc: proc, URL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&pool_max_conns=%d&pool_min_conns=%[2]d", port, ferretPool),
		Plain: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), Version: "PostgreSQL"}
	if m := regexp.MustCompile(`\(PostgreSQL\) (\S+)`).FindSubmatch(out); m != nil { // postgres (PostgreSQL) 15.18 (Debian …)
		pg.Version += " " + string(m[1])
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ready := exec.CommandContext(ctx, filepath.Join(bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "postgres")
		if ready.Run() == nil {
			return pg, nil
		}
		if proc.exited() {
			return nil, proc.failure()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = pg.stop()
			return nil, fmt.Errorf("postgres did not accept connections within a minute; see %s", proc.logPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop shuts the server down ("fast": sessions are ended, nothing is left to recover).
func (pg *postgres) stop() error { return pg.proc.stop(os.Interrupt, 30*time.Second) }
