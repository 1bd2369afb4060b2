package sqlite

import (
	"context"
	"strings"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
)

var _ memory.Browser = (*DB)(nil)

// withExtra scans a row's leading columns with the scanner's caller and
// the trailing ones into extra.
type withExtra struct {
	s     scanner
	extra []any
}

func (w withExtra) Scan(dest ...any) error { return w.s.Scan(append(dest, w.extra...)...) }

// BrowseCapsules implements memory.Browser.
func (db *DB) BrowseCapsules(ctx context.Context, f memory.CapsuleFilter) (memory.CapsulePage, error) {
	page := memory.CapsulePage{Capsules: []memory.CapsuleListing{}}
	if err := memory.CheckPageSize(f.Limit); err != nil {
		return page, err
	}
	if f.Status != "" && f.Status != memory.CapsuleOpen && f.Status != memory.CapsuleClosed {
		return page, memory.Errorf(memory.CodeInvalidParams, "capsule status %q: want open or closed", f.Status)
	}
	after, err := memory.ParseSeqCursor(f.After)
	if err != nil {
		return page, err
	}
	err = db.read(ctx, "listing capsules", func(tx queryer) error {
		q := newQuery("SELECT " + capColumns + ", c.seq FROM capsules c WHERE 1 = 1")
		q.scope("c", f.Scope)
		if f.Status != "" {
			q.add(" AND c.status = ?", string(f.Status))
		}
		if after > 0 {
			q.add(" AND c.seq < ?", after)
		}
		q.add(" ORDER BY c.seq DESC LIMIT ?", f.Limit+1)
		var seqs []int64
		err := eachRowArgs(ctx, tx, q.sql.String(), q.args, func(s scanner) error {
			var seq int64
			c, err := scanCapsule(withExtra{s, []any{&seq}})
			c.ObservationIDs = []string{}
			page.Capsules = append(page.Capsules, memory.CapsuleListing{Capsule: c})
			seqs = append(seqs, seq)
			return err
		})
		if err != nil {
			return err
		}
		if len(page.Capsules) > f.Limit {
			page.Capsules = page.Capsules[:f.Limit]
			page.Next = memory.SeqCursor(seqs[f.Limit-1])
		}
		if len(page.Capsules) == 0 {
			return nil
		}
		ids := make([]string, len(page.Capsules))
		at := make(map[string]int, len(ids))
		for i, c := range page.Capsules {
			ids[i], at[c.ID] = c.ID, i
		}
		q = newQuery("SELECT capsule_id, count(*) FROM capsule_observations WHERE 1 = 1")
		q.in("capsule_id", ids)
		q.add(" GROUP BY capsule_id")
		err = eachRowArgs(ctx, tx, q.sql.String(), q.args, func(s scanner) error {
			var id string
			var n int
			if err := s.Scan(&id, &n); err != nil {
				return err
			}
			page.Capsules[at[id]].Observations = n
			return nil
		})
		if err != nil {
			return err
		}
		q = newQuery("SELECT " + sumColumns + " FROM summaries s WHERE 1 = 1")
		q.in("s.capsule_id", ids)
		return eachRowArgs(ctx, tx, q.sql.String(), q.args, func(s scanner) error {
			m, err := scanSummary(s)
			if err != nil {
				return err
			}
			c := &page.Capsules[at[m.CapsuleID]]
			c.Summary, c.SummaryID = &m, m.ID
			return nil
		})
	})
	return page, err
}

// BrowseThoughts implements memory.Browser.
func (db *DB) BrowseThoughts(ctx context.Context, f memory.ThoughtBrowse) (memory.ThoughtPage, error) {
	page := memory.ThoughtPage{Thoughts: []memory.Thought{}}
	if err := memory.CheckPageSize(f.Limit); err != nil {
		return page, err
	}
	after, err := memory.ParseSeqCursor(f.After)
	if err != nil {
		return page, err
	}
	err = db.read(ctx, "listing thoughts", func(tx queryer) error {
		q := newQuery("SELECT " + sqlstore.ThoughtColumns + ", t.seq FROM thoughts t WHERE 1 = 1")
		q.scope("t", f.Scope)
		if !f.IncludePrivate {
			q.add(" AND t.is_private = 0")
		}
		if f.Status != "" {
			q.add(" AND t.status = ?", f.Status)
		}
		if f.Origin != "" {
			q.add(" AND t.origin = ?", string(f.Origin))
		}
		if f.Tag != "" {
			q.add(" AND EXISTS (SELECT 1 FROM json_each(t.tags) j WHERE j.value = ?)", f.Tag)
		}
		if f.Contains != "" {
			q.add(" AND instr(lower(t.content), lower(?)) > 0", f.Contains)
		}
		if after > 0 {
			q.add(" AND t.seq < ?", after)
		}
		q.add(" ORDER BY t.seq DESC LIMIT ?", f.Limit+1)
		var seqs []int64
		err := eachRowArgs(ctx, tx, q.sql.String(), q.args, func(s scanner) error {
			var seq int64
			t, err := sqlstore.ScanThought(withExtra{s, []any{&seq}})
			page.Thoughts = append(page.Thoughts, t)
			seqs = append(seqs, seq)
			return err
		})
		if err == nil && len(page.Thoughts) > f.Limit {
			page.Thoughts = page.Thoughts[:f.Limit]
			page.Next = memory.SeqCursor(seqs[f.Limit-1])
		}
		return err
	})
	return page, err
}

