package lexicon

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

//go:embed wordnet.txt.gz
var data []byte

// Parts of speech, as indexes into Counts.
const (
	Noun = iota
	Verb
	Adj
	Adv
)

// Counts says how often a lemma was tagged as each part of speech in
// WordNet's semantic concordance, plus one for each part of speech it has;
// 0 means it has none.
type Counts [4]int

// Has reports whether the lemma has part of speech p.
func (c Counts) Has(p int) bool { return c[p] > 0 }

// Lexicon is the loaded word knowledge. It is read-only and safe for
// concurrent use.
type Lexicon struct {
	counts map[string]Counts
	// senses are each lemma's senses: the synset (index into synsets),
	// its part of speech and the sense's rank among the lemma's senses
	// of that part of speech (1 = most frequent).
	senses map[string][]sense
	nsyn   int
	ants   map[[2]string]bool
	exc    map[string][]string
	// verbExc are the irregular forms of verbs ("went", "taken").
	verbExc map[string]bool
}

type sense struct {
	synset int
	pos    int8
	rank   int16
}

var load = sync.OnceValues(func() (*Lexicon, error) { return parse(data) })

// Load returns the lexicon, reading the embedded data on the first call.
func Load() (*Lexicon, error) { return load() }

func parse(b []byte) (*Lexicon, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("reading the lexicon: %w", err)
	}
	l := &Lexicon{counts: map[string]Counts{}, senses: map[string][]sense{}, ants: map[[2]string]bool{}, exc: map[string][]string{},
		verbExc: map[string]bool{}}
	sc := bufio.NewScanner(zr)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] == "#" {
			continue
		}
		if err := l.record(f); err != nil {
			return nil, fmt.Errorf("reading the lexicon: line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the lexicon: %w", err)
	}
	return l, nil
}

func (l *Lexicon) record(f []string) error {
	switch {
	case f[0] == "p" && len(f) == 6:
		var c Counts
		for i := range c {
			n, err := strconv.Atoi(f[2+i])
			if err != nil {
				return err
			}
			c[i] = n
		}
		l.counts[f[1]] = c
	case f[0] == "s" && len(f) >= 4:
		pos := strings.Index("nvar", f[1])
		if pos < 0 {
			return fmt.Errorf("part of speech %q", f[1])
		}
		for _, m := range f[2:] {
			w, r, ok := strings.Cut(m, ":")
			rank, err := strconv.Atoi(r)
			if !ok || err != nil {
				return fmt.Errorf("synset member %q", m)
			}
			l.senses[w] = append(l.senses[w], sense{synset: l.nsyn, pos: int8(pos), rank: int16(rank)})
		}
		l.nsyn++
	case f[0] == "a" && len(f) == 3:
		l.ants[[2]string{f[1], f[2]}] = true
		l.ants[[2]string{f[2], f[1]}] = true
	case f[0] == "x" && len(f) == 4:
		l.exc[f[2]] = append(l.exc[f[2]], f[3])
		if f[1] == "v" {
			l.verbExc[f[2]] = true
		}
	default:
		return fmt.Errorf("record %q", strings.Join(f, " "))
	}
	return nil
}

// Counts returns how often lemma was tagged as each part of speech (all 0
// for a word WordNet does not hold).
func (l *Lexicon) Counts(lemma string) Counts { return l.counts[lemma] }

// Known reports whether word, or a base form of it, is a WordNet lemma.
func (l *Lexicon) Known(word string) bool { return len(l.Lemmas(word)) > 0 }

