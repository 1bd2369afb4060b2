package transfer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// MigrateOptions tune Migrate.
type MigrateOptions struct {
	// Space is the vector space whose vectors are copied after the
	// records (the zero Space copies none: the target's servers embed
	// the records again). Vectors of other spaces are not copied.
	Space memory.Space
	// PartSize is how many records go to the target per part. Default
	// 5,000.
	PartSize int
	// Progress, when set, is told how far each stage is: "records" (done
	// of about total), "verifying" and "vectors".
	Progress func(stage string, done, total int)
	// Logger receives the stores' warnings. Default: discard.
	Logger *slog.Logger
}

// MigrateReport says what Migrate moved and how it checked it.
type MigrateReport struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Records is the number of records moved, Sections their number per
	// kind.
	Records  int            `json:"records"`
	Sections map[string]int `json:"sections"`
	// SourceDigest and TargetDigest are the SHA-256 of the two databases'
	// exports (what cairn export writes): equal when every record arrived
	// as it left.
	SourceDigest string `json:"sourceDigest"`
	TargetDigest string `json:"targetDigest"`
	// Vectors is the number of vectors copied, in Space.
	Vectors int    `json:"vectors"`
	Space   string `json:"space,omitempty"`
	// Millis is how long it took.
	Millis int64 `json:"millis"`
}

// Migrate copies every record of src into dst, which must be empty,
// streaming: the source is read in one snapshot, and the records go to
// the target in parts through one transaction. Before it commits, that
// transaction checks that both databases hold the same counts and that
// their exports have the same SHA-256, and copies the vectors of
// o.Space: the target gets all of it or, on any failure (a check that
// does not verify included), nothing, so a failed migration can simply
// be run again. rep names the two databases (From, To); Migrate fills in
// the rest but the time it took.
func Migrate(ctx context.Context, src, dst memory.Store, rep MigrateReport, o MigrateOptions) (MigrateReport, error) {
	if rep.Sections == nil {
		rep.Sections = map[string]int{}
	}
	if o.PartSize <= 0 {
		o.PartSize = 5000
	}
	if o.Progress == nil {
		o.Progress = func(string, int, int) {}
	}
	loader, ok := dst.(memory.Loader)
	if !ok {
		return rep, memory.Errorf(memory.CodeInternal, "the target store cannot load in parts")
	}
	srcStats, err := src.Stats(ctx)
	if err != nil {
		return rep, err
	}
	dstStats, err := dst.Stats(ctx)
	if err != nil {
		return rep, err
	}
	if n := recordCount(dstStats); n > 0 {
		return rep, memory.Errorf(memory.CodeConflict,
			"the target %s already holds %d records; migrate into an empty database (or another cairn_schema)", rep.To, n)
	}
	m := &migration{src: src, o: o, rep: &rep, srcStats: srcStats, srcHash: sha256.New(), records: make(chan memory.Record, o.PartSize)}
	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	go m.export(ectx)
	total := recordCount(srcStats)
	err = loader.Load(ctx, m.next, func(done int) { o.Progress("records", done, max(total, done)) }, func(l memory.Loaded) error { return m.check(ctx, l) })
	cancel()
	for range m.records { // let the export goroutine end
	}
	return rep, err
}

// migration is a Migrate on its way: the source's export streams into
// records while the target loads them.
type migration struct {
	src       memory.Store
	o         MigrateOptions
	rep       *MigrateReport
	srcStats  memory.Stats
	srcHash   hash.Hash
	records   chan memory.Record
	exportErr error
}

