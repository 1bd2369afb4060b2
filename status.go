package cairn

import (
	"context"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

// StatusRequest asks for the engine's status; it has no parameters.
type StatusRequest struct{}

// Status describes a running engine.
type Status struct {
	Version  string       `json:"version"`
	Database memory.Stats `json:"database"`
	// Provider is the retrieval provider used when a request names none.
	Provider string `json:"provider"`
	// Embedder is the embedding space in use and its vectors.
	Embedder EmbedderStatus `json:"embedder"`
	// InnerVoice says whether inner_voice_retrieve is enabled.
	InnerVoice bool `json:"innerVoice"`
	// CodeVerification is code memory's verification cache since start:
	// hits, misses, hit rate, TTL and low-hit-rate warnings.
	CodeVerification code.ETVStats `json:"codeVerification"`
	// Tools are the capabilities offered, by name.
	Tools []string `json:"tools"`
}

// EmbedderStatus is the active embedding space and how many records have
// a vector in it, are pending one, or have vectors of other spaces only.
type EmbedderStatus struct {
	Space memory.Space `json:"space"`
	memory.VectorStats
}

// Status reports the version, the database's counts and schema, the
// provider, the embedder and its vectors, and the tools.
func (e *Engine) Status(ctx context.Context) (Status, error) {
	st, err := e.store.Stats(ctx)
	if err != nil {
		return Status{}, err
	}
	space := e.embedder.Space()
	vs, err := e.store.VectorStats(ctx, space)
	if err != nil {
		return Status{}, err
	}
	if remoteCaller(ctx) {
		st.Path = e.hidePaths(st.Path)
	}
	return Status{Version: Version, Database: st, Provider: e.retriever.Provider.Name(),
		Embedder: EmbedderStatus{Space: space, VectorStats: vs}, InnerVoice: e.voice.Config().Enabled,
		CodeVerification: e.code.ETVStats(), Tools: e.toolNames}, nil
}

// ConfigRequest asks for the effective configuration; it has no parameters.
type ConfigRequest struct{}

// Config returns the effective settings: what the engine runs with, every
// default filled in, and the clamps and fallbacks applied at start-up.
func (e *Engine) Config(ctx context.Context, _ ConfigRequest) (Settings, error) {
	s := e.settings.Public()
	if remoteCaller(ctx) {
		s.IndexDir = e.hidePaths(s.IndexDir)
		s.Maintenance.ArchiveDir = e.hidePaths(s.Maintenance.ArchiveDir)
	}
	return s, nil
}

// adminTools report on and maintain the engine.
var adminTools = []Tool{
	newTool(Tool{
		Name: "status", Title: "Engine status", Method: "GET", Path: "/v1/status", ReadOnly: true, Idempotent: true,
		Description: `Report cairn's version, the database (path, schema version, size, counts of observations, capsules, summaries, pins, thoughts and knowledge-graph records, and index rows), the retrieval provider, the embedder with its vectors (in its space, pending, in other spaces), whether the inner voice is enabled, code memory's verification cache (hits, misses, hit rate), and the tools offered.`,
	}, func(e *Engine, ctx context.Context, _ StatusRequest) (Status, error) { return e.Status(ctx) }),
	newTool(Tool{
		Name: "doctor", Title: "Check the database", Method: "POST", Path: "/v1/doctor",
		Description: `Check the health of cairn's database and retrieval: file permissions, schema version, SQLite integrity, references between records, whether the full-text indexes agree with the records, whether the embedder answers with vectors of its dimension, and whether records wait for vectors; each finding says how to fix it. With fix=true, rebuild the full-text indexes when they disagree and embed the pending records.`,
	}, func(e *Engine, ctx context.Context, in DoctorRequest) (DoctorReport, error) { return e.Doctor(ctx, in) }),
	newTool(Tool{
		Name: "reembed", Title: "Embed pending records", Method: "POST", Path: "/v1/reembed", Idempotent: true,
		Description: `Embed every record that has no vector in the active embedder's space: those written while the embedder was down, or all of them after a move to a new embedder or model. dropOtherSpaces also deletes vectors of other spaces. Returns how many were embedded and how many remain pending (the embedder failed: embedder_unavailable).`,
	}, func(e *Engine, ctx context.Context, in ReembedRequest) (ReembedReport, error) {
		return e.Reembed(ctx, in, nil)
	}),
	newTool(Tool{
		Name: "config", Title: "Effective configuration", Method: "GET", Path: "/v1/config", ReadOnly: true, Idempotent: true,
		Description: `Report the configuration cairn runs with: retrieval provider and hybrid weights, embedder (provider, model, dimension, endpoint), inner-voice settings, content limit, logging; with every clamp or fallback applied to an out-of-bounds setting (warnings) and every default filled in (notes). Secrets are never included.`,
	}, func(e *Engine, ctx context.Context, in ConfigRequest) (Settings, error) { return e.Config(ctx, in) }),
}
