package code_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/code"
)

// sym is what a test expects of a Symbol: everything but its Text, which
// checkSymbols verifies against the source.
type sym struct {
	name, kind string
	start, end int
}

func (s sym) String() string { return fmt.Sprintf("%s %s %d-%d", s.name, s.kind, s.start, s.end) }

func syms(res code.Resolution) []sym {
	var out []sym
	for _, s := range res.Symbols {
		out = append(out, sym{s.Name, s.Kind, s.StartLine, s.EndLine})
	}
	return out
}

// wantSymbols compares a resolution's symbols with want, line by line.
func wantSymbols(t *testing.T, res code.Resolution, want []sym) {
	t.Helper()
	got := syms(res)
	if slices.Equal(got, want) {
		return
	}
	var b strings.Builder
	for i := range max(len(got), len(want)) {
		var g, w sym
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		mark := "  "
		if g != w {
			mark = "!="
		}
		fmt.Fprintf(&b, "  %-40v %s %v\n", g, mark, w)
	}
	t.Errorf("symbols (got != want):\n%s", &b)
}

// checkSymbols verifies what Resolve promises of every resolution: names
// that ParseKey accepts, known kinds, lines inside the file, Text equal to
// those lines, sorted by StartLine then Name, no name twice.
func checkSymbols(t *testing.T, path string, src []byte, res code.Resolution) {
	t.Helper()
	lines := strings.Split(string(src), "\n")
	seen := map[string]bool{}
	for i, s := range res.Symbols {
		if _, _, err := code.ParseKey(code.Key("f", s.Name)); err != nil {
			t.Errorf("%s: symbol %q fails ParseKey: %v", path, s.Name, err)
		}
		switch s.Kind {
		case "function", "method", "type", "class", "interface", "constant":
		default:
			t.Errorf("%s: symbol %s has kind %q", path, s.Name, s.Kind)
		}
		if s.StartLine < 1 || s.EndLine < s.StartLine || s.EndLine > len(lines) {
			t.Errorf("%s: symbol %s spans lines %d-%d of %d", path, s.Name, s.StartLine, s.EndLine, len(lines))
			continue
		}
		if want := strings.Join(lines[s.StartLine-1:s.EndLine], "\n"); s.Text != want {
			t.Errorf("%s: symbol %s: Text %.80q is not lines %d-%d %.80q", path, s.Name, s.Text, s.StartLine, s.EndLine, want)
		}
		if seen[s.Name] {
			t.Errorf("%s: symbol %s appears twice", path, s.Name)
		}
		seen[s.Name] = true
		if i > 0 {
			p := res.Symbols[i-1]
			if p.StartLine > s.StartLine || p.StartLine == s.StartLine && p.Name >= s.Name {
				t.Errorf("%s: symbols out of order: %s (line %d) before %s (line %d)", path, p.Name, p.StartLine, s.Name, s.StartLine)
			}
		}
	}
	switch res.Method {
	case "ast":
		if res.Warning != "" && (!strings.HasPrefix(res.Warning, "syntax error") ||
			!strings.HasSuffix(res.Warning, "using the partial syntax tree")) {
			t.Errorf("%s: method ast with a warning %q", path, res.Warning)
		}
	case "regex":
		if res.Warning == "" {
			t.Errorf("%s: method regex without a warning", path)
		}
	default:
		t.Errorf("%s: method %q", path, res.Method)
	}
	if strings.Contains(res.Warning, "failed (") {
		t.Errorf("%s: the resolver panicked: %s", path, res.Warning)
	}
}

const goSample = `// Package shapes draws shapes.
package shapes

import "fmt"

// MaxSides bounds a polygon.
const MaxSides = 12

const (
	// Red is the first colour.
	Red = iota
	Green, Blue
	_
)

// Shape has an area.
type Shape interface {
	Area() float64
}

type (
	// Point is a point.
	Point struct{ X, Y float64 }
	Stack[T any] []T
)

// Area of a point is zero.
func (p Point) Area() float64 { return 0 }

// Move moves p.
func (p *Point) Move(dx, dy float64) {
	p.X += dx
	p.Y += dy
}

func (s *Stack[T]) Push(v T) { *s = append(*s, v) }

func (Stack[T]) Len() int { return 0 }

// New returns
// a point.
func New[T ~float64](x, y T) Point {
	return Point{float64(x), float64(y)}
}

func init() {}
func init() { fmt.Println() }

type Pair[K comparable, V any] struct {
	Key K
	Val V
}

func (p *Pair[K, V]) Swap() {}

type Alias = Point
`

