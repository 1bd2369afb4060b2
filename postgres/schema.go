package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/memory"
	"github.com/jackc/pgx/v5"
)

// migration is one numbered schema step. Steps only ever add: a released
// step is never edited, a new version appends a new step. Each runs in
// its own transaction under the schema's migration lock, so servers
// starting together apply it once.
type migration struct {
	version int
	name    string
	// sql builds the step's statements for the store's vector column type
	// and lock space; "{{s}}" in it stands for the schema's name.
	sql func(v vectorMode, space int32) string
}

// migrations are applied in order at open; meta's schema_version records
// the last one applied. Version 1 holds what the SQLite store's versions
// 1 to 6 hold, version 2 what its versions 7 and 9 add, version 3 what
// its version 10 adds, version 4 what its version 11 adds, version 5 what
// its version 13 adds.
var migrations = []migration{
	{1, "records, capsules, pins, thoughts, the knowledge graph, code memory, vectors, full-text columns and the change log", schemaV1},
	{2, "knowledge-graph candidates, their blocklist, the removal lifecycle of thoughts and inner_voice sessions", schemaV2},
	{3, "the ledger: what was done to every record, when, and which fields changed", schemaV3},
	{4, "inner_voice sessions: a scope each, and at most one current session per scope", schemaV4},
	{5, "code entities as documents of the retrieval index: an id each, and their writes in the change log", schemaV5},
}

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// vectorMode is how the embeddings table keeps vectors.
type vectorMode string

const (
	// vectorsPGVector keeps vectors in pgvector's vector type.
	vectorsPGVector vectorMode = "pgvector"
	// vectorsArray keeps them as real[] (no extension needed).
	vectorsArray vectorMode = "array"
)

// columnType is the SQL type of the vector column.
func (v vectorMode) columnType() string {
	if v == vectorsPGVector {
		return "vector"
	}
	return "real[]"
}

// dims is the SQL expression of a stored vector's dimension.
func (v vectorMode) dims(col string) string {
	if v == vectorsPGVector {
		return "vector_dims(" + col + ")"
	}
	return "cardinality(" + col + ")"
}

const scopeColumns = `
	session_id text NOT NULL DEFAULT '',
	repo_id    text NOT NULL DEFAULT '',
	agent_id   text NOT NULL DEFAULT '',
	user_id    text NOT NULL DEFAULT ''`

// ftsShards is how many rows per table fts_stats spreads its counters
// over, so concurrent writers rarely wait on one row.
const ftsShards = 16

func schemaV1(v vectorMode, space int32) string {
	tables := strings.NewReplacer("{{vec_type}}", v.columnType(), "{{vec_dims}}", v.dims("vec")).Replace(schemaV1Tables)
	return textC(tables) + strings.ReplaceAll(changeLogSQL, "{{space}}", strconv.Itoa(int(space))) + ftsStatsSQL + bm25SQL + vectorTriggersSQL
}

// bm25SQL is FTS5's bm25 of a row for a query whose phrases are single
// terms (exact or prefix), given each term's idf and the table's average
// row length: the same operations in the same order as fts5_aux.c, so the
// same double. A term counts every position it holds in the row.
const bm25SQL = `
CREATE FUNCTION bm25(doc tsvector, len integer, terms text[], prefix boolean[], idf float8[], avgdl float8) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT -coalesce(sum((q.idf * (t.tf * (1.2::float8 + 1.0::float8))) / (t.tf + 1.2::float8 * ((1.0::float8 - 0.75::float8) + (0.75::float8 * len) / avgdl)) ORDER BY q.i), 0)
	FROM unnest(terms, prefix, idf) WITH ORDINALITY AS q(term, pre, idf, i)
	CROSS JOIN LATERAL (SELECT coalesce(sum(cardinality(u.positions)), 0)::float8 AS tf FROM unnest(doc) u
		WHERE u.lexeme = q.term OR (q.pre AND starts_with(u.lexeme, q.term))) t
$$;
`

// textC gives every text column of a table definition the "C" collation:
// ids, names and keys sort by their bytes, as SQLite sorts them, whatever
// the database's locale.
func textC(ddl string) string {
	ddl = strings.ReplaceAll(ddl, " text ", ` text COLLATE "C" `)
	return strings.ReplaceAll(ddl, " text,", ` text COLLATE "C",`)
}

