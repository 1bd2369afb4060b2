package synth

import (
	"cmp"
	"context"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cairnhq/cairn/content"
	"github.com/cairnhq/cairn/lexical"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/synth/lexicon"
)

// ExtractiveName is the extractive synthesiser's Name.
const ExtractiveName = "extractive"

// DefaultMaxChars is the extractive answer's length target.
const DefaultMaxChars = 600

// Extractive answers with the sources' own sentences: offline,
// deterministic, every sentence cited. Each sentence of each source is
// scored
//
//	score = 0.6·overlap + 0.3·similarity + 0.1·lead
//
// where overlap is the share of the question's terms (lexical.QueryTerms:
// stemmed, stopwords dropped) the sentence holds, similarity its source's
// (its Relevance) and lead 1 for a source's first sentence. The best sentences are taken
// in order of score (ties: the better source, then the earlier sentence),
// leaving out those that share no term with the question (when none
// does, the opening sentences of the three best sources answer) and lists
// of sources ("Sources: ..."), and skipping a near-duplicate of one taken:
// the same normalised text, or half or more of the same new words (the
// Jaccard overlap of their terms the question does not hold; of all their
// terms, 60% or more, when the question holds every one), while the
// answer stays within
// MaxChars; the first is always taken (cut at MaxChars when longer). The
// answer reads them in source order, then text order, each ending with a
// full stop (added when the source has none; the citation spans the
// source's own text). A sentence that other sources hold too, the same
// once normalised (a saved summary and the thought it quotes), cites
// them as well, after its own source.
type Extractive struct {
	// MaxChars is the answer's length target in characters. Default
	// DefaultMaxChars (600).
	MaxChars int
	// MinSources, when above 1, makes the answer rest on that many
	// sources when that many have a sentence sharing a term with the
	// question: the best such sentence of each source not yet cited is
	// added, in score order, in place of the lowest-scoring sentences of
	// sources cited more than once when the answer would pass MaxChars.
	// The grounding verifier refuses an answer resting on fewer sources
	// than it requires; this keeps a verbatim answer from failing it when
	// the sources could have met it.
	MinSources int
}

var _ Synthesizer = Extractive{}

// piece is a candidate sentence: its source, position and span.
type piece struct {
	src, pos   int
	start, end int // characters in the source's Text
	text       string
	terms      map[string]bool
	novel      map[string]bool // terms the question does not hold
	hash       string
	score      float64
	relevant   bool
	// also are the other sources' copies of the sentence, word for word
	// once normalised: the sentence cites them too.
	also []piece
	cut  bool // cut at MaxChars: it cites only its own source
}

