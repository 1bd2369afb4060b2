// Command parity compares the entities that two builds of cairn's resolver
// find in the same files, and how fast each reads them. It is how the
// pure-Go tree-sitter parsers were checked against the cgo ones (see
// docs/BENCHMARKS.md, "Code memory").
//
//	go run ./internal/parity dump -o new.jsonl /usr/lib/python3.11 /usr/include
//	CGO_ENABLED=1 go run -tags treesitter ./internal/parity dump -o cgo.jsonl ...   (in a checkout from before the pure-Go parsers, such as 9a0a9e7, with this directory copied in)
//	go run ./internal/parity diff cgo.jsonl new.jsonl
//
// dump resolves every file of a known language under the directories
// (symbolic links not followed, hidden directories and node_modules
// skipped, as the index does) and writes one JSON line per file: its
// path, language, method, warning, size, the time code.Resolve took, and
// its entities. It prints files/s and MB/s per language to stderr, timing
// code.Resolve alone, by the clock and by the process's CPU time (on a
// shared machine the CPU time is the steadier). diff reads two dumps and
// prints, per language, how many entities both found (the same name, kind
// and lines), each one alone, the agreement over the files both resolved
// the same way (both with a full syntax tree, both from a partial one, or
// both with the regex fallback), and how many files each pair of ways
// resolved.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairnhq/cairn/code"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "dump":
		err = dump(os.Args[2:])
	case "diff":
		err = diff(os.Args[2:], os.Stdout)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "parity:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: parity dump [-o file] [-max bytes] dir...\n       parity diff [-examples n] base.jsonl other.jsonl")
	os.Exit(2)
}

// fileResult is one line of a dump.
type fileResult struct {
	Path     string   `json:"path"`
	Language string   `json:"language"`
	Method   string   `json:"method"`
	Warning  string   `json:"warning,omitempty"`
	Bytes    int      `json:"bytes"`
	Nanos    int64    `json:"ns"`
	CPUNanos int64    `json:"cpu_ns"`
	Entities []entity `json:"entities"`
}

// entity is one symbol: name, kind, first and last line.
type entity struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

func (e entity) String() string { return fmt.Sprintf("%s %s %d-%d", e.Name, e.Kind, e.Start, e.End) }

func dump(args []string) error {
	fl := flag.NewFlagSet("dump", flag.ExitOnError)
	outPath := fl.String("o", "", "write the dump here (default stdout)")
	maxBytes := fl.Int("max", 1<<20, "skip files larger than this (the index's default limit)")
	_ = fl.Parse(args)
	if fl.NArg() == 0 {
		usage()
	}
	out := io.Writer(os.Stdout)
	if *outPath != "" {
		f, err := os.Create(*outPath)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	w := bufio.NewWriter(out)
	defer w.Flush()
	enc := json.NewEncoder(w)
	stats := map[string]*throughput{}
	for _, root := range fl.Args() {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: not part of the comparison
			}
			if d.IsDir() {
				if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || code.LanguageOf(p) == "" || code.LanguageOf(p) == "go" {
				return nil
			}
			src, err := os.ReadFile(p)
			if err != nil || len(src) > *maxBytes {
				return nil
			}
			cpu, start := cpuTime(), time.Now()
			res := code.Resolve(p, src)
			took, cpuTook := time.Since(start), cpuTime()-cpu
			r := fileResult{Path: p, Language: res.Language, Method: res.Method, Warning: res.Warning,
				Bytes: len(src), Nanos: took.Nanoseconds(), CPUNanos: cpuTook.Nanoseconds(),
				Entities: make([]entity, 0, len(res.Symbols))}
			for _, s := range res.Symbols {
				r.Entities = append(r.Entities, entity{s.Name, s.Kind, s.StartLine, s.EndLine})
			}
			t := stats[group(p, res.Language)]
			if t == nil {
				t = &throughput{}
				stats[group(p, res.Language)] = t
			}
			t.add(len(src), took, cpuTook)
			return enc.Encode(r)
		})
		if err != nil {
			return err
		}
	}
	var all throughput
	for _, lang := range slices.Sorted(maps.Keys(stats)) {
		t := stats[lang]
		fmt.Fprintf(os.Stderr, "%-11s %s\n", lang, t)
		all.files, all.bytes, all.took, all.cpu = all.files+t.files, all.bytes+t.bytes, all.took+t.took, all.cpu+t.cpu
	}
	fmt.Fprintf(os.Stderr, "%-11s %s\n", "all", &all)
	return nil
}

// throughput sums the files, bytes and resolve time (wall and CPU) of
// one language.
type throughput struct {
	files, bytes int
	took, cpu    time.Duration
}

func (t *throughput) add(n int, d, cpu time.Duration) {
	t.files, t.bytes, t.took, t.cpu = t.files+1, t.bytes+n, t.took+d, t.cpu+cpu
}

func (t *throughput) String() string {
	rate := func(d time.Duration) string {
		s := max(d.Seconds(), 1e-9)
		return fmt.Sprintf("%7.2f s: %7.1f files/s %6.2f MB/s", d.Seconds(), float64(t.files)/s, float64(t.bytes)/1e6/s)
	}
	return fmt.Sprintf("%6d files %8.1f MB; wall %s; CPU %s", t.files, float64(t.bytes)/1e6, rate(t.took), rate(t.cpu))
}

