package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// StageOptions choose which extracted items become candidates.
type StageOptions struct {
	// MinConfidence keeps items at or above it.
	MinConfidence float64
	// MaxNodes and MaxEdges cap the entities and edges kept, most
	// confident first.
	MaxNodes, MaxEdges int
	// NewID makes a candidate id; Now is the time (Unix ms).
	NewID func(prefix string) string
	Now   int64
	// Scopes are the source thoughts' scopes, by thought id: a candidate
	// takes its source's.
	Scopes map[string]memory.Scope
	// Private are the private source thoughts, by id: a candidate whose
	// quoted sentence comes from one records "private": true in its data,
	// so that listings can leave it out unless private records are asked
	// for.
	Private map[string]bool
}

// StagePlan is what an extraction stages, and what it leaves out.
type StagePlan struct {
	Candidates []memory.KGCandidate
	// BelowConfidence and OverCap count the items left out by the
	// threshold and by the caps; Invalid those whose name or relation is
	// no valid graph label.
	BelowConfidence, OverCap, Invalid int
}

// Plan turns an extraction into candidates to stage: entities first, then
// edges, each most confident first.
func Plan(x Extraction, o StageOptions) StagePlan {
	var p StagePlan
	nodes, edges := 0, 0
	for _, e := range x.Entities {
		switch {
		case e.Confidence < o.MinConfidence:
			p.BelowConfidence++
			continue
		case nodes >= o.MaxNodes:
			p.OverCap++
			continue
		}
		c := memory.KGCandidate{ID: o.NewID("kgc"), Kind: memory.CandidateEntity, Name: e.Name, EntityType: e.Type,
			Data: evidence(e.Sentence, e.Rule, o.private(e.SourceID, map[string]any{"mentions": e.Mentions})), Confidence: e.Confidence,
			SourceThoughtID: e.SourceID, Status: memory.CandidatePending, CreatedAt: o.Now, Scope: o.Scopes[e.SourceID]}
		if CheckCandidate(c) != nil {
			p.Invalid++
			continue
		}
		p.Candidates = append(p.Candidates, c)
		nodes++
	}
	types := map[string]string{}
	for _, e := range x.Entities {
		types[memory.NameKey(e.Name)] = e.Type
	}
	for _, g := range x.Edges {
		switch {
		case g.Confidence < o.MinConfidence:
			p.BelowConfidence++
			continue
		case edges >= o.MaxEdges:
			p.OverCap++
			continue
		}
		c := memory.KGCandidate{ID: o.NewID("kgc"), Kind: memory.CandidateEdge, SourceName: g.Source, Relation: g.Relation,
			TargetName: g.Target, Confidence: g.Confidence, SourceThoughtID: g.SourceID, Status: memory.CandidatePending,
			CreatedAt: o.Now, Scope: o.Scopes[g.SourceID],
			Data: evidence(g.Sentence, g.Rule, o.private(g.SourceID, map[string]any{"source_type": types[memory.NameKey(g.Source)],
				"target_type": types[memory.NameKey(g.Target)]}))}
		if CheckCandidate(c) != nil {
			p.Invalid++
			continue
		}
		p.Candidates = append(p.Candidates, c)
		edges++
	}
	return p
}

// private adds "private": true to a candidate's extra data when its
// sentence comes from a private thought.
func (o StageOptions) private(sourceID string, extra map[string]any) map[string]any {
	if o.Private[sourceID] {
		extra["private"] = true
	}
	return extra
}

// evidence is a candidate's data: the sentence it came from (at most 300
// characters), the rule that found it, and extra facts.
func evidence(sentence, rule string, extra map[string]any) memory.RawObject {
	if r := []rune(sentence); len(r) > 300 {
		sentence = string(r[:299]) + "…"
	}
	m := map[string]any{"sentence": sentence, "rule": rule}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return memory.RawObject(b)
}

