package synth

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/synth/lexicon"
)

// Whether one piece of a source supports one part of a claim: every word
// the part needs is in the piece (the same word, a form of it, or a close
// synonym that is not its antonym), the words stand in one clause of the
// piece in the same roles, both deny or neither does, and a cause is the
// piece's cause.

// partSupport is how one piece supports a claim part.
type partSupport struct {
	// score is the share of the part's words the piece holds, cut to a
	// quarter when anything disagrees.
	score float64
	ok    bool
	why   string
	piece int
}

// structurePenalty cuts the score of a part whose words the piece holds
// but in other roles, clauses or polarity: below any threshold worth
// using.
const structurePenalty = 0.25

// maxCombos bounds the alignments tried for one part and piece.
const maxCombos = 2048

// matcher compares a claim's words with a piece's.
type matcher struct {
	lex *lexicon.Lexicon
	// synonymRank is how many of each word's most frequent senses may be
	// shared for two words to count as synonyms (0: none).
	synonymRank int
	// strict: a light verb of the piece stands for no other verb of the
	// part (a list's members, checked one by one: "John and Maria
	// volunteered" is not "we went" of John's).
	strict bool
}

// same reports whether the piece's token t may stand for the claim's
// token c.
func (m matcher) same(c, t token) bool {
	if !t.isWord() || t.kind == kFn || t.kind == kNeg {
		return false
	}
	switch c.kind {
	case kNumber:
		return t.kind == kNumber && c.low == t.low
	case kName:
		return t.kind != kNumber && (c.stem == t.stem || c.low == t.low)
	}
	if t.kind == kNumber {
		return false
	}
	if c.stem == t.stem || c.low == t.low {
		return true
	}
	if c.kind == kContent && t.kind == kContent && (derived(c.low, t.low) || derived(t.low, c.low)) {
		return true // "diet" and "dietary", "health" and "healthy"
	}
	if m.lex == nil || t.kind == kName && !m.lex.Known(t.low) {
		return false
	}
	for _, x := range m.lex.Lemmas(c.low) {
		if slices.Contains(m.lex.Lemmas(t.low), x) {
			return true
		}
	}
	return m.synonymRank > 0 && m.lex.Synonyms(c.low, t.low, m.synonymRank) && !m.lex.Antonyms(c.low, t.low)
}

// adjectiveSuffixes make an adjective of a noun ("dietary", "healthy",
// "musical").
var adjectiveSuffixes = []string{"y", "al", "ary", "ic", "ical", "ful", "ous", "ive"}

// derived reports whether long is short with an adjective's suffix: the
// same thing said of something ("his diet", "dietary changes").
func derived(short, long string) bool {
	if len(short) < 4 || len(long) <= len(short) {
		return false
	}
	base := short
	if strings.HasSuffix(base, "e") {
		base = base[:len(base)-1]
	}
	for _, suf := range adjectiveSuffixes {
		if long == short+suf || long == base+suf {
			return true
		}
	}
	return false
}

// support is how piece pc supports part p. Every name, number, noun and
// adjective of the part must be in the piece; its verbs and adverbs may
// be said in other words as long as threshold of all its words are there.
func (m matcher) support(p claimPart, pc *srcPiece, threshold float64) partSupport {
	cands, matched, missing := m.candidates(p, pc)
	out := partSupport{score: float64(matched) / float64(len(p.need))}
	if matched == 0 {
		out.score, out.why = 0, fmt.Sprintf("%q is not in the source", missing)
		return out
	}
	best, why := m.align(p, pc, cands)
	if why == "" {
		why = negationAgrees(p, pc, best)
	}
	if why == "" {
		why = m.antonymIn(p, pc, best)
	}
	if why == "" {
		why = m.verbSwapped(p, pc, cands, best)
	}
	if why == "" {
		why = intentDropped(p, pc, best)
	}
	if why == "" {
		why = modifierDetached(p, pc, cands)
	}
	if why == "" {
		why = verbDemoted(p, pc, best)
	}
	switch {
	case missing != "":
		why = fmt.Sprintf("%q is not in the source", missing)
	case why == "" && out.score < threshold:
		why = "too few of its words are in the source"
	}
	out.ok = why == ""
	if !out.ok {
		out.score *= structurePenalty
	}
	out.why = why
	return out
}

