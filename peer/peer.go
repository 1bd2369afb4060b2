// Package peer reads what other agent-memory systems keep (the official
// MCP memory server's JSON Lines, Kindling's export, mem0's memories) into
// cairn records, so that a user switching to cairn brings their memory
// along. Ids are kept (Kindling) or derived from content (the MCP memory
// server, mem0), so reading the same file twice yields the same records
// and an import of it is idempotent.
package peer

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairnhq/cairn/memory"
	"lukechampine.com/blake3"
)

// The peers cairn imports from.
const (
	MCPMemory = "mcp-memory"
	Kindling  = "kindling"
	Mem0      = "mem0"
)

// Names lists the peers.
var Names = []string{MCPMemory, Kindling, Mem0}

// Parsed is what a peer's file holds, as cairn records, and how each kind
// of the peer's record was mapped.
type Parsed struct {
	Dump memory.Dump
	// Mapped says, per kind of the peer's record, what it became and how
	// many there were ("entity → kg_entity": 12).
	Mapped map[string]int
	// Notes are records changed or left out on the way, with the reason.
	Notes []string
}

// Options tune a parse.
type Options struct {
	// Now stamps records the peer keeps no time for (Unix ms).
	Now int64
	// Scope is given to records the peer keeps no scope for.
	Scope memory.Scope
}

// Parse reads data as the named peer's format.
func Parse(name string, data []byte, o Options) (Parsed, error) {
	switch name {
	case MCPMemory:
		return parseMCPMemory(data, o)
	case Kindling:
		return parseKindling(data, o)
	case Mem0:
		return parseMem0(data, o)
	}
	return Parsed{}, memory.Errorf(memory.CodeInvalidParams, "unknown peer %q (peers: %s)", name, strings.Join(Names, ", "))
}

// id derives a stable id from parts: prefix_ and 20 hex digits of their
// hash.
func id(prefix string, parts ...string) string {
	h := blake3.Sum256([]byte(strings.Join(parts, "\x00")))
	return prefix + "_" + hex.EncodeToString(h[:10])
}

var labelBad = regexp.MustCompile(`[^A-Za-z0-9 _.:/-]+`)

// label turns a peer's type or relation into a cairn label: letters,
// digits, spaces and _ . : / -, starting with a letter or digit.
func label(s, fallback string) string {
	s = strings.TrimSpace(labelBad.ReplaceAllString(s, "-"))
	s = strings.TrimLeft(s, " _.:/-")
	if s == "" {
		return fallback
	}
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], " ")
	}
	return s
}

// parseMCPMemory reads the official MCP memory server's file: one JSON
// object a line, {"type":"entity","name","entityType","observations":[]}
// or {"type":"relation","from","to","relationType"}.
func parseMCPMemory(data []byte, o Options) (Parsed, error) {
	p := Parsed{Mapped: map[string]int{}}
	type entity struct {
		Type         string   `json:"type"`
		Name         string   `json:"name"`
		EntityType   string   `json:"entityType"`
		Observations []string `json:"observations"`
		From         string   `json:"from"`
		To           string   `json:"to"`
		RelationType string   `json:"relationType"`
	}
	ents := map[string]string{} // name → id
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	line := 0
	var rels []entity
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var e entity
		if err := json.Unmarshal(text, &e); err != nil {
			return p, memory.Errorf(memory.CodeInvalidParams, "line %d: not a JSON object of the MCP memory server", line)
		}
		switch e.Type {
		case "entity":
			name := strings.TrimSpace(e.Name)
			if name == "" {
				return p, memory.Errorf(memory.CodeInvalidParams, "line %d: an entity without a name", line)
			}
			if _, dup := ents[name]; dup {
				return p, memory.Errorf(memory.CodeInvalidParams, "line %d: entity %q appears twice", line, name)
			}
			typ := label(e.EntityType, "thing")
			if typ != e.EntityType {
				p.Notes = append(p.Notes, fmt.Sprintf("entity %q: type %q stored as %q", name, e.EntityType, typ))
			}
			eid := id("ent_mcpm", name)
			ents[name] = eid
			data, _ := json.Marshal(map[string]string{"source": MCPMemory})
			p.Dump.Entities = append(p.Dump.Entities, memory.KGEntity{ID: eid, Name: name, Type: typ, Data: data,
				CreatedAt: o.Now, UpdatedAt: o.Now, Scope: o.Scope})
			p.Mapped["entity → kg_entity"]++
			seen := map[string]bool{}
			for _, obs := range e.Observations {
				if strings.TrimSpace(obs) == "" || seen[obs] {
					continue
				}
				seen[obs] = true
				p.Dump.KGObservations = append(p.Dump.KGObservations, memory.KGObservation{ID: id("kgo_mcpm", name, obs),
					EntityID: eid, Content: obs, CreatedAt: o.Now, Scope: o.Scope})
				p.Mapped["entity observation → kg_observation"]++
			}
		case "relation":
			rels = append(rels, e)
		default:
			return p, memory.Errorf(memory.CodeInvalidParams, "line %d: type %q is neither entity nor relation", line, e.Type)
		}
	}
	if err := sc.Err(); err != nil {
		return p, memory.Wrap(memory.CodeInvalidParams, err, "line %d cannot be read", line+1)
	}
	seen := map[string]bool{}
	for _, r := range rels {
		rel := label(r.RelationType, "related_to")
		eid := id("edge_mcpm", r.From, r.RelationType, r.To)
		if seen[eid] {
			continue
		}
		seen[eid] = true
		src, ok1 := ents[r.From]
		dst, ok2 := ents[r.To]
		if !ok1 || !ok2 {
			// The server keeps relations whose entities were deleted; the
			// entity may still exist in cairn under the same name (the
			// importer looks), else the edge is left out.
			if !ok1 {
				src = id("ent_mcpm", r.From)
			}
			if !ok2 {
				dst = id("ent_mcpm", r.To)
			}
		}
		p.Dump.Edges = append(p.Dump.Edges, memory.KGEdge{ID: eid, Source: src, Target: dst, Relation: rel, CreatedAt: o.Now, Scope: o.Scope})
		p.Mapped["relation → kg_edge"]++
	}
	return p, nil
}