// schemaV1Tables are version 1's tables; {{vec_type}} and {{vec_dims}}
// stand for the vector column's type and its dimension's expression.
const schemaV1Tables = `
CREATE TABLE meta (
	key   text PRIMARY KEY,
	value text NOT NULL
);

-- fts (the record's terms with their positions, as FTS5 'porter
-- unicode61' would index them) and fts_len (its number of tokens) are
-- computed by cairn; both are NULL/0 for a forgotten row, which no search
-- reaches. fts_stats keeps bm25's statistics exact (see below).
CREATE TABLE observations (
	seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id         text NOT NULL UNIQUE,
	kind       text NOT NULL,
	content    text NOT NULL,
	provenance text NOT NULL DEFAULT '{}',
	ts         bigint NOT NULL,
	redacted   boolean NOT NULL DEFAULT false,` + scopeColumns + `,
	fts        tsvector,
	fts_len    integer NOT NULL DEFAULT 0
);
CREATE INDEX observations_session ON observations(session_id) WHERE session_id <> '';
CREATE INDEX observations_repo ON observations(repo_id) WHERE repo_id <> '';
CREATE INDEX observations_agent ON observations(agent_id) WHERE agent_id <> '';
CREATE INDEX observations_user ON observations(user_id) WHERE user_id <> '';
CREATE INDEX observations_fts ON observations USING gin (fts);

CREATE TABLE capsules (
	seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id        text NOT NULL UNIQUE,
	type      text NOT NULL,
	intent    text NOT NULL DEFAULT '',
	status    text NOT NULL CHECK (status IN ('open', 'closed')),
	opened_at bigint NOT NULL,
	closed_at bigint,` + scopeColumns + `,
	CHECK ((status = 'open') = (closed_at IS NULL))
);
-- One open capsule per session, whatever the number of servers writing.
CREATE UNIQUE INDEX capsules_one_open_per_session
	ON capsules(session_id) WHERE status = 'open' AND session_id <> '';

CREATE TABLE capsule_observations (
	capsule_id     text NOT NULL REFERENCES capsules(id),
	position       integer NOT NULL,
	observation_id text NOT NULL REFERENCES observations(id),
	PRIMARY KEY (capsule_id, position)
);
CREATE INDEX capsule_observations_observation ON capsule_observations(observation_id);

CREATE TABLE summaries (
	seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id            text NOT NULL UNIQUE,
	capsule_id    text NOT NULL UNIQUE REFERENCES capsules(id),
	content       text NOT NULL,
	confidence    double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
	created_at    bigint NOT NULL,
	evidence_refs text NOT NULL DEFAULT '[]',
	redacted      boolean NOT NULL DEFAULT false,` + scopeColumns + `,
	fts           tsvector,
	fts_len       integer NOT NULL DEFAULT 0
);
CREATE INDEX summaries_fts ON summaries USING gin (fts);

CREATE TABLE pins (
	seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id          text NOT NULL UNIQUE,
	target_type text NOT NULL CHECK (target_type IN ('observation', 'summary')),
	target_id   text NOT NULL,
	reason      text NOT NULL DEFAULT '',
	created_at  bigint NOT NULL,
	expires_at  bigint,` + scopeColumns + `
);
CREATE INDEX pins_expires ON pins(expires_at);
CREATE INDEX pins_target ON pins(target_id);

CREATE TABLE thoughts (
	seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id           text NOT NULL UNIQUE,
	content      text NOT NULL,
	origin       text NOT NULL CHECK (origin IN ('human', 'tool', 'model', 'logged')),
	tags         text NOT NULL DEFAULT '[]',
	is_private   boolean NOT NULL DEFAULT false,
	status       text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'removal')),
	significance double precision NOT NULL DEFAULT 0.5 CHECK (significance >= 0 AND significance <= 1),
	is_summary   boolean NOT NULL DEFAULT false,
	summary_of   text NOT NULL DEFAULT '[]',
	pipeline     text NOT NULL DEFAULT '',
	created_at   bigint NOT NULL,
	redacted     boolean NOT NULL DEFAULT false,` + scopeColumns + `
);
CREATE INDEX thoughts_status ON thoughts(status);

CREATE TABLE kg_entities (
	seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id         text NOT NULL UNIQUE,
	name       text NOT NULL,
	name_key   text NOT NULL,
	type       text NOT NULL,
	data       text NOT NULL DEFAULT '{}',
	created_at bigint NOT NULL,
	updated_at bigint NOT NULL,` + scopeColumns + `
);
CREATE INDEX kg_entities_name ON kg_entities(name_key);

CREATE TABLE kg_observations (
	seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id         text NOT NULL UNIQUE,
	entity_id  text NOT NULL REFERENCES kg_entities(id) ON DELETE CASCADE,
	content    text NOT NULL,
	created_at bigint NOT NULL,` + scopeColumns + `
);
CREATE INDEX kg_observations_entity ON kg_observations(entity_id);

CREATE TABLE kg_edges (
	seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id         text NOT NULL UNIQUE,
	source     text NOT NULL REFERENCES kg_entities(id) ON DELETE CASCADE,
	target     text NOT NULL REFERENCES kg_entities(id) ON DELETE CASCADE,
	relation   text NOT NULL,
	data       text NOT NULL DEFAULT '{}',
	created_at bigint NOT NULL,` + scopeColumns + `
);
CREATE INDEX kg_edges_source ON kg_edges(source);
CREATE INDEX kg_edges_target ON kg_edges(target);

CREATE TABLE code_repos (
	id         text PRIMARY KEY,
	root       text NOT NULL,
	indexed_at bigint NOT NULL DEFAULT 0
);

CREATE TABLE code_files (
	repo_id   text NOT NULL,
	path      text NOT NULL,
	size      bigint NOT NULL DEFAULT 0,
	mod_time  bigint NOT NULL DEFAULT 0,
	file_hash text NOT NULL DEFAULT '',
	language  text NOT NULL DEFAULT '',
	method    text NOT NULL DEFAULT '',
	reason    text NOT NULL DEFAULT '',
	entities  integer NOT NULL DEFAULT 0,
	PRIMARY KEY (repo_id, path)
);

CREATE TABLE code_entities (
	repo_id       text NOT NULL,
	key           text NOT NULL,
	path          text NOT NULL DEFAULT '',
	symbol        text NOT NULL DEFAULT '',
	kind          text NOT NULL DEFAULT '',
	language      text NOT NULL DEFAULT '',
	start_line    integer NOT NULL DEFAULT 0,
	end_line      integer NOT NULL DEFAULT 0,
	method        text NOT NULL DEFAULT '',
	state         text NOT NULL CHECK (state IN ('PROPOSED', 'AUTHORITATIVE', 'SUPERSEDED', 'TOMBSTONED')),
	artifact_hash text NOT NULL DEFAULT '',
	updated_at    bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (repo_id, key)
);
CREATE INDEX code_entities_key ON code_entities(key);
CREATE INDEX code_entities_path ON code_entities(repo_id, path);

CREATE TABLE code_artifacts (
	hash       text PRIMARY KEY,
	type       text NOT NULL CHECK (type IN ('code', 'diff', 'decision', 'user_paste')),
	content    text NOT NULL,
	created_at bigint NOT NULL DEFAULT 0,
	redacted   boolean NOT NULL DEFAULT false
);

CREATE TABLE code_ledger (
	seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	repo_id       text NOT NULL,
	key           text NOT NULL,
	from_state    text NOT NULL DEFAULT '',
	to_state      text NOT NULL CHECK (to_state IN ('PROPOSED', 'AUTHORITATIVE', 'SUPERSEDED', 'TOMBSTONED')),
	artifact_hash text NOT NULL DEFAULT '',
	episode_id    text NOT NULL DEFAULT '',
	reason        text NOT NULL DEFAULT '',
	at            bigint NOT NULL DEFAULT 0
);
CREATE INDEX code_ledger_entity ON code_ledger(repo_id, key, seq);

CREATE TABLE code_episodes (
	id              text PRIMARY KEY,
	session_id      text NOT NULL,
	repo_id         text NOT NULL DEFAULT '',
	seq             bigint NOT NULL CHECK (seq > 0),
	query           text NOT NULL DEFAULT '',
	budget_tokens   integer NOT NULL DEFAULT 0,
	budget_entities integer NOT NULL DEFAULT 0,
	total_tokens    integer NOT NULL DEFAULT 0,
	rows            integer NOT NULL DEFAULT 0,
	digest          text NOT NULL DEFAULT '',
	created_at      bigint NOT NULL DEFAULT 0,
	updated_at      bigint NOT NULL DEFAULT 0,
	UNIQUE (session_id, seq)
);

CREATE TABLE code_hydration (
	episode_id    text NOT NULL REFERENCES code_episodes(id),
	seq           integer NOT NULL,
	session_id    text NOT NULL,
	repo_id       text NOT NULL DEFAULT '',
	key           text NOT NULL DEFAULT '',
	artifact_hash text NOT NULL DEFAULT '',
	reason        text NOT NULL DEFAULT '',
	method        text NOT NULL DEFAULT '',
	triggered_by  text NOT NULL DEFAULT '',
	token_count   integer NOT NULL DEFAULT 0,
	hydrated_at   bigint NOT NULL DEFAULT 0,
	checksum      text NOT NULL DEFAULT '',
	PRIMARY KEY (episode_id, seq)
);
CREATE INDEX code_hydration_session ON code_hydration(session_id);
CREATE INDEX code_hydration_entity ON code_hydration(repo_id, key);

CREATE TABLE code_gates (
	episode_id    text NOT NULL REFERENCES code_episodes(id),
	ordinal       integer NOT NULL,
	repo_id       text NOT NULL DEFAULT '',
	key           text NOT NULL DEFAULT '',
	artifact_hash text NOT NULL DEFAULT '',
	a_ok          boolean NOT NULL,
	a_reason      text NOT NULL DEFAULT '',
	a_method      text NOT NULL DEFAULT '',
	b_ok          boolean NOT NULL,
	b_reason      text NOT NULL DEFAULT '',
	c_ok          boolean NOT NULL,
	c_reason      text NOT NULL DEFAULT '',
	disk_exists   boolean NOT NULL,
	is_stale      boolean NOT NULL,
	decision      text NOT NULL DEFAULT '',
	at            bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (episode_id, ordinal)
);

-- Vectors, one per record and space (provider, model, dimension).
CREATE TABLE embeddings (
	kind       text NOT NULL,
	ref        text NOT NULL,
	provider   text NOT NULL,
	model      text NOT NULL,
	dim        integer NOT NULL CHECK (dim > 0),
	vec        {{vec_type}} NOT NULL CHECK ({{vec_dims}} = dim),
	created_at bigint NOT NULL DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
	PRIMARY KEY (provider, model, dim, kind, ref)
);
CREATE INDEX embeddings_ref ON embeddings(kind, ref);
`

