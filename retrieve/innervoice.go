package retrieve

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cairnhq/cairn/content"
	"github.com/cairnhq/cairn/index"
	"github.com/cairnhq/cairn/memory"
)

// InnerVoiceConfig is inner_voice.retrieve's configuration, read once at
// start-up (SURR_ENABLE_INNER_VOICE, SURR_INNER_VOICE_*).
type InnerVoiceConfig struct {
	Enabled bool `json:"enabled"`
	// Mix is the KG share of the slots, in [0, 1].
	Mix float64 `json:"mix"`
	// TopKDefault is top_k when a request sets none, in [1, 50].
	TopKDefault int `json:"topKDefault"`
	// Floor is the default minimum similarity; the search may lower it to
	// MinFloor so that each non-empty source has a hit.
	Floor    float64 `json:"floor"`
	MinFloor float64 `json:"minFloor"`
	// MaxCandidatesPerSource caps each source's fetch.
	MaxCandidatesPerSource int `json:"maxCandidatesPerSource"`
}

// Inner voice bounds.
const (
	innerVoiceTopKMax = 50
	defaultMinFloor   = 0.15
	defaultFloor      = 0.35
	defaultMaxPerSrc  = 150
	// floorStep is how much the adaptive floor drops at a time.
	floorStep = 0.05
)

// DefaultInnerVoiceConfig is the configuration with nothing set: disabled.
func DefaultInnerVoiceConfig() InnerVoiceConfig {
	return InnerVoiceConfig{Mix: 0.6, TopKDefault: 10, Floor: defaultFloor, MinFloor: defaultMinFloor, MaxCandidatesPerSource: defaultMaxPerSrc}
}

// InnerVoiceConfigFromEnv reads the settings the seed names, enforcing its
// bounds: an out-of-range mix or top_k is clamped, an invalid min_floor
// falls back to 0.15, a candidate cap below top_k becomes max(3·top_k,
// 150); each correction comes back as a note (and is logged at start-up).
// CAIRN_INNER_VOICE_FLOOR sets the default floor (0.35).
func InnerVoiceConfigFromEnv(getenv func(string) string) (InnerVoiceConfig, []string) {
	c := DefaultInnerVoiceConfig()
	var notes []string
	c.Enabled = strings.TrimSpace(getenv("SURR_ENABLE_INNER_VOICE")) == "1"
	num := func(name string) (float64, bool) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return 0, false
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			notes = append(notes, fmt.Sprintf("%s=%q is not a number; ignored", name, v))
			return 0, false
		}
		return f, true
	}
	if f, ok := num("SURR_INNER_VOICE_MIX"); ok {
		c.Mix = f
		if f < 0 || f > 1 {
			c.Mix = math.Min(1, math.Max(0, f))
			notes = append(notes, fmt.Sprintf("SURR_INNER_VOICE_MIX=%v is outside [0, 1]; clamped to %v", f, c.Mix))
		}
	}
	if f, ok := num("SURR_INNER_VOICE_TOPK_DEFAULT"); ok {
		k := int(math.Round(f))
		c.TopKDefault = min(innerVoiceTopKMax, max(1, k))
		if float64(c.TopKDefault) != f {
			notes = append(notes, fmt.Sprintf("SURR_INNER_VOICE_TOPK_DEFAULT=%v is outside [1, 50] or not whole; clamped to %d", f, c.TopKDefault))
		}
	}
	if f, ok := num("SURR_INNER_VOICE_MIN_FLOOR"); ok {
		if f > 0 && f < 1 {
			c.MinFloor = f
		} else {
			notes = append(notes, fmt.Sprintf("SURR_INNER_VOICE_MIN_FLOOR=%v is outside (0, 1); falling back to %v", f, defaultMinFloor))
		}
	}
	if f, ok := num("CAIRN_INNER_VOICE_FLOOR"); ok {
		if f >= 0 && f <= 1 {
			c.Floor = f
		} else {
			notes = append(notes, fmt.Sprintf("CAIRN_INNER_VOICE_FLOOR=%v is outside [0, 1]; using %v", f, defaultFloor))
		}
	}
	if c.Floor < c.MinFloor {
		notes = append(notes, fmt.Sprintf("the floor %v is below min_floor %v; raised to it", c.Floor, c.MinFloor))
		c.Floor = c.MinFloor
	}
	if f, ok := num("SURR_INNER_VOICE_MAX_CANDIDATES_PER_SOURCE"); ok {
		c.MaxCandidatesPerSource = int(f)
	}
	if c.MaxCandidatesPerSource < c.TopKDefault || c.MaxCandidatesPerSource > 100_000 {
		fixed := max(3*c.TopKDefault, defaultMaxPerSrc)
		notes = append(notes, fmt.Sprintf("SURR_INNER_VOICE_MAX_CANDIDATES_PER_SOURCE=%d is below top_k %d (or absurd); set to %d",
			c.MaxCandidatesPerSource, c.TopKDefault, fixed))
		c.MaxCandidatesPerSource = fixed
	}
	return c, notes
}

