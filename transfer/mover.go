package transfer

import (
	"context"
	"log/slog"

	"github.com/cairnhq/cairn/memory"
)

// Mover imports records into a store and exports them. The engine fills
// its fields.
type Mover struct {
	Store memory.Store
	// MaxBytes caps one record's content; Redact replaces the secrets in
	// a record's text.
	MaxBytes int
	Redact   func(string) string
	// CheckThought validates a thought as the engine's writes of one do
	// (and redacts it); CheckFact validates a fact about an entity.
	CheckThought func(*memory.Thought) error
	CheckFact    func(entityID, content string) error
	// Logged reads a JSON Lines line that is an observation to record
	// (the fields of a log request), as the engine's log does, with now
	// (Unix ms) as its time when it gives none.
	Logged func(line []byte, now int64) (memory.NewObservation, error)
	// Target finds the observation or summary a pin points at, by type
	// or (t empty) by id alone; not_found when there is none.
	Target func(ctx context.Context, t memory.TargetType, id string) (memory.Entity, error)
	// Reembed, when set, embeds the records waiting for a vector after an
	// import (progress follows it) and says how many it embedded and how
	// many still wait.
	Reembed func(ctx context.Context, progress func(done, total int)) (embedded, pending int, err error)
	// IsDatabase reports whether data is a SQLite database file, which a
	// peer import read from a stream refuses.
	IsDatabase func(data []byte) bool
	// Now is the clock, in Unix milliseconds.
	Now    func() int64
	Logger *slog.Logger
}

// embed embeds what an import wrote, when the engine embeds on write; a
// failure is logged (the import stands: cairn reembed finishes the job).
func (m *Mover) embed(ctx context.Context, progress func(done, total int), detail bool) (embedded, pending int) {
	if m.Reembed == nil {
		return 0, 0
	}
	embedded, pending, err := m.Reembed(ctx, progress)
	if err != nil {
		m.Logger.Warn("imported records stored without vectors; run cairn reembed", "err", memory.Public(err).Message)
		if detail {
			m.Logger.Debug("embedder failure", "detail", memory.Detail(err))
		}
	}
	return embedded, pending
}
