package graph

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

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
	// SourceID is the text of its most confident mention; Sentence is
	// that mention's sentence and Rule the rule that found it.
	SourceID string `json:"source_id"`
	Sentence string `json:"sentence"`
	Rule     string `json:"rule"`
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
	confCamel      = 0.85 // internal capitals: PostgreSQL, GitHub, gRPC
	confIdent      = 0.8  // kebab or snake case with a component suffix or an uncommon part
	confKnown      = 0.8  // a well-known technology, in any case
	confMultiCap   = 0.75 // several capitalised words: Chen Wei, Acme Corp
	confCap        = 0.7  // a capitalised word inside a sentence
	confAcronym    = 0.7  // NTP, JWT (not generic: API, URL)
	confInitial    = 0.65 // a capitalised uncommon word opening a sentence, before a verb
	confInitialLow = 0.4  // a capitalised uncommon word opening a sentence, alone
	mentionBoost   = 0.05 // per further mention, at most two
	confMax        = 0.95
	// Edge confidences by pattern, capped by the weaker entity's.
	confEdgeDirect  = 0.85
	confEdgeCarried = 0.75
)

// Extract proposes entities and edges from texts. It is deterministic and
// offline. An entity is a span found by one of these rules (the most
// confident wins): a `backticked` identifier or path; a word with inner
// capitals (PostgreSQL); a kebab- or snake-case identifier ending in a
// component word (auth-service) or holding an uncommon word; a
// well-known technology in any case; a run of capitalised words inside a
// sentence; an acronym that is not generic; a capitalised uncommon word
// opening a sentence (confident only before a verb or when the word is
// also capitalised inside a sentence). Never an entity: pronouns,
// determiners, common words opening a sentence ("The", "This"), markdown
// labels ("Sources:"), months and weekdays, numbers and versions, generic
// acronyms (API, URL). Each further mention adds 0.05 (up to 0.1).
//
// An edge is a relation phrase from a fixed vocabulary (uses, depends_on,
// calls, owns, runs_on, writes_to, reads_from, replaces, ...) between two
// entities of one sentence, with only auxiliaries and adverbs before it
// and determiners after it; "and"/"," carry the subject to a second verb
// and the relation to a list of objects; passives ("is owned by") are
// turned around; a negation before it ("does not use") cancels it. Its
// confidence is 0.85 (0.75 when carried), at most the weaker entity's.
func Extract(texts []Text) Extraction {
	x := &extractor{ents: map[string]*ExtractedEntity{}, capsSeen: map[string]bool{}}
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
	var prev sentMentions
	for _, s := range sents {
		ms := x.mentions(s)
		x.edgesOf(s, ms, prev)
		prev = sentMentions{source: s.source, ms: ms}
	}
	return x.result()
}

type extractor struct {
	ents  map[string]*ExtractedEntity
	edges []ExtractedEdge
	// capsSeen holds words (lower case) seen capitalised inside a
	// sentence somewhere in the texts.
	capsSeen map[string]bool
}

// token is a word, a code span or a punctuation mark of a sentence.
type token struct {
	text string
	word bool // a word (letters, digits, inner - _ . / + #)
	code bool // a `backticked` span
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

var (
	bulletRE = regexp.MustCompile(`^\s*(?:#{1,6}|[-*+•]|\d+[.)]|>)\s+`)
	// A label opens a line: one to three words and a colon ("Sources:",
	// "Root cause:", "Note to self:"). Compiled on first use, as are the
	// other patterns with Unicode classes: each costs a few tenths of a
	// millisecond, which every cairn process (a hook's too) would pay at
	// start.
	mdLabelRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*[\p{L}][\p{L}\p{N}'’]*(?:\s+[\p{L}\p{N}'’]+){0,2}\s*:(?:\s|$)`)
	})
	linkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	urlRE  = regexp.MustCompile(`\b(?:https?|ftp)://\S+`)
)

