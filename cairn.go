package cairn

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/cairnhq/cairn/browse"
	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/graph"
	"github.com/cairnhq/cairn/heal"
	"github.com/cairnhq/cairn/index"
	"github.com/cairnhq/cairn/llm"
	"github.com/cairnhq/cairn/maintain"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
	"github.com/cairnhq/cairn/sqlite"
	"github.com/cairnhq/cairn/synth"
	"github.com/cairnhq/cairn/transfer"
	"github.com/cairnhq/cairn/voice"
)

// Options configure an Engine. The zero value (or nil) gives the defaults.
type Options struct {
	// Now is the clock. Default time.Now. Fix it for deterministic results.
	Now func() time.Time
	// MaxContentBytes caps the content of one record. Default 1 MiB.
	MaxContentBytes int
	// DefaultMaxCandidates is the candidate cap of a retrieval that sets
	// none. Default 50, the contract's.
	DefaultMaxCandidates int
	// Logger receives operational logs (never memory content at info level).
	// Default: discard.
	Logger *slog.Logger
	// HybridWeights tune the hybrid provider; nil means the defaults.
	HybridWeights *retrieve.HybridWeights
	// Provider is the default retrieval provider: "hybrid" (default) or
	// "local-fts".
	Provider string
	// Embedder embeds records and queries for semantic retrieval. Default:
	// the built-in GloVe embedder. It is fixed for the engine's life: a
	// failing embedder is never swapped for another.
	Embedder embed.Embedder
	// SkipEmbedOnWrite leaves new records pending instead of embedding them
	// as they are written (bulk loads embed afterwards with Reembed).
	SkipEmbedOnWrite bool
	// InnerVoice configures inner_voice.retrieve; nil means the defaults,
	// which leave it disabled.
	InnerVoice *retrieve.InnerVoiceConfig
	// Ask configures the inner_voice tool (SURR_TOP_K, SURR_SIM_THRESH,
	// SURR_DB_LIMIT, SURR_AUTO_MARK_REMOVAL); nil means the defaults, and
	// so does TopK or DBLimit left 0 (values out of bounds are clamped).
	Ask *synth.AskConfig
	// Synthesizer answers inner_voice when no language model does, and
	// when the model fails. Default: synth.Extractive (offline,
	// deterministic). Its answers go through the grounding verifier.
	Synthesizer synth.Synthesizer
	// LLM, when set, answers inner_voice with grounded synthesis: the
	// model's answer is checked by the grounding verifier and refused when
	// it is not grounded; when the model fails, the Synthesizer answers
	// instead and the result says why. LLMMaxOutputTokens is the answer's
	// budget the client reserves in its window (default 1024).
	LLM                llm.Client
	LLMMaxOutputTokens int
	// Verifier checks every inner_voice answer (nil: the defaults).
	Verifier *synth.Verifier
	// GroundingJudge, with LLM set, asks the model for a second opinion
	// on the claims the verifier supports in its answers
	// (CAIRN_GROUNDING_JUDGE): a claim stays supported only when both
	// agree. When the judge fails, the answer is verified offline alone.
	GroundingJudge bool
	// Sessions configure inner_voice's sessions and prompt budget (nil:
	// the defaults).
	Sessions *synth.SessionConfig
	// Maintenance configures the removal lifecycle (SURR_RETENTION_DAYS,
	// SURR_ARCHIVE_DIR, SURR_ARCHIVE_FORMAT); nil means the defaults, with
	// the archive in ./archive/ of the working directory.
	Maintenance *maintain.Config
	// NoLog (MCP_NO_LOG) keeps per-call logs to counters.
	NoLog bool
	// ETVTTL is how long code memory trusts a verified file while its size
	// and modification time are unchanged. Default 5 s.
	ETVTTL time.Duration
	// CodeRootsOnly makes code_index index only under CodeRoots (none:
	// code_index is feature_disabled), with one answer for every root
	// refused. The network faces (cairn serve) set it; the CLI and MCP
	// over stdio index what their user names.
	CodeRootsOnly bool
	// CodeRoots are the directories code_index may index when
	// CodeRootsOnly is set (CAIRN_CODE_ROOTS).
	CodeRoots []string
	// CodeIndexJobs bound the index jobs an engine with CodeRootsOnly
	// runs in the background (code_index answers at once with the job);
	// the zero value takes the defaults (2 running, 16 queued or running,
	// the last 64 finished kept).
	CodeIndexJobs CodeIndexJobOptions
	// MaxCodeFileBytes is the size above which code indexing skips a file.
	// Default 1 MiB.
	MaxCodeFileBytes int64
	// IndexDir is where the retrieval index's files live, shared by every
	// process that opens the database. Default: the database's path with
	// "-index" appended. IndexInMemory keeps the index in this process's
	// memory instead (rebuilt by every process: slow to start on a large
	// database).
	IndexDir string
	// IndexApproximateFrom, when positive, is how many vectors a group
	// (observations and summaries; thoughts and the knowledge graph) holds
	// from which its semantic search is approximate: a little faster on
	// unscoped questions over a million memories, recall@10 about 0.99,
	// and answers that change when the index trains its centroids again
	// (see docs/index.md). Default 0: always exact, so the same data give
	// the same answers whatever the index's history.
	IndexApproximateFrom int
	// IndexBackground runs the index's maintenance (writing out recent
	// records, merging files) in the background as soon as it is due: for
	// processes that live long (cairn serve, cairn mcp). Otherwise it runs
	// when the engine closes, bounded so a command exits quickly. It also
	// looks every 5 seconds for a SQLite write-ahead log that a forget
	// could not empty (another process was reading) and empties it once
	// the reader has ended (docs/forgetting.md).
	IndexBackground bool
	// IndexProgress, when set, is told how far an index build is.
	IndexProgress func(stage string, done, total int)
	// HealEmbeddings embeds, in the background, the records that wait
	// for a vector of the active space (written while the embedder was
	// down, or by a process killed between storing a record and its
	// vector): at open, then every HealInterval, in small batches, backing
	// off (from 5 s, doubling, up to 10 min) while the embedder fails.
	// Several processes may heal one database at once: each vector is
	// stored once. For processes that live long (cairn serve, cairn mcp);
	// Close stops it.
	HealEmbeddings bool
	// HealInterval is how often the healer looks for pending records.
	// Default DefaultHealInterval (1 minute).
	HealInterval time.Duration
	// NoRedact stores text as given. By default every write (observations,
	// summaries, thoughts, facts, imports) passes through the secret
	// redactor first, which replaces API keys, tokens, private keys and
	// passwords with visible markers such as [REDACTED:aws-key]
	// (CAIRN_REDACT=off sets this).
	NoRedact bool

	// settings, set by Settings.Options, is what Config reports.
	settings *Settings
	// healAfter replaces the healer's timer and healPass observes its
	// passes (tests).
	healAfter func(time.Duration) <-chan time.Time
	healPass  func(HealPass)
	// scrubAfter replaces the log scrubber's timer and scrubPass observes
	// its passes (tests).
	scrubAfter func(time.Duration) <-chan time.Time
	scrubPass  func(pending bool, err error)
}

