package cairn

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/cairnhq/cairn/graph"
	"github.com/cairnhq/cairn/memory"
)

// Import formats.
const (
	// FormatJSONL is JSON Lines: each line an observation to record (the
	// fields of LogRequest), or a record as Export writes it
	// ({"observation": {...}}, {"capsule": {...}}, {"summary": {...}},
	// {"pin": {...}}, {"thought": {...}}, {"kg_entity": {...}},
	// {"kg_observation": {...}}, {"kg_edge": {...}}, and the code-memory
	// records {"code_repo": {...}} ... {"code_gate": {...}}).
	FormatJSONL = "jsonl"
	// FormatParity is the kindling-parity dataset.json format.
	FormatParity = "kindling-parity-dataset/v1"
)

// MaxImportBytes bounds one import file (1 GiB).
const MaxImportBytes = 1 << 30

// ImportOptions tune an import.
type ImportOptions struct {
	// Progress, when set, is called as records are written.
	Progress func(done, total int)
	// EmbedProgress, when set, is called as the imported records are
	// embedded, after they are written.
	EmbedProgress func(done, total int)
}

// ImportReport says what an import wrote.
type ImportReport struct {
	Format       string `json:"format"`
	Observations int    `json:"observations"`
	Capsules     int    `json:"capsules"`
	Summaries    int    `json:"summaries"`
	Pins         int    `json:"pins"`
	// Thoughts, Entities, EntityObservations and Edges count the thoughts
	// and the knowledge graph.
	Thoughts           int `json:"thoughts"`
	Entities           int `json:"entities"`
	EntityObservations int `json:"entityObservations"`
	Edges              int `json:"edges"`
	// Code counts code-memory records: repositories, artifacts, files,
	// entities, ledger entries, episodes, hydration rows and gate results.
	Code int `json:"code"`
	// Skipped lists records left out on purpose, with the reason.
	Skipped []string `json:"skipped,omitempty"`
	// Embedded counts records embedded after the import; Pending those
	// left without a vector because the embedder failed (the import
	// itself stands: cairn reembed finishes the job).
	Embedded int `json:"embedded"`
	Pending  int `json:"pending"`
}

// Import reads a file of records (FormatJSONL or FormatParity, detected from
// the content) and writes it all in one transaction: every record, or, when
// any record is invalid or clashes with the database, none. Errors name the
// line or record at fault.
func (e *Engine) Import(ctx context.Context, r io.Reader, opts ImportOptions) (ImportReport, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxImportBytes+1))
	if err != nil {
		return ImportReport{}, memory.Wrap(memory.CodeInvalidParams, err, "reading the import failed")
	}
	if len(data) > MaxImportBytes {
		return ImportReport{}, memory.Errorf(memory.CodeInvalidParams, "the import is over %d bytes; split it", MaxImportBytes)
	}
	var dump memory.Dump
	var lines recordLines
	rep := ImportReport{Format: FormatJSONL}
	if isParityDataset(data) {
		rep.Format = FormatParity
		dump, rep.Skipped, err = e.parseParity(ctx, data)
	} else {
		dump, lines, err = e.parseJSONL(data)
	}
	if err != nil {
		return rep, err
	}
	total := dump.Len()
	if total == 0 {
		return rep, memory.Errorf(memory.CodeInvalidParams, "the import holds no records")
	}
	if err := checkCodeDump(dump); err != nil {
		return rep, lines.name(err)
	}
	progress := func(done int) {
		if opts.Progress != nil {
			opts.Progress(done, total)
		}
	}
	if err := e.store.Import(ctx, dump, progress); err != nil {
		return rep, lines.name(err)
	}
	rep.Observations = len(dump.Observations) + len(dump.Logged)
	rep.Capsules, rep.Summaries, rep.Pins = len(dump.Capsules), len(dump.Summaries), len(dump.Pins)
	rep.Thoughts, rep.Entities = len(dump.Thoughts), len(dump.Entities)
	rep.EntityObservations, rep.Edges = len(dump.KGObservations), len(dump.Edges)
	rep.Code = len(dump.CodeRepos) + len(dump.Artifacts) + len(dump.CodeFiles) + len(dump.CodeEntities) +
		len(dump.CodeLedger) + len(dump.Episodes) + len(dump.HydrationRows) + len(dump.Gates)
	if e.embedOnWrite {
		er, err := e.Reembed(ctx, ReembedRequest{}, opts.EmbedProgress)
		rep.Embedded, rep.Pending = er.Embedded, er.Pending
		if err != nil {
			e.log.Warn("imported records stored without vectors; run cairn reembed", "err", memory.Public(err).Message)
			e.log.Debug("embedder failure", "detail", memory.Detail(err))
		}
	}
	return rep, nil
}