// splitSentences splits text into sentences of tokens, line by line,
// after dropping markdown markers, labels, links' targets and URLs.
func splitSentences(text string) []sentence {
	var out []sentence
	for _, line := range strings.Split(text, "\n") {
		line = bulletRE.ReplaceAllString(line, "")
		if loc := mdLabelRE().FindStringIndex(line); loc != nil {
			line = line[loc[1]:]
		}
		line = linkRE.ReplaceAllString(line, "$1")
		line = urlRE.ReplaceAllString(line, " ")
		line = strings.NewReplacer("**", "", "__", "", "*", " ").Replace(line)
		toks := tokenize(line)
		start := 0
		for i, t := range toks {
			if !t.word && !t.code && (t.text == "." || t.text == "!" || t.text == "?" || t.text == ";") {
				if i > start {
					out = append(out, sentence{text: joinTokens(toks[start:i]), toks: toks[start:i]})
				}
				start = i + 1
			}
		}
		if start < len(toks) {
			out = append(out, sentence{text: joinTokens(toks[start:]), toks: toks[start:]})
		}
	}
	return out
}

func joinTokens(ts []token) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 && (t.word || t.code) {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
	}
	return b.String()
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// tokenize cuts a line into words, code spans and punctuation. Inner
// '-', '_', '.', '/', '+' and '#' join a word when a letter or digit
// follows; a possessive "'s" is dropped.
func tokenize(line string) []token {
	var out []token
	rs := []rune(line)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '`':
			j := i + 1
			for j < len(rs) && rs[j] != '`' {
				j++
			}
			if j < len(rs) && j > i+1 {
				out = append(out, token{text: string(rs[i+1 : j]), code: true})
				i = j + 1
			} else {
				i++
			}
		case isWordRune(r):
			j := i + 1
			for j < len(rs) {
				if isWordRune(rs[j]) {
					j++
					continue
				}
				if strings.ContainsRune("-_./+#", rs[j]) && j+1 < len(rs) && isWordRune(rs[j+1]) {
					j += 2
					continue
				}
				break
			}
			w := string(rs[i:j])
			out = append(out, token{text: w, word: true})
			i = j
			if i+1 < len(rs) && (rs[i] == '\'' || rs[i] == '’') && (rs[i+1] == 's' || rs[i+1] == 't') {
				if rs[i+1] == 't' { // don't, doesn't: keep the negation
					out[len(out)-1].text += "'t"
				}
				i += 2
			}
		default:
			out = append(out, token{text: string(r)})
			i++
		}
	}
	return out
}

