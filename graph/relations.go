package graph

import (
	"cmp"
	"slices"
	"strings"
)

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
	add("depends_on", false, "depends on", "depend on", "depended on", "depending on", "relies on", "rely on", "relied on", "requires", "required", "needs")
	add("uses", false, "uses", "is using", "are using", "use", "used", "using")
	add("depends_on", true, "is required by", "are required by", "required by")
	add("uses", true, "is used by", "are used by", "used by")
	add("calls", false, "calls", "call", "called", "invokes", "invoke", "invoked", "calling")
	add("calls", true, "is called by", "called by", "is invoked by", "invoked by")
	add("connects_to", false, "talks to", "talk to", "connects to", "connect to")
	add("owns", false, "owns", "own", "owned")
	add("owns", true, "is owned by", "are owned by", "owned by")
	add("maintains", false, "maintains", "maintain", "maintained")
	add("maintains", true, "is maintained by", "maintained by")
	add("maintains", false, "is the maintainer of", "was the maintainer of", "are the maintainers of", "is a maintainer of")
	add("leads", false, "leads", "led")
	add("leads", true, "is led by", "led by")
	add("works_on", false, "works on", "worked on", "is working on", "are working on", "working on")
	add("runs_on", false, "runs on", "run on", "ran on", "is deployed on", "is deployed to", "deployed on", "deployed to", "is hosted on", "hosted on", "runs in")
	add("writes_to", false, "writes to", "write to", "wrote to", "writes into", "writes * to", "publishes * to", "publishes to", "publish to", "stores * in", "persists to", "sends * to")
	add("reads_from", false, "reads from", "read from", "consumes from", "consumes", "subscribes to")
	add("replaces", false, "replaces", "replaced", "supersedes", "superseded")
	add("replaces", true, "is replaced by", "was replaced by", "were replaced by", "replaced by", "is replaced with", "are replaced with",
		"was replaced with", "were replaced with", "is superseded by", "was superseded by", "superseded by")
	add("migrated_to", false, "migrated to", "migrates to", "moves to", "moved to", "is moving to")
	add("part_of", false, "is part of", "are part of", "part of", "belongs to", "is a part of", "are a part of")
	add("caused", false, "caused", "causes", "triggered")
	add("caused", true, "was caused by", "is caused by", "caused by")
	add("fixed", false, "fixed", "fixes")
	add("fixed", true, "was fixed by", "is fixed by", "were fixed by", "fixed by")
	add("reviewed", false, "reviewed", "reviews")
	add("created", false, "created", "wrote", "authored", "built", "is the author of", "was the author of", "is the creator of",
		"was the creator of")
	add("created", true, "is created by", "was created by", "created by", "authored by", "was written by", "written by", "developed by", "is developed by")
	add("built_with", false, "is built with", "built with", "is written in", "written in")
	add("built_with", true, "is used to build", "was used to build", "used to build")
	add("monitors", false, "monitors", "scrapes")
	add("integrates_with", false, "integrates with", "integrate with")
	// "replaced X with Y", "migrated from X to Y" and "switch from X to
	// Y": Y replaces X. They
	// come before the plain phrases of their length.
	out = append([]relation{
		{words: []string{"replaced"}, rel: "replaces", swap: true},
		{words: []string{"replace"}, rel: "replaces", swap: true},
		{words: []string{"migrated", "from"}, rel: "replaces", swap: true},
		{words: []string{"moved", "from"}, rel: "replaces", swap: true},
		{words: []string{"migrate", "from"}, rel: "replaces", swap: true},
		{words: []string{"switch", "from"}, rel: "replaces", swap: true},
		{words: []string{"switched", "from"}, rel: "replaces", swap: true},
		{words: []string{"switches", "from"}, rel: "replaces", swap: true},
		{words: []string{"port", "from"}, rel: "replaces", swap: true},
		{words: []string{"ported", "from"}, rel: "replaces", swap: true},
		{words: []string{"move", "from"}, rel: "replaces", swap: true},
		{words: []string{"convert", "from"}, rel: "replaces", swap: true},
		{words: []string{"converted", "from"}, rel: "replaces", swap: true},
		{words: []string{"transition", "from"}, rel: "replaces", swap: true}}, out...)
	// Longest phrases first, so "is owned by" wins over "owned".
	slices.SortStableFunc(out, func(a, b relation) int { return cmp.Compare(len(b.words), len(a.words)) })
	return out
}()

// relationsByFirst indexes the relation phrases by their first word,
// longest first.
var relationsByFirst = func() map[string][]relation {
	m := map[string][]relation{}
	for _, r := range relations {
		m[r.words[0]] = append(m[r.words[0]], r)
	}
	return m
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
	for n, w := range r.words {
		for n > 0 && k < len(toks) && toks[k].word && toks[k].lower != w && isAdverb(toks[k].lower) {
			k++ // "relies heavily on", "is now using"
		}
		if k >= len(toks) || !toks[k].word || toks[k].lower != w {
			return 0, false
		}
		k++
	}
	return k, true
}

// isAdverb reports an adverb that may stand inside a phrase of relation:
// one of the fillers that is no auxiliary (now, also, still), or a word
// ending in -ly.
func isAdverb(lw string) bool {
	return fillers[lw] && !copulas[lw] && !auxiliaries[lw] || len(lw) > 4 && strings.HasSuffix(lw, "ly")
}

// auxiliaries are the fillers that are verbs.
var auxiliaries = set(`has have had will would should must can could may might be been do does did`)

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
