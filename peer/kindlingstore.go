package peer

import (
	"context"
	"encoding/json"

	"github.com/cairnhq/cairn/memory"
)

// Rows runs a query on a peer's database file and returns its rows, each
// as column → value (int64, float64, string, []byte or nil), at most limit
// of them; what names the records, for errors. The caller owns the file
// (only cairn's sqlite package opens SQLite files).
type Rows func(ctx context.Context, what, query string, limit int) ([]map[string]any, error)

// MaxStoreRows bounds the rows read from one table of a peer's store.
const MaxStoreRows = 1_000_000

// The queries Kindling's exportDatabase() runs on its store (default
// options: every scope, no redacted observations), in its order.
const (
	kindlingObservations = `SELECT id, kind, content, provenance, ts, scope_ids, redacted FROM observations
		WHERE redacted = 0 ORDER BY ts ASC, id ASC`
	kindlingCapsules = `SELECT id, type, intent, status, opened_at, closed_at, scope_ids FROM capsules
		ORDER BY opened_at ASC, id ASC`
	kindlingMembers   = `SELECT capsule_id, observation_id FROM capsule_observations ORDER BY capsule_id, seq ASC`
	kindlingSummaries = `SELECT s.id, s.capsule_id, s.content, s.confidence, s.created_at, s.evidence_refs
		FROM summaries s INNER JOIN capsules c ON s.capsule_id = c.id ORDER BY s.created_at ASC, s.id ASC`
	kindlingPins = `SELECT id, target_type, target_id, reason, created_at, expires_at, scope_ids FROM pins
		ORDER BY created_at ASC, id ASC`
)

// ParseKindlingStore reads Kindling's SQLite store (kindling.db) as
// Kindling's own exportDatabase() reads it, and maps it as its export:
// the same file read either way gives the same records.
func ParseKindlingStore(ctx context.Context, rows Rows, o Options) (Parsed, error) {
	read := func(what, query string) ([]map[string]any, error) {
		rs, err := rows(ctx, what, query, MaxStoreRows)
		if err != nil {
			return nil, prefixed(err, "not a Kindling store: ")
		}
		return rs, nil
	}
	ds := map[string]any{"version": "1.0"}
	col := colReader{}
	obs, err := read("observations", kindlingObservations)
	if err != nil {
		return Parsed{}, err
	}
	var observations []map[string]any
	for _, r := range obs {
		col.row("observation", r)
		observations = append(observations, map[string]any{"id": col.str("id"), "kind": col.str("kind"), "content": col.str("content"),
			"provenance": col.json("provenance"), "ts": col.num("ts"), "scopeIds": col.json("scope_ids"), "redacted": false})
	}
	members := map[string][]string{}
	ms, err := read("capsule observations", kindlingMembers)
	if err != nil {
		return Parsed{}, err
	}
	for _, r := range ms {
		col.row("capsule observation", r)
		c := col.str("capsule_id")
		members[c] = append(members[c], col.str("observation_id"))
	}
	caps, err := read("capsules", kindlingCapsules)
	if err != nil {
		return Parsed{}, err
	}
	var capsules []map[string]any
	for _, r := range caps {
		col.row("capsule", r)
		c := map[string]any{"id": col.str("id"), "type": col.str("type"), "intent": col.str("intent"), "status": col.str("status"),
			"openedAt": col.num("opened_at"), "scopeIds": col.json("scope_ids"), "observationIds": members[col.str("id")]}
		if r["closed_at"] != nil {
			c["closedAt"] = col.num("closed_at")
		}
		capsules = append(capsules, c)
	}
	sums, err := read("summaries", kindlingSummaries)
	if err != nil {
		return Parsed{}, err
	}
	var summaries []map[string]any
	for _, r := range sums {
		col.row("summary", r)
		summaries = append(summaries, map[string]any{"id": col.str("id"), "capsuleId": col.str("capsule_id"), "content": col.str("content"),
			"confidence": col.num("confidence"), "createdAt": col.num("created_at"), "evidenceRefs": col.json("evidence_refs")})
	}
	pins, err := read("pins", kindlingPins)
	if err != nil {
		return Parsed{}, err
	}
	var pinList []map[string]any
	for _, r := range pins {
		col.row("pin", r)
		p := map[string]any{"id": col.str("id"), "targetType": col.str("target_type"), "targetId": col.str("target_id"),
			"createdAt": col.num("created_at"), "scopeIds": col.json("scope_ids")}
		if r["reason"] != nil {
			p["reason"] = col.str("reason")
		}
		if r["expires_at"] != nil {
			p["expiresAt"] = col.num("expires_at")
		}
		pinList = append(pinList, p)
	}
	if col.err != nil {
		return Parsed{}, col.err
	}
	ds["observations"], ds["capsules"], ds["summaries"], ds["pins"] = orEmpty(observations), orEmpty(capsules), orEmpty(summaries), orEmpty(pinList)
	data, err := json.Marshal(ds)
	if err != nil {
		return Parsed{}, memory.Wrap(memory.CodeInternal, err, "encoding the Kindling store's records")
	}
	return parseKindling(data, o)
}

func invalid(format string, args ...any) error {
	return memory.Errorf(memory.CodeInvalidParams, format, args...)
}

func orEmpty(s []map[string]any) []map[string]any {
	if s == nil {
		return []map[string]any{}
	}
	return s
}

// colReader reads typed columns of one row, keeping the first error.
type colReader struct {
	what string
	r    map[string]any
	err  error
}

func (c *colReader) row(what string, r map[string]any) { c.what, c.r = what, r }

func (c *colReader) fail(name, want string) {
	if c.err == nil {
		id, _ := c.r["id"].(string)
		c.err = invalid("not a Kindling store: a %s (%s) has %s that is not %s", c.what, clip(id, 60), name, want)
	}
}

func (c *colReader) str(name string) string {
	switch v := c.r[name].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	c.fail(name, "text")
	return ""
}

func (c *colReader) num(name string) any {
	switch v := c.r[name].(type) {
	case int64, float64:
		return v
	}
	c.fail(name, "a number")
	return 0
}

func (c *colReader) json(name string) json.RawMessage {
	s := c.str(name)
	if !json.Valid([]byte(s)) {
		c.fail(name, "JSON")
		return json.RawMessage("null")
	}
	return json.RawMessage(s)
}