func isCapitalised(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// hasInnerCapital reports an upper-case letter after the first character
// with a lower-case letter somewhere (PostgreSQL, gRPC, macOS; not NTP).
func hasInnerCapital(w string) bool {
	lower, inner := false, false
	for i, r := range w {
		if unicode.IsLower(r) {
			lower = true
		}
		if i > 0 && unicode.IsUpper(r) {
			inner = true
		}
	}
	return lower && inner
}

func isAcronym(w string) bool {
	letters := 0
	for _, r := range w {
		switch {
		case unicode.IsUpper(r):
			letters++
		case unicode.IsDigit(r):
		default:
			return false
		}
	}
	return letters >= 2 && len(w) <= 6
}

func isNumeric(w string) bool {
	digits := 0
	for _, r := range w {
		if unicode.IsDigit(r) {
			digits++
		} else if !strings.ContainsRune(".,-_/:xv%", r) {
			return false
		}
	}
	return digits > 0
}

// ambiguousTech are technologies whose lower-case name is an ordinary word.
var ambiguousTech = set(`go make node bun vault helm spark lambda rails cargo celery consul envoy jaeger flink locust honeycomb okta nats`)

// identParts splits a kebab- or snake-case identifier into its words.
func identParts(w string) []string {
	return strings.FieldsFunc(strings.ToLower(w), func(r rune) bool { return r == '-' || r == '_' })
}

// wordRule classifies one word token on its own: the rule, the entity
// type and the confidence ("" when the word is no entity by itself).
func (x *extractor) wordRule(t token, initial bool) (rule, typ string, conf float64) {
	w := t.text
	lw := strings.ToLower(w)
	if t.code {
		if strings.ContainsAny(w, " \t") || len(w) > 120 || strings.ContainsAny(w, "<>{}()[];=\"'$|&*!?,\\") {
			// Markup, code and shell snippets are not names: an
			// identifier or a path holds none of these.
			return "", "", 0
		}
		if strings.Contains(w, "/") || strings.Contains(w, ".") {
			return "code", "file", confCode
		}
		return "code", "component", confCode
	}
	if !t.word || isNumeric(w) || pronouns[lw] || calendar[lw] || genericAcronyms[lw] {
		return "", "", 0
	}
	if canon, ok := knownTech[lw]; ok && (isCapitalised(w) || hasInnerCapital(canon) || !ambiguousTech[lw] && !commonWords[lw]) {
		if !initial || !commonWords[lw] {
			return "known", "technology", confKnown
		}
	}
	if strings.Contains(w, ".") && !strings.Contains(w, "/") && !isCapitalised(w) && !hasInnerCapital(w) && !fileExt.MatchString(w) {
		// Dotted names (orders.customer_id, e.g) are fields and
		// abbreviations, not entities.
		return "", "", 0
	}
	if strings.ContainsAny(w, "-_") {
		parts := identParts(w)
		if last := parts[len(parts)-1]; strings.HasSuffix(last, "ed") || strings.HasSuffix(last, "ing") {
			// rate-limited, short-lived, self-hosted: adjectives.
			return "", "", 0
		}
		if len(parts) < 2 {
			return "", "", 0
		}
		uncommon := false
		for _, p := range parts {
			if !commonWords[p] && !isNumeric(p) {
				uncommon = true
			}
		}
		if componentSuffixes[parts[len(parts)-1]] && !compoundHeads[parts[0]] {
			return "ident", "service", confIdent
		}
		if componentSuffixes[parts[len(parts)-1]] || uncommon && !isCapitalised(w) && hasLetters(parts) {
			if !uncommon {
				return "", "", 0
			}
			return "ident", "component", confIdent
		}
		return "", "", 0
	}
	if strings.ContainsAny(w, "./") && !isCapitalised(w) && !hasInnerCapital(w) {
		// A path or a file name: session.go, deploy/values.yaml.
		if strings.Contains(w, "/") || fileExt.MatchString(w) {
			return "path", "file", confIdent
		}
		return "", "", 0
	}
	switch {
	case hasInnerCapital(w):
		return "camel", "technology", confCamel
	case isAcronym(w):
		return "acronym", "technology", confAcronym
	case isCapitalised(w) && !initial:
		// Capitalised inside a sentence: a name, even when the word is
		// common otherwise (Go, Vault).
		return "cap", "concept", confCap
	case isCapitalised(w) && initial && !commonWords[lw]:
		return "initial", "concept", confInitialLow
	}
	return "", "", 0
}

var fileExt = regexp.MustCompile(`\.(?:go|py|js|ts|tsx|jsx|rs|java|kt|rb|c|h|cc|cpp|cs|sh|yaml|yml|json|toml|md|sql|proto|txt|cfg|ini|conf|env|lock|mod|sum)$`)

func hasLetters(parts []string) bool {
	for _, p := range parts {
		for _, r := range p {
			if unicode.IsLetter(r) {
				return true
			}
		}
	}
	return false
}

// mentions finds the entity mentions of a sentence and records them.
func (x *extractor) mentions(s sentence) []mention {
	var out []mention
	toks := s.toks
	for i := 0; i < len(toks); {
		initial := !slices.ContainsFunc(toks[:i], func(t token) bool { return t.word || t.code })
		rule, typ, conf := x.wordRule(toks[i], initial)
		if rule == "cap" || rule == "initial" {
			lw := strings.ToLower(toks[i].text)
			switch {
			case i+1 < len(toks) && toks[i+1].text == ":":
				// A label inside a line ("> Quote: fine").
				rule = ""
			case rule == "cap" && commonWords[lw] && !toks[i-1].word:
				// A common word capitalised after punctuation is style
				// (a list, a label), not a name.
				rule = ""
			}
		}
		if rule == "" {
			i++
			continue
		}
		j := i + 1
		// A run of capitalised words (and a version or number right
		// after a name is dropped): Chen Wei, Acme Corp, GitHub Actions,
		// Grafana Loki, Project Falcon.
		if rule == "cap" || rule == "initial" || rule == "known" || rule == "camel" || rule == "acronym" {
			for j < len(toks) && toks[j].word && isCapitalised(toks[j].text) && !isNumeric(toks[j].text) &&
				!calendar[strings.ToLower(toks[j].text)] && !genericAcronyms[strings.ToLower(toks[j].text)] && j-i < 4 {
				j++
			}
		}
		name := joinWords(toks[i:j])
		if j-i > 1 {
			last := strings.ToLower(toks[j-1].text)
			first := strings.ToLower(toks[i].text)
			switch {
			case orgSuffixes[last]:
				typ, conf = "organization", confMultiCap
			case first == "project":
				typ, conf = "project", confMultiCap
			case rule == "known" || rule == "camel":
				conf = max(conf, confMultiCap)
			default:
				conf = confMultiCap
			}
			rule = "multicap"
		}
		if rule == "initial" {
			// A capitalised word opening a sentence is a name when a verb
			// follows it, or when it is capitalised inside a sentence too.
			lw := strings.ToLower(name)
			if x.capsSeen[lw] {
				conf = confCap
			} else if j < len(toks) && toks[j].word && (humanVerbs[strings.ToLower(toks[j].text)] || relationStarts[strings.ToLower(toks[j].text)]) {
				conf = confInitial
			}
		}
		if typ == "concept" && j < len(toks) && toks[j].word && humanVerbs[strings.ToLower(toks[j].text)] && j-i <= 2 && rule != "known" {
			typ = "person"
		}
		if typ == "concept" && i > 0 && toks[i-1].word && personCue[strings.ToLower(toks[i-1].text)] {
			typ = "person"
		}
		x.addEntity(name, typ, conf, rule, s)
		out = append(out, mention{s: i, e: j, name: name})
		i = j
	}
	return out
}

// personCue words before a name say it is a person ("with Bob").
var personCue = set(`with ask asked by thanks told`)

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
	key := memory.NameKey(name)
	e, ok := x.ents[key]
	if !ok {
		x.ents[key] = &ExtractedEntity{Name: name, Type: typ, Confidence: conf, SourceID: s.source, Sentence: s.text, Rule: rule, Mentions: 1}
		return
	}
	e.Mentions++
	if conf > e.Confidence {
		e.Name, e.Confidence, e.SourceID, e.Sentence, e.Rule = name, conf, s.source, s.text, rule
	}
	if e.Type == "concept" && typ != "concept" {
		e.Type = typ
	}
}

