package cairn

import (
	"context"

	"github.com/cairnhq/cairn/memory"
)

// DoctorRequest asks for a health check, and optionally for repairs.
type DoctorRequest struct {
	// Fix rebuilds the full-text indexes when a check says they need it.
	Fix bool `json:"fix,omitempty" jsonschema:"rebuild the full-text indexes when a check says they need it"`
}

// DoctorReport lists the checks and what was repaired.
type DoctorReport struct {
	OK       bool             `json:"ok"`
	Findings []memory.Finding `json:"findings"`
	// Repaired lists the repairs made (with fix).
	Repaired []string `json:"repaired,omitempty"`
}

// Doctor checks the database (file, schema, integrity, references, index
// consistency) and the retrieval setup, and with req.Fix rebuilds the
// full-text indexes if they disagree with the records.
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
	findings = append(findings, memory.Finding{Check: "retrieval", OK: true,
		Detail: "provider " + e.retriever.Provider.Name() + "; no embedder configured, so retrieval is lexical (bm25 + recency)"})
	rep.Findings = findings
	rep.OK = true
	for _, f := range findings {
		rep.OK = rep.OK && f.OK
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
