package synth

import (
	"strings"

	"github.com/cairnhq/cairn/synth/lexicon"
)

// Who did what: the clauses of a text, the predicate of each, and the
// role each noun plays in its clause (subject, object, the object of a
// preposition, a possessor, a time), so that "the kids took Melanie to the
// museum" is not "Melanie took the kids to the museum".

// Roles of a noun in its clause.
const (
	roleNone  = ""      // not a noun, or a clause without a verb
	roleSubj  = "subj"  // before the verb (the agent, once passives are undone)
	roleObj   = "obj"   // after the verb
	roleCop   = "cop"   // either side of a copula ("X is Y"): the sides may trade places
	rolePoss  = "poss"  // a possessor ("John's", "my")
	roleTime  = "time"  // a time ("last week", "on Monday", "in 2010"): it moves freely
	roleLabel = "label" // a label of the source or the claim: no place in a clause
)

// analysis is a text's tokens with their clauses and roles.
type analysis struct {
	toks   []token
	clause []int    // each token's clause
	role   []string // each noun's role
	pred   []int    // each clause's predicate (a token index), -1 when it has none
	cop    []bool   // each clause's predicate is a copula
}

var (
	determiners  = termsOf(`a an the this that these those my your his her its our their some any each every another such no all both few many several whose which what`)
	prepositions = termsOf(`about above across after against along among around at before behind below beneath beside besides between beyond by despite down during except for from in including inside into like near of off on onto out outside over past per since than through throughout to toward towards under unlike until up upon via with within without`)
	auxiliaries  = termsOf(`am is are was were be been being have has had having do does did will would shall should can could may might must ll ve re m d`)
	beForms      = termsOf(`am is are was were be been being`)
	subjectPron  = termsOf(`i you he she it we they there`)
	coordinators = termsOf(`and but or yet while whereas`)
	relatives    = termsOf(`which who where whom whose`)
	// subordinators open a clause that says when or on what condition.
	subordinators = termsOf(`when whenever if unless until after before although though once`)
	timeWords     = termsOf(`yesterday today tomorrow tonight weekend weekends week weeks month months year years day days morning afternoon evening night ago
		monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun
		january february march april may june july august september october november december jan feb mar apr jun jul aug sep sept oct nov dec
		spring summer autumn fall winter recently lately earlier later soon decade decades hour hours minute minutes`)
	// copulas link a subject to what it is; their two sides may trade
	// places ("X is Y", "Y is X").
	copulas = termsOf(`be become becomes became remain remains remained seem seems seemed`)
)

// analyse tags a text's words, splits it into clauses (a claim's more
// finely than a source's: see clauseStarts), finds each clause's
// predicate and gives each noun its role.
func analyse(toks []token, lex *lexicon.Lexicon, forClaim bool) analysis {
	tagWords(toks, lex)
	for i := 1; i < len(toks); i++ {
		if (toks[i].low == "one" || toks[i].low == "ones") && (toks[i-1].adj || determiners[toks[i-1].low]) {
			toks[i].noun = true // "the old one": it stands for a noun, which its adjective goes with
		}
	}
	a := analysis{toks: toks, clause: make([]int, len(toks)), role: make([]string, len(toks))}
	starts := clauseStarts(toks, forClaim)
	c := 0
	for i := range toks {
		if c+1 < len(starts) && i >= starts[c+1] {
			c++
		}
		a.clause[i] = c
	}
	for k := range starts {
		end := len(toks)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		p, cop, passive := predicate(toks, starts[k], end)
		a.pred, a.cop = append(a.pred, p), append(a.cop, cop)
		for i := starts[k]; i < end; i++ {
			if toks[i].noun || personalPronoun(toks, i) {
				a.role[i] = nounRole(toks, starts[k], i, p, cop, passive)
			}
		}
		// A modifier stands where its noun stands: "the first host" is
		// wherever "host" is.
		for i := end - 1; i >= starts[k]; i-- {
			if toks[i].adj && !toks[i].noun && i+1 < end && (toks[i+1].noun || toks[i+1].adj) {
				a.role[i] = a.role[i+1]
			}
		}
	}
	return a
}

// personalPronouns stand for someone or something the clause does not
// name; their roles are read like a noun's.
var personalPronouns = termsOf(`i you he she it we they me him us them her`)

