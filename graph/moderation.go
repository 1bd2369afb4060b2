package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// Moderation of knowledge-graph candidates (knowledgegraph_moderate, as
// the specification names it).

// CandidatesRequest lists knowledge-graph candidates.
type CandidatesRequest struct {
	Kind            string   `json:"kind,omitempty" jsonschema:"entity or edge (relationship); default both"`
	Status          string   `json:"status,omitempty" jsonschema:"pending (default), approved, rejected or all"`
	MinConfidence   *float64 `json:"min_confidence,omitempty" jsonschema:"only candidates at least this confident, 0 to 1"`
	SourceThoughtID string   `json:"source_thought_id,omitempty" jsonschema:"only candidates extracted from this thought"`
	Limit           int      `json:"limit,omitempty" jsonschema:"most candidates to return, 1 to 1000; default 100"`
	Offset          int      `json:"offset,omitempty" jsonschema:"skip this many (paging)"`
	IncludePrivate  bool     `json:"include_private,omitempty" jsonschema:"list candidates extracted from private thoughts too (their sentences quote private text); default false"`
}

// CandidateList is a page of candidates, most confident first.
type CandidateList struct {
	Candidates []memory.KGCandidate `json:"candidates"`
	// PrivateExcluded counts the candidates the filters select that were
	// left out as private (extracted from a private thought) because
	// private records were not asked for.
	PrivateExcluded int `json:"private_excluded"`
}

func (cur *Curator) needCandidates() error {
	if cur.Staged == nil {
		return memory.Errorf(memory.CodeFeatureDisabled, "this store does not keep knowledge-graph candidates")
	}
	return nil
}

// candidateKind reads a kind: entity, or edge (relationship); "" and
// mixed are both.
func candidateKind(s string) (memory.CandidateKind, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "mixed", "all":
		return "", nil
	case "entity", "entities":
		return memory.CandidateEntity, nil
	case "edge", "edges", "relationship", "relationships", "relation":
		return memory.CandidateEdge, nil
	}
	return "", memory.Errorf(memory.CodeInvalidParams, "kind %q: want entity, edge (relationship) or mixed", s)
}

func (req CandidatesRequest) filter() (memory.CandidateFilter, error) {
	var f memory.CandidateFilter
	kind, err := candidateKind(req.Kind)
	if err != nil {
		return f, err
	}
	f.Kind = kind
	switch strings.ToLower(req.Status) {
	case "", memory.CandidatePending:
		f.Status = memory.CandidatePending
	case memory.CandidateApproved, "promoted":
		f.Status = memory.CandidateApproved
	case memory.CandidateRejected:
		f.Status = memory.CandidateRejected
	case "all":
	default:
		return f, memory.Errorf(memory.CodeInvalidParams, "status %q: want pending, approved, rejected or all", req.Status)
	}
	if req.MinConfidence != nil {
		if v := *req.MinConfidence; math.IsNaN(v) || v < 0 || v > 1 {
			return f, memory.Errorf(memory.CodeInvalidParams, "min_confidence %v is out of range [0, 1]", v)
		}
		f.MinConfidence = *req.MinConfidence
	}
	if req.Limit < 0 || req.Limit > 1000 || req.Offset < 0 {
		return f, memory.Errorf(memory.CodeInvalidParams, "limit %d / offset %d: limit is 1 to 1000, offset at least 0", req.Limit, req.Offset)
	}
	if err := memory.ValidateRef("source_thought_id", req.SourceThoughtID, true); err != nil {
		return f, err
	}
	f.SourceThoughtID, f.Limit, f.Offset = req.SourceThoughtID, req.Limit, req.Offset
	if f.Limit == 0 {
		f.Limit = 100
	}
	return f, nil
}