// candidates lists, for each word the part needs, the piece's words that
// may stand for it (-1: the source's label or heading, when the piece
// lacks it); missing is the first name, number, noun or adjective (or
// label) the piece lacks.
func (m matcher) candidates(p claimPart, pc *srcPiece) (cands [][]int, matched int, missing string) {
	cands = make([][]int, len(p.need))
	for k, i := range p.need {
		c := p.a.toks[i]
		for j, t := range pc.a.toks {
			if m.same(c, t) {
				cands[k] = append(cands[k], j)
			}
		}
		if len(cands[k]) == 0 && (p.a.role[i] != roleObj || c.kind != kContent) && slices.ContainsFunc(pc.extra, func(t token) bool { return m.same(c, t) }) {
			// The source's label or heading, only when the piece lacks it,
			// and not as what the claim's verb acts on: "adds a new
			// bookworm" is not said by an entry headed "bookworm".
			cands[k] = append(cands[k], -1)
		}
		if len(cands[k]) > 0 {
			matched++
		} else if core(p.a, i) && missing == "" {
			missing = c.text
		}
	}
	for _, l := range p.labels {
		if missing == "" && !slices.ContainsFunc(pc.a.toks, func(t token) bool { return m.same(l, t) }) &&
			!slices.ContainsFunc(pc.extra, func(t token) bool { return m.same(l, t) }) {
			missing = l.text
		}
	}
	return cands, matched, missing
}

// lightVerbs say little of their own: a claim may use one where the
// source has another verb ("went on a trip" for "snapped a pic on my
// trip"), or use another where the source has one of them.
var lightVerbs = termsOf(`be am is are was were been have has had get gets got gotten go goes went gone make makes made take takes took taken
	do does did done give gives gave given come comes came put puts use uses used show shows showed shown keep keeps kept
	add adds added include includes included provide provides provided offer offers offered contain contains contained
	being having getting going making taking doing giving coming putting using showing keeping adding including providing
	offering containing`)

// verbSwapped returns a reason when the part's verb is not in the piece
// and the piece's clause has a verb of its own in its place: "Omar
// reviewed the release" is not "Omar approved the release". A light verb
// on either side, or a piece without a verb ("New patch to fix a leak"),
// lets the claim say it in its words.
func (m matcher) verbSwapped(p claimPart, pc *srcPiece, cands [][]int, choice []int) string {
	home := -1
	for _, j := range choice {
		if j >= 0 && pc.a.role[j] != roleTime {
			home = pc.a.clause[j]
			break
		}
	}
	if home < 0 || pc.a.pred[home] < 0 {
		return ""
	}
	pv := pc.a.toks[pc.a.pred[home]]
	if !pv.verb || lightVerbs[pv.low] && !m.strict || slices.Contains(choice, pc.a.pred[home]) {
		return ""
	}
	for k, i := range p.need {
		c := p.a.toks[i]
		if len(cands[k]) == 0 && c.verb && p.a.pred[p.a.clause[i]] == i && !lightVerbs[c.low] {
			return fmt.Sprintf("%q is not what the source says was done (%q)", c.text, pv.text)
		}
	}
	return ""
}

// verbDemoted returns a reason when the verb that heads the piece's
// clause stands in the claim as a noun or an adjective, while the claim's
// clause has no verb, or one that is a noun in the piece: "Helmut Grohne
// musl the build on fixed" is not "Helmut Grohne fixed the build on
// musl". A claim that names the deed with a light verb ("Caroline's talk
// was powerful") keeps a verb of its own.
func verbDemoted(p claimPart, pc *srcPiece, choice []int) string {
	at := map[int]int{}
	for k, i := range p.need {
		at[i] = k
	}
	for k, i := range p.need {
		j := choice[k]
		if j < 0 || p.a.toks[i].verb {
			continue
		}
		sv := pc.a.toks[j]
		if pc.a.pred[pc.a.clause[j]] != j || !sv.verb || lightVerbs[sv.low] {
			continue
		}
		cp := p.a.pred[p.a.clause[i]]
		if cp >= 0 {
			k2, ok := at[cp]
			if !ok || choice[k2] < 0 || pc.a.toks[choice[k2]].verb {
				continue
			}
		}
		return fmt.Sprintf("the source's verb %q is not the claim's", sv.text)
	}
	return ""
}

// intentDropped returns a reason when the piece only means, wants or
// plans to do what the claim says is done: "Nina opened a bakery" is not
// "I want to open a bakery". A claim that keeps a word of intent, of the
// future or of a possibility ("wants to", "plans to", "will", "is going
// to", "might"), or says it as a purpose ("to get stronger"), may say it.
func intentDropped(p claimPart, pc *srcPiece, choice []int) string {
	for k, i := range p.need {
		j := choice[k]
		if !p.a.toks[i].verb || j < 2 || pc.a.toks[j-1].low != "to" || !attitudes[pc.a.toks[j-2].low] || i > 0 && p.a.toks[i-1].low == "to" {
			continue // a claim's "to get stronger" is a purpose too, not a deed
		}
		if slices.ContainsFunc(p.a.toks, func(t token) bool { return attitudes[t.low] || intentWords[t.low] }) {
			return ""
		}
		return fmt.Sprintf("the source says %q %s, not that it was done", pc.a.toks[j-2].text, pc.a.toks[j].text)
	}
	return ""
}