// personalPronoun reports whether the token at i is a personal pronoun
// ("her" only before no noun: "gave her the pendant", not "her mother").
func personalPronoun(toks []token, i int) bool {
	t := toks[i]
	if !t.isWord() || t.kind != kFn || !personalPronouns[t.low] {
		return false
	}
	return t.low != "her" || i+1 >= len(toks) || !(toks[i+1].noun || toks[i+1].adj)
}

// tagWords marks content words as verbs, nouns or adjectives, from what
// WordNet's concordance saw them as most, their endings and the words
// around them.
func tagWords(toks []token, lex *lexicon.Lexicon) {
	for i := range toks {
		t := &toks[i]
		if t.kind != kContent {
			continue
		}
		var c lexicon.Counts
		inflectedVerb := false
		if lex != nil {
			c = lex.Tags(t.low)
			inflectedVerb = lex.VerbForm(t.low) && !strings.HasSuffix(t.low, "ing")
		}
		t.verb, t.noun, t.adj = tagOf(toks, i, c, inflectedVerb)
	}
}

// tagOf decides a content word's part of speech.
func tagOf(toks []token, i int, c lexicon.Counts, inflectedVerb bool) (verb, noun, adj bool) {
	t := toks[i]
	prev := previousWord(toks, i)
	ing := strings.HasSuffix(t.low, "ing")
	afterAux := prev != nil && (auxiliaries[prev.low] || prev.low == "to" || prev.kind == kNeg)
	afterSubject := prev != nil && (subjectPron[prev.low] || prev.kind == kName && !prev.poss)
	afterRelative := prev != nil && (prev.low == "that" || prev.low == "which" || prev.low == "who" || prev.low == "this" ||
		prev.low == "these" || prev.low == "those")
	afterDet := prev != nil && (determiners[prev.low] || prev.poss || prev.adj || prepositions[prev.low]) && !(afterRelative && inflectedVerb)
	atEnd := i+1 >= len(toks) || !toks[i+1].isWord() || coordinators[toks[i+1].low] || prepositions[toks[i+1].low]
	if inflectedVerb && i+1 < len(toks) && toks[i+1].isWord() && (determiners[toks[i+1].low] || toks[i+1].poss) && !afterDet {
		return true, false, false // a verb before its object: "copies the database", "adds a patch"
	}
	singular := prev != nil && prev.noun && prev.kind != kNumber && (!strings.HasSuffix(prev.low, "s") || strings.HasSuffix(prev.low, "ss"))
	if singular && inflectedVerb && strings.HasSuffix(t.low, "s") && !afterDet {
		return true, false, false // a singular subject and its verb: "my sister lives in Oslo"
	}
	plural := prev != nil && prev.noun && strings.HasSuffix(prev.low, "s") && !strings.HasSuffix(prev.low, "ss")
	if plural && c.Has(lexicon.Verb) && !ing && !afterDet {
		return true, false, false // a plural subject and its verb: "the batch jobs run on Nomad"
	}
	if !afterDet && prev != nil && (prev.noun || prev.adj) && !inflectedVerb && inNounPhrase(toks, i) && (c.Has(lexicon.Noun) || atEnd) {
		return false, true, false // "a new upstream point release", "Team upload."
	}
	if i+1 < len(toks) && toks[i+1].kind == kNumber && !afterAux && !inflectedVerb && (prev == nil || prev.noun || prev.adj) {
		return false, true, false // a name before its version: "curl 7.88.1", "bash 5.2-3"
	}
	if prev != nil && prev.verb && c.Has(lexicon.Noun) && !strings.HasSuffix(t.low, "ed") {
		return false, true, false // what a verb acts on: "moving email delivery", "replicates changes"
	}
	if prev == nil && c.Has(lexicon.Verb) && !inflectedVerb && !ing && i+1 < len(toks) && opensObject(toks[i+1]) &&
		!timeWords[toks[i+1].low] && (c[lexicon.Verb] >= c[lexicon.Noun]+c[lexicon.Adj] || particles[toks[i+1].low] || determiners[toks[i+1].low]) {
		return true, false, false // an instruction or a changelog's line: "Speed up symbol counting", "Fix build on musl"
	}
	switch {
	case c == lexicon.Counts{} && len(t.low) > 5 && strings.HasSuffix(t.low, "ly"):
		return false, false, false // an adverb WordNet does not know: "canonically", "lexicographically"
	case c == lexicon.Counts{}:
		return false, true, false // a word WordNet does not know: a thing's name
	case c.Has(lexicon.Adv) && !c.Has(lexicon.Verb) && !c.Has(lexicon.Noun) && !c.Has(lexicon.Adj):
		return false, false, false // only an adverb: "regularly"
	case afterAux && c.Has(lexicon.Verb):
		return true, false, false
	case afterDet:
		n := !c.Has(lexicon.Adj) || c[lexicon.Noun] > c[lexicon.Adj] || atEnd
		return false, n, !n // after "the", "my", "of": never the verb
	case ing:
		if afterSubject && c.Has(lexicon.Verb) {
			return true, false, false
		}
		return false, true, false // a gerund: "playing video games", "dog walking"
	case afterSubject && c.Has(lexicon.Verb):
		return true, false, false
	case inflectedVerb && (strings.HasSuffix(t.low, "ed") || c[lexicon.Verb] >= c[lexicon.Noun] || !c.Has(lexicon.Noun)):
		return true, false, false
	case prev != nil && prev.noun && atEnd && c.Has(lexicon.Noun):
		return false, true, false // "community support."
	case c[lexicon.Verb] >= c[lexicon.Noun] && c[lexicon.Verb] >= c[lexicon.Adj]:
		return true, false, false
	case c[lexicon.Adj] > c[lexicon.Noun]:
		return false, false, true
	}
	return false, c.Has(lexicon.Noun) || !c.Has(lexicon.Adv), false
}

