package postgres

import (
	"strconv"
	"strings"
)

// schemaV5 makes code entities documents of the retrieval index: each
// gets an id (its repository and key joined by '|', which repository ids
// cannot hold), and a write to an entity, or to the artifact whose text it
// holds, logs a change the index follows (op 'index': code memory keeps
// its own ledger). A new artifact drops the entity's vector, so the next
// embedding pass embeds the new text.
func schemaV5(_ vectorMode, space int32) string {
	return strings.ReplaceAll(`
ALTER TABLE code_entities ADD COLUMN IF NOT EXISTS id text COLLATE "C" GENERATED ALWAYS AS (repo_id || '|' || key) STORED;
CREATE UNIQUE INDEX IF NOT EXISTS code_entities_id ON code_entities(id);
-- The symbol's last dotted segment and the path's base name, by which a
-- query's words find the entities they name.
ALTER TABLE code_entities ADD COLUMN IF NOT EXISTS name text COLLATE "C" GENERATED ALWAYS AS (regexp_replace(symbol, '^.*[.]', '')) STORED;
ALTER TABLE code_entities ADD COLUMN IF NOT EXISTS file text COLLATE "C" GENERATED ALWAYS AS (regexp_replace(path, '^.*/', '')) STORED;
CREATE INDEX IF NOT EXISTS code_entities_symbol ON code_entities(repo_id, symbol);
CREATE INDEX IF NOT EXISTS code_entities_name ON code_entities(repo_id, name);
CREATE INDEX IF NOT EXISTS code_entities_file ON code_entities(repo_id, file);

CREATE OR REPLACE FUNCTION changes_log_code_entity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_advisory_xact_lock({{space}}, 2);
	IF TG_OP = 'DELETE' THEN
		INSERT INTO {{s}}.changes(seq, kind, ref, op, at) VALUES (nextval('{{s}}.changes_seq'), 'code_entity', OLD.id, 'index', {{s}}.ledger_at());
		DELETE FROM {{s}}.embeddings WHERE kind = 'code_entity' AND ref = OLD.id;
		RETURN NULL;
	END IF;
	IF TG_OP = 'UPDATE' AND NEW.artifact_hash IS DISTINCT FROM OLD.artifact_hash THEN
		DELETE FROM {{s}}.embeddings WHERE kind = 'code_entity' AND ref = NEW.id;
	END IF;
	INSERT INTO {{s}}.changes(seq, kind, ref, op, at) VALUES (nextval('{{s}}.changes_seq'), 'code_entity', NEW.id, 'index', {{s}}.ledger_at());
	RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION changes_log_code_artifact() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_advisory_xact_lock({{space}}, 2);
	INSERT INTO {{s}}.changes(seq, kind, ref, op, at)
		SELECT nextval('{{s}}.changes_seq'), 'code_entity', id, 'index', {{s}}.ledger_at()
		FROM {{s}}.code_entities WHERE artifact_hash = NEW.hash ORDER BY id;
	RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS changes_code_entity_insert ON code_entities;
CREATE CONSTRAINT TRIGGER changes_code_entity_insert AFTER INSERT ON code_entities
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_code_entity();
DROP TRIGGER IF EXISTS changes_code_entity_update ON code_entities;
CREATE CONSTRAINT TRIGGER changes_code_entity_update AFTER UPDATE OF state, artifact_hash, path, symbol ON code_entities
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_code_entity();
DROP TRIGGER IF EXISTS changes_code_entity_delete ON code_entities;
CREATE CONSTRAINT TRIGGER changes_code_entity_delete AFTER DELETE ON code_entities
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_code_entity();
DROP TRIGGER IF EXISTS changes_code_artifact_update ON code_artifacts;
CREATE CONSTRAINT TRIGGER changes_code_artifact_update AFTER UPDATE OF content, redacted ON code_artifacts
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_code_artifact();
`, "{{space}}", strconv.Itoa(int(space)))
}
