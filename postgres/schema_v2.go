package postgres

import "github.com/cairnhq/cairn/memory"

// schemaV2 stages knowledge-graph candidates for moderation (the tables
// keep the specification's names), keeps the keys moderators blocked,
// records when thoughts were marked for removal and where they were
// exported, and keeps inner_voice's sessions, as the SQLite store's
// versions 7 and 9 do. At most one candidate per key waits for moderation
// (a unique index: servers staging the same key at once cannot both
// succeed). Marking a thought active again clears its removal record.
func schemaV2(vectorMode, int32) string { return textC(schemaV2Tables) + schemaV2Triggers }

// schemaV2Tables are version 2's tables.
const schemaV2Tables = `
CREATE TABLE kg_entity_candidates (
	seq               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id                text NOT NULL UNIQUE,
	name              text NOT NULL,
	name_key          text NOT NULL,
	entity_type       text NOT NULL,
	data              text NOT NULL DEFAULT '{}',
	confidence        double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
	source_thought_id text NOT NULL DEFAULT '',
	status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
	created_at        bigint NOT NULL,
	decided_at        bigint NOT NULL DEFAULT 0,
	promoted_id       text NOT NULL DEFAULT '',
	feedback          text NOT NULL DEFAULT '',` + scopeColumns + `
);
CREATE UNIQUE INDEX kg_entity_candidates_pending ON kg_entity_candidates(name_key) WHERE status = 'pending';
CREATE INDEX kg_entity_candidates_status ON kg_entity_candidates(status, confidence);
CREATE INDEX kg_entity_candidates_source ON kg_entity_candidates(source_thought_id);

CREATE TABLE kg_edge_candidates (
	seq               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id                text NOT NULL UNIQUE,
	source_name       text NOT NULL,
	target_name       text NOT NULL,
	rel_type          text NOT NULL,
	edge_key          text NOT NULL,
	data              text NOT NULL DEFAULT '{}',
	confidence        double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
	source_thought_id text NOT NULL DEFAULT '',
	status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
	created_at        bigint NOT NULL,
	decided_at        bigint NOT NULL DEFAULT 0,
	promoted_id       text NOT NULL DEFAULT '',
	feedback          text NOT NULL DEFAULT '',` + scopeColumns + `
);
CREATE UNIQUE INDEX kg_edge_candidates_pending ON kg_edge_candidates(edge_key) WHERE status = 'pending';
CREATE INDEX kg_edge_candidates_status ON kg_edge_candidates(status, confidence);
CREATE INDEX kg_edge_candidates_source ON kg_edge_candidates(source_thought_id);

CREATE TABLE kg_candidate_blocklist (
	kind         text NOT NULL CHECK (kind IN ('entity', 'edge')),
	key          text NOT NULL,
	candidate_id text NOT NULL DEFAULT '',
	created_at   bigint NOT NULL,
	PRIMARY KEY (kind, key)
);

CREATE TABLE thought_removals (
	thought_id     text PRIMARY KEY REFERENCES thoughts(id) ON DELETE CASCADE,
	marked_at      bigint NOT NULL DEFAULT 0,
	exported_at    bigint NOT NULL DEFAULT 0,
	archive        text NOT NULL DEFAULT '',
	archive_sha256 text NOT NULL DEFAULT ''
);

CREATE TABLE inner_voice_sessions (
	seq                     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id                      text NOT NULL UNIQUE,
	version                 integer NOT NULL,
	provider                text NOT NULL DEFAULT '',
	model                   text NOT NULL DEFAULT '',
	max_prompt_tokens       integer NOT NULL DEFAULT 0,
	topic                   text NOT NULL DEFAULT '',
	summary                 text NOT NULL DEFAULT '',
	summary_updated         bigint NOT NULL DEFAULT 0,
	summary_exchanges       integer NOT NULL DEFAULT 0,
	summary_savings         bigint NOT NULL DEFAULT 0,
	summary_coverage        double precision NOT NULL DEFAULT 0,
	summary_private         boolean NOT NULL DEFAULT false,
	summarized_through      integer NOT NULL DEFAULT 0,
	created_at              bigint NOT NULL,
	last_interaction        bigint NOT NULL,
	total_exchanges         integer NOT NULL DEFAULT 0,
	total_prompt_tokens     bigint NOT NULL DEFAULT 0,
	total_completion_tokens bigint NOT NULL DEFAULT 0,
	total_cost              double precision NOT NULL DEFAULT 0
);
CREATE INDEX inner_voice_sessions_recent ON inner_voice_sessions(last_interaction, created_at, id);

CREATE TABLE inner_voice_exchanges (
	id                text PRIMARY KEY,
	session_id        text NOT NULL REFERENCES inner_voice_sessions(id) ON DELETE CASCADE,
	seq               integer NOT NULL,
	ts                bigint NOT NULL,
	query             text NOT NULL,
	answer            text NOT NULL DEFAULT '',
	sources           text NOT NULL DEFAULT '[]',
	confidence        double precision NOT NULL DEFAULT 0,
	coverage_ratio    double precision NOT NULL DEFAULT 0,
	refused           boolean NOT NULL DEFAULT false,
	notes             text NOT NULL DEFAULT '',
	memories          text NOT NULL DEFAULT '[]',
	synthesizer       text NOT NULL DEFAULT '',
	model             text NOT NULL DEFAULT '',
	degraded          text NOT NULL DEFAULT '',
	prompt_tokens     bigint NOT NULL DEFAULT 0,
	completion_tokens bigint NOT NULL DEFAULT 0,
	latency_ms        bigint NOT NULL DEFAULT 0,
	cost              double precision NOT NULL DEFAULT 0,
	prompt_hash       text NOT NULL DEFAULT '',
	private           boolean NOT NULL DEFAULT false,
	redacted          boolean NOT NULL DEFAULT false,
	UNIQUE (session_id, seq)
);

CREATE TABLE inner_voice_refs (
	ref_id      text NOT NULL,
	exchange_id text NOT NULL REFERENCES inner_voice_exchanges(id) ON DELETE CASCADE,
	PRIMARY KEY (ref_id, exchange_id)
);
CREATE INDEX inner_voice_refs_exchange ON inner_voice_refs(exchange_id);
`

