package code

import (
	"context"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// ProposeRequest records a new artifact for an entity (new or existing):
// code the agent wrote, a diff, a decision, or something the user pasted.
type ProposeRequest struct {
	RepoID    string
	Key       string
	Content   string
	Type      memory.ArtifactType
	EpisodeID string
	SessionID string
}

// Proposal is the entity as proposed, with its artifact's hash.
type Proposal struct {
	Entity   memory.CodeEntity `json:"entity"`
	Artifact string            `json:"artifact_hash"`
	// Changed is false when the entity already holds this artifact.
	Changed bool `json:"changed"`
}

// Propose stores content as an artifact in the vault and makes it the
// entity's PROPOSED artifact, superseding an AUTHORITATIVE one (which
// stays in the ledger). The entity becomes AUTHORITATIVE only through the
// gates (Promote), and only once the disk holds exactly this text.
func (m *Memory) Propose(ctx context.Context, in ProposeRequest) (Proposal, error) {
	return retryEpisode(ctx, func() (Proposal, error) { return m.proposeOnce(ctx, in) })
}

// proposeOnce is one attempt at Propose; it reads the episode afresh.
func (m *Memory) proposeOnce(ctx context.Context, in ProposeRequest) (Proposal, error) {
	path, symbol, err := ParseKey(in.Key)
	if err != nil {
		return Proposal{}, err
	}
	if in.Type == "" {
		in.Type = memory.ArtifactCode
	}
	switch {
	case !in.Type.Valid():
		return Proposal{}, memory.Errorf(memory.CodeInvalidParams, "artifact_type %q is not one of code, diff, decision, user_paste", in.Type)
	case strings.TrimSpace(in.Content) == "":
		return Proposal{}, memory.Errorf(memory.CodeInvalidParams, "content is required")
	case int64(len(in.Content)) > m.maxBytes:
		return Proposal{}, memory.Errorf(memory.CodeInvalidParams, "content is %d bytes, over the %d-byte limit", len(in.Content), m.maxBytes)
	}
	repo, err := m.repo(ctx, in.RepoID)
	if err != nil {
		return Proposal{}, err
	}
	if _, err := Confine(repo.Root, path); err != nil && !memory.IsCode(err, memory.CodeNotFound) {
		return Proposal{}, err
	}
	ep, err := m.episode(ctx, in.EpisodeID, in.SessionID, repo.ID)
	if err != nil {
		return Proposal{}, err
	}
	cur := memory.CodeEntity{}
	got, err := m.store.CodeEntities(ctx, memory.CodeEntityFilter{RepoID: repo.ID, Keys: []string{in.Key}})
	if err != nil {
		return Proposal{}, err
	}
	if len(got) == 1 {
		cur = got[0]
	}
	at := m.nowMs()
	art := NewArtifact(in.Type, in.Content, at)
	next := memory.CodeEntity{
		RepoID: repo.ID, Key: in.Key, Path: path, Symbol: symbol, Kind: cur.Kind, Language: LanguageOf(path),
		StartLine: cur.StartLine, EndLine: cur.EndLine, ArtifactHash: art.Hash, UpdatedAt: at,
	}
	next.Method, next.Kind = resolveFragment(path, symbol, in.Content, cur.Kind)
	e, log, guard, changed := propose(cur, next, ep.ID, "proposed "+string(in.Type)+" artifact", at)
	if !changed {
		return Proposal{Entity: cur, Artifact: art.Hash}, nil
	}
	ep.UpdatedAt = at
	change := &memory.CodeChange{Artifacts: []memory.Artifact{art}, Entities: []memory.CodeEntity{e}, Transitions: log, Guards: []memory.CodeGuard{guard}}
	if _, err := m.store.ApplyEpisode(ctx, memory.EpisodeChange{Episode: ep, Code: change}); err != nil {
		return Proposal{}, err
	}
	if err := m.store.PutCodeRepo(ctx, memory.CodeRepo{ID: repo.ID, Root: repo.Root, IndexedAt: max(at, repo.IndexedAt+1)}); err != nil {
		return Proposal{}, err
	}
	m.embedPending(ctx)
	m.log.Info("code proposal", "entity", in.Key, "episode", ep.ID, "artifact", short(art.Hash), "type", string(in.Type))
	return Proposal{Entity: e, Artifact: art.Hash, Changed: true}, nil
}

// resolveFragment says how a proposed text resolves: "ast" when an AST
// parser finds the symbol in it (Go fragments are parsed with a package
// clause added), else "regex".
func resolveFragment(path, symbol, text, kind string) (string, string) {
	try := func(src string) (string, bool) {
		r := Resolve(path, []byte(src))
		if r.Method != "ast" {
			return "", false
		}
		for _, s := range r.Symbols {
			if s.Name == symbol {
				return s.Kind, true
			}
		}
		return "", false
	}
	if k, ok := try(text); ok {
		return "ast", k
	}
	if LanguageOf(path) == "go" && !strings.HasPrefix(strings.TrimSpace(text), "package ") {
		if k, ok := try("package p\n\n" + text); ok {
			return "ast", k
		}
	}
	return "regex", kind
}
