package code

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/index"
	"github.com/cairnhq/cairn/memory"
)

// Defaults of Options.
const (
	DefaultMaxFileBytes   = 1 << 20
	DefaultBudgetTokens   = 8000
	DefaultBudgetEntities = 50
	MaxBudgetTokens       = 1_000_000
	MaxBudgetEntities     = 10_000
)

// Options configure code memory. Zero values take the defaults.
type Options struct {
	// ETVTTL is how long a verified file stays trusted while its size and
	// modification time are unchanged. Default 5 s.
	ETVTTL time.Duration
	// MaxFileBytes is the size above which a file is skipped by the index
	// (with the reason recorded) and reported stale by verification.
	// Default 1 MiB.
	MaxFileBytes int64
	// Embedder embeds entities and queries for semantic candidates; nil
	// leaves hydration lexical.
	Embedder embed.Embedder
	// Now is the clock; NewID makes ids with a prefix.
	Now   func() time.Time
	NewID func(prefix string) string
	// Logger receives decision logs (never code or queries at info level).
	Logger *slog.Logger
	// Redact, when set, rewrites the text of every hydrated block (the
	// secret redactor) and says how many secrets it replaced.
	Redact func(text string) (string, int)
	// Ranking weighs the signals of retrieved candidates; the zero value
	// is DefaultRanking.
	Ranking Ranking
	// Index is the retrieval index that holds the code entities, shared
	// with retrieve (it follows the store's change log, which the store
	// must expose through memory.Snapshotter). Nil: an index in this
	// process's memory, over Embedder's space.
	Index *index.Index
}

// Memory is the code-memory service over a store. It is safe for
// concurrent use.
type Memory struct {
	store    memory.CodeStore
	verifier *Verifier
	embedder embed.Embedder
	maxBytes int64
	now      func() time.Time
	newID    func(string) string
	log      *slog.Logger
	ranking  Ranking
	redact   func(string) (string, int)
	index    *index.Index
	snap     memory.Snapshotter // nil: the store takes no snapshots
}

// New returns the service over store.
func New(store memory.CodeStore, o Options) *Memory {
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Ranking == (Ranking{}) {
		o.Ranking = DefaultRanking
	}
	if o.NewID == nil {
		panic("code.New: Options.NewID is required")
	}
	if o.Index == nil {
		// An index without a directory keeps to memory and cannot fail.
		o.Index, _ = index.Open(index.Options{Embedder: o.Embedder, Logger: o.Logger})
	}
	snap, _ := store.(memory.Snapshotter)
	return &Memory{
		store: store, verifier: NewVerifier(o.ETVTTL, o.Now, o.Logger), embedder: o.Embedder,
		maxBytes: o.MaxFileBytes, now: o.Now, newID: o.NewID, log: o.Logger, ranking: o.Ranking, redact: o.Redact,
		index: o.Index, snap: snap,
	}
}

// ETVStats reports the verification cache's counters.
func (m *Memory) ETVStats() ETVStats { return m.verifier.Stats() }

func (m *Memory) nowMs() int64 { return m.now().UnixMilli() }

// timedOut reports err as timeout when ctx's time limit caused it (the
// HTTP request timeout cancels the call's context): whatever step met the
// deadline, a store write or a file read, the caller learns the call ran
// out of time, not that the database failed.
func timedOut(ctx context.Context, err error) error {
	if err == nil || memory.IsCode(err, memory.CodeTimeout) || !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return err
	}
	return memory.Wrap(memory.CodeTimeout, err, "the call ran past its time limit and was stopped")
}
