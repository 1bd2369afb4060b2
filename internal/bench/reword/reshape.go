package reword

import (
	"strings"
	"unicode"
)

// frame is a question read as: question phrase, auxiliary, subject,
// main verb (after do, does or did) and the rest.
type frame struct {
	wh   []tok // "What", "What kind of music", "How many turtles"; empty for a yes/no question
	aux  string
	subj []tok
	verb *tok // the main verb after do, does or did
	rest []tok
}

var whWords = set(`what when where who why which how whom whose`)

var doAux = set(`did does do`)

var otherAux = set(`is was are were has have had will would can could should`)

var possessives = set(`'s her his their its my your our`)

// parse reads ts (ending in "?") as a frame.
func (r *Rewriter) parse(ts []tok) (frame, bool) {
	var f frame
	n := len(ts)
	if n < 4 || ts[n-1].text != "?" {
		return f, false
	}
	lower := func(i int) string { return strings.ToLower(ts[i].text) }
	i := 0
	if whWords[lower(0)] {
		i = 1
		for i < n-1 && ts[i].word && !doAux[lower(i)] && !otherAux[lower(i)] && i < 5 {
			if unicode.IsUpper(rune(ts[i].text[0])) {
				return f, false // "What Caroline ..."
			}
			i++
		}
		f.wh = ts[:i]
	}
	if i >= n-2 || !(doAux[lower(i)] || otherAux[lower(i)]) {
		return f, false
	}
	f.aux = lower(i)
	i++
	start := i
	owned := false // a possessive was read: the nouns it owns follow
	for i < n-1 {
		t := ts[i]
		w := strings.ToLower(t.text)
		switch {
		case t.word && unicode.IsUpper(rune(t.text[0])):
		case w == "and" || possessives[w]:
			owned = possessives[w]
		case owned && r.ownedNoun(t, doAux[f.aux]):
		default:
			goto done
		}
		i++
	}
done:
	if doAux[f.aux] && i > start+1 && (i >= n-1 || !ts[i].word) && ts[i-1].word && !unicode.IsUpper(rune(ts[i-1].text[0])) {
		i-- // the verb was read as a noun of the subject: "did Melanie's friend paint?"
	}
	if i == start || i >= n-1 && doAux[f.aux] {
		return f, false
	}
	f.subj = ts[start:i]
	if doAux[f.aux] {
		if !ts[i].word || unicode.IsUpper(rune(ts[i].text[0])) {
			return f, false
		}
		f.verb = &ts[i]
		i++
	}
	f.rest = ts[i : n-1]
	if modal[f.aux] && (len(f.rest) == 0 || !set("be have")[strings.ToLower(f.rest[0].text)] && !r.WordNet.Knows(strings.ToLower(f.rest[0].text), Verb)) {
		return f, false // "What would S's leaning likely be?": the subject's end is unclear
	}
	return f, true
}

var modal = set(`will would can could should`)

// ownedNoun reports whether t can be a noun a possessive owns ("Caroline's
// youth center"): a gerund only before a main verb ("does Caroline's
// drawing symbolize").
func (r *Rewriter) ownedNoun(t tok, beforeVerb bool) bool {
	w := strings.ToLower(t.text)
	if !t.word || function[w] || strings.HasSuffix(w, "ing") && !beforeVerb {
		return false
	}
	if t.sub {
		return t.pos == Noun || t.pos == Adjective
	}
	_, ok := r.WordNet.Lemma(w, Noun)
	return ok || r.WordNet.Knows(w, Adjective)
}

// verbLemma is the frame's main verb's lemma.
func (r *Rewriter) verbLemma(t *tok) (string, bool) {
	if t.sub {
		if t.pos != Verb {
			return "", false
		}
		return t.lemma, true
	}
	return r.WordNet.Lemma(strings.ToLower(t.text), Verb)
}

func words(s string) []tok {
	var out []tok
	for _, w := range strings.Fields(s) {
		out = append(out, tok{text: w, word: true})
	}
	return out
}

func lowerFirst(ts []tok) []tok {
	out := append([]tok(nil), ts...)
	if len(out) > 0 && whWords[strings.ToLower(out[0].text)] || len(out) > 0 && doAux[strings.ToLower(out[0].text)] || len(out) > 0 && otherAux[strings.ToLower(out[0].text)] {
		out[0].text = strings.ToLower(out[0].text)
	}
	return out
}

func upperFirst(ts []tok) []tok {
	out := append([]tok(nil), ts...)
	if len(out) > 0 {
		out[0].text = strings.ToUpper(out[0].text[:1]) + out[0].text[1:]
	}
	return out
}

