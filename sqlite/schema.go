package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/cairnhq/cairn/memory"
	sqlite3 "modernc.org/sqlite/lib"
)

// migration is one numbered, idempotent schema step. Steps only ever add:
// a released step is never edited, a new version appends a new step.
type migration struct {
	version int
	name    string
	sql     string
	// columns are added (each only when its table lacks it: SQLite has no
	// ADD COLUMN IF NOT EXISTS) before sql runs.
	columns []column
}

// column is a column a migration adds to an existing table.
type column struct{ table, name, decl string }

// migrations are applied in order at open; PRAGMA user_version records the
// last one applied.
var migrations = []migration{
	{1, "observations, capsules, summaries, pins and their full-text indexes", schemaV1, nil},
	{2, "a change log that in-memory indexes follow", schemaV2, nil},
	{3, "embeddings, one per record and vector space", schemaV3, nil},
	{4, "thoughts and the knowledge graph", schemaV4, nil},
	{5, "code memory: repositories, files, entities, artifacts, ledger, episodes, hydration, gates", schemaV5, nil},
	{6, "forgetting summaries, thoughts and code artifacts", schemaV6, []column{
		{"summaries", "redacted", redactedColumn},
		{"thoughts", "redacted", redactedColumn},
		{"code_artifacts", "redacted", redactedColumn},
	}},
	{7, "knowledge-graph candidates, their blocklist, and the removal lifecycle of thoughts", schemaV7, nil},
	{9, "inner_voice sessions, their exchanges and what the exchanges cite", schemaV9, nil},
	{10, "the ledger: what was done to every record, when, and which fields changed", schemaV10, []column{
		{"changes", "op", "TEXT NOT NULL DEFAULT 'unknown'"},
		{"changes", "at", "INTEGER NOT NULL DEFAULT 0"},
		{"changes", "fields", "TEXT NOT NULL DEFAULT ''"},
	}},
	{11, "inner_voice sessions: a scope each, and at most one current session per scope", schemaV11, []column{
		{"inner_voice_sessions", "session_id", "TEXT NOT NULL DEFAULT ''"},
		{"inner_voice_sessions", "repo_id", "TEXT NOT NULL DEFAULT ''"},
		{"inner_voice_sessions", "agent_id", "TEXT NOT NULL DEFAULT ''"},
		{"inner_voice_sessions", "user_id", "TEXT NOT NULL DEFAULT ''"},
		{"inner_voice_sessions", "active", "INTEGER NOT NULL DEFAULT 0"},
	}},
	{12, "a mark for a write-ahead log that still holds forgotten text", schemaV12, nil},
	{13, "code entities as documents of the retrieval index: an id each, and their writes in the change log", schemaV13, []column{
		// A generated column: declared here only, never in version 5's
		// table (pragma_table_xinfo lists it).
		{"code_entities", "id", "TEXT GENERATED ALWAYS AS (repo_id || '|' || key) VIRTUAL"},
		// The symbol's last dotted segment and the path's base name (what
		// follows the last '.' or '/'), by which a query's words find
		// the entities they name.
		{"code_entities", "name", "TEXT GENERATED ALWAYS AS (replace(symbol, rtrim(symbol, replace(symbol, '.', '')), '')) VIRTUAL"},
		{"code_entities", "file", "TEXT GENERATED ALWAYS AS (replace(path, rtrim(path, replace(path, '/', '')), '')) VIRTUAL"},
	}},
}

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

const scopeColumns = `
	session_id TEXT NOT NULL DEFAULT '',
	repo_id    TEXT NOT NULL DEFAULT '',
	agent_id   TEXT NOT NULL DEFAULT '',
	user_id    TEXT NOT NULL DEFAULT ''`

