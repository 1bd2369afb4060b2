package graph

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The mention model: the rules above find candidate mentions, each with a
// rule and the rule's prior confidence; a logistic regression over
// features of the mention and its neighbours, which says nothing of any
// particular name (the rule, the mention's shape, how common its word is
// in English, the classes of the words around it, the sentence's kind),
// turns them into the confidence that a careful reader would stage the
// mention. Its weights (mentionWeights, model_weights.go) are trained on
// the tune halves of the labelled fixtures only, by
// `go test ./graph -run TestMentionModel -update`.

// candidate is a mention the rules propose, before the model scores it.
type candidate struct {
	m     mention
	typ   string
	rule  string
	prior float64
}

// candidates finds the candidate mentions of a sentence, left to right,
// without overlap.
func (x *extractor) candidates(s sentence) []candidate {
	var out []candidate
	toks := s.toks
	loud := isShouting(toks)
	for i := 0; i < len(toks); {
		m, typ, conf, rule, ok := x.mentionAt(toks, i, loud)
		if !ok {
			i = max(i+1, m.e) // past a run that is no name as a whole
			continue
		}
		out = append(out, candidate{m: m, typ: typ, rule: rule, prior: conf})
		i = m.e
	}
	return slices.DeleteFunc(out, func(c candidate) bool { return spellsAcronym(toks, c.m) })
}

// spellsAcronym reports a mention inside a run of capitalised words (and
// the function words between them) whose initials spell, in part, an
// acronym of the same sentence: the acronym's expansion ("ELF:
// Executable and Linking Format"), which the acronym names.
func spellsAcronym(toks []token, m mention) bool {
	if !isCapitalised(toks[m.s].text) || isUpperWord(toks[m.s].text) {
		return false
	}
	s, e := m.s, m.e
	for s > 1 && functionWords[toks[s-1].lower] && toks[s-2].word && isCapitalised(toks[s-2].text) && !isUpperWord(toks[s-2].text) {
		s -= 2
	}
	for e+1 < len(toks) && functionWords[toks[e].lower] && toks[e+1].word && isCapitalised(toks[e+1].text) && !isUpperWord(toks[e+1].text) {
		e += 2
	}
	var initials []byte
	for _, t := range toks[s:e] {
		if isCapitalised(t.text) {
			initials = append(initials, t.text[0])
		}
	}
	if len(initials) < 2 {
		return false
	}
	for k, t := range toks {
		if (k < s || k >= e) && t.word && isUpperWord(t.text) && strings.Contains(t.text, string(initials)) {
			return true
		}
	}
	return false
}

// mentions finds the entity mentions of a sentence, scores each with the
// mention model and records them.
func (x *extractor) mentions(s sentence) []mention {
	cands := x.candidates(s)
	out := make([]mention, 0, len(cands))
	ctx := newSentenceContext(s.toks)
	for _, c := range cands {
		x.addEntity(c.m.name, c.typ, x.score(s.toks, c, ctx), c.rule, s)
		out = append(out, c.m)
	}
	return out
}

// score is the model's confidence in a candidate: the logistic function
// of the sum of its features' weights.
func (x *extractor) score(toks []token, c candidate, ctx sentenceContext) float64 {
	ws := mentionWeightMap()
	if len(ws) == 0 {
		return c.prior // no trained model: the rule's own confidence
	}
	sum := 0.0
	x.features(toks, c, ctx, func(f []byte, v float64) { sum += ws[string(f)] * v })
	return 1 / (1 + math.Exp(-sum))
}

// mentionWeightMap indexes mentionWeights on first use.
var mentionWeightMap = sync.OnceValue(func() map[string]float64 {
	m := make(map[string]float64, len(mentionWeights))
	for _, w := range mentionWeights {
		m[w.feature] = w.weight
	}
	return m
})

// weight is one feature's weight in the model.
type weight struct {
	feature string
	weight  float64
}

// sentenceContext holds what the features say of the whole sentence.
type sentenceContext struct {
	loud  bool // mostly capitals
	code  bool // holds a `code` span
	title bool // most of its words capitalised (a heading, a title)
}

func newSentenceContext(toks []token) sentenceContext {
	c := sentenceContext{loud: isShouting(toks)}
	words, caps := 0, 0
	for _, t := range toks {
		c.code = c.code || t.code
		if t.word && hasLetters([]string{t.text}) {
			words++
			if isCapitalised(t.text) {
				caps++
			}
		}
	}
	c.title = words >= 3 && caps*3 > words*2
	return c
}

