package memory

import "context"

// Store is the seam between cairn's services and a storage engine. Every
// method is safe for concurrent use. Writes are transactional: a method that
// returns an error has changed nothing. Errors are *Error values with stable
// codes (not_found, conflict, invalid_params, db_error).
//
// Stores do not generate ids, and read a clock only to date their ledger
// entries (a clock their opener injects): callers hand them complete
// records, so a store is deterministic.
type Store interface {
	ObservationStore
	CapsuleStore
	CapsuleLister
	PinStore
	TextSearcher
	Snapshotter
	VectorStore
	ThoughtStore
	GraphStore
	CodeStore
	Bulk
	Doctor
	LedgerStore

	// Stats reports counts and sizes.
	Stats(ctx context.Context) (Stats, error)
	// Close releases the store.
	Close() error
}

// NewObservation is an observation to append, and the capsule it joins.
type NewObservation struct {
	Observation
	// CapsuleID names an open capsule to join. When empty, the observation
	// joins the open capsule of its session, if the session has one.
	// Dimensions the observation leaves empty are filled from the capsule's
	// scope; a dimension set to a different value is invalid_params.
	CapsuleID string
}

// ObservationStore keeps observations.
type ObservationStore interface {
	// AppendObservations stores a batch, all or nothing, and returns the
	// observations as stored (scopes filled from their capsules).
	AppendObservations(ctx context.Context, batch []NewObservation) ([]Observation, error)
	// Observation returns one observation.
	Observation(ctx context.Context, id string) (Observation, error)
	// Redact forgets an observation: its content becomes RedactedContent, the
	// original text is overwritten, and it leaves the full-text index. Its id,
	// kind, time, scope, provenance and capsule membership remain. Redacting
	// a redacted observation changes nothing.
	Redact(ctx context.Context, id string) (Observation, error)
}

// CapsuleStore keeps capsules and their summaries.
type CapsuleStore interface {
	// OpenCapsule stores a new open capsule. A second open capsule for the
	// same session is a conflict.
	OpenCapsule(ctx context.Context, c Capsule) (Capsule, error)
	// CloseCapsule closes an open capsule at the given time, first writing
	// summary (when non-nil) as its summary. Closing a closed capsule is a
	// conflict.
	CloseCapsule(ctx context.Context, id string, closedAt int64, summary *Summary) (Capsule, error)
	// Capsule returns a capsule with its observation ids in order.
	Capsule(ctx context.Context, id string) (Capsule, error)
	// PutSummary writes the summary of s.CapsuleID, replacing any earlier one
	// (which keeps its id). The summary takes its capsule's scope.
	PutSummary(ctx context.Context, s Summary) (Summary, error)
	// Summary returns one summary.
	Summary(ctx context.Context, id string) (Summary, error)
	// RedactSummary forgets a summary: its content becomes
	// RedactedContent, the original text is overwritten, and it leaves the
	// full-text index and the vectors. Its id, capsule, confidence,
	// evidence refs, time and scope remain. Redacting a redacted summary
	// changes nothing.
	RedactSummary(ctx context.Context, id string) (Summary, error)
	// CurrentSummary returns the summary of the open capsule of
	// scope.SessionID when that capsule lies inside scope and its summary
	// is not forgotten, or nil.
	CurrentSummary(ctx context.Context, scope Scope) (*Summary, error)
}

// PinStore keeps pins.
type PinStore interface {
	// AddPin stores a pin. Its target must exist (not_found otherwise).
	AddPin(ctx context.Context, p Pin) (Pin, error)
	// RemovePin deletes a pin.
	RemovePin(ctx context.Context, id string) error
	// Pin returns one pin by id, active or expired (not_found when no
	// pin has the id), whether or not its target still exists.
	Pin(ctx context.Context, id string) (Pin, error)
	// ActivePins returns the pins active at q.Now whose scope matches q.Scope
	// on every dimension q.Scope sets, with their targets, newest first (ties
	// by id). Pins whose target is missing are dropped; pins on redacted
	// observations are returned only when q.IncludeRedacted.
	ActivePins(ctx context.Context, q PinQuery) ([]PinnedTarget, error)
}