// Candidates lists knowledge-graph candidates, most confident first.
// Candidates extracted from a private thought (marked private when
// staged, or whose source thought is private) are listed only with
// include_private; otherwise they are left out, and counted.
func (cur *Curator) Candidates(ctx context.Context, req CandidatesRequest) (CandidateList, error) {
	if err := cur.needCandidates(); err != nil {
		return CandidateList{}, err
	}
	f, err := req.filter()
	if err != nil {
		return CandidateList{}, err
	}
	if !req.IncludePrivate {
		return cur.publicCandidates(ctx, f)
	}
	cs, err := cur.Staged.Candidates(ctx, f)
	if cs == nil {
		cs = []memory.KGCandidate{}
	}
	return CandidateList{Candidates: cs}, err
}

// publicCandidates is the page the filter asks for among the candidates
// that are not private, and how many private ones the filter selects.
func (cur *Curator) publicCandidates(ctx context.Context, f memory.CandidateFilter) (CandidateList, error) {
	out := CandidateList{Candidates: []memory.KGCandidate{}}
	want, skip := f.Limit, f.Offset
	page := f
	page.Offset, page.Limit = 0, 1000
	privacy := map[string]bool{}
	for {
		cs, err := cur.Staged.Candidates(ctx, page)
		if err != nil {
			return out, err
		}
		for _, c := range cs {
			private, err := cur.privateCandidate(ctx, c, privacy)
			if err != nil {
				return out, err
			}
			switch {
			case private:
				out.PrivateExcluded++
			case skip > 0:
				skip--
			case len(out.Candidates) < want:
				out.Candidates = append(out.Candidates, c)
			}
		}
		if len(cs) < page.Limit {
			return out, nil
		}
		page.Offset += len(cs)
	}
}

// privateCandidate says whether a candidate quotes private text: it was
// marked private when staged, or its source thought is private (for
// candidates staged before the mark). privacy remembers the thoughts
// read.
func (cur *Curator) privateCandidate(ctx context.Context, c memory.KGCandidate, privacy map[string]bool) (bool, error) {
	var data struct {
		Private bool `json:"private"`
	}
	if len(c.Data) > 0 && json.Unmarshal(c.Data, &data) == nil && data.Private {
		return true, nil
	}
	if c.SourceThoughtID == "" || cur.Thought == nil {
		return false, nil
	}
	if p, ok := privacy[c.SourceThoughtID]; ok {
		return p, nil
	}
	th, err := cur.Thought(ctx, c.SourceThoughtID)
	switch {
	case memory.IsCode(err, memory.CodeNotFound):
		// Gone (archived and finalized): its sentence is all that is left.
	case err != nil:
		return false, err
	}
	privacy[c.SourceThoughtID] = th.IsPrivate
	return th.IsPrivate, nil
}

// ModerateItem is one decision of knowledgegraph_moderate.
type ModerateItem struct {
	ID string `json:"id,omitempty" jsonschema:"the candidate's kgc_ id"`
	// Kind, when given, must be the candidate's.
	Kind     string `json:"kind,omitempty" jsonschema:"entity or edge (relationship): checked against the candidate when given"`
	Decision string `json:"decision,omitempty" jsonschema:"approve (or promote) or reject"`
	Feedback string `json:"feedback,omitempty" jsonschema:"a note kept with the decision"`
	// CanonicalID merges an entity candidate into that entity.
	CanonicalID string `json:"canonical_id,omitempty" jsonschema:"approve into this existing entity (ent_ id) instead of one of the candidate's name"`
	Block       bool   `json:"block,omitempty" jsonschema:"on reject: never stage this name (or edge) again"`
	// MarkSourceRemoval marks the candidate's source thought for removal
	// once approved.
	MarkSourceRemoval bool `json:"mark_source_removal,omitempty" jsonschema:"on approve: mark the source thought for removal (maintenance_ops archives it)"`
	// Key names a blocklist entry to remove (action unblock).
	Key string `json:"key,omitempty" jsonschema:"action unblock: the blocked key (a name, or 'source -> relation -> target' for an edge), with kind"`
}