// group is what a file's figures are reported under: its language, and
// "tsx" apart from the rest of TypeScript, since it has its own grammar.
func group(path, lang string) string {
	if strings.EqualFold(filepath.Ext(path), ".tsx") {
		return "tsx"
	}
	return lang
}

func readDump(path string) (map[string]fileResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]fileResult{}
	dec := json.NewDecoder(bufio.NewReader(f))
	for {
		var r fileResult
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out[r.Path] = r
	}
}

// agreement counts, for one language, the entities of two dumps.
type agreement struct {
	files, onlyBase, onlyOther       int // files in one dump only
	both, baseOnly, otherOnly        int // entities (name, kind, lines)
	namesBoth, namesBase, namesOther int // entities by name alone
	// the entities of the files both dumps resolved the same way
	sameBoth, sameBaseOnly, sameOtherOnly int
	methods                               map[string]int
	examples                              []string
}

// how says how a file was resolved: "ast", "ast partial" (a tree with
// syntax errors, the warning saying so) or "regex".
func how(r fileResult) string {
	if r.Method == "ast" && r.Warning != "" {
		return "ast partial"
	}
	return r.Method
}

func diff(args []string, w io.Writer) error {
	fl := flag.NewFlagSet("diff", flag.ExitOnError)
	examples := fl.Int("examples", 0, "print up to this many differing entities per language")
	_ = fl.Parse(args)
	if fl.NArg() != 2 {
		usage()
	}
	base, err := readDump(fl.Arg(0))
	if err != nil {
		return err
	}
	other, err := readDump(fl.Arg(1))
	if err != nil {
		return err
	}
	byLang := map[string]*agreement{}
	get := func(lang string) *agreement {
		a := byLang[lang]
		if a == nil {
			a = &agreement{methods: map[string]int{}}
			byLang[lang] = a
		}
		return a
	}
	for _, p := range slices.Sorted(maps.Keys(base)) {
		b := base[p]
		a := get(group(p, b.Language))
		o, ok := other[p]
		if !ok {
			a.onlyBase++
			continue
		}
		a.files++
		a.methods[how(b)+"→"+how(o)]++
		both, baseOnly, otherOnly := a.both, a.baseOnly, a.otherOnly
		compareFile(a, b, o, *examples)
		if how(b) == how(o) {
			a.sameBoth += a.both - both
			a.sameBaseOnly += a.baseOnly - baseOnly
			a.sameOtherOnly += a.otherOnly - otherOnly
		}
	}
	for p, o := range other {
		if _, ok := base[p]; !ok {
			get(group(p, o.Language)).onlyOther++
		}
	}
	fmt.Fprintf(w, "%-11s %7s %9s %9s %9s %9s %9s %9s  %s\n", "language", "files", "both", "base only", "other only",
		"agree", "names", "same way", "methods (base→other: files)")
	for _, lang := range slices.Sorted(maps.Keys(byLang)) {
		a := byLang[lang]
		fmt.Fprintf(w, "%-11s %7d %9d %9d %9d %8.3f%% %8.3f%% %8.3f%%  %s\n", lang, a.files, a.both, a.baseOnly, a.otherOnly,
			percent(a.both, a.both+a.baseOnly+a.otherOnly), percent(a.namesBoth, a.namesBoth+a.namesBase+a.namesOther),
			percent(a.sameBoth, a.sameBoth+a.sameBaseOnly+a.sameOtherOnly), methods(a.methods))
		if a.onlyBase+a.onlyOther > 0 {
			fmt.Fprintf(w, "%-11s files in one dump only: %d base, %d other\n", "", a.onlyBase, a.onlyOther)
		}
		for _, e := range a.examples {
			fmt.Fprintf(w, "    %s\n", e)
		}
	}
	return nil
}

// compareFile adds one file's entities to a.
func compareFile(a *agreement, b, o fileResult, examples int) {
	key := func(e entity) string { return e.String() }
	bset, oset := map[string]bool{}, map[string]bool{}
	bname, oname := map[string]bool{}, map[string]bool{}
	for _, e := range b.Entities {
		bset[key(e)], bname[e.Name] = true, true
	}
	for _, e := range o.Entities {
		oset[key(e)], oname[e.Name] = true, true
	}
	note := func(side, what string) {
		if len(a.examples) < examples {
			a.examples = append(a.examples, fmt.Sprintf("%s only: %s: %s (%s→%s)", side, b.Path, what, b.Method, o.Method))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(bset)) {
		if oset[k] {
			a.both++
		} else {
			a.baseOnly++
			note("base", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(oset)) {
		if !bset[k] {
			a.otherOnly++
			note("other", k)
		}
	}
	for n := range bname {
		if oname[n] {
			a.namesBoth++
		} else {
			a.namesBase++
		}
	}
	for n := range oname {
		if !bname[n] {
			a.namesOther++
		}
	}
}

func percent(n, d int) float64 {
	if d == 0 {
		return 100
	}
	return 100 * float64(n) / float64(d)
}

func methods(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
