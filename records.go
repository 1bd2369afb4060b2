package cairn

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/cairnhq/cairn/capture"
	"github.com/cairnhq/cairn/memory"
	"github.com/oklog/ulid/v2"
)

// MaxIDBytes bounds a caller-chosen record id.
const MaxIDBytes = memory.MaxIDBytes

// MaxBatch bounds how many observations one LogBatch call takes.
const MaxBatch = 10_000

// LogRequest records one observation.
type LogRequest struct {
	// ID is optional; cairn makes one ("obs_" + a ULID) when empty.
	ID      string      `json:"id,omitempty" jsonschema:"optional id for the observation; a new obs_ id is made when omitted"`
	Kind    memory.Kind `json:"kind" jsonschema:"what happened: tool_call, command, file_diff, error, message, node_start, node_end, node_output or node_error"`
	Content string      `json:"content" jsonschema:"the observation text, stored verbatim (at most 1 MiB)"`
	// Provenance is an optional JSON object saying where it came from.
	Provenance json.RawMessage `json:"provenance,omitempty" jsonschema:"optional JSON object saying where it came from (tool, file, turn); kept when the observation is forgotten, so never put the content in it"`
	// TS is when it happened (Unix ms); default now.
	TS       *int64       `json:"ts,omitempty" jsonschema:"when it happened, in Unix milliseconds; default now"`
	ScopeIDs memory.Scope `json:"scopeIds,omitzero" jsonschema:"where it belongs: sessionId, repoId, agentId, userId (each optional)"`
	// CapsuleID joins an open capsule; by default the observation joins
	// the open capsule of its session, if any.
	CapsuleID string `json:"capsuleId,omitempty" jsonschema:"optional open capsule to join; by default the open capsule of scopeIds.sessionId"`
	// IdempotencyKey, instead of ID, names the observation for retries:
	// a retry with the same key returns the first result.
	IdempotencyKey string `json:"idempotencyKey,omitempty" jsonschema:"optional key of this write (instead of id): a retry with the same key returns the first result instead of recording it twice"`
}

// Log records one observation.
func (e *Engine) Log(ctx context.Context, req LogRequest) (memory.Observation, error) {
	out, err := e.LogBatch(ctx, []LogRequest{req})
	if err != nil {
		return memory.Observation{}, err
	}
	return out[0], nil
}

// LogBatch records many observations in one transaction: all or none.
func (e *Engine) LogBatch(ctx context.Context, reqs []LogRequest) ([]memory.Observation, error) {
	if len(reqs) == 0 {
		return nil, memory.Errorf(memory.CodeInvalidParams, "no observations given")
	}
	if len(reqs) > MaxBatch {
		return nil, memory.Errorf(memory.CodeInvalidParams, "%d observations in one batch, over the limit of %d", len(reqs), MaxBatch)
	}
	batch := make([]memory.NewObservation, len(reqs))
	now := e.nowMs()
	for i, r := range reqs {
		o, err := e.newObservation(r, now)
		if err != nil {
			if len(reqs) > 1 {
				return nil, memory.Prefixed(err, "observation %d: ", i)
			}
			return nil, err
		}
		batch[i] = memory.NewObservation{Observation: o, CapsuleID: r.CapsuleID}
	}
	out, err := e.store.AppendObservations(ctx, batch)
	if err != nil {
		return e.replayBatch(ctx, err, reqs, batch)
	}
	jobs := make([]memory.EmbedJob, len(out))
	for i, o := range out {
		jobs[i] = memory.EmbedJob{Kind: memory.VectorObservation, ID: o.ID, Content: o.Content}
	}
	e.embedAfterWrite(ctx, jobs)
	return out, nil
}

func (e *Engine) newObservation(r LogRequest, now int64) (memory.Observation, error) {
	o := memory.Observation{ID: r.ID, Kind: r.Kind, Content: r.Content, Provenance: r.Provenance, TS: now, Scope: r.ScopeIDs}
	if err := e.observation(&o); err != nil {
		return memory.Observation{}, err
	}
	if err := memory.ValidateRef("capsuleId", r.CapsuleID, true); err != nil {
		return memory.Observation{}, err
	}
	if r.TS != nil {
		if *r.TS < 0 {
			return o, memory.Errorf(memory.CodeInvalidParams, "ts %d is negative", *r.TS)
		}
		o.TS = *r.TS
	}
	id, err := memory.KeyedID("obs", o.ID, r.IdempotencyKey)
	if err != nil {
		return o, err
	}
	if o.ID = id; o.ID == "" {
		o.ID = e.newID("obs")
	} else if err := memory.ValidateRef("id", o.ID, false); err != nil {
		return o, err
	}
	return o, nil
}

