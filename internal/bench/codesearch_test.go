package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/code"
)

var testCorpora = []CodeCorpus{
	{Name: "go", Root: filepath.Join("testdata", "codesearch", "go")},
	{Name: "python", Root: filepath.Join("testdata", "codesearch", "python")},
}

// Every question is the first sentence of a doc the stripped tree no
// longer holds, and its answer is an entity of the stripped tree named
// after the documented function.
func TestCodeQuestionsStripTheirDocs(t *testing.T) {
	want := map[string]map[string]string{
		"go": {
			"go:path/match.go::Match":                 "reports whether name matches the shell pattern",
			"go:strings/replace.go::Replacer.Replace": "returns a copy of s with all replacements performed",
			"go:path/path.go::Clean":                  "returns the shortest path name equivalent to path by purely lexical processing",
		},
		"python": {
			"python:fnmatch.py::fnmatch":        "Test whether FILENAME matches PATTERN",
			"python:textwrap.py::dedent":        "Remove any common leading whitespace from every line in `text`",
			"python:shlex.py::shlex.push_token": "Push a token onto the stack popped by the get_token method",
		},
	}
	for _, c := range testCorpora {
		t.Run(c.Name, func(t *testing.T) {
			files, err := loadCorpus(c)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			halves := map[string]int{}
			for _, f := range files {
				resolved := map[string]bool{}
				for _, s := range code.Resolve(f.rel, f.stripped).Symbols {
					resolved[code.Key(f.rel, s.Name)] = true
				}
				for _, q := range f.questions {
					got[q.ID] = q.Question
					halves[q.Split]++
					if !resolved[q.Key] {
						t.Errorf("%s: answer %s is not an entity of the stripped file", q.ID, q.Key)
					}
					if strings.Contains(strings.Join(strings.Fields(string(f.stripped)), " "), q.Question) {
						t.Errorf("%s: the stripped file still holds the question %q", q.ID, q.Question)
					}
					if q.Split != codeSplitOf(q.ID) {
						t.Errorf("%s: split %s, codeSplitOf says %s", q.ID, q.Split, codeSplitOf(q.ID))
					}
				}
			}
			for id, q := range want[c.Name] {
				if got[id] != q {
					t.Errorf("%s: question %q, want %q", id, got[id], q)
				}
			}
			if halves["tune"] < 5 || halves["test"] < 5 {
				t.Errorf("halves %v: the hash split is lopsided", halves)
			}
		})
	}
}

// The stripped Python still parses into the same functions: a docstring
// that was a body's only statement leaves "" in its place.
func TestStripPythonKeepsFunctions(t *testing.T) {
	src := []byte("def f(a, b=\")\"):\n    \"\"\"Add two numbers.\n\n    More.\n    \"\"\"\n    return a + b\n\n\nclass C:\n    def g(self) -> dict[str, int]:  # note: x\n        r'''Only a docstring.'''\n\n    def h(self):\n        return 'not a docstring'\n")
	out, docs := stripPython(src)
	if len(docs) != 2 || docs[0].name != "f" || docs[1].name != "g" {
		t.Fatalf("docs %+v", docs)
	}
	if docs[0].doc != "Add two numbers.\n\nMore.\n" || docs[1].doc != "Only a docstring." {
		t.Errorf("doc texts %q, %q", docs[0].doc, docs[1].doc)
	}
	if strings.Contains(string(out), "Add two") || strings.Contains(string(out), "Only a") || !strings.Contains(string(out), "'not a docstring'") {
		t.Errorf("stripped:\n%s", out)
	}
	res := code.Resolve("x.py", out)
	var names []string
	for _, s := range res.Symbols {
		names = append(names, s.Name)
	}
	if res.Method != "ast" || strings.Join(names, ",") != "f,C,C.g,C.h" {
		t.Errorf("resolved %s %v (%s) from:\n%s", res.Method, names, res.Warning, out)
	}
	if docs[0].line != 2 || docs[1].line != 8 {
		t.Errorf("doc lines %d, %d", docs[0].line, docs[1].line)
	}
}

func TestFirstSentence(t *testing.T) {
	for _, c := range []struct{ doc, name, want string }{
		{"ReadFile reads the named file and returns the contents.\nA successful call returns err == nil.", "ReadFile", "reads the named file and returns the contents"},
		{"Return the value, e.g. a number. More.", "f", "Return the value, e.g. a number"},
		{"Deprecated: use Other instead.", "f", ""},
		{"Close closes.", "Close", ""},
		{"f() -> x", "f", ""},
	} {
		if got := firstSentence(c.doc, c.name); got != c.want {
			t.Errorf("firstSentence(%q) = %q, want %q", c.doc, got, c.want)
		}
	}
}

// The whole benchmark runs over the copied slice: both rankers find
// answers, and a bad split is refused.
func TestRunCodeSearch(t *testing.T) {
	rep, err := RunCodeSearch(context.Background(), CodeSearchOptions{Corpora: testCorpora, Dir: t.TempDir(), Split: "all"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Corpora {
		if c.Asked < 10 || c.Asked != c.Questions || c.Entities < c.Asked {
			t.Errorf("%s: asked %d of %d questions over %d entities", c.Corpus, c.Asked, c.Questions, c.Entities)
		}
		if c.Hydrate.R10 <= 0 || c.BM25.R10 <= 0 || c.Hydrate.R1 > c.Hydrate.R5 || c.Hydrate.R5 > c.Hydrate.R10 || c.Hydrate.MRR > c.Hydrate.R10 {
			t.Errorf("%s: scores %+v / %+v", c.Corpus, c.Hydrate, c.BM25)
		}
	}
	if _, err := RunCodeSearch(context.Background(), CodeSearchOptions{Dir: t.TempDir(), Split: "half"}); err == nil {
		t.Error("split half accepted")
	}
	if _, err := os.Stat(filepath.Join("testdata", "codesearch", "README")); err != nil {
		t.Error(err)
	}
}
