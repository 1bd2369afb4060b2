package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var _ memory.Store = (*DB)(nil)

// queryer is what a transaction offers: *sql.Tx, and the statement
// caches over one (cachedTx, preparedTx).
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Options tune a DB. The zero value is usable.
type Options struct {
	// BusyTimeout is how long one statement waits for a lock held by
	// another connection or process. Default 5s.
	BusyTimeout time.Duration
	// WriteRetries is how many times a write transaction that still finds
	// the database busy is retried, with jittered backoff. Default 8.
	WriteRetries int
	// ReadConns caps the read pool. Default max(4, GOMAXPROCS).
	ReadConns int
	// Logger receives warnings (retries). Default: discard.
	Logger *slog.Logger
	// Now is the clock that dates ledger entries (memory.LedgerEntry.At).
	// Default time.Now; an engine gives its own.
	Now func() time.Time
}

// DB is a cairn store in one SQLite file.
type DB struct {
	// Store is the half of memory.Store whose SQL both stores share.
	*sqlstore.Store
	path    string
	w       *sql.DB // one connection; BEGIN IMMEDIATE
	r       *sql.DB // read-only pool
	stmts   *stmtCache
	retries int
	log     *slog.Logger
	now     func() time.Time
	// ledger: the schema keeps the ledger (a test may open an older one).
	ledger bool
	// dsn opens another connection with the pools' settings, without
	// their locking mode or read-only flag (a backup's).
	dsn string
	// scrubs: the schema keeps the write-ahead log's scrub mark (a test
	// may open an older one).
	scrubs bool
	// busyMs is the write connection's busy timeout, restored after a
	// scrub's checkpoint that does not wait (scrub.go).
	busyMs int64
}

// applicationID marks a SQLite file as a cairn database ("crn1").
const applicationID = 0x63726e31

// Open opens (creating if needed) the database at path and brings its schema
// up to date. A database written by a newer cairn is refused with a db_error
// and left untouched; so is a SQLite file that is not a cairn database.
func Open(path string, opts *Options) (*DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.WriteRetries <= 0 {
		o.WriteRetries = 8
	}
	if o.ReadConns <= 0 {
		o.ReadConns = max(4, runtime.GOMAXPROCS(0))
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if path == "" {
		return nil, memory.Errorf(memory.CodeInvalidParams, "database path is empty")
	}
	if err := prepareFile(path); err != nil {
		return nil, err
	}
	busy := fmt.Sprint(o.BusyTimeout.Milliseconds())
	base := "file:" + (&url.URL{Path: path}).EscapedPath()
	// Reads go through a memory map of the file's first 256 MiB: a small
	// database is read without copying pages, and a large one does not
	// count gigabytes of mapped pages in the process's RSS. The write
	// connection maps nothing: the pages a write reads (a large import
	// or the vectors stored after it reads hundreds of MiB) would count
	// once more in the RSS, beside the readers' maps of the same file.
	common := "_pragma=busy_timeout(" + busy + ")&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_pragma=secure_delete(1)&_pragma=temp_store(MEMORY)"
	mapped := common + "&_pragma=mmap_size(268435456)"
	w, err := sql.Open("sqlite", base+"?_txlock=immediate&"+common+"&_pragma=mmap_size(0)")
	if err != nil {
		return nil, memory.Wrap(memory.CodeDBError, err, "opening database %s", path)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	db := &DB{path: path, w: w, retries: o.WriteRetries, log: o.Logger, now: o.Now, dsn: base + "?" + mapped,
		busyMs: o.BusyTimeout.Milliseconds()}
	db.Store = sqlstore.New(backend{db}, &dialect)
	if err := db.migrate(context.Background()); err != nil {
		w.Close()
		return nil, err
	}
	db.ledger = SchemaVersion() >= ledgerVersion
	db.scrubs = SchemaVersion() >= scrubVersion
	r, err := sql.Open("sqlite", base+"?_pragma=query_only(1)&"+mapped)
	if err != nil {
		w.Close()
		return nil, memory.Wrap(memory.CodeDBError, err, "opening database %s", path)
	}
	r.SetMaxOpenConns(o.ReadConns)
	r.SetMaxIdleConns(o.ReadConns)
	db.r = r
	db.stmts = &stmtCache{pool: r, m: map[string]*sql.Stmt{}}
	return db, nil
}

// prepareFile makes the parent directory (0700) and creates the file with
// mode 0600 when it does not exist, so memories are private to the user.
func prepareFile(path string) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return memory.Wrap(memory.CodeDBError, err, "creating the database directory %s", dir)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return memory.Wrap(memory.CodeDBError, err, "opening database %s", path)
	}
	return f.Close()
}

// Path returns the database file's path.
func (db *DB) Path() string { return db.path }

// Close tries once more to scrub the write-ahead log when a forget left
// it marked (scrub.go), then closes both pools.
func (db *DB) Close() error {
	if db.r != nil {
		_, _ = db.ScrubWAL(context.Background())
	}
	var errs []error
	if db.stmts != nil {
		db.stmts.close()
	}
	if db.r != nil {
		errs = append(errs, db.r.Close())
	}
	if db.stmts != nil {
		db.stmts.preparing.Wait()
	}
	errs = append(errs, db.w.Close())
	if err := errors.Join(errs...); err != nil {
		return memory.Wrap(memory.CodeDBError, err, "closing database")
	}
	return nil
}