const schemaV1 = `
CREATE TABLE IF NOT EXISTS observations (
	seq        INTEGER PRIMARY KEY,
	id         TEXT NOT NULL UNIQUE,
	kind       TEXT NOT NULL,
	content    TEXT NOT NULL,
	provenance TEXT NOT NULL DEFAULT '{}',
	ts         INTEGER NOT NULL,
	redacted   INTEGER NOT NULL DEFAULT 0 CHECK (redacted IN (0, 1)),` + scopeColumns + `
);
CREATE INDEX IF NOT EXISTS observations_session ON observations(session_id) WHERE session_id <> '';
CREATE INDEX IF NOT EXISTS observations_repo ON observations(repo_id) WHERE repo_id <> '';
CREATE INDEX IF NOT EXISTS observations_agent ON observations(agent_id) WHERE agent_id <> '';
CREATE INDEX IF NOT EXISTS observations_user ON observations(user_id) WHERE user_id <> '';

-- One indexed column only: a second column would change bm25's document
-- lengths. Contentless: the text lives in observations. Rows leave the index
-- through the 'delete' command given their old text, which keeps bm25's
-- statistics exact (contentless_delete=1 tables do not), with FTS5's
-- secure-delete on so a forgotten row's tokens are removed from the index
-- pages at once rather than masked. Redacted rows are never inserted.
CREATE VIRTUAL TABLE IF NOT EXISTS observations_fts USING fts5(
	content, content='', tokenize='porter unicode61');
INSERT INTO observations_fts(observations_fts, rank) VALUES ('secure-delete', 1);

CREATE TABLE IF NOT EXISTS capsules (
	seq       INTEGER PRIMARY KEY,
	id        TEXT NOT NULL UNIQUE,
	type      TEXT NOT NULL,
	intent    TEXT NOT NULL DEFAULT '',
	status    TEXT NOT NULL CHECK (status IN ('open', 'closed')),
	opened_at INTEGER NOT NULL,
	closed_at INTEGER,` + scopeColumns + `,
	CHECK ((status = 'open') = (closed_at IS NULL))
);
CREATE UNIQUE INDEX IF NOT EXISTS capsules_one_open_per_session
	ON capsules(session_id) WHERE status = 'open' AND session_id <> '';

CREATE TABLE IF NOT EXISTS capsule_observations (
	capsule_id     TEXT NOT NULL REFERENCES capsules(id),
	position       INTEGER NOT NULL,
	observation_id TEXT NOT NULL REFERENCES observations(id),
	PRIMARY KEY (capsule_id, position)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS capsule_observations_observation ON capsule_observations(observation_id);

CREATE TABLE IF NOT EXISTS summaries (
	seq           INTEGER PRIMARY KEY,
	id            TEXT NOT NULL UNIQUE,
	capsule_id    TEXT NOT NULL UNIQUE REFERENCES capsules(id),
	content       TEXT NOT NULL,
	confidence    REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
	created_at    INTEGER NOT NULL,
	evidence_refs TEXT NOT NULL DEFAULT '[]',` + scopeColumns + `
);
CREATE VIRTUAL TABLE IF NOT EXISTS summaries_fts USING fts5(
	content, content='', tokenize='porter unicode61');
INSERT INTO summaries_fts(summaries_fts, rank) VALUES ('secure-delete', 1);

CREATE TABLE IF NOT EXISTS pins (
	seq         INTEGER PRIMARY KEY,
	id          TEXT NOT NULL UNIQUE,
	target_type TEXT NOT NULL CHECK (target_type IN ('observation', 'summary')),
	target_id   TEXT NOT NULL,
	reason      TEXT NOT NULL DEFAULT '',
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER,` + scopeColumns + `
);
CREATE INDEX IF NOT EXISTS pins_expires ON pins(expires_at);
CREATE INDEX IF NOT EXISTS pins_target ON pins(target_id);
`

// schemaV2 logs every change to a searchable record, so each process's
// in-memory index can catch up with writes made by any process. Triggers
// keep the log: no write path can forget it.
const schemaV2 = `
CREATE TABLE IF NOT EXISTS changes (
	seq  INTEGER PRIMARY KEY AUTOINCREMENT,
	kind TEXT NOT NULL,
	ref  TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS changes_observation_insert AFTER INSERT ON observations
BEGIN INSERT INTO changes(kind, ref) VALUES ('observation', NEW.id); END;
CREATE TRIGGER IF NOT EXISTS changes_observation_update AFTER UPDATE OF content, redacted ON observations
BEGIN INSERT INTO changes(kind, ref) VALUES ('observation', NEW.id); END;
CREATE TRIGGER IF NOT EXISTS changes_membership_insert AFTER INSERT ON capsule_observations
BEGIN INSERT INTO changes(kind, ref) VALUES ('observation', NEW.observation_id); END;
CREATE TRIGGER IF NOT EXISTS changes_summary_insert AFTER INSERT ON summaries
BEGIN INSERT INTO changes(kind, ref) VALUES ('summary', NEW.id); END;
CREATE TRIGGER IF NOT EXISTS changes_summary_update AFTER UPDATE OF content, created_at ON summaries
BEGIN INSERT INTO changes(kind, ref) VALUES ('summary', NEW.id); END;
`

