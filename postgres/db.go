package postgres

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
)

var _ memory.Store = (*DB)(nil)

// Options tune a DB. The zero value is usable; settings in the connection
// string win over them.
type Options struct {
	// Schema is the PostgreSQL schema cairn keeps its tables in, created
	// when missing. Default "cairn"; the connection string's cairn_schema
	// parameter overrides it. Several cairn stores can share a database
	// in different schemas.
	Schema string
	// Vectors says how vectors are stored: "auto" (default: pgvector's
	// vector type when CREATE EXTENSION vector succeeds, real[] arrays
	// otherwise), "pgvector" (required) or "array". It is fixed when the
	// schema is created. The connection string's cairn_vectors parameter
	// overrides it.
	Vectors string
	// StatementTimeout bounds every statement (PostgreSQL's
	// statement_timeout). Default 60 s; a statement_timeout in the
	// connection string wins.
	StatementTimeout time.Duration
	// WriteRetries is how many times a write that meets a serialization
	// failure or a deadlock is retried, with jittered backoff. Default 8.
	WriteRetries int
	// Logger receives warnings (retries). Default: discard.
	Logger *slog.Logger
	// Now is the clock that dates ledger entries (memory.LedgerEntry.At).
	// Default time.Now; an engine gives its own.
	Now func() time.Time
}

// DB is a cairn store in a PostgreSQL schema. Any number of processes, on
// any number of hosts, may use one at once.
type DB struct {
	// Store is the half of memory.Store whose SQL both stores share.
	*sqlstore.Store
	pool *pgxpool.Pool
	// display is the connection string without its password.
	display    string
	schema     string
	searchPath string
	vectors    vectorMode
	id         string
	retries    int
	log        *slog.Logger
	now        func() time.Time
}

