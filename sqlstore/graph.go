package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// entityColumns are an entity's columns (alias e), as scanEntity reads them.
const entityColumns = "e.id, e.name, e.type, e.data, e.created_at, e.updated_at, e.session_id, e.repo_id, e.agent_id, e.user_id"

// scanEntity reads entityColumns.
func scanEntity(s Scanner) (memory.KGEntity, error) {
	var e memory.KGEntity
	var data string
	err := s.Scan(&e.ID, &e.Name, &e.Type, &data, &e.CreatedAt, &e.UpdatedAt, &e.Scope.SessionID, &e.Scope.RepoID, &e.Scope.AgentID, &e.Scope.UserID)
	e.Data = memory.RawObject(data)
	return e, err
}

// kGObsColumns are an entity observation's columns (alias o), as scanKGObs
// reads them.
const kGObsColumns = "o.id, o.entity_id, o.content, o.created_at, o.session_id, o.repo_id, o.agent_id, o.user_id"

// scanKGObs reads kGObsColumns.
func scanKGObs(s Scanner) (memory.KGObservation, error) {
	var o memory.KGObservation
	err := s.Scan(&o.ID, &o.EntityID, &o.Content, &o.CreatedAt, &o.Scope.SessionID, &o.Scope.RepoID, &o.Scope.AgentID, &o.Scope.UserID)
	return o, err
}

// edgeColumns are an edge's columns (alias g), as scanEdge reads them.
const edgeColumns = "g.id, g.source, g.target, g.relation, g.data, g.created_at, g.session_id, g.repo_id, g.agent_id, g.user_id"

// scanEdge reads edgeColumns.
func scanEdge(s Scanner) (memory.KGEdge, error) {
	var g memory.KGEdge
	var data string
	err := s.Scan(&g.ID, &g.Source, &g.Target, &g.Relation, &data, &g.CreatedAt, &g.Scope.SessionID, &g.Scope.RepoID, &g.Scope.AgentID, &g.Scope.UserID)
	g.Data = memory.RawObject(data)
	return g, err
}

func dataText(d memory.RawObject) string {
	if len(d) == 0 {
		return "{}"
	}
	return string(d)
}

// PutEntity implements memory.GraphStore: it creates the entity, or
// updates name, type and data of an existing id (keeping created_at and
// scope, which the returned entity carries). A vector is of its record's
// text: an update that changes the entity's text drops its vectors, and a
// new name also drops those of its observations and edges (whose texts
// quote it) and logs them as changed.
func (s *Store) PutEntity(ctx context.Context, e memory.KGEntity) (memory.KGEntity, error) {
	var out memory.KGEntity
	err := s.b.Write(ctx, "storing an entity", func(q Querier) error {
		var err error
		out, err = s.putEntity(ctx, q, e)
		return err
	})
	return out, err
}

