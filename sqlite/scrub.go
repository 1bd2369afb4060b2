package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// Scrubbing the write-ahead log. A forget overwrites the text in the
// database's pages (secure_delete), but the log may still hold frames with
// the old pages, and the pages the forget wrote may not have reached the
// main file yet. So a forget ends with a TRUNCATE checkpoint, which copies
// every frame into the main file and empties the log. Another
// connection's open read (in this process or another) can stop it: the
// reader's snapshot needs the old frames. The forget then leaves a mark in
// the database (table wal_scrub), and whoever writes next, or the
// background scrubber of a long-running process (ScrubWAL), checkpoints
// again, without waiting for readers, until one checkpoint succeeds and
// clears the mark.

// scrubVersion is the schema version that keeps the scrub mark.
const scrubVersion = 12

// checkpoint follows a forget or a delete. It waits for readers up to the
// busy timeout; when one still holds the log, it marks the log for a
// later scrub.
func (db *DB) checkpoint(ctx context.Context) {
	if done, _ := db.truncateWAL(ctx, true); done || !db.scrubs {
		return
	}
	// The mark's write sees its own mark and tries once more at once
	// (the reader may have ended meanwhile).
	err := db.write(ctx, "marking the write-ahead log for a scrub", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO wal_scrub(id, gen) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET gen = gen + 1")
		return err
	})
	if err != nil {
		db.log.Warn("the write-ahead log may hold forgotten text until the next forget: marking it for a scrub failed",
			"err", err)
	}
}

// scrubMark reads the scrub mark's generation, 0 when the log is not marked.
func (db *DB) scrubMark(ctx context.Context, q queryer) (int64, error) {
	if !db.scrubs {
		return 0, nil
	}
	var gen int64
	err := q.QueryRowContext(ctx, "SELECT gen FROM wal_scrub WHERE id = 1").Scan(&gen)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return gen, err
}

// ScrubWAL scrubs the write-ahead log when a forget left it marked: it
// checkpoints without waiting for readers and, when the log is emptied,
// clears the mark. It reports whether the log is still marked (a reader
// still holds it). A long-running process calls it now and then, so the
// log is scrubbed soon after the reader ends even when nothing is written.
func (db *DB) ScrubWAL(ctx context.Context) (pending bool, err error) {
	var mark int64
	if err := db.read(ctx, "reading the write-ahead log's scrub mark", func(q queryer) error {
		var err error
		mark, err = db.scrubMark(ctx, q)
		return err
	}); err != nil {
		return false, err
	}
	if mark == 0 {
		return false, nil
	}
	return !db.scrub(ctx, mark), nil
}

// scrub checkpoints without waiting for readers and, when the log is
// emptied, clears the marks up to generation mark (a later mark belongs to
// a forget this checkpoint may not cover). It reports whether the log was
// emptied.
func (db *DB) scrub(ctx context.Context, mark int64) bool {
	done, err := db.truncateWAL(ctx, false)
	if !done {
		if err != nil {
			db.log.Debug("scrubbing the write-ahead log failed; trying again later", "err", err)
		}
		return false
	}
	if _, err := db.w.ExecContext(ctx, "DELETE FROM wal_scrub WHERE id = 1 AND gen <= ?", mark); err != nil {
		// The log is empty; the mark stays, and the next try empties
		// the log again.
		db.log.Debug("clearing the write-ahead log's scrub mark failed", "err", err)
	}
	return true
}

// truncateWAL runs a TRUNCATE checkpoint on the write connection and
// reports whether it emptied the log. Unless wait, it sets the connection's
// busy timeout to 0 for the checkpoint, so a reader that holds the log
// makes it return at once instead of after the busy timeout.
func (db *DB) truncateWAL(ctx context.Context, wait bool) (bool, error) {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	if !wait {
		if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
			return false, err
		}
		defer func() {
			// Restored even when ctx has ended: the connection is reused.
			if _, err := conn.ExecContext(context.Background(), fmt.Sprintf("PRAGMA busy_timeout = %d", db.busyMs)); err != nil {
				_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // drop a connection left without its timeout
			}
		}()
	}
	var busy, logFrames, checkpointed int64
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &checkpointed); err != nil {
		return false, err
	}
	return busy == 0, nil
}