// intentWords say that a claim is about what is meant, to come, or may be.
var intentWords = termsOf(`will ll would shall should could might may can`)

// core reports whether the claim's word at i must be in the piece that
// supports it: every word but the verb that heads its clause, light verbs
// ("using", "shows") and adverbs, which may be said in other words
// ("attended" for "went to").
func core(a analysis, i int) bool {
	t := a.toks[i]
	if t.kind == kName || t.kind == kNumber || t.noun || t.adj {
		return true
	}
	return t.verb && a.pred[a.clause[i]] != i && !lightVerbs[t.low]
}

// antonymIn returns a reason when a word of the part is the opposite of a
// word in the clauses of the piece its words stand in ("noisy" against
// "quiet", "external" against "internal"), unless the part says that
// word too.
func (m matcher) antonymIn(p claimPart, pc *srcPiece, choice []int) string {
	if m.lex == nil {
		return ""
	}
	clauses := map[int]bool{}
	for _, j := range choice {
		if j >= 0 {
			clauses[pc.a.clause[j]] = true
		}
	}
	for _, i := range p.need {
		c := p.a.toks[i]
		if c.kind != kContent || slices.ContainsFunc(pc.a.toks, func(t token) bool { return t.stem == c.stem }) {
			continue // the source says the word itself
		}
		for j, t := range pc.a.toks {
			if !clauses[pc.a.clause[j]] || t.kind != kContent || t.stem == c.stem {
				continue
			}
			if m.lex.Antonyms(c.low, t.low) && !slices.ContainsFunc(p.a.toks, func(u token) bool { return u.stem == t.stem }) {
				return fmt.Sprintf("%q is the opposite of the source's %q", c.text, t.text)
			}
		}
	}
	return ""
}

// align chooses, for each needed word with candidates, the piece's word
// it stands for, keeping the words in one clause and their roles; why is
// what still disagrees in the best choice ("" when nothing does).
func (m matcher) align(p claimPart, pc *srcPiece, cands [][]int) ([]int, string) {
	limit := 4
	for {
		n := 1
		for _, cs := range cands {
			n *= max(1, min(len(cs), limit))
		}
		if n <= maxCombos || limit == 1 {
			break
		}
		limit--
	}
	choice := make([]int, len(cands))
	var best []int
	bestCost, bestWhy := -1, ""
	var walk func(k int)
	walk = func(k int) {
		if k == len(cands) {
			if c, why := placeCost(p, pc, choice); bestCost < 0 || c < bestCost {
				best, bestCost, bestWhy = slices.Clone(choice), c, why
			}
			return
		}
		if len(cands[k]) == 0 {
			choice[k] = -2 // not found
			walk(k + 1)
			return
		}
		for _, j := range cands[k][:min(len(cands[k]), limit)] {
			choice[k] = j
			walk(k + 1)
		}
	}
	walk(0)
	return best, bestWhy
}

// placeCost scores one choice of the piece's words for the part's: a
// large cost for each word outside the clause the others stand in, for
// each role that differs and for a cause on the wrong side; a small one
// for each pair out of order.
func placeCost(p claimPart, pc *srcPiece, choice []int) (int, string) {
	cost, why, home := 0, "", -1
	if p.hasCause {
		cost, why = causeCost(p, pc, choice)
	} else {
		var c int
		c, why, home = clauseCost(p, pc, choice)
		cost += c
	}
	last := -1
	used := map[int]string{}
	for k, i := range p.need {
		j := choice[k]
		if j < 0 {
			continue
		}
		if j < last {
			cost++
		}
		last = j
		if s, ok := used[j]; ok && s != p.a.toks[i].stem {
			cost += 50 // two words of the claim for one of the source
		}
		used[j] = p.a.toks[i].stem
		if home >= 0 && pc.a.clause[j] != home {
			continue // borrowed from the clause before (an antecedent, a verb): its role there is not this clause's
		}
		rc, rp := p.a.role[i], pc.a.role[j]
		if rc == roleSubj && rp == roleObj && intransitive(p, pc, choice, i, j) {
			continue // "Email delivery is moving" for "We are moving email delivery"
		}
		if (p.a.toks[i].noun || p.a.toks[i].adj) && rolesConflict(rc, rp, p.a.cop[p.a.clause[i]], pc.a.cop[pc.a.clause[j]]) {
			cost += 100
			if why == "" {
				why = fmt.Sprintf("who did what differs: %q is %s in the claim and %s in the source", p.a.toks[i].text, roleName(rc), roleName(rp))
			}
		}
	}
	return cost, why
}

