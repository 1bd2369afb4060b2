package cairn

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cairnhq/cairn/embed"

	"github.com/cairnhq/cairn/memory"
)

// DoctorRequest asks for a health check, and optionally for repairs.
type DoctorRequest struct {
	// Fix rebuilds the full-text indexes when a check says they need it,
	// embeds pending records when the embedder answers, and rebuilds a
	// damaged retrieval index.
	Fix bool `json:"fix,omitempty" jsonschema:"rebuild the full-text indexes when a check says they need it, embed pending records, rebuild a damaged retrieval index"`
}

// DoctorReport lists the checks and what was repaired.
type DoctorReport struct {
	// OK says no check failed; warnings (records waiting for vectors) do
	// not count.
	OK       bool             `json:"ok"`
	Findings []memory.Finding `json:"findings"`
	// Repaired lists the repairs made (with fix).
	Repaired []string `json:"repaired,omitempty"`
}

// Doctor checks the database (file, schema, integrity, references, index
// consistency), the retrieval setup and the retrieval index's files, and
// with req.Fix rebuilds the full-text indexes if they disagree with the
// records and the retrieval index if it is damaged.
func (e *Engine) Doctor(ctx context.Context, req DoctorRequest) (DoctorReport, error) {
	findings, err := e.store.Check(ctx)
	if err != nil {
		return DoctorReport{}, err
	}
	var rep DoctorReport
	if req.Fix && indexNeedsRebuild(findings) {
		if err := e.store.RebuildIndex(ctx); err != nil {
			return DoctorReport{}, err
		}
		rep.Repaired = append(rep.Repaired, "rebuilt the full-text indexes")
		if findings, err = e.store.Check(ctx); err != nil {
			return DoctorReport{}, err
		}
	}
	probe := e.probeEmbedder(ctx)
	findings = append(findings, probe)
	vf, err := e.vectorFinding(ctx)
	if err != nil {
		return DoctorReport{}, err
	}
	if req.Fix && !vf.OK && probe.OK {
		r, err := e.Reembed(ctx, ReembedRequest{}, nil)
		if err != nil {
			return DoctorReport{}, err
		}
		rep.Repaired = append(rep.Repaired, fmt.Sprintf("embedded %d pending records", r.Embedded))
		if vf, err = e.vectorFinding(ctx); err != nil {
			return DoctorReport{}, err
		}
	}
	findings = append(findings, vf)
	tf, err := e.trackingFinding(ctx)
	if err != nil {
		return DoctorReport{}, err
	}
	findings = append(findings, tf)
	xf, repaired, err := e.indexFinding(ctx, req.Fix)
	if err != nil {
		return DoctorReport{}, err
	}
	findings = append(findings, xf)
	rep.Repaired = append(rep.Repaired, repaired...)
	if remoteCaller(ctx) {
		for i := range findings {
			findings[i].Detail = e.hidePaths(findings[i].Detail)
		}
	}
	rep.Findings = findings
	rep.OK = true
	for _, f := range findings {
		rep.OK = rep.OK && (f.OK || f.Warning)
	}
	return rep, nil
}

func indexNeedsRebuild(fs []memory.Finding) bool {
	for _, f := range fs {
		if !f.OK && f.Repair == memory.RepairRebuildIndex {
			return true
		}
	}
	return false
}

// probeTimeout bounds the doctor's test embedding.
const probeTimeout = 15 * time.Second

// probeEmbedder embeds a test sentence and checks the answer's shape.
func (e *Engine) probeEmbedder(ctx context.Context) memory.Finding {
	sp := e.embedder.Space()
	f := memory.Finding{Check: "embedder", OK: true}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	texts := []string{"cairn checks that the embedder answers"}
	vecs, err := e.embedder.Embed(pctx, texts)
	if err == nil {
		err = embed.Check(sp, texts, vecs)
	}
	if err != nil {
		f.OK = false
		f.Detail = fmt.Sprintf("%s does not answer: %s", sp, memory.Public(err).Message)
		f.Fix = "start the embedding service or correct CAIRN_EMBED_URL / CAIRN_EMBED_MODEL / CAIRN_EMBED_DIM (cairn config shows them); records written meanwhile are kept and embedded by cairn reembed, or by a running cairn serve or cairn mcp once the embedder answers"
		return f
	}
	f.Detail = fmt.Sprintf("%s answers with %d-dimensional vectors; retrieval provider %s", sp, sp.Dim, e.retriever.Provider.Name())
	return f
}

// vectorFinding reports records waiting for a vector of the active space:
// a warning, not a failure (they are found by words meanwhile, and a
// long-running cairn embeds them by itself).
func (e *Engine) vectorFinding(ctx context.Context) (memory.Finding, error) {
	sp := e.embedder.Space()
	vs, err := e.store.VectorStats(ctx, sp)
	if err != nil {
		return memory.Finding{}, err
	}
	f := memory.Finding{Check: "vectors", OK: vs.Pending == 0, Warning: vs.Pending > 0,
		Detail: fmt.Sprintf("%d records embedded in %s, %d pending, %d vectors of other spaces", vs.InSpace, sp, vs.Pending, vs.OtherSpaces)}
	if !f.OK {
		f.Detail += "; pending records are found by words until they are embedded"
		f.Fix = "run cairn reembed (or cairn doctor --fix), or leave a cairn serve or cairn mcp running: it embeds them in the background once the embedder answers"
	}
	return f, nil
}

// trackingFinding verifies code memory's hydration tracking: every
// session's episodes numbered without gaps, every row matching its
// checksum and every episode its sealed digest (failure mode 4).
func (e *Engine) trackingFinding(ctx context.Context) (memory.Finding, error) {
	sessions, t, err := e.code.CheckTracking(ctx)
	if err != nil {
		return memory.Finding{}, err
	}
	f := memory.Finding{Check: "code tracking", OK: t.OK,
		Detail: fmt.Sprintf("%d sessions, %d episodes, %d hydration rows verify", sessions, t.Episodes, t.Rows)}
	if !t.OK {
		const shown = 5
		problems := t.Problems
		more := ""
		if len(problems) > shown {
			problems, more = problems[:shown], fmt.Sprintf(" (and %d more)", len(t.Problems)-shown)
		}
		f.Detail = fmt.Sprintf("hydration tracking was lost or altered: %s%s", strings.Join(problems, "; "), more)
		f.Fix = "restore the database from a backup or an export (cairn export / cairn import); until then hydration keeps the rows that verify and reports the loss in every answer of the affected sessions"
	}
	return f, nil
}