// schemaV3 keeps vectors. Each row names its space (provider, model,
// dimension): similarity is computed only within the active space, and a
// new space (a new embedder) starts with every record pending.
const schemaV3 = `
CREATE TABLE IF NOT EXISTS embeddings (
	kind       TEXT NOT NULL,
	ref        TEXT NOT NULL,
	provider   TEXT NOT NULL,
	model      TEXT NOT NULL,
	dim        INTEGER NOT NULL CHECK (dim > 0),
	vector     BLOB NOT NULL CHECK (length(vector) = 4 * dim),
	created_at INTEGER NOT NULL DEFAULT (unixepoch('subsec') * 1000),
	PRIMARY KEY (provider, model, dim, kind, ref)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS embeddings_ref ON embeddings(kind, ref);
CREATE TRIGGER IF NOT EXISTS changes_embedding_insert AFTER INSERT ON embeddings
BEGIN INSERT INTO changes(kind, ref) VALUES (NEW.kind, NEW.ref); END;
CREATE TRIGGER IF NOT EXISTS changes_embedding_update AFTER UPDATE ON embeddings
BEGIN INSERT INTO changes(kind, ref) VALUES (NEW.kind, NEW.ref); END;
CREATE TRIGGER IF NOT EXISTS embeddings_observation_forgotten AFTER UPDATE OF redacted ON observations WHEN NEW.redacted = 1
BEGIN DELETE FROM embeddings WHERE kind = 'observation' AND ref = NEW.id; END;
CREATE TRIGGER IF NOT EXISTS embeddings_summary_rewritten AFTER UPDATE OF content ON summaries
BEGIN DELETE FROM embeddings WHERE kind = 'summary' AND ref = NEW.id; END;
`

var schemaV4 = `
CREATE TABLE IF NOT EXISTS thoughts (
	seq          INTEGER PRIMARY KEY,
	id           TEXT NOT NULL UNIQUE,
	content      TEXT NOT NULL,
	origin       TEXT NOT NULL CHECK (origin IN ('human', 'tool', 'model', 'logged')),
	tags         TEXT NOT NULL DEFAULT '[]',
	is_private   INTEGER NOT NULL DEFAULT 0 CHECK (is_private IN (0, 1)),
	status       TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'removal')),
	significance REAL NOT NULL DEFAULT 0.5 CHECK (significance >= 0 AND significance <= 1),
	is_summary   INTEGER NOT NULL DEFAULT 0 CHECK (is_summary IN (0, 1)),
	summary_of   TEXT NOT NULL DEFAULT '[]',
	pipeline     TEXT NOT NULL DEFAULT '',
	created_at   INTEGER NOT NULL,` + scopeColumns + `
);
CREATE INDEX IF NOT EXISTS thoughts_status ON thoughts(status);

CREATE TABLE IF NOT EXISTS kg_entities (
	seq        INTEGER PRIMARY KEY,
	id         TEXT NOT NULL UNIQUE,
	name       TEXT NOT NULL,
	name_key   TEXT NOT NULL,
	type       TEXT NOT NULL,
	data       TEXT NOT NULL DEFAULT '{}',
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,` + scopeColumns + `
);
CREATE INDEX IF NOT EXISTS kg_entities_name ON kg_entities(name_key);

CREATE TABLE IF NOT EXISTS kg_observations (
	seq        INTEGER PRIMARY KEY,
	id         TEXT NOT NULL UNIQUE,
	entity_id  TEXT NOT NULL REFERENCES kg_entities(id) ON DELETE CASCADE,
	content    TEXT NOT NULL,
	created_at INTEGER NOT NULL,` + scopeColumns + `
);
CREATE INDEX IF NOT EXISTS kg_observations_entity ON kg_observations(entity_id);

CREATE TABLE IF NOT EXISTS kg_edges (
	seq        INTEGER PRIMARY KEY,
	id         TEXT NOT NULL UNIQUE,
	source     TEXT NOT NULL REFERENCES kg_entities(id) ON DELETE CASCADE,
	target     TEXT NOT NULL REFERENCES kg_entities(id) ON DELETE CASCADE,
	relation   TEXT NOT NULL,
	data       TEXT NOT NULL DEFAULT '{}',
	created_at INTEGER NOT NULL,` + scopeColumns + `
);
CREATE INDEX IF NOT EXISTS kg_edges_source ON kg_edges(source);
CREATE INDEX IF NOT EXISTS kg_edges_target ON kg_edges(target);
` + changeTriggers("thoughts", "thought", "content, status, is_private, tags") +
	changeTriggers("kg_entities", "kg_entity", "name, type, data") +
	changeTriggers("kg_observations", "kg_observation", "content") +
	changeTriggers("kg_edges", "kg_edge", "relation, data")

