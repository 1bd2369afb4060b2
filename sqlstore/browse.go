package sqlstore

import (
	"context"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

var _ memory.Browser = (*Store)(nil)

// BrowseCapsules implements memory.Browser.
func (s *Store) BrowseCapsules(ctx context.Context, f memory.CapsuleFilter) (memory.CapsulePage, error) {
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
	err = s.b.Read(ctx, "listing capsules", func(tx Querier) error {
		page = memory.CapsulePage{Capsules: []memory.CapsuleListing{}}
		q := s.d.NewQuery("SELECT " + capColumns + ", c.seq FROM capsules c WHERE true")
		q.Scope("c", f.Scope)
		if f.Status != "" {
			q.Add(" AND c.status = ?", string(f.Status))
		}
		if after > 0 {
			q.Add(" AND c.seq < ?", after)
		}
		q.Add(" ORDER BY c.seq DESC LIMIT ?", f.Limit+1)
		var seqs []int64
		err := EachRow(ctx, tx, q.SQL(), q.Args(), func(sc Scanner) error {
			var seq int64
			c, err := scanCapsule(withExtra(sc, &seq))
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
		return s.capsuleDetails(ctx, tx, page.Capsules)
	})
	return page, err
}

// capsuleDetails fills in the listed capsules' observation counts and
// summaries.
func (s *Store) capsuleDetails(ctx context.Context, tx Querier, cs []memory.CapsuleListing) error {
	if len(cs) == 0 {
		return nil
	}
	ids := make([]string, len(cs))
	at := make(map[string]int, len(ids))
	for i, c := range cs {
		ids[i], at[c.ID] = c.ID, i
	}
	q := s.d.NewQuery("SELECT capsule_id, count(*) FROM capsule_observations WHERE true")
	q.In("capsule_id", ids)
	q.Add(" GROUP BY capsule_id")
	err := EachRow(ctx, tx, q.SQL(), q.Args(), func(sc Scanner) error {
		var id string
		var n int
		if err := sc.Scan(&id, &n); err != nil {
			return err
		}
		cs[at[id]].Observations = n
		return nil
	})
	if err != nil {
		return err
	}
	q = s.d.NewQuery("SELECT " + SumColumns + " FROM summaries s WHERE true")
	q.In("s.capsule_id", ids)
	return EachRow(ctx, tx, q.SQL(), q.Args(), func(sc Scanner) error {
		m, err := ScanSummary(sc)
		if err != nil {
			return err
		}
		c := &cs[at[m.CapsuleID]]
		c.Summary, c.SummaryID = &m, m.ID
		return nil
	})
}

// BrowseThoughts implements memory.Browser.
func (s *Store) BrowseThoughts(ctx context.Context, f memory.ThoughtBrowse) (memory.ThoughtPage, error) {
	page := memory.ThoughtPage{Thoughts: []memory.Thought{}}
	if err := memory.CheckPageSize(f.Limit); err != nil {
		return page, err
	}
	after, err := memory.ParseSeqCursor(f.After)
	if err != nil {
		return page, err
	}
	err = s.b.Read(ctx, "listing thoughts", func(tx Querier) error {
		page = memory.ThoughtPage{Thoughts: []memory.Thought{}}
		q := s.d.NewQuery("SELECT " + thoughtColumns + ", t.seq FROM thoughts t WHERE true")
		q.Scope("t", f.Scope)
		if !f.IncludePrivate {
			q.Add(" AND t.is_private = false")
		}
		if f.Status != "" {
			q.Add(" AND t.status = ?", f.Status)
		}
		if f.Origin != "" {
			q.Add(" AND t.origin = ?", string(f.Origin))
		}
		if f.Tag != "" {
			q.Add(" AND "+s.d.JSONListHas("t.tags"), f.Tag)
		}
		if f.Contains != "" {
			q.Add(" AND "+s.d.ContainsFold("t.content"), f.Contains)
		}
		if after > 0 {
			q.Add(" AND t.seq < ?", after)
		}
		q.Add(" ORDER BY t.seq DESC LIMIT ?", f.Limit+1)
		var seqs []int64
		err := EachRow(ctx, tx, q.SQL(), q.Args(), func(sc Scanner) error {
			var seq int64
			t, err := scanThought(withExtra(sc, &seq))
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
func (s *Store) BrowseEntities(ctx context.Context, f memory.EntityBrowse) (memory.EntityPage, error) {
	page := memory.EntityPage{Entities: []memory.KGEntity{}}
	if err := memory.CheckPageSize(f.Limit); err != nil {
		return page, err
	}
	afterKey, afterID, err := memory.ParseEntityCursor(f.After)
	if err != nil {
		return page, err
	}
	err = s.b.Read(ctx, "listing entities", func(tx Querier) error {
		page = memory.EntityPage{Entities: []memory.KGEntity{}}
		q := s.d.NewQuery("SELECT " + entityColumns + ", e.name_key FROM kg_entities e WHERE true")
		q.Scope("e", f.Scope)
		if f.Type != "" {
			q.Add(" AND e.type = ?", f.Type)
		}
		if p := strings.ToLower(f.Prefix); p != "" {
			// A range of the name index, then the prefix itself (its
			// length in characters, as both engines count them).
			q.Add(" AND e.name_key >= ? AND substr(e.name_key, 1, ?) = ?", p, len([]rune(p)), p)
		}
		if afterID != "" {
			q.Add(" AND (e.name_key > ? OR (e.name_key = ? AND e.id > ?))", afterKey, afterKey, afterID)
		}
		q.Add(" ORDER BY e.name_key, e.id LIMIT ?", f.Limit+1)
		var keys []string
		err := EachRow(ctx, tx, q.SQL(), q.Args(), func(sc Scanner) error {
			var key string
			e, err := scanEntity(withExtra(sc, &key))
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
func (s *Store) ScopeValues(ctx context.Context, limit int) (memory.ScopeValues, error) {
	empty := func() memory.ScopeValues {
		return memory.ScopeValues{Sessions: []string{}, Repos: []string{}, Agents: []string{}, Users: []string{}}
	}
	out := empty()
	if err := memory.CheckPageSize(limit); err != nil {
		return out, err
	}
	err := s.b.Read(ctx, "listing scope values", func(q Querier) error {
		out = empty()
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
				err := EachRow(ctx, q, sqlText, []any{limit}, func(sc Scanner) error {
					var v string
					if err := sc.Scan(&v); err != nil {
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
// key (repo_id, key) from the cursor on (keys compare by their bytes), and
// the filter's count.
func (s *Store) BrowseCodeEntities(ctx context.Context, f memory.CodeEntityBrowse) (memory.CodeEntityPage, error) {
	page := memory.CodeEntityPage{Entities: []memory.CodeEntity{}}
	after, err := f.Check()
	if err != nil {
		return page, err
	}
	filter := func(q *Query) {
		if f.Path != "" {
			q.Add(" AND e.path = ?", f.Path)
		}
		if f.State != "" {
			q.Add(" AND e.state = ?", string(f.State))
		}
	}
	err = s.b.Read(ctx, "listing code entities", func(tx Querier) error {
		page = memory.CodeEntityPage{Entities: []memory.CodeEntity{}}
		q := s.d.NewQuery("SELECT count(*) FROM code_entities e WHERE e.repo_id = ?", f.RepoID)
		filter(q)
		var total int64
		if err := tx.QueryRow(ctx, q.SQL(), q.Args()...).Scan(&total); err != nil {
			return err
		}
		page.Total = int(total)
		q = s.d.NewQuery("SELECT "+codeEntityColumns+" FROM code_entities e WHERE e.repo_id = ?", f.RepoID)
		filter(q)
		if after != "" {
			q.Add(" AND e.key > ?", after)
		}
		q.Add(" ORDER BY e.key LIMIT ?", f.Limit+1)
		err := EachRow(ctx, tx, q.SQL(), q.Args(), func(sc Scanner) error {
			e, err := scanCodeEntity(sc)
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