// InnerVoiceRequest is inner_voice.retrieve's parameters.
type InnerVoiceRequest struct {
	Query          string   `json:"query" jsonschema:"what to recall, in natural language"`
	TopK           *int     `json:"top_k,omitempty" jsonschema:"most snippets to return; default 10, clamped to 1..50"`
	Floor          *float64 `json:"floor,omitempty" jsonschema:"minimum cosine similarity; may adapt down to min_floor so each source has a hit"`
	Mix            *float64 `json:"mix,omitempty" jsonschema:"share of slots for the knowledge graph: 0 thoughts only, 1 KG only; default 0.6, clamped to 0..1"`
	IncludePrivate bool     `json:"include_private,omitempty" jsonschema:"include private thoughts"`
	IncludeTags    []string `json:"include_tags,omitempty" jsonschema:"only items with at least one of these tags"`
	ExcludeTags    []string `json:"exclude_tags,omitempty" jsonschema:"leave out items with any of these tags"`
	// CandidateCap, when positive, lowers each source's candidate cap
	// (Go callers only: the inner_voice tool's SURR_DB_LIMIT).
	CandidateCap int `json:"-"`
	// WordsWhenDegraded, when the query cannot be embedded
	// (embedder_unavailable), ranks by words instead of failing: the
	// CandidateCap (else MaxCandidatesPerSource) most recent records of
	// each kind the filters allow are scored by the share of the query's
	// words they hold, weighted by rarity, and Diagnostics.Degraded says
	// so (Go callers only: the inner_voice tool's answers;
	// inner_voice.retrieve itself fails).
	WordsWhenDegraded bool `json:"-"`
}

// Snippet is one retrieved item, in the seed's exact shape.
type Snippet struct {
	ID          string  `json:"id"`
	Table       string  `json:"table"`
	SourceType  string  `json:"source_type"`
	Origin      string  `json:"origin"`
	TrustTier   string  `json:"trust_tier"`
	CreatedAt   string  `json:"created_at"`
	Text        string  `json:"text"`
	Score       float64 `json:"score"`
	ContentHash string  `json:"content_hash"`
	SpanStart   int     `json:"span_start"`
	SpanEnd     int     `json:"span_end"`
}

