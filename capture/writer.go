package capture

import (
	"context"

	"github.com/cairnhq/cairn/memory"
)

// Writer applies hook batches to a store: the capture hooks' batch
// writer. It checks what it writes with the engine's own record checks
// and makes ids with the engine's generator, both given to it.
type Writer struct {
	Store memory.Store
	// CheckObservation validates an observation as every write of the
	// engine does, and redacts the secrets in its content.
	CheckObservation func(*memory.Observation) error
	// Redact replaces the secrets in a summary's text.
	Redact func(string) string
	// NewID makes a record's id from a prefix ("sum").
	NewID func(prefix string) string
}

// Result says what applying a hook batch wrote.
type Result struct {
	// CapsuleID is the session's open (or just closed) capsule, if any.
	CapsuleID string `json:"capsuleId,omitempty"`
	// Opened says the batch opened the capsule; Closed that it closed it.
	Opened bool `json:"opened,omitempty"`
	Closed bool `json:"closed,omitempty"`
	// Observations are the ids written (earlier writes of the same batch
	// are not written again, and not listed).
	Observations []string `json:"observations"`
	// Summary is the summary written (PreCompact, SessionEnd).
	Summary *memory.Summary `json:"summary,omitempty"`
}

// Apply writes a hook batch: it opens the session's capsule when the
// batch asks and the session has none, appends the observations, and
// writes the running or final summary. Applying a batch that was already
// written (the batch is applied again after a crash) changes nothing.
func (w Writer) Apply(ctx context.Context, b Batch) (Result, error) {
	res := Result{Observations: []string{}}
	if err := b.Scope.Validate(); err != nil {
		return res, err
	}
	if b.Scope.SessionID == "" {
		return res, memory.Errorf(memory.CodeInvalidParams, "a hook batch needs a session id")
	}
	open, err := w.openCapsule(ctx, b, &res)
	if err != nil {
		return res, err
	}
	if err := w.appendObservations(ctx, b, &res); err != nil {
		return res, err
	}
	if (b.Summarize || b.Close) && res.CapsuleID != "" && open.Status == memory.CapsuleOpen {
		if err := w.summarize(ctx, b, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// openCapsule finds the session's open capsule, or opens the one the
// batch asks for.
func (w Writer) openCapsule(ctx context.Context, b Batch, res *Result) (memory.Capsule, error) {
	open, err := w.Store.OpenCapsuleOf(ctx, b.Scope.SessionID)
	switch {
	case err == nil:
		res.CapsuleID = open.ID
	case !memory.IsCode(err, memory.CodeNotFound):
		return open, err
	case b.Open != nil:
		// Written already (the batch is applied again after a crash)?
		if c, err := w.Store.Capsule(ctx, b.Open.ID); err == nil {
			res.CapsuleID = c.ID
			break
		}
		c := memory.Capsule{ID: b.Open.ID, Type: memory.CapsuleTypeSession, Intent: b.Open.Intent, Scope: b.Scope, OpenedAt: b.TS}
		if _, err := w.Store.OpenCapsule(ctx, c); err != nil && !memory.IsCode(err, memory.CodeConflict) {
			return open, err
		}
		res.CapsuleID, res.Opened = c.ID, true
		open = c
	}
	return open, nil
}

// appendObservations writes the batch's observations, those an earlier
// try of the batch did not write.
func (w Writer) appendObservations(ctx context.Context, b Batch, res *Result) error {
	if len(b.Observations) == 0 {
		return nil
	}
	batch := make([]memory.NewObservation, 0, len(b.Observations))
	for _, o := range b.Observations {
		obs := memory.Observation{ID: o.ID, Kind: o.Kind, Content: o.Content, Provenance: o.Provenance, TS: o.TS, Scope: b.Scope}
		if err := w.CheckObservation(&obs); err != nil {
			return err
		}
		batch = append(batch, memory.NewObservation{Observation: obs})
	}
	out, err := w.Store.AppendObservations(ctx, batch)
	if memory.IsCode(err, memory.CodeConflict) {
		// Some were written by an earlier try of this batch: write the
		// rest.
		var rest []memory.NewObservation
		for _, n := range batch {
			if _, err := w.Store.Observation(ctx, n.ID); memory.IsCode(err, memory.CodeNotFound) {
				rest = append(rest, n)
			}
		}
		out, err = nil, nil
		if len(rest) > 0 {
			out, err = w.Store.AppendObservations(ctx, rest)
		}
	}
	if err != nil {
		return err
	}
	for _, o := range out {
		res.Observations = append(res.Observations, o.ID)
	}
	return nil
}

// summarize writes the capsule's running summary (PreCompact) or closes
// it with its final one (SessionEnd), made from its observations.
func (w Writer) summarize(ctx context.Context, b Batch, res *Result) error {
	c, err := w.Store.Capsule(ctx, res.CapsuleID)
	if err != nil {
		return err
	}
	obs, err := CapsuleObservations(ctx, w.Store, c)
	if err != nil {
		return err
	}
	s := memory.Summary{ID: c.SummaryID, CapsuleID: c.ID, Content: w.Redact(Summarize(c.Intent, obs)), Confidence: 0.5, CreatedAt: b.TS,
		EvidenceRefs: SummaryEvidence(c.ObservationIDs)}
	if s.ID == "" {
		s.ID = w.NewID("sum")
	}
	if b.Close {
		closed, err := w.Store.CloseCapsule(ctx, c.ID, max(b.TS, c.OpenedAt), &s)
		if err != nil && !memory.IsCode(err, memory.CodeConflict) {
			return err
		}
		res.Closed = err == nil
		if closed.SummaryID != "" {
			s.ID = closed.SummaryID
		}
	} else if _, err := w.Store.PutSummary(ctx, s); err != nil {
		return err
	}
	if got, err := w.Store.Summary(ctx, s.ID); err == nil {
		res.Summary = &got
	}
	return nil
}

// CapsuleObservations reads a capsule's observations in order.
func CapsuleObservations(ctx context.Context, store memory.Store, c memory.Capsule) ([]memory.Observation, error) {
	refs := make([]memory.EntityRef, len(c.ObservationIDs))
	for i, id := range c.ObservationIDs {
		refs[i] = memory.EntityRef{Type: memory.TargetObservation, ID: id}
	}
	var out []memory.Observation
	err := store.Snapshot(ctx, func(r memory.Reader) error {
		ents, err := r.Entities(ctx, refs)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if e.Observation != nil {
				out = append(out, *e.Observation)
			}
		}
		return nil
	})
	return out, err
}

// summaryEvidence is how many of a capsule's last observations its
// extractive summary names as evidence.
const summaryEvidence = 50

// SummaryEvidence is the evidence of a capsule's extractive summary: the
// ids of its last 50 observations.
func SummaryEvidence(ids []string) []string {
	if len(ids) > summaryEvidence {
		ids = ids[len(ids)-summaryEvidence:]
	}
	return append([]string{}, ids...)
}