// putEntity is PutEntity inside a write transaction; it returns the
// entity as stored.
func (s *Store) putEntity(ctx context.Context, q Querier, e memory.KGEntity) (memory.KGEntity, error) {
	var old memory.KGEntity
	var oldData string
	err := q.QueryRow(ctx, "SELECT name, type, data, created_at, session_id, repo_id, agent_id, user_id FROM kg_entities WHERE id = ?"+s.d.ForUpdate,
		e.ID).Scan(&old.Name, &old.Type, &oldData, &old.CreatedAt, &old.Scope.SessionID, &old.Scope.RepoID, &old.Scope.AgentID, &old.Scope.UserID)
	switch {
	case errors.Is(err, ErrNoRows):
		err := s.insertEntity(ctx, q, e)
		if s.d.IsUnique(err) || memory.IsCode(err, memory.CodeConflict) {
			// Another writer created it meanwhile: update it instead.
			return e, RetryError{Err: err}
		}
		return e, err
	case err != nil:
		return e, err
	}
	e.CreatedAt, e.Scope = old.CreatedAt, old.Scope
	_, err = q.Exec(ctx, "UPDATE kg_entities SET name = ?, name_key = ?, type = ?, data = ?, updated_at = ? WHERE id = ?",
		e.Name, strings.ToLower(e.Name), e.Type, dataText(e.Data), e.UpdatedAt, e.ID)
	if err != nil || (e.Name == old.Name && e.Type == old.Type && dataText(e.Data) == oldData) {
		return e, err
	}
	stmts := []string{"DELETE FROM embeddings WHERE kind = 'kg_entity' AND ref = ?1"}
	if e.Name != old.Name {
		// The observations' and edges' texts quote the name: their vectors
		// go, and they are logged as changed.
		stmts = append(stmts,
			"DELETE FROM embeddings WHERE kind = 'kg_observation' AND ref IN (SELECT id FROM kg_observations WHERE entity_id = ?1)",
			"DELETE FROM embeddings WHERE kind = 'kg_edge' AND ref IN (SELECT id FROM kg_edges WHERE source = ?1 OR target = ?1)")
		stmts = append(stmts, s.d.RelogRenamed...)
	}
	for _, st := range stmts {
		if _, err := q.Exec(ctx, st, e.ID); err != nil {
			return e, err
		}
	}
	return e, nil
}