func TestResolveGo(t *testing.T) {
	res := code.Resolve("shapes/shapes.go", []byte(goSample))
	if res.Language != "go" || res.Method != "ast" || res.Warning != "" {
		t.Fatalf("language %q, method %q, warning %q; want go, ast, none", res.Language, res.Method, res.Warning)
	}
	checkSymbols(t, "shapes.go", []byte(goSample), res)
	wantSymbols(t, res, []sym{
		{"MaxSides", "constant", 6, 7},
		{"Red", "constant", 10, 11},
		{"Blue", "constant", 12, 12},
		{"Green", "constant", 12, 12},
		{"Shape", "interface", 16, 19},
		{"Point", "type", 22, 23},
		{"Stack", "type", 24, 24},
		{"Point.Area", "method", 27, 28},
		{"Point.Move", "method", 30, 34},
		{"Stack.Push", "method", 36, 36},
		{"Stack.Len", "method", 38, 38},
		{"New", "function", 40, 44},
		{"init", "function", 47, 47}, // the last of several wins
		{"Pair", "type", 49, 52},
		{"Pair.Swap", "method", 54, 54},
		{"Alias", "type", 56, 56},
	})
	if s := res.Symbols[len(res.Symbols)-4]; s.Name != "init" || s.Text != "func init() { fmt.Println() }" {
		t.Errorf("init: %+v", s)
	}
	if s := res.Symbols[0]; s.Text != "// MaxSides bounds a polygon.\nconst MaxSides = 12" {
		t.Errorf("MaxSides text %q", s.Text)
	}
}

func TestResolveGoSyntaxErrorFallsBack(t *testing.T) {
	src := "package p\n\nfunc broken( {\n\treturn \"missing closing paren\"\n}\n\n// Fine is fine.\nfunc Fine() int {\n\treturn 1\n}\n"
	res := code.Resolve("pkg/broken.go", []byte(src))
	if res.Language != "go" || res.Method != "regex" {
		t.Fatalf("language %q, method %q; want go, regex", res.Language, res.Method)
	}
	if !strings.Contains(res.Warning, "AST parsing failed for pkg/broken.go") || !strings.Contains(res.Warning, "using regex fallback") {
		t.Errorf("warning %q", res.Warning)
	}
	checkSymbols(t, "broken.go", []byte(src), res)
	wantSymbols(t, res, []sym{
		{"broken", "function", 3, 5},
		{"Fine", "function", 7, 10},
	})
}

func TestResolveDeterministic(t *testing.T) {
	for path, src := range fallbackSamples() {
		a := code.Resolve(path, []byte(src))
		b := code.Resolve(path, []byte(strings.Clone(src)))
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two resolutions differ:\n%+v\n%+v", path, a, b)
		}
	}
	a, b := code.Resolve("x.go", []byte(goSample)), code.Resolve("x.go", []byte(goSample))
	if !reflect.DeepEqual(a, b) {
		t.Errorf("go: two resolutions differ")
	}
}