// intransitive reports whether the claim's subject at i may stand for
// the piece's object at j because the claim uses the verb without an
// object ("the delivery is moving") and the piece's subject is none of
// the claim's words ("we are moving the delivery"). A claim that names
// both ("the kids took Melanie") is not excused.
func intransitive(p claimPart, pc *srcPiece, choice []int, i, j int) bool {
	for k, i2 := range p.need {
		if p.a.clause[i2] == p.a.clause[i] && p.a.role[i2] == roleObj {
			return false
		}
		if j2 := choice[k]; j2 >= 0 && pc.a.clause[j2] == pc.a.clause[j] && pc.a.role[j2] == roleSubj {
			return false
		}
	}
	return true
}

// clauseCost is 1000 for each word outside the clause most of the others
// stand in (home, which it returns), unless the home clause has no word
// of its own in that word's role: a word of the claim may come from
// another clause of the sentence ("Started when I was young": the
// speaker), but not from one where it plays the part the home clause
// gives something else ("The API runs on Kubernetes and the batch jobs on
// Nomad" does not say the API runs on Nomad).
func clauseCost(p claimPart, pc *srcPiece, choice []int) (int, string, int) {
	count := map[int]int{}
	for _, j := range choice {
		if j >= 0 && pc.a.role[j] != roleTime {
			count[pc.a.clause[j]]++
		}
	}
	home, most := -1, 0
	for c, n := range count {
		if n > most || (n == most && c < home) {
			home, most = c, n
		}
	}
	for k, i := range p.need {
		if j := choice[k]; j >= 0 && p.a.pred[p.a.clause[i]] == i {
			home = pc.a.clause[j] // the clause of the claim's verb, when the piece has it
		}
	}
	cost := 0
	relative := home > 0 && startsRelative(pc, home)
	for k, j := range choice {
		if j < 0 || pc.a.clause[j] == home {
			continue
		}
		if pc.a.role[j] == roleTime {
			// A time may come from another clause of the sentence, unless
			// the clause has a time of its own ("took two weeks"), or from
			// another sentence.
			if pc.window || timeTaken(pc, choice, home) {
				cost += 1000
			}
			continue
		}
		if relative && pc.a.toks[j].noun && !antecedentOf(pc, home, j) || slotTaken(p, pc, choice, home, p.need[k]) ||
			pc.window && !addsDetail(p.a, p.need[k]) {
			cost += 1000
		}
	}
	if cost > 0 {
		return cost, "the source says it of different things: its words stand in different clauses", home
	}
	return 0, "", home
}

// timeTaken reports whether clause home of the piece has a time word the
// part does not use.
func timeTaken(pc *srcPiece, choice []int, home int) bool {
	for u, t := range pc.a.toks {
		if pc.a.clause[u] == home && pc.a.role[u] == roleTime && t.kind != kFn && !slices.Contains(choice, u) {
			return true
		}
	}
	return false
}

// addsDetail reports whether the claim's word at i is the object of a
// preposition (where, with whom, of what): the sentence of a source that
// says who did what to whom, and of what kind, must say it all; a
// sentence beside it may add only such details.
func addsDetail(a analysis, i int) bool {
	return strings.HasPrefix(a.role[i], "p:")
}

// slotTaken reports whether the home clause of the piece has, in the role
// the claim gives its word at i, a word of its own the claim does not
// use: a noun in the same role, or a verb of its own for a verb.
func slotTaken(p claimPart, pc *srcPiece, choice []int, home, i int) bool {
	c := p.a.toks[i]
	used := map[int]bool{}
	for _, j := range choice {
		used[j] = true
	}
	rc := p.a.role[i]
	for u, t := range pc.a.toks {
		if pc.a.clause[u] != home || used[u] || !t.isWord() {
			continue
		}
		switch {
		case c.verb && pc.a.pred[home] == u && t.verb:
			return true
		case c.noun && t.noun && t.kind != kFn && rc != roleNone && sameSlot(rc, pc.a.role[u]):
			return true
		}
	}
	return false
}

// sameSlot reports whether two roles are the same part of a clause.
func sameSlot(a, b string) bool {
	if strings.HasPrefix(a, "p:") && strings.HasPrefix(b, "p:") {
		return prepGroup(a[2:]) == prepGroup(b[2:])
	}
	return a == b && a != roleTime && a != rolePoss && a != roleLabel
}