// InnerVoiceDiagnostics explain a retrieval, without any content.
type InnerVoiceDiagnostics struct {
	Provider          string  `json:"provider"`
	Model             string  `json:"model"`
	Dim               int     `json:"dim"`
	KReq              int     `json:"k_req"`
	KRet              int     `json:"k_ret"`
	KGCandidates      int     `json:"kg_candidates"`
	ThoughtCandidates int     `json:"thought_candidates"`
	FloorUsed         float64 `json:"floor_used"`
	LatencyMs         int64   `json:"latency_ms"`
	NoResults         bool    `json:"no_results,omitempty"`
	Reason            string  `json:"reason,omitempty"`
	// Cairn's additions: the floor asked for, the mix applied, slots per
	// source, duplicates dropped, records left out for having no vector of
	// the active dimension, tags nothing carries, and bounds clamped.
	FloorRequested   float64  `json:"floor_requested"`
	Mix              float64  `json:"mix"`
	KGSlots          int      `json:"kg_slots"`
	ThoughtSlots     int      `json:"thought_slots"`
	Deduped          int      `json:"deduped"`
	DimExcluded      int      `json:"dim_excluded"`
	UnknownTags      []string `json:"unknown_tags,omitempty"`
	Clamped          []string `json:"clamped,omitempty"`
	PrivateExcluded  int      `json:"private_excluded"`
	TagExcluded      int      `json:"tag_excluded"`
	CandidatesPerSrc int      `json:"candidates_per_source_cap"`
	// BelowFloor counts the best top_k candidates of the sources in play
	// that scored under the floor asked for (the adaptive floor may let
	// some through); DedupedItems names each record deduplication
	// removed and the copy it kept. Go callers only for now (inner_voice's
	// below_threshold and notes), as Degraded.
	BelowFloor   int           `json:"-"`
	DedupedItems []DedupedItem `json:"-"`
	// Degraded is embedder_unavailable when the query could not be
	// embedded and the candidates were ranked by words (a request with
	// WordsWhenDegraded only, so never in inner_voice.retrieve's
	// answers); WordPool is how many records were read and scored by
	// words then, the most recent of each kind.
	Degraded string `json:"-"`
	WordPool int    `json:"-"`
}

// DedupedItem is a record deduplication removed, and the copy it kept.
type DedupedItem struct {
	Table     string `json:"table"`
	ID        string `json:"id"`
	KeptTable string `json:"kept_table"`
	KeptID    string `json:"kept_id"`
}

// InnerVoiceResult is snippets and diagnostics.
type InnerVoiceResult struct {
	Snippets    []Snippet             `json:"snippets"`
	Diagnostics InnerVoiceDiagnostics `json:"diagnostics"`
}

// InnerVoice implements inner_voice.retrieve over the index: retrieval
// only, from thoughts and the knowledge graph, never synthesis.
type InnerVoice struct {
	Store  memory.Snapshotter
	Index  *index.Index
	Config InnerVoiceConfig
	Now    func() time.Time
	// Logger gets one line of counters per call (never content at info);
	// with NoLog nothing but counters is kept.
	Logger *slog.Logger
	NoLog  bool

	calls, failures atomic.Int64
}

// source is one of the two candidate pools.
type source int

const (
	srcThoughts source = iota
	srcKG
)

type ivCand struct {
	doc   uint32
	kind  memory.VectorKind
	score float64
	src   source
	rec   memory.IndexRecord
	text  string
	// hash is the content hash a snippet reports; keys are every hash the
	// record dedupes by (hash first).
	hash  string
	keys  []string
	start int
	end   int
}

// Retrieve runs inner_voice.retrieve.
func (iv *InnerVoice) Retrieve(ctx context.Context, req InnerVoiceRequest) (InnerVoiceResult, error) {
	start := time.Now()
	res, err := iv.retrieve(ctx, req, start)
	iv.calls.Add(1)
	if err != nil {
		iv.failures.Add(1)
	}
	if iv.Logger != nil {
		if iv.NoLog {
			// MCP_NO_LOG: counters only.
		} else if err != nil {
			iv.Logger.Info("inner_voice.retrieve failed", "code", memory.Public(err).Code, "latency_ms", time.Since(start).Milliseconds())
		} else {
			d := res.Diagnostics
			iv.Logger.Info("inner_voice.retrieve", "provider", d.Provider, "model", d.Model, "dim", d.Dim, "k_req", d.KReq,
				"floor", d.FloorRequested, "floor_used", d.FloorUsed, "kg_candidates", d.KGCandidates,
				"thought_candidates", d.ThoughtCandidates, "k_ret", d.KRet, "latency_ms", d.LatencyMs)
			if iv.Logger.Enabled(ctx, slog.LevelDebug) {
				ids := make([]string, len(res.Snippets))
				for i, s := range res.Snippets {
					ids[i] = s.Table + ":" + s.ID
				}
				iv.Logger.Debug("inner_voice.retrieve snippets", "ids", ids)
			}
		}
	}
	return res, err
}