// export reads the source in one snapshot into records, hashing what
// cairn export would write; it closes records when done.
func (m *migration) export(ctx context.Context) {
	defer close(m.records)
	enc := exportEncoder(m.srcHash)
	m.exportErr = m.src.Export(ctx, func(r memory.Record) error {
		if err := enc.Encode(r); err != nil {
			return err
		}
		select {
		case m.records <- r:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
}

// next is the next part of the records for the target.
func (m *migration) next() (memory.Dump, error) {
	var d memory.Dump
	for d.Len() < m.o.PartSize {
		r, ok := <-m.records
		if !ok {
			if m.exportErr != nil {
				return memory.Dump{}, m.exportErr
			}
			break
		}
		d.Add(r)
		m.rep.Sections[string(r.Section())]++
		m.rep.Records++
	}
	return d, nil
}

// check verifies the load inside its transaction and copies the vectors
// there: a migration that does not verify, or whose vectors fail to
// copy, leaves the target as it was.
func (m *migration) check(ctx context.Context, l memory.Loaded) error {
	rep, progress := m.rep, m.o.Progress
	rep.SourceDigest = hex.EncodeToString(m.srcHash.Sum(nil))
	progress("verifying", 0, rep.Records)
	dstStats, err := l.Stats(ctx)
	if err != nil {
		return err
	}
	if diff := statsDiff(m.srcStats, dstStats); diff != "" {
		return memory.Errorf(memory.CodeDBError, "the migration does not verify: %s; nothing was written to the target", diff)
	}
	dstHash := sha256.New()
	enc := exportEncoder(dstHash)
	n := 0
	if err := l.Export(ctx, func(r memory.Record) error {
		n++
		if n%5000 == 0 {
			progress("verifying", n, rep.Records)
		}
		return enc.Encode(r)
	}); err != nil {
		return err
	}
	rep.TargetDigest = hex.EncodeToString(dstHash.Sum(nil))
	progress("verifying", n, rep.Records)
	if rep.TargetDigest != rep.SourceDigest || n != rep.Records {
		return memory.Errorf(memory.CodeDBError, "the migration does not verify: the source's export has SHA-256 %s (%d records), the target's %s (%d); nothing was written to the target",
			rep.SourceDigest, rep.Records, rep.TargetDigest, n)
	}
	if !m.o.Space.IsZero() {
		rep.Space = m.o.Space.String()
		if rep.Vectors, err = copyVectors(ctx, m.src, l, m.o.Space, m.srcStats, progress); err != nil {
			return err
		}
	}
	return nil
}

// exportEncoder writes records as cairn export does.
func exportEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// recordCount is the number of records a store's stats count.
func recordCount(st memory.Stats) int {
	return st.Observations + st.Capsules + st.Summaries + st.Pins + st.Thoughts + st.Entities + st.EntityObservations +
		st.Edges + st.CodeEntities + st.CodeEpisodes
}

// statsDiff names the counts in which two databases differ ("" when they
// hold as many records of every kind; paths, sizes and schema versions
// are not compared).
func statsDiff(src, dst memory.Stats) string {
	counts := func(st memory.Stats) []int {
		return []int{st.Observations, st.Redacted, st.IndexedObservations, st.Capsules, st.OpenCapsules, st.Summaries,
			st.RedactedSummaries, st.IndexedSummaries, st.Pins, st.Thoughts, st.RedactedThoughts, st.Entities,
			st.EntityObservations, st.Edges, st.CodeEntities, st.CodeEpisodes}
	}
	names := []string{"observations", "redacted observations", "indexed observations", "capsules", "open capsules", "summaries",
		"redacted summaries", "indexed summaries", "pins", "thoughts", "redacted thoughts", "entities",
		"entity observations", "edges", "code entities", "code episodes"}
	a, b := counts(src), counts(dst)
	var diffs []string
	for i := range a {
		if a[i] != b[i] {
			diffs = append(diffs, fmt.Sprintf("%s %d in the source, %d in the target", names[i], a[i], b[i]))
		}
	}
	return strings.Join(diffs, ", ")
}

// embeddingFiller stores vectors: a store, or a load's transaction.
type embeddingFiller interface {
	FillEmbeddings(ctx context.Context, es []memory.Embedding) (int, error)
}

// copyVectors copies the vectors of space, in batches.
func copyVectors(ctx context.Context, src memory.Store, dst embeddingFiller, space memory.Space, st memory.Stats, progress func(string, int, int)) (int, error) {
	total := st.Observations - st.Redacted + st.Summaries - st.RedactedSummaries + st.Thoughts - st.RedactedThoughts +
		st.Entities + st.EntityObservations + st.Edges
	var batch []memory.Embedding
	copied := 0
	var fillErr error
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		n, err := dst.FillEmbeddings(ctx, batch)
		copied += n
		batch = batch[:0]
		progress("vectors", copied, total)
		fillErr = err
		return err
	}
	err := src.Snapshot(ctx, func(r memory.Reader) error {
		_, err := r.LoadIndex(ctx, space, func(rec memory.IndexRecord) error {
			if rec.Vector == nil {
				return nil
			}
			batch = append(batch, memory.Embedding{Kind: rec.Kind, ID: rec.ID, Space: space, Vector: rec.Vector})
			if len(batch) == 1000 {
				return flush()
			}
			return nil
		})
		return err
	})
	if err == nil {
		err = flush()
	}
	if fillErr != nil {
		// The source's reader wraps what its callback returned: name the
		// target's failure, not the source's.
		err = fillErr
	}
	var me *memory.Error
	if err != nil && !errors.As(err, &me) {
		err = memory.Wrap(memory.CodeDBError, err, "copying the vectors failed")
	}
	return copied, err
}