// schemaV5 keeps code memory. Entities are keyed by repository and entity
// key; artifacts by the SHA-256 of their content; the ledger, hydration rows
// and gate results only ever grow.
const schemaV5 = `
CREATE TABLE IF NOT EXISTS code_repos (
	id         TEXT PRIMARY KEY,
	root       TEXT NOT NULL,
	indexed_at INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS code_files (
	repo_id   TEXT NOT NULL,
	path      TEXT NOT NULL,
	size      INTEGER NOT NULL DEFAULT 0,
	mod_time  INTEGER NOT NULL DEFAULT 0,
	file_hash TEXT NOT NULL DEFAULT '',
	language  TEXT NOT NULL DEFAULT '',
	method    TEXT NOT NULL DEFAULT '',
	reason    TEXT NOT NULL DEFAULT '',
	entities  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (repo_id, path)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS code_entities (
	repo_id       TEXT NOT NULL,
	key           TEXT NOT NULL,
	path          TEXT NOT NULL DEFAULT '',
	symbol        TEXT NOT NULL DEFAULT '',
	kind          TEXT NOT NULL DEFAULT '',
	language      TEXT NOT NULL DEFAULT '',
	start_line    INTEGER NOT NULL DEFAULT 0,
	end_line      INTEGER NOT NULL DEFAULT 0,
	method        TEXT NOT NULL DEFAULT '',
	state         TEXT NOT NULL CHECK (state IN ('PROPOSED', 'AUTHORITATIVE', 'SUPERSEDED', 'TOMBSTONED')),
	artifact_hash TEXT NOT NULL DEFAULT '',
	updated_at    INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (repo_id, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS code_entities_key ON code_entities(key);
CREATE INDEX IF NOT EXISTS code_entities_path ON code_entities(repo_id, path);

CREATE TABLE IF NOT EXISTS code_artifacts (
	hash       TEXT PRIMARY KEY,
	type       TEXT NOT NULL CHECK (type IN ('code', 'diff', 'decision', 'user_paste')),
	content    TEXT NOT NULL,
	created_at INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS code_ledger (
	seq           INTEGER PRIMARY KEY AUTOINCREMENT,
	repo_id       TEXT NOT NULL,
	key           TEXT NOT NULL,
	from_state    TEXT NOT NULL DEFAULT '',
	to_state      TEXT NOT NULL CHECK (to_state IN ('PROPOSED', 'AUTHORITATIVE', 'SUPERSEDED', 'TOMBSTONED')),
	artifact_hash TEXT NOT NULL DEFAULT '',
	episode_id    TEXT NOT NULL DEFAULT '',
	reason        TEXT NOT NULL DEFAULT '',
	at            INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS code_ledger_entity ON code_ledger(repo_id, key, seq);

CREATE TABLE IF NOT EXISTS code_episodes (
	id              TEXT PRIMARY KEY,
	session_id      TEXT NOT NULL,
	repo_id         TEXT NOT NULL DEFAULT '',
	seq             INTEGER NOT NULL CHECK (seq > 0),
	query           TEXT NOT NULL DEFAULT '',
	budget_tokens   INTEGER NOT NULL DEFAULT 0,
	budget_entities INTEGER NOT NULL DEFAULT 0,
	total_tokens    INTEGER NOT NULL DEFAULT 0,
	rows            INTEGER NOT NULL DEFAULT 0,
	digest          TEXT NOT NULL DEFAULT '',
	created_at      INTEGER NOT NULL DEFAULT 0,
	updated_at      INTEGER NOT NULL DEFAULT 0,
	UNIQUE (session_id, seq)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS code_hydration (
	episode_id    TEXT NOT NULL REFERENCES code_episodes(id),
	seq           INTEGER NOT NULL,
	session_id    TEXT NOT NULL,
	repo_id       TEXT NOT NULL DEFAULT '',
	key           TEXT NOT NULL DEFAULT '',
	artifact_hash TEXT NOT NULL DEFAULT '',
	reason        TEXT NOT NULL DEFAULT '',
	method        TEXT NOT NULL DEFAULT '',
	triggered_by  TEXT NOT NULL DEFAULT '',
	token_count   INTEGER NOT NULL DEFAULT 0,
	hydrated_at   INTEGER NOT NULL DEFAULT 0,
	checksum      TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (episode_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS code_hydration_session ON code_hydration(session_id);
CREATE INDEX IF NOT EXISTS code_hydration_entity ON code_hydration(repo_id, key);

CREATE TABLE IF NOT EXISTS code_gates (
	episode_id    TEXT NOT NULL REFERENCES code_episodes(id),
	ordinal       INTEGER NOT NULL,
	repo_id       TEXT NOT NULL DEFAULT '',
	key           TEXT NOT NULL DEFAULT '',
	artifact_hash TEXT NOT NULL DEFAULT '',
	a_ok          INTEGER NOT NULL CHECK (a_ok IN (0, 1)),
	a_reason      TEXT NOT NULL DEFAULT '',
	a_method      TEXT NOT NULL DEFAULT '',
	b_ok          INTEGER NOT NULL CHECK (b_ok IN (0, 1)),
	b_reason      TEXT NOT NULL DEFAULT '',
	c_ok          INTEGER NOT NULL CHECK (c_ok IN (0, 1)),
	c_reason      TEXT NOT NULL DEFAULT '',
	disk_exists   INTEGER NOT NULL CHECK (disk_exists IN (0, 1)),
	is_stale      INTEGER NOT NULL CHECK (is_stale IN (0, 1)),
	decision      TEXT NOT NULL DEFAULT '',
	at            INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (episode_id, ordinal)
) WITHOUT ROWID;
`