// kindlingExport is Kindling's exportDatabase() result: the store's
// dataset.
type kindlingExport struct {
	Version      string               `json:"version"`
	ExportedAt   int64                `json:"exportedAt"`
	Observations []memory.Observation `json:"observations"`
	Capsules     []memory.Capsule     `json:"capsules"`
	Summaries    []memory.Summary     `json:"summaries"`
	Pins         []memory.Pin         `json:"pins"`
}

// kindlingBundle is the file Kindling's own export writes (its core's
// export bundle): the store's dataset, wrapped with the bundle's format
// version, its time and optional metadata.
type kindlingBundle struct {
	BundleVersion json.RawMessage `json:"bundleVersion"`
	Dataset       json.RawMessage `json:"dataset"`
}

// kindlingBundleVersion is the bundle format cairn reads.
const kindlingBundleVersion = "1.0"

// parseKindling reads Kindling's export: the bundle its export writes
// ({bundleVersion 1.0, exportedAt, metadata, dataset}) or the bare
// dataset of exportDatabase (version 1.0): observations, capsules with
// their observations in order, summaries and pins, with their ids and
// times. Both give the same records.
func parseKindling(data []byte, o Options) (Parsed, error) {
	p := Parsed{Mapped: map[string]int{}}
	notKindling := memory.Errorf(memory.CodeInvalidParams, "not a Kindling export (a JSON object: an export bundle with bundleVersion and dataset, or exportDatabase's dataset with version, observations, capsules, summaries, pins)")
	var b kindlingBundle
	if err := json.Unmarshal(data, &b); err != nil {
		return p, notKindling
	}
	if b.BundleVersion != nil {
		var v string
		if json.Unmarshal(b.BundleVersion, &v) != nil || v != kindlingBundleVersion {
			return p, memory.Errorf(memory.CodeInvalidParams, "Kindling export bundle version %s: cairn reads bundle version %s", clip(string(b.BundleVersion), 40), kindlingBundleVersion)
		}
		if len(bytes.TrimSpace(b.Dataset)) == 0 || bytes.TrimSpace(b.Dataset)[0] != '{' {
			return p, memory.Errorf(memory.CodeInvalidParams, "the Kindling export bundle has no dataset object")
		}
		data = b.Dataset
	}
	var ex kindlingExport
	if err := json.Unmarshal(data, &ex); err != nil {
		var me *memory.Error
		if errors.As(err, &me) {
			return p, me
		}
		return p, notKindling
	}
	switch {
	case ex.Version == "" && b.BundleVersion == nil:
		return p, notKindling
	case ex.Version != "1.0":
		return p, memory.Errorf(memory.CodeInvalidParams, "Kindling export version %q: cairn reads version 1.0", clip(ex.Version, 40))
	}
	// Provenance is kept compacted, as cairn stores it: the export's
	// indentation (a bundle nests it one level deeper) is not data.
	for i := range ex.Observations {
		prov, err := memory.NormalizeProvenance(ex.Observations[i].Provenance)
		if err != nil {
			return p, prefixed(err, "observation %d (%s): ", i+1, clip(ex.Observations[i].ID, 60))
		}
		ex.Observations[i].Provenance = prov
	}
	p.Dump.Observations = ex.Observations
	p.Mapped["observation → observation"] = len(ex.Observations)
	for _, cap := range ex.Capsules {
		if cap.ObservationIDs == nil {
			cap.ObservationIDs = []string{}
		}
		p.Dump.Capsules = append(p.Dump.Capsules, cap)
	}
	p.Mapped["capsule → capsule"] = len(ex.Capsules)
	p.Dump.Summaries = ex.Summaries
	p.Mapped["summary → summary"] = len(ex.Summaries)
	p.Dump.Pins = ex.Pins
	p.Mapped["pin → pin"] = len(ex.Pins)
	return p, nil
}

