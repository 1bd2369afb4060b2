package reword

import (
	"hash/fnv"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/cairnhq/cairn/lexical"
)

// Rewriter rewords English questions by rules: every content word that
// has a common synonym in its most frequent WordNet sense is replaced by
// it (inflected as the word was), then one change of form is made where
// the question allows it: a date phrase moved to the front, the active
// voice made passive, the question made indirect ("Can you tell me what
// ..."), or the question word said otherwise ("At what point" for
// "When"). Names and function words are kept.
type Rewriter struct {
	WordNet *WordNet
	// Rank is a word's frequency rank in English (0 the most frequent),
	// false when it is rare or unknown: only common words are used as
	// synonyms.
	Rank func(word string) (int, bool)
	// MaxRank is the rarest rank a synonym may have (default 30,000).
	MaxRank int
}

// Result is one reworded question and the rules that made it.
type Result struct {
	Text string
	// Rules name what was applied, in order: "synonym:old>new",
	// "front", "passive", "indirect", "wh".
	Rules []string
	// Substituted counts the words replaced by a synonym.
	Substituted int
}

// tok is a token of a question.
type tok struct {
	text string
	// word says the token is a word (letters and digits), not
	// punctuation or a clitic.
	word bool
	// lemma, pos and form are set when a rule has read the word.
	lemma string
	pos   POS
	form  Form
	// sub says the word replaced another.
	sub bool
	// quoted says the word stands inside quotes (a title: kept); open
	// that the token is an opening quote.
	quoted, open bool
}

var tokenRe = regexp.MustCompile(`[A-Za-z0-9]+(?:[-/][A-Za-z0-9]+)*(?:'(?:t|re|ve|ll|d|m))?|'s|[^\sA-Za-z0-9]`)

// tokenize splits a question into words, clitics and punctuation, and
// marks the words inside quotes (titles) as quoted.
func tokenize(q string) []tok {
	var out []tok
	quoted := false
	for _, m := range tokenRe.FindAllString(strings.ReplaceAll(q, "’", "'"), -1) {
		r := rune(m[0])
		if m == "\"" {
			quoted = !quoted
			out = append(out, tok{text: m, open: quoted})
			continue
		}
		out = append(out, tok{text: m, word: unicode.IsLetter(r) || unicode.IsDigit(r), quoted: quoted})
	}
	return out
}

// render joins tokens, with no space before punctuation and clitics nor
// inside quotes.
func render(ts []tok) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 && (t.word || t.text == "(" || t.open) && !ts[i-1].open && ts[i-1].text != "(" {
			b.WriteByte(' ')
		}
		text := t.text
		if lw := strings.ToLower(text); (lw == "a" || lw == "an") && i+1 < len(ts) && ts[i+1].word {
			// The article agrees with the word after it.
			an := vowel(strings.ToLower(ts[i+1].text)[0])
			switch {
			case an && lw == "a":
				text += "n"
			case !an && lw == "an":
				text = text[:1]
			}
		}
		b.WriteString(text)
	}
	return b.String()
}

// function words are never replaced.
var function = set(`a an the and or but if of to in on at by for with from about into over under after before during since until
while as than then so too very also just only even still ever never not no nor
i me my mine you your yours he him his she her hers it its we us our they them their theirs who whom whose which what when where why how
this that these those there here some any each every all both either neither few many much more most other another such own same
do does did done doing is are was were be been being am has have had having will would shall should can could may might must
get got gets getting make made let lets go goes went gone going say said says
kind kinds type types sort sorts name names thing things way ways time times lot lots something anything someone anyone
one ones two first last next new old like likes liked according used regarding instead mean means meant really recently often usually likely probably
yes ok okay up down out off again back well`)

// keepNouns are words of a question's frame kept as they are.
var months = set(`january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday today yesterday tomorrow week weeks month months year years day days weekend`)

func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// adverbs are skipped when the word before a word is read.
var adverbs = set(`still also never really just ever likely probably recently often usually always even already not`)

// perfect reports whether a form in -ed at ts[i] follows has, have, had
// or a form of be within four words: a participle.
func perfect(ts []tok, i int) bool {
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		switch strings.ToLower(ts[j].text) {
		case "has", "have", "had", "been", "is", "was", "were", "are", "be", "being":
			return true
		}
	}
	return false
}

// noun determiners: a word after one of these is read as a noun (or an
// adjective before a noun).
var determiners = set(`a an the his her their my your its our some any this that these those what which 's each every another`)

// verb cues: a word after one of these is read as a verb.
var verbCues = set(`did does do to can could will would should might may must didn't doesn't don't`)

// Reword rewords question q. id picks among the changes of form that
// apply, so the same id and question always give the same result. ok is
// false when no word could be replaced.
func (r *Rewriter) Reword(id, q string) (Result, bool) {
	ts := tokenize(q)
	var res Result
	for i := range ts {
		if rule, ok := r.substitute(ts, i); ok {
			res.Rules = append(res.Rules, rule)
			res.Substituted++
		}
	}
	if res.Substituted == 0 {
		return res, false
	}
	var rule string
	ts, rule = r.reshape(id, ts)
	if rule != "" {
		res.Rules = append(res.Rules, rule)
	}
	res.Text = render(ts)
	return res, true
}

