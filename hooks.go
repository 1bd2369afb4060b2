package cairn

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/cairnhq/cairn/capture"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
	"github.com/oklog/ulid/v2"
)

// EnvRedact turns the secret redactor off when set to "off" (or 0, false,
// no): every write then stores text as given. On by default.
const EnvRedact = "CAIRN_REDACT"

// redactText replaces secrets in text with visible markers when the
// engine redacts (the default).
func (e *Engine) redactText(text string) string {
	out, _ := e.redactor.Redact(text)
	return out
}

// Recorder is the lean write path of capture hooks: the database alone,
// without the retrieval index or an embedder, so that a process started
// for one hook call writes and exits in milliseconds. What it writes is
// searchable as soon as another process's index catches up with the
// database (every engine does when it opens); its vectors are computed by
// a long-running cairn (serve, mcp) or by cairn reembed.
type Recorder struct {
	store    memory.Store
	now      func() time.Time
	maxBytes int
	redactor *capture.Redactor
	log      *slog.Logger

	idMu    sync.Mutex
	entropy io.Reader
}

// RecorderOptions configure a Recorder; nil gives the defaults.
type RecorderOptions struct {
	Now func() time.Time
	// NoRedact stores text without redacting secrets.
	NoRedact        bool
	MaxContentBytes int
	Logger          *slog.Logger
}

