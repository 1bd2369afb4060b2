package treesitter

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// samples holds a small well-formed file per grammar, the kind of its
// root and the outline expected of it (see outline).
var samples = []struct {
	lang    Language
	src     string
	root    string
	outline string
}{
	{Python, "class A:\n    def f(self):\n        return 1\n", "module",
		"module[class_definition[name:identifier body:block[function_definition[name:identifier parameters:parameters[identifier] body:block[return_statement[integer]]]]]]"},
	{JavaScript, "export class A { m() { return 1; } }\n", "program",
		"program[export_statement[declaration:class_declaration[name:identifier body:class_body[member:method_definition[name:property_identifier parameters:formal_parameters body:statement_block[return_statement[number]]]]]]]"},
	{TypeScript, "interface I { a: string }\n", "program",
		"program[interface_declaration[name:type_identifier body:interface_body[property_signature[name:property_identifier type:type_annotation[predefined_type]]]]]"},
	{TSX, "const A = () => <div>{x}</div>;\n", "program",
		"program[lexical_declaration[variable_declarator[name:identifier value:arrow_function[parameters:formal_parameters body:jsx_element[open_tag:jsx_opening_element[name:identifier] jsx_expression[identifier] close_tag:jsx_closing_element[name:identifier]]]]]]"},
	{Rust, "impl<T> S<T> { fn f(&self) {} }\n", "source_file",
		"source_file[impl_item[type_parameters:type_parameters[type_parameter[name:type_identifier]] type:generic_type[type:type_identifier type_arguments:type_arguments[type_identifier]] body:declaration_list[function_item[name:identifier parameters:parameters[self_parameter[self]] body:block]]]]"},
	{Java, "class A { static final int X = 1; }\n", "program",
		"program[class_declaration[name:identifier body:class_body[field_declaration[modifiers type:integral_type declarator:variable_declarator[name:identifier value:decimal_integer_literal]]]]]"},
	{C, "#define N 3\nint f(void) { return N; }\n", "translation_unit",
		"translation_unit[preproc_def[name:identifier value:preproc_arg] function_definition[type:primitive_type declarator:function_declarator[declarator:identifier parameters:parameter_list[parameter_declaration[type:primitive_type]]] body:compound_statement[return_statement[identifier]]]]"},
}

// outline writes the named nodes under n as kind[children], each prefixed
// with its field name.
func outline(n Node) string {
	var b strings.Builder
	var walk func(n Node)
	walk = func(n Node) {
		if id := n.FieldID(); id != 0 {
			for name, fid := range n.t.grammar.fields {
				if fid == id {
					b.WriteString(name + ":")
				}
			}
		}
		b.WriteString(n.Kind())
		if n.NamedChildCount() == 0 {
			return
		}
		b.WriteString("[")
		for i, c := range n.NamedChildren() {
			if i > 0 {
				b.WriteString(" ")
			}
			walk(c)
		}
		b.WriteString("]")
	}
	walk(n)
	return b.String()
}

func TestParseEveryGrammar(t *testing.T) {
	for _, tc := range samples {
		t.Run(tc.lang.String(), func(t *testing.T) {
			tree, err := Parse(tc.lang, []byte(tc.src), Options{})
			if err != nil {
				t.Fatal(err)
			}
			root := tree.Root()
			if root.Kind() != tc.root || root.HasError() {
				t.Fatalf("root %s (error %v), want %s without errors", root.Kind(), root.HasError(), tc.root)
			}
			if got := outline(root); got != tc.outline {
				t.Errorf("outline\n got %s\nwant %s", got, tc.outline)
			}
			checkTree(t, tree, len(tc.src))
		})
	}
}

// checkTree verifies the links of every node: children lie inside their
// parent, in order, and each navigation agrees with the others.
func checkTree(t *testing.T, tree *Tree, size int) {
	t.Helper()
	for i := range tree.Len() {
		n := Node{tree, int32(i)}
		if n.StartByte() > n.EndByte() || n.EndByte() > size {
			t.Fatalf("node %d (%s) spans %d-%d of %d bytes", i, n.Kind(), n.StartByte(), n.EndByte(), size)
		}
		var prev Node
		k := 0
		for c := n.FirstChild(); !c.IsNull(); c = c.NextSibling() {
			if c.Parent() != n || c.PrevSibling() != prev {
				t.Fatalf("node %d: child %d has parent %v, previous %v", i, c.i, c.Parent(), c.PrevSibling())
			}
			if c.StartByte() < n.StartByte() || c.EndByte() > n.EndByte() ||
				!prev.IsNull() && c.StartByte() < prev.EndByte() {
				t.Fatalf("node %d: child %s %d-%d out of place", i, c.Kind(), c.StartByte(), c.EndByte())
			}
			if k < 64 && n.Child(k) != c { // Child is linear in k
				t.Fatalf("node %d: Child(%d) is not the %d-th child", i, k, k)
			}
			prev, k = c, k+1
		}
		if n.ChildCount() != k || k < 64 && !n.Child(k).IsNull() {
			t.Fatalf("node %d: ChildCount %d, counted %d", i, n.ChildCount(), k)
		}
	}
}

