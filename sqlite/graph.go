package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

const entityColumns = "e.id, e.name, e.type, e.data, e.created_at, e.updated_at, e.session_id, e.repo_id, e.agent_id, e.user_id"

func scanEntity(s scanner) (memory.KGEntity, error) {
	var e memory.KGEntity
	var data string
	err := s.Scan(&e.ID, &e.Name, &e.Type, &data, &e.CreatedAt, &e.UpdatedAt, &e.Scope.SessionID, &e.Scope.RepoID, &e.Scope.AgentID, &e.Scope.UserID)
	e.Data = memory.RawObject(data)
	return e, err
}

const kgObsColumns = "o.id, o.entity_id, o.content, o.created_at, o.session_id, o.repo_id, o.agent_id, o.user_id"

func scanKGObs(s scanner) (memory.KGObservation, error) {
	var o memory.KGObservation
	err := s.Scan(&o.ID, &o.EntityID, &o.Content, &o.CreatedAt, &o.Scope.SessionID, &o.Scope.RepoID, &o.Scope.AgentID, &o.Scope.UserID)
	return o, err
}

const edgeColumns = "g.id, g.source, g.target, g.relation, g.data, g.created_at, g.session_id, g.repo_id, g.agent_id, g.user_id"

func scanEdge(s scanner) (memory.KGEdge, error) {
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

// PutEntity implements memory.GraphStore: it creates the entity, or updates
// name, type and data of an existing id (keeping created_at and scope, which
// the returned entity carries). A vector is of its record's text: an update
// that changes the entity's text drops its vectors, and a new name also
// drops those of its observations and edges (whose texts quote it) and logs
// them as changed.
func (db *DB) PutEntity(ctx context.Context, e memory.KGEntity) (memory.KGEntity, error) {
	err := db.write(ctx, "storing an entity", func(tx *sql.Tx) error {
		var err error
		e, err = putEntity(ctx, tx, e)
		return err
	})
	return e, err
}

// putEntity is PutEntity inside a write transaction; it returns the
// entity as stored.
func putEntity(ctx context.Context, tx *sql.Tx, e memory.KGEntity) (memory.KGEntity, error) {
	err := func() error {
		var old memory.KGEntity
		var oldData string
		err := tx.QueryRowContext(ctx, "SELECT name, type, data, created_at, session_id, repo_id, agent_id, user_id FROM kg_entities WHERE id = ?",
			e.ID).Scan(&old.Name, &old.Type, &oldData, &old.CreatedAt, &old.Scope.SessionID, &old.Scope.RepoID, &old.Scope.AgentID, &old.Scope.UserID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return insertEntity(ctx, tx, e)
		case err != nil:
			return err
		}
		e.CreatedAt, e.Scope = old.CreatedAt, old.Scope
		_, err = tx.ExecContext(ctx, "UPDATE kg_entities SET name = ?, name_key = ?, type = ?, data = ?, updated_at = ? WHERE id = ?",
			e.Name, strings.ToLower(e.Name), e.Type, dataText(e.Data), e.UpdatedAt, e.ID)
		if err != nil || (e.Name == old.Name && e.Type == old.Type && dataText(e.Data) == oldData) {
			return err
		}
		stmts := []string{"DELETE FROM embeddings WHERE kind = 'kg_entity' AND ref = ?1"}
		if e.Name != old.Name {
			stmts = append(stmts,
				"DELETE FROM embeddings WHERE kind = 'kg_observation' AND ref IN (SELECT id FROM kg_observations WHERE entity_id = ?1)",
				"DELETE FROM embeddings WHERE kind = 'kg_edge' AND ref IN (SELECT id FROM kg_edges WHERE source = ?1 OR target = ?1)",
				"INSERT INTO changes(kind, ref, op, at) SELECT 'kg_observation', id, 'index', "+ledgerAt+" FROM kg_observations WHERE entity_id = ?1 ORDER BY seq",
				"INSERT INTO changes(kind, ref, op, at) SELECT 'kg_edge', id, 'index', "+ledgerAt+" FROM kg_edges WHERE source = ?1 OR target = ?1 ORDER BY seq")
		}
		for _, q := range stmts {
			if _, err := tx.ExecContext(ctx, q, e.ID); err != nil {
				return err
			}
		}
		return nil
	}()
	return e, err
}

// insertEntity writes a new entity (conflict when its id exists).
func insertEntity(ctx context.Context, tx queryer, e memory.KGEntity) error {
	args := append([]any{e.ID, e.Name, strings.ToLower(e.Name), e.Type, dataText(e.Data), e.CreatedAt, e.UpdatedAt}, scopeArgs(e.Scope)...)
	_, err := tx.ExecContext(ctx, `INSERT INTO kg_entities (id, name, name_key, type, data, created_at, updated_at,
		session_id, repo_id, agent_id, user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	if isUnique(err) {
		return memory.Wrap(memory.CodeConflict, err, "entity id %q already exists", e.ID)
	}
	return err
}

// Entity implements memory.GraphStore.
func (db *DB) Entity(ctx context.Context, id string) (memory.KGEntity, error) {
	var e memory.KGEntity
	err := db.read(ctx, "reading an entity", func(tx queryer) error {
		var err error
		e, err = scanEntity(tx.QueryRowContext(ctx, "SELECT "+entityColumns+" FROM kg_entities e WHERE e.id = ?", id))
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("entity", id)
		}
		return err
	})
	return e, err
}

// EntitiesByName implements memory.GraphStore.
func (db *DB) EntitiesByName(ctx context.Context, name string) ([]memory.KGEntity, error) {
	var out []memory.KGEntity
	err := db.read(ctx, "finding entities", func(tx queryer) error {
		return eachRowArgs(ctx, tx, "SELECT "+entityColumns+" FROM kg_entities e WHERE e.name_key = ? ORDER BY e.seq",
			[]any{strings.ToLower(name)}, func(s scanner) error {
				e, err := scanEntity(s)
				out = append(out, e)
				return err
			})
	})
	return out, err
}

// Entities implements memory.GraphStore.
func (db *DB) Entities(ctx context.Context, typ string, scope memory.Scope, limit int) ([]memory.KGEntity, error) {
	var out []memory.KGEntity
	err := db.read(ctx, "listing entities", func(tx queryer) error {
		q := newQuery("SELECT " + entityColumns + " FROM kg_entities e WHERE 1 = 1")
		if typ != "" {
			q.add(" AND e.type = ?", typ)
		}
		q.scope("e", scope)
		q.add(" ORDER BY e.name_key, e.id LIMIT ?", max(1, limit))
		return eachRowArgs(ctx, tx, q.sql.String(), q.args, func(s scanner) error {
			e, err := scanEntity(s)
			out = append(out, e)
			return err
		})
	})
	return out, err
}

// DeleteEntity implements memory.GraphStore.
func (db *DB) DeleteEntity(ctx context.Context, id string) error {
	return db.erase(ctx, "deleting an entity", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM kg_entities WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("entity", id)
		}
		return nil
	})
}

func entityExists(ctx context.Context, tx *sql.Tx, id string) error {
	var one int
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM kg_entities WHERE id = ?", id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("entity", id)
	}
	return err
}

// AddKGObservation implements memory.GraphStore.
func (db *DB) AddKGObservation(ctx context.Context, o memory.KGObservation) (memory.KGObservation, error) {
	err := db.write(ctx, "storing an entity observation", func(tx *sql.Tx) error {
		if err := entityExists(ctx, tx, o.EntityID); err != nil {
			return err
		}
		return insertKGObservation(ctx, tx, o)
	})
	return o, err
}

// insertKGObservation writes a new entity observation (conflict when its id
// exists); the caller checks that its entity exists.
func insertKGObservation(ctx context.Context, tx queryer, o memory.KGObservation) error {
	args := append([]any{o.ID, o.EntityID, o.Content, o.CreatedAt}, scopeArgs(o.Scope)...)
	_, err := tx.ExecContext(ctx, `INSERT INTO kg_observations (id, entity_id, content, created_at, session_id, repo_id, agent_id, user_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	if isUnique(err) {
		return memory.Wrap(memory.CodeConflict, err, "observation id %q already exists", o.ID)
	}
	return err
}

// KGObservations implements memory.GraphStore.
func (db *DB) KGObservations(ctx context.Context, entityID string) ([]memory.KGObservation, error) {
	var out []memory.KGObservation
	err := db.read(ctx, "reading entity observations", func(tx queryer) error {
		return eachRowArgs(ctx, tx, "SELECT "+kgObsColumns+" FROM kg_observations o WHERE o.entity_id = ? ORDER BY o.created_at, o.seq",
			[]any{entityID}, func(s scanner) error {
				o, err := scanKGObs(s)
				out = append(out, o)
				return err
			})
	})
	return out, err
}

// DeleteKGObservation implements memory.GraphStore.
func (db *DB) DeleteKGObservation(ctx context.Context, id string) error {
	return db.erase(ctx, "deleting an entity observation", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM kg_observations WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("entity observation", id)
		}
		return nil
	})
}

// AddEdge implements memory.GraphStore.
func (db *DB) AddEdge(ctx context.Context, g memory.KGEdge) (memory.KGEdge, error) {
	err := db.write(ctx, "storing an edge", func(tx *sql.Tx) error {
		for _, id := range []string{g.Source, g.Target} {
			if err := entityExists(ctx, tx, id); err != nil {
				return err
			}
		}
		return insertEdge(ctx, tx, g)
	})
	return g, err
}

// insertEdge writes a new edge (conflict when its id exists); the caller
// checks that its entities exist.
func insertEdge(ctx context.Context, tx queryer, g memory.KGEdge) error {
	args := append([]any{g.ID, g.Source, g.Target, g.Relation, dataText(g.Data), g.CreatedAt}, scopeArgs(g.Scope)...)
	_, err := tx.ExecContext(ctx, `INSERT INTO kg_edges (id, source, target, relation, data, created_at, session_id, repo_id, agent_id, user_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	if isUnique(err) {
		return memory.Wrap(memory.CodeConflict, err, "edge id %q already exists", g.ID)
	}
	return err
}

// Edges implements memory.GraphStore.
func (db *DB) Edges(ctx context.Context, entityID string, limit int) ([]memory.KGEdge, error) {
	var out []memory.KGEdge
	err := db.read(ctx, "reading edges", func(tx queryer) error {
		q := newQuery("SELECT " + edgeColumns + " FROM kg_edges g WHERE 1 = 1")
		if entityID != "" {
			q.add(" AND (g.source = ? OR g.target = ?)", entityID, entityID)
		}
		q.add(" ORDER BY g.seq LIMIT ?", max(1, limit))
		return eachRowArgs(ctx, tx, q.sql.String(), q.args, func(s scanner) error {
			g, err := scanEdge(s)
			out = append(out, g)
			return err
		})
	})
	return out, err
}

// DeleteEdge implements memory.GraphStore.
func (db *DB) DeleteEdge(ctx context.Context, id string) error {
	return db.erase(ctx, "deleting an edge", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM kg_edges WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("edge", id)
		}
		return nil
	})
}
