package reword

import (
	"bufio"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// POS is a WordNet part of speech.
type POS byte

// The parts of speech WordNet knows.
const (
	Noun      POS = 'n'
	Verb      POS = 'v'
	Adjective POS = 'a'
	Adverb    POS = 'r'
)

var posFiles = map[POS]string{Noun: "noun", Verb: "verb", Adjective: "adj", Adverb: "adv"}

// WordNet is the part of Princeton WordNet 3.0 the rules read: each
// lemma's senses in order of frequency, each sense's words, and which
// verb senses take an object. Load reads it from the database files
// (index.*, data.*, *.exc) as Debian's wordnet-base installs them in
// /usr/share/wordnet.
type WordNet struct {
	index map[POS]map[string]entry
	// synsets maps a part of speech and a synset offset to its words.
	synsets map[POS]map[int64]synset
	// exc maps an inflected form to its lemmas (noun.exc, verb.exc, ...).
	exc map[POS]map[string][]string
	// plurals maps a noun to its irregular plural (noun.exc read back).
	plurals map[string]string
	// counts holds, per part of speech and lemma, how often each of its
	// senses (in index order) was seen in the tagged corpus (cntlist.rev).
	counts map[POS]map[string][]int
}

// entry is a lemma's line of an index file.
type entry struct {
	tagged  int     // how often its senses were seen in the tagged corpus
	offsets []int64 // its synsets, the most frequent sense first
}

type synset struct {
	words []string
	// transitive says a verb sense has a frame with an object
	// ("Somebody ----s something").
	transitive bool
}

// Load reads WordNet's database files from fsys (its root holds
// index.noun, data.noun, noun.exc and the same for verb, adj and adv).
func Load(fsys fs.FS) (*WordNet, error) {
	wn := &WordNet{index: map[POS]map[string]entry{}, synsets: map[POS]map[int64]synset{}, exc: map[POS]map[string][]string{}}
	for pos, name := range posFiles {
		var err error
		if wn.index[pos], err = readIndex(fsys, "index."+name); err != nil {
			return nil, err
		}
		if wn.synsets[pos], err = readData(fsys, "data."+name); err != nil {
			return nil, err
		}
		if wn.exc[pos], err = readExc(fsys, name+".exc"); err != nil {
			return nil, err
		}
	}
	wn.plurals = map[string]string{}
	for form, lemmas := range wn.exc[Noun] {
		for _, l := range lemmas {
			if p, ok := wn.plurals[l]; !ok || form < p {
				wn.plurals[l] = form
			}
		}
	}
	var err error
	wn.counts, err = readCounts(fsys, "cntlist.rev")
	return wn, err
}

// readCounts reads lines "lemma%ss_type:... sense_number tag_count".
func readCounts(fsys fs.FS, file string) (map[POS]map[string][]int, error) {
	types := map[byte]POS{'1': Noun, '2': Verb, '3': Adjective, '4': Adverb, '5': Adjective}
	out := map[POS]map[string][]int{Noun: {}, Verb: {}, Adjective: {}, Adverb: {}}
	err := eachLine(fsys, file, func(line string) error {
		f := strings.Fields(line)
		if len(f) != 3 {
			return fmt.Errorf("malformed line %q", line)
		}
		lemma, key, ok := strings.Cut(f[0], "%")
		if !ok || key == "" {
			return fmt.Errorf("malformed sense key in %q", line)
		}
		pos, ok := types[key[0]]
		n, err1 := strconv.Atoi(f[1])
		c, err2 := strconv.Atoi(f[2])
		if !ok || err1 != nil || err2 != nil || n < 1 || n > 200 {
			return fmt.Errorf("malformed line %q", line)
		}
		cs := out[pos][lemma]
		for len(cs) < n {
			cs = append(cs, 0)
		}
		cs[n-1] += c
		out[pos][lemma] = cs
		return nil
	})
	return out, err
}

// Dominant reports whether lemma's most frequent sense as pos is what it
// mostly means: it has one sense, or its first sense holds at least half
// of the times its senses were seen in the tagged corpus.
func (wn *WordNet) Dominant(lemma string, pos POS) bool {
	e, ok := wn.index[pos][lemma]
	if !ok {
		return false
	}
	if len(e.offsets) == 1 {
		return true
	}
	cs := wn.counts[pos][lemma]
	total := 0
	for _, c := range cs {
		total += c
	}
	return len(cs) > 0 && cs[0] >= 2 && 2*cs[0] >= total
}

// FirstSense reports whether synset offset of pos is word's most
// frequent sense: a reader takes word in that sense.
func (wn *WordNet) FirstSense(word string, pos POS, offset int64) bool {
	e, ok := wn.index[pos][strings.ReplaceAll(word, " ", "_")]
	return ok && len(e.offsets) > 0 && e.offsets[0] == offset
}

// Plural is a noun's irregular plural, if it has one.
func (wn *WordNet) Plural(noun string) (string, bool) {
	p, ok := wn.plurals[noun]
	return p, ok
}

// eachLine calls fn with every line of file that is not part of the
// licence header (lines starting with two spaces).
func eachLine(fsys fs.FS, file string, fn func(line string) error) error {
	f, err := fsys.Open(file)
	if err != nil {
		return fmt.Errorf("wordnet: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") || strings.TrimSpace(line) == "" {
			continue
		}
		if err := fn(line); err != nil {
			return fmt.Errorf("wordnet %s: %w", file, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("wordnet %s: %w", file, err)
	}
	return nil
}

// readIndex reads lines "lemma pos synset_cnt p_cnt [ptr...] sense_cnt
// tagsense_cnt offset...".
func readIndex(fsys fs.FS, file string) (map[string]entry, error) {
	out := map[string]entry{}
	err := eachLine(fsys, file, func(line string) error {
		f := strings.Fields(line)
		if len(f) < 6 {
			return fmt.Errorf("short line %q", line)
		}
		nSyn, err1 := strconv.Atoi(f[2])
		nPtr, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil || len(f) < 4+nPtr+2+nSyn {
			return fmt.Errorf("malformed line %q", line)
		}
		tagged, err := strconv.Atoi(f[4+nPtr+1])
		if err != nil {
			return fmt.Errorf("malformed line %q", line)
		}
		e := entry{tagged: tagged}
		for _, o := range f[4+nPtr+2 : 4+nPtr+2+nSyn] {
			off, err := strconv.ParseInt(o, 10, 64)
			if err != nil {
				return fmt.Errorf("malformed offset in %q", line)
			}
			e.offsets = append(e.offsets, off)
		}
		out[f[0]] = e
		return nil
	})
	return out, err
}

// readData reads lines "offset lex_filenum ss_type w_cnt word lex_id ...
// p_cnt [ptr...] [frames] | gloss".
func readData(fsys fs.FS, file string) (map[int64]synset, error) {
	out := map[int64]synset{}
	err := eachLine(fsys, file, func(line string) error {
		body, _, _ := strings.Cut(line, " | ")
		f := strings.Fields(body)
		if len(f) < 4 {
			return fmt.Errorf("short line %q", line)
		}
		off, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return fmt.Errorf("malformed offset in %q", line)
		}
		n, err := strconv.ParseInt(f[3], 16, 64)
		if err != nil || len(f) < 4+2*int(n)+1 {
			return fmt.Errorf("malformed word count in %q", line)
		}
		var s synset
		for i := range int(n) {
			w := f[4+2*i]
			if j := strings.IndexByte(w, '('); j > 0 { // adjective markers: "big(a)"
				w = w[:j]
			}
			s.words = append(s.words, w)
		}
		rest := f[4+2*int(n):]
		nPtr, err := strconv.Atoi(rest[0])
		if err != nil || len(rest) < 1+4*nPtr {
			return fmt.Errorf("malformed pointers in %q", line)
		}
		frames := rest[1+4*nPtr:]
		// Frames: f_cnt, then "+ f_num w_num" each. Frames 8 to 11, 14, 15,
		// 16, 17, 18, 19, 20, 21 and 24 to 26 have an object.
		for i := 1; i+2 < len(frames); i += 3 {
			num, _ := strconv.Atoi(frames[i+1])
			switch num {
			case 8, 9, 10, 11, 14, 15, 16, 17, 18, 19, 20, 21, 24, 25, 26:
				s.transitive = true
			}
		}
		out[off] = s
		return nil
	})
	return out, err
}

// readExc reads lines "inflected lemma...".
func readExc(fsys fs.FS, file string) (map[string][]string, error) {
	out := map[string][]string{}
	err := eachLine(fsys, file, func(line string) error {
		f := strings.Fields(line)
		if len(f) >= 2 {
			out[f[0]] = append(out[f[0]], f[1:]...)
		}
		return nil
	})
	return out, err
}

// detach are WordNet's morphological detachment rules (morphy): suffix
// to strip and what to put back, per part of speech.
var detach = map[POS][][2]string{
	Noun:      {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	Verb:      {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	Adjective: {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
}

// Lemma returns the base form of a lower-case word as pos (WordNet's
// morphy: the exception lists, then the word itself, then the
// detachment rules), and false when WordNet does not know it as pos.
func (wn *WordNet) Lemma(word string, pos POS) (string, bool) {
	if ls := wn.exc[pos][word]; len(ls) > 0 {
		if _, ok := wn.index[pos][ls[0]]; ok {
			return ls[0], true
		}
	}
	if _, ok := wn.index[pos][word]; ok {
		return word, true
	}
	for _, r := range detach[pos] {
		if base, ok := strings.CutSuffix(word, r[0]); ok && base != "" {
			if _, ok := wn.index[pos][base+r[1]]; ok {
				return base + r[1], true
			}
		}
	}
	return "", false
}

// Tagged is how often lemma's senses as pos were seen in WordNet's
// tagged corpus (0 when it does not know it).
func (wn *WordNet) Tagged(lemma string, pos POS) int { return wn.index[pos][lemma].tagged }

// Knows reports whether WordNet has lemma as pos.
func (wn *WordNet) Knows(lemma string, pos POS) bool {
	_, ok := wn.index[pos][lemma]
	return ok
}

// Synonyms returns the other words of lemma's most frequent sense as pos
// (multi-word ones with spaces), in WordNet's order, and that sense's
// synset offset.
func (wn *WordNet) Synonyms(lemma string, pos POS) ([]string, int64) {
	e, ok := wn.index[pos][lemma]
	if !ok || len(e.offsets) == 0 {
		return nil, 0
	}
	var out []string
	for _, w := range wn.synsets[pos][e.offsets[0]].words {
		w = strings.ReplaceAll(w, "_", " ")
		if !strings.EqualFold(w, lemma) {
			out = append(out, w)
		}
	}
	return out, e.offsets[0]
}

// Transitive reports whether lemma's most frequent verb sense takes an
// object.
func (wn *WordNet) Transitive(lemma string) bool {
	e, ok := wn.index[Verb][lemma]
	return ok && len(e.offsets) > 0 && wn.synsets[Verb][e.offsets[0]].transitive
}
