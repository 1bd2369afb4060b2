package treesitter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/cairnhq/cairn/internal/treesitter/parsers"
)

// Language is a grammar. The numbers are those of
// scripts/treesitter/cairn.c.
type Language uint32

// The grammars in the module.
const (
	Python Language = 1 + iota
	JavaScript
	TypeScript
	TSX
	Rust
	Java
	C
)

// Languages lists every grammar.
var Languages = []Language{Python, JavaScript, TypeScript, TSX, Rust, Java, C}

// String is the grammar's name ("python", "tsx").
func (l Language) String() string {
	switch l {
	case Python:
		return "python"
	case JavaScript:
		return "javascript"
	case TypeScript:
		return "typescript"
	case TSX:
		return "tsx"
	case Rust:
		return "rust"
	case Java:
		return "java"
	case C:
		return "c"
	}
	return fmt.Sprintf("language(%d)", uint32(l))
}

// MaxBytes bounds the files Parse accepts: the module's memory is 32-bit,
// and a tree takes many times its file's size.
const MaxBytes = 64 << 20

// ErrTooLarge is returned for a file over MaxBytes.
var ErrTooLarge = errors.New("file too large for tree-sitter")

// StoppedError is returned for a parse that went over its budget of
// operations: error recovery on a badly broken file (binary data, another
// language) costs far more than parsing, so Parse gives up on it.
type StoppedError struct {
	// Offset is the byte the parse had reached.
	Offset int
}

func (e *StoppedError) Error() string {
	return fmt.Sprintf("tree-sitter stopped at byte %d: too many syntax errors", e.Offset)
}

// Options bound a parse.
type Options struct {
	// MaxErrorOps is how many parser operations may be spent while every
	// parse stack is recovering from a syntax error before Parse gives up
	// with a StoppedError; 0 gives up at the first check (tree-sitter
	// checks every 100 operations). Error recovery costs far more per
	// operation than parsing.
	MaxErrorOps int
}

// Parse parses src with a grammar. The tree it returns may hold ERROR and
// MISSING nodes (Root().HasError()): tree-sitter recovers from syntax
// errors. Parse is safe for concurrent use; each call uses its own module
// instance. An error means no tree: an unknown grammar, a file over
// MaxBytes, error recovery over its budget (StoppedError), or a failure
// inside the module (out of memory, a trap), which is reported, never
// panics, and discards that instance. The same bytes and options always
// give the same result.
func Parse(lang Language, src []byte, opts Options) (*Tree, error) {
	if lang < Python || lang > C {
		return nil, fmt.Errorf("unknown grammar %d", uint32(lang))
	}
	if len(src) > MaxBytes {
		return nil, ErrTooLarge
	}
	in := shared.get()
	t, err := in.parse(lang, src, opts)
	shared.put(in)
	return t, err
}

// grammar is what a Tree needs of its grammar: kind names by symbol and
// field numbers by name.
type grammar struct {
	kinds  []string
	fields map[string]uint8
}

// pool keeps idle module instances and the grammars read from them.
type pool struct {
	idle     sync.Pool // *instance; the garbage collector drops those left idle
	mu       sync.Mutex
	grammars [C + 1]*grammar
}

// shared is the process's pool. Instances are costly to create (the
// module's memory starts at 6 MB, filled from its data), so every parse
// in the process shares them; none exists until the first Parse.
var shared pool

// maxKeptMemory is the memory over which an instance is dropped after a
// parse rather than kept idle: a large file grows it (a 740 KB Python file
// to 20 MB), and wasm memory never shrinks.
const maxKeptMemory = 32 << 20

func (p *pool) get() *instance {
	if in, ok := p.idle.Get().(*instance); ok {
		return in
	}
	return &instance{pool: p}
}

func (p *pool) put(in *instance) {
	if in.broken || in.m == nil || len(*in.m.Xmemory().Slice()) > maxKeptMemory {
		return
	}
	p.idle.Put(in)
}

// grammar returns the grammar lang, reading its names from m the first
// time.
func (p *pool) grammar(m *parsers.Module, lang Language) (*grammar, error) {
	p.mu.Lock()
	g := p.grammars[lang]
	p.mu.Unlock()
	if g != nil {
		return g, nil
	}
	g, err := readGrammar(m, lang)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.grammars[lang] == nil {
		p.grammars[lang] = g
	}
	return p.grammars[lang], nil
}

// readGrammar reads a grammar's kind and field names from the module.
func readGrammar(m *parsers.Module, lang Language) (*grammar, error) {
	l := int32(lang)
	nsym := m.Xcairn_symbol_count(l)
	nfield := m.Xcairn_field_count(l)
	if nsym <= 0 || nsym > symbolError || nfield < 0 || nfield > 255 {
		return nil, fmt.Errorf("grammar %s has %d kinds and %d fields", lang, nsym, nfield)
	}
	g := &grammar{kinds: make([]string, nsym), fields: make(map[string]uint8, nfield)}
	for s := range nsym {
		g.kinds[s] = cString(m, m.Xcairn_symbol_name(l, s))
	}
	for f := int32(1); f <= nfield; f++ {
		if name := cString(m, m.Xcairn_field_name(l, f)); name != "" {
			g.fields[name] = uint8(f)
		}
	}
	return g, nil
}