// ModerateRequest is knowledgegraph_moderate's parameters, with the
// specification's names.
type ModerateRequest struct {
	Action          string         `json:"action,omitempty" jsonschema:"review (default: list candidates), decide (apply items), review_and_decide, blocklist (list blocked keys) or unblock"`
	Target          string         `json:"target,omitempty" jsonschema:"entity, relationship or mixed (default) for review"`
	Status          string         `json:"status,omitempty" jsonschema:"review: pending (default), approved, rejected or all"`
	MinConf         *float64       `json:"min_conf,omitempty" jsonschema:"review: minimum confidence, 0 to 1"`
	SourceThoughtID string         `json:"source_thought_id,omitempty" jsonschema:"review: only candidates from this thought"`
	Limit           int            `json:"limit,omitempty" jsonschema:"review: page size, 1 to 1000; default 100"`
	Offset          int            `json:"offset,omitempty" jsonschema:"review: page offset"`
	IncludePrivate  bool           `json:"include_private,omitempty" jsonschema:"review: list candidates extracted from private thoughts too; default false (they are counted in private_excluded)"`
	Items           []ModerateItem `json:"items,omitempty" jsonschema:"decide: the decisions, applied in order (at most 1000)"`
	DryRun          bool           `json:"dry_run,omitempty" jsonschema:"decide: say what would happen and write nothing"`
}

// ModerateOutcome is what one decision did (or would do).
type ModerateOutcome struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Decision string `json:"decision"`
	// Status is approved or rejected (would_approve, would_reject or
	// would_refuse on a dry run; unblocked for an unblock).
	Status string `json:"status"`
	// Reason says why a dry run's approval would be refused: it would
	// bring a blocked name or edge into the graph.
	Reason string `json:"reason,omitempty"`
	// PromotedID is the entity or edge an approval created or merged into
	// ("" on a dry run that would create one).
	PromotedID string `json:"promoted_id,omitempty"`
	// Merged says the approval joined a record the graph had; Created
	// lists the entities it created.
	Merged           bool     `json:"merged,omitempty"`
	Created          []string `json:"created,omitempty"`
	Blocked          bool     `json:"blocked,omitempty"`
	MarkedForRemoval int      `json:"marked_for_removal,omitempty"`
}

// ModerateResult is knowledgegraph_moderate's answer.
type ModerateResult struct {
	// Review is the page of candidates (review and review_and_decide; the
	// latter lists after deciding).
	Review *CandidateList `json:"review,omitempty"`
	// Results are the decisions' outcomes, in order.
	Results []ModerateOutcome `json:"results"`
	// Blocklist is the blocked keys (action blocklist).
	Blocklist []memory.BlockedKey `json:"blocklist,omitempty"`
	DryRun    bool                `json:"dry_run,omitempty"`
}