// replayBatch answers a batch that failed with err: when every
// observation named its id (or key) and each is stored as the request
// would have stored it, the batch was written before (a retry) and the
// stored observations are the result. Otherwise err.
func (e *Engine) replayBatch(ctx context.Context, err error, reqs []LogRequest, batch []memory.NewObservation) ([]memory.Observation, error) {
	out := make([]memory.Observation, len(batch))
	for i, b := range batch {
		if reqs[i].ID == "" && reqs[i].IdempotencyKey == "" {
			return nil, err
		}
		o, rerr := memory.Replay(err, b.ID, func() (memory.Observation, error) { return e.store.Observation(ctx, b.ID) },
			func(got memory.Observation) bool { return sameObservation(got, b.Observation, reqs[i].TS != nil) }, "observation")
		if rerr != nil {
			return nil, rerr
		}
		out[i] = o
	}
	return out, nil
}

// sameObservation reports whether stored is what want (a new
// observation, its content redacted) would have stored: kind, content,
// provenance, the scope's dimensions want sets, and the time if the
// request gave one.
func sameObservation(stored, want memory.Observation, timed bool) bool {
	return stored.Kind == want.Kind && stored.Content == want.Content && bytes.Equal(stored.Provenance, want.Provenance) &&
		scopeHolds(stored.Scope, want.Scope) && (!timed || stored.TS == want.TS)
}

// scopeHolds reports whether every dimension want sets is stored's.
func scopeHolds(stored, want memory.Scope) bool {
	return (want.SessionID == "" || want.SessionID == stored.SessionID) && (want.RepoID == "" || want.RepoID == stored.RepoID) &&
		(want.AgentID == "" || want.AgentID == stored.AgentID) && (want.UserID == "" || want.UserID == stored.UserID)
}

// checks are the record checks every write runs, the engine's and the
// capture hooks' recorder's: contents within the size limit, secrets
// redacted.
type checks struct {
	maxBytes int
	// redactor replaces secrets in what is written (nil: NoRedact).
	redactor *capture.Redactor
}

func newChecks(maxBytes int, noRedact bool) checks {
	c := checks{maxBytes: maxBytes}
	if !noRedact {
		c.redactor = &capture.Redactor{}
	}
	return c
}

// redactText replaces secrets in text with visible markers when the
// engine redacts (the default).
func (c checks) redactText(text string) string {
	out, _ := c.redactor.Redact(text)
	return out
}

// redactCount is redactText that also says how many secrets it
// replaced (hydrated code counts them in its blocks).
func (c checks) redactCount(text string) (string, int) {
	out, found := c.redactor.Redact(text)
	return out, len(found)
}

// observation validates a new observation's kind, content, scope and
// provenance, and redacts its content.
func (c checks) observation(o *memory.Observation) error {
	if _, err := memory.ParseKind(string(o.Kind)); err != nil {
		return err
	}
	if err := memory.ValidateContent("content", o.Content, c.maxBytes); err != nil {
		return err
	}
	if err := o.Scope.Validate(); err != nil {
		return err
	}
	prov, err := memory.NormalizeProvenance(o.Provenance)
	if err != nil {
		return err
	}
	if err := memory.ValidateText("provenance", string(prov), c.maxBytes); err != nil {
		return err
	}
	o.Provenance, o.Content = prov, c.redactText(o.Content)
	return nil
}

// writer is the capture hooks' batch writer over store, with these
// checks and ids.
func (c checks) writer(store memory.Store, ids *IDs) capture.Writer {
	return capture.Writer{Store: store, CheckObservation: c.observation, Redact: c.redactText, NewID: ids.New}
}

// IDs makes record ids: a prefix, '_' and a ULID of the clock's time,
// monotonic within the process. It is safe for concurrent use.
type IDs struct {
	mu      sync.Mutex
	now     func() time.Time
	entropy io.Reader
}

// NewIDs returns an id generator reading the clock now.
func NewIDs(now func() time.Time) *IDs {
	return &IDs{now: now, entropy: ulid.Monotonic(rand.Reader, 0)}
}

// New returns a fresh id: prefix, '_', and a ULID (time-ordered).
func (g *IDs) New(prefix string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return prefix + "_" + ulid.MustNew(ulid.Timestamp(g.now()), g.entropy).String()
}

