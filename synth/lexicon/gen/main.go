// Command gen builds synth/lexicon/wordnet.txt.gz, the word knowledge the
// grounding verifier uses, from the WordNet 3.0 database that Debian's
// wordnet-base package installs in /usr/share/wordnet (WordNet licence:
// synth/lexicon/LICENSE.wordnet). scripts/gen-wordnet.sh runs it:
//
//	go run ./synth/lexicon/gen -dict /usr/share/wordnet -out synth/lexicon/wordnet.txt.gz
//
// It keeps the single-word lemmas of lower-case letters that the built-in
// embedder's vocabulary holds (embed/glove: the 80,000 most frequent words
// of GloVe 6B), and writes, one record a line:
//
//	p lemma n v a r     how often the lemma was tagged as a noun, verb,
//	                    adjective and adverb in WordNet's semantic
//	                    concordance, plus one for each part of speech it
//	                    has (0: it has none)
//	s pos lemma:rank …  a synset of two kept lemmas or more; rank is the
//	                    synset's sense number among the lemma's senses of
//	                    that part of speech (1 = most frequent)
//	a lemma lemma       an antonym pair (WordNet's "!" pointers, and the
//	                    few opposites of software and time it lacks:
//	                    supplement below)
//	x pos form lemma    an irregular inflection (the *.exc files)
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/embed/glove"
)

var posFiles = map[string]string{"n": "noun", "v": "verb", "a": "adj", "r": "adv"}

var lemmaRE = regexp.MustCompile(`^[a-z]+$`)

