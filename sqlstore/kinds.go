package sqlstore

import "github.com/cairnhq/cairn/memory"

// Kind says how to read one kind of searchable record: its table (alias
// x), the text it is searched and embedded by, its time, and what makes a
// row not searchable.
type Kind struct {
	Kind  memory.VectorKind
	Table string
	// Text is the SQL expression of the record's searchable text.
	Text string
	// TS is the SQL expression of its time.
	TS string
	// Live is an SQL condition a searchable row meets ("true" for
	// always).
	Live string
	// Body is the SQL expression of the record's own text when Text adds
	// context around it ("" otherwise).
	Body string
	// Scope is the SQL expressions of the record's session, repository,
	// agent and user ("": its session_id, repo_id, agent_id and user_id
	// columns).
	Scope string
	// Order is the SQL order an index load reads the records in ("": x.seq,
	// their insertion).
	Order string
}

// Kinds are the searchable kinds, in the order an index load reads them.
var Kinds = []Kind{
	{memory.VectorObservation, "observations", "x.content", "x.ts", "x.redacted = false", "", "", ""},
	{memory.VectorSummary, "summaries", "x.content", "x.created_at", "x.redacted = false", "", "", ""},
	{memory.VectorThought, "thoughts", "x.content", "x.created_at", "x.redacted = false", "", "", ""},
	{memory.VectorKGEntity, "kg_entities",
		"x.name || ' (' || x.type || ')' || CASE WHEN x.data = '{}' THEN '' ELSE ': ' || x.data END", "x.updated_at", "true", "", "", ""},
	{memory.VectorKGObservation, "kg_observations",
		"(SELECT name FROM kg_entities WHERE id = x.entity_id) || ': ' || x.content", "x.created_at", "true", "x.content", "", ""},
	{memory.VectorKGEdge, "kg_edges",
		"(SELECT name FROM kg_entities WHERE id = x.source) || ' ' || x.relation || ' ' || (SELECT name FROM kg_entities WHERE id = x.target)",
		"x.created_at", "true", "", "", ""},
	// A code entity's text is its symbol, its path and the head of its
	// code; the index splits its identifiers into words. Entities of one
	// repository are loaded together, so they lie together in a segment.
	{memory.VectorCodeEntity, "code_entities",
		"x.symbol || ' ' || x.path || ' ' || coalesce((SELECT substr(a.content, 1, " + codeTextChars + ") FROM code_artifacts a WHERE a.hash = x.artifact_hash), '')",
		"x.updated_at",
		"x.state IN ('PROPOSED', 'AUTHORITATIVE') AND EXISTS (SELECT 1 FROM code_artifacts a WHERE a.hash = x.artifact_hash AND a.redacted = false)",
		"", "CAST('' AS text), x.repo_id, CAST('' AS text), CAST('' AS text)", "x.repo_id, x.key"},
}

// codeTextChars is how much of a code entity's text the retrieval index
// reads: its head, where the declaration and the doc comment lie.
const codeTextChars = "2000"

// KindOf returns the spec of a searchable kind.
func KindOf(k memory.VectorKind) (Kind, bool) {
	for _, s := range Kinds {
		if s.Kind == k {
			return s, true
		}
	}
	return Kind{}, false
}

// TextSQL selects a live record's text by id (?1).
func (k Kind) TextSQL() string {
	return "SELECT " + k.Text + " FROM " + k.Table + " x WHERE x.id = ?1 AND " + k.Live
}

// pendingSQL lists live records without a vector in a space, by id:
// ?1 after, ?2 provider, ?3 model, ?4 dim, ?5 limit.
func (k Kind) pendingSQL(d *Dialect) string {
	return "SELECT x.id, " + k.Text + " FROM " + k.Table + " x " + d.VectorJoin(string(k.Kind), 2) + " WHERE " + k.Live +
		" AND x.id > ?1 AND e." + d.VectorColumn + " IS NULL ORDER BY x.id LIMIT ?5"
}

// recordSQL selects what an index needs of every live record, with its
// vector in a space (?1 provider, ?2 model, ?3 dim), in insertion order;
// with in, only of the records whose ids ?4 lists.
func (k Kind) recordSQL(d *Dialect, in bool) string {
	extra := "CAST('' AS text), CAST('[]' AS text), false, CAST('' AS text), CAST('' AS text), -1"
	join := ""
	switch k.Kind {
	case memory.VectorThought:
		extra = "x.origin, x.tags, x.is_private, x.status, CAST('' AS text), -1"
	case memory.VectorObservation:
		extra = "CAST('' AS text), CAST('[]' AS text), false, CAST('' AS text), coalesce(m.capsule_id, ''), coalesce(m.position, -1)"
		join = " " + d.MemberJoin
	}
	body := k.Body
	if body == "" {
		body = "CAST('' AS text)"
	}
	scope, order := k.Scope, k.Order
	if scope == "" {
		scope = "x.session_id, x.repo_id, x.agent_id, x.user_id"
	}
	if order == "" {
		order = "x.seq"
	}
	q := "SELECT x.id, " + k.Text + ", " + k.TS + ", " + scope + ", " + extra + ", " + body + ", e." +
		d.VectorColumn + "\n\t\tFROM " + k.Table + " x" + join + " " + d.VectorJoin(string(k.Kind), 1) + "\n\t\tWHERE " + k.Live
	if in {
		return q + " AND " + d.InList("x.id", 4)
	}
	return q + " ORDER BY " + order
}