// Counters are the calls and failures so far (kept even with MCP_NO_LOG).
func (iv *InnerVoice) Counters() (calls, failures int64) { return iv.calls.Load(), iv.failures.Load() }

func (iv *InnerVoice) retrieve(ctx context.Context, req InnerVoiceRequest, start time.Time) (InnerVoiceResult, error) {
	cfg := iv.Config
	if !cfg.Enabled {
		return InnerVoiceResult{}, memory.Errorf(memory.CodeFeatureDisabled, "inner_voice.retrieve is disabled; set SURR_ENABLE_INNER_VOICE=1 to enable it")
	}
	q := strings.TrimSpace(req.Query)
	if err := memory.ValidateText("query", req.Query, MaxQueryBytes); err != nil {
		return InnerVoiceResult{}, err
	}
	if q == "" {
		return InnerVoiceResult{}, memory.Errorf(memory.CodeInvalidParams, "query is empty after trimming")
	}
	var d InnerVoiceDiagnostics
	topK, mix, floor, err := cfg.params(req, &d)
	if err != nil {
		return InnerVoiceResult{}, err
	}
	minFloor := math.Min(cfg.MinFloor, floor)
	for _, tags := range [][]string{req.IncludeTags, req.ExcludeTags} {
		for _, t := range tags {
			if err := memory.ValidateContent("tag", t, 64); err != nil {
				return InnerVoiceResult{}, err
			}
		}
	}
	e := iv.Index.Embedder()
	if e == nil {
		return InnerVoiceResult{}, memory.Errorf(memory.CodeEmbedderUnavailable, "no embedder is configured")
	}
	space := e.Space()
	d.Provider, d.Model, d.Dim = space.Provider, space.Model, space.Dim
	d.KReq, d.Mix, d.FloorRequested = topK, mix, floor
	perSrc := min(3*topK, cfg.MaxCandidatesPerSource)
	if req.CandidateCap > 0 {
		perSrc = min(perSrc, req.CandidateCap)
	}
	d.CandidatesPerSrc = perSrc

	ectx := ctx
	if dl, ok := ctx.Deadline(); ok && req.WordsWhenDegraded {
		// Leave half of the request's time to rank by words should the
		// embedder not answer.
		var cancel context.CancelFunc
		ectx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(dl)/2))
		defer cancel()
	}
	qv, err := embedQuery(ectx, e, q)
	if err != nil {
		if !req.WordsWhenDegraded || !memory.IsCode(err, memory.CodeEmbedderUnavailable) || ctx.Err() != nil {
			return InnerVoiceResult{}, err
		}
		d.Degraded, qv = string(memory.CodeEmbedderUnavailable), nil
	}
	pool := perSrc
	if qv == nil {
		pool = cfg.MaxCandidatesPerSource
		if req.CandidateCap > 0 {
			pool = req.CandidateCap
		}
	}
	var out InnerVoiceResult
	err = iv.Store.Snapshot(ctx, func(r memory.Reader) error {
		if err := iv.Index.Sync(ctx, r); err != nil {
			return err
		}
		// Separate fetches per source table, merged here (no UNION).
		var thoughts, kg []ivCand
		fetch := func(v *index.View) error {
			thoughts, kg = iv.fetchPools(v, qv, pool, mix, req, &d)
			return nil
		}
		err := iv.Index.Read(fetch)
		if index.IsCorrupt(err) {
			if err := iv.Index.Repair(ctx, r); err != nil {
				return err
			}
			err = iv.Index.Read(fetch)
		}
		if err != nil {
			return err
		}
		if qv == nil {
			// Ranked by words: read the pools, score them, keep the best.
			d.DimExcluded, d.WordPool = 0, len(thoughts)+len(kg)
			if err := iv.load(ctx, r, thoughts); err != nil {
				return err
			}
			if err := iv.load(ctx, r, kg); err != nil {
				return err
			}
			thoughts, kg = scoreWords(q, thoughts, kg)
			thoughts = thoughts[:min(len(thoughts), perSrc)]
		}
		sortCands(kg)
		kg = kg[:min(len(kg), perSrc)]
		thoughts, kg = inPlay(mix, thoughts, kg)
		d.ThoughtCandidates, d.KGCandidates = len(thoughts), len(kg)
		if qv != nil {
			if err := iv.load(ctx, r, thoughts); err != nil {
				return err
			}
			if err := iv.load(ctx, r, kg); err != nil {
				return err
			}
		}
		out = iv.assemble(thoughts, kg, topK, mix, floor, minFloor, &d)
		return nil
	})
	if err != nil {
		return InnerVoiceResult{}, err
	}
	d.KRet = len(out.Snippets)
	d.LatencyMs = time.Since(start).Milliseconds()
	out.Diagnostics = d
	return out, nil
}