// PinQuery selects active pins.
type PinQuery struct {
	Scope           Scope
	Now             int64
	IncludeRedacted bool
}

// Syntax says how a text query is read.
type Syntax string

// Query syntaxes.
const (
	// SyntaxText reads the query as user text: its words are OR'ed and
	// ranked by bm25. Any string is safe.
	SyntaxText Syntax = "text"
	// SyntaxFTS passes the query to the full-text engine as FTS5 query
	// syntax (space = AND, OR, NOT, "phrases", prefix*, NEAR). A malformed
	// query is invalid_params.
	SyntaxFTS Syntax = "fts"
)

// TextQuery is a full-text query in one of the two syntaxes.
type TextQuery struct {
	Syntax Syntax
	// Terms are the words of a SyntaxText query, already lowercased and
	// deduplicated; a record matches when it contains any of them.
	Terms []string
	// Expr is the FTS5 expression of a SyntaxFTS query.
	Expr string
}

// TextSearch asks for the best full-text matches among observations and
// summaries.
type TextSearch struct {
	Query TextQuery
	// Scope filters observations by their scope and summaries by their
	// capsule's scope.
	Scope Scope
	// Exclude lists record ids to leave out (before the limit applies).
	Exclude []string
	// Limit caps the hits taken from each table (observations, summaries).
	Limit int
}

// TextHit is one full-text match.
type TextHit struct {
	Entity Entity
	// Rank is FTS5's bm25 for the record over the whole index: negative,
	// lower is better.
	Rank float64
}

// TextResult holds the hits of each table, best rank first (ties by id).
// Redacted observations and summaries are never hits: they are not
// indexed.
type TextResult struct {
	Observations []TextHit
	Summaries    []TextHit
}

// TextSearcher runs full-text searches.
type TextSearcher interface {
	SearchText(ctx context.Context, q TextSearch) (TextResult, error)
}

// Reader is what retrieval reads: active pins, the current summary,
// full-text hits, records by id, and the changes that keep in-memory
// indexes current.
type Reader interface {
	ActivePins(ctx context.Context, q PinQuery) ([]PinnedTarget, error)
	CurrentSummary(ctx context.Context, scope Scope) (*Summary, error)
	TextSearcher
	// Entities returns the observations and summaries named, in the order
	// asked; ids that name nothing are left out.
	Entities(ctx context.Context, refs []EntityRef) ([]Entity, error)
	// Records returns the current state of records of one kind, in the
	// order asked (Gone for ids that name nothing searchable); no vectors.
	Records(ctx context.Context, kind VectorKind, ids []string) ([]IndexRecord, error)
	// LoadIndex calls fn for every searchable record, with its vector in
	// space, and returns the change sequence number the load reflects.
	LoadIndex(ctx context.Context, space Space, fn func(IndexRecord) error) (int64, error)
	// ChangesSince returns the current state of every record changed in
	// the first limit changes after change seq (every change after it when
	// limit <= 0), with its vector in space, and the seq of the last
	// change read (seq itself when there is none): a caller that follows
	// a long history reads it a page at a time by calling again from
	// there.
	ChangesSince(ctx context.Context, space Space, seq int64, limit int) ([]IndexRecord, int64, error)
	// ChangeRef returns a fingerprint of change seq (its kind and record),
	// or "" when the store has no such change: a persisted index checks
	// with it that it was built from this store's history.
	ChangeRef(ctx context.Context, seq int64) (string, error)
	// LastChange is the newest change's sequence number (0: none).
	LastChange(ctx context.Context) (int64, error)
}

// EntityRef names an observation or a summary.
type EntityRef struct {
	Type TargetType
	ID   string
}

