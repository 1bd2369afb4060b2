package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

var _ memory.LedgerStore = (*DB)(nil)

// The ledger lives in the change log: each row of changes says which
// record changed (kind, ref), and, since schema version 10, what was done
// to it (op), when (at, the clock of the process that wrote it) and which
// fields an update changed (fields, comma-separated names). Triggers write
// every row, so no write path can skip the ledger; they read the time from
// the one row of ledger_now, which every write transaction sets first
// (see DB.tryWrite). Rows whose op is 'index' are not ledger entries:
// they only tell in-memory indexes to read a record again (a vector
// stored, an observation joining a capsule, a fact whose entity was
// renamed, an update that changed nothing).

// ledgerVersion is the schema version that keeps the ledger.
const ledgerVersion = 10

// opIndex marks a change-log row that is not a ledger entry.
const opIndex = "index"

// ledgerTable describes how one table's writes enter the ledger.
type ledgerTable struct {
	table, kind string
	// name prefixes its triggers' names (default "changes_" + table):
	// those of the triggers they replace, so that no earlier migration,
	// run again, brings an old one back.
	name string
	// id is the column naming the record.
	id string
	// insert is the op of an insert; importable ones are "import" while
	// an import writes.
	insert     string
	importable bool
	// fields are the columns whose change is logged; op is the SQL
	// expression (over OLD and NEW) of an update's op ('update' when
	// empty). No fields: updates are not logged.
	fields []string
	op     string
	// delete logs deletes; vectors also drops the record's vectors then.
	delete, vectors bool
}

const forgetOp = "CASE WHEN NEW.redacted = 1 AND OLD.redacted = 0 THEN 'forget' ELSE 'update' END"

// candidateOp is a candidate's op: decided, or updated.
const candidateOp = `CASE WHEN NEW.status IS NOT OLD.status THEN
	CASE NEW.status WHEN 'approved' THEN 'approve' WHEN 'rejected' THEN 'reject' ELSE 'update' END ELSE 'update' END`

var ledgerTables = []ledgerTable{
	{table: "observations", kind: "observation", name: "changes_observation", id: "id", insert: memory.OpCreate, importable: true,
		fields: []string{"content", "redacted"}, op: forgetOp},
	{table: "capsules", kind: memory.LedgerCapsule, id: "id", insert: memory.OpCreate, importable: true,
		fields: []string{"type", "intent", "status", "closed_at"},
		op:     "CASE WHEN NEW.status = 'closed' AND OLD.status = 'open' THEN 'close' ELSE 'update' END"},
	{table: "summaries", kind: "summary", name: "changes_summary", id: "id", insert: memory.OpCreate, importable: true,
		fields: []string{"content", "confidence", "created_at", "evidence_refs", "redacted"}, op: forgetOp},
	{table: "pins", kind: memory.LedgerPin, id: "id", insert: memory.OpCreate, importable: true, delete: true},
	{table: "thoughts", kind: "thought", id: "id", insert: memory.OpCreate, importable: true,
		fields: []string{"content", "tags", "is_private", "status", "significance", "redacted"},
		op: `CASE WHEN NEW.redacted = 1 AND OLD.redacted = 0 THEN 'forget'
			WHEN NEW.status IS NOT OLD.status THEN CASE NEW.status WHEN 'removal' THEN 'mark' ELSE 'unmark' END
			ELSE 'update' END`,
		delete: true, vectors: true},
	{table: "kg_entities", kind: "kg_entity", id: "id", insert: memory.OpCreate, importable: true,
		fields: []string{"name", "type", "data"}, delete: true, vectors: true},
	{table: "kg_observations", kind: "kg_observation", id: "id", insert: memory.OpCreate, importable: true,
		fields: []string{"content"}, delete: true, vectors: true},
	{table: "kg_edges", kind: "kg_edge", id: "id", insert: memory.OpCreate, importable: true,
		fields: []string{"relation", "data"}, delete: true, vectors: true},
	{table: "kg_entity_candidates", kind: memory.LedgerEntityCandidate, id: "id", insert: memory.OpStage,
		fields: []string{"status", "data", "confidence", "promoted_id", "feedback"}, op: candidateOp, delete: true},
	{table: "kg_edge_candidates", kind: memory.LedgerEdgeCandidate, id: "id", insert: memory.OpStage,
		fields: []string{"status", "data", "confidence", "promoted_id", "feedback"}, op: candidateOp, delete: true},
	{table: "code_artifacts", kind: memory.LedgerCodeArtifact, id: "hash", insert: memory.OpCreate, importable: true,
		fields: []string{"content", "redacted"}, op: forgetOp},
	{table: "inner_voice_sessions", kind: memory.LedgerVoiceSession, id: "id", insert: memory.OpCreate, delete: true},
}