// antecedentOf reports whether the noun at j stands in the noun phrase a
// relative clause c follows ("the auth service, which checks the token":
// the auth service checks it, not the gateway before it).
func antecedentOf(pc *srcPiece, c, j int) bool {
	start := -1
	for i, k := range pc.a.clause {
		if k == c {
			start = i
			break
		}
	}
	for i := start - 1; i > j; i-- {
		t := pc.a.toks[i]
		if t.isWord() && !t.noun && !t.adj && !determiners[t.low] && !t.poss {
			return false
		}
	}
	return start > j
}

// startsRelative reports whether clause c of the piece is a relative
// clause (", which ...").
func startsRelative(pc *srcPiece, c int) bool {
	for j, k := range pc.a.clause {
		if k == c {
			w := firstWord(pc.a.toks, j)
			return relatives[pc.a.toks[w].low]
		}
	}
	return false
}

// causeCost checks a causal part: the piece must say what caused what,
// and the part's cause must stand in the piece's cause, its effect in the
// piece's effect.
func causeCost(p claimPart, pc *srcPiece, choice []int) (int, string) {
	pcause, ok := findCausal(pc.a.toks, 0, len(pc.a.toks))
	if !ok {
		return 1000, "the source does not say what caused what"
	}
	for k, i := range p.need {
		j := choice[k]
		if j < 0 || pc.a.role[j] == roleTime {
			continue
		}
		switch {
		case inRange(i, p.cause.cause) && !inRange(j, pcause.cause),
			inRange(i, p.cause.effect) && !inRange(j, pcause.effect):
			return 1000, "cause and effect differ from the source's"
		}
	}
	return 0, ""
}

// rolesConflict reports whether a noun's role in the claim contradicts
// its role in the source: subject for object, one preposition for
// another, a subject (or a side of a copula) for the object of a
// preposition. Times, labels and possessors move freely; the two sides
// of a copula may trade places; an object may become the object of a
// preposition ("gave her the pendant", "gave the pendant to her").
func rolesConflict(rc, rp string, copC, copP bool) bool {
	if rc == rp || rc == roleNone || rp == roleNone {
		return false
	}
	for _, r := range []string{rc, rp} {
		if r == roleTime || r == roleLabel || r == rolePoss {
			return false
		}
	}
	pc, pp := strings.HasPrefix(rc, "p:"), strings.HasPrefix(rp, "p:")
	switch {
	case pc && pp:
		return prepGroup(rc[2:]) != prepGroup(rp[2:])
	case pc || pp:
		other := rp
		if pp {
			other = rc
		}
		return other == roleSubj || other == roleCop // "Snappy is a replacement for S2"
	case rc == roleCop || rp == roleCop:
		return false
	}
	return !(copC || copP) // subject and object traded places
}

// prepGroups are prepositions that may stand for each other.
var prepGroups = map[string]string{
	"in": "at", "on": "at", "at": "at", "during": "at", "inside": "at", "within": "at",
	"to": "to", "into": "to", "onto": "to", "toward": "to", "towards": "to",
	"about": "about", "regarding": "about", "over": "about",
	"from": "from", "out": "from", "off": "from",
}

func prepGroup(p string) string {
	if g, ok := prepGroups[p]; ok {
		return g
	}
	return p
}

func roleName(r string) string {
	switch r {
	case roleSubj:
		return "the subject"
	case roleObj:
		return "the object"
	}
	if p, ok := strings.CutPrefix(r, "p:"); ok {
		return fmt.Sprintf("%q's object", p)
	}
	return r
}

// negationAgrees checks that the claim denies what the piece's clause
// denies: the same parity of negations in the part and in the clauses its
// words stand in (before the last of them).
func negationAgrees(p claimPart, pc *srcPiece, choice []int) string {
	lastNeed := 0
	for _, i := range p.need {
		lastNeed = max(lastNeed, i)
	}
	neg := 0
	for i, t := range p.a.toks {
		if t.kind == kNeg && i < lastNeed {
			neg++
		}
	}
	// A negation of the piece counts when a word the part stands on comes
	// after it in its clause: "venv activation scripts didn't quote paths"
	// denies nothing of the scripts alone.
	last := map[int]int{}
	for _, j := range choice {
		if j >= 0 {
			last[pc.a.clause[j]] = max(last[pc.a.clause[j]], j+1)
		}
	}
	pneg := 0
	for j, t := range pc.a.toks {
		if t.kind == kNeg && j < last[pc.a.clause[j]] {
			pneg++
		}
	}
	if neg%2 != pneg%2 {
		return "one denies what the other does not"
	}
	return ""
}