// guessPOS reads the part of speech of word ts[i] from its neighbours,
// else takes the one WordNet saw most often.
func (r *Rewriter) guessPOS(ts []tok, i int) (POS, string, bool) {
	w := strings.ToLower(ts[i].text)
	prev, j0 := "", -1
	for j := i - 1; j >= 0; j-- {
		prev, j0 = strings.ToLower(ts[j].text), j
		if !adverbs[prev] && !(strings.HasSuffix(prev, "ly") && r.WordNet.Knows(prev, Adverb)) {
			break
		}
	}
	try := func(pos POS) (POS, string, bool) {
		l, ok := r.WordNet.Lemma(w, pos)
		return pos, l, ok
	}
	subject := prev == "i" || prev == "he" || prev == "she" || prev == "they" || prev == "we" || prev == "you" ||
		j0 > 0 && unicode.IsUpper(rune(ts[j0].text[0])) && strings.ToUpper(ts[j0].text) != ts[j0].text
	switch {
	case verbCues[prev] || subject && r.WordNet.Knows(w, Verb) || subject && func() bool { _, ok := r.WordNet.Lemma(w, Verb); return ok }():
		return try(Verb)
	case determiners[prev]:
		// An adjective before a noun, else a noun.
		if i+1 < len(ts) && ts[i+1].word {
			next := strings.ToLower(ts[i+1].text)
			if _, ok := r.WordNet.Lemma(next, Noun); ok && !function[next] && r.WordNet.Knows(w, Adjective) {
				return try(Adjective)
			}
		}
		return try(Noun)
	case strings.HasSuffix(w, "ly") && r.WordNet.Knows(w, Adverb):
		return try(Adverb)
	case strings.HasSuffix(w, "ing") && (prev == "is" || prev == "are" || prev == "was" || prev == "were" || prev == "been"):
		return try(Verb)
	}
	// Otherwise the reading WordNet saw most often, a verb only when the
	// word is nothing else: a verb is read from its cues.
	best, bestLemma, bestN, found := POS(0), "", -1, false
	for _, pos := range []POS{Noun, Adjective, Adverb} {
		if l, ok := r.WordNet.Lemma(w, pos); ok {
			if n := r.WordNet.Tagged(l, pos); n > bestN {
				best, bestLemma, bestN, found = pos, l, n, true
			}
		}
	}
	if found {
		return best, bestLemma, found
	}
	for _, pos := range []POS{Verb} {
		if l, ok := r.WordNet.Lemma(w, pos); ok {
			if n := r.WordNet.Tagged(l, pos); n > bestN {
				best, bestLemma, bestN, found = pos, l, n, true
			}
		}
	}
	return best, bestLemma, found
}

// substitute replaces word ts[i] by its most common synonym, inflected
// as it was, and names the change.
func (r *Rewriter) substitute(ts []tok, i int) (string, bool) {
	t := &ts[i]
	w := strings.ToLower(t.text)
	if !t.word || t.quoted || function[w] || months[w] || len(w) < 3 || strings.ContainsAny(w, "0123456789'-/") {
		return "", false
	}
	if unicode.IsUpper(rune(t.text[0])) && i > 0 {
		return "", false // a name
	}
	if i+1 < len(ts) && ts[i+1].text == "'s" {
		return "", false // a possessor: a name or a role
	}
	pos, lemma, ok := r.guessPOS(ts, i)
	if !ok || function[lemma] {
		return "", false
	}
	form := Base
	switch pos {
	case Verb:
		form = verbFormOf(w, lemma)
		if form == Past && perfect(ts, i) {
			form = Participle
		}
	case Noun:
		if w != lemma {
			form = Third
		}
	case Adjective:
		if w != lemma {
			return "", false // comparatives stay
		}
	}
	syn, ok := r.pick(lemma, pos)
	if !ok {
		return "", false
	}
	out := r.WordNet.Inflect(syn, pos, form)
	if unicode.IsUpper(rune(t.text[0])) {
		out = strings.ToUpper(out[:1]) + out[1:]
	}
	*t = tok{text: out, word: true, lemma: syn, pos: pos, form: form, sub: true}
	return "synonym:" + w + ">" + out, true
}

// pick chooses the most common word of lemma's first sense that is not a
// form or a spelling of lemma.
func (r *Rewriter) pick(lemma string, pos POS) (string, bool) {
	maxRank := r.MaxRank
	if maxRank == 0 {
		maxRank = 30_000
	}
	if !r.WordNet.Dominant(lemma, pos) {
		return "", false // an ambiguous word: its first sense may not be the one meant
	}
	stems := lexical.Analyze(strings.Fields(lemma))
	best, bestRank := "", 0
	syns, offset := r.WordNet.Synonyms(lemma, pos)
	for _, s := range syns {
		if strings.ToLower(s) != s || strings.ContainsAny(s, "-.'0123456789") || similar(s, lemma) {
			continue
		}
		if !r.WordNet.FirstSense(s, pos, offset) {
			continue // a reader would take it in another sense
		}
		words := strings.Fields(s)
		if len(words) > 2 {
			continue
		}
		rank, known := 0, true
		for _, w := range words {
			k, ok := r.Rank(w)
			if !ok || function[w] && len(words) == 1 {
				known = false
				break
			}
			rank = max(rank, k)
		}
		if !known || rank > maxRank {
			continue
		}
		shared := false
		for _, st := range lexical.Analyze(words) {
			if slices.Contains(stems, st) {
				shared = true
			}
		}
		if shared {
			continue
		}
		rank += 5000 * (len(words) - 1) // one word reads better than two
		if best == "" || rank < bestRank {
			best, bestRank = s, rank
		}
	}
	return best, best != ""
}

// similar reports whether a and b are spellings of one word (favorite,
// favourite): they share their first three letters and differ by at most
// two edits.
func similar(a, b string) bool {
	if len(a) < 3 || len(b) < 3 || a[:3] != b[:3] {
		return false
	}
	return editDistance(a, b) <= 2
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// pickOf chooses among n options by a hash of id and salt.
func pickOf(id, salt string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(id + "\x00" + salt))
	return int(h.Sum32() % uint32(n))
}
