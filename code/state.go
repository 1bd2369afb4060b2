package code

import (
	"github.com/cairnhq/cairn/memory"
)

// transition appends the ledger entry for e moving to state to with
// artifact hash, and returns e in its new state.
func transition(e memory.CodeEntity, to memory.CodeState, hash, episode, reason string, at int64, log *[]memory.CodeTransition) memory.CodeEntity {
	*log = append(*log, memory.CodeTransition{
		RepoID: e.RepoID, Key: e.Key, From: e.State, To: to, ArtifactHash: hash,
		EpisodeID: episode, Reason: reason, At: at,
	})
	e.State = to
	e.ArtifactHash = hash
	e.UpdatedAt = at
	return e
}

// propose records a new artifact for an entity: cur is the stored entity
// (State empty when there is none), next the entity as resolved now with
// ArtifactHash set to the new artifact. It returns the entity to store, the
// ledger entries and the guard that makes the write compare-and-set.
//
// An AUTHORITATIVE entity is first SUPERSEDED (its old artifact stays in
// the ledger), then PROPOSED with the new one; an entity whose artifact is
// unchanged and still live needs nothing (ok false).
func propose(cur, next memory.CodeEntity, episode, reason string, at int64) (memory.CodeEntity, []memory.CodeTransition, memory.CodeGuard, bool) {
	guard := memory.CodeGuard{RepoID: next.RepoID, Key: next.Key, State: cur.State, ArtifactHash: cur.ArtifactHash}
	if cur.State != "" && cur.State != memory.StateTombstoned && cur.ArtifactHash == next.ArtifactHash {
		return cur, nil, guard, false
	}
	hash := next.ArtifactHash
	e := next
	e.State = cur.State
	e.ArtifactHash = cur.ArtifactHash
	var log []memory.CodeTransition
	if cur.State == memory.StateAuthoritative {
		e = transition(e, memory.StateSuperseded, cur.ArtifactHash, episode, "superseded by artifact "+short(hash), at, &log)
	}
	e = transition(e, memory.StateProposed, hash, episode, reason, at, &log)
	return e, log, guard, true
}

// Update moves an entity to state to with artifact hash, enforcing the
// lifecycle: an AUTHORITATIVE entity keeps its artifact unless a new one
// (a different hash) is proposed, so "update to AUTHORITATIVE with the same
// hash" and any change of an AUTHORITATIVE artifact without supersession
// are conflicts (invariant 4). It returns the ledger entries to append.
func Update(cur memory.CodeEntity, hash string, to memory.CodeState, episode, reason string, at int64) (memory.CodeEntity, []memory.CodeTransition, error) {
	if !to.Valid() {
		return cur, nil, memory.Errorf(memory.CodeInvalidParams, "unknown state %q (PROPOSED, AUTHORITATIVE, SUPERSEDED, TOMBSTONED)", to)
	}
	var log []memory.CodeTransition
	switch {
	case to == memory.StateTombstoned:
		// An entity leaves the disk from any state, keeping its artifact.
		if cur.State == memory.StateTombstoned {
			return cur, nil, memory.Errorf(memory.CodeConflict, "%s is already TOMBSTONED", cur.Key)
		}
		hash = cur.ArtifactHash
	case to == memory.StateSuperseded:
		return cur, nil, memory.Errorf(memory.CodeInvalidParams, "%s: an entity is SUPERSEDED only by proposing a new artifact", cur.Key)
	case cur.State == memory.StateAuthoritative && hash == cur.ArtifactHash:
		return cur, nil, memory.Errorf(memory.CodeConflict, "%s is AUTHORITATIVE with artifact %s; changing it needs a new artifact", cur.Key, short(hash))
	case cur.State == memory.StateAuthoritative && to == memory.StateAuthoritative:
		return cur, nil, memory.Errorf(memory.CodeConflict, "%s is AUTHORITATIVE; a new artifact must be proposed and pass the gates, not written over it", cur.Key)
	case cur.State == memory.StateAuthoritative:
		cur = transition(cur, memory.StateSuperseded, cur.ArtifactHash, episode, "superseded by artifact "+short(hash), at, &log)
	case to == memory.StateAuthoritative && cur.State != memory.StateProposed:
		return cur, nil, memory.Errorf(memory.CodeConflict, "%s is %s; only a PROPOSED entity can become AUTHORITATIVE", cur.Key, orNone(cur.State))
	case to == memory.StateAuthoritative && hash != cur.ArtifactHash:
		return cur, nil, memory.Errorf(memory.CodeConflict, "%s: the proposed artifact is %s, not %s", cur.Key, short(cur.ArtifactHash), short(hash))
	}
	cur = transition(cur, to, hash, episode, reason, at, &log)
	return cur, log, nil
}

func orNone(s memory.CodeState) string {
	if s == "" {
		return "unknown"
	}
	return string(s)
}