func main() {
	dict := flag.String("dict", "/usr/share/wordnet", "WordNet's dict directory")
	out := flag.String("out", "synth/lexicon/wordnet.txt.gz", "output file")
	flag.Parse()
	if err := run(*dict, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// synset is one synset: its part of speech, its words in order, and its
// antonym pointers (source word, target synset, target word).
type synset struct {
	pos   string
	words []string
	ants  [][3]string
}

func run(dict, out string) error {
	synsets := map[string]*synset{} // pos+offset
	rank := map[string]map[string]int{}
	counts := map[string]*[4]int{}
	vec, err := glove.Load()
	if err != nil {
		return err
	}
	known := func(w string) bool { return len(vec.WordIDs(w, nil)) == 1 }
	order := []string{"n", "v", "a", "r"}
	for i, pos := range order {
		if err := readIndex(filepath.Join(dict, "index."+posFiles[pos]), pos, i, known, rank, counts); err != nil {
			return err
		}
		if err := readData(filepath.Join(dict, "data."+posFiles[pos]), pos, synsets); err != nil {
			return err
		}
	}
	if err := readCounts(filepath.Join(dict, "cntlist.rev"), counts); err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	w := bufio.NewWriter(zw)
	fmt.Fprintln(w, "# Derived from WordNet 3.0 (Debian's wordnet-base), Copyright 2006 by Princeton University; see LICENSE.wordnet.")
	var lemmas []string
	for l := range counts {
		lemmas = append(lemmas, l)
	}
	sort.Strings(lemmas)
	for _, l := range lemmas {
		c := counts[l]
		fmt.Fprintf(w, "p %s %d %d %d %d\n", l, c[0], c[1], c[2], c[3])
	}
	var keys []string
	for k := range synsets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ants := map[[2]string]bool{}
	for _, k := range keys {
		s := synsets[k]
		var kept []string
		for _, wd := range s.words {
			if r, ok := rank[s.pos+"\x00"+k[1:]][wd]; ok {
				kept = append(kept, fmt.Sprintf("%s:%d", wd, r))
			}
		}
		if len(kept) >= 2 {
			fmt.Fprintf(w, "s %s %s\n", s.pos, strings.Join(kept, " "))
		}
		for _, a := range s.ants {
			t := synsets[a[1]]
			if t == nil {
				continue
			}
			src, dst := word(s.words, a[0]), word(t.words, a[2])
			addAnt(ants, counts, src, dst)
		}
	}
	for _, p := range supplement {
		addAnt(ants, counts, p[0], p[1])
	}
	var pairs []string
	for p := range ants {
		pairs = append(pairs, p[0]+" "+p[1])
	}
	sort.Strings(pairs)
	for _, p := range pairs {
		fmt.Fprintln(w, "a", p)
	}
	for _, pos := range order {
		if err := copyExceptions(w, pos, filepath.Join(dict, posFiles[pos]+".exc"), counts); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// supplement are opposites WordNet does not link, added by cairn.
var supplement = [][2]string{
	{"add", "remove"}, {"encrypt", "decrypt"}, {"install", "uninstall"}, {"after", "before"}, {"approve", "reject"},
	{"client", "server"}, {"input", "output"}, {"always", "never"}, {"tomorrow", "yesterday"},
	{"last", "next"}, {"enable", "disallow"}, {"allow", "forbid"}, {"create", "delete"}, {"grant", "revoke"},
}

func word(words []string, n string) string {
	i, err := strconv.ParseInt(n, 16, 32)
	if err != nil || i < 1 || int(i) > len(words) {
		return ""
	}
	return words[i-1]
}

func addAnt(ants map[[2]string]bool, counts map[string]*[4]int, a, b string) {
	if a == "" || b == "" || a == b || counts[a] == nil || counts[b] == nil {
		return
	}
	if a > b {
		a, b = b, a
	}
	ants[[2]string{a, b}] = true
}

// readIndex reads index.pos: each kept lemma's senses in order, and that
// it has this part of speech.
func readIndex(path, pos string, col int, known func(string) bool, rank map[string]map[string]int, counts map[string]*[4]int) error {
	return eachLine(path, func(f []string) error {
		lemma := f[0]
		if !lemmaRE.MatchString(lemma) || !known(lemma) {
			return nil
		}
		pcnt, err := strconv.Atoi(f[3])
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, lemma, err)
		}
		offsets := f[4+pcnt+2:]
		if counts[lemma] == nil {
			counts[lemma] = &[4]int{}
		}
		counts[lemma][col] = 1
		for i, off := range offsets {
			k := pos + "\x00" + off
			if rank[k] == nil {
				rank[k] = map[string]int{}
			}
			rank[k][lemma] = i + 1
		}
		return nil
	})
}

// readData reads data.pos: each synset's words and its antonym pointers. Satellite adjectives (s) count as adjectives.
func readData(path, pos string, synsets map[string]*synset) error {
	return eachLine(path, func(f []string) error {
		off := f[0]
		n, err := strconv.ParseInt(f[3], 16, 32)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, off, err)
		}
		s := &synset{pos: pos}
		i := 4
		for range n {
			w := strings.ToLower(f[i])
			if j := strings.IndexByte(w, '('); j > 0 {
				w = w[:j] // adjective markers: (a), (p), (ip)
			}
			s.words = append(s.words, w)
			i += 2
		}
		p, err := strconv.Atoi(f[i])
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, off, err)
		}
		i++
		for range p {
			sym, target, tpos, st := f[i], f[i+1], f[i+2], f[i+3]
			i += 4
			if tpos == "s" {
				tpos = "a"
			}
			if sym == "!" {
				s.ants = append(s.ants, [3]string{st[:2], tpos + target, st[2:]})
			}
		}
		synsets[pos+off] = s
		return nil
	})
}

// readCounts adds the semantic concordance's tag counts to each lemma's
// parts of speech (cntlist.rev: sense_key sense_number tag_count).
func readCounts(path string, counts map[string]*[4]int) error {
	col := map[string]int{"1": 0, "2": 1, "3": 2, "5": 2, "4": 3}
	return eachLine(path, func(f []string) error {
		lemma, rest, ok := strings.Cut(f[0], "%")
		if !ok || counts[lemma] == nil {
			return nil
		}
		c, ok := col[rest[:1]]
		if !ok {
			return nil
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, f[0], err)
		}
		if counts[lemma][c] > 0 {
			counts[lemma][c] += n
		}
		return nil
	})
}

func copyExceptions(w *bufio.Writer, pos, path string, counts map[string]*[4]int) error {
	return eachLine(path, func(f []string) error {
		if len(f) >= 2 && lemmaRE.MatchString(f[0]) && counts[f[1]] != nil && f[0] != f[1] {
			fmt.Fprintf(w, "x %s %s %s\n", pos, f[0], f[1])
		}
		return nil
	})
}

// eachLine calls fn with the fields of each line that is not the licence
// header (lines starting with two spaces).
func eachLine(path string, fn func([]string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") || strings.TrimSpace(line) == "" {
			continue
		}
		if err := fn(strings.Fields(line)); err != nil {
			return err
		}
	}
	return sc.Err()
}
