package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the driver FerretDB itself uses
)

// idIndexer works around a FerretDB v1 SQLite-backend mismatch: it builds each
// collection's unique `_id` index on `_ferretdb_sjson->"_id"` but filters on
// `_ferretdb_sjson->'$._id'`, so SQLite never uses that index and every lookup, update and
// delete by `_id` scans the table. An index on the exact expression the queries use turns
// them into index searches. FerretDB does not know about these indexes; SQLite keeps them
// up to date and drops them with their table.
//
// A pass holds its connection only while it looks: a connection kept open past a
// dropDatabase keeps the dropped file's -wal and -shm alive (SQLite removes them when the
// last connection closes), and FerretDB's next file of that name then spins on that stale
// WAL index (a consumer stood still at 100% CPU after a test dropped its database).
type idIndexer struct {
	dir string
	log *slog.Logger
	mu  sync.Mutex // one pass at a time
}

func newIDIndexer(dir string, log *slog.Logger) *idIndexer {
	return &idIndexer{dir: dir, log: log}
}

func (x *idIndexer) run(ctx context.Context) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		if err := x.pass(); err != nil {
			x.log.Warn("embedded mongo: _id index pass failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pass creates the missing `_id` expression indexes of every collection table.
func (x *idIndexer) pass() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	files, err := filepath.Glob(filepath.Join(x.dir, "*.sqlite"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := indexFile(f); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
	}
	return nil
}

// indexFile indexes one database file, never creating it (mode=rw): a file dropped since
// the glob stays dropped.
func indexFile(f string) error {
	db, err := sql.Open("sqlite", "file:"+f+"?mode=rw&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	err = indexTables(db)
	if err != nil && strings.Contains(err.Error(), "unable to open database file") {
		return nil // dropped meanwhile
	}
	return err
}

const idIndexSuffix = "__vros_id"

func indexTables(db *sql.DB) error {
	rows, err := db.Query(`SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index')`)
	if err != nil {
		return err
	}
	tables := map[string]bool{}
	indexed := map[string]bool{}
	for rows.Next() {
		var typ, name string
		if err := rows.Scan(&typ, &name); err != nil {
			rows.Close()
			return err
		}
		switch {
		case typ == "table" && !strings.HasPrefix(name, "_ferretdb_") && !strings.HasPrefix(name, "sqlite_"):
			tables[name] = true
		case typ == "index" && strings.HasSuffix(name, idIndexSuffix):
			indexed[strings.TrimSuffix(name, idIndexSuffix)] = true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for t := range tables {
		if indexed[t] {
			continue
		}
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (_ferretdb_sjson->'$._id')`, t+idIndexSuffix, t)
		if _, err := db.Exec(q); err != nil && !strings.Contains(err.Error(), "no such table") {
			return err
		}
	}
	return nil
}
