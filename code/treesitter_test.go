package code

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// tsCase is a well-formed file of one dialect and the symbols tree-sitter
// must find in it (Name Kind StartLine-EndLine, one a line).
type tsCase struct {
	path string
	src  string
	want string
	// regexOnly and astOnly are the known differences in names between
	// the regex fallback and tree-sitter on src, each with its reason.
	regexOnly, astOnly map[string]string
}

var tsCases = []tsCase{
	{
		path: "pkg/cache.py",
		src: `"""LRU cache."""
import functools

MAX_ENTRIES = 128
DEFAULT_TTL: float = 30.0
_log = None


# LRUCache keeps the most recent entries.
@dataclass(
    frozen=False,
)
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

type Vector = list[float]
`,
		want: `
MAX_ENTRIES constant 4-4
DEFAULT_TTL constant 5-5
LRUCache class 9-30
LRUCache.get method 17-20
LRUCache.size method 22-24
LRUCache.Stats class 26-30
LRUCache.Stats.ratio method 29-30
fetch function 33-36
typed function 40-40
Vector type 42-42
`,
		astOnly: map[string]string{"Vector": "the regex fallback has no pattern for Python 3.12 type statements"},
	},
	{
		path: "web/router.js",
		src: `// Helpers for the router.
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

  #secret() {}
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

export default function render(tpl) {
  return ` + "`<div>${tpl}</div>`" + `;
}

var legacy = function () {}, VERSION = "1";
`,
		want: `
MAX_ROUTES constant 4-4
Router class 7-32
Router.create method 12-12
Router.constructor method 14-16
Router.add method 18-21
Router.entries method 23-25
Router.size method 27-29
normalize function 34-36
handle function 38-40
ids function 42-45
render function 47-49
legacy function 51-51
`,
	},
	{
		path: "src/server.ts",
		src: `import type { Request } from "./http";

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
  onError: (err: Error) => void = (err) => console.error(err);

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

export abstract class Store {
  abstract get(key: string): Promise<string | undefined>;
  protected static key(k: string): string {
    return k.toLowerCase();
  }
}

export function createServer(port: number): Server<Handler> {
  return new Server(port);
}

declare function ambient(x: number): void;
export const compose = (...fns: Middleware[]): Middleware => (h) => h;
declare enum Level { Low, High }
`,
		want: `
DEFAULT_TIMEOUT_MS constant 3-3
Handler interface 5-8
Middleware type 10-10
Method type 12-15
Server class 17-33
Server.onError method 20-20
Server.constructor method 22-22
Server.listen method 25-27
Server.handle method 29-32
Store class 35-40
Store.get method 36-36
Store.key method 37-39
createServer function 42-44
compose function 47-47
Level type 48-48
`,
		astOnly: map[string]string{"Server.onError": "the field pattern stops at the '=' of the '=>' in the field's type"},
	},
	{
		path: "ui/List.tsx",
		src: `import React from "react";

export const PAGE_SIZE = 20;

interface Props {
  items: string[];
}

/** List renders items. */
export function List({ items }: Props) {
  return (
    <ul>
      {items.map((i) => (
        <li key={i}>{i}</li>
      ))}
    </ul>
  );
}

export const Item = ({ label }: { label: string }) => <span>{label}</span>;

export default class Page extends React.Component<Props> {
  render() {
    return <List items={this.props.items} />;
  }
}
`,
		want: `
PAGE_SIZE constant 3-3
Props interface 5-7
List function 9-18
Item function 20-20
Page class 22-26
Page.render method 23-25
`,
	},
	{
		path: "src/shapes.rs",
		src: `//! Shapes and their areas.
use std::fmt;

/// The largest number of sides.
pub const MAX_SIDES: u32 = 12;
static GREETING: &str = "hi";

/// A point in the plane.
#[derive(
    Debug, Clone, Copy,
)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

pub enum Shape {
    Circle { center: Point, radius: f64 },
    Polygon(Vec<Point>),
}

pub type Points = Vec<Point>;

pub trait Area {
    const UNIT: &'static str;
    type Output;
    fn area(&self) -> f64;
    fn describe(&self) -> String {
        format!("{} {}", self.area(), Self::UNIT)
    }
}

impl Area for Shape {
    const UNIT: &'static str = "m2";
    type Output = f64;

    fn area(&self) -> f64 {
        match self {
            Shape::Circle { radius, .. } => 3.14 * radius * radius,
            Shape::Polygon(_) => 0.0,
        }
    }
}

impl<T: Into<f64>> From<(T, T)> for Point {
    fn from((x, y): (T, T)) -> Self {
        Point { x: x.into(), y: y.into() }
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

extern "C" {
    fn abs(x: i32) -> i32;
}

pub async fn load(path: &str) -> std::io::Result<Vec<Point>> {
    fn helper() {}
    let _ = path;
    Ok(Vec::new())
}

pub(crate) unsafe fn r#match() {}
`,
		want: `
MAX_SIDES constant 4-5
GREETING constant 6-6
Point type 8-15
Shape type 17-20
Points type 22-22
Area interface 24-31
Area.UNIT constant 25-25
Area.area method 27-27
Area.describe method 28-30
Shape.UNIT constant 34-34
Shape.area method 37-42
Point.from method 46-48
Point.fmt method 52-54
geometry.distance function 58-60
load function 67-71
match function 73-73
`,
	},
	{
		path: "src/main/java/com/example/BoundedCache.java",
		src: `package com.example.cache;

import java.util.HashMap;
import java.util.Map;

/**
 * A bounded cache.
 */
@ThreadSafe
public class BoundedCache<K, V> implements Cache<K, V> {
    public static final int DEFAULT_CAPACITY = 16;
    private static final String NAME = "cache", KIND = "lru";
    private final Map<K, V> entries = new HashMap<>();

    public BoundedCache() {
        this(DEFAULT_CAPACITY);
    }

    public BoundedCache(int capacity) {
        this.capacity = capacity;
    }

    /** Returns the value for key, or null. */
    @Override
    public synchronized V get(K key) {
        return entries.get(key);
    }

    public <R> Map<K, R> mapValues(
            java.util.function.Function<V, R> fn) {
        Map<K, R> out = new HashMap<>();
        for (Map.Entry<K, V> e : entries.entrySet()) {
            out.put(e.getKey(), fn.apply(e.getValue()));
        }
        return out;
    }

    public enum Policy {
        LRU, LFU;

        public boolean evictsOldest() {
            return this == LRU;
        }
    }

    static final class Entry<K, V> {
        K key;
        V value;
    }
}

interface Cache<K, V> {
    int MAX_SIZE = 1 << 20;

    V get(K key);

    default boolean contains(K key) {
        return get(key) != null;
    }
}

record Pair<A, B>(A first, B second) {
    Pair {
        java.util.Objects.requireNonNull(first);
    }

    static <T> Pair<T, T> twin(T value) {
        return new Pair<>(value, value);
    }
}
`,
		want: `
BoundedCache class 6-50
BoundedCache.DEFAULT_CAPACITY constant 11-11
BoundedCache.KIND constant 12-12
BoundedCache.NAME constant 12-12
BoundedCache.BoundedCache method 19-21
BoundedCache.get method 23-27
BoundedCache.mapValues method 29-36
BoundedCache.Policy type 38-44
BoundedCache.Policy.evictsOldest method 41-43
BoundedCache.Entry class 46-49
Cache interface 52-60
Cache.MAX_SIZE constant 53-53
Cache.get method 55-55
Cache.contains method 57-59
Pair class 62-70
Pair.Pair method 63-65
Pair.twin method 67-69
`,
		astOnly: map[string]string{
			"BoundedCache.KIND": "the field pattern takes the first name of a declaration only",
			"Pair.Pair":         "the method pattern needs a '(': compact record constructors have none",
		},
	},
	{
		path: "lib/ring.c",
		src: `/* ring.c: a fixed-size ring buffer. */
#include <stdlib.h>
#include "ring.h"

#define RING_DEFAULT_SIZE 64
#define RING_MASK(r) ((r)->size - 1)

/* A ring of bytes. */
typedef struct ring {
    unsigned char *buf;
    size_t head, tail, size;
} ring_t;

typedef int (*ring_visit_fn)(unsigned char c, void *arg);

enum ring_status {
    RING_OK,
    RING_FULL,
};

struct ring_stats {
    long pushes;
};

static size_t ring_used(const ring_t *r);

ring_t *
ring_new(size_t size)
{
    ring_t *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->size = size ? size : RING_DEFAULT_SIZE;
    return r;
}

/* ring_push appends c; it fails when full. */
int ring_push(ring_t *r, unsigned char c)
{
    if (ring_used(r) == r->size)
        return RING_FULL;
    r->buf[r->head++ & RING_MASK(r)] = c;
    return RING_OK;
}

static size_t ring_used(const ring_t *r) {
    return r->head - r->tail;
}

#ifdef RING_DEBUG
void ring_dump(const ring_t *r) { (void)r; }
#endif

void (*ring_handler(int sig))(int) { return 0; }
`,
		want: `
RING_DEFAULT_SIZE constant 5-5
ring type 8-12
ring_t type 8-12
ring_visit_fn type 14-14
ring_status type 16-19
ring_stats type 21-23
ring_new function 27-35
ring_push function 37-44
ring_used function 46-48
ring_dump function 51-51
ring_handler function 54-54
`,
		astOnly: map[string]string{"ring_handler": "the function pattern cannot see through a function returning a function pointer"},
	},
}