// schemaV2Triggers keep what follows a thought, an entity or a fact when
// it changes, whatever statement changes it:
//
//   - a thought marked active again loses its removal record;
//   - a forgotten thought takes its pending candidates with it, and no
//     candidate keeps quoting it (data.sentence goes); a deleted
//     (archived) one leaves its candidates, without the sentence;
//   - the inner_voice exchanges citing a record forgotten or deleted are
//     redacted, and a rolling summary made from one of them is dropped.
const schemaV2Triggers = `
CREATE FUNCTION thought_removals_cleared() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM {{s}}.thought_removals WHERE thought_id = NEW.id;
	RETURN NULL;
END $$;
CREATE TRIGGER thought_removals_cleared AFTER UPDATE OF status ON thoughts
	FOR EACH ROW WHEN (NEW.status = 'active') EXECUTE FUNCTION thought_removals_cleared();

-- json_remove_key removes a key from a JSON object kept as text, keeping
-- the other members' order and text (json, not jsonb, keeps both).
CREATE FUNCTION json_remove_key(doc text, k text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM json_each(doc::json) e WHERE e.key = k) THEN doc
		ELSE coalesce((SELECT '{' || string_agg(to_json(e.key)::text || ':' || e.value::text, ',' ORDER BY e.n) || '}'
			FROM json_each(doc::json) WITH ORDINALITY AS e(key, value, n) WHERE e.key <> k), '{}') END
$$;

CREATE FUNCTION kg_candidates_thought_gone() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	tid text;
BEGIN
	IF TG_OP = 'DELETE' THEN
		tid := OLD.id;
	ELSE
		tid := NEW.id;
		DELETE FROM {{s}}.kg_entity_candidates WHERE source_thought_id = tid AND status = 'pending';
		DELETE FROM {{s}}.kg_edge_candidates WHERE source_thought_id = tid AND status = 'pending';
	END IF;
	UPDATE {{s}}.kg_entity_candidates SET data = {{s}}.json_remove_key(data, 'sentence') WHERE source_thought_id = tid;
	UPDATE {{s}}.kg_edge_candidates SET data = {{s}}.json_remove_key(data, 'sentence') WHERE source_thought_id = tid;
	RETURN NULL;
END $$;
CREATE TRIGGER kg_candidates_thought_forgotten AFTER UPDATE OF redacted ON thoughts
	FOR EACH ROW WHEN (NEW.redacted AND NOT OLD.redacted) EXECUTE FUNCTION kg_candidates_thought_gone();
CREATE TRIGGER kg_candidates_thought_deleted AFTER DELETE ON thoughts
	FOR EACH ROW EXECUTE FUNCTION kg_candidates_thought_gone();

CREATE FUNCTION inner_voice_forget() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	ref text;
BEGIN
	IF TG_OP = 'DELETE' THEN
		ref := OLD.id;
	ELSE
		ref := NEW.id;
	END IF;
	UPDATE {{s}}.inner_voice_sessions SET summary = '', summary_updated = 0, summary_exchanges = 0, summary_savings = 0,
		summary_coverage = 0, summary_private = false, summarized_through = 0
	WHERE id IN (SELECT e.session_id FROM {{s}}.inner_voice_refs r JOIN {{s}}.inner_voice_exchanges e ON e.id = r.exchange_id
		JOIN {{s}}.inner_voice_sessions s ON s.id = e.session_id
		WHERE r.ref_id = ref AND e.seq <= s.summarized_through);
	UPDATE {{s}}.inner_voice_exchanges SET answer = '` + memory.RedactedContent + `', sources = '[]', notes = '', redacted = true
	WHERE id IN (SELECT exchange_id FROM {{s}}.inner_voice_refs WHERE ref_id = ref) AND NOT redacted;
	RETURN NULL;
END $$;
CREATE TRIGGER inner_voice_thought_forgotten AFTER UPDATE OF redacted ON thoughts
	FOR EACH ROW WHEN (NEW.redacted AND NOT OLD.redacted) EXECUTE FUNCTION inner_voice_forget();
CREATE TRIGGER inner_voice_thought_deleted AFTER DELETE ON thoughts
	FOR EACH ROW EXECUTE FUNCTION inner_voice_forget();
CREATE TRIGGER inner_voice_entity_deleted AFTER DELETE ON kg_entities
	FOR EACH ROW EXECUTE FUNCTION inner_voice_forget();
CREATE TRIGGER inner_voice_fact_deleted AFTER DELETE ON kg_observations
	FOR EACH ROW EXECUTE FUNCTION inner_voice_forget();
`