// OpenCapsuleRequest opens a capsule.
type OpenCapsuleRequest struct {
	// ID is optional ("cap_" + a ULID by default).
	ID string `json:"id,omitempty" jsonschema:"optional id; a new cap_ id is made when omitted"`
	// Type defaults to "session".
	Type string `json:"type,omitempty" jsonschema:"capsule type, default session (lowercase letters, digits, _ and -)"`
	// Intent says what the session is for.
	Intent   string       `json:"intent,omitempty" jsonschema:"what the session is for"`
	ScopeIDs memory.Scope `json:"scopeIds,omitzero" jsonschema:"where it belongs; a session (sessionId) has at most one open capsule"`
	// IdempotencyKey, instead of ID, names the capsule for retries.
	IdempotencyKey string `json:"idempotencyKey,omitempty" jsonschema:"optional key of this write (instead of id): a retry with the same key returns the first result"`
}

// OpenCapsule opens a capsule. A session may have one open capsule at a
// time (conflict otherwise).
func (e *Engine) OpenCapsule(ctx context.Context, req OpenCapsuleRequest) (memory.Capsule, error) {
	c := memory.Capsule{ID: req.ID, Type: req.Type, Intent: req.Intent, Scope: req.ScopeIDs, OpenedAt: e.nowMs()}
	if c.Type == "" {
		c.Type = memory.CapsuleTypeSession
	}
	if !memory.ValidCapsuleType(c.Type) {
		return c, memory.Errorf(memory.CodeInvalidParams, "capsule type %q: use lowercase letters, digits, '_' or '-' (at most 64)", c.Type)
	}
	if err := memory.ValidateText("intent", c.Intent, e.maxBytes); err != nil {
		return c, err
	}
	if err := c.Scope.Validate(); err != nil {
		return c, err
	}
	id, err := memory.KeyedID("cap", c.ID, req.IdempotencyKey)
	if err != nil {
		return c, err
	}
	if c.ID = id; c.ID == "" {
		c.ID = e.newID("cap")
	} else if err := memory.ValidateRef("id", c.ID, false); err != nil {
		return c, err
	}
	out, err := e.store.OpenCapsule(ctx, c)
	if err != nil && id != "" {
		return memory.Replay(err, id, func() (memory.Capsule, error) { return e.store.Capsule(ctx, id) }, func(got memory.Capsule) bool {
			return got.Type == c.Type && got.Intent == c.Intent && scopeHolds(got.Scope, c.Scope)
		}, "capsule")
	}
	return out, err
}

// SummaryInput is the content of a capsule summary.
type SummaryInput struct {
	Content string `json:"content" jsonschema:"the summary text"`
	// Confidence is in [0, 1]; default 1.
	Confidence *float64 `json:"confidence,omitempty" jsonschema:"confidence in the summary, 0 to 1; default 1"`
	// EvidenceRefs name the records the summary rests on.
	EvidenceRefs []string `json:"evidenceRefs,omitempty" jsonschema:"ids of the observations the summary rests on"`
}

func (e *Engine) newSummary(capsuleID string, in SummaryInput) (memory.Summary, error) {
	s := memory.Summary{ID: e.newID("sum"), CapsuleID: capsuleID, Content: e.redactText(in.Content), Confidence: 1,
		CreatedAt: e.nowMs(), EvidenceRefs: in.EvidenceRefs}
	if err := memory.ValidateContent("summary content", s.Content, e.maxBytes); err != nil {
		return s, err
	}
	if in.Confidence != nil {
		s.Confidence = *in.Confidence
	}
	if !(s.Confidence >= 0 && s.Confidence <= 1) {
		return s, memory.Errorf(memory.CodeInvalidParams, "confidence %v is out of range [0, 1]", s.Confidence)
	}
	if s.EvidenceRefs == nil {
		s.EvidenceRefs = []string{}
	}
	if len(s.EvidenceRefs) > 1000 {
		return s, memory.Errorf(memory.CodeInvalidParams, "%d evidence refs, over the limit of 1000", len(s.EvidenceRefs))
	}
	for _, ref := range s.EvidenceRefs {
		if err := memory.ValidateRef("evidence ref", ref, false); err != nil {
			return s, err
		}
	}
	return s, nil
}

// CloseCapsuleRequest closes a capsule, optionally with its summary.
type CloseCapsuleRequest struct {
	CapsuleID string        `json:"capsuleId" jsonschema:"the open capsule to close"`
	Summary   *SummaryInput `json:"summary,omitempty" jsonschema:"optional final summary; replaces a running summary"`
}

// CloseCapsuleResult is a closed capsule and its summary, if it has one.
type CloseCapsuleResult struct {
	Capsule memory.Capsule  `json:"capsule"`
	Summary *memory.Summary `json:"summary"`
}