func symbolLines(syms []Symbol) string {
	var b strings.Builder
	for _, s := range syms {
		fmt.Fprintf(&b, "%s %s %d-%d\n", s.Name, s.Kind, s.StartLine, s.EndLine)
	}
	return b.String()
}

func TestTreeSitterResolvers(t *testing.T) {
	for _, tc := range tsCases {
		t.Run(tc.path, func(t *testing.T) {
			src := []byte(tc.src)
			res := Resolve(tc.path, src)
			if res.Method != methodAST || res.Warning != "" {
				t.Fatalf("method %q, warning %q; want ast without a warning", res.Method, res.Warning)
			}
			if got, want := symbolLines(res.Symbols), strings.TrimLeft(tc.want, "\n"); got != want {
				t.Errorf("symbols:\n%s\nwant:\n%s", got, want)
			}
			checkResolution(t, tc.path, src, res)
			if again := Resolve(tc.path, src); !reflect.DeepEqual(res, again) {
				t.Errorf("a second resolution differs")
			}
		})
	}
}

// checkResolution verifies what Resolve promises of every resolution.
func checkResolution(t *testing.T, path string, src []byte, res Resolution) {
	t.Helper()
	lines := strings.Split(string(src), "\n")
	seen := map[string]bool{}
	for i, s := range res.Symbols {
		if !validSymbol(s.Name) || seen[s.Name] {
			t.Errorf("%s: bad or repeated name %q", path, s.Name)
		}
		seen[s.Name] = true
		if s.StartLine < 1 || s.EndLine < s.StartLine || s.EndLine > len(lines) {
			t.Errorf("%s: %s spans %d-%d of %d lines", path, s.Name, s.StartLine, s.EndLine, len(lines))
			continue
		}
		if s.Text != strings.Join(lines[s.StartLine-1:s.EndLine], "\n") {
			t.Errorf("%s: %s: Text is not its lines", path, s.Name)
		}
		if i > 0 && (res.Symbols[i-1].StartLine > s.StartLine ||
			res.Symbols[i-1].StartLine == s.StartLine && res.Symbols[i-1].Name >= s.Name) {
			t.Errorf("%s: %s out of order", path, s.Name)
		}
	}
}

