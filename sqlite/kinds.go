package sqlite

import "github.com/cairnhq/cairn/memory"

// kindSpec says how to read one kind of searchable record: its table, the
// text it is searched and embedded by, its time, and what makes a row not
// searchable.
type kindSpec struct {
	kind  memory.VectorKind
	table string
	alias string
	// text is the SQL expression of the record's searchable text.
	text string
	// ts is the SQL expression of its time.
	ts string
	// live is a SQL condition a searchable row meets ("1" for always).
	live string
	// body is the SQL expression of the record's own text when text adds
	// context around it ("" otherwise).
	body string
}

var kindSpecs = []kindSpec{
	{memory.VectorObservation, "observations", "x", "x.content", "x.ts", "x.redacted = 0", ""},
	{memory.VectorSummary, "summaries", "x", "x.content", "x.created_at", "x.redacted = 0", ""},
	{memory.VectorThought, "thoughts", "x", "x.content", "x.created_at", "x.redacted = 0", ""},
	{memory.VectorKGEntity, "kg_entities", "x",
		"x.name || ' (' || x.type || ')' || CASE WHEN x.data = '{}' THEN '' ELSE ': ' || x.data END", "x.updated_at", "1", ""},
	{memory.VectorKGObservation, "kg_observations", "x",
		"(SELECT name FROM kg_entities WHERE id = x.entity_id) || ': ' || x.content", "x.created_at", "1", "x.content"},
	{memory.VectorKGEdge, "kg_edges", "x",
		"(SELECT name FROM kg_entities WHERE id = x.source) || ' ' || x.relation || ' ' || (SELECT name FROM kg_entities WHERE id = x.target)",
		"x.created_at", "1", ""},
}

func specOf(k memory.VectorKind) (kindSpec, bool) {
	for _, s := range kindSpecs {
		if s.kind == k {
			return s, true
		}
	}
	return kindSpec{}, false
}

// textSQL selects a live record's text by id.
func (s kindSpec) textSQL() string {
	return "SELECT " + s.text + " FROM " + s.table + " x WHERE x.id = ? AND " + s.live
}

// pendingSQL lists live records without a vector in a space, by id.
func (s kindSpec) pendingSQL() string {
	return "SELECT x.id, " + s.text + " FROM " + s.table + " x WHERE " + s.live + ` AND x.id > ?
		AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.provider = ? AND e.model = ? AND e.dim = ? AND e.kind = '` + string(s.kind) + `' AND e.ref = x.id)
		ORDER BY x.id LIMIT ?`
}

// indexSQL selects, for every live record (or the one named, with byID),
// what an index needs, with its vector in a space.
func (s kindSpec) indexSQL(byID bool) string {
	extra := "'', '', 0, '', '', -1"
	join := ""
	switch s.kind {
	case memory.VectorThought:
		extra = "x.origin, x.tags, x.is_private, x.status, '', -1"
	case memory.VectorObservation:
		extra = "'', '[]', 0, '', coalesce(m.capsule_id, ''), coalesce(m.position, -1)"
		join = " LEFT JOIN capsule_observations m ON m.observation_id = x.id"
	}
	body := s.body
	if body == "" {
		body = "''"
	}
	q := "SELECT x.id, " + s.text + ", " + s.ts + ", x.session_id, x.repo_id, x.agent_id, x.user_id, " + extra + ", " + body + `, e.vector
		FROM ` + s.table + " x" + join + ` LEFT JOIN embeddings e ON e.provider = ? AND e.model = ? AND e.dim = ? AND e.kind = '` + string(s.kind) + `' AND e.ref = x.id
		WHERE ` + s.live
	if byID {
		return q + " AND x.id = ?"
	}
	return q + " ORDER BY x.seq"
}

// indexSQLIn is indexSQL for the records whose ids a JSON array holds.
func (s kindSpec) indexSQLIn() string {
	q := s.indexSQL(false)
	return q[:len(q)-len(" ORDER BY x.seq")] + " AND x.id IN (SELECT value FROM json_each(?))"
}
