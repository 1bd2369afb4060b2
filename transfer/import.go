package transfer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/cairnhq/cairn/memory"
)

// Import formats.
const (
	// FormatJSONL is JSON Lines: each line an observation to record (the
	// fields of a log request), or a record as Export writes it
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
func (m *Mover) Import(ctx context.Context, r io.Reader, opts ImportOptions) (ImportReport, error) {
	dump, lines, rep, err := m.read(ctx, r)
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
	if err := m.Store.Import(ctx, dump, progress); err != nil {
		return rep, lines.name(err)
	}
	rep.Observations = len(dump.Observations) + len(dump.Logged)
	rep.Capsules, rep.Summaries, rep.Pins = len(dump.Capsules), len(dump.Summaries), len(dump.Pins)
	rep.Thoughts, rep.Entities = len(dump.Thoughts), len(dump.Entities)
	rep.EntityObservations, rep.Edges = len(dump.KGObservations), len(dump.Edges)
	rep.Code = len(dump.CodeRepos) + len(dump.Artifacts) + len(dump.CodeFiles) + len(dump.CodeEntities) +
		len(dump.CodeLedger) + len(dump.Episodes) + len(dump.HydrationRows) + len(dump.Gates)
	rep.Embedded, rep.Pending = m.embed(ctx, opts.EmbedProgress, true)
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

// read parses an import as it arrives. JSON Lines, whose first line that
// is not blank is a JSON object on its own, is read line by line, so the input is never
// held whole (only the records parsed from it); anything else (a parity
// dataset, which is one JSON document, or input that is neither) is read
// whole, up to MaxImportBytes, and parsed then.
func (m *Mover) read(ctx context.Context, r io.Reader) (memory.Dump, recordLines, ImportReport, error) {
	rep := ImportReport{Format: FormatJSONL}
	in := &boundedReader{r: r, left: MaxImportBytes}
	br := bufio.NewReaderSize(in, 64<<10)
	// first is the input up to its first line that is not blank.
	var first []byte
	for {
		line, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return memory.Dump{}, nil, rep, readError(err)
		}
		first = append(first, line...)
		if err != nil || len(bytes.TrimSpace(line)) > 0 {
			break
		}
	}
	head := bytes.TrimSpace(first)
	if len(head) > 0 && json.Valid(head) && !isParityDataset(head) {
		dump, lines, err := m.parseJSONL(io.MultiReader(bytes.NewReader(first), br))
		// A line cut short by the limit or by a failed read reads as
		// broken: say why instead.
		switch {
		case in.over:
			err = tooBig()
		case in.err != nil:
			err = readError(in.err)
		}
		return dump, lines, rep, err
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		return memory.Dump{}, nil, rep, readError(err)
	}
	if in.over {
		return memory.Dump{}, nil, rep, tooBig()
	}
	data := append(first, rest...)
	if isParityDataset(data) {
		rep.Format = FormatParity
		dump, skipped, err := m.parseParity(ctx, data)
		rep.Skipped = skipped
		return dump, nil, rep, err
	}
	dump, lines, err := m.parseJSONL(bytes.NewReader(data))
	return dump, lines, rep, err
}

// readLine reads up to and including the next newline, or all of a
// shorter input (with io.EOF).
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// boundedReader reads at most left bytes of r and then says over (and
// reads no more) when r held more: an import over MaxImportBytes is
// refused without being read whole.
type boundedReader struct {
	r    io.Reader
	left int64
	over bool
	// err is the first error r gave other than io.EOF.
	err error
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, _ := b.r.Read(one[:]); n > 0 {
			b.over = true
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) && b.err == nil {
		b.err = err
	}
	return n, err
}

func tooBig() error {
	return memory.Errorf(memory.CodeInvalidParams, "the import is over %d bytes; split it", MaxImportBytes)
}

// readError is a failure to read the import (the caller's connection, or
// its own limit, which stays in the chain for the caller to find).
func readError(err error) error {
	return memory.Wrap(memory.CodeInvalidParams, err, "reading the import failed")
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
func (m *Mover) parseJSONL(r io.Reader) (memory.Dump, recordLines, error) {
	var d memory.Dump
	lines := recordLines{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 4*m.MaxBytes+1<<20)
	now := m.Now()
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		section, err := m.parseLine(&d, text, now)
		if err != nil {
			return d, lines, memory.Prefixed(err, "line %d: ", line)
		}
		lines[section] = append(lines[section], line)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return d, lines, memory.Wrap(memory.CodeInvalidParams, err, "line %d is over %d bytes", line+1, 4*m.MaxBytes+1<<20)
		}
		return d, lines, memory.Wrap(memory.CodeInvalidParams, err, "line %d cannot be read", line+1)
	}
	return d, lines, nil
}

// recordKeys are the keys of the records Export writes, one to a line.
var recordKeys = map[string]bool{"observation": true, "capsule": true, "summary": true, "pin": true,
	"thought": true, "kg_entity": true, "kg_observation": true, "kg_edge": true,
	"code_repo": true, "code_artifact": true, "code_file": true, "code_entity": true, "code_transition": true,
	"code_episode": true, "code_hydration": true, "code_gate": true}

// parseLine reads one line into d and returns the section it joined.
func (m *Mover) parseLine(d *memory.Dump, text []byte, now int64) (memory.Section, error) {
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
				if err := m.checkRecord(&rec); err != nil {
					return "", err
				}
				d.Add(rec)
				return rec.Section(), nil
			}
		}
	}
	o, err := m.Logged(text, now)
	if err != nil {
		return "", err
	}
	d.Logged = append(d.Logged, o)
	return memory.SectionLogged, nil
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
func (m *Mover) parseParity(ctx context.Context, data []byte) (memory.Dump, []string, error) {
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
		if err := m.checkObservation(&obs); err != nil {
			return d, nil, err
		}
		d.Observations = append(d.Observations, obs)
		known[obs.ID] = true
	}
	for i := range ds.Capsules {
		if err := m.checkCapsule(&ds.Capsules[i]); err != nil {
			return d, nil, err
		}
	}
	d.Capsules = ds.Capsules
	for i := range ds.Summaries {
		if err := m.checkSummary(&ds.Summaries[i]); err != nil {
			return d, nil, err
		}
		known[ds.Summaries[i].ID] = true
	}
	d.Summaries = ds.Summaries
	var skipped []string
	for _, p := range ds.Pins {
		if err := m.checkPin(&p); err != nil {
			return d, nil, err
		}
		if !known[p.TargetID] {
			if _, err := m.Target(ctx, p.TargetType, p.TargetID); memory.IsCode(err, memory.CodeNotFound) {
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
func (m *Mover) Export(ctx context.Context, w io.Writer) (int, error) {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	n := 0
	err := m.Store.Export(ctx, func(r memory.Record) error {
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
func (m *Mover) ImportDump(ctx context.Context, d memory.Dump) error {
	if err := m.checkDump(d); err != nil {
		return err
	}
	return m.Store.Import(ctx, d, nil)
}