// schemaName is what a schema name may be: lowercase identifiers that
// need no quoting.
var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// IsURL reports whether s names a PostgreSQL database
// (postgres://... or postgresql://...).
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Redact returns a connection string with its password replaced by
// "xxxxx", for logs and messages.
func Redact(conn string) string {
	u, err := url.Parse(conn)
	if err != nil {
		return "postgres://(unparsable connection string)"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Open connects to the database named by conn (a postgres:// URL),
// creates the schema or brings it up to date under an advisory lock, and
// returns the store. A schema written by a newer cairn is refused with a
// db_error and left untouched.
func Open(ctx context.Context, conn string, opts *Options) (*DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Schema == "" {
		o.Schema = "cairn"
	}
	if o.StatementTimeout <= 0 {
		o.StatementTimeout = 60 * time.Second
	}
	if o.WriteRetries <= 0 {
		o.WriteRetries = 8
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	u, err := url.Parse(conn)
	if err != nil || !IsURL(conn) {
		return nil, memory.Errorf(memory.CodeInvalidParams, "not a PostgreSQL connection URL (want postgres://user@host:port/database?...)")
	}
	q := u.Query()
	if s := q.Get("cairn_schema"); s != "" {
		o.Schema = s
	}
	if v := q.Get("cairn_vectors"); v != "" {
		o.Vectors = v
	}
	q.Del("cairn_schema")
	q.Del("cairn_vectors")
	u.RawQuery = q.Encode()
	switch o.Vectors {
	case "", "auto", string(vectorsPGVector), string(vectorsArray):
	default:
		return nil, memory.Errorf(memory.CodeInvalidParams, "cairn_vectors=%q: want auto, pgvector or array", o.Vectors)
	}
	if !schemaName.MatchString(o.Schema) {
		return nil, memory.Errorf(memory.CodeInvalidParams, "cairn_schema=%q: want a lowercase name of letters, digits and _", o.Schema)
	}
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		return nil, memory.Wrap(memory.CodeInvalidParams, err, "the PostgreSQL connection string does not parse: check its parameters (sslmode, pool_max_conns, ...)")
	}
	rp := cfg.ConnConfig.RuntimeParams
	if _, ok := rp["statement_timeout"]; !ok {
		rp["statement_timeout"] = fmt.Sprint(o.StatementTimeout.Milliseconds())
	}
	if _, ok := rp["application_name"]; !ok {
		rp["application_name"] = "cairn"
	}
	// Statements are planned for their arguments every time: a generic
	// plan chosen after a few runs can be far worse for the ones that
	// follow (a cursor through pending vectors turned a 1 ms query into
	// a 500 ms one), and cairn's statements plan in well under a
	// millisecond.
	if _, ok := rp["plan_cache_mode"]; !ok {
		rp["plan_cache_mode"] = "force_custom_plan"
	}
	db := &DB{display: Redact(conn), schema: o.Schema, retries: o.WriteRetries, log: o.Logger, now: o.Now}
	// The vector type lives in the extension's schema: it goes on the
	// search path after cairn's own.
	db.searchPath = o.Schema + ", public"
	rp["search_path"] = db.searchPath

	boot, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
	if err != nil {
		return nil, connectError(err, db.display)
	}
	defer boot.Close(context.WithoutCancel(ctx))
	if ext := extensionSchema(ctx, boot); ext != "" && ext != "public" {
		db.searchPath = o.Schema + ", " + pgx.Identifier{ext}.Sanitize() + ", public"
		rp["search_path"] = db.searchPath
	}
	mode, err := db.migrate(ctx, boot, o.Vectors)
	if err != nil {
		return nil, err
	}
	db.vectors = mode
	db.Store = sqlstore.New(backend{db}, newDialect(mode))
	if err := boot.QueryRow(ctx, "SELECT value FROM "+db.schema+".meta WHERE key = 'database_id'").Scan(&db.id); err != nil {
		return nil, dbError(err, "reading the database id")
	}
	if mode == vectorsPGVector {
		cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error { return pgxvec.RegisterTypes(ctx, c) }
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, connectError(err, db.display)
	}
	db.pool = pool
	return db, nil
}

// extensionSchema is the schema the vector extension is installed in
// ("" when it is not installed).
func extensionSchema(ctx context.Context, c *pgx.Conn) string {
	var s string
	err := c.QueryRow(ctx, `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'`).Scan(&s)
	if err != nil {
		return ""
	}
	return s
}

// missingRole reads the role of PostgreSQL's `role "NAME" does not exist`,
// which the server reports under the same SQLSTATE as a pg_hba.conf
// refusal.
func missingRole(msg string) (string, bool) {
	rest, ok := strings.CutPrefix(msg, `role "`)
	if !ok {
		return "", false
	}
	role, tail, ok := strings.Cut(rest, `"`)
	return role, ok && strings.TrimSpace(tail) == "does not exist"
}

func connectError(err error, display string) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01":
			return memory.Wrap(memory.CodeDBError, err, "PostgreSQL refused the login to %s: check the user and password", display)
		case "28000":
			if role, ok := missingRole(pe.Message); ok {
				return memory.Wrap(memory.CodeDBError, err, "PostgreSQL at %s has no role %q: create it (createuser %s, or CREATE ROLE ... LOGIN) or connect as a user that exists", display, role, role)
			}
			return memory.Wrap(memory.CodeDBError, err, "PostgreSQL refused the connection to %s: its pg_hba.conf does not admit it (check the user, the address, and whether the server requires TLS: sslmode)", display)
		case "3D000":
			return memory.Wrap(memory.CodeDBError, err, "the database of %s does not exist: create it (createdb) first", display)
		}
	}
	return memory.Wrap(memory.CodeDBError, err, "cannot connect to PostgreSQL at %s: is the server running and reachable (and TLS set as it expects)?", display)
}

