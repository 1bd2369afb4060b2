package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/sqlstore"
)

// The ledger lives in the change log (see sqlstore.LedgerTables): from
// schema version 3 on each row also says what was done to the record
// (op), when (at) and which fields an update changed. The change log's
// deferred triggers write every row; they read the time from the
// transaction's cairn.ledger_at setting, which every write transaction
// sets as it begins (see DB.write).

// ledgerOps are the SQL expressions (over OLD and NEW) of an update's op,
// by the name a ledger table gives it: the SQLite store's, with
// PostgreSQL's booleans.
var ledgerOps = map[string]string{
	sqlstore.LedgerForget: "CASE WHEN NEW.redacted AND NOT OLD.redacted THEN 'forget' ELSE 'update' END",
	sqlstore.LedgerClose:  "CASE WHEN NEW.status = 'closed' AND OLD.status = 'open' THEN 'close' ELSE 'update' END",
	sqlstore.LedgerThought: `CASE WHEN NEW.redacted AND NOT OLD.redacted THEN 'forget'
			WHEN NEW.status IS DISTINCT FROM OLD.status THEN CASE NEW.status WHEN 'removal' THEN 'mark' ELSE 'unmark' END
			ELSE 'update' END`,
	sqlstore.LedgerDecide: `CASE WHEN NEW.status IS DISTINCT FROM OLD.status THEN
	CASE NEW.status WHEN 'approved' THEN 'approve' WHEN 'rejected' THEN 'reject' ELSE 'update' END ELSE 'update' END`,
}

// ledgerTriggers are a table's change-log function and triggers. A
// delete's vectors go by the vector triggers of version 1.
func ledgerTriggers(t sqlstore.LedgerTable) string {
	name := t.TriggerName()
	insertOp := "'" + t.Insert + "'"
	if t.Importable {
		insertOp = "{{s}}.ledger_insert_op('" + t.Insert + "')"
	}
	var diff strings.Builder
	for _, f := range t.Fields {
		fmt.Fprintf(&diff, "\n\t\tIF OLD.%[1]s IS DISTINCT FROM NEW.%[1]s THEN f := f || '%[1]s'::text; END IF;", f)
	}
	op := ledgerOps[t.Op]
	if op == "" {
		op = "'update'"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `
CREATE OR REPLACE FUNCTION changes_log_%[1]s() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	f text[] := '{}';
	o text;
	r text;
BEGIN
	PERFORM pg_advisory_xact_lock({{space}}, 2);
	IF TG_OP = 'INSERT' THEN
		r := NEW.%[2]s;
		o := %[3]s;
	ELSIF TG_OP = 'DELETE' THEN
		r := OLD.%[2]s;
		o := 'delete';
	ELSE
		r := NEW.%[2]s;%[4]s
		o := CASE WHEN cardinality(f) = 0 THEN 'index' ELSE %[5]s END;
	END IF;
	INSERT INTO {{s}}.changes(seq, kind, ref, op, at, fields)
	VALUES (nextval('{{s}}.changes_seq'), '%[6]s', r, o, {{s}}.ledger_at(), array_to_string(f, ','));
	RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS %[7]s_insert ON %[1]s;
CREATE CONSTRAINT TRIGGER %[7]s_insert AFTER INSERT ON %[1]s
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_%[1]s();
DROP TRIGGER IF EXISTS %[7]s_update ON %[1]s;
DROP TRIGGER IF EXISTS %[7]s_delete ON %[1]s;
`, t.Table, t.ID, insertOp, diff.String(), op, t.Kind, name)
	if len(t.Fields) > 0 {
		fmt.Fprintf(&b, `CREATE CONSTRAINT TRIGGER %[1]s_update AFTER UPDATE OF %[2]s ON %[3]s
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_%[3]s();
`, name, strings.Join(t.Fields, ", "), t.Table)
	}
	if t.Delete {
		fmt.Fprintf(&b, `CREATE CONSTRAINT TRIGGER %[1]s_delete AFTER DELETE ON %[2]s
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_%[2]s();
`, name, t.Table)
	}
	return b.String()
}

