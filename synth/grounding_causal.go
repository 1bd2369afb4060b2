package synth

// Cause and effect: a claim that says one thing happened because of
// another must rest on a piece that says so, the same way round.

// Directions of a causal connective.
const (
	causeAfter  = 1 // "X because Y", "X due to Y", "Because Y, X": the cause follows the connective
	causeBefore = 2 // "X, so Y", "X. This means Y", "X therefore Y": the cause comes first
)

// causalAt returns the direction of the causal connective that starts at
// token i, or 0 when none does.
func causalAt(toks []token, i int) int {
	t := toks[i]
	if !t.isWord() {
		return 0
	}
	next := func(k int) string {
		if i+k < len(toks) {
			return toks[i+k].low
		}
		return ""
	}
	switch t.low {
	case "because":
		return causeAfter
	case "due":
		if next(1) == "to" {
			return causeAfter
		}
	case "since", "as":
		if i > 0 && (toks[i-1].adj || toks[i-1].kind == kContent && !toks[i-1].noun) {
			return 0 // "as passionate as I am": a comparison
		}
		if opensClause(toks, i+1) {
			return causeAfter
		}
	case "so":
		if degree(toks, i+1) {
			return 0 // "so happy", "so many"
		}
		if (i > 0 && toks[i-1].punct == ',') || opensClause(toks, i+1) {
			return causeBefore
		}
	case "therefore", "thus", "hence", "consequently":
		return causeBefore
	case "caused", "causes", "cause":
		if next(1) == "by" {
			return causeAfter // "X was caused by Y"
		}
		if i > 0 && toks[i-1].isWord() && !determiners[toks[i-1].low] && next(1) != "of" {
			return causeBefore // "Y caused X"
		}
	case "leads", "led", "lead", "results", "resulted", "result":
		switch next(1) {
		case "to", "in":
			return causeBefore // "Y leads to X", "Y resulted in X"
		case "from":
			return causeAfter // "X results from Y"
		}
	case "this", "which", "that":
		if next(1) == "means" || (next(1) == "is" && next(2) == "why") {
			return causeBefore
		}
	}
	return 0
}

// degree reports whether the word at i is one "so" makes a degree of
// ("so happy", "so many people").
func degree(toks []token, i int) bool {
	if i >= len(toks) || !toks[i].isWord() {
		return false
	}
	t := toks[i]
	return t.adj || t.low == "many" || t.low == "much" || t.low == "few" || t.low == "far" || t.low == "long" ||
		(t.kind == kFn && lightWords[t.low])
}

// opensClause reports whether a clause starts at i: a subject (a pronoun,
// a name, or a noun phrase of a few words, "lots of homes" included)
// followed by its verb.
func opensClause(toks []token, i int) bool {
	if i >= len(toks) || !toks[i].isWord() {
		return false
	}
	t := toks[i]
	if t.low == "a" || t.low == "an" {
		return false // "as a kid"
	}
	if !(subjectPron[t.low] || t.noun || determiners[t.low] || t.low == "lots" || t.low == "lot") {
		return false
	}
	for j := i + 1; j < len(toks) && j <= i+4; j++ {
		u := toks[j]
		if finite(toks, j) {
			return true
		}
		if !u.isWord() || relatives[u.low] || coordinators[u.low] {
			return false
		}
		if !(u.noun || u.adj || determiners[u.low] || u.low == "of" || u.kind == kFn && lightWords[u.low] || u.kind == kNeg) {
			return false
		}
	}
	return false
}

// causal is where a text says what caused what: the token ranges of the
// cause and the effect ([from, to)).
type causal struct {
	cause, effect [2]int
}

// findCausal finds the first causal connective of toks[from:to] and the
// ranges it joins, or reports false.
func findCausal(toks []token, from, to int) (causal, bool) {
	for k := from; k < to; k++ {
		dir := causalAt(toks, k)
		if dir == 0 {
			continue
		}
		width := causalWidth(toks, k)
		// Cause and effect stand in the connective's sentence.
		for j := k - 1; j >= from; j-- {
			if p := toks[j].punct; p == '.' || p == '!' || p == '?' {
				from = j + 1
				break
			}
		}
		for j := k + 1; j < to; j++ {
			if p := toks[j].punct; p == '.' || p == '!' || p == '?' {
				to = j
				break
			}
		}
		if dir == causeAfter && atStart(toks, from, k) {
			// "Because Y, X": the cause runs to the comma.
			comma := k + width
			for comma < to && toks[comma].punct != ',' {
				comma++
			}
			if comma >= to {
				return causal{}, false
			}
			return causal{cause: [2]int{k + width, comma}, effect: [2]int{comma + 1, to}}, true
		}
		before, after := [2]int{from, k}, [2]int{k + width, to}
		if dir == causeAfter {
			return causal{cause: after, effect: before}, true
		}
		return causal{cause: before, effect: after}, true
	}
	return causal{}, false
}

// causalWidth is how many words the causal connective at k takes: "due
// to", "this means", "caused by", "leads to" two, the others one.
func causalWidth(toks []token, k int) int {
	switch toks[k].low {
	case "due", "this", "which", "that", "leads", "led", "lead", "results", "resulted", "result":
		return 2
	case "caused", "causes", "cause":
		if k+1 < len(toks) && toks[k+1].low == "by" {
			return 2
		}
	}
	return 1
}

// atStart reports whether k is the first word of toks[from:].
func atStart(toks []token, from, k int) bool {
	for j := from; j < k; j++ {
		if toks[j].isWord() {
			return false
		}
	}
	return true
}

func inRange(i int, r [2]int) bool { return i >= r[0] && i < r[1] }