// Moderate reviews knowledge-graph candidates and applies decisions:
// approve (promote: the candidate becomes an entity or edge of the graph,
// or merges into one it has, with its source thought recorded) or reject
// (optionally blocking its key from being staged again), one by one or in
// bulk. Every item is checked before any is applied: an unknown id is
// not_found, a decided candidate a conflict, an approval that would bring
// a blocked name or edge into the graph a conflict (a dry run reports it
// as would_refuse), a bad decision invalid_params, and then nothing is
// written. Each decision is then
// written in its own transaction, in order.
func (cur *Curator) Moderate(ctx context.Context, req ModerateRequest) (ModerateResult, error) {
	res := ModerateResult{Results: []ModerateOutcome{}, DryRun: req.DryRun}
	if err := cur.needCandidates(); err != nil {
		return res, err
	}
	action := strings.ToLower(strings.TrimSpace(req.Action))
	review := CandidatesRequest{Kind: req.Target, Status: req.Status, MinConfidence: req.MinConf, SourceThoughtID: req.SourceThoughtID,
		Limit: req.Limit, Offset: req.Offset, IncludePrivate: req.IncludePrivate}
	if _, err := review.filter(); err != nil {
		return res, err
	}
	if len(req.Items) > 1000 {
		return res, memory.Errorf(memory.CodeInvalidParams, "%d items, over the limit of 1000", len(req.Items))
	}
	switch action {
	case "", "review":
		if len(req.Items) > 0 {
			return res, memory.Errorf(memory.CodeInvalidParams, "items are decisions: use action decide or review_and_decide")
		}
		list, err := cur.Candidates(ctx, review)
		res.Review = &list
		return res, err
	case "decide", "review_and_decide":
		if len(req.Items) == 0 {
			return res, memory.Errorf(memory.CodeInvalidParams, "action %s needs items: [{id, decision}]", action)
		}
		out, err := cur.decide(ctx, req.Items, req.DryRun)
		res.Results = out
		if err != nil || action == "decide" {
			return res, err
		}
		list, err := cur.Candidates(ctx, review)
		res.Review = &list
		return res, err
	case "blocklist":
		bl, err := cur.Staged.Blocklist(ctx)
		res.Blocklist = bl
		return res, err
	case "unblock":
		return cur.unblock(ctx, req.Items, req.DryRun)
	}
	return res, memory.Errorf(memory.CodeInvalidParams, "action %q: want review, decide, review_and_decide, blocklist or unblock", req.Action)
}

// decision reads an item's decision.
func decision(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "approve", "approved", "promote", "promoted", "accept":
		return memory.CandidateApproved, nil
	case "reject", "rejected", "decline":
		return memory.CandidateRejected, nil
	}
	return "", memory.Errorf(memory.CodeInvalidParams, "decision %q: want approve (promote) or reject", s)
}

// decide checks every item, then applies them in order. An approval
// that would bring a blocked name or edge into the graph (blocked before,
// or by a rejection of the same batch) is a conflict, and nothing is
// written; a dry run reports it as would_refuse instead.
func (cur *Curator) decide(ctx context.Context, items []ModerateItem, dry bool) ([]ModerateOutcome, error) {
	out := []ModerateOutcome{}
	cands := make([]memory.KGCandidate, len(items))
	seen := map[string]bool{}
	for i, it := range items {
		if seen[it.ID] {
			return out, memory.Errorf(memory.CodeInvalidParams, "candidate %s is decided twice", it.ID)
		}
		c, err := cur.checkItem(ctx, it)
		if err != nil {
			return out, err
		}
		seen[it.ID] = true
		cands[i] = c
	}
	bl, err := cur.batchBlocklist(ctx, items, cands)
	if err != nil {
		return out, err
	}
	refused := make([]string, len(items))
	for i, it := range items {
		if status, _ := decision(it.Decision); status != memory.CandidateApproved {
			continue
		}
		if b, name, ok := blockedBy(cands[i], bl); ok {
			if !dry {
				return out, blockedName(cands[i], name, b)
			}
			refused[i] = blockedReason(cands[i], name, b)
		}
	}
	names := map[string]memory.BlockedKey{}
	for _, b := range bl {
		if b.Kind == memory.CandidateEntity {
			names[b.Key] = b
		}
	}
	for i, it := range items {
		if refused[i] != "" {
			out = append(out, ModerateOutcome{ID: cands[i].ID, Kind: string(cands[i].Kind), Decision: memory.CandidateApproved,
				Status: "would_refuse", Reason: refused[i]})
			continue
		}
		o, err := cur.apply(ctx, it, cands[i], names, dry)
		if err != nil {
			return out, err
		}
		out = append(out, o)
	}
	return out, nil
}