// CloseCapsule closes an open capsule; with a summary, the summary is written
// first (replacing a running one). Closing a closed capsule is a conflict.
func (e *Engine) CloseCapsule(ctx context.Context, req CloseCapsuleRequest) (CloseCapsuleResult, error) {
	if err := memory.ValidateRef("capsuleId", req.CapsuleID, false); err != nil {
		return CloseCapsuleResult{}, err
	}
	var sum *memory.Summary
	if req.Summary != nil {
		s, err := e.newSummary(req.CapsuleID, *req.Summary)
		if err != nil {
			return CloseCapsuleResult{}, err
		}
		sum = &s
	}
	c, err := e.store.CloseCapsule(ctx, req.CapsuleID, e.nowMs(), sum)
	if err != nil {
		return CloseCapsuleResult{}, err
	}
	res := CloseCapsuleResult{Capsule: c}
	if c.SummaryID != "" {
		s, err := e.store.Summary(ctx, c.SummaryID)
		if err != nil {
			return res, err
		}
		res.Summary = &s
		if sum != nil {
			e.embedAfterWrite(ctx, []memory.EmbedJob{{Kind: memory.VectorSummary, ID: s.ID, Content: s.Content}})
		}
	}
	return res, nil
}

// SummaryRequest writes the summary of a capsule (open or closed), replacing
// any earlier one; the summary keeps its id.
type SummaryRequest struct {
	CapsuleID string `json:"capsuleId" jsonschema:"the capsule to summarise, open or closed"`
	SummaryInput
}

// SetSummary writes a capsule's summary.
func (e *Engine) SetSummary(ctx context.Context, req SummaryRequest) (memory.Summary, error) {
	if err := memory.ValidateRef("capsuleId", req.CapsuleID, false); err != nil {
		return memory.Summary{}, err
	}
	s, err := e.newSummary(req.CapsuleID, req.SummaryInput)
	if err != nil {
		return s, err
	}
	out, err := e.store.PutSummary(ctx, s)
	if err != nil {
		return out, err
	}
	e.embedAfterWrite(ctx, []memory.EmbedJob{{Kind: memory.VectorSummary, ID: out.ID, Content: out.Content}})
	return out, nil
}

// Capsule returns a capsule with its observation ids in order.
func (e *Engine) Capsule(ctx context.Context, id string) (memory.Capsule, error) {
	return e.store.Capsule(ctx, id)
}

// Observation returns one observation.
func (e *Engine) Observation(ctx context.Context, id string) (memory.Observation, error) {
	return e.store.Observation(ctx, id)
}

// Summary returns one summary.
func (e *Engine) Summary(ctx context.Context, id string) (memory.Summary, error) {
	return e.store.Summary(ctx, id)
}

// PinRequest pins an observation or a summary.
type PinRequest struct {
	// TargetID names the observation or summary to pin.
	TargetID string `json:"targetId" jsonschema:"id of the observation or summary to pin"`
	// TargetType is optional: cairn finds the target by id.
	TargetType memory.TargetType `json:"targetType,omitempty" jsonschema:"observation or summary; found by id when omitted"`
	Reason     string            `json:"reason,omitempty" jsonschema:"why it matters, shown with the pin"`
	// TTLSeconds makes the pin expire that long after now; ExpiresAt (Unix
	// ms) sets the expiry directly. At most one of the two.
	TTLSeconds *int64 `json:"ttlSeconds,omitempty" jsonschema:"optional time to live in seconds"`
	ExpiresAt  *int64 `json:"expiresAt,omitempty" jsonschema:"optional expiry in Unix milliseconds (instead of ttlSeconds)"`
	// ScopeIDs is where the pin shows; by default the target's own scope.
	ScopeIDs *memory.Scope `json:"scopeIds,omitempty" jsonschema:"where the pin shows; default the target's own scope"`
	// ID is optional ("pin_" + a ULID by default); IdempotencyKey, instead
	// of it, names the pin for retries.
	ID             string `json:"id,omitempty" jsonschema:"optional id for the pin; a new pin_ id is made when omitted"`
	IdempotencyKey string `json:"idempotencyKey,omitempty" jsonschema:"optional key of this write (instead of id): a retry with the same key returns the first result instead of pinning twice"`
}

// MaxPinTTL bounds a pin's time to live (100 years).
const MaxPinTTL = 100 * 365 * 24 * time.Hour