// erase runs a delete in a write transaction and then checkpoints, so the
// deleted text leaves the write-ahead log too.
func (db *DB) erase(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	if err := db.write(ctx, what, fn); err != nil {
		return err
	}
	db.checkpoint(ctx)
	return nil
}

// write runs fn in a write transaction, retrying when the database is busy.
// fn's typed errors pass through; untyped ones become db_error with what as
// the subject.
func (db *DB) write(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	backoff := 10 * time.Millisecond
	for attempt := 0; ; attempt++ {
		mark, err := db.tryWrite(ctx, fn)
		if err == nil {
			if mark > 0 {
				db.scrub(ctx, mark)
			}
			return nil
		}
		if !isBusy(err) || attempt >= db.retries || ctx.Err() != nil {
			return dbError(err, what)
		}
		db.log.Warn("database busy, retrying", "op", what, "attempt", attempt+1)
		sleep := backoff + time.Duration(rand.Int64N(int64(backoff)))
		select {
		case <-ctx.Done():
			return dbError(ctx.Err(), what)
		case <-time.After(sleep):
		}
		backoff = min(backoff*2, time.Second)
	}
}

// tryWrite runs fn in one write transaction. It returns the generation of
// the write-ahead log's scrub mark when one is set (0 when none), so that
// write tries the scrub again once the transaction is committed.
func (db *DB) tryWrite(ctx context.Context, fn func(tx *sql.Tx) error) (int64, error) {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	// The ledger's triggers date what fn writes with this clock.
	if db.ledger {
		if err := setLedgerClock(ctx, tx, db.now().UnixMilli(), ""); err != nil {
			tx.Rollback()
			return 0, err
		}
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return 0, err
	}
	mark, err := db.scrubMark(ctx, tx)
	if err != nil {
		tx.Rollback()
		return 0, err
	}
	return mark, tx.Commit()
}

// read runs fn on the read pool inside one read transaction, so it sees one
// snapshot. Its statements are prepared once per connection and reused.
func (db *DB) read(ctx context.Context, what string, fn func(tx queryer) error) error {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return dbError(err, what)
	}
	defer tx.Rollback()
	if err := fn(cachedTx{tx: tx, stmts: db.stmts}); err != nil {
		return dbError(err, what)
	}
	return nil
}

// stmtCache holds statements prepared on the read pool, by SQL text, so
// SQLite parses each query once per connection instead of once per call.
// It stops adding past maxCachedStmts distinct texts.
//
// A statement is prepared in the background, never by the caller: the
// caller holds a read transaction, and preparing on the pool needs another
// connection, so callers preparing while every connection is held by a
// transaction would wait on each other for ever. Until its statement is
// ready a query runs uncached.
type stmtCache struct {
	pool *sql.DB
	mu   sync.Mutex
	// m maps SQL text to its statement; nil while it is being prepared or
	// when preparing failed (the uncached path then reports the error).
	m map[string]*sql.Stmt
	// preparing counts the background preparations, which Close waits
	// for: none may open a connection after the database is closed.
	preparing sync.WaitGroup
}

const maxCachedStmts = 512

func (c *stmtCache) get(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[query]; ok || c.m == nil || len(c.m) >= maxCachedStmts {
		return st
	}
	c.m[query] = nil
	c.preparing.Add(1)
	go c.prepare(query)
	return nil
}

func (c *stmtCache) prepare(query string) {
	defer c.preparing.Done()
	st, err := c.pool.PrepareContext(context.Background(), query)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil { // closed meanwhile
		st.Close()
		return
	}
	c.m[query] = st
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		if st != nil {
			st.Close()
		}
	}
	c.m = nil
}

// cachedTx runs a read transaction's statements through the cache.
type cachedTx struct {
	tx    *sql.Tx
	stmts *stmtCache
}

func (c cachedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := c.stmts.get(query); st != nil {
		return c.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return c.tx.QueryContext(ctx, query, args...)
}

func (c cachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := c.stmts.get(query); st != nil {
		return c.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return c.tx.QueryRowContext(ctx, query, args...)
}

func (c cachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return c.tx.ExecContext(ctx, query, args...)
}

func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

func isBusy(err error) bool {
	c := sqliteCode(err) & 0xff
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// isForeignKey reports a foreign key constraint failure.
func isForeignKey(err error) bool {
	return sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

func isUnique(err error) bool {
	c := sqliteCode(err)
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// dbError keeps typed errors and turns anything else into a db_error whose
// message names the operation but not the SQL.
func dbError(err error, what string) error {
	if err == nil {
		return nil
	}
	var e *memory.Error
	if errors.As(err, &e) {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled):
		return memory.Wrap(memory.CodeDBError, err, "%s: canceled", what)
	case errors.Is(err, context.DeadlineExceeded):
		return memory.Wrap(memory.CodeTimeout, err, "%s: the call ran past its time limit", what)
	case isBusy(err):
		return memory.Wrap(memory.CodeDBError, err, "%s: the database stayed locked by another process; try again", what)
	case isUnique(err):
		return memory.Wrap(memory.CodeConflict, err, "%s: a record with that id already exists", what)
	}
	return memory.Wrap(memory.CodeDBError, err, "%s failed", what)
}
