package cairn

import (
	"context"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/peer"
	"github.com/cairnhq/cairn/sqlite"
	"github.com/cairnhq/cairn/transfer"
)

// Import, export, imports from other agent-memory systems and migration
// between databases, done by the transfer package.

// Import formats and bounds.
const (
	FormatJSONL    = transfer.FormatJSONL
	FormatParity   = transfer.FormatParity
	MaxImportBytes = transfer.MaxImportBytes
)

type (
	// ImportOptions tune an import.
	ImportOptions = transfer.ImportOptions
	// ImportReport says what an import wrote.
	ImportReport = transfer.ImportReport
	// PeerImportOptions tune an import from another memory system.
	PeerImportOptions = transfer.PeerImportOptions
	// PeerImportReport says what an import from a peer mapped where.
	PeerImportReport = transfer.PeerImportReport
	// MigrateOptions tune Migrate.
	MigrateOptions = transfer.MigrateOptions
	// MigrateReport says what Migrate moved and how it checked it.
	MigrateReport = transfer.MigrateReport
)

// newMover is the engine's importer and exporter, with its record
// checks.
func (e *Engine) newMover() *transfer.Mover {
	m := &transfer.Mover{Store: e.store, MaxBytes: e.maxBytes, Redact: e.redactText, CheckThought: e.checkThought,
		CheckFact: e.kg.CheckFact, Logged: e.logged, Target: e.findTarget, IsDatabase: sqlite.IsDatabase, Now: e.nowMs, Logger: e.log}
	if e.embedOnWrite {
		m.Reembed = func(ctx context.Context, progress func(done, total int)) (int, int, error) {
			r, err := e.Reembed(ctx, ReembedRequest{}, progress)
			return r.Embedded, r.Pending, err
		}
	}
	return m
}

// logged reads an import's line that is an observation to record: the
// fields of LogRequest, checked as Log checks them.
func (e *Engine) logged(line []byte, now int64) (memory.NewObservation, error) {
	var req LogRequest
	if err := memory.DecodeStrict(line, &req); err != nil {
		return memory.NewObservation{}, err
	}
	o, err := e.newObservation(req, now)
	return memory.NewObservation{Observation: o, CapsuleID: req.CapsuleID}, err
}

// Import reads a file of records (FormatJSONL or FormatParity, detected
// from the content) and writes it all in one transaction: every record,
// or, when any record is invalid or clashes with the database, none.
// Errors name the line or record at fault.
func (e *Engine) Import(ctx context.Context, r io.Reader, opts ImportOptions) (ImportReport, error) {
	return e.move.Import(ctx, r, opts)
}

// Export writes every record as JSON Lines, in an order Import reads back
// into an equal database. It returns the number of records written.
func (e *Engine) Export(ctx context.Context, w io.Writer) (int, error) {
	return e.move.Export(ctx, w)
}

// ImportDump writes complete records in one transaction, as Import does
// once it has read a file. Records are checked first; nothing is written
// when one is invalid.
func (e *Engine) ImportDump(ctx context.Context, d memory.Dump) error {
	return e.move.ImportDump(ctx, d)
}

// ImportPeer reads a file of another agent-memory system (peer.MCPMemory,
// peer.Kindling, peer.Mem0) and writes the records the database lacks in
// one transaction: all of them or, when a record is invalid, none.
func (e *Engine) ImportPeer(ctx context.Context, from string, r io.Reader, o PeerImportOptions) (PeerImportReport, error) {
	return e.move.ImportPeer(ctx, from, r, o)
}

// ImportPeerFile is ImportPeer for an open file: Kindling's SQLite store
// (kindling.db, found by its header) is read where it lies, read-only,
// with the queries of Kindling's own export, and gives the records its
// export would; any other file is read as ImportPeer reads it.
func (e *Engine) ImportPeerFile(ctx context.Context, from string, f *os.File, o PeerImportOptions) (PeerImportReport, error) {
	head := make([]byte, len(sqlite.Header))
	n, _ := f.ReadAt(head, 0)
	if from != peer.Kindling || !sqlite.IsDatabase(head[:n]) {
		return e.ImportPeer(ctx, from, f, o)
	}
	rep := PeerImportReport{From: from, Imported: map[memory.Section]int{}, Present: map[memory.Section]int{}, Notes: []string{}}
	if err := o.Scope.Validate(); err != nil {
		return rep, err
	}
	db, err := sqlite.OpenForeign(f.Name())
	if err != nil {
		return rep, memory.Prefixed(err, "reading the Kindling store: ")
	}
	defer db.Close()
	rows := func(ctx context.Context, what, query string, limit int) ([]map[string]any, error) {
		return db.Rows(ctx, what, query, limit)
	}
	return e.move.ImportKindlingStore(ctx, from, rows, o)
}

// Migrate copies every record of the database at from into the empty
// database at to (each a SQLite file or a PostgreSQL URL, in either
// direction), in one transaction that verifies the copy before it
// commits (see transfer.Migrate): the target gets all of it or nothing.
func Migrate(ctx context.Context, from, to string, o MigrateOptions) (MigrateReport, error) {
	start := time.Now()
	rep := MigrateReport{From: displayPath(from), To: displayPath(to), Sections: map[string]int{}}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if from == to {
		return rep, memory.Errorf(memory.CodeInvalidParams, "--from and --to name the same database")
	}
	if !IsPostgres(from) {
		if _, err := os.Stat(from); err != nil {
			return rep, memory.Errorf(memory.CodeNotFound, "the source database %s does not exist", from)
		}
	}
	src, _, err := openStore(from, Options{Logger: o.Logger})
	if err != nil {
		return rep, err
	}
	defer src.Close()
	dst, _, err := openStore(to, Options{Logger: o.Logger})
	if err != nil {
		return rep, err
	}
	defer dst.Close()
	if rep, err = transfer.Migrate(ctx, src, dst, rep, o); err != nil {
		return rep, err
	}
	rep.Millis = time.Since(start).Milliseconds()
	return rep, nil
}