// ledgerAt is the time of the write in progress.
const ledgerAt = "coalesce((SELECT at FROM ledger_now), 0)"

// insertOp is the SQL expression of an insert's op.
func (t ledgerTable) insertOp() string {
	if !t.importable {
		return "'" + t.insert + "'"
	}
	return fmt.Sprintf("coalesce((SELECT CASE via WHEN 'import' THEN 'import' ELSE '%s' END FROM ledger_now), '%s')", t.insert, t.insert)
}

// triggers are the table's change-log triggers.
func (t ledgerTable) triggers() string {
	var b strings.Builder
	name := t.name
	if name == "" {
		name = "changes_" + t.table
	}
	fmt.Fprintf(&b, `
DROP TRIGGER IF EXISTS %[1]s_insert;
CREATE TRIGGER %[1]s_insert AFTER INSERT ON %[2]s
BEGIN INSERT INTO changes(kind, ref, op, at) VALUES ('%[3]s', NEW.%[4]s, %[5]s, %[6]s); END;
`, name, t.table, t.kind, t.id, t.insertOp(), ledgerAt)
	if len(t.fields) > 0 {
		changed := make([]string, len(t.fields))
		for i, f := range t.fields {
			changed[i] = fmt.Sprintf("CASE WHEN OLD.%[1]s IS NOT NEW.%[1]s THEN '%[1]s,' ELSE '' END", f)
		}
		op := t.op
		if op == "" {
			op = "'update'"
		}
		fmt.Fprintf(&b, `
DROP TRIGGER IF EXISTS %[1]s_update;
CREATE TRIGGER %[1]s_update AFTER UPDATE OF %[2]s ON %[3]s
BEGIN
	INSERT INTO changes(kind, ref, op, at, fields)
	SELECT '%[4]s', NEW.%[5]s, CASE WHEN f = '' THEN 'index' ELSE %[6]s END, %[7]s, f
	FROM (SELECT rtrim(%[8]s, ',') AS f);
END;
`, name, strings.Join(t.fields, ", "), t.table, t.kind, t.id, op, ledgerAt, strings.Join(changed, " || "))
	}
	if t.delete {
		drop := ""
		if t.vectors {
			drop = fmt.Sprintf("\n\tDELETE FROM embeddings WHERE kind = '%s' AND ref = OLD.%s;", t.kind, t.id)
		}
		fmt.Fprintf(&b, `
DROP TRIGGER IF EXISTS %[1]s_delete;
CREATE TRIGGER %[1]s_delete AFTER DELETE ON %[2]s
BEGIN
	INSERT INTO changes(kind, ref, op, at) VALUES ('%[3]s', OLD.%[4]s, 'delete', %[5]s);%[6]s
END;
`, name, t.table, t.kind, t.id, ledgerAt, drop)
	}
	return b.String()
}

// schemaV10 turns the change log into the ledger: op, at and fields
// columns (rows written before it get op 'unknown' and at 0, except what
// can be told: the first row of a thought or a graph record is its
// creation, dated by its created_at while it exists, and the last row of
// one that no longer exists its deletion), the time of the write in
// progress, an index to read a record's history by, and triggers for
// every kind of record, which replace the version 2 to 4 ones.
var schemaV10 = `
CREATE TABLE IF NOT EXISTS ledger_now (
	slot INTEGER PRIMARY KEY CHECK (slot = 1),
	at   INTEGER NOT NULL DEFAULT 0,
	via  TEXT NOT NULL DEFAULT ''
);
INSERT OR IGNORE INTO ledger_now(slot) VALUES (1);
` + deriveOldOps + `
CREATE INDEX IF NOT EXISTS changes_history ON changes(ref, seq) WHERE op <> 'index';

DROP TRIGGER IF EXISTS changes_membership_insert;
CREATE TRIGGER changes_membership_insert AFTER INSERT ON capsule_observations
BEGIN INSERT INTO changes(kind, ref, op, at) VALUES ('observation', NEW.observation_id, 'index', ` + ledgerAt + `); END;
DROP TRIGGER IF EXISTS changes_embedding_insert;
CREATE TRIGGER changes_embedding_insert AFTER INSERT ON embeddings
BEGIN INSERT INTO changes(kind, ref, op, at) VALUES (NEW.kind, NEW.ref, 'index', ` + ledgerAt + `); END;
DROP TRIGGER IF EXISTS changes_embedding_update;
CREATE TRIGGER changes_embedding_update AFTER UPDATE ON embeddings
BEGIN INSERT INTO changes(kind, ref, op, at) VALUES (NEW.kind, NEW.ref, 'index', ` + ledgerAt + `); END;

-- A thought written to an archive (its removal's export).
DROP TRIGGER IF EXISTS changes_thought_removals_insert;
CREATE TRIGGER changes_thought_removals_insert AFTER INSERT ON thought_removals WHEN NEW.exported_at > 0
BEGIN INSERT INTO changes(kind, ref, op, at, fields) VALUES ('thought', NEW.thought_id, 'export', ` + ledgerAt + `, 'archive'); END;
DROP TRIGGER IF EXISTS changes_thought_removals_update;
CREATE TRIGGER changes_thought_removals_update AFTER UPDATE OF exported_at ON thought_removals
	WHEN NEW.exported_at > 0 AND NEW.exported_at IS NOT OLD.exported_at
BEGIN INSERT INTO changes(kind, ref, op, at, fields) VALUES ('thought', NEW.thought_id, 'export', ` + ledgerAt + `, 'archive'); END;
` + ledgerTriggers()