// Pin marks a target as important. The target must exist.
func (e *Engine) Pin(ctx context.Context, req PinRequest) (memory.Pin, error) {
	now := e.nowMs()
	id, err := memory.KeyedID("pin", req.ID, req.IdempotencyKey)
	if err != nil {
		return memory.Pin{}, err
	}
	if id == "" {
		id = e.newID("pin")
	} else if err := memory.ValidateRef("id", id, false); err != nil {
		return memory.Pin{}, err
	}
	p := memory.Pin{ID: id, TargetID: req.TargetID, TargetType: req.TargetType, Reason: req.Reason, CreatedAt: now}
	if err := memory.ValidateRef("targetId", p.TargetID, false); err != nil {
		return p, err
	}
	if err := memory.ValidateText("reason", p.Reason, 4096); err != nil {
		return p, err
	}
	switch {
	case req.TTLSeconds != nil && req.ExpiresAt != nil:
		return p, memory.Errorf(memory.CodeInvalidParams, "give ttlSeconds or expiresAt, not both")
	case req.TTLSeconds != nil:
		if *req.TTLSeconds <= 0 || *req.TTLSeconds > int64(MaxPinTTL/time.Second) {
			return p, memory.Errorf(memory.CodeInvalidParams, "ttlSeconds %d is out of range [1, %d]", *req.TTLSeconds, int64(MaxPinTTL/time.Second))
		}
		exp := now + *req.TTLSeconds*1000
		p.ExpiresAt = &exp
	case req.ExpiresAt != nil:
		if *req.ExpiresAt <= now {
			return p, memory.Errorf(memory.CodeInvalidParams, "expiresAt %d is not in the future", *req.ExpiresAt)
		}
		exp := *req.ExpiresAt
		p.ExpiresAt = &exp
	}
	target, err := e.findTarget(ctx, p.TargetType, p.TargetID)
	if err != nil {
		return p, err
	}
	p.TargetType = target.Type()
	p.Scope = target.Scope()
	if req.ScopeIDs != nil {
		if err := req.ScopeIDs.Validate(); err != nil {
			return p, err
		}
		p.Scope = *req.ScopeIDs
	}
	out, err := e.store.AddPin(ctx, p)
	if err != nil && (req.ID != "" || req.IdempotencyKey != "") {
		return memory.Replay(err, p.ID, func() (memory.Pin, error) { return e.store.Pin(ctx, p.ID) }, func(got memory.Pin) bool {
			return got.TargetID == p.TargetID && got.Reason == p.Reason && scopeHolds(got.Scope, p.Scope)
		}, "pin")
	}
	return out, err
}

// findTarget loads a pin target by type, or by id alone when t is empty.
func (e *Engine) findTarget(ctx context.Context, t memory.TargetType, id string) (memory.Entity, error) {
	if t != "" && !t.Valid() {
		return memory.Entity{}, memory.Errorf(memory.CodeInvalidParams, "targetType %q: want observation or summary", t)
	}
	if t == "" || t == memory.TargetObservation {
		o, err := e.store.Observation(ctx, id)
		if err == nil {
			return memory.ObservationEntity(o), nil
		}
		if t != "" || !memory.IsCode(err, memory.CodeNotFound) {
			return memory.Entity{}, err
		}
	}
	s, err := e.store.Summary(ctx, id)
	if memory.IsCode(err, memory.CodeNotFound) && t == "" {
		return memory.Entity{}, memory.Errorf(memory.CodeNotFound, "no observation or summary has id %q", id)
	}
	return memory.SummaryEntity(s), err
}

// Unpin removes a pin.
func (e *Engine) Unpin(ctx context.Context, pinID string) error {
	if err := memory.ValidateRef("pin id", pinID, false); err != nil {
		return err
	}
	return e.store.RemovePin(ctx, pinID)
}

// PinView is a pin, whether it is in force, and the record it points at.
type PinView struct {
	Pin memory.Pin `json:"pin"`
	// Active says the pin is in force now: it has no expiry, or its expiry
	// is still ahead.
	Active bool `json:"active"`
	// Target is the pinned observation or summary (a forgotten one with
	// its content redacted), absent when the record no longer exists.
	Target *memory.Entity `json:"target,omitempty"`
}

// PinGet reads one pin by id, expired or not, with its target.
func (e *Engine) PinGet(ctx context.Context, pinID string) (PinView, error) {
	if err := memory.ValidateRef("pin id", pinID, false); err != nil {
		return PinView{}, err
	}
	p, err := e.store.Pin(ctx, pinID)
	if err != nil {
		return PinView{}, err
	}
	v := PinView{Pin: p, Active: p.ActiveAt(e.nowMs())}
	target, err := e.findTarget(ctx, p.TargetType, p.TargetID)
	switch {
	case err == nil:
		v.Target = &target
	case !memory.IsCode(err, memory.CodeNotFound):
		return PinView{}, err
	}
	return v, nil
}