// cString reads the NUL-terminated string at p in the module's memory.
func cString(m *parsers.Module, p int32) string {
	mem := *m.Xmemory().Slice()
	if p <= 0 || int(p) >= len(mem) {
		return ""
	}
	end := int(p)
	for end < len(mem) && mem[end] != 0 {
		end++
	}
	return string(mem[p:end])
}

// instance is one module instance: its memory, and tree-sitter's parser
// inside it. It parses one file at a time.
type instance struct {
	pool   *pool
	m      *parsers.Module
	broken bool // a parse failed inside the module: its state is unknown
}

// parse runs one parse; a panic inside the module (a trap) becomes an
// error and breaks the instance.
func (in *instance) parse(lang Language, src []byte, opts Options) (t *Tree, err error) {
	defer func() {
		if r := recover(); r != nil {
			in.broken = true
			t, err = nil, fmt.Errorf("tree-sitter failed: %v", r)
		}
	}()
	if in.m == nil {
		in.m = parsers.New(wasi{})
		in.m.X_initialize()
	}
	g, err := in.pool.grammar(in.m, lang)
	if err != nil {
		return nil, err
	}
	m := in.m
	// One allocation: cairn.c's CairnResult (20 bytes), then the source.
	buf := m.Xcairn_malloc(int32(len(src) + 20))
	if buf == 0 {
		in.broken = true
		return nil, errors.New("tree-sitter ran out of memory")
	}
	copy((*m.Xmemory().Slice())[buf+20:], src)
	n := uint32(m.Xcairn_parse(int32(lang), buf+20, int32(len(src)), int32(min(max(opts.MaxErrorOps, 0)/100, 1<<31-1)), buf))
	mem := *m.Xmemory().Slice()
	out := binary.LittleEndian.Uint32(mem[buf:])
	// mem[buf+4:buf+16] counts the parse's checks, those in error and
	// the errors: not used here.
	stopped := binary.LittleEndian.Uint32(mem[buf+16:])
	m.Xcairn_free(buf)
	switch {
	case n == ^uint32(0):
		in.broken = true
		return nil, errors.New("tree-sitter ran out of memory")
	case stopped != ^uint32(0):
		return nil, &StoppedError{Offset: int(stopped)}
	case n == 0 || out == 0:
		return nil, errors.New("tree-sitter returned no tree")
	}
	if end := uint64(out) + 16*uint64(n); end > uint64(len(mem)) {
		in.broken = true
		return nil, fmt.Errorf("tree-sitter gave %d nodes past its memory", n)
	}
	return decode(g, mem[out:uint64(out)+16*uint64(n)], n, len(src))
}

// decode reads n nodes of 16 bytes (cairn.c's CairnNode) and links each
// to its parent and previous sibling.
func decode(g *grammar, raw []byte, n uint32, size int) (*Tree, error) {
	nodes := make([]node, n)
	// open[d] is the innermost open node at depth d; last[d] its last
	// child so far.
	var open, last []int32
	for i := range nodes {
		b := raw[16*i : 16*i+16]
		nd := node{
			symbol: binary.LittleEndian.Uint16(b[0:]),
			field:  b[2],
			flags:  b[3],
			start:  binary.LittleEndian.Uint32(b[4:]),
			end:    binary.LittleEndian.Uint32(b[8:]),
			next:   int32(binary.LittleEndian.Uint32(b[12:])),
			parent: -1,
			prev:   -1,
		}
		if nd.next <= int32(i) || nd.next > int32(n) || nd.start > nd.end || int(nd.end) > size {
			return nil, fmt.Errorf("tree-sitter gave a malformed node %d", i)
		}
		for len(open) > 0 && nodes[open[len(open)-1]].next <= int32(i) {
			open, last = open[:len(open)-1], last[:len(last)-1]
		}
		if d := len(open); d > 0 {
			nd.parent, nd.prev = open[d-1], last[d-1]
			last[d-1] = int32(i)
		} else if i > 0 {
			return nil, fmt.Errorf("tree-sitter gave a second root at node %d", i)
		}
		nodes[i] = nd
		open, last = append(open, int32(i)), append(last, -1)
	}
	return &Tree{grammar: g, nodes: nodes}, nil
}

// wasi answers the module's WASI imports, which only tree-sitter's
// logging and timeouts reach (cairn uses neither): every call fails.
type wasi struct{}

const errNoSys = 52 // WASI's ENOSYS

func (wasi) Xclock_time_get(int32, int64, int32) int32  { return errNoSys }
func (wasi) Xfd_close(int32) int32                      { return errNoSys }
func (wasi) Xfd_seek(int32, int64, int32, int32) int32  { return errNoSys }
func (wasi) Xfd_write(int32, int32, int32, int32) int32 { return errNoSys }
