package code

import (
	"context"

	"github.com/cairnhq/cairn/memory"
)

// StaleEntity is an entity the disk no longer agrees with.
type StaleEntity struct {
	EntityKey string    `json:"entity_key"`
	ETV       ETVResult `json:"etv"`
}

// VerifyReport is the result of verifying a repository's AUTHORITATIVE
// entities against the disk.
type VerifyReport struct {
	RepoID  string        `json:"repo_id"`
	Checked int           `json:"checked"`
	Fresh   int           `json:"fresh"`
	Stale   []StaleEntity `json:"stale"`
	Cache   ETVStats      `json:"cache"`
}

// Verify runs External Truth Verification over every AUTHORITATIVE entity
// of a repository (or the keys given) and reports the stale ones. It
// changes nothing: stale entities keep their state until indexed again.
func (m *Memory) Verify(ctx context.Context, repoID string, keys []string) (VerifyReport, error) {
	repo, err := m.repo(ctx, repoID)
	if err != nil {
		return VerifyReport{}, err
	}
	for _, k := range keys {
		if _, _, err := ParseKey(k); err != nil {
			return VerifyReport{}, err
		}
	}
	ents, err := m.store.CodeEntities(ctx, memory.CodeEntityFilter{RepoID: repo.ID, Keys: keys, States: []memory.CodeState{memory.StateAuthoritative}})
	if err != nil {
		return VerifyReport{}, err
	}
	rep := VerifyReport{RepoID: repo.ID, Stale: []StaleEntity{}}
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return rep, memory.Wrap(memory.CodeInvalidParams, err, "verification interrupted after %d entities", rep.Checked)
		}
		r := m.verifier.Check(repo.Root, e, m.maxBytes)
		rep.Checked++
		if r.IsStale {
			rep.Stale = append(rep.Stale, StaleEntity{EntityKey: e.Key, ETV: r})
		} else {
			rep.Fresh++
		}
	}
	rep.Cache = m.verifier.Stats()
	m.log.Info("code verify", "repo", repo.ID, "checked", rep.Checked, "stale", len(rep.Stale), "hit_rate", rep.Cache.HitRate)
	return rep, nil
}

// Entities lists a repository's entities, optionally of one file or state.
func (m *Memory) Entities(ctx context.Context, repoID, path string, state memory.CodeState) (string, []memory.CodeEntity, error) {
	if state != "" && !state.Valid() {
		return "", nil, memory.Errorf(memory.CodeInvalidParams, "state %q is not one of PROPOSED, AUTHORITATIVE, SUPERSEDED, TOMBSTONED", state)
	}
	repo, err := m.repo(ctx, repoID)
	if err != nil {
		return "", nil, err
	}
	f := memory.CodeEntityFilter{RepoID: repo.ID, Path: path}
	if state != "" {
		f.States = []memory.CodeState{state}
	}
	ents, err := m.store.CodeEntities(ctx, f)
	if ents == nil {
		ents = []memory.CodeEntity{}
	}
	return repo.ID, ents, err
}