// On the well-formed files above, the regex fallback finds the same names
// as tree-sitter, apart from the differences each case lists.
func TestTreeSitterRegexParity(t *testing.T) {
	for _, tc := range tsCases {
		t.Run(tc.path, func(t *testing.T) {
			lines := newSrcLines([]byte(tc.src))
			ast := Resolve(tc.path, []byte(tc.src))
			rx := finishSymbols(rxResolve(ast.Language, lines), lines)
			astNames, rxNames := map[string]bool{}, map[string]bool{}
			for _, s := range ast.Symbols {
				astNames[s.Name] = true
			}
			for _, s := range rx {
				rxNames[s.Name] = true
			}
			for n := range astNames {
				if !rxNames[n] && tc.astOnly[n] == "" {
					t.Errorf("tree-sitter finds %s, the regex fallback does not", n)
				}
			}
			for n := range rxNames {
				if !astNames[n] && tc.regexOnly[n] == "" {
					t.Errorf("the regex fallback finds %s, tree-sitter does not", n)
				}
			}
			for _, n := range slices.Sorted(maps.Keys(tc.astOnly)) {
				if !astNames[n] || rxNames[n] {
					t.Errorf("known difference %s (%s) no longer holds: fix the case", n, tc.astOnly[n])
				}
			}
			for _, n := range slices.Sorted(maps.Keys(tc.regexOnly)) {
				if astNames[n] || !rxNames[n] {
					t.Errorf("known difference %s (%s) no longer holds: fix the case", n, tc.regexOnly[n])
				}
			}
		})
	}
}