// batchBlocklist is the blocklist as a batch of decisions leaves it: the
// blocked keys, and those its rejections block, by kind and key.
func (cur *Curator) batchBlocklist(ctx context.Context, items []ModerateItem, cands []memory.KGCandidate) (map[string]memory.BlockedKey, error) {
	list, err := cur.Staged.Blocklist(ctx)
	if err != nil {
		return nil, err
	}
	bl := map[string]memory.BlockedKey{}
	for _, b := range list {
		bl[string(b.Kind)+"\x00"+b.Key] = b
	}
	for i, it := range items {
		if status, _ := decision(it.Decision); status == memory.CandidateRejected && it.Block {
			c := cands[i]
			bl[string(c.Kind)+"\x00"+c.Key()] = memory.BlockedKey{Kind: c.Kind, Key: c.Key(), CandidateID: c.ID}
		}
	}
	return bl, nil
}

// checkItem checks one decision and returns its candidate, pending.
func (cur *Curator) checkItem(ctx context.Context, it ModerateItem) (memory.KGCandidate, error) {
	if _, err := it.check(); err != nil {
		return memory.KGCandidate{}, err
	}
	if it.MarkSourceRemoval && cur.Removals == nil {
		return memory.KGCandidate{}, memory.Errorf(memory.CodeFeatureDisabled, "mark_source_removal: this store does not keep the removal lifecycle")
	}
	got, err := cur.Staged.Candidates(ctx, memory.CandidateFilter{IDs: []string{it.ID}, Limit: 1})
	if err != nil {
		return memory.KGCandidate{}, err
	}
	if len(got) == 0 {
		return memory.KGCandidate{}, memory.Errorf(memory.CodeNotFound, "candidate %s does not exist", it.ID)
	}
	c := got[0]
	if c.Status != memory.CandidatePending {
		return c, memory.Errorf(memory.CodeConflict, "candidate %s was already %s", c.ID, c.Status)
	}
	if it.Kind != "" {
		k, err := candidateKind(it.Kind)
		if err != nil {
			return c, err
		}
		if k != "" && k != c.Kind {
			return c, memory.Errorf(memory.CodeInvalidParams, "candidate %s is an %s candidate, not %s", c.ID, c.Kind, k)
		}
	}
	if it.CanonicalID != "" {
		if c.Kind != memory.CandidateEntity {
			return c, memory.Errorf(memory.CodeInvalidParams, "canonical_id merges an entity candidate into an entity; %s is an edge candidate", c.ID)
		}
		if _, err := cur.Store.Entity(ctx, it.CanonicalID); err != nil {
			return c, err
		}
	}
	return c, nil
}

// check validates an item's fields, alone, and returns its decision.
func (it ModerateItem) check() (string, error) {
	if err := memory.ValidateRef("items[].id", it.ID, false); err != nil {
		return "", err
	}
	status, err := decision(it.Decision)
	if err != nil {
		return "", err
	}
	if err := memory.ValidateText("feedback", it.Feedback, 4096); err != nil {
		return "", err
	}
	if err := memory.ValidateRef("canonical_id", it.CanonicalID, true); err != nil {
		return "", err
	}
	if status == memory.CandidateRejected && (it.CanonicalID != "" || it.MarkSourceRemoval) {
		return "", memory.Errorf(memory.CodeInvalidParams, "candidate %s: canonical_id and mark_source_removal go with approve", it.ID)
	}
	if status == memory.CandidateApproved && it.Block {
		return "", memory.Errorf(memory.CodeInvalidParams, "candidate %s: block goes with reject", it.ID)
	}
	return status, nil
}

// dryRunID opens the ids a dry run gives the records it would create.
const dryRunID = "dry_run:"

