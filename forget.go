package cairn

import (
	"context"

	"github.com/cairnhq/cairn/memory"
)

// Forgetting. Observations, summaries, thoughts and code artifacts are
// redacted in place: their text becomes "[redacted]" and is overwritten on
// disk, and they leave every index, while their id, time, scope and links
// stay so that provenance still resolves. Knowledge-graph records are
// deleted outright (nothing refers to them once gone). Either way the text
// leaves the database file, its write-ahead log (checkpointed) and the
// retrieval index's files before the call returns. Forgetting twice
// changes nothing.

// eraseFromIndex makes records the store no longer holds (forgotten,
// deleted) leave the retrieval index's files. The database already holds
// the change: should this step fail, the next process to open the index
// finds the records gone and rewrites the segments then.
func (e *Engine) eraseFromIndex(ctx context.Context) {
	if err := e.store.Snapshot(ctx, func(r memory.Reader) error { return e.index.Forget(ctx, r) }); err != nil {
		e.log.Warn("the forgotten text stays in the retrieval index's files until its next maintenance", "err", memory.Public(err).Message)
	}
}

// Forget redacts an observation: its content is replaced by "[redacted]",
// the original text is overwritten on disk, and it leaves the search index.
// Its id, time, scope, kind, provenance and capsule place remain, so
// provenance chains still resolve. Forgetting twice changes nothing.
func (e *Engine) Forget(ctx context.Context, observationID string) (memory.Observation, error) {
	if err := memory.ValidateRef("observation id", observationID, false); err != nil {
		return memory.Observation{}, err
	}
	o, err := e.store.Redact(ctx, observationID)
	if err != nil {
		return o, err
	}
	e.eraseFromIndex(ctx)
	return o, nil
}

// ForgetSummary redacts a capsule summary as Forget does an observation:
// its id, capsule, confidence, evidence refs and time remain; it is no
// longer the capsule's current summary, and pins on it show only with
// includeRedacted. Writing the capsule's summary again replaces it.
func (e *Engine) ForgetSummary(ctx context.Context, summaryID string) (memory.Summary, error) {
	if err := memory.ValidateRef("summary id", summaryID, false); err != nil {
		return memory.Summary{}, err
	}
	s, err := e.store.RedactSummary(ctx, summaryID)
	if err != nil {
		return s, err
	}
	e.eraseFromIndex(ctx)
	return s, nil
}

// ForgetThought redacts a thought: its content becomes "[redacted]" and
// its tags are dropped, its vectors deleted; its id, origin, privacy,
// status, significance, summary links, pipeline, time and scope remain.
// inner_voice_retrieve never returns it again.
func (e *Engine) ForgetThought(ctx context.Context, thoughtID string) (memory.Thought, error) {
	if err := memory.ValidateRef("thought id", thoughtID, false); err != nil {
		return memory.Thought{}, err
	}
	t, err := e.store.RedactThought(ctx, thoughtID)
	if err != nil {
		return t, err
	}
	e.eraseFromIndex(ctx)
	return t, nil
}

// ArtifactRef names a code artifact by its hash.
type ArtifactRef struct {
	Hash string `json:"hash" jsonschema:"the artifact's hash: 64 lowercase hex digits, as code_propose, code_entities and introspect_entity show it"`
}

// ForgetArtifact redacts a code artifact: its text becomes "[redacted]";
// its hash, type and time remain for the ledger and hydration history, and
// the entities whose artifact it is are no longer searched or hydrated.
func (e *Engine) ForgetArtifact(ctx context.Context, in ArtifactRef) (memory.Artifact, error) {
	return e.code.ForgetArtifact(ctx, in.Hash)
}
