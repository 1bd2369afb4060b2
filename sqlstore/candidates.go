package sqlstore

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

var _ memory.CandidateStore = (*Store)(nil)

// Candidates live in two tables, as the specification names them:
// kg_entity_candidates and kg_edge_candidates. A listing reads both and
// merges them in Go (no UNION: the columns differ).

const entCandColumns = `c.id, c.name, c.entity_type, c.data, c.confidence, c.source_thought_id, c.status, c.created_at,
	c.decided_at, c.promoted_id, c.feedback, c.session_id, c.repo_id, c.agent_id, c.user_id`

const edgeCandColumns = `c.id, c.source_name, c.rel_type, c.target_name, c.data, c.confidence, c.source_thought_id, c.status,
	c.created_at, c.decided_at, c.promoted_id, c.feedback, c.session_id, c.repo_id, c.agent_id, c.user_id`

func scanEntityCandidate(s Scanner) (memory.KGCandidate, error) {
	c := memory.KGCandidate{Kind: memory.CandidateEntity}
	var data string
	err := s.Scan(&c.ID, &c.Name, &c.EntityType, &data, &c.Confidence, &c.SourceThoughtID, &c.Status, &c.CreatedAt,
		&c.DecidedAt, &c.PromotedID, &c.Feedback, &c.Scope.SessionID, &c.Scope.RepoID, &c.Scope.AgentID, &c.Scope.UserID)
	c.Data = memory.RawObject(data)
	return c, err
}

func scanEdgeCandidate(s Scanner) (memory.KGCandidate, error) {
	c := memory.KGCandidate{Kind: memory.CandidateEdge}
	var data string
	err := s.Scan(&c.ID, &c.SourceName, &c.Relation, &c.TargetName, &data, &c.Confidence, &c.SourceThoughtID, &c.Status,
		&c.CreatedAt, &c.DecidedAt, &c.PromotedID, &c.Feedback, &c.Scope.SessionID, &c.Scope.RepoID, &c.Scope.AgentID, &c.Scope.UserID)
	c.Data = memory.RawObject(data)
	return c, err
}

// StageCandidates implements memory.CandidateStore. Writers staging the
// same key at once meet on the unique index of pending keys: the one
// that loses runs again and finds the key pending.
func (s *Store) StageCandidates(ctx context.Context, cs []memory.KGCandidate) (memory.StageResult, error) {
	var res memory.StageResult
	err := s.b.Write(ctx, "staging knowledge-graph candidates", func(q Querier) error {
		res = memory.StageResult{}
		for _, c := range cs {
			why, err := skipReason(ctx, q, c)
			if err != nil {
				return err
			}
			if why != "" {
				c.Feedback = why
				res.Skipped = append(res.Skipped, c)
				continue
			}
			if err := s.insertCandidate(ctx, q, c); err != nil {
				return err
			}
			res.Staged = append(res.Staged, c)
		}
		return nil
	})
	return res, err
}

// skipReason says why a candidate is not staged ("" when it is).
func skipReason(ctx context.Context, q Querier, c memory.KGCandidate) (string, error) {
	type check struct {
		why, sql string
		args     []any
	}
	var checks []check
	switch c.Kind {
	case memory.CandidateEntity:
		key := memory.NameKey(c.Name)
		checks = []check{
			{"blocked", "SELECT 1 FROM kg_candidate_blocklist WHERE kind = 'entity' AND key = ?", []any{key}},
			{"pending", "SELECT 1 FROM kg_entity_candidates WHERE name_key = ? AND status = 'pending'", []any{key}},
			{"exists", "SELECT 1 FROM kg_entities WHERE name_key = ?", []any{key}},
		}
	case memory.CandidateEdge:
		key, src, dst := c.Key(), memory.NameKey(c.SourceName), memory.NameKey(c.TargetName)
		checks = []check{
			{"blocked", "SELECT 1 FROM kg_candidate_blocklist WHERE kind = 'edge' AND key = ?", []any{key}},
			{"blocked", "SELECT 1 FROM kg_candidate_blocklist WHERE kind = 'entity' AND key IN (?, ?)", []any{src, dst}},
			{"pending", "SELECT 1 FROM kg_edge_candidates WHERE edge_key = ? AND status = 'pending'", []any{key}},
			{"exists", `SELECT 1 FROM kg_edges g JOIN kg_entities s ON s.id = g.source JOIN kg_entities t ON t.id = g.target
				WHERE s.name_key = ? AND t.name_key = ? AND lower(g.relation) = ?`, []any{src, dst, strings.ToLower(c.Relation)}},
		}
	default:
		return "", memory.Errorf(memory.CodeInvalidParams, "candidate kind %q: want entity or edge", c.Kind)
	}
	for _, ch := range checks {
		found, err := exists(ctx, q, ch.sql+" LIMIT 1", ch.args...)
		if err != nil || found {
			return ch.why, err
		}
	}
	return "", nil
}