// Failure mode 1 for tree-sitter: a file with a syntax error falls back to
// the regex patterns, with a warning naming the file and the line.
func TestTreeSitterSyntaxErrorFallsBack(t *testing.T) {
	for _, tc := range []struct {
		path, src, line string
		want            []string // names the regex fallback still finds
	}{
		{"bad.py", "def ok():\n    pass\n\ndef broken(:\n    return 1\n", "line 4", []string{"ok", "broken"}},
		{"bad.js", "function ok() {}\nfunction broken( {\n  return 1;\n}\n", "line 2", []string{"ok"}},
		{"bad.ts", "export interface I { a: string }\nexport class C {\n  m(): void {\n}\n", "line", []string{"I", "C"}},
		{"bad.tsx", "export const A = () => <div>;\n", "line", nil},
		{"bad.rs", "fn ok() {}\nfn broken( {\n}\n", "line 2", []string{"ok"}},
		{"Bad.java", "class A {\n  void ok() {}\n  void broken( {}\n}\n", "line", []string{"A", "A.ok"}},
		{"bad.c", "int ok(void) { return 0; }\nint broken( { return 1; }\n", "line 2", []string{"ok"}},
	} {
		res := Resolve(tc.path, []byte(tc.src))
		if res.Method != methodRegex {
			t.Errorf("%s: method %q; want regex", tc.path, res.Method)
			continue
		}
		if !strings.Contains(res.Warning, "AST parsing failed for "+tc.path) || !strings.Contains(res.Warning, "syntax error") ||
			!strings.Contains(res.Warning, tc.line) || !strings.Contains(res.Warning, "using regex fallback") {
			t.Errorf("%s: warning %q", tc.path, res.Warning)
		}
		checkResolution(t, tc.path, []byte(tc.src), res)
		for _, n := range tc.want {
			if !slices.ContainsFunc(res.Symbols, func(s Symbol) bool { return s.Name == n }) {
				t.Errorf("%s: the fallback lost %s: %v", tc.path, n, symbolLines(res.Symbols))
			}
		}
	}
}