// changeLogSQL keeps the change log that every server's retrieval index
// follows. Triggers log every change to a searchable record, so no write
// path can skip it. They are deferred constraint triggers: they run when
// the writing transaction commits, and the first takes the schema's
// change-log lock, so sequence numbers are handed out in commit order and
// held until the commit is visible. A reader that has seen change n has
// therefore seen every change before n: a process that caught up to n
// never misses a write committed later with a smaller number (which plain
// sequences allow when transactions commit out of order).
var changeLogSQL = `
CREATE SEQUENCE changes_seq;
CREATE TABLE changes (
	seq  bigint PRIMARY KEY,
	kind text NOT NULL,
	ref  text NOT NULL
);

CREATE FUNCTION changes_log_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_advisory_xact_lock({{space}}, 2);
	IF TG_OP = 'DELETE' THEN
		INSERT INTO {{s}}.changes(seq, kind, ref) VALUES (nextval('{{s}}.changes_seq'), TG_ARGV[0], OLD.id);
	ELSE
		INSERT INTO {{s}}.changes(seq, kind, ref) VALUES (nextval('{{s}}.changes_seq'), TG_ARGV[0], NEW.id);
	END IF;
	RETURN NULL;
END $$;

CREATE FUNCTION changes_log_member() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_advisory_xact_lock({{space}}, 2);
	INSERT INTO {{s}}.changes(seq, kind, ref) VALUES (nextval('{{s}}.changes_seq'), 'observation', NEW.observation_id);
	RETURN NULL;
END $$;

CREATE FUNCTION changes_log_embedding() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_advisory_xact_lock({{space}}, 2);
	INSERT INTO {{s}}.changes(seq, kind, ref) VALUES (nextval('{{s}}.changes_seq'), NEW.kind, NEW.ref);
	RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER changes_observation_insert AFTER INSERT ON observations
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_id('observation');
CREATE CONSTRAINT TRIGGER changes_observation_update AFTER UPDATE OF content, redacted ON observations
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_id('observation');
CREATE CONSTRAINT TRIGGER changes_membership_insert AFTER INSERT ON capsule_observations
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_member();
CREATE CONSTRAINT TRIGGER changes_summary_insert AFTER INSERT ON summaries
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_id('summary');
CREATE CONSTRAINT TRIGGER changes_summary_update AFTER UPDATE OF content, created_at ON summaries
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_id('summary');
CREATE CONSTRAINT TRIGGER changes_embedding_insert AFTER INSERT ON embeddings
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_embedding();
CREATE CONSTRAINT TRIGGER changes_embedding_update AFTER UPDATE ON embeddings
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_embedding();
` + changeTriggers("thoughts", "thought", "content, status, is_private, tags") +
	changeTriggers("kg_entities", "kg_entity", "name, type, data") +
	changeTriggers("kg_observations", "kg_observation", "content") +
	changeTriggers("kg_edges", "kg_edge", "relation, data")