// schemaV6 lets summaries, thoughts and code artifacts be forgotten as
// observations are (its columns add a redacted flag to each): a redacted
// row keeps its id and links, its text is RedactedContent, and it leaves
// every index (its vectors go with it).
const redactedColumn = "INTEGER NOT NULL DEFAULT 0 CHECK (redacted IN (0, 1))"

const schemaV6 = `
CREATE TRIGGER IF NOT EXISTS embeddings_thought_forgotten AFTER UPDATE OF redacted ON thoughts WHEN NEW.redacted = 1
BEGIN DELETE FROM embeddings WHERE kind = 'thought' AND ref = NEW.id; END;
CREATE TRIGGER IF NOT EXISTS embeddings_summary_forgotten AFTER UPDATE OF redacted ON summaries WHEN NEW.redacted = 1
BEGIN DELETE FROM embeddings WHERE kind = 'summary' AND ref = NEW.id; END;
`

// schemaV7 stages knowledge-graph candidates for moderation (the tables
// keep the specification's names), keeps the keys moderators blocked, and
// records when thoughts were marked for removal and where they were
// exported. At most one candidate per key waits for moderation. Marking a
// thought active again clears its removal record.
const schemaV7 = `
CREATE TABLE IF NOT EXISTS kg_entity_candidates (
	seq               INTEGER PRIMARY KEY,
	id                TEXT NOT NULL UNIQUE,
	name              TEXT NOT NULL,
	name_key          TEXT NOT NULL,
	entity_type       TEXT NOT NULL,
	data              TEXT NOT NULL DEFAULT '{}',
	confidence        REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
	source_thought_id TEXT NOT NULL DEFAULT '',
	status            TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
	created_at        INTEGER NOT NULL,
	decided_at        INTEGER NOT NULL DEFAULT 0,
	promoted_id       TEXT NOT NULL DEFAULT '',
	feedback          TEXT NOT NULL DEFAULT '',` + scopeColumns + `
);
CREATE UNIQUE INDEX IF NOT EXISTS kg_entity_candidates_pending ON kg_entity_candidates(name_key) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS kg_entity_candidates_status ON kg_entity_candidates(status, confidence);
CREATE INDEX IF NOT EXISTS kg_entity_candidates_source ON kg_entity_candidates(source_thought_id);

CREATE TABLE IF NOT EXISTS kg_edge_candidates (
	seq               INTEGER PRIMARY KEY,
	id                TEXT NOT NULL UNIQUE,
	source_name       TEXT NOT NULL,
	target_name       TEXT NOT NULL,
	rel_type          TEXT NOT NULL,
	edge_key          TEXT NOT NULL,
	data              TEXT NOT NULL DEFAULT '{}',
	confidence        REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
	source_thought_id TEXT NOT NULL DEFAULT '',
	status            TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
	created_at        INTEGER NOT NULL,
	decided_at        INTEGER NOT NULL DEFAULT 0,
	promoted_id       TEXT NOT NULL DEFAULT '',
	feedback          TEXT NOT NULL DEFAULT '',` + scopeColumns + `
);
CREATE UNIQUE INDEX IF NOT EXISTS kg_edge_candidates_pending ON kg_edge_candidates(edge_key) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS kg_edge_candidates_status ON kg_edge_candidates(status, confidence);
CREATE INDEX IF NOT EXISTS kg_edge_candidates_source ON kg_edge_candidates(source_thought_id);

CREATE TABLE IF NOT EXISTS kg_candidate_blocklist (
	kind         TEXT NOT NULL CHECK (kind IN ('entity', 'edge')),
	key          TEXT NOT NULL,
	candidate_id TEXT NOT NULL DEFAULT '',
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (kind, key)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS thought_removals (
	thought_id     TEXT PRIMARY KEY REFERENCES thoughts(id) ON DELETE CASCADE,
	marked_at      INTEGER NOT NULL DEFAULT 0,
	exported_at    INTEGER NOT NULL DEFAULT 0,
	archive        TEXT NOT NULL DEFAULT '',
	archive_sha256 TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS thought_removals_cleared AFTER UPDATE OF status ON thoughts WHEN NEW.status = 'active'
BEGIN DELETE FROM thought_removals WHERE thought_id = NEW.id; END;

-- A forgotten thought takes its pending candidates with it, and no
-- candidate keeps quoting it; a deleted (archived) one leaves its
-- candidates, without the sentence they quote.
CREATE TRIGGER IF NOT EXISTS kg_candidates_thought_forgotten AFTER UPDATE OF redacted ON thoughts WHEN NEW.redacted = 1
BEGIN
	DELETE FROM kg_entity_candidates WHERE source_thought_id = NEW.id AND status = 'pending';
	DELETE FROM kg_edge_candidates WHERE source_thought_id = NEW.id AND status = 'pending';
	UPDATE kg_entity_candidates SET data = json_remove(data, '$.sentence') WHERE source_thought_id = NEW.id;
	UPDATE kg_edge_candidates SET data = json_remove(data, '$.sentence') WHERE source_thought_id = NEW.id;
END;
CREATE TRIGGER IF NOT EXISTS kg_candidates_thought_deleted AFTER DELETE ON thoughts
BEGIN
	UPDATE kg_entity_candidates SET data = json_remove(data, '$.sentence') WHERE source_thought_id = OLD.id;
	UPDATE kg_edge_candidates SET data = json_remove(data, '$.sentence') WHERE source_thought_id = OLD.id;
END;
`

