package code

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// fuzzLangs are the languages whose regex fallback the fuzzer runs on
// every input ("" is the generic patterns), with a path of each.
var fuzzLangs = []struct{ lang, path string }{
	{"", "x.txt"},
	{langGo, "x.go"},
	{langPython, "x.py"},
	{langJavaScript, "x.js"},
	{langTypeScript, "x.ts"},
	{langTypeScript, "x.tsx"},
	{langRust, "x.rs"},
	{langJava, "X.java"},
	{langC, "x.c"},
}

// FuzzRegexFallback runs the regex fallback of every language, and
// Resolve, on arbitrary bytes: they never panic, and what they return
// keeps Resolve's promises.
func FuzzRegexFallback(f *testing.F) {
	for _, s := range []string{
		"",
		"\n",
		"package p\n\n// F does.\nfunc F() {}\n\nfunc (r *T[K]) M() {}\n\nconst (\n\tA = iota\n\tB\n)\n",
		"package p\nfunc broken( {\n\treturn \"x\"\n",
		"class A:\n    def m(self):\n        pass\n\n    if X:\n        def n(self): ...\n\nMAX = 1\n",
		"s = \"a \\\n  b\"\ndef f(x,\n      y):\n    '''doc\n    '''\n",
		"export class A {\n  static x = () => 1;\n  *gen() {}\n  m(a: string): void;\n  m(a) { return /\\{/.test(a); }\n}\n",
		"export const f = async (a) => { return `${a}`; };\nfunction* g() {}\n",
		"export interface I { m(): void }\nexport type T<A> = A | null;\nexport enum E { A }\n",
		"/// doc\n#[derive(Debug)]\npub struct P { x: f64 }\nimpl<T> Tr for P { fn m(&self) -> &'static str { \"'\" } }\nmod m { pub fn f() {} }\n",
		"@A(\"x\")\npublic class C<T> {\n  static final int K = 1, L = 2;\n  C() {}\n  <R> R m(int a) { return null; }\n  interface I { void n(); }\n}\n",
		"#define MAX 10 /* c */\n#define F(x) \\\n  (x)\ntypedef struct s { int a; } s_t;\nint\nf(void)\n{\n  return 0;\n}\n",
		"module M\n  def f\n  end\nend\nfn g() {\n}\n",
		"/* open\nfunc f() {}\n",
		"\"open\nclass A {}\n",
		"{{{{((((\n}}}}))))\n",
		"\xff\xfe\x00def \xc3(\n\tclass \xe2 {\n}\n",
		"def f():\r\n    pass\r\n",
		"\tdef f():\n  \tpass\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		lines := newSrcLines(src)
		n := lines.count()
		for _, fl := range fuzzLangs {
			raw := rxResolve(fl.lang, lines)
			for _, s := range raw {
				if s.StartLine < 1 || s.EndLine < s.StartLine || s.EndLine > n {
					t.Errorf("%s: regex symbol %s spans %d-%d of %d lines", fl.path, s.Name, s.StartLine, s.EndLine, n)
				}
			}
			checkFuzzSymbols(t, fl.path, src, finishSymbols(raw, lines))
			res := Resolve(fl.path, src)
			if strings.Contains(res.Warning, "failed (") {
				t.Errorf("%s: Resolve recovered a panic: %s", fl.path, res.Warning)
			}
			partial := res.Method == methodAST && strings.HasSuffix(res.Warning, partialTreeNote)
			if res.Method != methodAST && res.Method != methodRegex || (res.Method == methodRegex) == (res.Warning == "" || partial) {
				t.Errorf("%s: method %q with warning %q", fl.path, res.Method, res.Warning)
			}
			checkFuzzSymbols(t, fl.path, src, res.Symbols)
			if again := Resolve(fl.path, src); !reflect.DeepEqual(res, again) {
				t.Errorf("%s: two resolutions of the same bytes differ", fl.path)
			}
		}
	})
}

// checkFuzzSymbols verifies finished symbols: valid names that make valid
// keys, known kinds, lines within the file, Text equal to the lines,
// sorted by StartLine then Name, each name once.
func checkFuzzSymbols(t *testing.T, path string, src []byte, syms []Symbol) {
	t.Helper()
	lines := strings.Split(string(src), "\n")
	seen := map[string]bool{}
	for i, s := range syms {
		if _, sym, err := ParseKey(Key("a/b.x", s.Name)); err != nil || sym != s.Name {
			t.Errorf("%s: symbol %q fails ParseKey: %v", path, s.Name, err)
		}
		if seen[s.Name] {
			t.Errorf("%s: symbol %q twice", path, s.Name)
		}
		seen[s.Name] = true
		switch s.Kind {
		case kindFunction, kindMethod, kindType, kindClass, kindInterface, kindConstant:
		default:
			t.Errorf("%s: symbol %q of kind %q", path, s.Name, s.Kind)
		}
		if s.StartLine < 1 || s.EndLine < s.StartLine || s.EndLine > len(lines) {
			t.Errorf("%s: symbol %q spans %d-%d of %d lines", path, s.Name, s.StartLine, s.EndLine, len(lines))
			continue
		}
		if want := strings.Join(lines[s.StartLine-1:s.EndLine], "\n"); s.Text != want {
			t.Errorf("%s: symbol %q: Text %q is not lines %d-%d %q", path, s.Name, s.Text, s.StartLine, s.EndLine, want)
		}
		if i > 0 {
			p := syms[i-1]
			if p.StartLine > s.StartLine || p.StartLine == s.StartLine && p.Name >= s.Name {
				t.Errorf("%s: %q (line %d) sorted before %q (line %d)", path, p.Name, p.StartLine, s.Name, s.StartLine)
			}
		}
	}
}

// FuzzParseKey: ParseKey never panics; what it accepts splits into a path
// and a symbol that Key joins back into the same key, and that ParseKey
// accepts again; what it refuses is invalid_params.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{
		"", "::", "x.go::F", "a::b/x.go::T.M", "x.go::", "::F", "/x.go::F", "C:/x.go::F", "C:x.go::F",
		`a\b.go::F`, "../x.go::F", "./x.go::F", "a//b::F", "a/::F", ".::F", "x.go::a..b", "x.go::$_.é",
		"a\x00b::F", "\xff::F", "x.go::\xff", "a:::F", "ab:::F", "x.go:::::F", "x.go::#p",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		p, sym, err := ParseKey(key)
		if err != nil {
			if memory.CodeOf(err) != memory.CodeInvalidParams {
				t.Fatalf("ParseKey(%q): %v is not invalid_params", key, err)
			}
			if p != "" || sym != "" {
				t.Fatalf("ParseKey(%q) returned %q, %q with an error", key, p, sym)
			}
			return
		}
		if p == "" || sym == "" || strings.Contains(sym, keySep) || !validSymbol(sym) {
			t.Fatalf("ParseKey(%q) = %q, %q", key, p, sym)
		}
		back := Key(p, sym)
		if back != key {
			t.Fatalf("Key(ParseKey(%q)) = %q", key, back)
		}
		if p2, sym2, err := ParseKey(back); err != nil || p2 != p || sym2 != sym {
			t.Fatalf("ParseKey(%q) again = %q, %q, %v", back, p2, sym2, err)
		}
	})
}