// IndexRecord is a record as in-memory indexes see it.
type IndexRecord struct {
	// Kind says what the record is; Type (kept for observations and
	// summaries) is its TargetType.
	Kind VectorKind
	// Thought attributes: origin, tags, privacy, status.
	Origin  Origin
	Tags    []string
	Private bool
	Status  string
	// Vector is the record's embedding in the space the load asked for,
	// or nil when it has none there yet.
	Vector []float32
	Type   TargetType
	ID     string
	// Content is the searchable text ("" when Gone).
	Content string
	// Body is the record's own text when Content adds context around it (a
	// knowledge-graph fact's statement, which Content prefixes with its
	// entity's name); "" when Content is the record's own text.
	Body string
	// TS is the observation's ts or the summary's createdAt.
	TS    int64
	Scope Scope
	// CapsuleID and Position place an observation in its capsule
	// (Position -1 when it has none).
	CapsuleID string
	Position  int
	// Gone says the record is no longer searchable (forgotten or
	// deleted).
	Gone bool
}

// Snapshotter reads one consistent state of a store.
type Snapshotter interface {
	// Snapshot calls fn with a Reader that sees the store as it was when
	// Snapshot began, whatever is written meanwhile. The Reader is valid
	// only during fn.
	Snapshot(ctx context.Context, fn func(Reader) error) error
}

// Space identifies a vector space: a provider, a model and a dimension.
// Vectors compare only within one space.
type Space struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Dim      int    `json:"dim"`
}

// IsZero reports whether no space is set.
func (s Space) IsZero() bool { return s == Space{} }

// String renders the space as "provider/model/dim".
func (s Space) String() string { return s.Provider + "/" + s.Model + "/" + itoa(s.Dim) }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// VectorKind names what an embedding belongs to.
type VectorKind string

// Embedded record kinds.
const (
	VectorObservation   VectorKind = "observation"
	VectorSummary       VectorKind = "summary"
	VectorThought       VectorKind = "thought"
	VectorKGEntity      VectorKind = "kg_entity"
	VectorKGObservation VectorKind = "kg_observation"
	VectorKGEdge        VectorKind = "kg_edge"
	// VectorCodeEntity is a live code entity (PROPOSED or AUTHORITATIVE,
	// its artifact not forgotten). Its id is its repository id and key
	// joined by '|' (CodeEntityID), its scope's RepoID its repository.
	VectorCodeEntity VectorKind = "code_entity"
)

// CodeEntityID is the id a code entity has in the retrieval index and
// among vectors: its repository id and key joined by '|', which
// repository ids cannot hold.
func CodeEntityID(repoID, key string) string { return repoID + "|" + key }

// Embedding is a record's vector in one space.
type Embedding struct {
	Kind   VectorKind
	ID     string
	Space  Space
	Vector []float32
	// Text is the text the vector was computed from. FillEmbeddings
	// stores the vector only while it is still the record's searchable
	// text ("": whatever the text).
	Text string
}

// EmbedJob is a record waiting for a vector in a space.
type EmbedJob struct {
	Kind    VectorKind
	ID      string
	Content string
}

// VectorStats counts vectors.
type VectorStats struct {
	// InSpace counts records with a vector in the active space; Pending
	// records without one; OtherSpaces vectors of other spaces (kept, never
	// compared with the active space's).
	InSpace     int `json:"inSpace"`
	Pending     int `json:"pending"`
	OtherSpaces int `json:"otherSpaces"`
}

// VectorStore keeps embeddings.
type VectorStore interface {
	// PutEmbeddings stores vectors (replacing a record's earlier vector in
	// the same space). A vector for a record that no longer exists or was
	// forgotten is dropped.
	PutEmbeddings(ctx context.Context, es []Embedding) error
	// FillEmbeddings stores the vectors of records that still wait for
	// them, and returns how many it stored: a record that has a vector in
	// the space already (another process embedded it meanwhile), whose
	// searchable text is no longer the embedding's Text, or that no longer
	// exists keeps what it has. Several processes may fill the same
	// records at once: each vector is written once.
	FillEmbeddings(ctx context.Context, es []Embedding) (int, error)
	// PendingEmbeddings returns up to limit records with no vector in
	// space, in a stable order, after the record named by after ("" for
	// the start).
	PendingEmbeddings(ctx context.Context, space Space, after string, limit int) ([]EmbedJob, error)
	// DropEmbeddings deletes the vectors of every space but keep.
	DropEmbeddings(ctx context.Context, keep Space) (int, error)
	// VectorStats counts vectors for space.
	VectorStats(ctx context.Context, space Space) (VectorStats, error)
}

