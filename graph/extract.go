package graph

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// Text is one source the extractor reads: a thought's id and its text.
type Text struct {
	ID      string
	Content string
}

// ExtractedEntity is an entity the extractor proposes.
type ExtractedEntity struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Confidence is in [0, 1]; see Extract for how it is set.
	Confidence float64 `json:"confidence"`
	// SourceID is the text of its most confident mention (the first
	// read among mentions of confidence 0.95 or more, which are all
	// sure); Sentence is that mention's sentence and Rule the rule that
	// found it.
	SourceID string `json:"source_id"`
	Sentence string `json:"sentence"`
	Rule     string `json:"rule"`
	// SourceIDs are every text that mentions it, in the order read: a
	// source whose entity is reported under another source's id still
	// holds that knowledge.
	SourceIDs []string `json:"source_ids"`
	// Mentions counts its mentions across the texts.
	Mentions int `json:"mentions"`
}

// ExtractedEdge is a relation between two extracted entities that a
// sentence states.
type ExtractedEdge struct {
	Source     string  `json:"source"`
	Relation   string  `json:"relation"`
	Target     string  `json:"target"`
	Confidence float64 `json:"confidence"`
	SourceID   string  `json:"source_id"`
	Sentence   string  `json:"sentence"`
	Rule       string  `json:"rule"`
	// SourceIDs are every text that states it.
	SourceIDs []string `json:"source_ids"`
}

// Extraction is what Extract finds: entities and edges, most confident
// first (ties by name).
type Extraction struct {
	Entities []ExtractedEntity
	Edges    []ExtractedEdge
}

// Entity confidences by the rule that finds a mention. Confidence 0.6 is
// the default staging threshold: rules below it never stage alone.
const (
	confCode       = 0.85 // `backticked` identifier or path
	confCodeWord   = 0.55 // `backticked` ordinary English word
	confCamel      = 0.85 // internal capitals: PostgreSQL, GitHub, gRPC
	confIdent      = 0.8  // kebab or snake case with a component suffix or an uncommon part
	confKnown      = 0.8  // a well-known technology, in any case
	confMultiCap   = 0.75 // several capitalised words: Chen Wei, Acme Corp
	confCap        = 0.7  // a capitalised word inside a sentence
	confCapRole    = 0.55 // an ordinary word capitalised after an article: "the Proxy"
	confAcronym    = 0.7  // NTP, JWT (not generic: API, URL)
	confInitial    = 0.65 // a capitalised uncommon word opening a sentence, before a verb
	confInitialLow = 0.4  // a capitalised uncommon word opening a sentence, alone
	confAlnum      = 0.7  // a lower-case word of letters and digits: amd64, python2
	confRare       = 0.7  // a lower-case word English does not know, where names stand
	confRareLow    = 0.5  // the same elsewhere
	mentionBoost   = 0.05 // per further mention, at most two
	confMax        = 0.95
	// Edge confidences by pattern, capped by the weaker entity's.
	confEdgeDirect  = 0.85
	confEdgeCarried = 0.75
)

// Extract proposes entities and edges from texts. It is deterministic and
// offline. Rules propose candidate mentions, each with the rule that found
// it and the rule's own confidence (the constants above): a `backticked`
// identifier, path or command line's program; a word with inner capitals
// (PostgreSQL) or a selector of code; a name of code with underscores or
// written as a call; a kebab-case identifier ending in a component word
// (auth-service) or holding an uncommon word; a file, path or module; a
// well-known technology in any case; a standard by number (RFC 4648); a
// run of capitalised words inside a sentence; an acronym that is not
// generic; a lower-case word English does not know where names stand; a
// capitalised uncommon word opening a sentence. Never an entity:
// pronouns, determiners, common words opening a sentence ("The",
// "This"), markdown labels ("Sources:"), months and weekdays, numbers,
// versions and values, generic acronyms (API, URL), words in capitals
// English knows, title phrases, placeholders and examples of code. The
// mention model (model.go) then sets each mention's confidence from
// features of the mention and its neighbours; each further mention adds
// 0.05 (up to 0.1).
//
// An edge is a relation phrase from a fixed vocabulary (uses, depends_on,
// calls, owns, runs_on, writes_to, reads_from, replaces, ...) between two
// entities of one sentence, with its subject found through fillers,
// relative pronouns, infinitives, appositions and participles; "and"
// and "," carry the subject to a second verb and the relation to a list
// of objects; passives ("is owned by") are turned around; replacements
// ("replace X with Y", "use Y instead of X", "Drop X, use Y", "switch
// from X to Y", "drop X in favour of Y", "X is deprecated, use Y",
// Debian's Replaces) point from the new to the old; a negation, a modal of
// possibility or a condition cancels it. Its confidence is 0.85 (0.75
// when carried), at most the weaker entity's.
func Extract(texts []Text) Extraction {
	x, sents := newExtractor(texts)
	var prev sentMentions
	for _, s := range sents {
		ms := x.mentions(s)
		x.edgesOf(s, ms, prev)
		prev = sentMentions{source: s.source, ms: ms}
	}
	return x.result()
}