// fallbackSamples are realistic files of each language the regex
// fallback reads, by path.
func fallbackSamples() map[string]string {
	return map[string]string{
		"cache.py": `"""LRU cache."""
import functools

MAX_ENTRIES = 128
DEFAULT_TTL: float = 30.0
_log = None


# LRUCache keeps the most recent entries.
@dataclass
class LRUCache:
    """An LRU cache."""
    capacity: int = MAX_ENTRIES

    def get(self, key):
        def miss():
            return None
        return self._data.get(key, miss())

    @property
    def size(self) -> int:
        return len(self._data)

    class Stats:
        hits = 0

        def ratio(self):
            return self.hits


async def fetch(url, *, timeout=DEFAULT_TTL):
    """Fetch a URL."""
    return await get(url,
                     timeout)


if TYPE_CHECKING:
    def typed() -> None: ...
`,
		"router.js": `// Helpers for the router.
import { parse } from "./url.js";

export const MAX_ROUTES = 64;
const cache = new Map();

/**
 * Router dispatches requests.
 */
export class Router {
  #routes = [];
  static create = () => new Router();

  constructor(base) {
    this.base = base;
  }

  /** add registers a handler. */
  add(path, handler) {
    this.#routes.push({ path, handler });
  }

  async *entries() {
    yield* this.#routes;
  }

  get size() {
    return this.#routes.length;
  }
}

export function normalize(path) {
  return parse(path).pathname;
}

export const handle = async (req, res) => {
  res.end(req.url);
};

function* ids() {
  let i = 0;
  while (true) yield i++;
}
`,
		"server.ts": `import type { Request } from "./http";

export const DEFAULT_TIMEOUT_MS = 5_000;

/** Handler handles one request. */
export interface Handler {
  handle(req: Request): Promise<void>;
}

export type Middleware = (next: Handler) => Handler;

export enum Method {
  Get = "GET",
  Post = "POST",
}

@injectable()
export class Server<T extends Handler> implements Handler {
  private readonly routes = new Map<string, T>();

  constructor(private port: number) {}

  listen(port: number): void;
  listen(port?: number): void {
    this.port = port ?? this.port;
  }

  @log
  async handle(req: Request): Promise<void> {
    await this.routes.get(req.url)?.handle(req);
  }
}

declare function ambient(x: number): void;
`,
		"shapes.rs": `//! Shapes and their areas.
use std::fmt;

/// The largest number of sides.
pub const MAX_SIDES: u32 = 12;

/// A point in the plane.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

pub trait Area {
    fn area(&self) -> f64;
    fn describe(&self) -> String {
        format!("{}", self.area())
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

pub mod geometry {
    pub fn distance(a: super::Point, b: super::Point) -> f64 {
        ((a.x - b.x).powi(2) + (a.y - b.y).powi(2)).sqrt()
    }
}
`,
		"Cache.java": `package com.example.cache;

import java.util.HashMap;

/**
 * A bounded cache.
 */
@ThreadSafe
public class BoundedCache<K, V> {
    public static final int DEFAULT_CAPACITY = 16;
    private final HashMap<K, V> entries = new HashMap<>();

    public BoundedCache(int capacity) {
        this.capacity = capacity;
    }

    /** Returns the value for key, or null. */
    @Override
    public synchronized V get(K key) {
        return entries.get(key);
    }

    static final class Entry<K, V> {
        K key;
        V value;
    }
}

interface Cache<K, V> {
    int MAX_SIZE = 1 << 20;

    V get(K key);
}
`,
		"ring.c": `/* ring.c: a fixed-size ring buffer. */
#include <stdlib.h>

#define RING_DEFAULT_SIZE 64
#define RING_MASK(r) ((r)->size - 1)

/* A ring of bytes. */
typedef struct ring {
    unsigned char *buf;
    size_t head, tail, size;
} ring_t;

static size_t ring_used(const ring_t *r);

/* ring_push appends c; it fails when full. */
int ring_push(ring_t *r, unsigned char c)
{
    if (ring_used(r) == r->size)
        return -1;
    r->buf[r->head++ & RING_MASK(r)] = c;
    return 0;
}
`,
		"tasks.rb": `# Tasks.
module Tasks
  class Runner
    def run(task)
      task.call
    end
  end
end
`,
	}
}