// schemaV9 keeps inner_voice's sessions. An exchange's citations are
// also rows of inner_voice_refs, so that forgetting or deleting a cited
// record reaches every exchange quoting it, and the rolling summary made
// from one.
var schemaV9 = `
CREATE TABLE IF NOT EXISTS inner_voice_sessions (
	seq                     INTEGER PRIMARY KEY,
	id                      TEXT NOT NULL UNIQUE,
	version                 INTEGER NOT NULL,
	provider                TEXT NOT NULL DEFAULT '',
	model                   TEXT NOT NULL DEFAULT '',
	max_prompt_tokens       INTEGER NOT NULL DEFAULT 0,
	topic                   TEXT NOT NULL DEFAULT '',
	summary                 TEXT NOT NULL DEFAULT '',
	summary_updated         INTEGER NOT NULL DEFAULT 0,
	summary_exchanges       INTEGER NOT NULL DEFAULT 0,
	summary_savings         INTEGER NOT NULL DEFAULT 0,
	summary_coverage        REAL NOT NULL DEFAULT 0,
	summary_private         INTEGER NOT NULL DEFAULT 0,
	summarized_through      INTEGER NOT NULL DEFAULT 0,
	created_at              INTEGER NOT NULL,
	last_interaction        INTEGER NOT NULL,
	total_exchanges         INTEGER NOT NULL DEFAULT 0,
	total_prompt_tokens     INTEGER NOT NULL DEFAULT 0,
	total_completion_tokens INTEGER NOT NULL DEFAULT 0,
	total_cost              REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS inner_voice_sessions_recent ON inner_voice_sessions(last_interaction, created_at, id);

CREATE TABLE IF NOT EXISTS inner_voice_exchanges (
	id                TEXT PRIMARY KEY,
	session_id        TEXT NOT NULL REFERENCES inner_voice_sessions(id) ON DELETE CASCADE,
	seq               INTEGER NOT NULL,
	ts                INTEGER NOT NULL,
	query             TEXT NOT NULL,
	answer            TEXT NOT NULL DEFAULT '',
	sources           TEXT NOT NULL DEFAULT '[]',
	confidence        REAL NOT NULL DEFAULT 0,
	coverage_ratio    REAL NOT NULL DEFAULT 0,
	refused           INTEGER NOT NULL DEFAULT 0,
	notes             TEXT NOT NULL DEFAULT '',
	memories          TEXT NOT NULL DEFAULT '[]',
	synthesizer       TEXT NOT NULL DEFAULT '',
	model             TEXT NOT NULL DEFAULT '',
	degraded          TEXT NOT NULL DEFAULT '',
	prompt_tokens     INTEGER NOT NULL DEFAULT 0,
	completion_tokens INTEGER NOT NULL DEFAULT 0,
	latency_ms        INTEGER NOT NULL DEFAULT 0,
	cost              REAL NOT NULL DEFAULT 0,
	prompt_hash       TEXT NOT NULL DEFAULT '',
	private           INTEGER NOT NULL DEFAULT 0,
	redacted          INTEGER NOT NULL DEFAULT 0,
	UNIQUE (session_id, seq)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS inner_voice_refs (
	ref_id      TEXT NOT NULL,
	exchange_id TEXT NOT NULL REFERENCES inner_voice_exchanges(id) ON DELETE CASCADE,
	PRIMARY KEY (ref_id, exchange_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS inner_voice_refs_exchange ON inner_voice_refs(exchange_id);
` + voiceForgetTrigger("thought_forgotten", "AFTER UPDATE OF redacted ON thoughts WHEN NEW.redacted = 1", "NEW.id") +
	voiceForgetTrigger("thought_deleted", "AFTER DELETE ON thoughts", "OLD.id") +
	voiceForgetTrigger("entity_deleted", "AFTER DELETE ON kg_entities", "OLD.id") +
	voiceForgetTrigger("fact_deleted", "AFTER DELETE ON kg_observations", "OLD.id")