// features calls emit with each feature of candidate c, as "name=value"
// in a buffer emit must not keep, and the feature's value (1).
func (x *extractor) features(toks []token, c candidate, ctx sentenceContext, emit func([]byte, float64)) {
	var buf [96]byte
	f := func(name string, values ...string) {
		b := append(buf[:0], name...)
		b = append(b, '=')
		for i, v := range values {
			if i > 0 {
				b = append(b, '|')
			}
			b = append(b, v...)
		}
		emit(b, 1)
	}
	m := c.m
	first := toks[m.s].text
	lw := strings.ToLower(first)
	initial := opensSentence(toks, m.s)
	f("bias")
	f("rule", c.rule)
	f("rule", c.rule, strconv.Itoa(int(math.Round(c.prior*100))))
	f("rule", c.rule, boolStr(initial))
	f("len", strconv.Itoa(min(3, m.e-m.s)))
	emit(appendShape(append(buf[:0], "shape="...), m.name), 1)
	f("case", caseOf(first))
	f("rank", rankBucket(lw, toks[m.s].code))
	f("prev", tokClass(toks, m.s-1))
	f("next", tokClass(toks, m.e))
	f("prev2", tokClass(toks, m.s-2), tokClass(toks, m.s-1))
	f("around", tokClass(toks, m.s-1), tokClass(toks, m.e))
	f("sent", boolStr(ctx.loud), boolStr(ctx.code), boolStr(ctx.title))
	f("seen", boolStr(x.capsSeen[lw]))
	if m.e-m.s == 1 && isCapitalised(first) {
		f("person", strconv.Itoa(int(math.Min(3, float64(personScore(lw))*5))))
	}
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// appendShape appends a name's shape to b: letters as X or x, digits as
// d, other characters kept, runs of one class collapsed, at most 8 long
// (PostgreSQL XxXx, auth-service x-x, ResultReader.Read XxXx.Xx).
func appendShape(b []byte, name string) []byte {
	n := 0
	last := byte(0)
	for _, r := range name {
		var c byte
		switch {
		case unicode.IsUpper(r):
			c = 'X'
		case unicode.IsLetter(r):
			c = 'x'
		case unicode.IsDigit(r):
			c = 'd'
		case r < utf8.RuneSelf:
			c = byte(r)
		default:
			c = '?'
		}
		if c != last {
			b = append(b, c)
			last = c
			n++
		}
		if n >= 8 {
			break
		}
	}
	return b
}

// caseOf is a word's case: lower, Cap, UPPER or mixed.
func caseOf(w string) string {
	upper, lower := false, false
	for _, r := range w {
		upper = upper || unicode.IsUpper(r)
		lower = lower || unicode.IsLower(r)
	}
	switch {
	case !upper:
		return "lower"
	case !lower:
		return "UPPER"
	case isCapitalised(w) && !hasInnerCapital(w):
		return "Cap"
	}
	return "mixed"
}

// rankBucket says how common a word is in English, from its frequency
// rank in GloVe's vocabulary.
func rankBucket(lw string, code bool) string {
	if code {
		lw = strings.Trim(lw, "`")
	}
	r, ok := rank(lw)
	switch {
	case commonWords[lw]:
		return "list"
	case !ok && isKnownWord(lw):
		return "inflected"
	case !ok:
		return "none"
	case r < 1000:
		return "1k"
	case r < 5000:
		return "5k"
	case r < 20000:
		return "20k"
	case r < 50000:
		return "50k"
	}
	return "80k"
}

// closedClass are the words that stand for themselves in the features of
// a mention's neighbours: function words and the verbs of relations and
// of use, which say what kind of word stands next to them.
var closedClass = set(`the a an this that these those its their our your his her my of to in on at by for from with
without into onto via as than and or but nor if when while where which who whose is are was were be been being has have
had will would can could should may might must not no do does did also only use uses used using see called named such
like e.g i.e including between before after over under about per each every all any some new old`)

// tokClass is the class of the token at k for the features of its
// neighbour: a closed-class word itself, else the word's case or kind, a
// punctuation mark itself, BOS or EOS past the sentence's ends.
func tokClass(toks []token, k int) string {
	switch {
	case k < 0:
		return "BOS"
	case k >= len(toks):
		return "EOS"
	}
	t := toks[k]
	lw := t.lower
	switch {
	case t.code:
		return "CODE"
	case !t.word:
		if strings.Contains("()[]{},:;'\"`-/=&<>*#|.!?", t.text) {
			return t.text
		}
		return "P"
	case closedClass[lw]:
		return lw
	case isNumeric(t.text):
		return "NUM"
	case classNouns[lw] || namingNouns[lw]:
		return "CLASSNOUN"
	case relationStarts[lw]:
		return "REL"
	}
	return "W" + caseOf(t.text)
}