// particles complete a phrasal verb ("speed up", "carve out").
var particles = termsOf(`up out down off away back`)

// opensObject reports whether a token may open what a verb acts on: a
// determiner, a noun, an adjective, a number or a particle.
func opensObject(t token) bool {
	if particles[t.low] {
		return true
	}
	return t.isWord() && (determiners[t.low] || t.noun || t.kind == kContent || t.kind == kName || t.kind == kNumber)
}

// inNounPhrase reports whether the words before i, back to a
// determiner, a possessive, a preposition or the start of the text, are
// all nouns and adjectives: the word at i continues that noun phrase.
func inNounPhrase(toks []token, i int) bool {
	for j := i - 1; j >= 0; j-- {
		t := toks[j]
		switch {
		case !t.isWord():
			return t.punct == ':' // "credential: ...", a label's text
		case determiners[t.low] || t.poss || prepositions[t.low]:
			return true
		case !(t.noun || t.adj) || t.kind == kName && !t.start:
			return false
		}
	}
	return true
}

func previousWord(toks []token, i int) *token {
	for j := i - 1; j >= 0; j-- {
		if toks[j].isWord() {
			if toks[j].kind == kFn && lightWords[toks[j].low] {
				continue // "I just signed": the light word stands aside
			}
			return &toks[j]
		}
		return nil
	}
	return nil
}

// finite reports whether the token at i is a verb that can head a
// clause: not a gerund or participle standing without an auxiliary.
func finite(toks []token, i int) bool {
	t := toks[i]
	if !t.verb {
		return t.isWord() && auxiliaries[t.low] && !contracted[t.low]
	}
	p := previousWord(toks, i)
	if p != nil && p.low == "to" {
		return false // an infinitive: "a patch to fix a leak"
	}
	afterAux := p != nil && (auxiliaries[p.low] || p.kind == kNeg)
	if strings.HasSuffix(t.low, "ing") {
		return afterAux
	}
	if (strings.HasSuffix(t.low, "en") || strings.HasSuffix(t.low, "wn")) && !afterAux && p != nil && p.noun {
		return false // a participle after its noun: "a runtime written in Go"
	}
	return true
}

// clauseStarts returns where each clause of a text starts: at ";", ":"
// (outside parentheses) and a sentence's end; at a relative word after a comma
// (", which"); at a subordinator that opens a clause ("because", "so");
// at a comma or a dash followed by a new subject and its verb; and at a coordinator
// ("and", "but", "while") between two clauses with a verb each, when the
// second has a subject of its own ("... and the batch jobs run on
// Nomad"), or a subject and no verb ("... and the batch jobs on Nomad").
// In a claim (forClaim), a coordinator also starts a clause before a verb
// phrase ("... and is starting a business"), a preposition ("... and to
// cockroaches"), or after a comma ("..., and a nearby church"), and so
// does a relative word before a verb ("scripts that didn't quote paths"):
// each clause of a claim must rest on a piece of its own.
func clauseStarts(toks []token, forClaim bool) []int {
	starts := []int{0}
	cur := 0
	for i := 1; i < len(toks); i++ {
		t := toks[i]
		open := false
		switch {
		case t.punct == ';' || t.punct == '.' || t.punct == '!' || t.punct == '?' || (t.punct == ':' && !inParens(toks, 0, i)):
			open = i+1 < len(toks)
			if open {
				i++
			}
		case t.isWord() && coordinators[t.low] && hasFinite(toks, cur, i):
			open = coordinatedClause(toks, i, forClaim)
		case t.isWord() && relatives[t.low] && toks[i-1].punct == ',',
			t.isWord() && (relatives[t.low] || t.low == "that") && forClaim && hasFinite(toks, i+1, min(len(toks), i+3)):
			open = true
		case t.isWord() && (causalAt(toks, i) != 0 || subordinators[t.low] && opensClause(toks, i+1)) && i > cur:
			open = true
		case (t.punct == ',' || t.punct == '-') && i+2 < len(toks) && (subjectPron[toks[i+1].low] || toks[i+1].kind == kName) &&
			hasFinite(toks, i+2, min(len(toks), i+4)) && hasFinite(toks, cur, i):
			open = true
		}
		if open && i > cur {
			starts = append(starts, i)
			cur = i
		}
	}
	return starts
}

// coordinatedClause reports whether the coordinator at i opens a clause.
func coordinatedClause(toks []token, i int, forClaim bool) bool {
	end := nextBoundary(toks, i+1)
	if i+1 >= len(toks) {
		return false
	}
	next := toks[i+1]
	subject := -1 // where the second part's subject ends
	for j := i + 1; j < end; j++ {
		if finite(toks, j) || toks[j].isWord() && prepositions[toks[j].low] {
			break
		}
		if toks[j].noun || subjectPron[toks[j].low] {
			subject = j
		}
	}
	verb := hasFinite(toks, i+1, end)
	switch {
	case verb && subject >= 0:
		return true // "... and Gina lost hers"
	case !verb && subject >= 0 && parallelPrep(toks, i, subject, end):
		return true // "The API runs on Kubernetes and the batch jobs on Nomad"
	case !forClaim:
		return false
	case verb, next.isWord() && prepositions[next.low]:
		return true // "... and is starting", "... and to cockroaches"
	}
	return toks[i-1].punct == ','
}

// parallelPrep reports whether the phrase after the coordinator at i
// repeats, after its subject (ending at subject), a preposition that
// follows a verb before the coordinator: the mark of a clause whose verb
// is left out ("runs on Kubernetes and the batch jobs on Nomad"), not of
// nouns joined ("reptiles and animals with fur").
func parallelPrep(toks []token, i, subject, end int) bool {
	for j := subject + 1; j < end; j++ {
		if !toks[j].isWord() || !prepositions[toks[j].low] {
			continue
		}
		verb := false
		for k := i - 1; k >= 0 && toks[k].punct != '.' && toks[k].punct != ';'; k-- {
			if finite(toks, k) {
				verb = true
			}
			if verb && toks[k].low == toks[j].low {
				return false // the preposition stands before the verb
			}
			if !verb && toks[k].isWord() && toks[k].low == toks[j].low {
				return true
			}
		}
	}
	return false
}

// nextBoundary is where the phrase starting at i ends: the next
// punctuation that ends a clause, or the end.
func nextBoundary(toks []token, i int) int {
	for ; i < len(toks); i++ {
		if p := toks[i].punct; p == ';' || p == ':' || p == '.' || p == '!' || p == '?' || p == ',' || p == '(' || p == '-' ||
			(toks[i].isWord() && coordinators[toks[i].low]) {
			return i
		}
	}
	return len(toks)
}

// contracted are what is left of a contraction's auxiliary ("I'd", "we'll").
var contracted = termsOf(`ll ve re m d`)

// hasFinite reports whether toks[from:to] holds a verb that can head a
// clause.
func hasFinite(toks []token, from, to int) bool {
	for i := from; i < to && i < len(toks); i++ {
		if finite(toks, i) {
			return true
		}
	}
	return false
}

// predicate finds the predicate of the clause toks[from:to]: its first
// verb, or its copula when it has no other verb. passive says the verb is
// a participle after a form of "be" or "get" ("was migrated by").
func predicate(toks []token, from, to int) (p int, cop, passive bool) {
	be := -1
	for i := from; i < to; i++ {
		t := toks[i]
		if inParens(toks, from, i) {
			continue // "(see RelNotes/2.39.3.txt)" is an aside
		}
		switch {
		case t.isWord() && beForms[t.low]:
			if be < 0 {
				be = i
			}
		case t.isWord() && (t.low == "has" || t.low == "have" || t.low == "had") && be < 0 && !verbFollows(toks, i):
			return i, false, false // "It has zero dependencies"
		case t.verb && be >= 0 && i-be > 3 && isParticiple(t.low):
			return be, true, false // "wazero is a ... runtime written in Go": the participle modifies
		case t.verb && finite(toks, i):
			cop = copulas[t.low] || copulas[t.stem]
			passive = be >= 0 && i-be <= 3 && isParticiple(t.low) && !strings.HasSuffix(t.low, "ing")
			return i, cop, passive
		}
	}
	return be, be >= 0, false
}

// verbFollows reports whether a verb follows the word at i, past light
// words and a negation: "has been", "had not seen".
func verbFollows(toks []token, i int) bool {
	for j := i + 1; j < len(toks); j++ {
		t := toks[j]
		switch {
		case t.kind == kNeg, t.kind == kFn && lightWords[t.low]:
			continue
		case t.verb, t.isWord() && auxiliaries[t.low] && !contracted[t.low]:
			return true
		}
		return false
	}
	return false
}

// isParticiple reports whether a verb looks like a past participle.
func isParticiple(w string) bool {
	if strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "en") || strings.HasSuffix(w, "wn") {
		return true
	}
	switch w {
	case "made", "held", "built", "found", "set", "put", "run", "done", "gone", "brought", "bought", "taught", "caught",
		"sent", "spent", "kept", "left", "lost", "met", "paid", "said", "sold", "told", "thought", "won", "hit", "cut", "shut":
		return true
	}
	return false
}

// nounRole is the role of the noun at i in the clause starting at from
// whose predicate is p.
func nounRole(toks []token, from, i, p int, cop, passive bool) string {
	t := toks[i]
	if t.poss {
		return rolePoss
	}
	if timeWords[t.low] || (t.kind == kNumber && (isYear(t.low) || nearYear(toks, i))) {
		return roleTime
	}
	if inParens(toks, from, i) || credited(toks, from, i) {
		return roleNone // a credit or an aside: "(Helmut Grohne)", "Thanks to Kyle Lemons"
	}
	prep, at := "", -1
	for j := i - 1; j >= from; j-- {
		u := toks[j]
		if u.isWord() && prepositions[u.low] {
			prep, at = u.low, j
			break
		}
		if !npInternal(u) || (u.punct == ',' && !listContinues(toks, i)) || gerund(u) && j < i-1 {
			break // "In tzdata 2025a, Paraguay adopts": the comma ends the phrase; "by creating the index": the gerund takes it
		}
	}
	if prep != "" && np(toks, i, timeWords) {
		return roleTime
	}
	switch {
	case prep == "by" && passive && !strings.HasSuffix(t.low, "ing"), // "fixed by creating an index" says how, not who
		prep == "by" && t.kind == kName && p >= 0 && !subjectBefore(toks, from, p) && !(at > 0 && toks[at-1].verb && isParticiple(toks[at-1].low)):
		return roleSubj // "was migrated by Omar", "Speed up symbol counting by @greatroar" (not "introduced by 3.11.2")
	case prep != "" && cop && p >= 0 && nextContent(toks, p) == at:
		return roleCop // "it was about venv activation scripts", "I'm also in talks"
	case prep != "":
		return "p:" + prep
	case p < 0:
		return roleNone
	case cop:
		return roleCop
	case i < p && !passive:
		return roleSubj
	}
	return roleObj // after the verb, or the subject of a passive
}

