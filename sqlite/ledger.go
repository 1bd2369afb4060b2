package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/cairnhq/cairn/sqlstore"
)

// The ledger lives in the change log (see sqlstore.LedgerTables): since
// schema version 10 each row also says what was done to the record (op),
// when (at) and which fields an update changed. Its triggers read the
// time from the one row of ledger_now, which every write transaction sets
// first (see DB.tryWrite).

// ledgerVersion is the schema version that keeps the ledger.
const ledgerVersion = 10

// ledgerOps are the SQL expressions (over OLD and NEW) of an update's op,
// by the name a ledger table gives it.
var ledgerOps = map[string]string{
	sqlstore.LedgerForget: "CASE WHEN NEW.redacted = 1 AND OLD.redacted = 0 THEN 'forget' ELSE 'update' END",
	sqlstore.LedgerClose:  "CASE WHEN NEW.status = 'closed' AND OLD.status = 'open' THEN 'close' ELSE 'update' END",
	sqlstore.LedgerThought: `CASE WHEN NEW.redacted = 1 AND OLD.redacted = 0 THEN 'forget'
			WHEN NEW.status IS NOT OLD.status THEN CASE NEW.status WHEN 'removal' THEN 'mark' ELSE 'unmark' END
			ELSE 'update' END`,
	sqlstore.LedgerDecide: `CASE WHEN NEW.status IS NOT OLD.status THEN
	CASE NEW.status WHEN 'approved' THEN 'approve' WHEN 'rejected' THEN 'reject' ELSE 'update' END ELSE 'update' END`,
}

// ledgerAt is the time of the write in progress.
const ledgerAt = "coalesce((SELECT at FROM ledger_now), 0)"

// insertOp is the SQL expression of an insert's op.
func insertOp(t sqlstore.LedgerTable) string {
	if !t.Importable {
		return "'" + t.Insert + "'"
	}
	return fmt.Sprintf("coalesce((SELECT CASE via WHEN 'import' THEN 'import' ELSE '%s' END FROM ledger_now), '%s')", t.Insert, t.Insert)
}

// ledgerTriggers are a table's change-log triggers.
func ledgerTriggers(t sqlstore.LedgerTable) string {
	var b strings.Builder
	name := t.TriggerName()
	fmt.Fprintf(&b, `
DROP TRIGGER IF EXISTS %[1]s_insert;
CREATE TRIGGER %[1]s_insert AFTER INSERT ON %[2]s
BEGIN INSERT INTO changes(kind, ref, op, at) VALUES ('%[3]s', NEW.%[4]s, %[5]s, %[6]s); END;
`, name, t.Table, t.Kind, t.ID, insertOp(t), ledgerAt)
	if len(t.Fields) > 0 {
		changed := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			changed[i] = fmt.Sprintf("CASE WHEN OLD.%[1]s IS NOT NEW.%[1]s THEN '%[1]s,' ELSE '' END", f)
		}
		op := ledgerOps[t.Op]
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
`, name, strings.Join(t.Fields, ", "), t.Table, t.Kind, t.ID, op, ledgerAt, strings.Join(changed, " || "))
	}
	if t.Delete {
		drop := ""
		if t.Vectors {
			drop = fmt.Sprintf("\n\tDELETE FROM embeddings WHERE kind = '%s' AND ref = OLD.%s;", t.Kind, t.ID)
		}
		fmt.Fprintf(&b, `
DROP TRIGGER IF EXISTS %[1]s_delete;
CREATE TRIGGER %[1]s_delete AFTER DELETE ON %[2]s
BEGIN
	INSERT INTO changes(kind, ref, op, at) VALUES ('%[3]s', OLD.%[4]s, 'delete', %[5]s);%[6]s
END;
`, name, t.Table, t.Kind, t.ID, ledgerAt, drop)
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
` + allLedgerTriggers()

func allLedgerTriggers() string {
	var b strings.Builder
	for _, t := range sqlstore.LedgerTables {
		b.WriteString(ledgerTriggers(t))
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