// Dump is a set of complete records, ids and times included, as an import
// writes them or an export reads them.
type Dump struct {
	// Observations are written as given: no capsule is joined.
	Observations []Observation
	// Capsules carry their ObservationIDs (membership, in order) and may be
	// open or closed.
	Capsules []Capsule
	// Logged are observations written as AppendObservations writes them
	// (joining their capsule, taking its scope), after the capsules.
	Logged    []NewObservation
	Summaries []Summary
	Pins      []Pin
	// Thoughts are written as given (their summary_of ids are not
	// references the store checks).
	Thoughts []Thought
	// Entities are created (never updated: an existing id is a conflict)
	// before the entity observations and edges that name them.
	Entities []KGEntity
	// KGObservations and Edges take their entity's scope (an edge its
	// source's): dimensions they leave empty are filled from it, and a
	// dimension set to another value is invalid_params.
	KGObservations []KGObservation
	Edges          []KGEdge
	// Code memory, in the order Import writes it: repositories, the vault,
	// file records, entities, the ledger (in order; its numbers are
	// assigned anew), episodes, their hydration rows and gate results.
	CodeRepos     []CodeRepo
	Artifacts     []Artifact
	CodeFiles     []CodeFile
	CodeEntities  []CodeEntity
	CodeLedger    []CodeTransition
	Episodes      []Episode
	HydrationRows []HydrationRow
	Gates         []GateResult
}

// Len is the number of records in the dump.
func (d Dump) Len() int {
	return len(d.Observations) + len(d.Capsules) + len(d.Logged) + len(d.Summaries) + len(d.Pins) +
		len(d.Thoughts) + len(d.Entities) + len(d.KGObservations) + len(d.Edges) +
		len(d.CodeRepos) + len(d.Artifacts) + len(d.CodeFiles) + len(d.CodeEntities) + len(d.CodeLedger) +
		len(d.Episodes) + len(d.HydrationRows) + len(d.Gates)
}

// Section names one of a Dump's lists of records.
type Section string

// The sections of a Dump, in the order Import writes them.
const (
	SectionObservations   Section = "observations"
	SectionCapsules       Section = "capsules"
	SectionLogged         Section = "logged"
	SectionSummaries      Section = "summaries"
	SectionPins           Section = "pins"
	SectionThoughts       Section = "thoughts"
	SectionEntities       Section = "entities"
	SectionKGObservations Section = "kg_observations"
	SectionEdges          Section = "edges"
	SectionCodeRepos      Section = "code_repos"
	SectionArtifacts      Section = "code_artifacts"
	SectionCodeFiles      Section = "code_files"
	SectionCodeEntities   Section = "code_entities"
	SectionCodeLedger     Section = "code_ledger"
	SectionEpisodes       Section = "code_episodes"
	SectionHydrationRows  Section = "code_hydration"
	SectionGates          Section = "code_gates"
)

// RecordError is an Import failure caused by one record of the dump (a
// duplicate id, a dangling reference): the record's section and its index
// there, so a caller can point at the input that held it. Its message is
// Err's.
type RecordError struct {
	Section Section
	Index   int
	Err     error
}

// Error returns Err's message.
func (e *RecordError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *RecordError) Unwrap() error { return e.Err }

// Bulk moves many records at once.
type Bulk interface {
	// Import writes a dump in one transaction: all of it or, on any error
	// (a duplicate id, a dangling reference), none of it. Sections are
	// written in the order of the Section constants. A typed error caused
	// by one record comes wrapped in a *RecordError naming it. progress,
	// when non-nil, is called with the number of records written so far.
	Import(ctx context.Context, d Dump, progress func(done int)) error
	// Export calls fn for every record: observations (in insertion order),
	// capsules (with their membership), summaries, pins, thoughts,
	// entities, entity observations, edges, then code memory (see Dump),
	// each kind in insertion order (code memory by key). Vectors are not exported: they are derived. It stops at fn's
	// first error and returns it.
	Export(ctx context.Context, fn func(Record) error) error
}

