package postgres

import (
	"strconv"

	"github.com/cairnhq/cairn/memory"
)

// kindSpec says how to read one kind of searchable record: its table, the
// text it is searched and embedded by, its time, and what makes a row not
// searchable.
type kindSpec struct {
	kind  memory.VectorKind
	table string
	// text is the SQL expression of the record's searchable text.
	text string
	// ts is the SQL expression of its time.
	ts string
	// live is an SQL condition a searchable row meets ("true" for always).
	live string
	// body is the SQL expression of the record's own text when text adds
	// context around it ("" otherwise).
	body string
}

var kindSpecs = []kindSpec{
	{memory.VectorObservation, "observations", "x.content", "x.ts", "NOT x.redacted", ""},
	{memory.VectorSummary, "summaries", "x.content", "x.created_at", "NOT x.redacted", ""},
	{memory.VectorThought, "thoughts", "x.content", "x.created_at", "NOT x.redacted", ""},
	{memory.VectorKGEntity, "kg_entities",
		"x.name || ' (' || x.type || ')' || CASE WHEN x.data = '{}' THEN '' ELSE ': ' || x.data END", "x.updated_at", "true", ""},
	{memory.VectorKGObservation, "kg_observations",
		"(SELECT name FROM kg_entities WHERE id = x.entity_id) || ': ' || x.content", "x.created_at", "true", "x.content"},
	{memory.VectorKGEdge, "kg_edges",
		"(SELECT name FROM kg_entities WHERE id = x.source) || ' ' || x.relation || ' ' || (SELECT name FROM kg_entities WHERE id = x.target)",
		"x.created_at", "true", ""},
}

func specOf(k memory.VectorKind) (kindSpec, bool) {
	for _, s := range kindSpecs {
		if s.kind == k {
			return s, true
		}
	}
	return kindSpec{}, false
}

// lockSQL locks a record's row (FOR SHARE) until the transaction ends,
// so it cannot be rewritten, renamed or deleted between reading its text
// and storing its vector (every such write updates or deletes the row).
func (s kindSpec) lockSQL() string {
	return "SELECT 1 FROM " + s.table + " x WHERE x.id = $1 FOR SHARE"
}

// textSQL selects a live record's text by id ($1); run after lockSQL, in
// a statement of its own, it reads the text as last committed.
func (s kindSpec) textSQL() string {
	return "SELECT " + s.text + " FROM " + s.table + " x WHERE x.id = $1 AND " + s.live
}

// vectorOf is a lateral subquery reading a record's vector in a space
// ($1 provider, $2 model, $3 dim, shifted by base): one index probe per
// record, whatever the planner believes of the embeddings table (right
// after a bulk load its statistics say it is empty, and a join planned on
// them reads it whole for every record).
func (s kindSpec) vectorOf(base int) string {
	p := func(i int) string { return "$" + strconv.Itoa(base+i) }
	return `LEFT JOIN LATERAL (SELECT e.vec FROM embeddings e WHERE e.provider = ` + p(1) + ` AND e.model = ` + p(2) +
		` AND e.dim = ` + p(3) + ` AND e.kind = '` + string(s.kind) + `' AND e.ref = x.id LIMIT 1) e ON true`
}

// pendingSQL lists live records without a vector in a space, by id:
// $1 after, $2 provider, $3 model, $4 dim, $5 limit.
func (s kindSpec) pendingSQL() string {
	return "SELECT x.id, " + s.text + " FROM " + s.table + " x " + s.vectorOf(1) + " WHERE " + s.live + ` AND x.id > $1
		AND e.vec IS NULL ORDER BY x.id LIMIT $5`
}

// indexSQL selects what an index needs of every live record, with its
// vector in a space ($1 provider, $2 model, $3 dim), in insertion order;
// with in, only of the records whose ids $4 lists.
func (s kindSpec) indexSQL(in bool) string {
	extra := "''::text, '[]'::text, false, ''::text, ''::text, -1"
	join := ""
	switch s.kind {
	case memory.VectorThought:
		extra = "x.origin, x.tags, x.is_private, x.status, ''::text, -1"
	case memory.VectorObservation:
		extra = "''::text, '[]'::text, false, ''::text, coalesce(m.capsule_id, ''), coalesce(m.position, -1)"
		join = " LEFT JOIN LATERAL (SELECT m.capsule_id, m.position FROM capsule_observations m WHERE m.observation_id = x.id LIMIT 1) m ON true"
	}
	body := s.body
	if body == "" {
		body = "''::text"
	}
	q := "SELECT x.id, " + s.text + ", " + s.ts + ", x.session_id, x.repo_id, x.agent_id, x.user_id, " + extra + ", " + body + `, e.vec
		FROM ` + s.table + " x" + join + " " + s.vectorOf(0) + `
		WHERE ` + s.live
	if in {
		return q + " AND x.id = ANY($4)"
	}
	return q + " ORDER BY x.seq"
}