// relation is a phrase of the relation vocabulary. Its words may hold one
// "*": up to three words that are not an entity ("publishes events to").
// passive turns the edge around; swap marks "replaced X with Y", whose
// two objects are the edge's target and source.
type relation struct {
	words   []string
	rel     string
	passive bool
	swap    bool
}

var relations = func() []relation {
	var out []relation
	add := func(rel string, passive bool, phrases ...string) {
		for _, p := range phrases {
			out = append(out, relation{words: strings.Fields(p), rel: rel, passive: passive})
		}
	}
	add("depends_on", false, "depends on", "depend on", "depended on", "depending on", "relies on", "rely on", "relied on", "requires", "required")
	add("uses", false, "uses", "is using", "are using", "use", "used")
	add("uses", true, "is used by", "are used by", "used by")
	add("calls", false, "calls", "call", "called", "invokes")
	add("calls", true, "is called by", "called by")
	add("connects_to", false, "talks to", "talk to", "connects to", "connect to")
	add("owns", false, "owns", "own", "owned")
	add("owns", true, "is owned by", "are owned by", "owned by")
	add("maintains", false, "maintains", "maintain", "maintained")
	add("maintains", true, "is maintained by", "maintained by")
	add("leads", false, "leads", "led")
	add("leads", true, "is led by", "led by")
	add("works_on", false, "works on", "worked on", "is working on", "are working on", "working on")
	add("runs_on", false, "runs on", "run on", "ran on", "is deployed on", "is deployed to", "deployed on", "deployed to", "is hosted on", "hosted on", "runs in")
	add("writes_to", false, "writes to", "write to", "wrote to", "writes into", "publishes * to", "publishes to", "publish to", "stores * in", "persists to", "sends * to")
	add("reads_from", false, "reads from", "read from", "consumes from", "consumes", "subscribes to")
	add("replaces", false, "replaces", "replaced")
	add("replaces", true, "is replaced by", "was replaced by", "were replaced by", "replaced by")
	add("migrated_to", false, "migrated to", "migrates to", "moves to", "moved to", "is moving to")
	add("part_of", false, "is part of", "are part of", "part of", "belongs to")
	add("caused", false, "caused", "causes", "triggered")
	add("caused", true, "was caused by", "is caused by", "caused by")
	add("fixed", false, "fixed", "fixes")
	add("reviewed", false, "reviewed", "reviews")
	add("created", false, "created", "wrote", "authored", "built")
	add("built_with", false, "is built with", "built with", "is written in", "written in")
	add("monitors", false, "monitors", "scrapes")
	add("integrates_with", false, "integrates with", "integrate with")
	// "replaced X with Y" and "migrated from X to Y": Y replaces X. They
	// come before the plain phrases of their length.
	out = append([]relation{
		{words: []string{"replaced"}, rel: "replaces", swap: true},
		{words: []string{"migrated", "from"}, rel: "replaces", swap: true},
		{words: []string{"moved", "from"}, rel: "replaces", swap: true}}, out...)
	// Longest phrases first, so "is owned by" wins over "owned".
	slices.SortStableFunc(out, func(a, b relation) int { return cmp.Compare(len(b.words), len(a.words)) })
	return out
}()