// BrowseEntities implements memory.Browser.
func (db *DB) BrowseEntities(ctx context.Context, f memory.EntityBrowse) (memory.EntityPage, error) {
	page := memory.EntityPage{Entities: []memory.KGEntity{}}
	if err := memory.CheckPageSize(f.Limit); err != nil {
		return page, err
	}
	afterKey, afterID, err := memory.ParseEntityCursor(f.After)
	if err != nil {
		return page, err
	}
	err = db.read(ctx, "listing entities", func(tx queryer) error {
		q := newQuery("SELECT " + entityColumns + ", e.name_key FROM kg_entities e WHERE 1 = 1")
		q.scope("e", f.Scope)
		if f.Type != "" {
			q.add(" AND e.type = ?", f.Type)
		}
		if p := strings.ToLower(f.Prefix); p != "" {
			q.add(" AND e.name_key >= ? AND substr(e.name_key, 1, ?) = ?", p, len([]rune(p)), p)
		}
		if afterID != "" {
			q.add(" AND (e.name_key > ? OR (e.name_key = ? AND e.id > ?))", afterKey, afterKey, afterID)
		}
		q.add(" ORDER BY e.name_key, e.id LIMIT ?", f.Limit+1)
		var keys []string
		err := eachRowArgs(ctx, tx, q.sql.String(), q.args, func(s scanner) error {
			var key string
			e, err := scanEntity(withExtra{s, []any{&key}})
			page.Entities = append(page.Entities, e)
			keys = append(keys, key)
			return err
		})
		if err == nil && len(page.Entities) > f.Limit {
			page.Entities = page.Entities[:f.Limit]
			page.Next = memory.EntityCursor(keys[f.Limit-1], page.Entities[f.Limit-1].ID)
		}
		return err
	})
	return page, err
}

// ScopeValues implements memory.Browser. Values come from observations,
// then capsules, thoughts and entities (values only they use): within each
// table the most recently written first.
func (db *DB) ScopeValues(ctx context.Context, limit int) (memory.ScopeValues, error) {
	out := memory.ScopeValues{Sessions: []string{}, Repos: []string{}, Agents: []string{}, Users: []string{}}
	if err := memory.CheckPageSize(limit); err != nil {
		return out, err
	}
	err := db.read(ctx, "listing scope values", func(tx queryer) error {
		for _, d := range []struct {
			col  string
			into *[]string
		}{{"session_id", &out.Sessions}, {"repo_id", &out.Repos}, {"agent_id", &out.Agents}, {"user_id", &out.Users}} {
			seen := map[string]bool{}
			for _, table := range []string{"observations", "capsules", "thoughts", "kg_entities"} {
				if len(*d.into) >= limit {
					break
				}
				sqlText := "SELECT " + d.col + " FROM " + table + " WHERE " + d.col + " <> '' GROUP BY " + d.col +
					" ORDER BY max(seq) DESC LIMIT ?"
				err := eachRowArgs(ctx, tx, sqlText, []any{limit}, func(s scanner) error {
					var v string
					if err := s.Scan(&v); err != nil {
						return err
					}
					if !seen[v] && len(*d.into) < limit {
						seen[v] = true
						*d.into = append(*d.into, v)
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	return out, err
}

// BrowseCodeEntities implements memory.Browser: a range of the primary
// key (repo_id, key) from the cursor on, and the filter's count.
func (db *DB) BrowseCodeEntities(ctx context.Context, f memory.CodeEntityBrowse) (memory.CodeEntityPage, error) {
	page := memory.CodeEntityPage{Entities: []memory.CodeEntity{}}
	after, err := f.Check()
	if err != nil {
		return page, err
	}
	filter := func(q *query) {
		if f.Path != "" {
			q.add(" AND e.path = ?", f.Path)
		}
		if f.State != "" {
			q.add(" AND e.state = ?", string(f.State))
		}
	}
	err = db.read(ctx, "listing code entities", func(tx queryer) error {
		page = memory.CodeEntityPage{Entities: []memory.CodeEntity{}}
		q := newQuery("SELECT count(*) FROM code_entities e WHERE e.repo_id = ?", f.RepoID)
		filter(q)
		if err := tx.QueryRowContext(ctx, q.sql.String(), q.args...).Scan(&page.Total); err != nil {
			return err
		}
		q = newQuery("SELECT "+codeEntityColumns+" FROM code_entities e WHERE e.repo_id = ?", f.RepoID)
		filter(q)
		if after != "" {
			q.add(" AND e.key > ?", after)
		}
		q.add(" ORDER BY e.key LIMIT ?", f.Limit+1)
		err := eachRowArgs(ctx, tx, q.sql.String(), q.args, func(s scanner) error {
			e, err := scanCodeEntity(s)
			page.Entities = append(page.Entities, e)
			return err
		})
		if err == nil && len(page.Entities) > f.Limit {
			page.Entities = page.Entities[:f.Limit]
			page.Next = memory.KeyCursor(page.Entities[f.Limit-1].Key)
		}
		return err
	})
	return page, err
}