// Resolve may run on several goroutines at once; each parse has its own
// parser and tree.
func TestTreeSitterConcurrent(t *testing.T) {
	want := map[string]Resolution{}
	for _, tc := range tsCases {
		want[tc.path] = Resolve(tc.path, []byte(tc.src))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				tc := tsCases[(g+i)%len(tsCases)]
				if got := Resolve(tc.path, []byte(tc.src)); !reflect.DeepEqual(got, want[tc.path]) {
					errs <- tc.path
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for p := range errs {
		t.Errorf("%s: a concurrent resolution differs", p)
	}
}

// BenchmarkResolveTreeSitter resolves a few hundred lines of each
// dialect per op, with tree-sitter and (for comparison, on the same
// bytes) with the regex fallback.
func BenchmarkResolveTreeSitter(b *testing.B) {
	files := map[string][]byte{}
	total := 0
	for _, tc := range tsCases {
		// About 300 lines: the case repeated (names repeat, which costs
		// the dedupe a little, as in real files with overloads).
		reps := max(1, 300/strings.Count(tc.src, "\n"))
		files[tc.path] = []byte(strings.Repeat(tc.src, reps))
		total += reps * strings.Count(tc.src, "\n")
	}
	paths := slices.Sorted(maps.Keys(files))
	b.Run("ast", func(b *testing.B) {
		for b.Loop() {
			for _, p := range paths {
				if res := Resolve(p, files[p]); res.Method != methodAST {
					b.Fatalf("%s: %s", p, res.Warning)
				}
			}
		}
		b.ReportMetric(float64(total*b.N)/b.Elapsed().Seconds(), "lines/s")
	})
	b.Run("regex", func(b *testing.B) {
		for b.Loop() {
			for _, p := range paths {
				lines := newSrcLines(files[p])
				finishSymbols(rxResolve(LanguageOf(p), lines), lines)
			}
		}
		b.ReportMetric(float64(total*b.N)/b.Elapsed().Seconds(), "lines/s")
	})
}

// Syntax errors that no entity depends on leave a partial tree that is
// used, with a warning saying where they are; errors that could change an
// entity's name or lines, or hide a declaration, fall back to the regex
// patterns as before.
func TestTreeSitterPartialTree(t *testing.T) {
	for _, tc := range []struct {
		path, src string
		line      string // where the warning says the first error is
		want      string // the symbols; "" for the regex fallback
	}{
		// An error inside a function's body.
		{"a.py", "def ok():\n    pass\n\ndef f():\n    x = = 1\n    return x\n\nclass C:\n    def m(self):\n        pass\n", "line 5",
			"ok function 1-2\nf function 4-6\nC class 8-10\nC.m method 9-10\n"},
		{"a.js", "function ok() {}\nfunction f() {\n  let x = ;\n  return x;\n}\nclass C {\n  m() {}\n}\n", "line 3",
			"ok function 1-1\nf function 2-5\nC class 6-8\nC.m method 7-7\n"},
		{"a.ts", "export function f(): number {\n  const x: number = ;\n  return x;\n}\nexport interface I { a: string }\n", "line 2",
			"f function 1-4\nI interface 5-5\n"},
		{"a.rs", "fn ok() {}\nfn f() {\n    let x = ;\n    x\n}\nimpl S {\n    fn m(&self) {}\n}\n", "line 3",
			"ok function 1-1\nf function 2-5\nS.m method 7-7\n"},
		{"A.java", "class A {\n  void ok() {}\n  void f() {\n    int x = ;\n  }\n  void m() {}\n}\n", "line 4",
			"A class 1-7\nA.ok method 2-2\nA.f method 3-5\nA.m method 6-6\n"},
		{"a.c", "int ok(void) { return 0; }\nint f(void) {\n  int x = ;\n  return x;\n}\n#define LIMIT 8\n", "line 3",
			"ok function 1-1\nf function 2-5\nLIMIT constant 6-6\n"},
		// An error outside every entity, with no declaration on its lines
		// (a macro tree-sitter does not know).
		{"d.h", "extern int remove (const char *__filename) __THROW;\n#define LIMIT 8\nstruct s { int a; };\n", "line 1",
			"LIMIT constant 2-2\ns type 3-3\n"},
		// A definition swallowed by an unclosed parenthesis.
		{"b.py", "def f():\n    x = (\n\ndef g():\n    pass\n", "line 2", ""},
		// An error among a class's members.
		{"b.java", "class A {\n  void ok() {}\n  int ;\n  void m() {}\n}\n", "line 3", ""},
		{"c.py", "class A:\n    def m(self):\n        pass\n    x = = 2\n    def n(self):\n        pass\n", "line 4", ""},
		// A missing closing brace moves where blocks end.
		{"b.js", "function f() {\n  if (x) {\n    return 1;\n}\nfunction g() {}\n", "line 5: missing }", ""},
		// A block opened under #ifdef and closed under another: the
		// declarations inside are where the walker does not look.
		{"b.c", "#ifdef __cplusplus\nextern \"C\" {\n#endif\n#define LIMIT 8\nstruct s { int a; };\n#ifdef __cplusplus\n}\n#endif\n", "line 6", ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res := Resolve(tc.path, []byte(tc.src))
			checkResolution(t, tc.path, []byte(tc.src), res)
			if tc.want == "" {
				if res.Method != methodRegex || !strings.Contains(res.Warning, "AST parsing failed for "+tc.path+": syntax error at "+tc.line) {
					t.Errorf("method %s, warning %q; want the regex fallback for a syntax error at %s", res.Method, res.Warning, tc.line)
				}
				return
			}
			if want := "syntax error at " + tc.line + " in " + tc.path + ", " + partialTreeNote; res.Method != methodAST || res.Warning != want {
				t.Errorf("method %s, warning %q; want ast, %q", res.Method, res.Warning, want)
			}
			if got := symbolLines(res.Symbols); got != tc.want {
				t.Errorf("symbols:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestDescribeLines(t *testing.T) {
	for _, tc := range []struct {
		lines []int
		want  string
	}{
		{[]int{3}, "syntax error at line 3"},
		{[]int{3, 3}, "syntax error at line 3"},
		{[]int{3, 9}, "syntax errors at lines 3 and 9"},
		{[]int{3, 9, 12}, "syntax errors at lines 3, 9 and 12"},
		{[]int{3, 9, 12, 14, 20}, "syntax errors at lines 3, 9, 12 and 2 more"},
	} {
		if got := describeLines(tc.lines); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.lines, got, tc.want)
		}
	}
}