// relationStarts are the first words of relation phrases.
var relationStarts = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range relations {
		m[r.words[0]] = true
	}
	return m
}()

// match reports whether r's words (without a wildcard) match the
// sentence's tokens from i, and where the match ends.
func (r relation) match(toks []token, i int) (int, bool) {
	k := i
	for _, w := range r.words {
		if k >= len(toks) || !toks[k].word || strings.ToLower(toks[k].text) != w {
			return 0, false
		}
		k++
	}
	return k, true
}

// matchAt matches a relation phrase, with its wildcard, at token i.
func matchAt(r relation, toks []token, i int, isMention func(int) bool) (int, bool) {
	star := slices.Index(r.words, "*")
	if star < 0 {
		return r.match(toks, i)
	}
	head := relation{words: r.words[:star]}
	tail := relation{words: r.words[star+1:]}
	k, ok := head.match(toks, i)
	if !ok {
		return 0, false
	}
	for skip := 1; skip <= 3 && k+skip <= len(toks); skip++ {
		if !toks[k+skip-1].word || isMention(k+skip-1) {
			return 0, false
		}
		if end, ok := tail.match(toks, k+skip); ok {
			return end, true
		}
	}
	return 0, false
}

// edgesOf finds the relations a sentence states between its mentions.
func (x *extractor) edgesOf(s sentence, ms []mention, prev sentMentions) {
	if len(ms) == 0 {
		return
	}
	toks := s.toks
	at := make([]int, len(toks)) // mention index + 1 covering each token
	for mi, m := range ms {
		for k := m.s; k < m.e; k++ {
			at[k] = mi + 1
		}
	}
	isMention := func(k int) bool { return at[k] != 0 }
	lower := func(k int) string { return strings.ToLower(toks[k].text) }
	lastSubject := -1 // mention index of the subject of the last relation
	lastObjectEnd := -1
	for i := 0; i < len(toks); i++ {
		if isMention(i) || !toks[i].word {
			continue
		}
		var r relation
		end, ok := 0, false
		for _, cand := range relations {
			if end, ok = matchAt(cand, toks, i, isMention); ok {
				r = cand
				break
			}
		}
		if !ok {
			continue
		}
		negated := false
		for k := max(0, i-3); k < i; k++ {
			if toks[k].word && negations[lower(k)] {
				negated = true
			}
		}
		// The subject: the nearest mention before the phrase with only
		// fillers between; else the last relation's subject when "and" or
		// a comma follows that relation's object.
		subj, conf := -1, confEdgeDirect
		k := i - 1
		for k >= 0 && !isMention(k) && toks[k].word && (fillers[lower(k)] || negations[lower(k)]) {
			k--
		}
		if k >= 0 && isMention(k) {
			subj = at[k] - 1
		} else if k == 0 && toks[0].word && (lower(0) == "it" || lower(0) == "they") && prev.source == s.source && len(prev.ms) == 1 {
			// "It" opening the sentence: the one entity of the sentence
			// before.
			subj, conf = -2, confEdgeCarried
		} else if lastSubject >= 0 && k >= 0 && k > lastObjectEnd-1 && (lower(k) == "and" || toks[k].text == ",") {
			subj, conf = lastSubject, confEdgeCarried
		}
		// The objects: the first mention after the phrase with only
		// determiners between, then those listed after it with "and",
		// "or" or commas.
		var objs []int
		k = end
		for k < len(toks) && !isMention(k) && toks[k].word && determiners[lower(k)] {
			k++
		}
		for k < len(toks) && isMention(k) {
			mi := at[k] - 1
			objs = append(objs, mi)
			k = ms[mi].e
			// A list goes on after "and", "or" or a comma.
			j := k
			for j < len(toks) && (toks[j].text == "," || toks[j].word && (lower(j) == "and" || lower(j) == "or" || determiners[lower(j)])) {
				j++
			}
			if j == k || j >= len(toks) || !isMention(j) || r.swap {
				break
			}
			k = j
		}
		// An entity followed by a noun only qualifies the real object
		// ("maintains the Terraform modules"): it is no object.
		objs = slices.DeleteFunc(objs, func(mi int) bool { return qualifies(toks, ms[mi].e) })
		// "stores receipts in S3 and metadata in PostgreSQL": a phrase
		// with a wildcard repeats after "and".
		if star := slices.Index(r.words, "*"); star >= 0 && len(objs) > 0 {
			tail := relation{words: r.words[star+1:]}
			j := ms[objs[len(objs)-1]].e
			for j+1 < len(toks) && toks[j].word && lower(j) == "and" {
				found := false
				for skip := 1; skip <= 3 && j+1+skip <= len(toks); skip++ {
					if !toks[j+skip].word || isMention(j+skip) {
						break
					}
					if e2, ok := tail.match(toks, j+1+skip); ok && e2 < len(toks) && isMention(e2) && !qualifies(toks, ms[at[e2]-1].e) {
						objs = append(objs, at[e2]-1)
						j, found = ms[at[e2]-1].e, true
						break
					}
				}
				if !found {
					break
				}
			}
		}
		if len(objs) == 0 {
			i = end - 1
			continue
		}
		if r.swap {
			// "replaced X with Y", "migrated from X to Y": Y replaces X.
			j := ms[objs[0]].e
			if j < len(toks) && toks[j].word && (lower(j) == "with" || lower(j) == "to" || lower(j) == "by") {
				j++
				for j < len(toks) && toks[j].word && determiners[lower(j)] {
					j++
				}
				if j < len(toks) && isMention(j) && !negated {
					x.addEdge(ms[at[j]-1].name, r.rel, ms[objs[0]].name, confEdgeDirect, "replace-with", s)
				}
				lastSubject, lastObjectEnd = -1, j
				i = j
				continue
			}
			if subj < 0 {
				i = end - 1
				continue
			}
			r.swap = false
		}
		if subj != -1 && !negated {
			for n, o := range objs {
				c := conf
				if n > 0 {
					c = min(c, confEdgeCarried)
				}
				src, dst := "", ms[o].name
				if subj >= 0 {
					src = ms[subj].name
				} else {
					src = prev.ms[0].name
				}
				if r.passive {
					src, dst = dst, src
				}
				if memory.NameKey(src) != memory.NameKey(dst) {
					x.addEdge(src, r.rel, dst, c, strings.Join(r.words, " "), s)
				}
			}
		}
		if subj >= 0 {
			lastSubject = subj
		}
		lastObjectEnd = ms[objs[len(objs)-1]].e
		i = lastObjectEnd - 1
	}
}

func (x *extractor) addEdge(src, rel, dst string, conf float64, rule string, s sentence) {
	for i, g := range x.edges {
		if memory.EdgeKey(g.Source, g.Relation, g.Target) == memory.EdgeKey(src, rel, dst) {
			if conf > g.Confidence {
				x.edges[i].Confidence, x.edges[i].SourceID, x.edges[i].Sentence, x.edges[i].Rule = conf, s.source, s.text, rule
			}
			return
		}
	}
	x.edges = append(x.edges, ExtractedEdge{Source: src, Relation: rel, Target: dst, Confidence: conf, SourceID: s.source, Sentence: s.text, Rule: rule})
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

// qualifies reports whether the entity ending before token e qualifies a
// noun that follows it (a lower-case word that is no clause break,
// adverb or number; numbers after it are skipped).
func qualifies(toks []token, e int) bool {
	for e < len(toks) && toks[e].word && isNumeric(toks[e].text) {
		e++
	}
	if e >= len(toks) || !toks[e].word {
		return false
	}
	w := toks[e].text
	lw := strings.ToLower(w)
	return !isCapitalised(w) && !clauseBreaks[lw] && !strings.HasSuffix(lw, "ly") && !negations[lw]
}