// changeTriggers logs inserts, updates of the listed columns and deletes
// of a table.
func changeTriggers(table, kind, columns string) string {
	return fmt.Sprintf(`
CREATE CONSTRAINT TRIGGER changes_%[1]s_insert AFTER INSERT ON %[1]s
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_id('%[2]s');
CREATE CONSTRAINT TRIGGER changes_%[1]s_update AFTER UPDATE OF %[3]s ON %[1]s
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_id('%[2]s');
CREATE CONSTRAINT TRIGGER changes_%[1]s_delete AFTER DELETE ON %[1]s
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_log_id('%[2]s');
`, table, kind, columns)
}

// ftsStatsSQL keeps bm25's corpus statistics per full-text table: how
// many rows are indexed and how many tokens they hold in all, as FTS5
// keeps them. Statement triggers add each statement's change to one of
// ftsShards rows (chosen by the server process), so concurrent writers
// seldom wait on each other; a search sums the rows.
var ftsStatsSQL = `
CREATE TABLE fts_stats (
	tbl    text NOT NULL,
	shard  integer NOT NULL,
	docs   bigint NOT NULL DEFAULT 0,
	tokens bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (tbl, shard)
);
INSERT INTO fts_stats(tbl, shard) SELECT t, s FROM unnest(ARRAY['observations', 'summaries']) t, generate_series(0, ` + strconv.Itoa(ftsShards-1) + `) s;

CREATE FUNCTION fts_stats_add(t text, d bigint, n bigint) RETURNS void LANGUAGE sql AS $$
	UPDATE {{s}}.fts_stats SET docs = docs + d, tokens = tokens + n
	WHERE tbl = t AND shard = pg_backend_pid() % ` + strconv.Itoa(ftsShards) + ` AND (d <> 0 OR n <> 0)
$$;

CREATE FUNCTION fts_stats_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM {{s}}.fts_stats_add(TG_TABLE_NAME, count(*), coalesce(sum(fts_len), 0)) FROM new_rows WHERE fts IS NOT NULL;
	RETURN NULL;
END $$;

CREATE FUNCTION fts_stats_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM {{s}}.fts_stats_add(TG_TABLE_NAME, -count(*), -coalesce(sum(fts_len), 0)) FROM old_rows WHERE fts IS NOT NULL;
	RETURN NULL;
END $$;

CREATE FUNCTION fts_stats_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	d bigint;
	n bigint;
BEGIN
	SELECT count(*), coalesce(sum(fts_len), 0) INTO d, n FROM new_rows WHERE fts IS NOT NULL;
	SELECT d - count(*), n - coalesce(sum(fts_len), 0) INTO d, n FROM old_rows WHERE fts IS NOT NULL;
	PERFORM {{s}}.fts_stats_add(TG_TABLE_NAME, d, n);
	RETURN NULL;
END $$;
` + ftsStatsTriggers("observations") + ftsStatsTriggers("summaries")