func join(parts ...[]tok) []tok {
	var out []tok
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

var question = []tok{{text: "?"}}

// passive turns "What did S V ...?" into "What was V-ed by S ...?" when
// V takes an object and nothing stands between it and the rest but a
// preposition or an adverb.
func (r *Rewriter) passive(f frame) ([]tok, bool) {
	if f.verb == nil || f.aux == "do" || len(f.wh) == 0 || !set("what which who")[strings.ToLower(f.wh[0].text)] {
		return nil, false
	}
	lemma, ok := r.verbLemma(f.verb)
	if !ok || !r.WordNet.Transitive(strings.Fields(lemma)[0]) {
		return nil, false
	}
	if len(f.rest) > 0 && !set("in on at during after before since for with from to recently last most while when about")[strings.ToLower(f.rest[0].text)] {
		return nil, false
	}
	be := "was"
	if f.aux == "does" {
		be = "is"
	}
	if last := strings.ToLower(f.wh[len(f.wh)-1].text); len(f.wh) > 1 && strings.HasSuffix(last, "s") {
		if l, ok := r.WordNet.Lemma(last, Noun); ok && l != last {
			be = map[string]string{"was": "were", "is": "are"}[be] // "What games are liked by ..."
		}
	}
	return join(f.wh, words(be+" "+r.WordNet.Inflect(lemma, Verb, Participle)+" by"), f.subj, f.rest, question), true
}

// indirectPrefixes open an indirect question.
var indirectPrefixes = []string{"Can you tell me", "Do you know", "Do you remember", "Could you say"}

// indirect turns "What did S V ...?" into "Can you tell me what S V-ed
// ...?" and "Is S ...?" into "Do you know whether S is ...?".
func (r *Rewriter) indirect(id string, f frame) ([]tok, bool) {
	var verb []tok
	switch {
	case f.verb != nil:
		lemma, ok := r.verbLemma(f.verb)
		if !ok {
			return nil, false
		}
		form := Base
		switch {
		case f.aux == "did":
			form = Past
		case f.aux == "does":
			form = Third
		}
		verb = words(r.WordNet.Inflect(lemma, Verb, form))
	default:
		verb = words(f.aux)
	}
	wh := lowerFirst(f.wh)
	if len(wh) == 0 {
		wh = words("whether")
	}
	prefix := words(indirectPrefixes[pickOf(id, "prefix", len(indirectPrefixes))])
	return join(prefix, wh, f.subj, verb, f.rest, question), true
}

// whSwaps say a question word otherwise.
var whSwaps = [][2]string{
	{"when", "At what point"}, {"where", "In which place"}, {"why", "For what reason"},
	{"how many", "What number of"}, {"who", "Which person"}, {"what kind of", "What sort of"},
	{"what type of", "What sort of"},
}

// swapWh says the question word otherwise.
func swapWh(ts []tok) ([]tok, bool) {
	var head []string
	for i := 0; i < len(ts) && i < 3; i++ {
		head = append(head, strings.ToLower(ts[i].text))
	}
	for _, s := range whSwaps {
		n := len(strings.Fields(s[0]))
		if n <= len(head) && strings.Join(head[:n], " ") == s[0] {
			return join(words(s[1]), ts[n:]), true
		}
	}
	return nil, false
}

var dateWords = set(`january february march april may june july august september october november december
spring summer autumn fall winter the of early late mid middle year week month weekend beginning end`)

var datePreps = set(`on in during around since before after last`)

// front moves a date phrase that ends a question to its front: "What did
// S do on 3 May, 2023?" → "On 3 May, 2023, what did S do?".
func front(ts []tok) ([]tok, bool) {
	n := len(ts)
	if n < 6 || ts[n-1].text != "?" {
		return nil, false
	}
	dated := false
	i := n - 2
	for ; i > 2; i-- {
		w := strings.ToLower(ts[i].text)
		if unicode.IsDigit(rune(w[0])) || w == "," || dateWords[w] {
			dated = dated || unicode.IsDigit(rune(w[0])) || dateWords[w] && !set("the of")[w]
			continue
		}
		break
	}
	if !dated || !datePreps[strings.ToLower(ts[i].text)] || i < 3 {
		return nil, false
	}
	phrase := upperFirst(ts[i : n-1])
	body := lowerFirst(ts[:i])
	return join(phrase, []tok{{text: ","}}, body, question), true
}

// reshape makes one change of form where the question allows it, chosen
// by id among those that apply, after moving a date phrase to the front.
func (r *Rewriter) reshape(id string, ts []tok) ([]tok, string) {
	f, framed := r.parse(ts)
	type option struct {
		name string
		ts   []tok
	}
	var opts []option
	if framed {
		if out, ok := r.passive(f); ok {
			opts = append(opts, option{"passive", out})
		}
		if out, ok := r.indirect(id, f); ok {
			opts = append(opts, option{"indirect", out})
		}
	}
	if out, ok := swapWh(ts); ok {
		opts = append(opts, option{"wh", out})
	}
	if out, ok := front(ts); ok {
		opts = append(opts, option{"front", out})
	}
	if len(opts) == 0 {
		return ts, ""
	}
	o := opts[pickOf(id, "shape", len(opts))]
	return o.ts, o.name
}