// fetchPools fetches the candidates of the sources mix puts in play (0:
// thoughts only, 1: the graph only), each kind with its own query.
func (iv *InnerVoice) fetchPools(v *index.View, qv []float32, pool int, mix float64, req InnerVoiceRequest, d *InnerVoiceDiagnostics) (thoughts, kg []ivCand) {
	d.PrivateExcluded, d.DimExcluded, d.TagExcluded = 0, 0, 0
	d.UnknownTags = unknownTags(v, append(slices.Clone(req.IncludeTags), req.ExcludeTags...))
	if mix < 1 {
		thoughts = iv.fetch(v, qv, pool, memory.VectorThought, req, d)
	}
	if mix > 0 {
		ents := iv.fetch(v, qv, pool, memory.VectorKGEntity, req, d)
		kgObs := iv.fetch(v, qv, pool, memory.VectorKGObservation, req, d)
		kg = append(ents, kgObs...)
	}
	return thoughts, kg
}

// params are the request's top_k, mix and floor, or the defaults; values
// out of range are clamped, and the diagnostics say so.
func (cfg InnerVoiceConfig) params(req InnerVoiceRequest, d *InnerVoiceDiagnostics) (topK int, mix, floor float64, err error) {
	topK = cfg.TopKDefault
	if req.TopK != nil {
		topK = *req.TopK
		if topK < 1 || topK > innerVoiceTopKMax {
			topK = min(innerVoiceTopKMax, max(1, topK))
			d.Clamped = append(d.Clamped, fmt.Sprintf("top_k %d → %d", *req.TopK, topK))
		}
	}
	mix = cfg.Mix
	if req.Mix != nil {
		mix = *req.Mix
		if math.IsNaN(mix) {
			return 0, 0, 0, memory.Errorf(memory.CodeInvalidParams, "mix is not a number")
		}
		if mix < 0 || mix > 1 {
			mix = math.Min(1, math.Max(0, mix))
			d.Clamped = append(d.Clamped, fmt.Sprintf("mix %v → %v", *req.Mix, mix))
		}
	}
	floor = cfg.Floor
	if req.Floor != nil {
		floor = *req.Floor
		if math.IsNaN(floor) {
			return 0, 0, 0, memory.Errorf(memory.CodeInvalidParams, "floor is not a number")
		}
		if floor < 0 || floor > 1 {
			floor = math.Min(1, math.Max(0, floor))
			d.Clamped = append(d.Clamped, fmt.Sprintf("floor %v → %v", *req.Floor, floor))
		}
	}
	return topK, mix, floor, nil
}