func ftsStatsTriggers(table string) string {
	return fmt.Sprintf(`
CREATE TRIGGER %[1]s_fts_stats_insert AFTER INSERT ON %[1]s REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION fts_stats_insert();
CREATE TRIGGER %[1]s_fts_stats_update AFTER UPDATE ON %[1]s REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION fts_stats_update();
CREATE TRIGGER %[1]s_fts_stats_delete AFTER DELETE ON %[1]s REFERENCING OLD TABLE AS old_rows
	FOR EACH STATEMENT EXECUTE FUNCTION fts_stats_delete();
`, table)
}

// vectorTriggersSQL drops a record's vectors when it is forgotten,
// rewritten or deleted: a vector is of its record's current text.
const vectorTriggersSQL = `
CREATE FUNCTION embeddings_drop() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'DELETE' THEN
		DELETE FROM {{s}}.embeddings WHERE kind = TG_ARGV[0] AND ref = OLD.id;
	ELSE
		DELETE FROM {{s}}.embeddings WHERE kind = TG_ARGV[0] AND ref = NEW.id;
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER embeddings_observation_forgotten AFTER UPDATE OF redacted ON observations
	FOR EACH ROW WHEN (NEW.redacted) EXECUTE FUNCTION embeddings_drop('observation');
CREATE TRIGGER embeddings_summary_rewritten AFTER UPDATE OF content ON summaries
	FOR EACH ROW EXECUTE FUNCTION embeddings_drop('summary');
CREATE TRIGGER embeddings_summary_forgotten AFTER UPDATE OF redacted ON summaries
	FOR EACH ROW WHEN (NEW.redacted) EXECUTE FUNCTION embeddings_drop('summary');
CREATE TRIGGER embeddings_thought_forgotten AFTER UPDATE OF redacted ON thoughts
	FOR EACH ROW WHEN (NEW.redacted) EXECUTE FUNCTION embeddings_drop('thought');
CREATE TRIGGER embeddings_thought_deleted AFTER DELETE ON thoughts
	FOR EACH ROW EXECUTE FUNCTION embeddings_drop('thought');
CREATE TRIGGER embeddings_kg_entity_deleted AFTER DELETE ON kg_entities
	FOR EACH ROW EXECUTE FUNCTION embeddings_drop('kg_entity');
CREATE TRIGGER embeddings_kg_observation_deleted AFTER DELETE ON kg_observations
	FOR EACH ROW EXECUTE FUNCTION embeddings_drop('kg_observation');
CREATE TRIGGER embeddings_kg_edge_deleted AFTER DELETE ON kg_edges
	FOR EACH ROW EXECUTE FUNCTION embeddings_drop('kg_edge');
`