// newDatabaseID is a random id for a new schema, so a persisted retrieval
// index built from one database never pairs with another's.
func newDatabaseID() string {
	var b [16]byte
	crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Path returns the connection string without its password.
func (db *DB) Path() string { return db.display }

// ID returns the schema's random id, chosen when it was created: it names
// the database in each server's retrieval index directory.
func (db *DB) ID() string { return db.id }

// Schema returns the schema the store keeps its tables in.
func (db *DB) Schema() string { return db.schema }

// Vectors returns how vectors are stored: "pgvector" or "array".
func (db *DB) Vectors() string { return string(db.vectors) }

// Close closes the pool.
func (db *DB) Close() error {
	db.pool.Close()
	return nil
}

// Ping checks that the database answers (a round trip on a pooled
// connection).
func (db *DB) Ping(ctx context.Context) error {
	if err := db.ping(ctx); err != nil {
		return dbError(err, "reaching the database")
	}
	return nil
}

// PoolStats reports the connection pool's state.
type PoolStats struct {
	MaxConns, TotalConns, IdleConns, AcquiredConns int32
	// AcquireCount counts connection acquisitions and EmptyAcquireCount
	// those that had to wait for a connection.
	AcquireCount, EmptyAcquireCount int64
}

// PoolStats returns the pool's counters.
func (db *DB) PoolStats() PoolStats {
	s := db.pool.Stat()
	return PoolStats{MaxConns: s.MaxConns(), TotalConns: s.TotalConns(), IdleConns: s.IdleConns(), AcquiredConns: s.AcquiredConns(),
		AcquireCount: s.AcquireCount(), EmptyAcquireCount: s.EmptyAcquireCount()}
}

// write runs fn in a read-committed transaction, retrying on a
// serialization failure or a deadlock. fn must start from scratch on each
// call. Typed errors pass through; others become db_error naming what.
func (db *DB) write(ctx context.Context, what string, fn func(tx pgx.Tx) error) error {
	backoff := 5 * time.Millisecond
	for attempt := 0; ; attempt++ {
		// The ledger's triggers date what fn writes with this clock.
		err := db.inTx(ctx, pgx.TxOptions{BeginQuery: beginQuery(db.now().UnixMilli(), "")}, fn)
		if err == nil {
			return nil
		}
		if !retryable(err) || attempt >= db.retries || ctx.Err() != nil {
			return dbError(err, what)
		}
		db.log.Warn("write conflicted with another writer, retrying", "op", what, "attempt", attempt+1, "err", err.Error())
		sleep := backoff + time.Duration(rand.Int64N(int64(backoff)))
		select {
		case <-ctx.Done():
			return dbError(ctx.Err(), what)
		case <-time.After(sleep):
		}
		backoff = min(backoff*2, 500*time.Millisecond)
	}
}

// read runs fn in a read-only repeatable-read transaction: one snapshot.
func (db *DB) read(ctx context.Context, what string, fn func(tx pgx.Tx) error) error {
	err := db.inTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
	return dbError(err, what)
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func retryable(err error) bool {
	var r sqlstore.RetryError
	if errors.As(err, &r) {
		return true
	}
	switch pgCode(err) {
	case "40001", "40P01": // serialization_failure, deadlock_detected
		return true
	}
	return false
}

func isUnique(err error) bool     { return pgCode(err) == "23505" }
func isForeignKey(err error) bool { return pgCode(err) == "23503" }

// constraint is the name of the constraint an error violated.
func constraint(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.ConstraintName
	}
	return ""
}

// dbError keeps typed errors and turns anything else into a db_error whose
// message names the operation but not the SQL.
func dbError(err error, what string) error {
	if err == nil {
		return nil
	}
	var re *memory.RecordError
	if errors.As(err, &re) {
		return re
	}
	var e *memory.Error
	if errors.As(err, &e) {
		return e
	}
	switch code := pgCode(err); {
	case errors.Is(err, context.Canceled):
		return memory.Wrap(memory.CodeDBError, err, "%s: canceled", what)
	case errors.Is(err, context.DeadlineExceeded):
		return memory.Wrap(memory.CodeTimeout, err, "%s: the call ran past its time limit", what)
	case code == "57014":
		return memory.Wrap(memory.CodeDBError, err, "%s: the statement ran past the statement timeout", what)
	case code == "40001" || code == "40P01":
		return memory.Wrap(memory.CodeDBError, err, "%s: kept conflicting with other writers; try again", what)
	case isUnique(err):
		return memory.Wrap(memory.CodeConflict, err, "%s: a record with that id already exists", what)
	case code == "53300" || code == "53400":
		return memory.Wrap(memory.CodeDBError, err, "%s: the server has no connection to spare (max_connections)", what)
	case code == "25006":
		return memory.Wrap(memory.CodeDBError, err, "%s: the server is read-only (a standby?)", what)
	case unreachable(err):
		return memory.Wrap(memory.CodeDBError, err, "%s: the database cannot be reached (is PostgreSQL running, and reachable from here?)", what)
	case strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03":
		return memory.Wrap(memory.CodeDBError, err, "%s: lost the connection to PostgreSQL", what)
	case code == "42501":
		return memory.Wrap(memory.CodeDBError, err, "%s: PostgreSQL denied the permission it needs (the role needs CREATE on the database to make cairn's schema, and must own the schema's tables to upgrade them)", what)
	case strings.HasPrefix(code, "22"):
		return memory.Wrap(memory.CodeInvalidParams, err, "%s: PostgreSQL cannot store a value of the request (it holds a NUL byte or is out of range)", what)
	}
	if code := pgCode(err); code != "" {
		// The SQLSTATE names the cause without the server's message,
		// which can quote SQL and identifiers.
		return memory.Wrap(memory.CodeDBError, err, "%s failed (PostgreSQL error %s; the server log says more)", what, code)
	}
	return memory.Wrap(memory.CodeDBError, err, "%s failed", what)
}

func notFound(what, id string) error {
	return memory.Errorf(memory.CodeNotFound, "%s %q not found", what, id)
}
