package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// inTx runs fn in a transaction of opts. A pooled connection can have died
// since it was last used (PostgreSQL restarted, or an administrator ended
// its backend): the transaction then fails to begin, before fn ran, and it
// is begun again on another connection, at most once per pooled
// connection, so a restart of the server costs callers nothing.
// Once fn has run, its error is returned as is: whether a commit cut by a
// lost connection took effect is unknown, and only the caller can tell.
func (db *DB) inTx(ctx context.Context, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	for attempt := 0; ; attempt++ {
		ran := false
		err := pgx.BeginTxFunc(ctx, db.pool, opts, func(tx pgx.Tx) error {
			ran = true
			return fn(tx)
		})
		if err == nil || ran || !connectionLost(err) || attempt > int(db.pool.Config().MaxConns) || ctx.Err() != nil {
			return err
		}
		db.log.Info("a pooled connection to PostgreSQL had died; beginning again on another", "attempt", attempt+1)
	}
}

// ping checks the database answers, past pooled connections that died.
func (db *DB) ping(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		err := db.pool.Ping(ctx)
		if err == nil || !connectionLost(err) || attempt > int(db.pool.Config().MaxConns) || ctx.Err() != nil {
			return err
		}
	}
}

// connectionLost reports whether err says an established connection is
// gone (the server ended it, or the socket closed), as opposed to a
// server that cannot be reached at all or a statement that failed.
func connectionLost(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return false
	}
	switch code := pgCode(err); {
	case code == "57P01" || code == "57P02": // admin_shutdown, crash_shutdown
		return true
	case strings.HasPrefix(code, "08"): // connection_exception
		return true
	case code != "":
		return false
	}
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.As(err, &ne) || pgconn.SafeToRetry(err)
}

// unreachable reports whether err says the server cannot be reached: no
// connection could be made.
func unreachable(err error) bool {
	var ce *pgconn.ConnectError
	return errors.As(err, &ce)
}