// Loader imports a dump too large to hold in memory, in parts. Both of
// cairn's stores implement it; it is how a database moves to another
// (cairn migrate).
type Loader interface {
	// Load imports the dumps next returns, in order, until it returns an
	// empty one, as Import would import them joined: in one transaction,
	// all of them or, on any error (next's included), none. Records may
	// name records of earlier parts. progress, when non-nil, is told how
	// many records are written so far. check, when non-nil, runs after
	// the last part, inside the transaction, before it commits: it sees
	// what the load wrote, vectors it fills commit with the records, and
	// an error from it rolls everything back as any other would.
	Load(ctx context.Context, next func() (Dump, error), progress func(done int), check func(Loaded) error) error
}

// Loaded is a Load's transaction as its check sees it, before the
// commit: the target's records as they will be once committed.
type Loaded interface {
	// Stats counts the records, as Store.Stats does.
	Stats(ctx context.Context) (Stats, error)
	// Export calls fn for every record, as Bulk.Export does.
	Export(ctx context.Context, fn func(Record) error) error
	// FillEmbeddings stores vectors of records that have none in their
	// space, as VectorStore.FillEmbeddings does, in the same transaction.
	FillEmbeddings(ctx context.Context, es []Embedding) (int, error)
}

// Record holds exactly one record of any type; it is the unit of export and
// import. In JSON it is an object with one key naming the type:
// {"observation": {...}}, {"capsule": {...}}, {"summary": {...}},
// {"pin": {...}}, {"thought": {...}}, {"kg_entity": {...}},
// {"kg_observation": {...}}, {"kg_edge": {...}}, or, for code memory,
// {"code_repo": {...}}, {"code_artifact": {...}}, {"code_file": {...}},
// {"code_entity": {...}}, {"code_transition": {...}},
// {"code_episode": {...}}, {"code_hydration": {...}} or
// {"code_gate": {...}}.
type Record struct {
	Observation   *Observation   `json:"observation,omitempty"`
	Capsule       *Capsule       `json:"capsule,omitempty"`
	Summary       *Summary       `json:"summary,omitempty"`
	Pin           *Pin           `json:"pin,omitempty"`
	Thought       *Thought       `json:"thought,omitempty"`
	KGEntity      *KGEntity      `json:"kg_entity,omitempty"`
	KGObservation *KGObservation `json:"kg_observation,omitempty"`
	KGEdge        *KGEdge        `json:"kg_edge,omitempty"`

	CodeRepo       *CodeRepo       `json:"code_repo,omitempty"`
	Artifact       *Artifact       `json:"code_artifact,omitempty"`
	CodeFile       *CodeFile       `json:"code_file,omitempty"`
	CodeEntity     *CodeEntity     `json:"code_entity,omitempty"`
	CodeTransition *CodeTransition `json:"code_transition,omitempty"`
	Episode        *Episode        `json:"code_episode,omitempty"`
	HydrationRow   *HydrationRow   `json:"code_hydration,omitempty"`
	Gate           *GateResult     `json:"code_gate,omitempty"`
}

// Section is the section of a Dump the record joins ("" for an empty
// record).
func (r Record) Section() Section {
	switch {
	case r.Observation != nil:
		return SectionObservations
	case r.Capsule != nil:
		return SectionCapsules
	case r.Summary != nil:
		return SectionSummaries
	case r.Pin != nil:
		return SectionPins
	case r.Thought != nil:
		return SectionThoughts
	case r.KGEntity != nil:
		return SectionEntities
	case r.KGObservation != nil:
		return SectionKGObservations
	case r.KGEdge != nil:
		return SectionEdges
	case r.CodeRepo != nil:
		return SectionCodeRepos
	case r.Artifact != nil:
		return SectionArtifacts
	case r.CodeFile != nil:
		return SectionCodeFiles
	case r.CodeEntity != nil:
		return SectionCodeEntities
	case r.CodeTransition != nil:
		return SectionCodeLedger
	case r.Episode != nil:
		return SectionEpisodes
	case r.HydrationRow != nil:
		return SectionHydrationRows
	case r.Gate != nil:
		return SectionGates
	}
	return ""
}

