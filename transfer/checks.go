package transfer

import (
	"math"

	"github.com/cairnhq/cairn/graph"
	"github.com/cairnhq/cairn/memory"
)

// The checks of complete records, as an import writes them: each is the
// check of the engine's own write of that kind (the engine's thought and
// fact checks are used as they are), plus the fields the write sets
// itself (ids, times, status).

// checkRecord validates a complete record as Import will write it.
func (m *Mover) checkRecord(r *memory.Record) error {
	switch {
	case r.Observation != nil:
		return m.checkObservation(r.Observation)
	case r.Capsule != nil:
		return m.checkCapsule(r.Capsule)
	case r.Summary != nil:
		return m.checkSummary(r.Summary)
	case r.Pin != nil:
		return m.checkPin(r.Pin)
	case r.Thought != nil:
		return m.checkImportedThought(r.Thought)
	case r.KGEntity != nil:
		return checkImportedEntity(r.KGEntity)
	case r.KGObservation != nil:
		return m.checkImportedKGObservation(r.KGObservation)
	case r.KGEdge != nil:
		return checkImportedEdge(r.KGEdge)
	case r.Section() != "":
		return checkCodeRecord(r)
	}
	return memory.Errorf(memory.CodeInvalidParams, "empty record")
}

func (m *Mover) checkObservation(o *memory.Observation) error {
	if err := memory.ValidateRef("observation id", o.ID, false); err != nil {
		return err
	}
	if _, err := memory.ParseKind(string(o.Kind)); err != nil {
		return err
	}
	if o.Redacted {
		o.Content = memory.RedactedContent
	}
	if err := memory.ValidateContent("content of "+o.ID, o.Content, m.MaxBytes); err != nil {
		return err
	}
	o.Content = m.Redact(o.Content)
	prov, err := memory.NormalizeProvenance(o.Provenance)
	if err != nil {
		return err
	}
	o.Provenance = prov
	if o.TS < 0 {
		return memory.Errorf(memory.CodeInvalidParams, "observation %s: ts is negative", o.ID)
	}
	return o.Scope.Validate()
}

func (m *Mover) checkCapsule(c *memory.Capsule) error {
	if err := memory.ValidateRef("capsule id", c.ID, false); err != nil {
		return err
	}
	if !memory.ValidCapsuleType(c.Type) {
		return memory.Errorf(memory.CodeInvalidParams, "capsule %s: type %q is not valid", c.ID, c.Type)
	}
	if err := memory.ValidateText("intent", c.Intent, m.MaxBytes); err != nil {
		return err
	}
	switch c.Status {
	case memory.CapsuleOpen:
		if c.ClosedAt != nil {
			return memory.Errorf(memory.CodeInvalidParams, "capsule %s is open but has closedAt", c.ID)
		}
	case memory.CapsuleClosed:
		if c.ClosedAt == nil || *c.ClosedAt < c.OpenedAt {
			return memory.Errorf(memory.CodeInvalidParams, "capsule %s is closed but has no closedAt at or after openedAt", c.ID)
		}
	default:
		return memory.Errorf(memory.CodeInvalidParams, "capsule %s: status %q (want open or closed)", c.ID, c.Status)
	}
	for _, id := range c.ObservationIDs {
		if err := memory.ValidateRef("observation id", id, false); err != nil {
			return err
		}
	}
	c.SummaryID = ""
	return c.Scope.Validate()
}

func (m *Mover) checkSummary(s *memory.Summary) error {
	if err := memory.ValidateRef("summary id", s.ID, false); err != nil {
		return err
	}
	if err := memory.ValidateRef("capsuleId", s.CapsuleID, false); err != nil {
		return err
	}
	if s.Redacted {
		s.Content = memory.RedactedContent
	}
	if err := memory.ValidateContent("content of "+s.ID, s.Content, m.MaxBytes); err != nil {
		return err
	}
	s.Content = m.Redact(s.Content)
	if !(s.Confidence >= 0 && s.Confidence <= 1) || math.IsNaN(s.Confidence) {
		return memory.Errorf(memory.CodeInvalidParams, "summary %s: confidence %v is out of range [0, 1]", s.ID, s.Confidence)
	}
	if s.EvidenceRefs == nil {
		s.EvidenceRefs = []string{}
	}
	return nil
}

func (m *Mover) checkPin(p *memory.Pin) error {
	if err := memory.ValidateRef("pin id", p.ID, false); err != nil {
		return err
	}
	if !p.TargetType.Valid() {
		return memory.Errorf(memory.CodeInvalidParams, "pin %s: targetType %q (want observation or summary)", p.ID, p.TargetType)
	}
	if err := memory.ValidateRef("targetId", p.TargetID, false); err != nil {
		return err
	}
	if err := memory.ValidateText("reason", p.Reason, 4096); err != nil {
		return err
	}
	return p.Scope.Validate()
}