// CheckCandidate validates a candidate as the graph would validate what
// it becomes.
func CheckCandidate(c memory.KGCandidate) error {
	if c.Confidence < 0 || c.Confidence > 1 {
		return memory.Errorf(memory.CodeInvalidParams, "confidence %v is out of range [0, 1]", c.Confidence)
	}
	switch c.Kind {
	case memory.CandidateEntity:
		return CheckEntity(memory.KGEntity{Name: c.Name, Type: c.EntityType, Data: c.Data, Scope: c.Scope})
	case memory.CandidateEdge:
		for _, n := range []string{c.SourceName, c.TargetName} {
			if err := CheckEntity(memory.KGEntity{Name: n, Type: "concept"}); err != nil {
				return err
			}
		}
		return CheckEdge(memory.KGEdge{Source: "s", Target: "t", Relation: c.Relation, Data: c.Data, Scope: c.Scope})
	}
	return memory.Errorf(memory.CodeInvalidParams, "candidate kind %q: want entity or edge", c.Kind)
}

// Lookup is what a promotion reads of the graph.
type Lookup interface {
	Entity(ctx context.Context, id string) (memory.KGEntity, error)
	EntitiesByName(ctx context.Context, name string) ([]memory.KGEntity, error)
	Edges(ctx context.Context, entityID string, limit int) ([]memory.KGEdge, error)
}

// Promotion is what approving a candidate writes, and how.
type Promotion struct {
	Decision memory.CandidateDecision
	// Created are the ids of the entities it creates; Merged says the
	// candidate joins a record the graph has (an entity of the same name,
	// the one canonical_id names, or an equal edge).
	Created []string
	Merged  bool
}

// PlanPromotion decides what approving c writes. An entity candidate
// merges into the entity canonicalID names (an entity candidate only),
// else into the oldest entity of its name (any case), else becomes a new
// entity of its type. An edge candidate joins the entities of its names,
// creating those missing (with the type the extractor saw, or concept);
// it merges into an edge of the same relation between them, else becomes
// a new edge. Every entity or edge it creates or merges into records the
// candidate's source thought in its data (source_thought_ids). An entity
// whose name is blocked (blocked holds the blocklist's entity entries, by
// name key) is never created: that is a conflict.
func PlanPromotion(ctx context.Context, lk Lookup, c memory.KGCandidate, canonicalID string, blocked map[string]memory.BlockedKey,
	newID func(string) string, now int64) (Promotion, error) {
	var p Promotion
	d := &p.Decision
	d.ID, d.Status, d.DecidedAt = c.ID, memory.CandidateApproved, now
	// resolve finds or creates the entity of a name.
	resolve := func(name, typ, canonical string) (memory.KGEntity, error) {
		if canonical != "" {
			ent, err := lk.Entity(ctx, canonical)
			if err != nil {
				return ent, err
			}
			p.Merged = true
			return ent, nil
		}
		same, err := lk.EntitiesByName(ctx, name)
		if err != nil {
			return memory.KGEntity{}, err
		}
		for _, ent := range d.Entities {
			if memory.NameKey(ent.Name) == memory.NameKey(name) {
				return ent, nil
			}
		}
		if len(same) > 0 {
			p.Merged = p.Merged || c.Kind == memory.CandidateEntity
			return same[0], nil
		}
		if b, ok := blocked[memory.NameKey(name)]; ok {
			return memory.KGEntity{}, blockedName(c, name, b)
		}
		if typ == "" || CheckLabel("type", typ, MaxTypeBytes) != nil {
			typ = "concept"
		}
		ent := memory.KGEntity{ID: newID("ent"), Name: name, Type: typ, CreatedAt: now, UpdatedAt: now, Scope: c.Scope}
		p.Created = append(p.Created, ent.ID)
		return ent, nil
	}
	// withProvenance records the candidate on an entity to write.
	withProvenance := func(ent memory.KGEntity) {
		ent.Data = addProvenance(ent.Data, c)
		if !slices.Contains(p.Created, ent.ID) {
			ent.UpdatedAt = now
		}
		for i, e := range d.Entities {
			if e.ID == ent.ID {
				d.Entities[i] = ent
				return
			}
		}
		d.Entities = append(d.Entities, ent)
	}
	switch c.Kind {
	case memory.CandidateEntity:
		ent, err := resolve(c.Name, c.EntityType, canonicalID)
		if err != nil {
			return p, err
		}
		withProvenance(ent)
		d.PromotedID = ent.ID
	case memory.CandidateEdge:
		if canonicalID != "" {
			return p, memory.Errorf(memory.CodeInvalidParams, "canonical_id merges an entity candidate into an entity; %s is an edge candidate", c.ID)
		}
		var data struct {
			SourceType string `json:"source_type"`
			TargetType string `json:"target_type"`
		}
		_ = json.Unmarshal(c.Data, &data)
		src, err := resolve(c.SourceName, data.SourceType, "")
		if err != nil {
			return p, err
		}
		if slices.Contains(p.Created, src.ID) {
			withProvenance(src)
		}
		dst, err := resolve(c.TargetName, data.TargetType, "")
		if err != nil {
			return p, err
		}
		if slices.Contains(p.Created, dst.ID) {
			withProvenance(dst)
		}
		if src.ID == dst.ID {
			return p, memory.Errorf(memory.CodeConflict, "candidate %s relates %q to itself", c.ID, c.SourceName)
		}
		existing, err := lk.Edges(ctx, src.ID, 1000)
		if err != nil {
			return p, err
		}
		for _, g := range existing {
			if g.Source == src.ID && g.Target == dst.ID && strings.EqualFold(g.Relation, c.Relation) {
				p.Merged, d.PromotedID = true, g.ID
				return p, nil
			}
		}
		g := memory.KGEdge{ID: newID("edge"), Source: src.ID, Target: dst.ID, Relation: c.Relation, CreatedAt: now, Scope: src.Scope}
		g.Data = addProvenance(nil, c)
		d.Edge, d.PromotedID = &g, g.ID
	default:
		return p, memory.Errorf(memory.CodeInvalidParams, "candidate kind %q: want entity or edge", c.Kind)
	}
	return p, nil
}