// Lock purposes, the second key of the schema's advisory locks (the first
// is the schema's lock space, a hash of its name).
const (
	lockMigrate   = 1
	lockChangeLog = 2
)

// migrate brings the schema up to date under the migration lock. It reads
// before it writes anything, so a database from a newer cairn is left as
// it was. It returns the vector mode the schema uses.
func (db *DB) migrate(ctx context.Context, conn *pgx.Conn, want string) (vectorMode, error) {
	space := lockSpace(db.schema)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, $2)", space, lockMigrate); err != nil {
		return "", dbError(err, "waiting for the migration lock")
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1, $2)", space, lockMigrate)

	version, mode, err := readMeta(ctx, conn, db.schema)
	if err != nil {
		return "", err
	}
	if version > SchemaVersion() {
		return "", memory.Errorf(memory.CodeDBError,
			"schema %q of %s has version %d, newer than this cairn understands (%d); upgrade cairn to open it (the database was not changed)",
			db.schema, db.display, version, SchemaVersion())
	}
	if version == 0 {
		mode, err = db.chooseVectors(ctx, conn, want)
		if err != nil {
			return "", err
		}
	} else if err := checkVectorMode(mode, want, db.schema); err != nil {
		return "", err
	}
	for _, m := range migrations {
		if m.version <= version {
			continue
		}
		if err := db.applyMigration(ctx, conn, m, mode, space); err != nil {
			return "", err
		}
	}
	return mode, nil
}

// lockSpace is the schema's advisory lock space (the first key of its
// locks), so stores in different schemas of one database do not share
// locks.
func lockSpace(schema string) int32 {
	h := uint32(2166136261)
	for i := 0; i < len(schema); i++ {
		h ^= uint32(schema[i])
		h *= 16777619
	}
	return int32(h)
}