// checkImportedThought validates a thought as the engine's Think does,
// and the fields Think sets itself (id, status, time).
func (m *Mover) checkImportedThought(t *memory.Thought) error {
	if err := memory.ValidateRef("thought id", t.ID, false); err != nil {
		return err
	}
	if t.Redacted {
		t.Content, t.Tags = memory.RedactedContent, nil
	}
	if err := m.CheckThought(t); err != nil {
		return memory.Prefixed(err, "thought %s: ", t.ID)
	}
	if t.Status != memory.StatusActive && t.Status != memory.StatusRemoval {
		return memory.Errorf(memory.CodeInvalidParams, "thought %s: status %q (want active or removal)", t.ID, t.Status)
	}
	if t.CreatedAt < 0 {
		return memory.Errorf(memory.CodeInvalidParams, "thought %s: created_at is negative", t.ID)
	}
	return nil
}

// checkImportedEntity validates an entity as CreateEntity does, and its
// times.
func checkImportedEntity(ent *memory.KGEntity) error {
	if err := graph.CheckNewEntity(*ent); err != nil {
		return memory.Prefixed(err, "entity %s: ", ent.ID)
	}
	if ent.CreatedAt < 0 || ent.UpdatedAt < 0 {
		return memory.Errorf(memory.CodeInvalidParams, "entity %s: created_at and updated_at must not be negative", ent.ID)
	}
	return nil
}

// checkImportedKGObservation validates an entity observation as Observe
// does, and the fields Observe sets itself (id, time, scope).
func (m *Mover) checkImportedKGObservation(o *memory.KGObservation) error {
	if err := memory.ValidateRef("entity observation id", o.ID, false); err != nil {
		return err
	}
	if err := m.CheckFact(o.EntityID, o.Content); err != nil {
		return memory.Prefixed(err, "entity observation %s: ", o.ID)
	}
	o.Content = m.Redact(o.Content)
	if o.CreatedAt < 0 {
		return memory.Errorf(memory.CodeInvalidParams, "entity observation %s: created_at is negative", o.ID)
	}
	return o.Scope.Validate()
}

// checkImportedEdge validates an edge as CreateEdge does, and the fields
// CreateEdge sets itself (id, time).
func checkImportedEdge(g *memory.KGEdge) error {
	if err := memory.ValidateRef("edge id", g.ID, false); err != nil {
		return err
	}
	if err := graph.CheckNewEdge(*g); err != nil {
		return memory.Prefixed(err, "edge %s: ", g.ID)
	}
	if g.CreatedAt < 0 {
		return memory.Errorf(memory.CodeInvalidParams, "edge %s: created_at is negative", g.ID)
	}
	return nil
}

// checkDump checks every record of a dump, as checkRecord does each.
func (m *Mover) checkDump(d memory.Dump) error {
	for i := range d.Observations {
		if err := m.checkObservation(&d.Observations[i]); err != nil {
			return err
		}
	}
	for i := range d.Capsules {
		if err := m.checkCapsule(&d.Capsules[i]); err != nil {
			return err
		}
	}
	for i := range d.Summaries {
		if err := m.checkSummary(&d.Summaries[i]); err != nil {
			return err
		}
	}
	for i := range d.Pins {
		if err := m.checkPin(&d.Pins[i]); err != nil {
			return err
		}
	}
	if err := m.checkKnowledge(d); err != nil {
		return err
	}
	for i := range d.CodeEntities {
		if err := checkCodeRecord(&memory.Record{CodeEntity: &d.CodeEntities[i]}); err != nil {
			return err
		}
	}
	for i := range d.CodeLedger {
		if err := checkCodeRecord(&memory.Record{CodeTransition: &d.CodeLedger[i]}); err != nil {
			return err
		}
	}
	for i := range d.HydrationRows {
		if err := checkCodeRecord(&memory.Record{HydrationRow: &d.HydrationRows[i]}); err != nil {
			return err
		}
	}
	return checkCodeDump(d)
}

// checkKnowledge checks a dump's thoughts and knowledge graph.
func (m *Mover) checkKnowledge(d memory.Dump) error {
	for i := range d.Thoughts {
		if err := m.checkImportedThought(&d.Thoughts[i]); err != nil {
			return err
		}
	}
	for i := range d.Entities {
		if err := checkImportedEntity(&d.Entities[i]); err != nil {
			return err
		}
	}
	for i := range d.KGObservations {
		if err := m.checkImportedKGObservation(&d.KGObservations[i]); err != nil {
			return err
		}
	}
	for i := range d.Edges {
		if err := checkImportedEdge(&d.Edges[i]); err != nil {
			return err
		}
	}
	return nil
}