// schemaV11 gives inner_voice's sessions a scope (the columns, added
// before it runs: the sessions of older versions are unscoped) and a
// current flag that a unique index holds to at most one session per
// scope, so that processes sharing the database agree on the session a
// call continues. Before it the active session was the one of the latest
// interaction: that one becomes current, the others are ended (several
// may have looked active, two first calls having raced). It may run again.
const schemaV11 = `
UPDATE inner_voice_sessions SET active = 1
WHERE seq = (SELECT seq FROM inner_voice_sessions ORDER BY last_interaction DESC, created_at DESC, id DESC LIMIT 1)
	AND NOT EXISTS (SELECT 1 FROM inner_voice_sessions WHERE active = 1);
CREATE UNIQUE INDEX IF NOT EXISTS inner_voice_sessions_current ON inner_voice_sessions(session_id, repo_id, agent_id, user_id)
	WHERE active = 1;
`

// schemaV12 keeps the mark a forget leaves when it could not truncate the
// write-ahead log (another connection's read held it): while the row
// exists, every write and the background scrubber of a long-running
// process try again (see scrub.go). gen grows with every mark, so a
// scrub clears only the marks its checkpoint covered.
const schemaV12 = `
CREATE TABLE IF NOT EXISTS wal_scrub (
	id  INTEGER PRIMARY KEY CHECK (id = 1),
	gen INTEGER NOT NULL
);
`

// schemaV13 makes code entities documents of the retrieval index: each
// has an id (its repository and key joined by '|', which repository ids
// cannot hold), and a write to an entity, or to the artifact whose text
// it holds, logs a change the index follows (op 'index': code memory
// keeps its own ledger). A new artifact drops the entity's vector, so the
// next embedding pass embeds the new text.
const schemaV13 = `
CREATE UNIQUE INDEX IF NOT EXISTS code_entities_id ON code_entities(id);
CREATE INDEX IF NOT EXISTS code_entities_symbol ON code_entities(repo_id, symbol);
CREATE INDEX IF NOT EXISTS code_entities_name ON code_entities(repo_id, name);
CREATE INDEX IF NOT EXISTS code_entities_file ON code_entities(repo_id, file);
CREATE TRIGGER IF NOT EXISTS changes_code_entity_insert AFTER INSERT ON code_entities
BEGIN INSERT INTO changes(kind, ref, op, at) VALUES ('code_entity', NEW.id, 'index', ` + ledgerAt + `); END;
CREATE TRIGGER IF NOT EXISTS changes_code_entity_update AFTER UPDATE OF state, artifact_hash, path, symbol ON code_entities
BEGIN
	DELETE FROM embeddings WHERE kind = 'code_entity' AND ref = NEW.id AND NEW.artifact_hash <> OLD.artifact_hash;
	INSERT INTO changes(kind, ref, op, at) VALUES ('code_entity', NEW.id, 'index', ` + ledgerAt + `);
END;
CREATE TRIGGER IF NOT EXISTS changes_code_entity_delete AFTER DELETE ON code_entities
BEGIN
	INSERT INTO changes(kind, ref, op, at) VALUES ('code_entity', OLD.id, 'index', ` + ledgerAt + `);
	DELETE FROM embeddings WHERE kind = 'code_entity' AND ref = OLD.id;
END;
CREATE TRIGGER IF NOT EXISTS changes_code_artifact_update AFTER UPDATE OF content, redacted ON code_artifacts
BEGIN
	INSERT INTO changes(kind, ref, op, at) SELECT 'code_entity', id, 'index', ` + ledgerAt + ` FROM code_entities
	WHERE artifact_hash = NEW.hash ORDER BY id;
END;
`

// voiceForgetTrigger redacts the exchanges that cite a record when it is
// forgotten or deleted, and drops a rolling summary made from one of them
// (its exchanges return to the context window).
func voiceForgetTrigger(name, when, ref string) string {
	return fmt.Sprintf(`
CREATE TRIGGER IF NOT EXISTS inner_voice_%[1]s %[2]s
BEGIN
	UPDATE inner_voice_sessions SET summary = '', summary_updated = 0, summary_exchanges = 0, summary_savings = 0,
		summary_coverage = 0, summary_private = 0, summarized_through = 0
	WHERE id IN (SELECT e.session_id FROM inner_voice_refs r JOIN inner_voice_exchanges e ON e.id = r.exchange_id
		WHERE r.ref_id = %[3]s AND e.seq <= (SELECT s.summarized_through FROM inner_voice_sessions s WHERE s.id = e.session_id));
	UPDATE inner_voice_exchanges SET answer = '%[4]s', sources = '[]', notes = '', redacted = 1
	WHERE id IN (SELECT exchange_id FROM inner_voice_refs WHERE ref_id = %[3]s) AND redacted = 0;
END;
`, name, when, ref, memory.RedactedContent)
}

