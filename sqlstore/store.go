package sqlstore

import (
	"context"

	"github.com/cairnhq/cairn/memory"
)

// Backend is what a store does its own way, which the shared half calls.
type Backend interface {
	// Read runs fn in a read-only transaction that sees one snapshot.
	// Errors come back as the dialect's Error makes them, naming what.
	Read(ctx context.Context, what string, fn func(Querier) error) error
	// Write runs fn in a write transaction (again from the start when
	// the engine asks for a retry).
	Write(ctx context.Context, what string, fn func(Querier) error) error
	// Erase is Write for a change that deletes or forgets text: the
	// store scrubs what it can of the old text once it commits.
	Erase(ctx context.Context, what string, fn func(Querier) error) error
	// PutSummary writes a capsule's summary (the capsule exists),
	// replacing an earlier one, which keeps its id, and indexes its text
	// for full-text search.
	PutSummary(ctx context.Context, q Querier, s memory.Summary) (memory.Summary, error)
	// SearchText runs a full-text search.
	SearchText(ctx context.Context, q Querier, ts memory.TextSearch) (memory.TextResult, error)
	// PutEmbeddings stores checked vectors (see memory.VectorStore): with
	// fill, only those of records without one in the space whose text is
	// still the embedded one. It returns how many it stored.
	PutEmbeddings(ctx context.Context, q Querier, es []memory.Embedding, fill bool) (int, error)
}

// Store is the shared half of a SQL store: the memory.Store methods whose
// statements are the same on every engine. A store embeds it.
type Store struct {
	b  Backend
	im Importer
	d  *Dialect
}

// Own is what a store gives the shared half: its Backend and its
// Importer, usually one value.
type Own interface {
	Backend
	Importer
}

// New returns the shared half of a store over what it does its own way
// and its dialect.
func New(own Own, d *Dialect) *Store { return &Store{b: own, im: own, d: d} }

// reader is a Snapshot's memory.Reader: the queries of one transaction.
type reader struct {
	s *Store
	q Querier
}

// Snapshot implements memory.Snapshotter: fn reads one consistent state
// of the database, untouched by concurrent writes, in one read
// transaction.
func (s *Store) Snapshot(ctx context.Context, fn func(memory.Reader) error) error {
	return s.b.Read(ctx, "reading", func(q Querier) error {
		// Both engines take a transaction's snapshot at its first read,
		// not at BEGIN: read now, so fn sees the store as it was when
		// Snapshot began.
		if _, err := lastChange(ctx, q); err != nil {
			return err
		}
		return fn(reader{s, q})
	})
}

func (r reader) ActivePins(ctx context.Context, pq memory.PinQuery) ([]memory.PinnedTarget, error) {
	out, err := r.s.activePins(ctx, r.q, pq)
	return out, r.s.d.Error(err, "reading pins")
}

func (r reader) CurrentSummary(ctx context.Context, scope memory.Scope) (*memory.Summary, error) {
	out, err := r.s.currentSummary(ctx, r.q, scope)
	return out, r.s.d.Error(err, "reading the current summary")
}

func (r reader) SearchText(ctx context.Context, ts memory.TextSearch) (memory.TextResult, error) {
	return r.s.b.SearchText(ctx, r.q, ts)
}

// SearchText implements memory.TextSearcher.
func (s *Store) SearchText(ctx context.Context, ts memory.TextSearch) (memory.TextResult, error) {
	var res memory.TextResult
	err := s.b.Read(ctx, "searching", func(q Querier) error {
		var err error
		res, err = s.b.SearchText(ctx, q, ts)
		return err
	})
	return res, err
}
