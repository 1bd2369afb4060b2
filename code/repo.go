package code

import (
	"context"
	"errors"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// Repo finds a registered repository: the one named, or the only one
// indexed (not_found when none is, invalid_params when several are).
func (m *Memory) Repo(ctx context.Context, id string) (memory.CodeRepo, error) {
	return m.repo(ctx, id)
}

// repo finds a registered repository: the one named, or the only one.
func (m *Memory) repo(ctx context.Context, id string) (memory.CodeRepo, error) {
	if id != "" {
		r, err := m.store.CodeRepo(ctx, id)
		if memory.IsCode(err, memory.CodeNotFound) {
			return r, memory.Errorf(memory.CodeNotFound, "no repository %q is indexed; run `cairn code index PATH` first", id)
		}
		return r, err
	}
	rs, err := m.store.CodeRepos(ctx)
	if err != nil {
		return memory.CodeRepo{}, err
	}
	switch len(rs) {
	case 0:
		return memory.CodeRepo{}, memory.Errorf(memory.CodeNotFound, "no repository is indexed; run `cairn code index PATH` first")
	case 1:
		return rs[0], nil
	}
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	return memory.CodeRepo{}, memory.Errorf(memory.CodeInvalidParams, "several repositories are indexed (%s); name one with repo_id", strings.Join(ids, ", "))
}

// validID accepts episode, session and repository ids: 1 to 128 letters,
// digits and "_-.:@/".
func validID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.:@/", r)) {
			return false
		}
	}
	return true
}

// episode returns the stored episode id, or a new one in session when it
// does not exist yet.
func (m *Memory) episode(ctx context.Context, id, session, repoID string) (memory.Episode, error) {
	if !validID(id) {
		return memory.Episode{}, memory.Errorf(memory.CodeInvalidParams, "episode_id %q must be 1 to 128 letters, digits or _-.:@/", id)
	}
	if session != "" && !validID(session) {
		return memory.Episode{}, memory.Errorf(memory.CodeInvalidParams, "session_id %q must be 1 to 128 letters, digits or _-.:@/", session)
	}
	ep, err := m.store.Episode(ctx, id)
	switch {
	case err == nil:
		if session != "" && ep.SessionID != session {
			return ep, memory.Errorf(memory.CodeConflict, "episode %s belongs to session %s, not %s", id, ep.SessionID, session)
		}
		if ep.RepoID != "" && repoID != "" && ep.RepoID != repoID {
			return ep, memory.Errorf(memory.CodeConflict, "episode %s is about repository %s, not %s", id, ep.RepoID, repoID)
		}
		return ep, nil
	case !memory.IsCode(err, memory.CodeNotFound):
		return ep, err
	}
	if session == "" {
		return ep, memory.Errorf(memory.CodeInvalidParams, "episode %s is new: give its session_id", id)
	}
	now := m.nowMs()
	return memory.Episode{ID: id, SessionID: session, RepoID: repoID, CreatedAt: now, UpdatedAt: now}, nil
}

// maxEpisodeAttempts bounds how often a change is redone when another
// writer appended to the same episode first.
const maxEpisodeAttempts = 8

// retryEpisode runs fn again while it fails because the episode changed
// under it (memory.ErrEpisodeChanged); fn reads the episode afresh each
// time, so concurrent hydrations of one episode all land, in some order,
// and its seal stays whole.
func retryEpisode[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		v, err := fn()
		if err == nil || !errors.Is(err, memory.ErrEpisodeChanged) || attempt == maxEpisodeAttempts || ctx.Err() != nil {
			return v, err
		}
	}
}