func TestNullNode(t *testing.T) {
	var n Node
	if !n.IsNull() || n.Kind() != "" || n.HasError() || !n.Parent().IsNull() || !n.FirstChild().IsNull() ||
		n.ChildCount() != 0 || !n.ChildByFieldName("name").IsNull() || n.NamedChildren() != nil {
		t.Error("the null node has content")
	}
	var tree *Tree
	if !tree.Root().IsNull() || tree.FieldID("name") != 0 {
		t.Error("a nil tree has a root")
	}
}

// A syntax error gives a tree with ERROR or MISSING nodes, not an error.
func TestSyntaxErrorTree(t *testing.T) {
	for _, tc := range []struct {
		lang Language
		src  string
	}{
		{Python, "def f(:\n    pass\n"},
		{JavaScript, "function f( {\n"},
		{C, "int f( { return 1; }\n"},
		{Rust, "fn f() {\n"},
	} {
		tree, err := Parse(tc.lang, []byte(tc.src), Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.lang, err)
		}
		if !tree.Root().HasError() {
			t.Errorf("%s: %q parsed without an error", tc.lang, tc.src)
		}
		found := false
		for i := range tree.Len() {
			n := Node{tree, int32(i)}
			found = found || n.IsError() || n.IsMissing()
		}
		if !found {
			t.Errorf("%s: no ERROR or MISSING node", tc.lang)
		}
		checkTree(t, tree, len(tc.src))
	}
}

func TestParseRefuses(t *testing.T) {
	if _, err := Parse(Language(0), []byte("x"), Options{}); err == nil {
		t.Error("grammar 0 parsed")
	}
	if _, err := Parse(C+1, []byte("x"), Options{}); err == nil {
		t.Error("an unknown grammar parsed")
	}
	if _, err := Parse(C, make([]byte, MaxBytes+1), Options{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a file over MaxBytes: %v", err)
	}
}

// Bad input never panics, and gives a well-formed tree or, when error
// recovery goes over its budget, a StoppedError.
func TestParseBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	binary := make([]byte, 32<<10)
	for i := range binary {
		binary[i] = byte(rng.Uint32())
	}
	inputs := map[string][]byte{
		"empty":        nil,
		"binary":       binary,
		"nul bytes":    []byte("def f():\x00\n\x00}"),
		"deep braces":  bytes.Repeat([]byte("{"), 20000),
		"deep parens":  append([]byte("x = "), bytes.Repeat([]byte("("), 20000)...),
		"invalid utf8": []byte("def caf\xe9():\n  pass\nfn \xff() {}\n"),
	}
	for name, src := range inputs {
		for _, lang := range Languages {
			tree, err := Parse(lang, src, Options{})
			var stopped *StoppedError
			switch {
			case errors.As(err, &stopped):
				if stopped.Offset < 0 || stopped.Offset > len(src) {
					t.Errorf("%s as %s: stopped at byte %d of %d", name, lang, stopped.Offset, len(src))
				}
			case err != nil:
				t.Errorf("%s as %s: %v", name, lang, err)
			default:
				checkTree(t, tree, len(src))
			}
		}
	}
}

// Parses may run on several goroutines at once, each on its own
// instance, and give the same trees as one at a time.
func TestParseConcurrent(t *testing.T) {
	want := map[Language]string{}
	for _, tc := range samples {
		tree, err := Parse(tc.lang, []byte(tc.src), Options{})
		if err != nil {
			t.Fatal(err)
		}
		want[tc.lang] = outline(tree.Root())
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 6 {
		wg.Go(func() {
			for i := range 30 {
				tc := samples[(g+i)%len(samples)]
				tree, err := Parse(tc.lang, []byte(tc.src), Options{})
				if err != nil {
					errs <- err.Error()
					return
				}
				if got := outline(tree.Root()); got != want[tc.lang] {
					errs <- fmt.Sprintf("%s: %s", tc.lang, got)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// The same bytes give the same result whatever was parsed before on the
// same instance: where a parse over its budget stops included.
func TestParseDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	garbage := make([]byte, 4<<10)
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	first := map[Language]string{}
	for round := range 3 {
		for _, lang := range Languages {
			// Parses of other sizes in between shift any state kept
			// across parses.
			if _, err := Parse(lang, bytes.Repeat([]byte("x "), 37*round+1), Options{}); err != nil {
				var stopped *StoppedError
				if !errors.As(err, &stopped) {
					t.Fatal(err)
				}
			}
			tree, err := Parse(lang, garbage, Options{})
			got := fmt.Sprint(err)
			if err == nil {
				got = outline(tree.Root())
			}
			if round == 0 {
				first[lang] = got
			} else if got != first[lang] {
				t.Errorf("%s, round %d: %s; first %s", lang, round, got, first[lang])
			}
		}
	}
}
