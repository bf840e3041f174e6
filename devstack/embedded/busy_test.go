package embedded

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// openLocked opens a SQLite file in WAL mode with the given busy timeout, and a connection
// of it that holds the write lock until the returned func ends its transaction.
func openLocked(t *testing.T, timeoutMS string) (*sql.DB, func()) {
	t.Helper()
	installBusyHandler()
	dsn := "file:" + filepath.Join(t.TempDir(), "busy.sqlite") +
		"?_pragma=busy_timeout(" + timeoutMS + ")&_pragma=journal_mode(wal)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (v INTEGER)`); err != nil {
		t.Fatal(err)
	}
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	release := func() {
		if _, err := holder.ExecContext(ctx, `COMMIT`); err != nil {
			t.Error(err)
		}
		_ = holder.Close()
	}
	return db, release
}

// TestBusyHandlerWaitsForTheLock: a writer that finds the write lock taken is handed to
// busyWait (not SQLite's default handler, whose sleeps grow to 25 ms and more), and writes
// once the holder commits.
func TestBusyHandlerWaitsForTheLock(t *testing.T) {
	db, release := openLocked(t, "10000")
	before := busyWaits.Load()
	done := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(context.Background(), `INSERT INTO t VALUES (1)`)
		done <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for busyWaits.Load() < before+3 {
		if time.Now().After(deadline) {
			release()
			t.Fatal("the waiting writer never called busyWait: the driver runs another busy handler")
		}
		select {
		case err := <-done:
			t.Fatalf("the insert ended while the lock was held: %v", err)
		default:
		}
		time.Sleep(time.Millisecond)
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("the waiting insert failed after the lock was released: %v", err)
	}
}

// TestBusyHandlerKeepsTheTimeout: the connection's busy_timeout still bounds the wait; past
// it the writer gets SQLITE_BUSY.
func TestBusyHandlerKeepsTheTimeout(t *testing.T) {
	db, release := openLocked(t, "30")
	defer release()
	_, err := db.ExecContext(context.Background(), `INSERT INTO t VALUES (1)`)
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY {
		t.Fatalf("insert under a held lock past the timeout: %v, want SQLITE_BUSY", err)
	}
}

func TestBusyWaitSchedule(t *testing.T) {
	for _, c := range []struct {
		count        int
		wait, waited time.Duration
	}{
		{0, 50 * time.Microsecond, 0},
		{1, 100 * time.Microsecond, 50 * time.Microsecond},
		{4, 800 * time.Microsecond, 750 * time.Microsecond},
		{5, time.Millisecond, 1550 * time.Microsecond},
		{7, time.Millisecond, 3550 * time.Microsecond},
	} {
		wait, waited := busyWaitAt(c.count)
		if wait != c.wait || waited != c.waited {
			t.Errorf("busyWaitAt(%d) = %v, %v; want %v, %v", c.count, wait, waited, c.wait, c.waited)
		}
	}
}