// Engine is an open cairn database with its services. It is safe for
// concurrent use.
type Engine struct {
	path  string
	store memory.Store
	now   func() time.Time
	// checks are the record checks every write runs (size limit, secret
	// redaction); ids makes record ids.
	checks
	ids       *IDs
	log       *slog.Logger
	retriever *retrieve.Retriever
	index     *index.Index
	// voice is the inner voice: inner_voice.retrieve, inner_voice and
	// its sessions.
	voice *voice.Voice
	code  *code.Memory
	// browse serves the web page's listings.
	browse *browse.Service
	// codeRoots, when not nil, are the only directories code_index may
	// index (Options.CodeRootsOnly).
	codeRoots *[]string
	// codeJobs runs code_index in the background (nil: code_index runs
	// in the call, as the CLI and MCP over stdio want).
	codeJobs *code.Jobs
	// candidates, removals and life serve knowledge-graph staging and
	// moderation and the removal lifecycle; they are nil on a store
	// without those seams.
	candidates memory.CandidateStore
	removals   memory.RemovalStore
	life       *maintain.Lifecycle
	// maint runs maintenance_ops and serves the lifecycle's archives;
	// kg keeps the knowledge graph and moderates its candidates.
	maint *maintain.Ops
	kg    *graph.Curator
	// move imports and exports records.
	move *transfer.Mover

	toolNames []string
	settings  Settings

	embedder     embed.Embedder
	embedOnWrite bool
	// heal embeds pending records in the background (nil: it does not).
	heal *heal.Healer
	// scrub retries a write-ahead log's scrub a forget left pending (nil:
	// it does not).
	scrub *scrubber

	// degraded counts retrievals answered without the embedder.
	degraded atomic.Int64
}