// fetch ranks one kind's records by similarity to qv and keeps the best
// cap, after the privacy, status and tag filters. Records without a vector
// of the active space (pending, or embedded in another space only) are
// counted, never compared. Without qv (the embedder is unavailable) it
// keeps the cap most recent records the filters allow, vector or not, for
// scoreWords.
func (iv *InnerVoice) fetch(v *index.View, qv []float32, cap int, kind memory.VectorKind, req InnerVoiceRequest, d *InnerVoiceDiagnostics) []ivCand {
	allow := func(doc uint32) bool {
		dd := v.Doc(doc)
		if dd.Kind != kind {
			return false
		}
		if kind == memory.VectorThought {
			if dd.Status == memory.StatusRemoval {
				return false
			}
			if dd.Private && !req.IncludePrivate {
				return false
			}
		}
		return tagsAllow(v.Tags(doc), req.IncludeTags, req.ExcludeTags)
	}
	// Counts for diagnostics: the index keeps them per kind; only a tag
	// filter needs a walk over the documents.
	if len(req.IncludeTags) == 0 && len(req.ExcludeTags) == 0 {
		alive, private, vec, privateVec := v.Counts(kind)
		if kind == memory.VectorThought && !req.IncludePrivate {
			d.PrivateExcluded += private
			d.DimExcluded += (alive - private) - (vec - privateVec)
		} else {
			d.DimExcluded += alive - vec
		}
	} else {
		countTagged(v, kind, req, d)
	}
	var out []ivCand
	src := srcKG
	if kind == memory.VectorThought {
		src = srcThoughts
	}
	if qv == nil {
		return recent(v, cap, kind, src, allow)
	}
	for _, h := range v.Nearest(index.GroupInner, qv, cap, nil, allow) {
		out = append(out, ivCand{doc: h.ID, kind: kind, score: float64(h.Score), src: src, rec: memory.IndexRecord{ID: v.ID(h.ID)}})
	}
	return out
}

// countTagged counts, for a request with tag filters, the documents of
// kind left out as private, by tag, or for having no vector in the active
// space.
func countTagged(v *index.View, kind memory.VectorKind, req InnerVoiceRequest, d *InnerVoiceDiagnostics) {
	v.Each(kind, func(doc uint32) {
		switch {
		case kind == memory.VectorThought && v.Doc(doc).Private && !req.IncludePrivate:
			d.PrivateExcluded++
		case !tagsAllow(v.Tags(doc), req.IncludeTags, req.ExcludeTags):
			d.TagExcluded++
		default:
			if !v.HasVector(doc) {
				d.DimExcluded++
			}
		}
	})
}

func tagsAllow(tags, include, exclude []string) bool {
	for _, t := range exclude {
		if slices.Contains(tags, t) {
			return false
		}
	}
	if len(include) == 0 {
		return true
	}
	for _, t := range include {
		if slices.Contains(tags, t) {
			return true
		}
	}
	return false
}