// schemaV3 turns the change log into the ledger, as the SQLite store's
// version 10 does: op, at and fields columns (rows written before it get
// op 'unknown' and at 0, except what can be told: the first row of a
// thought or a graph record is its creation, dated by its created_at
// while it exists, and the last row of one that no longer exists its
// deletion), an index to read a record's history by, and a trigger
// function per table, for every kind of record, replacing version 1's.
// Each statement may run again.
func schemaV3(_ vectorMode, space int32) string {
	var b strings.Builder
	b.WriteString(`
ALTER TABLE changes ADD COLUMN IF NOT EXISTS op text NOT NULL DEFAULT 'unknown',
	ADD COLUMN IF NOT EXISTS at bigint NOT NULL DEFAULT 0,
	ADD COLUMN IF NOT EXISTS fields text NOT NULL DEFAULT '';
` + deriveOldOps + `
CREATE INDEX IF NOT EXISTS changes_history ON changes(ref, seq) WHERE op <> 'index';

-- The time of the write in progress, and its op when it inserts.
CREATE OR REPLACE FUNCTION ledger_at() RETURNS bigint LANGUAGE sql STABLE AS $$
	SELECT coalesce(nullif(current_setting('cairn.ledger_at', true), '')::bigint, 0)
$$;
CREATE OR REPLACE FUNCTION ledger_insert_op(op text) RETURNS text LANGUAGE sql STABLE AS $$
	SELECT CASE WHEN current_setting('cairn.ledger_via', true) = 'import' THEN 'import' ELSE op END
$$;

CREATE OR REPLACE FUNCTION changes_log_member() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_advisory_xact_lock({{space}}, 2);
	INSERT INTO {{s}}.changes(seq, kind, ref, op, at) VALUES (nextval('{{s}}.changes_seq'), 'observation', NEW.observation_id, 'index', {{s}}.ledger_at());
	RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION changes_log_embedding() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_advisory_xact_lock({{space}}, 2);
	INSERT INTO {{s}}.changes(seq, kind, ref, op, at) VALUES (nextval('{{s}}.changes_seq'), NEW.kind, NEW.ref, 'index', {{s}}.ledger_at());
	RETURN NULL;
END $$;

-- A thought written to an archive (its removal's export).
CREATE OR REPLACE FUNCTION changes_log_export() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_advisory_xact_lock({{space}}, 2);
	INSERT INTO {{s}}.changes(seq, kind, ref, op, at, fields)
	VALUES (nextval('{{s}}.changes_seq'), 'thought', NEW.thought_id, 'export', {{s}}.ledger_at(), 'archive');
	RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS changes_thought_removals_insert ON thought_removals;
CREATE CONSTRAINT TRIGGER changes_thought_removals_insert AFTER INSERT ON thought_removals
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.exported_at > 0) EXECUTE FUNCTION changes_log_export();
DROP TRIGGER IF EXISTS changes_thought_removals_update ON thought_removals;
CREATE CONSTRAINT TRIGGER changes_thought_removals_update AFTER UPDATE OF exported_at ON thought_removals
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.exported_at > 0 AND NEW.exported_at IS DISTINCT FROM OLD.exported_at)
	EXECUTE FUNCTION changes_log_export();
`)
	for _, t := range sqlstore.LedgerTables {
		b.WriteString(ledgerTriggers(t))
	}
	// Version 1's functions for every table: no trigger uses them now.
	b.WriteString("DROP FUNCTION IF EXISTS changes_log_id();\n")
	return strings.ReplaceAll(b.String(), "{{space}}", strconv.Itoa(int(space)))
}

// deriveOldOps names what can be told of the rows logged before the
// ledger (see the SQLite store's).
const deriveOldOps = `
UPDATE changes c SET op = 'create', at = coalesce(CASE c.kind
		WHEN 'thought' THEN (SELECT t.created_at FROM thoughts t WHERE t.id = c.ref)
		WHEN 'kg_entity' THEN (SELECT e.created_at FROM kg_entities e WHERE e.id = c.ref)
		WHEN 'kg_observation' THEN (SELECT o.created_at FROM kg_observations o WHERE o.id = c.ref)
		WHEN 'kg_edge' THEN (SELECT g.created_at FROM kg_edges g WHERE g.id = c.ref) END, 0)
WHERE c.op = 'unknown' AND c.seq IN (SELECT min(seq) FROM changes
	WHERE kind IN ('thought', 'kg_entity', 'kg_observation', 'kg_edge') GROUP BY kind, ref);
UPDATE changes c SET op = 'delete'
WHERE c.op = 'unknown' AND c.seq IN (SELECT max(seq) FROM changes
	WHERE kind IN ('thought', 'kg_entity', 'kg_observation', 'kg_edge') GROUP BY kind, ref)
	AND NOT CASE c.kind
		WHEN 'thought' THEN EXISTS (SELECT 1 FROM thoughts t WHERE t.id = c.ref)
		WHEN 'kg_entity' THEN EXISTS (SELECT 1 FROM kg_entities e WHERE e.id = c.ref)
		WHEN 'kg_observation' THEN EXISTS (SELECT 1 FROM kg_observations o WHERE o.id = c.ref)
		ELSE EXISTS (SELECT 1 FROM kg_edges g WHERE g.id = c.ref) END;
`

// beginQuery begins a write transaction dated at (Unix ms) for the
// ledger, with via "import" for an import: one round trip, as BEGIN alone.
func beginQuery(at int64, via string) string {
	return "BEGIN; SELECT set_config('cairn.ledger_at', '" + strconv.FormatInt(at, 10) + "', true), set_config('cairn.ledger_via', '" + via + "', true)"
}

// markImport makes the inserts of the transaction in progress imports.
func markImport(ctx context.Context, tx queryer) error {
	_, err := tx.Exec(ctx, "SELECT set_config('cairn.ledger_via', 'import', true)")
	return err
}
