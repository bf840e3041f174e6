package embedded

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"modernc.org/libc"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite's busy handler, made to wait as long as a lock is held rather than ten times longer.
//
// FerretDB opens its SQLite files with busy_timeout(10000), which installs SQLite's default
// busy handler: a connection that finds the file's write lock taken sleeps 1, 2, 5, 10, 15,
// 20, 25 … ms between tries (sqliteDefaultBusyCallback). One insert holds that lock for well
// under a millisecond, so a writer that collided sleeps several times longer than the lock
// was held, and one that collides a few times running waits tens of milliseconds while the
// lock stands free. With 16 clients creating bookings that was 3.7 ms of sleep per create on
// average and most of the create's p99 (docs/embedded.md, "Writers that collide").
//
// installBusyHandler gives every connection the process's SQLite driver opens (the
// driver's connection hook, so FerretDB's too) busyWait instead: the next try after 50 µs,
// the wait doubling up to 1 ms, within the same timeout (the connection's busy_timeout). The
// driver has no busy-handler setting, so the hook reaches the connection's handle through
// two unexported fields; TestBusyHandlerWaitsForTheLock fails if a driver upgrade moves them
// or sets its own handler again.

const (
	busyFirstWait = 50 * time.Microsecond
	busyMaxWait   = time.Millisecond
)

var (
	installBusyOnce sync.Once
	// busyWaits counts busyWait's calls (its test sees that it is the handler in use).
	busyWaits atomic.Int64
)

// installBusyHandler registers, once per process, the connection hook that sets busyWait.
func installBusyHandler() {
	installBusyOnce.Do(func() { sqlite.RegisterConnectionHook(setBusyHandler) })
}

// busyWaitFn is busyWait as the C-to-Go translated SQLite takes a callback: the address of
// a Go func value.
var busyWaitFn = *(*uintptr)(unsafe.Pointer(&struct {
	f func(*libc.TLS, uintptr, int32) int32
}{busyWait}))

// setBusyHandler replaces a new connection's busy handler with busyWait, handing it the
// connection's busy timeout as its argument (sqlite3_busy_handler clears the timeout that
// busy_timeout set).
func setBusyHandler(c sqlite.ExecQuerierContext, _ string) error {
	timeout, err := busyTimeout(c)
	if err != nil {
		return err
	}
	v := reflect.ValueOf(c)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return errors.New("embedded: the SQLite driver's connection is not a struct pointer")
	}
	dbField, tlsField := v.Elem().FieldByName("db"), v.Elem().FieldByName("tls")
	if dbField.Kind() != reflect.Uintptr || tlsField.Kind() != reflect.Pointer ||
		tlsField.Type().Elem() != reflect.TypeOf(libc.TLS{}) {
		return errors.New("embedded: the SQLite driver's connection has no db handle and TLS")
	}
	tls := (*libc.TLS)(tlsField.UnsafePointer())
	if rc := sqlite3.Xsqlite3_busy_handler(tls, uintptr(dbField.Uint()), busyWaitFn, timeout); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("embedded: sqlite3_busy_handler: code %d", rc)
	}
	return nil
}

// busyTimeout is the connection's busy_timeout, in milliseconds.
func busyTimeout(c sqlite.ExecQuerierContext) (uintptr, error) {
	rows, err := c.QueryContext(context.Background(), "PRAGMA busy_timeout", nil)
	if err != nil {
		return 0, fmt.Errorf("embedded: read busy_timeout: %w", err)
	}
	defer rows.Close()
	v := make([]driver.Value, 1)
	if err := rows.Next(v); err != nil {
		return 0, fmt.Errorf("embedded: read busy_timeout: %w", err)
	}
	ms, ok := v[0].(int64)
	if !ok || ms < 0 {
		return 0, fmt.Errorf("embedded: busy_timeout is %v", v[0])
	}
	return uintptr(ms), nil
}

// busyWait is the busy handler: timeoutMS is the connection's busy timeout, count how many
// times it was called for this lock. It returns 0 (give up: SQLITE_BUSY) once the timeout
// is spent.
func busyWait(_ *libc.TLS, timeoutMS uintptr, count int32) int32 {
	busyWaits.Add(1)
	timeout := time.Duration(timeoutMS) * time.Millisecond
	wait, waited := busyWaitAt(int(count))
	if waited >= timeout {
		return 0
	}
	time.Sleep(min(wait, timeout-waited))
	return 1
}

// busyWaitAt is the count-th wait (from 0) and the time waited before it.
func busyWaitAt(count int) (wait, waited time.Duration) {
	wait = busyFirstWait
	for range count {
		waited += wait
		wait = min(2*wait, busyMaxWait)
	}
	return wait, waited
}