// addProvenance adds the candidate's source thought to a record's data
// (the list source_thought_ids, without duplicates). The candidate, kept
// as approved, names what it became (promoted_id).
func addProvenance(data memory.RawObject, c memory.KGCandidate) memory.RawObject {
	m := map[string]any{}
	if len(data) > 0 {
		_ = json.Unmarshal(data, &m)
	}
	add := func(key, v string) {
		if v == "" {
			return
		}
		var list []any
		if l, ok := m[key].([]any); ok {
			list = l
		}
		if !slices.Contains(list, any(v)) {
			list = append(list, v)
		}
		m[key] = list
	}
	add("source_thought_ids", c.SourceThoughtID)
	b, _ := json.Marshal(m)
	return memory.RawObject(b)
}

// blockedName is the conflict of approving a candidate that would bring
// a blocked name (or edge) into the graph.
func blockedName(c memory.KGCandidate, name string, b memory.BlockedKey) error {
	return memory.Errorf(memory.CodeConflict, "%s", blockedReason(c, name, b))
}

// blockedReason says why a candidate may not be approved: it names the
// candidate, the blocked name (or edge) and the rejection that blocked it.
func blockedReason(c memory.KGCandidate, name string, b memory.BlockedKey) string {
	what := fmt.Sprintf("the name %q", name)
	if b.Kind == memory.CandidateEdge {
		what = fmt.Sprintf("the edge %q", name)
	}
	by := ""
	if b.CandidateID != "" {
		by = " by rejecting candidate " + b.CandidateID
	}
	return fmt.Sprintf("candidate %s brings %s into the graph, which was blocked%s: unblock it (action unblock, kind %s, key %q) to approve",
		c.ID, what, by, b.Kind, b.Key)
}

// blockedBy is the blocklist entry that keeps a candidate out of the
// graph, and the name (or edge) it blocks: its own key, or for an edge
// either entity's name. ok is false when none does.
func blockedBy(c memory.KGCandidate, bl map[string]memory.BlockedKey) (memory.BlockedKey, string, bool) {
	if b, ok := bl[string(c.Kind)+"\x00"+c.Key()]; ok {
		name := c.Name
		if c.Kind == memory.CandidateEdge {
			name = c.SourceName + " -" + c.Relation + "-> " + c.TargetName
		}
		return b, name, true
	}
	if c.Kind == memory.CandidateEdge {
		for _, n := range []string{c.SourceName, c.TargetName} {
			if b, ok := bl[string(memory.CandidateEntity)+"\x00"+memory.NameKey(n)]; ok {
				return b, n, true
			}
		}
	}
	return memory.BlockedKey{}, "", false
}