// Add appends the record to the dump.
func (d *Dump) Add(r Record) {
	switch r.Section() {
	case SectionObservations:
		d.Observations = append(d.Observations, *r.Observation)
	case SectionCapsules:
		d.Capsules = append(d.Capsules, *r.Capsule)
	case SectionSummaries:
		d.Summaries = append(d.Summaries, *r.Summary)
	case SectionPins:
		d.Pins = append(d.Pins, *r.Pin)
	case SectionThoughts:
		d.Thoughts = append(d.Thoughts, *r.Thought)
	case SectionEntities:
		d.Entities = append(d.Entities, *r.KGEntity)
	case SectionKGObservations:
		d.KGObservations = append(d.KGObservations, *r.KGObservation)
	case SectionEdges:
		d.Edges = append(d.Edges, *r.KGEdge)
	case SectionCodeRepos:
		d.CodeRepos = append(d.CodeRepos, *r.CodeRepo)
	case SectionArtifacts:
		d.Artifacts = append(d.Artifacts, *r.Artifact)
	case SectionCodeFiles:
		d.CodeFiles = append(d.CodeFiles, *r.CodeFile)
	case SectionCodeEntities:
		d.CodeEntities = append(d.CodeEntities, *r.CodeEntity)
	case SectionCodeLedger:
		d.CodeLedger = append(d.CodeLedger, *r.CodeTransition)
	case SectionEpisodes:
		d.Episodes = append(d.Episodes, *r.Episode)
	case SectionHydrationRows:
		d.HydrationRows = append(d.HydrationRows, *r.HydrationRow)
	case SectionGates:
		d.Gates = append(d.Gates, *r.Gate)
	}
}

// Stats describes a store.
type Stats struct {
	Path          string `json:"path"`
	SchemaVersion int    `json:"schemaVersion"`
	SizeBytes     int64  `json:"sizeBytes"`
	Observations  int    `json:"observations"`
	Redacted      int    `json:"redacted"`
	Capsules      int    `json:"capsules"`
	OpenCapsules  int    `json:"openCapsules"`
	Summaries     int    `json:"summaries"`
	// RedactedSummaries and RedactedThoughts count forgotten summaries and
	// thoughts.
	RedactedSummaries int `json:"redactedSummaries"`
	Pins              int `json:"pins"`
	// IndexedObservations and IndexedSummaries count full-text index rows;
	// they equal the unredacted observations and summaries when the index
	// is consistent.
	IndexedObservations int `json:"indexedObservations"`
	IndexedSummaries    int `json:"indexedSummaries"`
	// Thoughts, Entities, EntityObservations and Edges count the thoughts
	// and the knowledge graph.
	Thoughts           int `json:"thoughts"`
	RedactedThoughts   int `json:"redactedThoughts"`
	Entities           int `json:"entities"`
	EntityObservations int `json:"entityObservations"`
	Edges              int `json:"edges"`
	// CodeEntities and CodeEpisodes count code memory's entities and
	// episodes.
	CodeEntities int `json:"codeEntities"`
	CodeEpisodes int `json:"codeEpisodes"`
}

// Finding is one check of a store's health, with the fix when it fails.
type Finding struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	// Warning marks a check that is not OK without anything being broken
	// (work left to do that cairn also does by itself): it does not make
	// the health check fail.
	Warning bool `json:"warning,omitempty"`
	// Fix says how to repair a failed check.
	Fix string `json:"fix,omitempty"`
	// Repair names the automatic repair for a failed check, if there is
	// one (RepairRebuildIndex).
	Repair string `json:"repair,omitempty"`
}

// RepairRebuildIndex is the repair that rebuilds the full-text indexes.
const RepairRebuildIndex = "rebuild_index"

// Doctor inspects and repairs a store.
type Doctor interface {
	// Check inspects the store: file, schema, integrity, index consistency.
	Check(ctx context.Context) ([]Finding, error)
	// RebuildIndex rebuilds the full-text indexes from the records.
	RebuildIndex(ctx context.Context) error
}
