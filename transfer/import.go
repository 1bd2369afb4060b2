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
	// Progress, when set, is called as records are written: total is -1
	// while JSON Lines are still being read, and the number of records
	// once they are all written.
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

// count adds the records of d to the report.
func (rep *ImportReport) count(d memory.Dump) {
	rep.Observations += len(d.Observations) + len(d.Logged)
	rep.Capsules += len(d.Capsules)
	rep.Summaries += len(d.Summaries)
	rep.Pins += len(d.Pins)
	rep.Thoughts += len(d.Thoughts)
	rep.Entities += len(d.Entities)
	rep.EntityObservations += len(d.KGObservations)
	rep.Edges += len(d.Edges)
	rep.Code += len(d.CodeRepos) + len(d.Artifacts) + len(d.CodeFiles) + len(d.CodeEntities) +
		len(d.CodeLedger) + len(d.Episodes) + len(d.HydrationRows) + len(d.Gates)
}

// Import reads a file of records (FormatJSONL or FormatParity, detected
// from the content) and writes it in one transaction: every record, or,
// when any record is invalid or clashes with the database, none. Errors
// name the line or record at fault.
//
// JSON Lines are written as they are read, a part of at most partRecords
// records at a time, into that one transaction, so an import holds one
// part in memory, not the file. Records that may name a record on a later
// line (capsules, observations to record that name a capsule or a
// session, summaries, pins, entity observations, edges and code memory)
// are held and written last, in the order a whole file is written in, so
// the outcome does not depend on where the parts fall.
func (m *Mover) Import(ctx context.Context, r io.Reader, opts ImportOptions) (ImportReport, error) {
	rep := ImportReport{Format: FormatJSONL}
	in := &boundedReader{r: r, left: MaxImportBytes}
	br := bufio.NewReaderSize(in, 64<<10)
	// first is the input up to its first line that is not blank.
	var first []byte
	for {
		line, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return rep, readError(err)
		}
		first = append(first, line...)
		if err != nil || len(bytes.TrimSpace(line)) > 0 {
			break
		}
	}
	if head := bytes.TrimSpace(first); len(head) > 0 && json.Valid(head) && !isParityDataset(head) {
		return m.importJSONL(ctx, io.MultiReader(bytes.NewReader(first), br), in, opts, rep)
	}
	// A parity dataset is one JSON document: it is read whole, as is
	// input that is neither format (for its error).
	rest, err := io.ReadAll(br)
	if err != nil {
		return rep, readError(err)
	}
	if in.over {
		return rep, tooBig()
	}
	data := append(first, rest...)
	if !isParityDataset(data) {
		return m.importJSONL(ctx, bytes.NewReader(data), in, opts, rep)
	}
	rep.Format = FormatParity
	dump, skipped, err := m.parseParity(ctx, data)
	rep.Skipped = skipped
	if err != nil {
		return rep, err
	}
	if dump.Len() == 0 {
		return rep, memory.Errorf(memory.CodeInvalidParams, "the import holds no records")
	}
	total := dump.Len()
	progress := func(done int) {
		if opts.Progress != nil {
			opts.Progress(done, total)
		}
	}
	if err := m.Store.Import(ctx, dump, progress); err != nil {
		return rep, err
	}
	rep.count(dump)
	rep.Embedded, rep.Pending = m.embed(ctx, opts.EmbedProgress, true)
	return rep, nil
}

// importJSONL writes JSON Lines read from r (in says whether the input
// was cut short or failed) through the store's Load, a part at a time.
func (m *Mover) importJSONL(ctx context.Context, r io.Reader, in *boundedReader, opts ImportOptions, rep ImportReport) (ImportReport, error) {
	loader, ok := m.Store.(memory.Loader)
	if !ok {
		return rep, memory.Errorf(memory.CodeInternal, "this store cannot import JSON Lines")
	}
	p := m.newParts(r, in)
	first, err := p.next()
	if err != nil {
		return rep, err
	}
	if first.Len() == 0 {
		return rep, memory.Errorf(memory.CodeInvalidParams, "the import holds no records")
	}
	next := func() (memory.Dump, error) {
		if first.Len() > 0 {
			d := first
			first = memory.Dump{}
			return d, nil
		}
		return p.next()
	}
	progress := func(done int) {
		if opts.Progress != nil {
			opts.Progress(done, -1)
		}
	}
	if err := loader.Load(ctx, next, progress, nil); err != nil {
		if p.failed == nil {
			// The store's error about a record of the part it was
			// writing: name its line.
			err = p.lines.name(err)
		}
		return rep, err
	}
	written := p.written
	written.Format = rep.Format
	if opts.Progress != nil {
		n := written.Observations + written.Capsules + written.Summaries + written.Pins + written.Thoughts +
			written.Entities + written.EntityObservations + written.Edges + written.Code
		opts.Progress(n, n)
	}
	written.Embedded, written.Pending = m.embed(ctx, opts.EmbedProgress, true)
	return written, nil
}

// Bounds of one part of a JSON Lines import: it ends at partRecords
// records or once its lines pass partBytes.
const (
	partRecords = 1000
	partBytes   = 8 << 20
)