// newExtractor splits texts into sentences and notes the words seen
// capitalised inside a sentence.
func newExtractor(texts []Text) (*extractor, []sentence) {
	x := &extractor{ents: map[string]*ExtractedEntity{}, capsSeen: map[string]bool{}, edgeAt: map[string]int{}}
	var sents []sentence
	for _, t := range texts {
		for _, s := range splitSentences(t.Content) {
			s.source = t.ID
			sents = append(sents, s)
			words := 0
			for i, tok := range s.toks {
				if words > 0 && tok.word && isCapitalised(tok.text) && s.toks[i-1].word {
					x.capsSeen[strings.ToLower(tok.text)] = true
				}
				if tok.word || tok.code {
					words++
				}
			}
		}
	}
	return x, sents
}

type extractor struct {
	ents   map[string]*ExtractedEntity
	edges  []ExtractedEdge
	edgeAt map[string]int // index in edges by edge key
	// capsSeen holds words (lower case) seen capitalised inside a
	// sentence somewhere in the texts.
	capsSeen map[string]bool
}

// token is a word, a code span or a punctuation mark of a sentence.
type token struct {
	text  string
	lower string // text in lower case
	word  bool   // a word (letters, digits, inner - _ . / + #)
	code  bool   // a `backticked` span
	cmd   bool   // the program of a `backticked` command line
	flag  bool   // a word right after "-" or "--": a command-line flag
	poss  bool   // a word followed by a possessive "'s"
	// spaced marks a token that follows a space (or opens the line).
	spaced bool
}

type sentence struct {
	source string
	text   string
	toks   []token
}

// sentMentions are a sentence's source and mentions.
type sentMentions struct {
	source string
	ms     []mention
}

// mention is an entity span in a sentence's tokens: [s, e).
type mention struct {
	s, e int
	name string
}

func joinWords(ts []token) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.text
	}
	name := strings.Join(parts, " ")
	if canon, ok := knownTech[strings.ToLower(name)]; ok && len(ts) == 1 {
		return canon
	}
	return name
}

func (x *extractor) addEntity(name, typ string, conf float64, rule string, s sentence) {
	// Confidences past confMax are one: of mentions that sure, the first
	// read stays the one reported.
	conf = math.Min(conf, confMax)
	key := memory.NameKey(name)
	e, ok := x.ents[key]
	if !ok {
		x.ents[key] = &ExtractedEntity{Name: name, Type: typ, Confidence: conf, SourceID: s.source, Sentence: s.text, Rule: rule, Mentions: 1,
			SourceIDs: []string{s.source}}
		return
	}
	e.Mentions++
	if !slices.Contains(e.SourceIDs, s.source) {
		e.SourceIDs = append(e.SourceIDs, s.source)
	}
	if conf > e.Confidence {
		e.Name, e.Confidence, e.SourceID, e.Sentence, e.Rule = name, conf, s.source, s.text, rule
	}
	if e.Type == "concept" && typ != "concept" {
		e.Type = typ
	}
}

func (x *extractor) result() Extraction {
	var out Extraction
	for _, e := range x.ents {
		e.Confidence = round2(math.Min(confMax, e.Confidence+mentionBoost*float64(min(2, e.Mentions-1))))
		out.Entities = append(out.Entities, *e)
	}
	conf := func(name string) float64 {
		if e, ok := x.ents[memory.NameKey(name)]; ok {
			return e.Confidence
		}
		return 0
	}
	for _, g := range x.edges {
		g.Source, g.Target = x.ents[memory.NameKey(g.Source)].Name, x.ents[memory.NameKey(g.Target)].Name
		g.Confidence = round2(math.Min(g.Confidence, math.Min(conf(g.Source), conf(g.Target))))
		out.Edges = append(out.Edges, g)
	}
	slices.SortFunc(out.Entities, func(a, b ExtractedEntity) int {
		if c := cmp.Compare(b.Confidence, a.Confidence); c != 0 {
			return c
		}
		return strings.Compare(memory.NameKey(a.Name), memory.NameKey(b.Name))
	})
	slices.SortFunc(out.Edges, func(a, b ExtractedEdge) int {
		if c := cmp.Compare(b.Confidence, a.Confidence); c != 0 {
			return c
		}
		return strings.Compare(memory.EdgeKey(a.Source, a.Relation, a.Target), memory.EdgeKey(b.Source, b.Relation, b.Target))
	})
	return out
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }
