package graph

import (
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// edgeScan reads the relations of one sentence between its mentions.
type edgeScan struct {
	x    *extractor
	s    sentence
	toks []token
	ms   []mention
	at   []int // mention index + 1 covering each token, 0 for none
	prev sentMentions
	// lastSubject is the subject (mention index) of the last relation and
	// lastObjectEnd where its objects end: "and" carries the subject.
	lastSubject, lastObjectEnd int
}

// subjPrev stands for the one entity of the sentence before ("It calls
// ...").
const subjPrev = -2

func (e *edgeScan) isMention(k int) bool { return k >= 0 && k < len(e.toks) && e.at[k] != 0 }
func (e *edgeScan) lower(k int) string   { return e.toks[k].lower }
func (e *edgeScan) word(k int) bool      { return k >= 0 && k < len(e.toks) && e.toks[k].word }

// isBracket reports punctuation that wraps a name without cutting the
// clause: [Marshal], (see X), "gnupg".
func (e *edgeScan) isBracket(k int) bool {
	return k >= 0 && k < len(e.toks) && !e.toks[k].word && !e.toks[k].code && strings.Contains(`[]"“”'`, e.toks[k].text)
}

// edgesOf finds the relations a sentence states between its mentions.
func (x *extractor) edgesOf(s sentence, ms []mention, prev sentMentions) {
	if len(ms) == 0 {
		return
	}
	e := &edgeScan{x: x, s: s, toks: s.toks, ms: ms, at: make([]int, len(s.toks)), prev: prev, lastSubject: -1, lastObjectEnd: -1}
	for mi, m := range ms {
		for k := m.s; k < m.e; k++ {
			e.at[k] = mi + 1
		}
	}
	e.insteadOf()
	e.inFavourOf()
	e.dropThenUse()
	e.deprecatedUse()
	e.debianReplaces()
	for i := 0; i < len(e.toks); i++ {
		if e.isMention(i) || !e.toks[i].word {
			continue
		}
		r, end, ok := e.phraseAt(i)
		if !ok {
			continue
		}
		i = e.relationAt(i, r, end)
	}
}

// phraseAt matches the longest relation phrase at token i.
func (e *edgeScan) phraseAt(i int) (relation, int, bool) {
	for _, r := range relationsByFirst[e.toks[i].lower] {
		if end, ok := matchAt(r, e.toks, i, e.isMention); ok {
			return r, end, true
		}
	}
	return relation{}, 0, false
}

// relationAt reads the relation whose phrase spans [i, end) and returns
// where the scan goes on.
func (e *edgeScan) relationAt(i int, r relation, end int) int {
	negated := false
	for k := max(0, i-3); k < i; k++ {
		if e.word(k) && (negations[e.lower(k)] || mayModals[e.lower(k)]) {
			negated = true // "does not use", "might call": not stated as so
		}
	}
	if r.rel == "migrated_to" && r.words[0] != "migrated" && i > 0 && e.word(i-1) && (copulas[e.lower(i-1)] || e.lower(i-1) == "been") {
		return end - 1 // "orm.Pager is moved to urlvalues.Pager": a thing relocated, no migration
	}
	subjs, conf := e.subjects(i, r)
	if r.swap {
		if next, done := e.replaceWith(r, end, negated); done {
			return next
		}
		if len(subjs) == 0 {
			return end - 1
		}
		r.swap = false
	}
	objs := e.objects(end, r)
	if len(objs) == 0 {
		return end - 1
	}
	if a := e.ms[objs[0]].e; e.word(a) && e.lower(a) == "as" && e.isMention(a+1) {
		// "X moved to Conn as LoadType": a move and a new name, no relation.
		return end - 1
	}
	if a := e.ms[objs[len(objs)-1]].e; r.rel == "replaces" && !r.passive && e.word(a) && (e.lower(a) == "with" || e.lower(a) == "by") {
		negated = true // "X replaces Y with a copy": X is the agent of a replacement, not Y's replacement
	}
	if a := e.skipBrackets(e.ms[objs[0]].s-1, -1); r.rel == "created" && !r.passive && e.word(a) && (e.lower(a) == "a" || e.lower(a) == "an") {
		negated = true // "taggedPointerPack created a taggedPointer": a value made, not a thing authored
	}
	if !negated && !e.hypothetical(subjs) {
		e.emit(r, subjs, objs, conf)
	}
	if len(subjs) == 0 && r.rel == "depends_on" && !r.passive && !negated {
		// "Added depends on libvorbis0a to libvorbisenc2 and
		// libvorbisfile3": what the dependency is added to depends.
		if j := e.ms[objs[len(objs)-1]].e; e.word(j) && e.lower(j) == "to" {
			if owners, _ := e.listAt(e.skipModifiers(j + 1)); len(owners) > 0 {
				e.emit(r, owners, objs, confEdgeDirect)
			}
		}
	}
	if len(subjs) > 0 && subjs[0] >= 0 {
		e.lastSubject = subjs[0]
	}
	e.lastObjectEnd = e.ms[objs[len(objs)-1]].e
	return e.lastObjectEnd - 1
}

// subjects finds the subjects of the phrase at token i: the mention right
// before it (with fillers, adverbs, brackets, a relative pronoun or the
// noun that says what the mention is between: "X also uses", "X that
// uses", "the X package uses"), with those listed before it ("X and Y
// use"); else "It" opening the sentence; else the subject of the last
// relation, carried by "and" or a comma; else the subject of "X is a ..."
// whose predicate the phrase goes on ("Tern is a tool that uses pgx").
func (e *edgeScan) subjects(i int, r relation) ([]int, float64) {
	if r.words[0] == "using" || r.words[0] == "calling" {
		// A participle: the sentence's subject uses it ("WriteAll writes
		// ... using Writer.Write"), not the noun before it ("modules
		// using WASI") nor when an infinitive stands between ("reports
		// an attempt to decode ... using Decode").
		if mi := e.participleHead(i); mi >= 0 {
			return []int{mi}, confEdgeCarried
		}
		if mi := e.sentenceSubject(); mi >= 0 && !e.infinitiveBetween(e.ms[mi].e, i) {
			return []int{mi}, confEdgeCarried
		}
		return nil, 0
	}
	start := i - 1
	if r.passive && e.word(start) && e.lower(start) == "as" {
		start-- // "LZW as used by GIF": the thing before "as" is the participle's
	}
	k := e.skipToSubject(start)
	bound := k < i-1 && e.word(k+1) && relativePronouns[e.lower(k+1)] // "MSVC that was used to build"
	if e.word(k) && e.lower(k) == "to" && e.lower(i) == r.words[0] && !strings.HasSuffix(e.lower(i), "s") && !strings.HasSuffix(e.lower(i), "ed") {
		// An infinitive's subject: "Update arc4random to use ChaCha20",
		// "support for nvidia-settings to use NVML", "readByte needs to use".
		if e.isMention(k - 1) {
			k, bound = k-1, true
		} else if e.word(k-1) && toVerbs[e.lower(k-1)] && e.isMention(k-2) {
			k, bound = k-2, true
		}
	}
	if e.word(k) && (namingNouns[e.lower(k)] || namingNouns[strings.TrimSuffix(e.lower(k), "s")]) && e.isMention(e.skipBrackets(k-1, -1)) {
		k = e.skipBrackets(k-1, -1)
	}
	if k >= 1 && r.passive && e.toks[k].text == "," && e.isMention(k-1) {
		k-- // an apposition: "mcp-go, originally authored by Ed Zynda"
	}
	switch {
	case e.isMention(k):
		mi := e.at[k] - 1
		if p := e.skipBrackets(e.ms[mi].s-1, -1); e.word(p) && prepositions[e.lower(p)] && !bound {
			return nil, 0 // inside a prepositional phrase: "libraries on Linux use"
		}
		return e.listBefore(mi), confEdgeDirect
	case k == 0 && e.word(0) && (e.lower(0) == "it" || e.lower(0) == "they") && e.prev.source == e.s.source && len(e.prev.ms) == 1:
		return []int{subjPrev}, confEdgeCarried
	case k > 0 && e.word(k) && e.lower(k) == "it" && e.pronounSubject(k) >= 0:
		return []int{e.pronounSubject(k)}, confEdgeCarried
	case e.lastSubject >= 0 && k >= 0 && k > e.lastObjectEnd-1 && (e.lower(k) == "and" || e.toks[k].text == ","):
		return []int{e.lastSubject}, confEdgeCarried
	}
	if mi := e.predicateSubject(i); mi >= 0 {
		return []int{mi}, confEdgeCarried
	}
	if mi := e.appositionSubject(k); mi >= 0 {
		return e.listBefore(mi), confEdgeCarried
	}
	if mi := e.sentenceSubject(); mi >= 0 && e.word(k) && (e.lower(k) == "then" || e.lower(k) == "and") && !isBaseForm(e.lower(i)) {
		// "X writes ... using Y and then calls Z", "X sets up ... and calls
		// Y"; not an instruction ("X computes ...; use A and call B").
		return []int{mi}, confEdgeCarried
	}
	return nil, 0
}

// appositionSubject finds X of "X, a <noun phrase> <relation>" from the
// token k before the relation: a phrase of lower-case words after a
// comma that follows X ("FNV-1 and FNV-1a, non-cryptographic hash
// functions created by ..."), or -1.
func (e *edgeScan) appositionSubject(k int) int {
	n := 0
	for ; n < 6 && e.word(k) && !e.isMention(k); n++ {
		lw := e.lower(k)
		if isCapitalised(e.toks[k].text) || clauseBreaks[lw] && !articles[lw] || relationStarts[lw] || fillers[lw] || negations[lw] {
			return -1
		}
		k--
	}
	if n == 0 || k < 1 || e.toks[k].text != "," {
		return -1
	}
	if p := e.skipBrackets(k-1, -1); e.isMention(p) {
		return e.at[p] - 1
	}
	return -1
}

// infinitiveBetween reports "to" and a verb between tokens a and b.
func (e *edgeScan) infinitiveBetween(a, b int) bool {
	for k := a; k+1 < b; k++ {
		if e.word(k) && e.lower(k) == "to" && e.word(k+1) && !e.isMention(k+1) && !determiners[e.lower(k+1)] && len(e.toks[k+1].text) >= 3 &&
			isKnownWord(e.lower(k+1)) {
			return true
		}
	}
	return false
}

// pronounSubject is what "it" at token k inside a sentence stands for:
// the sentence's subject ("X is like Y, except that it uses Z"), else
// the one mention before it ("Create X as it depends on Y"); -1 when
// that is not clear.
func (e *edgeScan) pronounSubject(k int) int {
	if mi := e.sentenceSubject(); mi >= 0 {
		return mi
	}
	before := -1
	for mi, m := range e.ms {
		if m.e <= k {
			if before >= 0 {
				return -1
			}
			before = mi
		}
	}
	return before
}

// sentenceSubject is the mention that opens the sentence as its subject
// (a verb of the third person follows it: "cpuinit sets up ..."), or -1.
func (e *edgeScan) sentenceSubject() int {
	if len(e.ms) == 0 || e.ms[0].s != 0 && !(e.ms[0].s == 1 && e.word(0) && articles[e.lower(0)]) {
		return -1
	}
	v := e.ms[0].e
	for n := 0; n < 2 && e.word(v) && (namingNouns[e.lower(v)] || classNouns[e.lower(v)] || e.word(v+1) && namingNouns[e.lower(v+1)]); n++ {
		v++ // "The sqlite3 extension module provides"
	}
	if !e.word(v) || isCapitalised(e.toks[v].text) {
		return -1
	}
	lw := e.lower(v)
	if copulas[lw] || relationStarts[lw] || strings.HasSuffix(lw, "s") && !strings.HasSuffix(lw, "ss") {
		return 0
	}
	return -1
}

// toVerbs stand between a subject and its infinitive: "readByte needs
// to use io.ReadFull".
var toVerbs = set(`needs need has have tries try wants want ought used seems appears is are was were`)

// isBaseForm reports a verb in its base form (use, call): an
// instruction's, not a third person's (uses, calls, used).
func isBaseForm(lw string) bool {
	return !strings.HasSuffix(lw, "s") && !strings.HasSuffix(lw, "ed")
}

// participleHead finds X of "returns a X using Y" and "a X which encrypts
// using Y": a mention after an indefinite article that "using" or a
// relative clause describes; -1 when there is none.
func (e *edgeScan) participleHead(i int) int {
	k := e.skipBrackets(i-1, -1)
	if e.word(k-1) && relativePronouns[e.lower(k-1)] && !e.isMention(k) {
		k = e.skipBrackets(k-2, -1) // "a [Stream] which encrypts/decrypts using"
	}
	if !e.isMention(k) {
		return -1
	}
	mi := e.at[k] - 1
	a := e.skipBrackets(e.ms[mi].s-1, -1)
	if e.word(a) && (e.lower(a) == "a" || e.lower(a) == "an") {
		return mi
	}
	return -1
}

// mayModals say a relation is possible, not that it holds.
var mayModals = set(`might may could`)

// hypothetical reports a subject inside a condition ("if Python was
// built with MSVC"): what the clause says is not stated as so.
func (e *edgeScan) hypothetical(subjs []int) bool {
	if len(subjs) == 0 || subjs[0] < 0 {
		return false
	}
	k := e.ms[subjs[0]].s - 1
	for k >= 0 && (e.word(k) && determiners[e.lower(k)] || e.isBracket(k)) {
		k--
	}
	return e.word(k) && (e.lower(k) == "if" || e.lower(k) == "unless" || e.lower(k) == "whether")
}

// skipToSubject steps back from k over what may stand between a subject
// and its verb: fillers, negations, adverbs, brackets, a relative pronoun
// (with its comma: "X, which uses"), a parenthesis ("X (since 2021)
// uses").
func (e *edgeScan) skipToSubject(k int) int {
	for k >= 0 && !e.isMention(k) {
		switch {
		case e.word(k) && (fillers[e.lower(k)] || negations[e.lower(k)] || strings.HasSuffix(e.lower(k), "ly")) || e.isBracket(k):
			k--
		case e.word(k) && relativePronouns[e.lower(k)]:
			k--
			if k >= 1 && e.toks[k].text == "," && e.isMention(e.skipBrackets(k-1, -1)) {
				k = e.skipBrackets(k-1, -1) // "X, which", "[X], which"
			}
		case e.toks[k].text == ")":
			open := k
			for open >= 0 && e.toks[open].text != "(" {
				open--
			}
			if open <= 0 {
				return k
			}
			k = open - 1
		default:
			return k
		}
	}
	return k
}

// listBefore returns mention mi with the mentions listed before it with
// "and", "or" or commas ("The [URL.String] and [URL.RequestURI] methods").
func (e *edgeScan) listBefore(mi int) []int {
	out := []int{mi}
	conj := false // a comma joins a list only before its "and" or "or": "If fs implements X, Glob calls" lists nothing
	for {
		k := e.skipBrackets(e.ms[out[0]].s-1, -1)
		isConj := e.word(k) && (e.lower(k) == "and" || e.lower(k) == "or")
		if !(isConj || conj && k >= 0 && e.toks[k].text == ",") {
			return out
		}
		conj = conj || isConj
		k = e.skipBrackets(k-1, -1)
		if !e.isMention(k) {
			return out
		}
		out = append([]int{e.at[k] - 1}, out...)
	}
}

// predicateSubject finds X of "X is a|an|the ..." before token i, when
// nothing between "is" and i is a mention's own relation (no comma, no
// other relation phrase): the phrase describes what X is.
func (e *edgeScan) predicateSubject(i int) int {
	for k := i - 1; k >= 1; k-- {
		t := e.toks[k]
		if !t.word && !t.code && t.text != "[" && t.text != "]" && t.text != "-" {
			return -1
		}
		if t.word && copulas[e.lower(k)] && e.word(k+1) && articles[e.lower(k+1)] {
			if e.isMention(k - 1) {
				return e.at[k-1] - 1
			}
			return -1
		}
		if _, _, ok := e.phraseAt(k); ok && t.word && !e.isMention(k) {
			return -1
		}
	}
	return -1
}

// skipParenthesis steps over a parenthesis that opens at k ("X (if not
// nil) or else Y").
func (e *edgeScan) skipParenthesis(k int) int {
	if k >= len(e.toks) || e.toks[k].text != "(" {
		return k
	}
	for j := k + 1; j < len(e.toks); j++ {
		if e.toks[j].text == ")" {
			return j + 1
		}
	}
	return k
}

// skipBrackets steps from k in direction dir over brackets and quotes.
func (e *edgeScan) skipBrackets(k, dir int) int {
	for e.isBracket(k) {
		k += dir
	}
	return k
}

// objects finds the objects of a phrase ending at end: the first mention
// after it with only determiners and brackets between, then those listed
// after it with "and", "or" or commas; a mention that only qualifies the
// noun after it is no object. A phrase with a wildcard repeats after
// "and" ("stores receipts in S3 and metadata in PostgreSQL").
func (e *edgeScan) objects(end int, r relation) []int {
	var objs []int
	k := e.skipModifiers(end)
	for e.isMention(k) {
		mi := e.at[k] - 1
		objs = append(objs, mi)
		k = e.ms[mi].e
		j := e.skipParenthesis(k)
		for j < len(e.toks) && (e.toks[j].text == "," || e.isBracket(j) || e.word(j) && (e.lower(j) == "and" || e.lower(j) == "or" ||
			e.lower(j) == "else" || determiners[e.lower(j)] || r.passive && e.lower(j) == "by" && j > k)) {
			j++
		}
		if j == k || !e.isMention(j) || r.swap {
			break
		}
		k = j
	}
	objs = slices.DeleteFunc(objs, func(mi int) bool {
		return e.qualifies(mi) && !(throughParts[r.rel] && (e.partOf(mi) || e.namedByHead(mi)))
	})
	if star := slices.Index(r.words, "*"); star >= 0 && len(objs) > 0 {
		objs = e.wildcardObjects(relation{words: r.words[star+1:]}, objs)
	}
	return objs
}

// skipModifiers steps from k over what may stand between a relation and
// its object: determiners, brackets, and before a name a hyphenated
// modifier or the noun that says what the name is ("used by the
// top-level functions [Info]", "calls the function Foo").
func (e *edgeScan) skipModifiers(k int) int {
	for k < len(e.toks) && !e.isMention(k) && (e.word(k) && determiners[e.lower(k)] || e.isBracket(k)) {
		k++
	}
	j := k
	for n := 0; n < 3 && e.word(j) && !e.isMention(j) && !isCapitalised(e.toks[j].text); n++ {
		lw := e.lower(j)
		hyphen := strings.Contains(lw, "-") && !strings.ContainsAny(lw, "_./")
		if !hyphen && !namingNouns[lw] && !namingNouns[strings.TrimSuffix(lw, "s")] && !classNouns[lw] {
			break
		}
		j++
		if e.isMention(e.skipBrackets(j, 1)) {
			return e.skipBrackets(j, 1)
		}
	}
	return k
}

// wildcardObjects adds the objects of a wildcard phrase's repetitions
// after "and" ("... in S3 and metadata in PostgreSQL").
func (e *edgeScan) wildcardObjects(tail relation, objs []int) []int {
	j := e.ms[objs[len(objs)-1]].e
	for j+1 < len(e.toks) && e.word(j) && e.lower(j) == "and" {
		found := false
		for skip := 1; skip <= 3 && j+1+skip <= len(e.toks); skip++ {
			if !e.word(j+skip) || e.isMention(j+skip) {
				break
			}
			if e2, ok := tail.match(e.toks, j+1+skip); ok && e.isMention(e2) && !e.qualifies(e.at[e2]-1) {
				objs = append(objs, e.at[e2]-1)
				j, found = e.ms[e.at[e2]-1].e, true
				break
			}
		}
		if !found {
			break
		}
	}
	return objs
}

// replaceWith handles "replaced X with Y", "migrated from X to Y" and
// "Replace Build-Depends on A and B with C and D" (Y replaces X, C
// replaces A, D replaces B): the things replaced come within a few words
// of the verb, then "with", "to" or "by" and their replacements. done is
// false when that structure is not there.
func (e *edgeScan) replaceWith(r relation, end int, negated bool) (next int, done bool) {
	k := end
	for skip := 0; k < len(e.toks) && !e.isMention(k) && skip < 4; k++ {
		if !e.word(k) && !e.isBracket(k) || e.word(k) && (e.lower(k) == "with" || e.lower(k) == "by" || e.lower(k) == "to") {
			return 0, false
		}
		if !determiners[e.lower(k)] && !e.isBracket(k) {
			skip++
		}
	}
	olds, j := e.listAt(k)
	if len(olds) == 0 || !e.word(j) || (e.lower(j) != "with" && e.lower(j) != "to" && e.lower(j) != "by") {
		return 0, false
	}
	j++
	for j < len(e.toks) && (e.word(j) && determiners[e.lower(j)] || e.isBracket(j)) {
		j++
	}
	news, after := e.listAt(j)
	for {
		// "replace A with B and C with D": the list after "with" ends
		// where the next pair's "with" begins.
		var next []int
		if len(news) > 1 && e.word(after) && (e.lower(after) == "with" || e.lower(after) == "by") {
			next = []int{news[len(news)-1]}
			news = news[:len(news)-1]
		}
		for n, y := range news {
			for m, x := range olds {
				if negated || len(olds) == len(news) && n != m || len(olds) > 1 && len(news) > 1 && len(olds) != len(news) {
					continue
				}
				e.x.addEdge(e.ms[y].name, r.rel, e.ms[x].name, confEdgeDirect, "replace-with", e.s)
			}
		}
		if next == nil {
			break
		}
		j = after + 1
		for j < len(e.toks) && (e.word(j) && determiners[e.lower(j)] || e.isBracket(j)) {
			j++
		}
		olds = next
		news, after = e.listAt(j)
	}
	e.lastSubject, e.lastObjectEnd = -1, after
	return max(after, j), true
}

// listAt reads a list of mentions starting at token k ("A, B and C", "A
// B"), and returns them and where the list ends.
func (e *edgeScan) listAt(k int) ([]int, int) {
	var out []int
	for e.isMention(k) {
		mi := e.at[k] - 1
		out = append(out, mi)
		k = e.skipBrackets(e.ms[mi].e, 1)
		j := k
		for j < len(e.toks) && (e.toks[j].text == "," || e.isBracket(j) || e.word(j) && (e.lower(j) == "and" || e.lower(j) == "or")) {
			j++
		}
		if !e.isMention(j) {
			break
		}
		k = j
	}
	return out, k
}

// insteadOf reads "use Y instead of X" and "use Y rather than X": Y
// replaces X.
func (e *edgeScan) insteadOf() {
	for k := 1; k+2 < len(e.toks); k++ {
		if !e.word(k) || !e.word(k+1) || !(e.lower(k) == "instead" && e.lower(k+1) == "of" || e.lower(k) == "rather" && e.lower(k+1) == "than") {
			continue
		}
		y, x := e.skipBrackets(k-1, -1), e.skipBrackets(k+2, 1)
		if !e.isMention(x) {
			continue
		}
		if p := e.skipBrackets(k-1, -1); !e.isMention(y) || e.ms[e.at[y]-1].s > 0 && e.word(e.ms[e.at[y]-1].s-1) &&
			(prepositions[e.lower(e.ms[e.at[y]-1].s-1)] || e.lower(e.ms[e.at[y]-1].s-1) == "in") && p >= 0 {
			// "use X in debian/control instead of Y": the object of the
			// verb a few words back.
			if y = e.useObjectBefore(k); y < 0 {
				continue
			}
		}
		v := e.skipBrackets(e.ms[e.at[y]-1].s-1, -1)
		for v >= 0 && e.word(v) && determiners[e.lower(v)] {
			v--
		}
		// "use" opening a clause (an instruction), or "uses", "using".
		opens := v == 0 || v > 0 && !e.toks[v-1].word && !e.toks[v-1].code || e.word(v-1) && e.lower(v-1) == "to"
		if e.word(v) && (e.lower(v) == "use" && opens || e.lower(v) == "uses" || e.lower(v) == "using") {
			e.x.addEdge(e.ms[e.at[y]-1].name, "replaces", e.ms[e.at[x]-1].name, confEdgeDirect, "instead of", e.s)
		}
	}
	e.usedInsteadOf()
}

// inFavourOf reads "drop X in favour of Y" and "X is deprecated in favor
// of Y": Y replaces X, the mention before the phrase (past a participle
// of removal and its auxiliaries).
func (e *edgeScan) inFavourOf() {
	for k := 1; k+3 < len(e.toks); k++ {
		if !e.word(k) || e.lower(k) != "in" || e.lower(k+1) != "favour" && e.lower(k+1) != "favor" || e.lower(k+2) != "of" {
			continue
		}
		y := e.skipModifiers(k + 3)
		x := k - 1
		for n := 0; n < 3 && x >= 0 && !e.isMention(x) && (e.isBracket(x) || e.word(x) &&
			(removals[e.lower(x)] || copulas[e.lower(x)] || namingNouns[e.lower(x)] || e.lower(x) == "been" || e.lower(x) == "now" || strings.HasSuffix(e.lower(x), "ly"))); n++ {
			x--
		}
		if e.isMention(x) && e.isMention(y) && e.at[x] != e.at[y] {
			e.x.addEdge(e.ms[e.at[y]-1].name, "replaces", e.ms[e.at[x]-1].name, confEdgeDirect, "in favour of", e.s)
		}
	}
}

// useObjectBefore finds the object of "use" standing at most six words
// before token k in the same clause ("use X in debian/control instead
// of Y"), or -1.
func (e *edgeScan) useObjectBefore(k int) int {
	for v := k - 1; v >= 0 && v >= k-8; v-- {
		if !e.word(v) && !e.isBracket(v) && !e.toks[v].code {
			return -1 // a clause's end: ',', ';', ':'
		}
		if e.isMention(v) || !e.word(v) {
			continue
		}
		switch lw := e.lower(v); {
		case lw == "use" || lw == "uses" || lw == "using":
			if y := e.skipModifiers(v + 1); e.isMention(y) {
				return y
			}
			return -1
		case relationStarts[lw] || conjunctions[lw]:
			return -1
		}
	}
	return -1
}

// conjunctions open another clause.
var conjunctions = set(`and or but so because which that who when while if though although whereas`)

// usedInsteadOf reads "Y (which) should be used instead of X": Y
// replaces X.
func (e *edgeScan) usedInsteadOf() {
	for k := 1; k+3 < len(e.toks); k++ {
		if !e.word(k) || e.lower(k) != "used" || e.lower(k+1) != "instead" || e.lower(k+2) != "of" {
			continue
		}
		x := e.skipBrackets(k+3, 1)
		y := e.skipToSubject(k - 1)
		if e.isMention(x) && e.isMention(y) && !e.isMention(k-1) {
			e.x.addEdge(e.ms[e.at[y]-1].name, "replaces", e.ms[e.at[x]-1].name, confEdgeCarried, "used instead of", e.s)
		}
	}
}

// debianReplaces reads the Replaces relation a Debian change entry
// declares for a named package: "Breaks+Replaces: X on Y" (Y replaces
// X), "Replaces to X on Y" (X replaces Y), "P: Add Conflicts+Replaces: X"
// (P, the package the entry is about, replaces X).
func (e *edgeScan) debianReplaces() {
	for k, t := range e.toks {
		if !t.word || !(t.text == "Replaces" || strings.HasSuffix(t.text, "+Replaces")) || k+2 >= len(e.toks) {
			continue
		}
		next := e.toks[k+1].text
		switch {
		case next == ":":
			vals, j := e.listAt(k + 2)
			holder := -1
			if e.word(j) && e.lower(j) == "on" && e.isMention(e.skipModifiers(j+1)) {
				holder = e.at[e.skipModifiers(j+1)] - 1
			} else if len(e.ms) > 0 && e.ms[0].s == 0 && e.ms[0].e < len(e.toks) && e.toks[e.ms[0].e].text == ":" {
				holder = 0
			}
			if holder >= 0 && len(vals) > 0 {
				e.emit(relation{words: []string{"Replaces"}, rel: "replaces"}, []int{holder}, vals, confEdgeDirect)
			}
		case next == "to" || next == "for":
			holders, j := e.listAt(k + 2)
			if len(holders) > 0 && e.word(j) && e.lower(j) == "on" {
				if vals, _ := e.listAt(e.skipOld(j + 1)); len(vals) > 0 {
					e.emit(relation{words: []string{"Replaces"}, rel: "replaces"}, holders, vals, confEdgeDirect)
				}
			}
		}
	}
}

// skipOld steps over determiners and "old" before a package's name.
func (e *edgeScan) skipOld(k int) int {
	for e.word(k) && !e.isMention(k) && (determiners[e.lower(k)] || e.lower(k) == "old" || e.lower(k) == "older") {
		k++
	}
	return k
}

// removals are the verbs that take a thing out: "Drop X, use Y" says Y
// replaces X.
var removals = set(`drop dropped remove removed rid deprecate deprecated`)

// dropThenUse reads "Drop X, use Y" and "Get rid of X and use Y" (Y
// replaces X): a verb of removal opening the sentence with its object,
// then "use" opening the next clause with its own.
func (e *edgeScan) dropThenUse() {
	v := 0
	for v < len(e.toks) && e.word(v) && (e.lower(v) == "get" || e.lower(v) == "got") {
		v++
	}
	if !e.word(v) || !removals[e.lower(v)] {
		return
	}
	x := v + 1
	for x < len(e.toks) && (e.word(x) && (determiners[e.lower(x)] || e.lower(x) == "of") || e.isBracket(x)) {
		x++
	}
	if !e.isMention(x) {
		return
	}
	k := e.ms[e.at[x]-1].e
	for k < len(e.toks) && (e.toks[k].text == "," || e.toks[k].text == ";" || e.word(k) && e.lower(k) == "and") {
		k++
	}
	if k == e.ms[e.at[x]-1].e || !e.word(k) || e.lower(k) != "use" {
		return
	}
	y := k + 1
	for y < len(e.toks) && (e.word(y) && determiners[e.lower(y)] || e.isBracket(y)) {
		y++
	}
	if e.isMention(y) {
		e.x.addEdge(e.ms[e.at[y]-1].name, "replaces", e.ms[e.at[x]-1].name, confEdgeDirect, "drop then use", e.s)
	}
}

// deprecatedUse reads "X is deprecated, use Y" and "X is obsolete; please
// use Y instead": Y replaces X.
func (e *edgeScan) deprecatedUse() {
	for k := 2; k+2 < len(e.toks); k++ {
		if !e.word(k) || e.lower(k) != "deprecated" && e.lower(k) != "obsolete" {
			continue
		}
		c := k - 1
		for c >= 0 && e.word(c) && isAdverb(e.lower(c)) {
			c--
		}
		if !e.word(c) || !copulas[e.lower(c)] {
			continue
		}
		x := e.skipBrackets(c-1, -1)
		j := k + 1
		for j < len(e.toks) && (e.toks[j].text == "," || e.word(j) && (e.lower(j) == "and" || e.lower(j) == "please" || e.lower(j) == "so")) {
			j++
		}
		if !e.isMention(x) || j == k+1 || !e.word(j) || e.lower(j) != "use" {
			continue
		}
		if y := e.skipModifiers(j + 1); e.isMention(y) && e.at[y] != e.at[x] {
			e.x.addEdge(e.ms[e.at[y]-1].name, "replaces", e.ms[e.at[x]-1].name, confEdgeDirect, "deprecated, use", e.s)
		}
	}
}

// emit adds the edges from each subject to each object (the second and
// later objects are carried, less confident).
func (e *edgeScan) emit(r relation, subjs, objs []int, conf float64) {
	for _, subj := range subjs {
		for n, o := range objs {
			c := conf
			if n > 0 || len(subjs) > 1 {
				c = min(c, confEdgeCarried)
			}
			src, dst := "", e.ms[o].name
			if subj >= 0 {
				src = e.ms[subj].name
			} else {
				src = e.prev.ms[0].name
			}
			if r.passive {
				src, dst = dst, src
			}
			if memory.NameKey(src) != memory.NameKey(dst) {
				e.x.addEdge(src, r.rel, dst, c, strings.Join(r.words, " "), e.s)
			}
		}
	}
}

func (x *extractor) addEdge(src, rel, dst string, conf float64, rule string, s sentence) {
	key := memory.EdgeKey(src, rel, dst)
	if i, ok := x.edgeAt[key]; ok {
		g := &x.edges[i]
		if conf > g.Confidence {
			g.Confidence, g.SourceID, g.Sentence, g.Rule = conf, s.source, s.text, rule
		}
		if !slices.Contains(g.SourceIDs, s.source) {
			g.SourceIDs = append(g.SourceIDs, s.source)
		}
		return
	}
	x.edgeAt[key] = len(x.edges)
	x.edges = append(x.edges, ExtractedEdge{Source: src, Relation: rel, Target: dst, Confidence: conf, SourceID: s.source, Sentence: s.text,
		Rule: rule, SourceIDs: []string{s.source}})
}

// throughParts are the relations that hold with a thing when they hold
// with a part of it: who uses X's calls uses X, who depends on X's
// variables depends on X; who maintains the Terraform modules does not
// maintain Terraform.
var throughParts = set(`uses depends_on calls reads_from writes_to connects_to runs_on integrates_with`)

// partOf reports a mention followed by a plural noun of its parts ("X
// calls", "X variables", "the X symbols"), which no other name follows
// ("the GCC calling convention" is one thing of GCC's, not its parts).
func (e *edgeScan) partOf(mi int) bool {
	k := e.skipBrackets(e.ms[mi].e, 1)
	if !e.word(k) || namingNouns[e.lower(k)] || isAcronym(e.toks[k].text) || !strings.HasSuffix(e.lower(k), "s") {
		return false
	}
	if r, end, ok := e.phraseAt(k); ok && r.words[0] != "*" && e.isMention(e.skipModifiers(end)) {
		return false // a verb of the next clause: "writes to Kafka, and the fraud-detector reads from Kafka"
	}
	return !e.isMention(e.skipBrackets(k+1, 1))
}

// kindNouns say what kind of thing of code a name is when they end the
// noun phrase it opens: "uses the mach_vm_region system call", "calls the
// Foo helper function".
var kindNouns = set(`call calls syscall message algorithm encoding backend engine parser encoder decoder routine`)

// namedByHead reports mention mi opening a noun phrase of up to three
// lower-case words whose last says what kind of thing the mention is
// (a noun naming it, as namingNouns, classNouns or kindNouns hold), the
// phrase ending at a function word, a clause break or punctuation: who
// uses "the X system call" uses X.
func (e *edgeScan) namedByHead(mi int) bool {
	k := e.skipBrackets(e.ms[mi].e, 1)
	last := ""
	for n := 0; n < 3 && e.word(k) && !e.isMention(k) && !isCapitalised(e.toks[k].text) && !functionWords[e.lower(k)] &&
		!clauseBreaks[e.lower(k)] && (!relationStarts[e.lower(k)] || kindNouns[e.lower(k)]); n++ {
		last = e.lower(k)
		k++
	}
	if last == "" || e.word(k) && !functionWords[e.lower(k)] && !clauseBreaks[e.lower(k)] {
		return false
	}
	return namingNouns[last] || classNouns[last] || kindNouns[last] || kindNouns[strings.TrimSuffix(last, "s")]
}

// qualifies reports whether mention mi qualifies a noun that follows it
// (a lower-case word that is no clause break, adverb, number or noun of
// what the mention is): "maintains the Terraform modules" relates to the
// modules, not to Terraform; "the zstd package" and "initMime's path"
// are the mention's.
func (e *edgeScan) qualifies(mi int) bool {
	m := e.ms[mi]
	if e.toks[m.e-1].poss {
		return false
	}
	k := e.skipBrackets(m.e, 1)
	for e.word(k) && isNumeric(e.toks[k].text) {
		k++
	}
	if !e.word(k) {
		return false
	}
	w := e.toks[k].text
	lw := strings.ToLower(w)
	if isAcronym(w) && !isNumeric(w) {
		return true // "every Airflow DAG", "the Foo API": the name qualifies an acronym
	}
	if namingNouns[lw] {
		// "the zstd package" names zstd; "the PostgreSQL protocol Close
		// message" does not.
		n := e.skipBrackets(k+1, 1)
		return e.word(n) && !clauseBreaks[e.toks[n].lower] || e.isMention(n)
	}
	return !isCapitalised(w) && !clauseBreaks[lw] && !strings.HasSuffix(lw, "ly") && !negations[lw]
}