// insertEntity writes a new entity (conflict when its id exists).
func (s *Store) insertEntity(ctx context.Context, q Querier, e memory.KGEntity) error {
	args := append([]any{e.ID, e.Name, strings.ToLower(e.Name), e.Type, dataText(e.Data), e.CreatedAt, e.UpdatedAt}, ScopeArgs(e.Scope)...)
	_, err := q.Exec(ctx, `INSERT INTO kg_entities (id, name, name_key, type, data, created_at, updated_at,
		session_id, repo_id, agent_id, user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	if s.d.IsUnique(err) {
		return memory.Wrap(memory.CodeConflict, err, "entity id %q already exists", e.ID)
	}
	return err
}

// Entity implements memory.GraphStore.
func (s *Store) Entity(ctx context.Context, id string) (memory.KGEntity, error) {
	var e memory.KGEntity
	err := s.b.Read(ctx, "reading an entity", func(q Querier) error {
		var err error
		e, err = scanEntity(q.QueryRow(ctx, "SELECT "+entityColumns+" FROM kg_entities e WHERE e.id = ?", id))
		if errors.Is(err, ErrNoRows) {
			return NotFound("entity", id)
		}
		return err
	})
	return e, err
}

// EntitiesByName implements memory.GraphStore.
func (s *Store) EntitiesByName(ctx context.Context, name string) ([]memory.KGEntity, error) {
	var out []memory.KGEntity
	err := s.b.Read(ctx, "finding entities", func(q Querier) error {
		out = nil
		return EachRow(ctx, q, "SELECT "+entityColumns+" FROM kg_entities e WHERE e.name_key = ? ORDER BY e.seq",
			[]any{strings.ToLower(name)}, func(sc Scanner) error {
				e, err := scanEntity(sc)
				out = append(out, e)
				return err
			})
	})
	return out, err
}

// Entities implements memory.GraphStore.
func (s *Store) Entities(ctx context.Context, typ string, scope memory.Scope, limit int) ([]memory.KGEntity, error) {
	var out []memory.KGEntity
	err := s.b.Read(ctx, "listing entities", func(tx Querier) error {
		out = nil
		q := s.d.NewQuery("SELECT " + entityColumns + " FROM kg_entities e WHERE true")
		if typ != "" {
			q.Add(" AND e.type = ?", typ)
		}
		q.Scope("e", scope)
		q.Add(" ORDER BY e.name_key, e.id LIMIT ?", max(1, limit))
		return EachRow(ctx, tx, q.SQL(), q.Args(), func(sc Scanner) error {
			e, err := scanEntity(sc)
			out = append(out, e)
			return err
		})
	})
	return out, err
}

// deleteByID deletes the row of table with id (not_found, naming the
// record as what, when there is none); the store scrubs the deleted text.
func (s *Store) deleteByID(ctx context.Context, op, table, what, id string) error {
	return s.b.Erase(ctx, op, func(q Querier) error {
		n, err := q.Exec(ctx, "DELETE FROM "+table+" WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n == 0 {
			return NotFound(what, id)
		}
		return nil
	})
}

// DeleteEntity implements memory.GraphStore. Its observations and edges
// go with it (foreign keys), and their vectors (triggers).
func (s *Store) DeleteEntity(ctx context.Context, id string) error {
	return s.deleteByID(ctx, "deleting an entity", "kg_entities", "entity", id)
}

// lockEntity checks that an entity exists and, where writers do not take
// turns, keeps it from being deleted until the transaction ends.
func (s *Store) lockEntity(ctx context.Context, q Querier, id string) error {
	var one int
	err := q.QueryRow(ctx, "SELECT 1 FROM kg_entities WHERE id = ?"+s.d.ForShare, id).Scan(&one)
	if errors.Is(err, ErrNoRows) {
		return NotFound("entity", id)
	}
	return err
}

// AddKGObservation implements memory.GraphStore.
func (s *Store) AddKGObservation(ctx context.Context, o memory.KGObservation) (memory.KGObservation, error) {
	err := s.b.Write(ctx, "storing an entity observation", func(q Querier) error {
		if err := s.lockEntity(ctx, q, o.EntityID); err != nil {
			return err
		}
		return s.insertKGObservation(ctx, q, o)
	})
	return o, err
}

// insertKGObservation writes a new entity observation (conflict when its
// id exists); the caller checks that its entity exists.
func (s *Store) insertKGObservation(ctx context.Context, q Querier, o memory.KGObservation) error {
	args := append([]any{o.ID, o.EntityID, o.Content, o.CreatedAt}, ScopeArgs(o.Scope)...)
	_, err := q.Exec(ctx, `INSERT INTO kg_observations (id, entity_id, content, created_at, session_id, repo_id, agent_id, user_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	switch {
	case s.d.IsUnique(err):
		return memory.Wrap(memory.CodeConflict, err, "observation id %q already exists", o.ID)
	case s.d.IsForeignKey(err):
		return memory.Wrap(memory.CodeNotFound, err, "entity %q not found", o.EntityID)
	}
	return err
}

// KGObservations implements memory.GraphStore.
func (s *Store) KGObservations(ctx context.Context, entityID string) ([]memory.KGObservation, error) {
	var out []memory.KGObservation
	err := s.b.Read(ctx, "reading entity observations", func(q Querier) error {
		out = nil
		return EachRow(ctx, q, "SELECT "+kGObsColumns+" FROM kg_observations o WHERE o.entity_id = ? ORDER BY o.created_at, o.seq",
			[]any{entityID}, func(sc Scanner) error {
				o, err := scanKGObs(sc)
				out = append(out, o)
				return err
			})
	})
	return out, err
}

// DeleteKGObservation implements memory.GraphStore.
func (s *Store) DeleteKGObservation(ctx context.Context, id string) error {
	return s.deleteByID(ctx, "deleting an entity observation", "kg_observations", "entity observation", id)
}

// AddEdge implements memory.GraphStore.
func (s *Store) AddEdge(ctx context.Context, g memory.KGEdge) (memory.KGEdge, error) {
	err := s.b.Write(ctx, "storing an edge", func(q Querier) error {
		for _, id := range []string{g.Source, g.Target} {
			if err := s.lockEntity(ctx, q, id); err != nil {
				return err
			}
		}
		return s.insertEdge(ctx, q, g)
	})
	return g, err
}

// insertEdge writes a new edge (conflict when its id exists); the caller
// checks that its entities exist.
func (s *Store) insertEdge(ctx context.Context, q Querier, g memory.KGEdge) error {
	args := append([]any{g.ID, g.Source, g.Target, g.Relation, dataText(g.Data), g.CreatedAt}, ScopeArgs(g.Scope)...)
	_, err := q.Exec(ctx, `INSERT INTO kg_edges (id, source, target, relation, data, created_at, session_id, repo_id, agent_id, user_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	switch {
	case s.d.IsUnique(err):
		return memory.Wrap(memory.CodeConflict, err, "edge id %q already exists", g.ID)
	case s.d.IsForeignKey(err):
		return memory.Wrap(memory.CodeNotFound, err, "an entity of edge %q no longer exists", g.ID)
	}
	return err
}

// Edges implements memory.GraphStore.
func (s *Store) Edges(ctx context.Context, entityID string, limit int) ([]memory.KGEdge, error) {
	var out []memory.KGEdge
	err := s.b.Read(ctx, "reading edges", func(tx Querier) error {
		out = nil
		q := s.d.NewQuery("SELECT " + edgeColumns + " FROM kg_edges g WHERE true")
		if entityID != "" {
			q.Add(" AND (g.source = ? OR g.target = ?)", entityID, entityID)
		}
		q.Add(" ORDER BY g.seq LIMIT ?", max(1, limit))
		return EachRow(ctx, tx, q.SQL(), q.Args(), func(sc Scanner) error {
			g, err := scanEdge(sc)
			out = append(out, g)
			return err
		})
	})
	return out, err
}

// DeleteEdge implements memory.GraphStore.
func (s *Store) DeleteEdge(ctx context.Context, id string) error {
	return s.deleteByID(ctx, "deleting an edge", "kg_edges", "edge", id)
}

// entityScope returns an entity's scope; what names the record referring
// to it, for the not_found message.
func entityScope(ctx context.Context, q Querier, id, what string) (memory.Scope, error) {
	var sc memory.Scope
	err := q.QueryRow(ctx, "SELECT session_id, repo_id, agent_id, user_id FROM kg_entities WHERE id = ?", id).
		Scan(&sc.SessionID, &sc.RepoID, &sc.AgentID, &sc.UserID)
	if errors.Is(err, ErrNoRows) {
		return sc, memory.Errorf(memory.CodeNotFound, "%s names entity %q, which does not exist", what, id)
	}
	return sc, err
}

// inheritScope fills the dimensions own leaves empty from the entity's
// scope; a dimension set to another value is invalid_params.
func inheritScope(own, entity memory.Scope, what, entityID string) (memory.Scope, error) {
	if dim := own.Conflicts(entity); dim != "" {
		return own, memory.Errorf(memory.CodeInvalidParams, "%s: scope %s %q differs from entity %q's %q",
			what, dim, own.Get(dim), entityID, entity.Get(dim))
	}
	return own.Fill(entity), nil
}

// importKGObservation writes an imported entity observation, which takes
// its entity's scope.
func (s *Store) importKGObservation(ctx context.Context, q Querier, o memory.KGObservation) error {
	what := fmt.Sprintf("entity observation %q", o.ID)
	sc, err := entityScope(ctx, q, o.EntityID, what)
	if err != nil {
		return err
	}
	if o.Scope, err = inheritScope(o.Scope, sc, what, o.EntityID); err != nil {
		return err
	}
	return s.insertKGObservation(ctx, q, o)
}

// importEdge writes an imported edge, which takes its source's scope.
func (s *Store) importEdge(ctx context.Context, q Querier, g memory.KGEdge) error {
	what := fmt.Sprintf("edge %q", g.ID)
	sc, err := entityScope(ctx, q, g.Source, what)
	if err != nil {
		return err
	}
	if _, err := entityScope(ctx, q, g.Target, what); err != nil {
		return err
	}
	if g.Scope, err = inheritScope(g.Scope, sc, what, g.Source); err != nil {
		return err
	}
	return s.insertEdge(ctx, q, g)
}
