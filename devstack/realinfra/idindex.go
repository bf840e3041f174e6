package realinfra

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vros/vros/libs/periodic"
)

// idIndexer works around how FerretDB v1's postgresql handler filters on `_id`: it builds
// each collection's unique `_id` index as a btree on `_jsonb->'_id'`, but filters every
// equality as `_jsonb->$1 @> $2` (containment), which a btree cannot answer, so
// PostgreSQL scans the whole table for every find, update and delete by `_id` (11 ms for a
// lookup among 5 000 bookings, 0.05 ms with the index below). A GIN index (jsonb_path_ops)
// on the same expression answers containment: the indexer adds one to every FerretDB
// table that lacks it (within half a second of its creation). FerretDB does not know of
// these indexes; PostgreSQL keeps them up to date and drops them with their table. Tables
// under eight pages are left to their scan (idIndexFrom). It is
// the real servers' counterpart of the embedded store's `_id` indexes (docs/embedded.md).
type idIndexer struct {
	url string
	log *slog.Logger
	mu  sync.Mutex // one pass at a time
	// conn is kept from one pass to the next (nil until the first, and after a failure).
	conn *pgx.Conn
}

// idIndexPass is how often the indexer looks for tables without the index.
const idIndexPass = 500 * time.Millisecond

// idIndexFrom is the size from which a table gets the index: below it a scan costs less
// than the index's upkeep and its bitmap search (the real stack's getcalendar ran 9 % slower
// with every table indexed, one-row tables too).
const idIndexFrom = 8 * 8192

// run passes at once, then every idIndexPass until ctx ends, and closes its connection.
func (x *idIndexer) run(ctx context.Context) {
	onErr := func(err error) { x.log.Debug("postgres: _id index pass failed", "err", err) }
	if err := x.pass(ctx); err != nil && ctx.Err() == nil {
		onErr(err)
	}
	periodic.Run(ctx, idIndexPass, x.pass, onErr)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.drop()
}

// missingIDIndex lists the tables of FerretDB (those with its `_jsonb` column, outside the
// system schemas) of at least $1 bytes that have no GIN index on `_jsonb->'_id'`.
const missingIDIndex = `
SELECT n.nspname, c.relname, c.oid::int8
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = '_jsonb' AND NOT a.attisdropped
WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND pg_relation_size(c.oid) >= $1
  AND NOT EXISTS (
    SELECT 1 FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
    WHERE i.indrelid = c.oid AND ic.relname = 'vros_id_gin_' || c.oid::text)`

// pass creates the missing indexes. A table dropped meanwhile, or one whose lock is not
// free at once (lock_timeout: a writer of FerretDB's never waits long behind the index),
// is left to the next pass.
func (x *idIndexer) pass(ctx context.Context) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := x.connect(ctx)
	if err != nil {
		return err
	}
	rows, err := conn.Query(ctx, missingIDIndex, idIndexFrom)
	if err != nil {
		x.drop()
		return err
	}
	type table struct {
		schema, name string
		oid          int64
	}
	tables, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (table, error) {
		var t table
		err := r.Scan(&t.schema, &t.name, &t.oid)
		return t, err
	})
	if err != nil {
		x.drop()
		return err
	}
	var first error
	for _, t := range tables {
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s.%s USING gin ((_jsonb -> '_id') jsonb_path_ops)`,
			pgx.Identifier{fmt.Sprintf("vros_id_gin_%d", t.oid)}.Sanitize(),
			pgx.Identifier{t.schema}.Sanitize(), pgx.Identifier{t.name}.Sanitize())
		if _, err := conn.Exec(ctx, q); err != nil && first == nil {
			first = fmt.Errorf("index %s.%s: %w", t.schema, t.name, err)
		}
	}
	return first
}

// connect answers the kept connection, opening it (with lock_timeout set: a writer of
// FerretDB's never waits long behind an index being made) when there is none.
func (x *idIndexer) connect(ctx context.Context) (*pgx.Conn, error) {
	if x.conn != nil {
		return x.conn, nil
	}
	conn, err := pgx.Connect(ctx, x.url)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `SET lock_timeout = '50ms'`); err != nil {
		_ = conn.Close(context.Background())
		return nil, err
	}
	x.conn = conn
	return conn, nil
}

// drop closes the kept connection (after a failure, the next pass opens another).
func (x *idIndexer) drop() {
	if x.conn != nil {
		_ = x.conn.Close(context.Background())
		x.conn = nil
	}
}

// IndexIDs runs an indexer pass at once: a test that has just created collections gets
// their indexes without waiting for the next pass.
func (in *Infra) IndexIDs(ctx context.Context) error { return in.indexer.pass(ctx) }
