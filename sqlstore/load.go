package sqlstore

import (
	"context"

	"github.com/cairnhq/cairn/memory"
)

// Importer is what a store does its own way in an import, which Import
// and Load call inside one write transaction.
type Importer interface {
	// BeginImport marks the transaction's inserts as imports (the
	// ledger's op); with parts (a Load), it also readies the transaction
	// for a long run.
	BeginImport(ctx context.Context, q Querier, parts bool) error
	// ImportDump writes one dump: its observations, capsules and logged
	// observations the store's own way, then the rest through
	// ImportRest. tick counts the records written.
	ImportDump(ctx context.Context, q Querier, d memory.Dump, tick func(n int)) error
	// Imported follows the commit of an import of n records.
	Imported(ctx context.Context, n int)
	// Stats counts the records q sees.
	Stats(ctx context.Context, q Querier) (memory.Stats, error)
}

// progressEvery is how many records an import writes between progress
// calls.
const progressEvery = 500

// importCount counts the records an import has written and reports them
// now and then.
type importCount struct {
	done, last int
	progress   func(int)
}

func (c *importCount) tick(n int) {
	c.done += n
	if c.done-c.last >= progressEvery {
		c.progress(c.done)
		c.last = c.done
	}
}

// Import implements memory.Bulk: one transaction, all of it or none.
// Observations go in first (redacted ones stay out of the full-text
// index), then capsules with their membership, logged observations,
// summaries, pins, thoughts, entities, entity observations and edges,
// then code memory.
func (s *Store) Import(ctx context.Context, d memory.Dump, progress func(done int)) error {
	if progress == nil {
		progress = func(int) {}
	}
	err := s.b.Write(ctx, "importing", func(q Querier) error {
		if err := s.im.BeginImport(ctx, q, false); err != nil {
			return err
		}
		c := &importCount{progress: progress}
		if err := s.im.ImportDump(ctx, q, d, c.tick); err != nil {
			return err
		}
		progress(c.done)
		return nil
	})
	if err == nil {
		s.im.Imported(ctx, d.Len())
	}
	return err
}

var _ memory.Loader = (*Store)(nil)

// Load implements memory.Loader: the parts go in through one write
// transaction, and check runs in it before the commit.
func (s *Store) Load(ctx context.Context, next func() (memory.Dump, error), progress func(done int), check func(memory.Loaded) error) error {
	if progress == nil {
		progress = func(int) {}
	}
	started := false
	total := 0
	err := s.b.Write(ctx, "importing", func(q Querier) error {
		if started {
			// The parts already read cannot be read again: a retry would
			// import only what is left. Nothing was committed.
			return memory.Errorf(memory.CodeDBError, "the import was interrupted by another writer; nothing was written, run it again")
		}
		started = true
		if err := s.im.BeginImport(ctx, q, true); err != nil {
			return err
		}
		c := &importCount{progress: progress}
		for {
			d, err := next()
			if err != nil {
				return err
			}
			if d.Len() == 0 {
				break
			}
			if err := s.im.ImportDump(ctx, q, d, c.tick); err != nil {
				return err
			}
		}
		progress(c.done)
		total = c.done
		if check != nil {
			return check(loaded{s, q})
		}
		return nil
	})
	if err == nil {
		s.im.Imported(ctx, total)
	}
	return err
}

// loaded is a Load's transaction as its check sees it.
type loaded struct {
	s *Store
	q Querier
}

func (l loaded) Stats(ctx context.Context) (memory.Stats, error) { return l.s.im.Stats(ctx, l.q) }

func (l loaded) Export(ctx context.Context, fn func(memory.Record) error) error {
	return l.s.exportAll(ctx, l.q, fn)
}

func (l loaded) FillEmbeddings(ctx context.Context, es []memory.Embedding) (int, error) {
	if err := checkEmbeddings(es); err != nil {
		return 0, err
	}
	return l.s.b.PutEmbeddings(ctx, l.q, es, true)
}

// Stats implements memory.Store.
func (s *Store) Stats(ctx context.Context) (memory.Stats, error) {
	var st memory.Stats
	err := s.b.Read(ctx, "reading stats", func(q Querier) error {
		var err error
		st, err = s.im.Stats(ctx, q)
		return err
	})
	return st, err
}