// Open opens (creating if needed) the cairn database at path: a SQLite
// file, or, for a postgres:// or postgresql:// URL, a schema of a
// PostgreSQL database (see OpenStore).
func Open(path string, opts *Options) (*Engine, error) {
	return open(path, opts, nil)
}

// open is Open, with the engine over the store wrap makes of the
// database when wrap is set and the database is a SQLite file (tests: a
// store that fails on purpose).
func open(path string, opts *Options, wrap func(*sqlite.DB) memory.Store) (*Engine, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxContentBytes <= 0 {
		o.MaxContentBytes = memory.DefaultMaxContentBytes
	}
	if o.DefaultMaxCandidates <= 0 {
		o.DefaultMaxCandidates = retrieve.DefaultMaxCandidates
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	switch o.Provider {
	case "", retrieve.HybridName, retrieve.LocalFTSName:
	default:
		return nil, memory.Errorf(memory.CodeInvalidParams, "unknown provider %q (want hybrid or local-fts)", o.Provider)
	}
	if o.Embedder == nil {
		g, err := embed.NewGloVe()
		if err != nil {
			return nil, err
		}
		o.Embedder = g
	}
	db, defaultIndex, err := openStore(path, o)
	if err != nil {
		return nil, err
	}
	switch o.IndexDir {
	case IndexInMemory:
		o.IndexDir = ""
	case "":
		o.IndexDir = defaultIndex
	}
	var store memory.Store = db
	if lite, ok := db.(*sqlite.DB); ok && wrap != nil {
		store = wrap(lite)
	}
	e, err := newEngine(store, o)
	if err != nil {
		db.Close()
		return nil, err
	}
	e.path = path
	return e, nil
}

// IndexInMemory, as Options.IndexDir (or CAIRN_INDEX_DIR), keeps the
// retrieval index in each process's memory.
const IndexInMemory = "memory"

func newEngine(store memory.Store, o Options) (*Engine, error) {
	e := &Engine{
		store:  store,
		now:    o.Now,
		checks: newChecks(o.MaxContentBytes, o.NoRedact),
		ids:    NewIDs(o.Now),
		log:    o.Logger,

		embedder:     o.Embedder,
		embedOnWrite: !o.SkipEmbedOnWrite,
	}
	e.toolNames = ToolNames()
	if o.settings != nil {
		e.settings = *o.settings
	} else {
		e.settings = settingsOf(o)
	}
	e.settings.IndexDir = o.IndexDir
	if o.IndexDir == "" {
		e.settings.IndexDir = IndexInMemory
	}
	recall, err := e.openRetrieval(o)
	if err != nil {
		return nil, err
	}
	e.wireLifecycle(o)
	e.wireServices(o, recall)
	if o.HealEmbeddings {
		e.startHealer(o)
	}
	if o.IndexBackground {
		e.startScrubber(o)
	}
	return e, nil
}

// openRetrieval opens the retrieval index and makes the retrievers over
// it: the tiered one with its providers, and inner_voice.retrieve's.
func (e *Engine) openRetrieval(o Options) (*retrieve.InnerVoice, error) {
	weights := retrieve.DefaultHybridWeights
	if o.HybridWeights != nil {
		weights = *o.HybridWeights
	}
	ix, err := index.Open(index.Options{Dir: o.IndexDir, Embedder: o.Embedder, Logger: o.Logger,
		Background: o.IndexBackground, Progress: o.IndexProgress, IVFThreshold: max(0, o.IndexApproximateFrom)})
	if err != nil {
		return nil, err
	}
	e.index = ix
	var def, other retrieve.Provider = &retrieve.Hybrid{Index: e.index, Weights: weights}, retrieve.LocalFTS{}
	if o.Provider == retrieve.LocalFTSName {
		def, other = other, def
	}
	e.retriever = &retrieve.Retriever{Store: e.store, Provider: def, Providers: []retrieve.Provider{other}, Now: o.Now,
		DefaultMaxCandidates: o.DefaultMaxCandidates, OnDegraded: e.noteDegraded}
	ivc := retrieve.DefaultInnerVoiceConfig()
	if o.InnerVoice != nil {
		ivc = *o.InnerVoice
	}
	return &retrieve.InnerVoice{Store: e.store, Index: e.index, Config: ivc, Now: o.Now, Logger: o.Logger, NoLog: o.NoLog}, nil
}

// wireLifecycle takes the store's candidate and removal seams and makes
// the removal lifecycle, with its archive directory made absolute.
func (e *Engine) wireLifecycle(o Options) {
	e.candidates, _ = e.store.(memory.CandidateStore)
	if rs, ok := e.store.(memory.RemovalStore); ok {
		mc := maintain.DefaultConfig()
		if o.Maintenance != nil {
			mc = *o.Maintenance
		}
		if abs, err := filepath.Abs(mc.ArchiveDir); err == nil {
			mc.ArchiveDir = abs
		}
		e.removals = rs
		e.life = &maintain.Lifecycle{Store: rs, Config: mc, Now: o.Now, Logger: o.Logger}
		e.settings.Maintenance = mc
	}
	e.maint = &maintain.Ops{Life: e.life, Thoughts: e.store, Erase: e.eraseFromIndex}
}

// wireServices makes the services over the store, each given the
// engine's seams: the knowledge graph, import and export, the inner
// voice and code memory.
func (e *Engine) wireServices(o Options, recall *retrieve.InnerVoice) {
	e.kg = &graph.Curator{Store: e.store, Staged: e.candidates, Removals: e.removals, Thought: e.store.Thought, MaxBytes: o.MaxContentBytes, Now: e.nowMs,
		NewID: e.newID, Redact: e.redactText, Embed: e.embedAfterWrite, Erase: e.eraseFromIndex, Logger: o.Logger}
	if e.embedOnWrite {
		e.kg.Reembed = func(ctx context.Context) error {
			_, err := e.Reembed(ctx, ReembedRequest{}, nil)
			return err
		}
	}
	e.move = e.newMover()
	sessions, _ := e.store.(memory.InnerVoiceStore)
	e.voice = voice.New(voice.Options{Thoughts: e.store, Candidates: e.candidates, Removals: e.removals, Sessions: sessions,
		Recall: recall, Ask: o.Ask, Synthesizer: o.Synthesizer, LLM: o.LLM, LLMMaxOutputTokens: o.LLMMaxOutputTokens,
		Verifier: o.Verifier, Judge: o.GroundingJudge, SessionConfig: o.Sessions, Space: o.Embedder.Space(), NoLog: o.NoLog, Now: o.Now, NewID: e.newID,
		CheckThought: e.checkThought, Embed: e.embedAfterWrite, Logger: o.Logger})
	if o.CodeRootsOnly {
		roots := slices.Clone(o.CodeRoots)
		e.codeRoots = &roots
	}
	e.code = code.New(e.store, code.Options{ETVTTL: o.ETVTTL, MaxFileBytes: o.MaxCodeFileBytes, Embedder: o.Embedder, Index: e.index,
		Now: o.Now, NewID: e.newID, Logger: o.Logger, Redact: e.checks.redactCount})
	if o.CodeRootsOnly {
		e.codeJobs = e.code.NewJobs(o.CodeIndexJobs)
	}
	e.browse = &browse.Service{Store: e.store, Now: e.nowMs, Repo: e.code.Repo}
}

// Path returns the database file's path, or the PostgreSQL connection
// string without its password.
func (e *Engine) Path() string { return displayPath(e.path) }

// ConnString returns the database's path or connection string as given to
// Open: it may hold a password, so it is for starting another cairn
// process on the same database, never for showing.
func (e *Engine) ConnString() string { return e.path }

// Close stops the code index jobs (each leaves its repository as it
// was) and the background healer, finishes the retrieval index's due
// maintenance and closes the database.
func (e *Engine) Close() error {
	if e.codeJobs != nil {
		e.codeJobs.Close()
	}
	if e.heal != nil {
		e.heal.Stop()
	}
	if e.scrub != nil {
		e.scrub.stop()
	}
	ierr := e.index.Close()
	if err := e.store.Close(); err != nil {
		return err
	}
	return ierr
}

// Stats reports the database's counts and sizes.
func (e *Engine) Stats(ctx context.Context) (memory.Stats, error) { return e.store.Stats(ctx) }

// nowMs reads the clock in Unix milliseconds.
func (e *Engine) nowMs() int64 { return e.now().UnixMilli() }

// newID returns a fresh id: prefix, '_', and a ULID (time-ordered).
func (e *Engine) newID(prefix string) string { return e.ids.New(prefix) }