func TestResolveRegexFallback(t *testing.T) {
	samples := fallbackSamples()
	for _, tc := range []struct {
		path, lang string
		want       []sym
	}{
		{"cache.py", "python", []sym{
			{"MAX_ENTRIES", "constant", 4, 4},
			{"DEFAULT_TTL", "constant", 5, 5},
			{"LRUCache", "class", 9, 28},
			{"LRUCache.get", "method", 15, 18},
			{"LRUCache.size", "method", 20, 22},
			{"LRUCache.Stats", "class", 24, 28},
			{"LRUCache.Stats.ratio", "method", 27, 28},
			{"fetch", "function", 31, 34},
			{"typed", "function", 38, 38},
		}},
		{"router.js", "javascript", []sym{
			{"MAX_ROUTES", "constant", 4, 4},
			{"Router", "class", 7, 30},
			{"Router.create", "method", 12, 12},
			{"Router.constructor", "method", 14, 16},
			{"Router.add", "method", 18, 21},
			{"Router.entries", "method", 23, 25},
			{"Router.size", "method", 27, 29},
			{"normalize", "function", 32, 34},
			{"handle", "function", 36, 38},
			{"ids", "function", 40, 43},
		}},
		{"server.ts", "typescript", []sym{
			{"DEFAULT_TIMEOUT_MS", "constant", 3, 3},
			{"Handler", "interface", 5, 8},
			{"Middleware", "type", 10, 10},
			{"Method", "type", 12, 15},
			{"Server", "class", 17, 32},
			{"Server.constructor", "method", 21, 21},
			{"Server.listen", "method", 24, 26},
			{"Server.handle", "method", 28, 31},
		}},
		{"shapes.rs", "rust", []sym{
			{"MAX_SIDES", "constant", 4, 5},
			{"Point", "type", 7, 12},
			{"Area", "interface", 14, 19},
			{"Area.area", "method", 15, 15},
			{"Area.describe", "method", 16, 18},
			{"Point.fmt", "method", 22, 24},
			{"geometry.distance", "function", 28, 30},
		}},
		{"Cache.java", "java", []sym{
			{"BoundedCache", "class", 5, 27},
			{"BoundedCache.DEFAULT_CAPACITY", "constant", 10, 10},
			{"BoundedCache.BoundedCache", "method", 13, 15},
			{"BoundedCache.get", "method", 17, 21},
			{"BoundedCache.Entry", "class", 23, 26},
			{"Cache", "interface", 29, 33},
			{"Cache.MAX_SIZE", "constant", 30, 30},
			{"Cache.get", "method", 32, 32},
		}},
		{"ring.c", "c", []sym{
			{"RING_DEFAULT_SIZE", "constant", 4, 4},
			{"ring", "type", 7, 11},
			{"ring_t", "type", 7, 11},
			{"ring_push", "function", 15, 22},
		}},
		// The generic patterns do not nest, and a block without braces
		// ends by indentation: Ruby's "end" lines are left out.
		{"tasks.rb", "", []sym{
			{"Tasks", "class", 2, 7},
			{"Runner", "class", 3, 6},
			{"run", "function", 4, 5},
		}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			src := []byte(samples[tc.path])
			res := code.ResolveRegex(tc.path, src)
			if res.Language != tc.lang || res.Method != "regex" {
				t.Fatalf("language %q, method %q; want %q, regex", res.Language, res.Method, tc.lang)
			}
			if tc.lang == "" {
				if !strings.Contains(res.Warning, "unknown language for "+tc.path) {
					t.Errorf("warning %q", res.Warning)
				}
			} else if !strings.Contains(res.Warning, "no AST parser for "+tc.lang) {
				t.Errorf("warning %q", res.Warning)
			}
			checkSymbols(t, tc.path, src, res)
			wantSymbols(t, res, tc.want)
		})
	}
}

// Bad input: Resolve never panics and keeps its promises on invalid
// UTF-8, binary data, huge lines, deep nesting and unterminated strings
// and comments, in every language.
func TestResolveBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	binary := make([]byte, 64<<10)
	for i := range binary {
		binary[i] = byte(rng.Uint32())
	}
	huge := bytes.Repeat([]byte("x"), 1<<20)
	inputs := map[string][]byte{
		"empty":          nil,
		"newlines":       bytes.Repeat([]byte("\n"), 10000),
		"crlf":           []byte("def f():\r\n    pass\r\nclass A {\r\n}\r\n"),
		"invalid utf-8":  []byte("\xff\xfe def \xc3( class \xe2\x82 {\n func \xc0\xaf() {}\nfn \x80x() {}\n"),
		"invalid names":  []byte("def caf\xe9():\n    pass\nfunction \xff() {}\nclass A\xff {}\n"),
		"binary":         binary,
		"nul bytes":      []byte("func f() {\x00}\x00\x00def g(\x00):\n"),
		"huge line":      huge,
		"huge decl line": append([]byte("def f("), append(bytes.Repeat([]byte("a, "), 1<<15), "):\n    pass\nfunction g() {}\n"...)...),
		"deep braces":    bytes.Repeat([]byte("{"), 50000),
		"deep parens":    append([]byte("x = "), bytes.Repeat([]byte("("), 50000)...),
		"close braces":   bytes.Repeat([]byte("}\n"), 5000),
		"open comment":   []byte("/* never closed\nfunction f() {}\n"),
		"open string":    []byte("x = \"never closed\nfunction f() {}\n'''\ndef g(): pass\n"),
		"open raw":       []byte("s := `never closed\nfunc f() {}\n"),
		"many decls":     bytes.Repeat([]byte("def f(): pass\nfunction f() {}\nfn f() {}\nint f(void) {}\nfunc f() {}\n"), 500),
		"nested classes": bytes.Repeat([]byte("class A {\n"), 2000),
		"python indents": []byte(strings.Repeat(" ", 100000) + "def f():\n\tpass\n  \t def g(): pass\n"),
	}
	for name, src := range inputs {
		for _, path := range []string{"x.go", "x.py", "x.js", "x.ts", "x.tsx", "x.rs", "x.java", "x.c", "x.txt"} {
			res := code.Resolve(path, src)
			checkSymbols(t, name+" as "+path, src, res)
		}
	}
}