// changeTriggers logs inserts, updates of the listed columns and deletes of
// a table, and drops a deleted or rewritten record's vectors.
func changeTriggers(table, kind, columns string) string {
	return fmt.Sprintf(`
CREATE TRIGGER IF NOT EXISTS changes_%[1]s_insert AFTER INSERT ON %[1]s
BEGIN INSERT INTO changes(kind, ref) VALUES ('%[2]s', NEW.id); END;
CREATE TRIGGER IF NOT EXISTS changes_%[1]s_update AFTER UPDATE OF %[3]s ON %[1]s
BEGIN INSERT INTO changes(kind, ref) VALUES ('%[2]s', NEW.id); END;
CREATE TRIGGER IF NOT EXISTS changes_%[1]s_delete AFTER DELETE ON %[1]s
BEGIN
	INSERT INTO changes(kind, ref) VALUES ('%[2]s', OLD.id);
	DELETE FROM embeddings WHERE kind = '%[2]s' AND ref = OLD.id;
END;
`, table, kind, columns)
}

// migrate runs migrateOnce, retrying while another process holds the
// database (several processes opening a new file at once race to set it up).
func (db *DB) migrate(ctx context.Context) error {
	backoff := 5 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := db.migrateOnce(ctx)
		if err == nil || !isBusy(errorsUnwrapAll(err)) || attempt >= 4*db.retries {
			return dbError(err, "preparing "+db.path)
		}
		time.Sleep(backoff + time.Duration(rand.Int64N(int64(backoff))))
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

// migrateOnce checks the file is a cairn database no newer than this build, then
// applies the pending migrations, each in its own transaction. It reads
// before it writes anything, so a refused file is left as it was.
func (db *DB) migrateOnce(ctx context.Context) error {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		if c := sqliteCode(err) & 0xff; c == sqlite3.SQLITE_NOTADB || c == sqlite3.SQLITE_CORRUPT {
			return notADatabase(err, db.path)
		}
		return dbError(err, "opening database "+db.path)
	}
	defer conn.Close()
	var version, appID, objects int
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return notADatabase(err, db.path)
	}
	if err := conn.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return notADatabase(err, db.path)
	}
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&objects); err != nil {
		return notADatabase(err, db.path)
	}
	switch {
	case appID != 0 && appID != applicationID, appID == 0 && objects > 0:
		return memory.Errorf(memory.CodeDBError, "%s is a SQLite database but not a cairn database; refusing to touch it", db.path)
	case version > SchemaVersion():
		return memory.Errorf(memory.CodeDBError,
			"%s has schema version %d, newer than this cairn understands (%d); upgrade cairn to open it (the file was not changed)",
			db.path, version, SchemaVersion())
	}
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return dbError(err, "reading the journal mode of "+db.path)
	}
	if !strings.EqualFold(mode, "wal") {
		if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
			return err // retried by open when busy
		}
	}
	for _, m := range migrations {
		if m.version <= version {
			continue
		}
		if err := applyMigration(ctx, conn, m); err != nil {
			return err
		}
	}
	return nil
}

func applyMigration(ctx context.Context, conn *sql.Conn, m migration) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return dbError(err, fmt.Sprintf("migration %d", m.version))
	}
	defer tx.Rollback()
	// Another process may have migrated while this one waited for the lock.
	var current int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return dbError(err, fmt.Sprintf("migration %d", m.version))
	}
	if current >= m.version {
		return nil
	}
	for _, c := range m.columns {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM pragma_table_xinfo(?) WHERE name = ?", c.table, c.name).Scan(&n); err != nil {
			return dbError(err, fmt.Sprintf("migration %d", m.version))
		}
		if n > 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, "ALTER TABLE "+c.table+" ADD COLUMN "+c.name+" "+c.decl); err != nil {
			return dbError(err, fmt.Sprintf("migration %d (%s)", m.version, m.name))
		}
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return dbError(err, fmt.Sprintf("migration %d (%s)", m.version, m.name))
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id=%d; PRAGMA user_version=%d", applicationID, m.version)); err != nil {
		return dbError(err, fmt.Sprintf("migration %d", m.version))
	}
	if err := tx.Commit(); err != nil {
		return dbError(err, fmt.Sprintf("migration %d", m.version))
	}
	return nil
}

func notADatabase(err error, path string) error {
	return memory.Wrap(memory.CodeDBError, err, "%s is not a SQLite database, so not a cairn database; refusing to touch it (give --db a cairn database, or a path that does not exist yet)", path)
}