// Synthesize implements Synthesizer.
func (x Extractive) Synthesize(ctx context.Context, question string, sources []Source) (Answer, error) {
	ans := Answer{Name: ExtractiveName, Sentences: []Sentence{}}
	if err := ctx.Err(); err != nil {
		return ans, memory.Wrap(memory.CodeInternal, err, "synthesis stopped")
	}
	max := x.MaxChars
	if max <= 0 {
		max = DefaultMaxChars
	}
	pieces := candidates(question, sources)
	slices.SortStableFunc(pieces, func(a, b piece) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := cmp.Compare(a.src, b.src); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	// Sentences that share no term with the question are left out; when
	// none shares one, the opening sentences of the three best sources
	// answer.
	if slices.ContainsFunc(pieces, func(p piece) bool { return p.relevant }) {
		pieces = slices.DeleteFunc(pieces, func(p piece) bool { return !p.relevant })
	} else {
		pieces = slices.DeleteFunc(pieces, func(p piece) bool { return p.pos != 0 || p.src >= 3 })
	}
	var taken []piece
	used := 0
	for _, p := range pieces {
		if slices.ContainsFunc(taken, func(t piece) bool { return t.hash == p.hash || redundant(t, p) }) {
			continue
		}
		n := p.cost()
		if len(taken) == 0 && n-1 > max { // longer than the answer may be, stop included
			p.end = p.start + cutAt(p.text, max-1)
			p.text = runeSlice(sources[p.src].Text, p.start, p.end)
			n = p.cost()
			p.cut = true
		}
		if used+n > max && len(taken) > 0 {
			continue
		}
		taken = append(taken, p)
		used += n
	}
	withCopies(taken, pieces)
	if x.MinSources > 1 {
		taken = x.diversify(taken, pieces, max)
	}
	slices.SortFunc(taken, func(a, b piece) int {
		if c := cmp.Compare(a.src, b.src); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	texts := make([]string, len(taken))
	for i, p := range taken {
		t := p.text
		if !stopped(t) {
			t += "."
		}
		texts[i] = t
		spans := []Span{{SourceID: sources[p.src].ID, Start: p.start, End: p.end}}
		for _, c := range p.also {
			spans = append(spans, Span{SourceID: sources[c.src].ID, Start: c.start, End: c.end})
		}
		ans.Sentences = append(ans.Sentences, Sentence{Text: t, Spans: spans})
	}
	ans.Text = strings.Join(texts, " ")
	return ans, nil
}

// candidates are the sources' sentences that may answer the question,
// each scored: 0.6·overlap + 0.3·similarity + 0.1·lead.
func candidates(question string, sources []Source) []piece {
	lex, err := lexicon.Load()
	if err != nil {
		lex = nil
	}
	q := map[string]bool{}
	for _, t := range lexical.QueryTerms(question) {
		q[t] = true
	}
	var pieces []piece
	for si, s := range sources {
		for pos, sp := range Sentences(s.Text) {
			p := piece{src: si, pos: pos, start: sp[0], end: sp[1], text: runeSlice(s.Text, sp[0], sp[1]), terms: map[string]bool{}, novel: map[string]bool{}}
			shared := 0
			for _, t := range lexical.Terms(p.text) {
				if !p.terms[t] && q[t] {
					shared++
				}
				p.terms[t] = true
				if !q[t] {
					p.novel[t] = true
				}
			}
			if len(p.terms) == 0 || sourcesLabelRE.MatchString(p.text) || !makesClaim(stripMarkers(p.text), lex) {
				continue // nothing but punctuation or markup, a list of sources, a question or a greeting: no answer
			}
			overlap := 0.0
			if len(q) > 0 {
				overlap = float64(shared) / float64(len(q))
			}
			lead := 0.0
			if pos == 0 {
				lead = 1
			}
			p.score = 0.6*overlap + 0.3*s.Relevance + 0.1*lead
			p.hash = content.Hash(p.text)
			p.relevant = shared > 0
			pieces = append(pieces, p)
		}
	}
	return pieces
}

// diversify adds to taken, in score order, the best relevant sentence of
// each source not yet cited until MinSources sources are, dropping the
// lowest-scoring sentences of sources cited more than once while the
// answer passes max characters. Pieces are in score order.
func (x Extractive) diversify(taken, pieces []piece, max int) []piece {
	count := func(ps []piece) (map[int]int, int) {
		per, chars := map[int]int{}, 0
		for _, p := range ps {
			per[p.src]++
			chars += p.cost()
		}
		return per, chars
	}
	// cited are the sources the sentences cite, their copies' included.
	cited := func(ps []piece) map[int]bool {
		out := map[int]bool{}
		for _, p := range ps {
			out[p.src] = true
			for _, c := range p.also {
				out[c.src] = true
			}
		}
		return out
	}
	for _, p := range pieces {
		srcs := cited(taken)
		if len(srcs) >= x.MinSources {
			break
		}
		if !p.relevant || srcs[p.src] || slices.ContainsFunc(taken, func(t piece) bool { return t.hash == p.hash || redundant(t, p) }) {
			continue
		}
		n := p.cost()
		if n > max/2 {
			continue // it would crowd out the rest of the answer
		}
		// Make room: drop the lowest-scoring sentences of sources that keep
		// another sentence.
		keep := slices.Clone(taken)
		per, room := count(keep)
		for i := len(keep) - 1; i >= 0 && room+n > max; i-- {
			if per[keep[i].src] > 1 {
				per[keep[i].src]--
				room -= keep[i].cost()
				keep = slices.Delete(keep, i, i+1)
			}
		}
		if room+n <= max {
			taken = append(keep, p)
			withCopies(taken[len(taken)-1:], pieces)
		}
	}
	return taken
}

// withCopies sets each taken sentence's copies: the first sentence of
// every other source that is the same once normalised, in source order.
// A sentence cut at MaxChars keeps its own citation only.
func withCopies(taken, pieces []piece) {
	for i := range taken {
		p := &taken[i]
		p.also = nil
		if p.cut {
			continue
		}
		for _, c := range pieces {
			if c.hash == p.hash && c.src != p.src && !slices.ContainsFunc(p.also, func(a piece) bool { return a.src == c.src }) {
				p.also = append(p.also, c)
			}
		}
		slices.SortFunc(p.also, func(a, b piece) int { return cmp.Compare(a.src, b.src) })
	}
}

// cost is how many characters the sentence adds to an answer: its own,
// the full stop added when it has none, and the space before the next.
func (p piece) cost() int {
	n := utf8.RuneCountInString(p.text) + 1
	if !stopped(p.text) {
		n++
	}
	return n
}

// stopped reports whether a sentence ends with its own stop.
func stopped(s string) bool {
	return strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?")
}

// cutAt returns how many characters of s to keep to stay within max:
// up to the last space before max (trailing spaces dropped), or max when
// there is none in its second half.
func cutAt(s string, max int) int {
	rs := []rune(s)
	if len(rs) <= max {
		return len(rs)
	}
	for i := max; i > max/2; i-- {
		if unicode.IsSpace(rs[i]) {
			for i > 0 && unicode.IsSpace(rs[i-1]) {
				i--
			}
			return i
		}
	}
	return max
}

// redundant reports whether p adds nothing to t: half or more of the
// same words beyond the question's or, when neither has any, 60% or more
// of the same words.
func redundant(t, p piece) bool {
	if len(t.novel) == 0 && len(p.novel) == 0 {
		return jaccard(t.terms, p.terms) >= 0.6
	}
	return jaccard(t.novel, p.novel) >= 0.5
}

func jaccard(a, b map[string]bool) float64 {
	inter := 0
	for t := range a {
		if b[t] {
			inter++
		}
	}
	union := len(a) + len(b) - inter
	if union == 0 {
		return 1
	}
	return float64(inter) / float64(union)
}

// runeSlice returns s's characters [start, end).
func runeSlice(s string, start, end int) string {
	rs := []rune(s)
	return string(rs[start:end])
}

var (
	// markup opens a line: a heading, a list bullet, a number, a quote,
	// or a label such as "Sources:".
	markupRE = regexp.MustCompile(`^(?:\s*(?:#{1,6}|[-*+•]|\d+[.)]|>)\s+)+`)
	// sourcesLabelRE opens a list of sources, which is no answer.
	sourcesLabelRE = regexp.MustCompile(`(?i)^(?:sources?|references?|refs|see also|links?)\s*:`)
)

// Sentences splits text into sentences and returns their spans in
// characters: line by line, after a line's markup (heading marks, list
// bullets, numbers, quotes), at ".", "!" or "?" followed by a space, with
// surrounding spaces trimmed. Empty sentences are left out.
func Sentences(text string) [][2]int {
	var out [][2]int
	rs := []rune(text)
	lineStart := 0
	for lineStart <= len(rs) {
		lineEnd := lineStart
		for lineEnd < len(rs) && rs[lineEnd] != '\n' {
			lineEnd++
		}
		line := string(rs[lineStart:lineEnd])
		skip := utf8.RuneCountInString(markupRE.FindString(line))
		start := lineStart + skip
		for i := start; i <= lineEnd; i++ {
			end := i == lineEnd
			if !end && (rs[i] == '.' || rs[i] == '!' || rs[i] == '?') && (i+1 == lineEnd || unicode.IsSpace(rs[i+1])) {
				i++ // keep the stop
				end = true
			}
			if end {
				s, e := start, i
				for s < e && unicode.IsSpace(rs[s]) {
					s++
				}
				for e > s && unicode.IsSpace(rs[e-1]) {
					e--
				}
				if e > s {
					out = append(out, [2]int{s, e})
				}
				start = i
			}
		}
		lineStart = lineEnd + 1
	}
	return out
}