func unknownTags(v *index.View, tags []string) []string {
	var out []string
	for _, t := range tags {
		if !v.HasTag(t) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// load reads the candidates' text and attributes from the snapshot.
func (iv *InnerVoice) load(ctx context.Context, r memory.Reader, cs []ivCand) error {
	byKind := map[memory.VectorKind][]int{}
	for i, c := range cs {
		byKind[c.kind] = append(byKind[c.kind], i)
	}
	for kind, idx := range byKind {
		ids := make([]string, len(idx))
		for j, i := range idx {
			ids[j] = cs[i].rec.ID
		}
		recs, err := r.Records(ctx, kind, ids)
		if err != nil {
			return err
		}
		for j, i := range idx {
			cs[i].rec = recs[j]
			text, s, e := content.Cap(recs[j].Content, content.CapMin, content.CapMax)
			cs[i].text, cs[i].start, cs[i].end = text, s, e
			cs[i].keys = dedupeKeys(recs[j])
			cs[i].hash = cs[i].keys[0]
		}
	}
	return nil
}

// dedupeKeys returns the content hashes a record is deduplicated by, the
// one its snippet reports first. A record's hash is that of its own text:
// for a knowledge-graph fact, its statement, not the text it is searched by
// (its entity's name, a colon, the statement), so that a thought and a fact
// saying the same thing meet. A fact also answers to its searched text and
// to its entity's name followed by the statement, which is how a thought
// says what a fact leaves to its entity ("uses PostgreSQL 15" about
// billing-service).
func dedupeKeys(rec memory.IndexRecord) []string {
	if rec.Body == "" {
		return []string{content.Hash(rec.Content)}
	}
	keys := []string{content.Hash(rec.Body), content.Hash(rec.Content)}
	if subject, ok := strings.CutSuffix(rec.Content, rec.Body); ok {
		subject = strings.TrimSuffix(strings.TrimRight(subject, " "), ":")
		keys = append(keys, content.Hash(subject+" "+rec.Body))
	}
	return keys
}

func sortCands(cs []ivCand) {
	slices.SortFunc(cs, func(a, b ivCand) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.rec.ID, b.rec.ID)
	})
}

// assemble applies the floor (lowering it toward minFloor until each
// non-empty source has a hit), dedupes by (table, id) then by content
// hash, allocates slots by mix with at least one per non-empty source,
// backfills an underflowing source from the other, re-ranks globally and
// shapes the snippets.
func (iv *InnerVoice) assemble(thoughts, kg []ivCand, topK int, mix, floor, minFloor float64, d *InnerVoiceDiagnostics) InnerVoiceResult {
	res := InnerVoiceResult{Snippets: []Snippet{}}
	thoughts, kg = inPlay(mix, thoughts, kg)
	if len(thoughts) == 0 && len(kg) == 0 {
		d.NoResults, d.Reason, d.FloorUsed = true, "no_candidates", floor
		return res
	}
	d.BelowFloor = belowFloor(thoughts, kg, topK, floor)
	above := func(cs []ivCand, f float64) []ivCand {
		var out []ivCand
		for _, c := range cs {
			if c.score >= f && !c.rec.Gone {
				out = append(out, c)
			}
		}
		return out
	}
	used := floor
	t, k := above(thoughts, used), above(kg, used)
	// Adaptive floor: lower it until every non-empty source has a hit, or
	// min_floor is reached.
	for used > minFloor && ((len(thoughts) > 0 && len(t) == 0) || (len(kg) > 0 && len(k) == 0)) {
		used = math.Max(minFloor, used-floorStep)
		t, k = above(thoughts, used), above(kg, used)
	}
	d.FloorUsed = round4(used)
	if len(t) == 0 && len(k) == 0 {
		d.NoResults, d.Reason = true, "floor_excluded_all"
		return res
	}
	// Dedupe: by (table, id), then by content hash across sources. Of
	// copies in both sources the knowledge graph's stays: it is curated,
	// always of the green tier, and tied to its entity; within a source the
	// better-scored copy stays.
	all := append(append([]ivCand{}, k...), t...)
	slices.SortStableFunc(all, func(a, b ivCand) int {
		if a.src != b.src {
			return cmp.Compare(b.src, a.src) // srcKG first
		}
		return cmp.Compare(b.score, a.score)
	})
	seenRef := map[string]bool{}
	keptBy := map[string]ivCand{} // content hash -> the copy kept
	t, k = t[:0:0], k[:0:0]
	for _, c := range all {
		ref := string(c.kind) + "\x00" + c.rec.ID
		if seenRef[ref] {
			d.Deduped++
			continue
		}
		if i := slices.IndexFunc(c.keys, func(h string) bool { _, ok := keptBy[h]; return ok }); i >= 0 {
			kept := keptBy[c.keys[i]]
			d.Deduped++
			d.DedupedItems = append(d.DedupedItems, DedupedItem{Table: tables[c.kind], ID: c.rec.ID, KeptTable: tables[kept.kind], KeptID: kept.rec.ID})
			continue
		}
		seenRef[ref] = true
		for _, h := range c.keys {
			keptBy[h] = c
		}
		if c.src == srcKG {
			k = append(k, c)
		} else {
			t = append(t, c)
		}
	}
	sortCands(t)
	sortCands(k)
	kgSlots := int(math.Round(mix * float64(topK)))
	thoughtSlots := topK - kgSlots
	if len(t) > 0 && len(k) > 0 && mix > 0 && mix < 1 {
		if kgSlots == 0 {
			kgSlots, thoughtSlots = 1, topK-1
		} else if thoughtSlots == 0 {
			kgSlots, thoughtSlots = topK-1, 1
		}
	}
	// Backfill: a source with fewer hits than slots gives them to the other.
	if len(k) < kgSlots {
		thoughtSlots += kgSlots - len(k)
		kgSlots = len(k)
	}
	if len(t) < thoughtSlots {
		kgSlots = min(len(k), kgSlots+thoughtSlots-len(t))
		thoughtSlots = len(t)
	}
	d.KGSlots, d.ThoughtSlots = kgSlots, thoughtSlots
	picked := append(append([]ivCand{}, k[:kgSlots]...), t[:thoughtSlots]...)
	sortCands(picked)
	if len(picked) > topK {
		picked = picked[:topK]
	}
	for _, c := range picked {
		res.Snippets = append(res.Snippets, snippetOf(c))
	}
	return res
}

