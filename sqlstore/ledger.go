package sqlstore

import (
	"context"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

var _ memory.LedgerStore = (*Store)(nil)

// The ledger lives in the change log: each row of changes says which
// record changed (kind, ref), what was done to it (op), when (at, the
// clock of the process that wrote it) and which fields an update changed
// (fields, comma-separated names). Triggers write every row, so no write
// path can skip the ledger; each store's migrations make them from
// LedgerTables. Rows whose op is 'index' are not ledger entries: they
// only tell retrieval indexes to read a record again (a vector stored, an
// observation joining a capsule, a fact whose entity was renamed, an
// update that changed nothing).

// LedgerTable says how one table's writes enter the ledger.
type LedgerTable struct {
	Table, Kind string
	// Name prefixes its triggers' names (default "changes_" + Table):
	// those of the triggers they replace, so that no earlier migration,
	// run again, brings an old one back.
	Name string
	// ID is the column naming the record.
	ID string
	// Insert is the op of an insert; Importable ones are "import" while
	// an import writes.
	Insert     string
	Importable bool
	// Fields are the columns whose change is logged; Op names how an
	// update's op is told (one of the Ledger* ops below; "" for
	// 'update'). No fields: updates are not logged.
	Fields []string
	Op     string
	// Delete logs deletes; Vectors also drops the record's vectors then
	// (where a trigger of this table is what drops them).
	Delete, Vectors bool
}

// How an update's op is told, which each store writes in its SQL.
const (
	// LedgerForget: 'forget' when the record is forgotten, else 'update'.
	LedgerForget = "forget"
	// LedgerClose: 'close' when a capsule closes, else 'update'.
	LedgerClose = "close"
	// LedgerThought: 'forget', 'mark' or 'unmark' (its status changed to
	// or from removal), else 'update'.
	LedgerThought = "thought"
	// LedgerDecide: 'approve' or 'reject' when a candidate is decided,
	// else 'update'.
	LedgerDecide = "decide"
)

// LedgerTables are the tables whose writes the ledger records.
var LedgerTables = []LedgerTable{
	{Table: "observations", Kind: "observation", Name: "changes_observation", ID: "id", Insert: memory.OpCreate, Importable: true,
		Fields: []string{"content", "redacted"}, Op: LedgerForget},
	{Table: "capsules", Kind: memory.LedgerCapsule, ID: "id", Insert: memory.OpCreate, Importable: true,
		Fields: []string{"type", "intent", "status", "closed_at"}, Op: LedgerClose},
	{Table: "summaries", Kind: "summary", Name: "changes_summary", ID: "id", Insert: memory.OpCreate, Importable: true,
		Fields: []string{"content", "confidence", "created_at", "evidence_refs", "redacted"}, Op: LedgerForget},
	{Table: "pins", Kind: memory.LedgerPin, ID: "id", Insert: memory.OpCreate, Importable: true, Delete: true},
	{Table: "thoughts", Kind: "thought", ID: "id", Insert: memory.OpCreate, Importable: true,
		Fields: []string{"content", "tags", "is_private", "status", "significance", "redacted"}, Op: LedgerThought,
		Delete: true, Vectors: true},
	{Table: "kg_entities", Kind: "kg_entity", ID: "id", Insert: memory.OpCreate, Importable: true,
		Fields: []string{"name", "type", "data"}, Delete: true, Vectors: true},
	{Table: "kg_observations", Kind: "kg_observation", ID: "id", Insert: memory.OpCreate, Importable: true,
		Fields: []string{"content"}, Delete: true, Vectors: true},
	{Table: "kg_edges", Kind: "kg_edge", ID: "id", Insert: memory.OpCreate, Importable: true,
		Fields: []string{"relation", "data"}, Delete: true, Vectors: true},
	{Table: "kg_entity_candidates", Kind: memory.LedgerEntityCandidate, ID: "id", Insert: memory.OpStage,
		Fields: []string{"status", "data", "confidence", "promoted_id", "feedback"}, Op: LedgerDecide, Delete: true},
	{Table: "kg_edge_candidates", Kind: memory.LedgerEdgeCandidate, ID: "id", Insert: memory.OpStage,
		Fields: []string{"status", "data", "confidence", "promoted_id", "feedback"}, Op: LedgerDecide, Delete: true},
	{Table: "code_artifacts", Kind: memory.LedgerCodeArtifact, ID: "hash", Insert: memory.OpCreate, Importable: true,
		Fields: []string{"content", "redacted"}, Op: LedgerForget},
	{Table: "inner_voice_sessions", Kind: memory.LedgerVoiceSession, ID: "id", Insert: memory.OpCreate, Delete: true},
}

// TriggerName is the prefix of the table's triggers' names.
func (t LedgerTable) TriggerName() string {
	if t.Name == "" {
		return "changes_" + t.Table
	}
	return t.Name
}

// maxHistory caps a History page.
const maxHistory = 1000

// History implements memory.LedgerStore.
func (s *Store) History(ctx context.Context, id string, after int64, limit int) ([]memory.LedgerEntry, bool, error) {
	if limit <= 0 || limit > maxHistory {
		limit = maxHistory
	}
	out := []memory.LedgerEntry{}
	known := false
	err := s.b.Read(ctx, "reading a record's history", func(q Querier) error {
		out = out[:0]
		err := EachRow(ctx, q, `SELECT seq, at, kind, ref, op, fields FROM changes
			WHERE ref = ? AND op <> 'index' AND seq > ? ORDER BY seq LIMIT ?`, []any{id, after, limit}, func(sc Scanner) error {
			var e memory.LedgerEntry
			var fields string
			if err := sc.Scan(&e.Seq, &e.At, &e.Kind, &e.ID, &e.Op, &fields); err != nil {
				return err
			}
			if fields != "" {
				e.Fields = strings.Split(fields, ",")
			}
			out = append(out, e)
			return nil
		})
		if err != nil || len(out) > 0 {
			known = len(out) > 0
			return err
		}
		return q.QueryRow(ctx, recordKnownSQL, id).Scan(&known)
	})
	return out, known, err
}

// recordKnownSQL tells whether ?1 names a record of any kind, or an entry
// of the ledger.
const recordKnownSQL = `SELECT EXISTS (SELECT 1 FROM changes WHERE ref = ?1 AND op <> 'index')
	OR EXISTS (SELECT 1 FROM observations WHERE id = ?1)
	OR EXISTS (SELECT 1 FROM capsules WHERE id = ?1)
	OR EXISTS (SELECT 1 FROM summaries WHERE id = ?1)
	OR EXISTS (SELECT 1 FROM pins WHERE id = ?1)
	OR EXISTS (SELECT 1 FROM thoughts WHERE id = ?1)
	OR EXISTS (SELECT 1 FROM kg_entities WHERE id = ?1)
	OR EXISTS (SELECT 1 FROM kg_observations WHERE id = ?1)
	OR EXISTS (SELECT 1 FROM kg_edges WHERE id = ?1)
	OR EXISTS (SELECT 1 FROM kg_entity_candidates WHERE id = ?1)
	OR EXISTS (SELECT 1 FROM kg_edge_candidates WHERE id = ?1)
	OR EXISTS (SELECT 1 FROM code_artifacts WHERE hash = ?1)
	OR EXISTS (SELECT 1 FROM inner_voice_sessions WHERE id = ?1)`