// nextContent is the first token after i that is not a light word or a
// negation.
func nextContent(toks []token, i int) int {
	for j := i + 1; j < len(toks); j++ {
		if !(toks[j].kind == kFn && lightWords[toks[j].low]) && toks[j].kind != kNeg {
			return j
		}
	}
	return len(toks)
}

// credited reports whether the noun at i is thanked ("Thanks to Daniel
// Stenberg and dheerajsangamkar for reporting"): the credit says who did
// it, in no role of the clause.
func credited(toks []token, from, i int) bool {
	for j := i - 1; j >= from; j-- {
		t := toks[j]
		switch {
		case t.isWord() && (t.low == "thanks" || t.low == "thank" || t.low == "credit" || t.low == "credits"):
			return true
		case t.isWord() && (t.low == "to" || t.low == "for"), npInternal(t):
			continue
		}
		return false
	}
	return false
}

// subjectBefore reports whether a noun stands before the predicate p of
// the clause starting at from: a clause without one is an instruction
// or a changelog's line ("Fix build on musl"), whose "by" names the doer.
func subjectBefore(toks []token, from, p int) bool {
	for j := from; j < p; j++ {
		if toks[j].noun || subjectPron[toks[j].low] {
			return true
		}
	}
	return false
}

// listContinues reports whether the noun at i stands in a list that goes
// on ("Mexico, Mongolia, and Portugal"): a comma may then be crossed to
// the preposition the list depends on.
func listContinues(toks []token, i int) bool {
	for j := i + 1; j < len(toks); j++ {
		t := toks[j]
		switch {
		case t.isWord() && (t.low == "and" || t.low == "or"):
			return true
		case t.punct == ',', t.noun, t.adj, t.isWord() && determiners[t.low]:
			continue
		}
		return false
	}
	return false
}

// gerund reports whether a token is a verb's -ing form read as a noun
// ("creating the index").
func gerund(t token) bool {
	return t.noun && t.kind == kContent && strings.HasSuffix(t.low, "ing")
}

// inParens reports whether the token at i stands inside parentheses.
func inParens(toks []token, from, i int) bool {
	depth := 0
	for j := from; j < i; j++ {
		switch toks[j].punct {
		case '(':
			depth++
		case ')':
			depth = max(0, depth-1)
		}
	}
	return depth > 0
}

// followedByVerb reports whether the noun phrase ending at or after i is
// followed by a verb.
func followedByVerb(toks []token, i int) bool {
	for j := i + 1; j < len(toks); j++ {
		if finite(toks, j) {
			return true
		}
		if !toks[j].noun && !toks[j].adj && !(toks[j].kind == kFn && lightWords[toks[j].low]) {
			return false
		}
	}
	return false
}

// npInternal reports whether a token may stand inside a noun phrase
// between a preposition and its noun.
func npInternal(u token) bool {
	if !u.isWord() {
		return u.punct == ',' || u.punct == '"'
	}
	return u.noun || u.adj || u.poss || determiners[u.low] || u.low == "and" || u.low == "or" || u.kind == kNumber ||
		(u.kind == kFn && lightWords[u.low])
}

// np reports whether the noun phrase around i holds a word of set (a
// time: "on the day", "two weekends ago").
func np(toks []token, i int, set map[string]bool) bool {
	for j := i; j < len(toks) && j <= i+2; j++ {
		if j > i && timeAdverbs[toks[j].low] {
			return false // "a support group yesterday": the group is no time
		}
		if set[toks[j].low] {
			return true
		}
		if !toks[j].noun && !(toks[j].isWord() && toks[j].low == "ago") {
			break
		}
	}
	return false
}

// timeAdverbs are times that stand alone, never the noun a phrase ends
// with.
var timeAdverbs = termsOf(`yesterday today tomorrow tonight recently lately earlier later soon`)

// nearYear reports whether a short number stands beside a year, as the
// month and day of a date ("2026-07-28", "08 May 2025").
func nearYear(toks []token, i int) bool {
	if len(toks[i].low) > 2 {
		return false
	}
	for j := max(0, i-2); j < len(toks) && j <= i+2; j++ {
		if j != i && toks[j].kind == kNumber && isYear(toks[j].low) {
			return true
		}
	}
	return false
}

func isYear(s string) bool {
	return len(s) == 4 && (strings.HasPrefix(s, "19") || strings.HasPrefix(s, "20"))
}