// OpenRecorder opens the database at path for capture writes.
func OpenRecorder(path string, opts *RecorderOptions) (*Recorder, error) {
	var o RecorderOptions
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxContentBytes <= 0 {
		o.MaxContentBytes = memory.DefaultMaxContentBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	var db memory.Store
	if IsPostgres(path) {
		st, _, err := openStore(path, Options{Logger: o.Logger, Now: o.Now})
		if err != nil {
			return nil, err
		}
		db = st
	} else {
		st, err := sqlite.Open(path, &sqlite.Options{Logger: o.Logger, ReadConns: 1, Now: o.Now})
		if err != nil {
			return nil, err
		}
		db = st
	}
	r := &Recorder{store: db, now: o.Now, maxBytes: o.MaxContentBytes, log: o.Logger,
		entropy: ulid.Monotonic(rand.Reader, 0)}
	if !o.NoRedact {
		r.redactor = &capture.Redactor{}
	}
	return r, nil
}

// Close closes the database.
func (r *Recorder) Close() error { return r.store.Close() }

func (r *Recorder) newID(prefix string) string {
	r.idMu.Lock()
	defer r.idMu.Unlock()
	return prefix + "_" + ulid.MustNew(ulid.Timestamp(r.now()), r.entropy).String()
}

// CaptureResult says what applying a hook batch wrote.
type CaptureResult struct {
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

// Apply writes a hook batch (see capture.Batch). Applying a batch that
// was already written changes nothing.
func (r *Recorder) Apply(ctx context.Context, b capture.Batch) (CaptureResult, error) {
	return applyBatch(ctx, r.store, r.redactor, r.maxBytes, r.newID, b)
}

// ApplyCapture writes a hook batch as Recorder.Apply does, and embeds
// what it wrote.
func (e *Engine) ApplyCapture(ctx context.Context, b capture.Batch) (CaptureResult, error) {
	res, err := applyBatch(ctx, e.store, e.redactor, e.maxBytes, e.newID, b)
	if err != nil {
		return res, err
	}
	var jobs []memory.EmbedJob
	for _, id := range res.Observations {
		if o, err := e.store.Observation(ctx, id); err == nil {
			jobs = append(jobs, memory.EmbedJob{Kind: memory.VectorObservation, ID: o.ID, Content: o.Content})
		}
	}
	if res.Summary != nil {
		jobs = append(jobs, memory.EmbedJob{Kind: memory.VectorSummary, ID: res.Summary.ID, Content: res.Summary.Content})
	}
	e.embedAfterWrite(ctx, jobs)
	return res, nil
}

func applyBatch(ctx context.Context, store memory.Store, red *capture.Redactor, maxBytes int, newID func(string) string, b capture.Batch) (CaptureResult, error) {
	res := CaptureResult{Observations: []string{}}
	if err := b.Scope.Validate(); err != nil {
		return res, err
	}
	if b.Scope.SessionID == "" {
		return res, memory.Errorf(memory.CodeInvalidParams, "a hook batch needs a session id")
	}
	open, err := store.OpenCapsuleOf(ctx, b.Scope.SessionID)
	switch {
	case err == nil:
		res.CapsuleID = open.ID
	case !memory.IsCode(err, memory.CodeNotFound):
		return res, err
	case b.Open != nil:
		// Written already (the batch is applied again after a crash)?
		if c, err := store.Capsule(ctx, b.Open.ID); err == nil {
			res.CapsuleID = c.ID
			break
		}
		c := memory.Capsule{ID: b.Open.ID, Type: memory.CapsuleTypeSession, Intent: b.Open.Intent, Scope: b.Scope, OpenedAt: b.TS}
		if _, err := store.OpenCapsule(ctx, c); err != nil && !memory.IsCode(err, memory.CodeConflict) {
			return res, err
		}
		res.CapsuleID, res.Opened = c.ID, true
		open = c
	}
	if len(b.Observations) > 0 {
		batch := make([]memory.NewObservation, 0, len(b.Observations))
		for _, o := range b.Observations {
			text, _ := red.Redact(o.Content)
			if err := memory.ValidateContent("content", text, maxBytes); err != nil {
				return res, err
			}
			if _, err := memory.ParseKind(string(o.Kind)); err != nil {
				return res, err
			}
			prov, err := memory.NormalizeProvenance(o.Provenance)
			if err != nil {
				return res, err
			}
			batch = append(batch, memory.NewObservation{Observation: memory.Observation{ID: o.ID, Kind: o.Kind,
				Content: text, Provenance: prov, TS: o.TS, Scope: b.Scope}})
		}
		out, err := store.AppendObservations(ctx, batch)
		if memory.IsCode(err, memory.CodeConflict) {
			// Some were written by an earlier try of this batch: write the
			// rest.
			var rest []memory.NewObservation
			for _, n := range batch {
				if _, err := store.Observation(ctx, n.ID); memory.IsCode(err, memory.CodeNotFound) {
					rest = append(rest, n)
				}
			}
			out, err = nil, nil
			if len(rest) > 0 {
				out, err = store.AppendObservations(ctx, rest)
			}
		}
		if err != nil {
			return res, err
		}
		for _, o := range out {
			res.Observations = append(res.Observations, o.ID)
		}
	}
	if (b.Summarize || b.Close) && res.CapsuleID != "" && open.Status == memory.CapsuleOpen {
		c, err := store.Capsule(ctx, res.CapsuleID)
		if err != nil {
			return res, err
		}
		obs, err := capsuleObservations(ctx, store, c)
		if err != nil {
			return res, err
		}
		text, _ := red.Redact(capture.Summarize(c.Intent, obs))
		s := memory.Summary{ID: c.SummaryID, CapsuleID: c.ID, Content: text, Confidence: 0.5, CreatedAt: b.TS,
			EvidenceRefs: lastIDs(c.ObservationIDs, 50)}
		if s.ID == "" {
			s.ID = newID("sum")
		}
		if b.Close {
			closed, err := store.CloseCapsule(ctx, c.ID, max(b.TS, c.OpenedAt), &s)
			if err != nil && !memory.IsCode(err, memory.CodeConflict) {
				return res, err
			}
			res.Closed = err == nil
			if closed.SummaryID != "" {
				s.ID = closed.SummaryID
			}
		} else if _, err := store.PutSummary(ctx, s); err != nil {
			return res, err
		}
		if got, err := store.Summary(ctx, s.ID); err == nil {
			res.Summary = &got
		}
	}
	return res, nil
}

// capsuleObservations reads a capsule's observations in order.
func capsuleObservations(ctx context.Context, store memory.Store, c memory.Capsule) ([]memory.Observation, error) {
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

func lastIDs(ids []string, n int) []string {
	if len(ids) > n {
		ids = ids[len(ids)-n:]
	}
	return append([]string{}, ids...)
}