func isParityDataset(data []byte) bool {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return false
	}
	var probe struct {
		Format string `json:"format"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	return dec.Decode(&probe) == nil && probe.Format == FormatParity && !dec.More()
}

// recordLines is the line of every record of a dump read from JSON Lines,
// by section and index, so an error the store reports about one record
// names its line.
type recordLines map[memory.Section][]int

// name prefixes the line of the record err is about, when it says.
func (l recordLines) name(err error) error {
	var re *memory.RecordError
	if errors.As(err, &re) && re.Index >= 0 && re.Index < len(l[re.Section]) {
		return memory.Prefixed(err, "line %d: ", l[re.Section][re.Index])
	}
	return err
}

// parseJSONL reads JSON Lines. Blank lines are skipped.
func (e *Engine) parseJSONL(data []byte) (memory.Dump, recordLines, error) {
	var d memory.Dump
	lines := recordLines{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 4*e.maxBytes+1<<20)
	now := e.nowMs()
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		section, err := e.parseLine(&d, text, now)
		if err != nil {
			return d, lines, memory.Prefixed(err, "line %d: ", line)
		}
		lines[section] = append(lines[section], line)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return d, lines, memory.Wrap(memory.CodeInvalidParams, err, "line %d is over %d bytes", line+1, 4*e.maxBytes+1<<20)
		}
		return d, lines, memory.Wrap(memory.CodeInvalidParams, err, "line %d cannot be read", line+1)
	}
	return d, lines, nil
}

var recordKeys = map[string]bool{"observation": true, "capsule": true, "summary": true, "pin": true,
	"thought": true, "kg_entity": true, "kg_observation": true, "kg_edge": true,
	"code_repo": true, "code_artifact": true, "code_file": true, "code_entity": true, "code_transition": true,
	"code_episode": true, "code_hydration": true, "code_gate": true}

// parseLine reads one line into d and returns the section it joined.
func (e *Engine) parseLine(d *memory.Dump, text []byte, now int64) (memory.Section, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(text, &keys); err != nil {
		return "", memory.Errorf(memory.CodeInvalidParams, "not a JSON object")
	}
	if len(keys) == 1 {
		for k := range keys {
			if recordKeys[k] {
				var rec memory.Record
				if err := memory.DecodeStrict(text, &rec); err != nil {
					return "", err
				}
				if err := e.checkRecord(&rec); err != nil {
					return "", err
				}
				d.Add(rec)
				return rec.Section(), nil
			}
		}
	}
	var req LogRequest
	if err := memory.DecodeStrict(text, &req); err != nil {
		return "", err
	}
	o, err := e.newObservation(req, now)
	if err != nil {
		return "", err
	}
	d.Logged = append(d.Logged, memory.NewObservation{Observation: o, CapsuleID: req.CapsuleID})
	return memory.SectionLogged, nil
}

// checkRecord validates a complete record as Import will write it.
func (e *Engine) checkRecord(r *memory.Record) error {
	switch {
	case r.Observation != nil:
		return e.checkObservation(r.Observation)
	case r.Capsule != nil:
		return e.checkCapsule(r.Capsule)
	case r.Summary != nil:
		return e.checkSummary(r.Summary)
	case r.Pin != nil:
		return e.checkPin(r.Pin)
	case r.Thought != nil:
		return e.checkImportedThought(r.Thought)
	case r.KGEntity != nil:
		return checkImportedEntity(r.KGEntity)
	case r.KGObservation != nil:
		return e.checkImportedKGObservation(r.KGObservation)
	case r.KGEdge != nil:
		return checkImportedEdge(r.KGEdge)
	case r.Section() != "":
		return checkCodeRecord(r)
	}
	return memory.Errorf(memory.CodeInvalidParams, "empty record")
}

func (e *Engine) checkObservation(o *memory.Observation) error {
	if err := memory.ValidateRef("observation id", o.ID, false); err != nil {
		return err
	}
	if _, err := memory.ParseKind(string(o.Kind)); err != nil {
		return err
	}
	if o.Redacted {
		o.Content = memory.RedactedContent
	}
	if err := memory.ValidateContent("content of "+o.ID, o.Content, e.maxBytes); err != nil {
		return err
	}
	o.Content = e.redactText(o.Content)
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

func (e *Engine) checkCapsule(c *memory.Capsule) error {
	if err := memory.ValidateRef("capsule id", c.ID, false); err != nil {
		return err
	}
	if !memory.ValidCapsuleType(c.Type) {
		return memory.Errorf(memory.CodeInvalidParams, "capsule %s: type %q is not valid", c.ID, c.Type)
	}
	if err := memory.ValidateText("intent", c.Intent, e.maxBytes); err != nil {
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

func (e *Engine) checkSummary(s *memory.Summary) error {
	if err := memory.ValidateRef("summary id", s.ID, false); err != nil {
		return err
	}
	if err := memory.ValidateRef("capsuleId", s.CapsuleID, false); err != nil {
		return err
	}
	if s.Redacted {
		s.Content = memory.RedactedContent
	}
	if err := memory.ValidateContent("content of "+s.ID, s.Content, e.maxBytes); err != nil {
		return err
	}
	s.Content = e.redactText(s.Content)
	if !(s.Confidence >= 0 && s.Confidence <= 1) || math.IsNaN(s.Confidence) {
		return memory.Errorf(memory.CodeInvalidParams, "summary %s: confidence %v is out of range [0, 1]", s.ID, s.Confidence)
	}
	if s.EvidenceRefs == nil {
		s.EvidenceRefs = []string{}
	}
	return nil
}

func (e *Engine) checkPin(p *memory.Pin) error {
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

// checkImportedThought validates a thought as Think does, and the fields
// Think sets itself (id, status, time).
func (e *Engine) checkImportedThought(t *memory.Thought) error {
	if err := memory.ValidateRef("thought id", t.ID, false); err != nil {
		return err
	}
	if t.Redacted {
		t.Content, t.Tags = memory.RedactedContent, nil
	}
	if err := e.checkThought(t); err != nil {
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
func (e *Engine) checkImportedKGObservation(o *memory.KGObservation) error {
	if err := memory.ValidateRef("entity observation id", o.ID, false); err != nil {
		return err
	}
	if err := e.kg.CheckFact(o.EntityID, o.Content); err != nil {
		return memory.Prefixed(err, "entity observation %s: ", o.ID)
	}
	o.Content = e.redactText(o.Content)
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

// parityDataset is the shape of a kindling-parity dataset.json.
type parityDataset struct {
	Format       string `json:"format"`
	Observations []struct {
		memory.Observation
		// OriginalContent is the text a redaction removed, kept in the
		// fixture for reference; cairn never stores it.
		OriginalContent string `json:"originalContent"`
	} `json:"observations"`
	Capsules  []memory.Capsule `json:"capsules"`
	Summaries []memory.Summary `json:"summaries"`
	Pins      []memory.Pin     `json:"pins"`
}

// parseParity reads a parity dataset. A pin whose target is neither in the
// dataset nor in the database is skipped and reported (the fixture holds one
// on purpose); everything else must be valid.
func (e *Engine) parseParity(ctx context.Context, data []byte) (memory.Dump, []string, error) {
	var ds parityDataset
	if err := json.Unmarshal(data, &ds); err != nil {
		var me *memory.Error
		if errors.As(err, &me) {
			return memory.Dump{}, nil, me
		}
		return memory.Dump{}, nil, memory.Wrap(memory.CodeInvalidParams, err, "dataset: %s", memory.JSONProblem(err))
	}
	var d memory.Dump
	known := map[string]bool{}
	for _, o := range ds.Observations {
		obs := o.Observation
		if err := e.checkObservation(&obs); err != nil {
			return d, nil, err
		}
		d.Observations = append(d.Observations, obs)
		known[obs.ID] = true
	}
	for i := range ds.Capsules {
		if err := e.checkCapsule(&ds.Capsules[i]); err != nil {
			return d, nil, err
		}
	}
	d.Capsules = ds.Capsules
	for i := range ds.Summaries {
		if err := e.checkSummary(&ds.Summaries[i]); err != nil {
			return d, nil, err
		}
		known[ds.Summaries[i].ID] = true
	}
	d.Summaries = ds.Summaries
	var skipped []string
	for _, p := range ds.Pins {
		if err := e.checkPin(&p); err != nil {
			return d, nil, err
		}
		if !known[p.TargetID] {
			if _, err := e.findTarget(ctx, p.TargetType, p.TargetID); memory.IsCode(err, memory.CodeNotFound) {
				skipped = append(skipped, fmt.Sprintf("pin %s: its target %s %s does not exist", p.ID, p.TargetType, p.TargetID))
				continue
			} else if err != nil {
				return d, nil, err
			}
		}
		d.Pins = append(d.Pins, p)
	}
	return d, skipped, nil
}

// Export writes every record as JSON Lines ({"observation": {...}} and so
// on), in an order Import reads back into an equal database. It returns the
// number of records written.
func (e *Engine) Export(ctx context.Context, w io.Writer) (int, error) {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	n := 0
	err := e.store.Export(ctx, func(r memory.Record) error {
		n++
		if err := enc.Encode(r); err != nil {
			return memory.Wrap(memory.CodeInternal, err, "writing the export failed")
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	if err := bw.Flush(); err != nil {
		return n, memory.Wrap(memory.CodeInternal, err, "writing the export failed")
	}
	return n, nil
}

// ImportDump writes complete records in one transaction, as Import does
// once it has read a file. Records are checked first; nothing is written
// when one is invalid.
func (e *Engine) ImportDump(ctx context.Context, d memory.Dump) error {
	for i := range d.Observations {
		if err := e.checkObservation(&d.Observations[i]); err != nil {
			return err
		}
	}
	for i := range d.Capsules {
		if err := e.checkCapsule(&d.Capsules[i]); err != nil {
			return err
		}
	}
	for i := range d.Summaries {
		if err := e.checkSummary(&d.Summaries[i]); err != nil {
			return err
		}
	}
	for i := range d.Pins {
		if err := e.checkPin(&d.Pins[i]); err != nil {
			return err
		}
	}
	for i := range d.Thoughts {
		if err := e.checkImportedThought(&d.Thoughts[i]); err != nil {
			return err
		}
	}
	for i := range d.Entities {
		if err := checkImportedEntity(&d.Entities[i]); err != nil {
			return err
		}
	}
	for i := range d.KGObservations {
		if err := e.checkImportedKGObservation(&d.KGObservations[i]); err != nil {
			return err
		}
	}
	for i := range d.Edges {
		if err := checkImportedEdge(&d.Edges[i]); err != nil {
			return err
		}
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
	if err := checkCodeDump(d); err != nil {
		return err
	}
	return e.store.Import(ctx, d, nil)
}