// parts reads JSON Lines a part at a time: the records that can be
// written as soon as they are read, then, once the input ends, the held
// ones.
type parts struct {
	m    *Mover
	sc   *bufio.Scanner
	in   *boundedReader
	now  int64
	line int
	eof  bool
	// held are the records written last, with their lines; heldGiven
	// says they were.
	held      memory.Dump
	heldLines recordLines
	heldGiven bool
	// lines are the lines of the part last given, for the store's errors
	// about its records; failed is the error next gave, if any (it names
	// its line already).
	lines  recordLines
	failed error
	// written counts the records of the parts given.
	written ImportReport
}

func (m *Mover) newParts(r io.Reader, in *boundedReader) *parts {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 4*m.MaxBytes+1<<20)
	return &parts{m: m, sc: sc, in: in, now: m.Now(), heldLines: recordLines{}}
}

// next returns the next part; an empty one once every record was given.
func (p *parts) next() (memory.Dump, error) {
	d, lines, err := p.read()
	switch {
	case err != nil:
		p.failed = err
		return memory.Dump{}, err
	case d.Len() == 0 && !p.heldGiven:
		p.heldGiven = true
		d, lines = p.held, p.heldLines
		p.held, p.heldLines = memory.Dump{}, nil
		if err := checkCodeDump(d); err != nil {
			p.failed = lines.name(err)
			return memory.Dump{}, p.failed
		}
	}
	p.lines = lines
	p.written.count(d)
	return d, nil
}

// read parses lines until a part is full or the input ends. Blank lines
// are skipped; held records go to p.held.
func (p *parts) read() (memory.Dump, recordLines, error) {
	var d memory.Dump
	lines := recordLines{}
	size := 0
	for !p.eof && d.Len() < partRecords && size < partBytes {
		if !p.sc.Scan() {
			p.eof = true
			if err := p.scanError(); err != nil {
				return d, lines, err
			}
			break
		}
		p.line++
		text := bytes.TrimSpace(p.sc.Bytes())
		if len(text) == 0 {
			continue
		}
		size += len(text)
		rec, err := p.m.parseLine(text, p.now)
		if err != nil {
			if ferr := p.inputError(); ferr != nil {
				// A line cut short by the limit or by a failed read
				// reads as broken: say why instead.
				return d, lines, ferr
			}
			return d, lines, memory.Prefixed(err, "line %d: ", p.line)
		}
		into, at := &d, lines
		if !rec.streamed() {
			into, at = &p.held, p.heldLines
		}
		rec.addTo(into)
		at[rec.section()] = append(at[rec.section()], p.line)
	}
	return d, lines, nil
}

// scanError is why the input ended, when it did not simply end.
func (p *parts) scanError() error {
	if err := p.inputError(); err != nil {
		return err
	}
	if err := p.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return memory.Wrap(memory.CodeInvalidParams, err, "line %d is over %d bytes", p.line+1, 4*p.m.MaxBytes+1<<20)
		}
		return memory.Wrap(memory.CodeInvalidParams, err, "line %d cannot be read", p.line+1)
	}
	return nil
}

// inputError is the input's own failure: over the limit, or a read that
// failed.
func (p *parts) inputError() error {
	switch {
	case p.in.over:
		return tooBig()
	case p.in.err != nil:
		return readError(p.in.err)
	}
	return nil
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

// recordKeys are the keys of the records Export writes, one to a line.
var recordKeys = map[string]bool{"observation": true, "capsule": true, "summary": true, "pin": true,
	"thought": true, "kg_entity": true, "kg_observation": true, "kg_edge": true,
	"code_repo": true, "code_artifact": true, "code_file": true, "code_entity": true, "code_transition": true,
	"code_episode": true, "code_hydration": true, "code_gate": true}

// parsedLine is one line of JSON Lines: a record as Export writes it, or
// an observation to record.
type parsedLine struct {
	rec    memory.Record
	logged *memory.NewObservation
}

func (l parsedLine) section() memory.Section {
	if l.logged != nil {
		return memory.SectionLogged
	}
	return l.rec.Section()
}

func (l parsedLine) addTo(d *memory.Dump) {
	if l.logged != nil {
		d.Logged = append(d.Logged, *l.logged)
		return
	}
	d.Add(l.rec)
}

// streamed reports whether the record can be written as soon as it is
// read: it names no record another line may hold. An observation to
// record that names a capsule or a session joins that capsule (or the
// session's open one), which a later line may create.
func (l parsedLine) streamed() bool {
	if l.logged != nil {
		return l.logged.CapsuleID == "" && l.logged.Scope.SessionID == ""
	}
	switch l.rec.Section() {
	case memory.SectionObservations, memory.SectionThoughts, memory.SectionEntities:
		return true
	}
	return false
}

// parseLine reads one line that is not blank.
func (m *Mover) parseLine(text []byte, now int64) (parsedLine, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(text, &keys); err != nil {
		return parsedLine{}, memory.Errorf(memory.CodeInvalidParams, "not a JSON object")
	}
	if len(keys) == 1 {
		for k := range keys {
			if recordKeys[k] {
				var rec memory.Record
				if err := memory.DecodeStrict(text, &rec); err != nil {
					return parsedLine{}, err
				}
				if err := m.checkRecord(&rec); err != nil {
					return parsedLine{}, err
				}
				return parsedLine{rec: rec}, nil
			}
		}
	}
	o, err := m.Logged(text, now)
	if err != nil {
		return parsedLine{}, err
	}
	return parsedLine{logged: &o}, nil
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