func ledgerTriggers() string {
	var b strings.Builder
	for _, t := range ledgerTables {
		b.WriteString(t.triggers())
	}
	return b.String()
}

// deriveOldOps names what can be told of the rows logged before the
// ledger. Thoughts and graph records were logged from their tables'
// creation on, and only a delete removes them: their first row is their
// creation, and the last row of one that is gone its deletion.
// Observations and summaries stay 'unknown': databases from before the
// change log existed logged neither their creation nor, since, which rows
// only stored a vector.
const deriveOldOps = `
UPDATE changes SET op = 'create', at = coalesce(CASE kind
		WHEN 'thought' THEN (SELECT created_at FROM thoughts WHERE id = changes.ref)
		WHEN 'kg_entity' THEN (SELECT created_at FROM kg_entities WHERE id = changes.ref)
		WHEN 'kg_observation' THEN (SELECT created_at FROM kg_observations WHERE id = changes.ref)
		WHEN 'kg_edge' THEN (SELECT created_at FROM kg_edges WHERE id = changes.ref) END, 0)
WHERE op = 'unknown' AND seq IN (SELECT min(seq) FROM changes
	WHERE kind IN ('thought', 'kg_entity', 'kg_observation', 'kg_edge') GROUP BY kind, ref);
UPDATE changes SET op = 'delete'
WHERE op = 'unknown' AND seq IN (SELECT max(seq) FROM changes
	WHERE kind IN ('thought', 'kg_entity', 'kg_observation', 'kg_edge') GROUP BY kind, ref)
	AND NOT EXISTS (SELECT 1 FROM thoughts WHERE kind = 'thought' AND id = changes.ref)
	AND NOT EXISTS (SELECT 1 FROM kg_entities WHERE kind = 'kg_entity' AND id = changes.ref)
	AND NOT EXISTS (SELECT 1 FROM kg_observations WHERE kind = 'kg_observation' AND id = changes.ref)
	AND NOT EXISTS (SELECT 1 FROM kg_edges WHERE kind = 'kg_edge' AND id = changes.ref);
`

// setLedgerClock dates the writes of the transaction in progress, and says
// whether they are an import.
func setLedgerClock(ctx context.Context, tx *sql.Tx, at int64, via string) error {
	_, err := tx.ExecContext(ctx, "UPDATE ledger_now SET at = ?, via = ? WHERE slot = 1", at, via)
	return err
}

// markImport makes the inserts of the transaction in progress imports.
func (db *DB) markImport(ctx context.Context, tx *sql.Tx) error {
	if !db.ledger {
		return nil
	}
	_, err := tx.ExecContext(ctx, "UPDATE ledger_now SET via = 'import' WHERE slot = 1")
	return err
}

// maxHistory caps a History page.
const maxHistory = 1000

// History implements memory.LedgerStore.
func (db *DB) History(ctx context.Context, id string, after int64, limit int) ([]memory.LedgerEntry, bool, error) {
	if limit <= 0 || limit > maxHistory {
		limit = maxHistory
	}
	out := []memory.LedgerEntry{}
	known := false
	err := db.read(ctx, "reading a record's history", func(tx queryer) error {
		out = out[:0]
		err := eachRowArgs(ctx, tx, `SELECT seq, at, kind, ref, op, fields FROM changes
			WHERE ref = ? AND op <> 'index' AND seq > ? ORDER BY seq LIMIT ?`, []any{id, after, limit}, func(s scanner) error {
			var e memory.LedgerEntry
			var fields string
			if err := s.Scan(&e.Seq, &e.At, &e.Kind, &e.ID, &e.Op, &fields); err != nil {
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
		return tx.QueryRowContext(ctx, recordKnownSQL, id).Scan(&known)
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