// suffixes are WordNet's detachment rules ("morphy"): an inflected ending
// and what replaces it, per part of speech.
var suffixes = [4][][2]string{
	Noun: {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	Verb: {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	Adj:  {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
}

// Lemmas returns the WordNet lemmas word may be a form of (lower-cased):
// itself when WordNet holds it, its irregular base forms ("went": "go"),
// and the forms WordNet's detachment rules give ("tried": "try"),
// without duplicates, in that order.
func (l *Lexicon) Lemmas(word string) []string {
	var out []string
	for _, a := range l.Analyses(word) {
		if !slices.Contains(out, a.Lemma) {
			out = append(out, a.Lemma)
		}
	}
	return out
}

// Analysis is one reading of a word: a lemma, and the part of speech the
// reading makes it (-1: any the lemma has, for the word itself and its
// irregular forms).
type Analysis struct {
	Lemma string
	POS   int
}

// Analyses returns the readings of word: itself, its irregular base
// forms, and what each part of speech's detachment rules give ("tried" is
// the verb "try"; "formatter" is not the adjective "format"'s comparative
// unless WordNet has "format" as an adjective).
func (l *Lexicon) Analyses(word string) []Analysis {
	w := strings.ToLower(word)
	var out []Analysis
	add := func(s string, pos int) {
		c, ok := l.counts[s]
		if !ok || s == "" || (pos >= 0 && !c.Has(pos)) {
			return
		}
		for _, o := range out {
			if o.Lemma == s && (o.POS == pos || o.POS < 0) {
				return
			}
		}
		out = append(out, Analysis{Lemma: s, POS: pos})
	}
	add(w, -1)
	for _, b := range l.exc[w] {
		add(b, -1)
	}
	for pos, rules := range suffixes {
		for _, r := range rules {
			if strings.HasSuffix(w, r[0]) && len(w) > len(r[0])+1 {
				add(w[:len(w)-len(r[0])]+r[1], pos)
			}
		}
	}
	// A doubled consonant before -ed, -ing, -er ("stopped", "bigger").
	for _, end := range []struct {
		s   string
		pos int
	}{{"ed", Verb}, {"ing", Verb}, {"er", Adj}, {"est", Adj}} {
		if s, ok := strings.CutSuffix(w, end.s); ok && len(s) > 2 && s[len(s)-1] == s[len(s)-2] {
			add(s[:len(s)-1], end.pos)
		}
	}
	return out
}

// Tags is how often word was seen as each part of speech: the counts of
// the word itself and of its irregular base forms, and of each lemma a
// detachment rule gives, for that rule's part of speech only.
func (l *Lexicon) Tags(word string) Counts {
	var c Counts
	for _, a := range l.Analyses(word) {
		lc := l.counts[a.Lemma]
		for p, n := range lc {
			if a.POS < 0 || a.POS == p {
				c[p] += n
			}
		}
	}
	return c
}

// VerbForm reports whether word is an inflected form of a verb WordNet
// holds: an irregular one ("went", "broke") or one of the regular endings
// -s, -es, -ed, -ing ("removes", "tried").
func (l *Lexicon) VerbForm(word string) bool {
	w := strings.ToLower(word)
	if l.verbExc[w] {
		return true
	}
	for _, r := range suffixes[Verb] {
		if strings.HasSuffix(w, r[0]) && len(w) > len(r[0])+1 {
			if b := w[:len(w)-len(r[0])] + r[1]; l.counts[b].Has(Verb) && b != w {
				return true
			}
		}
	}
	return false
}

// Synonyms reports whether two words share a sense among the maxRank most
// frequent senses of each (of any part of speech), comparing every lemma
// of each. A word is its own synonym.
func (l *Lexicon) Synonyms(a, b string, maxRank int) bool {
	la, lb := l.Lemmas(a), l.Lemmas(b)
	for _, x := range la {
		for _, y := range lb {
			if x == y {
				return true
			}
			for _, s := range l.senses[x] {
				if int(s.rank) > maxRank {
					continue
				}
				for _, t := range l.senses[y] {
					if t.synset == s.synset && int(t.rank) <= maxRank {
						return true
					}
				}
			}
		}
	}
	return false
}

// Antonyms reports whether a and b are opposites: a lemma of each is
// WordNet's antonym of the other ("succeed" and "fail", "public" and
// "private"), counting an adverb as its adjective ("positively"), or one
// is the other with a negative prefix ("unverified", "disallow",
// "improperly", "invalid").
func (l *Lexicon) Antonyms(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	for _, x := range l.antonymForms(a) {
		for _, y := range l.antonymForms(b) {
			if l.ants[[2]string{x, y}] {
				return true
			}
		}
	}
	return l.negativePrefix(a, b) || l.negativePrefix(b, a)
}

// antonymForms are a word's lemmas and, for an adverb in -ly, its
// adjective's.
func (l *Lexicon) antonymForms(w string) []string {
	out := l.Lemmas(w)
	if s, ok := strings.CutSuffix(w, "ly"); ok && len(s) > 2 {
		out = append(out, l.Lemmas(s)...)
		if strings.HasSuffix(s, "i") {
			out = append(out, l.Lemmas(s[:len(s)-1]+"y")...)
		}
	}
	return out
}

// negativePrefixes turn a word into its opposite.
var negativePrefixes = []string{"un", "in", "im", "il", "ir", "dis", "non-", "non"}

// negativePrefix reports whether neg is pos with a negative prefix
// ("unset" and "set", "unrewarding" and "rewarding"): pos of four letters
// or more (or the prefix "un"), and neg no word of its own in WordNet but
// an adjective or adverb ("discover" is not the opposite of "cover").
func (l *Lexicon) negativePrefix(neg, pos string) bool {
	for _, p := range negativePrefixes {
		rest, ok := strings.CutPrefix(neg, p)
		if !ok || rest != pos || (len(pos) < 4 && p != "un") {
			continue
		}
		c := l.Tags(neg)
		if c == (Counts{}) || c.Has(Adj) || c.Has(Adv) {
			return true
		}
	}
	return false
}