// readMeta reads the schema version (0 when the schema has no cairn
// tables yet) and the vector mode.
func readMeta(ctx context.Context, conn *pgx.Conn, schema string) (int, vectorMode, error) {
	var exists bool
	err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'meta')`, schema).Scan(&exists)
	if err != nil {
		return 0, "", dbError(err, "reading the schema version")
	}
	if !exists {
		var tables int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = $1`, schema).Scan(&tables); err != nil {
			return 0, "", dbError(err, "reading the schema version")
		}
		if tables > 0 {
			return 0, "", memory.Errorf(memory.CodeDBError,
				"schema %q of %s holds tables but is not a cairn schema; refusing to touch it (name another with cairn_schema=...)", schema, "the database")
		}
		return 0, "", nil
	}
	rows, err := conn.Query(ctx, `SELECT key, value FROM `+schema+`.meta`)
	if err != nil {
		return 0, "", dbError(err, "reading the schema version")
	}
	meta, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var kv [2]string
		err := r.Scan(&kv[0], &kv[1])
		return kv, err
	})
	if err != nil {
		return 0, "", dbError(err, "reading the schema version")
	}
	var version int
	var mode vectorMode
	for _, kv := range meta {
		switch kv[0] {
		case "schema_version":
			version, _ = strconv.Atoi(kv[1])
		case "vectors":
			mode = vectorMode(kv[1])
		}
	}
	if version == 0 {
		return 0, "", memory.Errorf(memory.CodeDBError, "schema %q holds a cairn meta table without a schema version; refusing to touch it", schema)
	}
	return version, mode, nil
}

// chooseVectors picks the vector column type of a new schema: pgvector
// when the extension is (or can be) installed, unless want says
// otherwise.
func (db *DB) chooseVectors(ctx context.Context, conn *pgx.Conn, want string) (vectorMode, error) {
	if want == string(vectorsArray) {
		return vectorsArray, nil
	}
	ok, err := ensurePGVector(ctx, conn)
	if err != nil {
		return "", err
	}
	switch {
	case ok:
		return vectorsPGVector, nil
	case want == string(vectorsPGVector):
		return "", memory.Errorf(memory.CodeDBError,
			"cairn_vectors=pgvector, but the vector extension is neither installed nor installable by this role (CREATE EXTENSION vector as a superuser, or drop the setting to store vectors as arrays)")
	}
	return vectorsArray, nil
}

// ensurePGVector reports whether the vector extension is installed,
// installing it when it is available and the role may.
func ensurePGVector(ctx context.Context, conn *pgx.Conn) (bool, error) {
	var installed, available bool
	err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector'),
		EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')`).Scan(&installed, &available)
	if err != nil {
		return false, dbError(err, "looking for the vector extension")
	}
	if installed {
		return true, nil
	}
	if !available {
		return false, nil
	}
	// Install it where every schema finds it. Another server may do the
	// same at the same moment: the savepoint keeps a lost race harmless.
	tx, err := conn.Begin(ctx)
	if err != nil {
		return false, dbError(err, "installing the vector extension")
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector SCHEMA public"); err != nil {
		return false, nil // no privilege, or no public schema: arrays
	}
	if err := tx.Commit(ctx); err != nil {
		var again bool
		if qerr := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')`).Scan(&again); qerr == nil && again {
			return true, nil
		}
		return false, nil
	}
	return true, nil
}

func checkVectorMode(mode vectorMode, want, schema string) error {
	if want == "" || want == "auto" || want == string(mode) {
		return nil
	}
	return memory.Errorf(memory.CodeInvalidParams,
		"cairn_vectors=%s, but schema %q keeps its vectors as %s (chosen when it was created); drop the setting, or migrate into a new schema", want, schema, mode)
}

func (db *DB) applyMigration(ctx context.Context, conn *pgx.Conn, m migration, mode vectorMode, space int32) error {
	what := fmt.Sprintf("migration %d (%s)", m.version, m.name)
	tx, err := conn.Begin(ctx)
	if err != nil {
		return dbError(err, what)
	}
	defer tx.Rollback(ctx)
	if m.version == 1 {
		if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+db.schema); err != nil {
			return dbError(err, what)
		}
	}
	// The statements run with the store's schema first on the search path.
	if _, err := tx.Exec(ctx, "SELECT set_config('search_path', $1, true)", db.searchPath); err != nil {
		return dbError(err, what)
	}
	if _, err := tx.Exec(ctx, strings.ReplaceAll(m.sql(mode, space), "{{s}}", db.schema)); err != nil {
		return dbError(err, what)
	}
	if m.version == 1 {
		if _, err := tx.Exec(ctx, `INSERT INTO meta(key, value) VALUES ('vectors', $1), ('database_id', $2)`,
			string(mode), newDatabaseID()); err != nil {
			return dbError(err, what)
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO meta(key, value) VALUES ('schema_version', $1)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.Itoa(m.version)); err != nil {
		return dbError(err, what)
	}
	if err := tx.Commit(ctx); err != nil {
		return dbError(err, what)
	}
	return nil
}