// belowFloor counts the best topK candidates (of the sources in play)
// that scored under floor.
func belowFloor(thoughts, kg []ivCand, topK int, floor float64) int {
	var scores []float64
	for _, cs := range [][]ivCand{thoughts, kg} {
		for _, c := range cs {
			if !c.rec.Gone {
				scores = append(scores, c.score)
			}
		}
	}
	slices.SortFunc(scores, func(a, b float64) int { return cmp.Compare(b, a) })
	n := 0
	for _, sc := range scores[:min(topK, len(scores))] {
		if sc < floor {
			n++
		}
	}
	return n
}

var tables = map[memory.VectorKind]string{
	memory.VectorThought: "thoughts", memory.VectorKGEntity: "kg_entities", memory.VectorKGObservation: "kg_observations",
}

// TrustTier maps a source and origin to green, amber or red: the knowledge
// graph and human or logged thoughts are green, tool thoughts amber, model
// thoughts red.
func TrustTier(kind memory.VectorKind, origin memory.Origin) string {
	if kind != memory.VectorThought {
		return "green"
	}
	switch origin {
	case memory.OriginHuman, memory.OriginLogged:
		return "green"
	case memory.OriginTool:
		return "amber"
	}
	return "red"
}

func snippetOf(c ivCand) Snippet {
	origin := string(c.rec.Origin)
	if c.kind != memory.VectorThought {
		origin = string(memory.OriginLogged)
	}
	return Snippet{
		ID: c.rec.ID, Table: tables[c.kind], SourceType: string(c.kind), Origin: origin,
		TrustTier: TrustTier(c.kind, c.rec.Origin), CreatedAt: time.UnixMilli(c.rec.TS).UTC().Format(time.RFC3339),
		Text: c.text, Score: round4(c.score), ContentHash: c.hash, SpanStart: c.start, SpanEnd: c.end,
	}
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// inPlay leaves out the source mix excludes: at 0 the knowledge graph
// (thoughts only), at 1 the thoughts (the graph only). An excluded source
// takes no part in the floor, deduplication or backfill.
func inPlay(mix float64, thoughts, kg []ivCand) ([]ivCand, []ivCand) {
	switch {
	case mix <= 0:
		return thoughts, nil
	case mix >= 1:
		return nil, kg
	}
	return thoughts, kg
}