// Regressions of the regex fallback, each found by comparing it with
// tree-sitter on real files (the Python standard library, node_modules,
// /usr/include).
func TestResolveRegexFallbackEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name, path, src string
		want            []sym
	}{
		{"comment at column 0 inside a class", "a.py",
			"class A:\n    def a(self):\n        pass\n## def old(self):\n##     pass\n    def b(self):\n        pass\n",
			[]sym{{"A", "class", 1, 7}, {"A.a", "method", 2, 3}, {"A.b", "method", 4, 7}}}, // the comments above b are its own
		{"def under if in a class body", "a.py",
			"class A:\n    def a(self):\n        pass\n\n    if DEBUG:\n        def b(self):\n            pass\n",
			[]sym{{"A", "class", 1, 7}, {"A.a", "method", 2, 3}, {"A.b", "method", 6, 7}}},
		{"backslash-newline inside a string", "a.py",
			"def a():\n    warn(\"x \\\n         y\", W)\n\ndef b():\n    pass\n",
			[]sym{{"a", "function", 1, 3}, {"b", "function", 5, 6}}},
		{"backslash continuation is not a statement", "a.py",
			"class A:\n    x = 1 + \\\n2\n    def m(self):\n        pass\n",
			[]sym{{"A", "class", 1, 5}, {"A.m", "method", 4, 5}}},
		{"braces in a regular expression", "a.js",
			"class T {\n  static is(s) {\n    return /\\{[^}]+\\}/.test(s);\n  }\n  other() {\n    return a / b / c;\n  }\n}\n",
			[]sym{{"T", "class", 1, 8}, {"T.is", "method", 2, 4}, {"T.other", "method", 5, 7}}},
		{"generator method after a method", "a.js",
			"class G {\n  a() {}\n  *gen() {}\n}\n",
			[]sym{{"G", "class", 1, 4}, {"G.a", "method", 2, 2}, {"G.gen", "method", 3, 3}}},
		{"signatures are not entities, abstract methods are", "a.ts",
			"export declare class D {\n  m(a: string): void;\n  abstract n(): void;\n  f = () => 1;\n}\n",
			[]sym{{"D", "class", 1, 5}, {"D.n", "method", 3, 3}, {"D.f", "method", 4, 4}}},
		{"a #define with only a comment has no value", "a.h",
			"#define FLAG /* set */\n#define LIMIT 8 /* max */\n",
			[]sym{{"LIMIT", "constant", 2, 2}}},
		{"macro bodies are not declarations", "a.h",
			"#define DECLARE(n) \\\nstruct n##_s { \\\n  int x; \\\n}\nint f(void) {\n  return 0;\n}\n",
			[]sym{{"f", "function", 5, 7}}},
		{"typedef with an attribute", "a.h",
			"typedef struct {\n  int a;\n} __attribute__((packed)) packed_t;\n",
			[]sym{{"packed_t", "type", 1, 3}}},
		{"a function returning a function pointer", "a.c",
			"void (*handler(int sig))(int) {\n  return 0;\n}\n",
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := code.ResolveRegex(tc.path, []byte(tc.src))
			checkSymbols(t, tc.path, []byte(tc.src), res)
			wantSymbols(t, res, tc.want)
		})
	}
}