// mem0Memory is one memory as mem0's getAll() (or its export) returns it.
type mem0Memory struct {
	ID         string         `json:"id"`
	Memory     string         `json:"memory"`
	Hash       string         `json:"hash"`
	Metadata   map[string]any `json:"metadata"`
	Categories []string       `json:"categories"`
	// mem0's Python SDK writes created_at, its TypeScript SDK createdAt.
	CreatedAt      string `json:"created_at"`
	CreatedAtCamel string `json:"createdAt"`
	UpdatedAt      string `json:"updated_at"`
	UserID         string `json:"user_id"`
	AgentID        string `json:"agent_id"`
	RunID          string `json:"run_id"`
	Role           string `json:"role"`
}

// parseMem0 reads mem0 memories: getAll()'s {"results": [...]}, a bare
// array, or one memory a line. Each becomes a thought (origin logged,
// pipeline mem0) with its user, agent and run as scope, its categories
// and scalar metadata as tags, and its creation time.
func parseMem0(data []byte, o Options) (Parsed, error) {
	p := Parsed{Mapped: map[string]int{}}
	var mems []mem0Memory
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) > 0 && trimmed[0] == '[':
		if err := json.Unmarshal(trimmed, &mems); err != nil {
			return p, memory.Errorf(memory.CodeInvalidParams, "not a list of mem0 memories")
		}
	case len(trimmed) > 0 && trimmed[0] == '{' && bytes.Contains(trimmed[:min(len(trimmed), 64)], []byte(`"results"`)):
		var r struct {
			Results []mem0Memory `json:"results"`
		}
		if err := json.Unmarshal(trimmed, &r); err != nil {
			return p, memory.Errorf(memory.CodeInvalidParams, "not mem0's getAll() result")
		}
		mems = r.Results
	default:
		sc := bufio.NewScanner(bytes.NewReader(trimmed))
		sc.Buffer(nil, 64<<20)
		line := 0
		for sc.Scan() {
			line++
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			var m mem0Memory
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				return p, memory.Errorf(memory.CodeInvalidParams, "line %d: not a mem0 memory", line)
			}
			mems = append(mems, m)
		}
	}
	for i, m := range mems {
		if strings.TrimSpace(m.Memory) == "" {
			return p, memory.Errorf(memory.CodeInvalidParams, "memory %d (%s) has no text", i+1, m.ID)
		}
		key := m.ID
		if key == "" {
			key = m.Hash + "\x00" + m.Memory
		}
		t := memory.Thought{ID: id("th_mem0", key), Content: m.Memory, Origin: memory.OriginLogged, Status: memory.StatusActive,
			Significance: 0.5, Pipeline: Mem0, CreatedAt: o.Now, SummaryOf: []string{},
			Scope: memory.Scope{UserID: m.UserID, AgentID: m.AgentID, SessionID: m.RunID}.Fill(o.Scope)}
		if ts, ok := parseTime(firstOf(m.CreatedAt, m.CreatedAtCamel)); ok {
			t.CreatedAt = ts
		}
		t.Tags = mem0Tags(m)
		p.Dump.Thoughts = append(p.Dump.Thoughts, t)
	}
	p.Mapped["memory → thought"] = len(mems)
	return p, nil
}

// mem0Tags keeps a memory's categories and scalar metadata as tags
// ("category", "key=value"), at most 32 of at most 64 bytes.
func mem0Tags(m mem0Memory) []string {
	tags := []string{"mem0"}
	for _, c := range m.Categories {
		tags = append(tags, c)
	}
	keys := make([]string, 0, len(m.Metadata))
	for k := range m.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var v string
		switch x := m.Metadata[k].(type) {
		case string:
			v = x
		case float64, bool:
			v = fmt.Sprint(x)
		default:
			continue
		}
		tags = append(tags, k+"="+v)
	}
	if m.Role != "" {
		tags = append(tags, "role="+m.Role)
	}
	var out []string
	for _, t := range tags {
		t = strings.TrimSpace(strings.Join(strings.Fields(t), " "))
		if t == "" {
			continue
		}
		if len(t) > 64 {
			t = strings.TrimSpace(t[:64])
		}
		out = append(out, t)
		if len(out) == 32 {
			break
		}
	}
	return out
}

func parseTime(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMilli(), true
		}
	}
	return 0, false
}

// prefixed puts a prefix on a typed error's message.
func prefixed(err error, format string, args ...any) error {
	pe := memory.Public(err)
	return &memory.Error{Code: pe.Code, Message: fmt.Sprintf(format, args...) + pe.Message, Err: err}
}

// clip cuts s to n bytes (on a rune boundary) for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