// apply writes one checked decision (or, on a dry run, says what it
// would write).
func (cur *Curator) apply(ctx context.Context, it ModerateItem, c memory.KGCandidate, blocked map[string]memory.BlockedKey, dry bool) (ModerateOutcome, error) {
	status, _ := decision(it.Decision)
	o := ModerateOutcome{ID: c.ID, Kind: string(c.Kind), Decision: status, Status: status}
	if status == memory.CandidateRejected {
		o.Blocked = it.Block
		if dry {
			o.Status = "would_reject"
		} else if _, err := cur.Staged.DecideCandidate(ctx, memory.CandidateDecision{ID: c.ID, Status: status,
			DecidedAt: cur.Now(), Feedback: it.Feedback, Block: it.Block}); err != nil {
			return o, err
		}
		return o, nil
	}
	newID := cur.NewID
	if dry {
		// Ids that write nothing, yet keep two new entities apart (an
		// edge between two names the graph lacks).
		n := 0
		newID = func(prefix string) string { n++; return fmt.Sprintf("%s%s_%d", dryRunID, prefix, n) }
	}
	p, err := PlanPromotion(ctx, cur.Store, c, it.CanonicalID, blocked, newID, cur.Now())
	if err != nil {
		return o, err
	}
	p.Decision.Feedback = it.Feedback
	o.PromotedID, o.Merged, o.Created = p.Decision.PromotedID, p.Merged, p.Created
	if dry {
		o.Status, o.Created = "would_approve", nil
		if strings.HasPrefix(o.PromotedID, dryRunID) {
			o.PromotedID = ""
		}
		return o, nil
	}
	if _, err := cur.Staged.DecideCandidate(ctx, p.Decision); err != nil {
		return o, err
	}
	cur.embedPromotion(ctx, p.Decision)
	if it.MarkSourceRemoval && c.SourceThoughtID != "" {
		n, err := cur.Removals.MarkRemoval(ctx, []string{c.SourceThoughtID}, cur.Now())
		if err != nil {
			return o, err
		}
		o.MarkedForRemoval = n
	}
	return o, nil
}

// embedPromotion embeds what an approval wrote: its entities and edge.
func (cur *Curator) embedPromotion(ctx context.Context, d memory.CandidateDecision) {
	var jobs []memory.EmbedJob
	names := map[string]string{}
	for _, ent := range d.Entities {
		jobs = append(jobs, memory.EmbedJob{Kind: memory.VectorKGEntity, ID: ent.ID, Content: EntityText(ent)})
		names[ent.ID] = ent.Name
	}
	if g := d.Edge; g != nil {
		for _, id := range []string{g.Source, g.Target} {
			if _, ok := names[id]; !ok {
				if ent, err := cur.Store.Entity(ctx, id); err == nil {
					names[id] = ent.Name
				}
			}
		}
		jobs = append(jobs, memory.EmbedJob{Kind: memory.VectorKGEdge, ID: g.ID, Content: EdgeText(names[g.Source], g.Relation, names[g.Target])})
	}
	cur.Embed(ctx, jobs)
}

func (cur *Curator) unblock(ctx context.Context, items []ModerateItem, dry bool) (ModerateResult, error) {
	res := ModerateResult{Results: []ModerateOutcome{}, DryRun: dry}
	if len(items) == 0 {
		return res, memory.Errorf(memory.CodeInvalidParams, "action unblock needs items: [{kind, key}]")
	}
	bl, err := cur.Staged.Blocklist(ctx)
	if err != nil {
		return res, err
	}
	kinds := make([]memory.CandidateKind, len(items))
	for i, it := range items {
		k, err := candidateKind(it.Kind)
		if err != nil {
			return res, err
		}
		if k == "" {
			return res, memory.Errorf(memory.CodeInvalidParams, "unblock: give each item's kind (entity or edge) and key")
		}
		found := false
		for _, b := range bl {
			found = found || b.Kind == k && b.Key == strings.ToLower(it.Key)
		}
		if !found {
			return res, memory.Errorf(memory.CodeNotFound, "%s %q is not on the blocklist", k, it.Key)
		}
		kinds[i] = k
	}
	for i, it := range items {
		o := ModerateOutcome{ID: strings.ToLower(it.Key), Kind: string(kinds[i]), Decision: "unblock", Status: "unblocked"}
		if dry {
			o.Status = "would_unblock"
		} else if err := cur.Staged.Unblock(ctx, kinds[i], strings.ToLower(it.Key)); err != nil {
			return res, err
		}
		res.Results = append(res.Results, o)
	}
	return res, nil
}