func (s *Store) insertCandidate(ctx context.Context, q Querier, c memory.KGCandidate) error {
	var err error
	if c.Kind == memory.CandidateEdge {
		args := append([]any{c.ID, c.SourceName, c.TargetName, c.Relation, c.Key(), dataText(c.Data), c.Confidence, c.SourceThoughtID,
			c.Status, c.CreatedAt, c.DecidedAt, c.PromotedID, c.Feedback}, ScopeArgs(c.Scope)...)
		_, err = q.Exec(ctx, `INSERT INTO kg_edge_candidates (id, source_name, target_name, rel_type, edge_key, data, confidence,
			source_thought_id, status, created_at, decided_at, promoted_id, feedback, session_id, repo_id, agent_id, user_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	} else {
		args := append([]any{c.ID, c.Name, c.Key(), c.EntityType, dataText(c.Data), c.Confidence, c.SourceThoughtID,
			c.Status, c.CreatedAt, c.DecidedAt, c.PromotedID, c.Feedback}, ScopeArgs(c.Scope)...)
		_, err = q.Exec(ctx, `INSERT INTO kg_entity_candidates (id, name, name_key, entity_type, data, confidence,
			source_thought_id, status, created_at, decided_at, promoted_id, feedback, session_id, repo_id, agent_id, user_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	}
	if s.d.IsUnique(err) {
		if strings.HasSuffix(s.d.Constraint(err), "_pending") {
			// Another writer staged the key meanwhile: run again.
			return RetryError{Err: err}
		}
		return memory.Wrap(memory.CodeConflict, err, "candidate id %q already exists", c.ID)
	}
	return err
}

// Candidates implements memory.CandidateStore.
func (s *Store) Candidates(ctx context.Context, f memory.CandidateFilter) ([]memory.KGCandidate, error) {
	var out []memory.KGCandidate
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	err := s.b.Read(ctx, "listing knowledge-graph candidates", func(tx Querier) error {
		out = out[:0]
		for _, k := range []struct {
			kind    memory.CandidateKind
			table   string
			columns string
			scan    func(Scanner) (memory.KGCandidate, error)
		}{
			{memory.CandidateEntity, "kg_entity_candidates", entCandColumns, scanEntityCandidate},
			{memory.CandidateEdge, "kg_edge_candidates", edgeCandColumns, scanEdgeCandidate},
		} {
			if f.Kind != "" && f.Kind != k.kind {
				continue
			}
			q := s.d.NewQuery("SELECT "+k.columns+" FROM "+k.table+" c WHERE c.confidence >= ?", f.MinConfidence)
			if f.Status != "" {
				q.Add(" AND c.status = ?", f.Status)
			}
			if f.SourceThoughtID != "" {
				q.Add(" AND c.source_thought_id = ?", f.SourceThoughtID)
			}
			q.In("c.id", f.IDs)
			// Each table gives at most offset+limit rows: the merged
			// page cannot need more of either.
			q.Add(" ORDER BY c.confidence DESC, c.created_at, c.id LIMIT ?", f.Offset+limit)
			if err := EachRow(ctx, tx, q.SQL(), q.Args(), func(sc Scanner) error {
				c, err := k.scan(sc)
				out = append(out, c)
				return err
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortCandidates(out)
	if f.Offset >= len(out) {
		return []memory.KGCandidate{}, nil
	}
	out = out[f.Offset:]
	return out[:min(len(out), limit)], nil
}

// sortCandidates orders candidates as Candidates returns them.
func sortCandidates(cs []memory.KGCandidate) {
	slices.SortFunc(cs, func(a, b memory.KGCandidate) int {
		switch {
		case a.Confidence != b.Confidence:
			if a.Confidence > b.Confidence {
				return -1
			}
			return 1
		case a.CreatedAt != b.CreatedAt:
			if a.CreatedAt < b.CreatedAt {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// getCandidate reads one candidate of either kind; lock, where writers do
// not take turns, takes its row for update.
func (s *Store) getCandidate(ctx context.Context, q Querier, id string, lock bool) (memory.KGCandidate, error) {
	suffix := ""
	if lock {
		suffix = s.d.ForUpdate
	}
	c, err := scanEntityCandidate(q.QueryRow(ctx, "SELECT "+entCandColumns+" FROM kg_entity_candidates c WHERE c.id = ?"+suffix, id))
	if errors.Is(err, ErrNoRows) {
		c, err = scanEdgeCandidate(q.QueryRow(ctx, "SELECT "+edgeCandColumns+" FROM kg_edge_candidates c WHERE c.id = ?"+suffix, id))
	}
	if errors.Is(err, ErrNoRows) {
		return c, NotFound("candidate", id)
	}
	return c, err
}

// DecideCandidate implements memory.CandidateStore. The candidate's row
// is locked first: of writers deciding it at once, one decides and the
// others find it decided (conflict).
func (s *Store) DecideCandidate(ctx context.Context, d memory.CandidateDecision) (memory.KGCandidate, error) {
	var out memory.KGCandidate
	if d.Status != memory.CandidateApproved && d.Status != memory.CandidateRejected {
		return out, memory.Errorf(memory.CodeInvalidParams, "decision %q: want approved or rejected", d.Status)
	}
	err := s.b.Write(ctx, "deciding a knowledge-graph candidate", func(q Querier) error {
		c, err := s.getCandidate(ctx, q, d.ID, true)
		if err != nil {
			return err
		}
		if c.Status != memory.CandidatePending {
			return memory.Errorf(memory.CodeConflict, "candidate %s was already %s", c.ID, c.Status)
		}
		if d.Status == memory.CandidateApproved {
			if err := s.promote(ctx, q, d); err != nil {
				return err
			}
		}
		table := "kg_entity_candidates"
		if c.Kind == memory.CandidateEdge {
			table = "kg_edge_candidates"
		}
		if _, err := q.Exec(ctx, "UPDATE "+table+" SET status = ?, decided_at = ?, promoted_id = ?, feedback = ? WHERE id = ?",
			d.Status, d.DecidedAt, d.PromotedID, d.Feedback, c.ID); err != nil {
			return err
		}
		if d.Block {
			if _, err := q.Exec(ctx, `INSERT INTO kg_candidate_blocklist (kind, key, candidate_id, created_at) VALUES (?, ?, ?, ?)
				ON CONFLICT (kind, key) DO NOTHING`, string(c.Kind), c.Key(), c.ID, d.DecidedAt); err != nil {
				return err
			}
		}
		out, err = s.getCandidate(ctx, q, c.ID, false)
		return err
	})
	return out, err
}

// promote writes what an approval adds to the graph: its entities, and
// its edge between entities that exist.
func (s *Store) promote(ctx context.Context, q Querier, d memory.CandidateDecision) error {
	for _, e := range d.Entities {
		if _, err := s.putEntity(ctx, q, e); err != nil {
			return err
		}
	}
	if d.Edge == nil {
		return nil
	}
	for _, id := range []string{d.Edge.Source, d.Edge.Target} {
		if err := s.lockEntity(ctx, q, id); err != nil {
			return err
		}
	}
	return s.insertEdge(ctx, q, *d.Edge)
}

// Blocklist implements memory.CandidateStore.
func (s *Store) Blocklist(ctx context.Context) ([]memory.BlockedKey, error) {
	out := []memory.BlockedKey{}
	err := s.b.Read(ctx, "reading the candidate blocklist", func(q Querier) error {
		out = out[:0]
		return EachRow(ctx, q, "SELECT kind, key, candidate_id, created_at FROM kg_candidate_blocklist ORDER BY created_at, kind, key",
			nil, func(sc Scanner) error {
				var b memory.BlockedKey
				err := sc.Scan(&b.Kind, &b.Key, &b.CandidateID, &b.CreatedAt)
				out = append(out, b)
				return err
			})
	})
	return out, err
}

// Unblock implements memory.CandidateStore.
func (s *Store) Unblock(ctx context.Context, kind memory.CandidateKind, key string) error {
	return s.b.Write(ctx, "unblocking a candidate key", func(q Querier) error {
		n, err := q.Exec(ctx, "DELETE FROM kg_candidate_blocklist WHERE kind = ? AND key = ?", string(kind), key)
		if err != nil {
			return err
		}
		if n == 0 {
			return memory.Errorf(memory.CodeNotFound, "%s %q is not on the blocklist", kind, key)
		}
		return nil
	})
}
