//go:build treesitter && cgo

package code

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unsafe"

	sitter "github.com/tree-sitter/go-tree-sitter"
	tsc "github.com/tree-sitter/tree-sitter-c/bindings/go"
	tsjava "github.com/tree-sitter/tree-sitter-java/bindings/go"
	tsjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tspython "github.com/tree-sitter/tree-sitter-python/bindings/go"
	tsrust "github.com/tree-sitter/tree-sitter-rust/bindings/go"
	tsts "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// astResolver returns the tree-sitter parser for a dialect other than Go,
// or nil for a dialect it does not know. Each call of the returned parser
// makes its own tree-sitter parser and tree and frees both before it
// returns, so it is safe for concurrent use.
func astResolver(dialect string) astParser {
	var (
		language func() unsafe.Pointer
		walk     func(w *tsWalker, root *sitter.Node)
		lang     = dialect
	)
	switch dialect {
	case langPython:
		language, walk = tspython.Language, (*tsWalker).python
	case langJavaScript:
		language, walk = tsjs.Language, (*tsWalker).javascript
	case langTypeScript:
		language, walk = tsts.LanguageTypescript, (*tsWalker).javascript
	case dialectTSX:
		language, walk, lang = tsts.LanguageTSX, (*tsWalker).javascript, langTypeScript
	case langRust:
		language, walk = tsrust.Language, (*tsWalker).rust
	case langJava:
		language, walk = tsjava.Language, (*tsWalker).java
	case langC:
		language, walk = tsc.Language, (*tsWalker).c
	default:
		return nil
	}
	return func(lines *srcLines) ([]Symbol, error) {
		return tsParse(lines, lang, sitter.NewLanguage(language()), walk)
	}
}

// tsMaxBytes bounds the files given to tree-sitter, whose offsets are 32
// bits wide; larger files go to the regex fallback.
const tsMaxBytes = 1 << 30

// tsChunk is how many bytes tree-sitter reads at a time.
const tsChunk = 16 << 10

// tsParse parses a file with a grammar and walks its tree. A tree with a
// syntax error (an ERROR or a MISSING node anywhere) is an error, so that
// Resolve falls back to the regex patterns.
func tsParse(lines *srcLines, lang string, language *sitter.Language, walk func(*tsWalker, *sitter.Node)) ([]Symbol, error) {
	if len(lines.src) > tsMaxBytes {
		return nil, fmt.Errorf("file of %d bytes is too large for tree-sitter", len(lines.src))
	}
	parser := sitter.NewParser()
	defer parser.Close()
	if err := parser.SetLanguage(language); err != nil {
		return nil, fmt.Errorf("loading the %s grammar: %w", lang, err)
	}
	// Parser.Parse answers every read with the whole rest of the file,
	// which the binding copies into C memory kept until the parse ends;
	// error recovery re-reads, so a broken 1 MB file can cost tens of
	// megabytes of copies. Reading in chunks bounds each copy. And since a
	// tree with an error is refused anyway, stop as soon as every parse
	// stack is in error (tree-sitter checks at fixed operation counts, so
	// where it stops depends only on src).
	src := lines.src
	stopped := -1
	tree := parser.ParseWithOptions(func(i int, _ sitter.Point) []byte {
		if i < 0 || i >= len(src) {
			return nil
		}
		return src[i:min(len(src), i+tsChunk)]
	}, nil, &sitter.ParseOptions{ProgressCallback: func(st sitter.ParseState) bool {
		if st.HasError {
			stopped = int(st.CurrentByteOffset)
			return true
		}
		return false
	}})
	if tree == nil {
		if stopped >= 0 {
			return nil, fmt.Errorf("syntax error at or before line %d", lines.lineOf(stopped))
		}
		return nil, errors.New("tree-sitter returned no tree")
	}
	defer tree.Close()
	root := tree.RootNode()
	if root.HasError() {
		return nil, tsSyntaxError(lines, root)
	}
	cursor := root.Walk()
	defer cursor.Close()
	w := &tsWalker{lines: lines, lang: lang, language: language, cursor: cursor, fields: map[string]uint16{}}
	walk(w, root)
	return w.out, nil
}

// tsSyntaxError describes the first ERROR or MISSING node of a tree.
func tsSyntaxError(lines *srcLines, n *sitter.Node) error {
	for depth := 0; depth < 1000; depth++ {
		if n.IsError() || n.IsMissing() {
			break
		}
		var next *sitter.Node
		for i := uint(0); i < n.ChildCount(); i++ {
			if c := n.Child(i); c != nil && (c.HasError() || c.IsError() || c.IsMissing()) {
				next = c
				break
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	line := lines.lineOf(int(n.StartByte()))
	if n.IsMissing() {
		return fmt.Errorf("syntax error at line %d: missing %s", line, n.Kind())
	}
	return fmt.Errorf("syntax error at line %d", line)
}

// tsWalker collects the symbols of one tree.
type tsWalker struct {
	lines    *srcLines
	lang     string
	language *sitter.Language
	cursor   *sitter.TreeCursor
	fields   map[string]uint16 // field ids by name, looked up once
	out      []Symbol
}

// field returns n's child in the named field, or nil.
func (w *tsWalker) field(n *sitter.Node, name string) *sitter.Node {
	if n == nil {
		return nil
	}
	id, ok := w.fields[name]
	if !ok {
		id = w.language.FieldIdForName(name)
		w.fields[name] = id
	}
	if id == 0 {
		return nil
	}
	return n.ChildByFieldId(id)
}

// children returns n's named children.
func (w *tsWalker) children(n *sitter.Node) []sitter.Node {
	if n == nil || n.NamedChildCount() == 0 {
		return nil
	}
	return n.NamedChildren(w.cursor)
}

// text returns the source text of n ("" for nil).
func (w *tsWalker) text(n *sitter.Node) string {
	if n == nil {
		return ""
	}
	s, e := int(n.StartByte()), int(n.EndByte())
	if s < 0 || e > len(w.lines.src) || s > e {
		return ""
	}
	return string(w.lines.src[s:e])
}

// add records a symbol whose declaration is the node span: it starts at
// the comments, attributes and decorators directly above span and ends on
// span's last line.
func (w *tsWalker) add(name, kind string, span *sitter.Node) {
	if name == "" || span == nil {
		return
	}
	start := int(span.StartByte())
	startLine := w.leadingStart(span, w.lines.lineOf(start))
	endLine := w.lines.endLineOf(start, int(span.EndByte()))
	w.out = append(w.out, Symbol{Name: name, Kind: kind, StartLine: startLine, EndLine: max(endLine, startLine)})
}

// tsLeadingKinds are the node kinds that belong to the declaration below
// them when nothing but white space separates them.
var tsLeadingKinds = map[string]bool{
	"comment": true, "line_comment": true, "block_comment": true, // comments of every grammar
	"attribute_item": true, // Rust #[...]
	"decorator":      true, // TypeScript decorators of class members
}

// leadingStart moves the first line of n up over the comment, attribute
// and decorator siblings directly above it (each alone on its first line,
// no blank line between), then over the comment lines above those as the
// regex fallback does.
func (w *tsWalker) leadingStart(n *sitter.Node, line int) int {
	for p := n.PrevNamedSibling(); p != nil && tsLeadingKinds[p.Kind()]; p = p.PrevNamedSibling() {
		ps := int(p.StartByte())
		if w.lines.endLineOf(ps, int(p.EndByte())) < line-1 {
			break
		}
		pl := w.lines.lineOf(ps)
		if len(trimSpaceBytes(w.lines.src[w.lines.starts[pl-1]:ps])) != 0 {
			break // a comment trailing code
		}
		line = min(line, pl)
	}
	return w.lines.withLeadingComments(w.lang, line)
}

// ---- Python

// pyConst is the name of a module-level constant, as the regex fallback
// has it.
var pyConst = regexp.MustCompile(`^_*[A-Z][A-Z0-9_]*$`)

// pyNested are the compound statements whose blocks may hold definitions
// of the enclosing scope ("if TYPE_CHECKING:", "try: ... except:").
var pyNested = map[string]bool{
	"block": true, "if_statement": true, "elif_clause": true, "else_clause": true,
	"try_statement": true, "except_clause": true, "except_group_clause": true, "finally_clause": true,
	"with_statement": true, "for_statement": true, "while_statement": true,
	"match_statement": true, "case_clause": true,
}

// python resolves a module: functions, classes (nested ones named
// "Outer.Inner"), methods ("Class.method"), module-level constants
// (UPPER_CASE names assigned) and type aliases ("type X = ..."). Nothing
// inside a function body is an entity.
func (w *tsWalker) python(root *sitter.Node) {
	w.pyScope(root, "", true)
}

// pyScope resolves the statements of a module (top) or class body (prefix
// "Class.").
func (w *tsWalker) pyScope(n *sitter.Node, prefix string, top bool) {
	for _, c := range w.children(n) {
		switch c.Kind() {
		case "decorated_definition":
			w.pyDef(w.field(&c, "definition"), &c, prefix)
		case "function_definition", "class_definition":
			w.pyDef(&c, &c, prefix)
		case "expression_statement":
			if !top {
				continue
			}
			for _, a := range w.children(&c) {
				if a.Kind() != "assignment" {
					continue
				}
				left := w.field(&a, "left")
				if left != nil && left.Kind() == "identifier" && w.field(&a, "right") != nil &&
					pyConst.MatchString(w.text(left)) {
					w.add(w.text(left), kindConstant, &c)
				}
			}
		case "type_alias_statement":
			if top {
				w.add(w.text(firstIdentifier(w.field(&c, "left"))), kindType, &c)
			}
		default:
			if pyNested[c.Kind()] {
				w.pyScope(&c, prefix, false)
			}
		}
	}
}

// firstIdentifier returns the first identifier at or under n, following
// first named children: Alias in "type Alias[T] = ...".
func firstIdentifier(n *sitter.Node) *sitter.Node {
	for depth := 0; n != nil && depth < 32; depth++ {
		if n.Kind() == "identifier" {
			return n
		}
		if n.NamedChildCount() == 0 {
			return nil
		}
		n = n.NamedChild(0)
	}
	return nil
}

// pyDef records a function or class definition d, declared by span (d or
// its decorated_definition).
func (w *tsWalker) pyDef(d, span *sitter.Node, prefix string) {
	if d == nil {
		return
	}
	name := w.text(w.field(d, "name"))
	switch d.Kind() {
	case "function_definition":
		kind := kindFunction
		if prefix != "" {
			kind = kindMethod
		}
		w.add(prefix+name, kind, span)
	case "class_definition":
		w.add(prefix+name, kindClass, span)
		if name != "" {
			w.pyScope(w.field(d, "body"), prefix+name+".", false)
		}
	}
}

// ---- JavaScript, TypeScript and TSX

// jsConst is the name of a constant, as the regex fallback has it.
var jsConst = regexp.MustCompile(`^_*[A-Z][A-Z0-9_$]*$`)

// jsFuncValues are the initialisers that make a variable or a class field
// a function.
var jsFuncValues = map[string]bool{
	"arrow_function": true, "function_expression": true, "function": true,
	"generator_function": true,
}

// javascript resolves a program's top level: functions (declared, or
// arrow and function expressions assigned to a variable), classes and
// their methods ("Class.method", including fields holding functions and
// abstract methods), UPPER_CASE constants, and for TypeScript interfaces,
// type aliases and enums. Bodiless signatures (overloads, "declare
// function") are not entities, and neither are namespace members.
func (w *tsWalker) javascript(root *sitter.Node) {
	for _, c := range w.children(root) {
		switch c.Kind() {
		case "export_statement":
			w.jsDecl(w.field(&c, "declaration"), &c)
		default:
			w.jsDecl(&c, &c)
		}
	}
}

// jsDecl records a top-level declaration d, spanning span (d, or the
// export or declare statement around it).
func (w *tsWalker) jsDecl(d, span *sitter.Node) {
	if d == nil {
		return
	}
	name := w.text(w.field(d, "name"))
	switch d.Kind() {
	case "ambient_declaration": // export declare class X {}
		for _, a := range w.children(d) {
			w.jsDecl(&a, span)
		}
	case "function_declaration", "generator_function_declaration":
		if w.field(d, "body") != nil {
			w.add(name, kindFunction, span)
		}
	case "expression_statement": // module.exports = class Name { ... }
		for _, a := range w.children(d) {
			if a.Kind() == "assignment_expression" {
				if r := w.field(&a, "right"); r != nil && r.Kind() == "class" {
					w.jsDecl(r, span)
				}
			}
		}
	case "class_declaration", "abstract_class_declaration", "class":
		w.add(name, kindClass, span)
		if name != "" {
			w.jsClassBody(w.field(d, "body"), name+".")
		}
	case "lexical_declaration", "variable_declaration":
		isConst := d.ChildCount() > 0 && d.Child(0).Kind() == "const"
		for _, v := range w.children(d) {
			if v.Kind() != "variable_declarator" {
				continue
			}
			id, value := w.field(&v, "name"), w.field(&v, "value")
			if id == nil || id.Kind() != "identifier" || value == nil {
				continue
			}
			for value.Kind() == "parenthesized_expression" && value.NamedChildCount() == 1 {
				value = value.NamedChild(0) // const f = ((a) => a)
			}
			switch name := w.text(id); {
			case jsFuncValues[value.Kind()]:
				w.add(name, kindFunction, span)
			case isConst && jsConst.MatchString(name):
				w.add(name, kindConstant, span)
			}
		}
	case "interface_declaration":
		w.add(name, kindInterface, span)
	case "type_alias_declaration", "enum_declaration":
		w.add(name, kindType, span)
	}
}

// jsClassBody records the methods of a class body.
func (w *tsWalker) jsClassBody(body *sitter.Node, prefix string) {
	for _, m := range w.children(body) {
		switch m.Kind() {
		case "method_definition", "abstract_method_signature":
			w.add(prefix+w.text(w.field(&m, "name")), kindMethod, &m)
		case "field_definition", "public_field_definition":
			name := w.field(&m, "name")
			if name == nil {
				name = w.field(&m, "property") // JavaScript's field_definition
			}
			if v := w.field(&m, "value"); v != nil && jsFuncValues[v.Kind()] {
				w.add(prefix+w.text(name), kindMethod, &m)
			}
		}
	}
}

// ---- Rust

// rustRole says what a Rust item list is the body of.
type rustRole int

const (
	rustTop   rustRole = iota // the crate file
	rustMod                   // mod m { ... }: items keep their kind
	rustImpl                  // impl T { ... }: fns are methods
	rustTrait                 // trait T { ... }: fns and signatures are methods
)

// rust resolves a source file: functions, structs, enums, unions and type
// aliases (type), traits (interface), constants and statics; impl and
// trait members are "Type.method" methods and "Type.CONST" constants;
// items in a "mod m { ... }" are named "m.item". Associated types, extern
// blocks, macros and anything inside a function body are not entities.
func (w *tsWalker) rust(root *sitter.Node) {
	w.rustItems(root, "", rustTop)
}

func (w *tsWalker) rustItems(n *sitter.Node, prefix string, role rustRole) {
	inImpl := role == rustImpl || role == rustTrait
	for _, c := range w.children(n) {
		name := rustName(w.text(w.field(&c, "name")))
		switch c.Kind() {
		case "function_item":
			kind := kindFunction
			if inImpl {
				kind = kindMethod
			}
			w.add(prefix+name, kind, &c)
		case "function_signature_item":
			if role == rustTrait {
				w.add(prefix+name, kindMethod, &c)
			}
		case "const_item", "static_item":
			w.add(prefix+name, kindConstant, &c)
		case "struct_item", "enum_item", "union_item", "type_item":
			if !inImpl {
				w.add(prefix+name, kindType, &c)
			}
		case "trait_item":
			if !inImpl && name != "" {
				w.add(prefix+name, kindInterface, &c)
				w.rustItems(w.field(&c, "body"), prefix+name+".", rustTrait)
			}
		case "impl_item":
			if name := w.rustImplName(w.field(&c, "type")); !inImpl && name != "" {
				w.rustItems(w.field(&c, "body"), prefix+name+".", rustImpl)
			}
		case "mod_item":
			if !inImpl && name != "" {
				w.rustItems(w.field(&c, "body"), prefix+name+".", rustMod)
			}
		}
	}
}

// rustName drops the raw-identifier prefix: r#type is type.
func rustName(s string) string { return strings.TrimPrefix(s, "r#") }

// rustImplName returns the name of an impl's self type: Foo for Foo,
// Foo<T>, a::b::Foo, &mut Foo and dyn Foo; "" for types without one
// (tuples, arrays, slices, function pointers).
func (w *tsWalker) rustImplName(t *sitter.Node) string {
	for depth := 0; t != nil && depth < 32; depth++ {
		switch t.Kind() {
		case "type_identifier", "primitive_type", "identifier":
			return rustName(w.text(t))
		case "generic_type", "reference_type", "pointer_type":
			t = w.field(t, "type")
		case "scoped_type_identifier":
			t = w.field(t, "name")
		case "dynamic_type":
			t = w.field(t, "trait")
		default:
			return ""
		}
	}
	return ""
}

// ---- Java

// javaRole says what a Java member list is the body of.
type javaRole int

const (
	javaClass     javaRole = iota // classes, records and enums
	javaInterface                 // interfaces and annotation types: fields are constants
)

// java resolves a compilation unit: classes and records (class),
// interfaces and annotation types (interface), enums (type), nested ones
// named "Outer.Inner"; their methods, constructors and annotation
// elements ("Class.method"; overloads share one name, the last wins);
// static final fields, and every interface field, as constants.
// Anonymous and local classes and enum constants are not entities.
func (w *tsWalker) java(root *sitter.Node) {
	w.javaMembers(root, "", javaClass, true)
}

func (w *tsWalker) javaMembers(n *sitter.Node, prefix string, role javaRole, top bool) {
	for _, c := range w.children(n) {
		name := w.text(w.field(&c, "name"))
		switch c.Kind() {
		case "class_declaration", "record_declaration", "interface_declaration",
			"annotation_type_declaration", "enum_declaration":
			w.javaType(&c, prefix, name)
		case "method_declaration", "constructor_declaration", "compact_constructor_declaration",
			"annotation_type_element_declaration":
			if !top {
				w.add(prefix+name, kindMethod, &c)
			}
		case "field_declaration", "constant_declaration":
			if top || role != javaInterface && c.Kind() == "field_declaration" && !w.javaStaticFinal(&c) {
				continue
			}
			for _, d := range w.children(&c) {
				if d.Kind() == "variable_declarator" {
					w.add(prefix+w.text(w.field(&d, "name")), kindConstant, &c)
				}
			}
		case "enum_body_declarations":
			w.javaMembers(&c, prefix, role, top)
		}
	}
}

// javaType records a type declaration and its members.
func (w *tsWalker) javaType(c *sitter.Node, prefix, name string) {
	if name == "" {
		return
	}
	kind, role := kindClass, javaClass
	switch c.Kind() {
	case "interface_declaration", "annotation_type_declaration":
		kind, role = kindInterface, javaInterface
	case "enum_declaration":
		kind = kindType
	}
	w.add(prefix+name, kind, c)
	w.javaMembers(w.field(c, "body"), prefix+name+".", role, false)
}

// javaStaticFinal reports whether a field declaration has both the static
// and the final modifiers.
func (w *tsWalker) javaStaticFinal(f *sitter.Node) bool {
	var static, final bool
	for _, c := range w.children(f) {
		if c.Kind() != "modifiers" {
			continue
		}
		for i := uint(0); i < c.ChildCount(); i++ {
			switch c.Child(i).Kind() {
			case "static":
				static = true
			case "final":
				final = true
			}
		}
	}
	return static && final
}

// ---- C

// cConst is the name of a #define constant, as the regex fallback has it.
var cConst = regexp.MustCompile(`^_*[A-Z][A-Z0-9_]*$`)

// cPreprocBlocks are the conditional-compilation blocks whose contents
// are top-level too.
var cPreprocBlocks = map[string]bool{
	"preproc_if": true, "preproc_ifdef": true, "preproc_else": true, "preproc_elif": true, "preproc_elifdef": true,
}

// c resolves a translation unit: function definitions (not prototypes),
// struct, union and enum tags defined with a body, typedef names (type),
// and #define constants (UPPER_CASE, with a value, not function-like),
// including those inside #if/#ifdef blocks.
func (w *tsWalker) c(root *sitter.Node) {
	for _, c := range w.children(root) {
		switch c.Kind() {
		case "function_definition":
			w.add(w.cDeclName(w.field(&c, "declarator")), kindFunction, &c)
		case "struct_specifier", "union_specifier", "enum_specifier":
			w.cTag(&c, &c)
		case "declaration":
			w.cTag(w.field(&c, "type"), &c)
		case "type_definition":
			w.cTag(w.field(&c, "type"), &c)
			for _, d := range c.ChildrenByFieldName("declarator", w.cursor) {
				w.add(w.cDeclName(&d), kindType, &c)
			}
		case "preproc_def":
			w.cDefine(&c)
		default:
			if cPreprocBlocks[c.Kind()] {
				w.c(&c)
			}
		}
	}
}

// cTag records a struct, union or enum specifier that has both a name and
// a body, spanning span.
func (w *tsWalker) cTag(t, span *sitter.Node) {
	if t == nil {
		return
	}
	switch t.Kind() {
	case "struct_specifier", "union_specifier", "enum_specifier":
		if body := w.field(t, "body"); body != nil {
			w.add(w.text(w.field(t, "name")), kindType, span)
			w.cBodyDefines(body)
		}
	}
}

// cBodyDefines records the #define constants inside a struct, union or
// enum body (flag values next to their field), nested bodies included.
func (w *tsWalker) cBodyDefines(body *sitter.Node) {
	for _, c := range w.children(body) {
		switch k := c.Kind(); {
		case k == "preproc_def":
			w.cDefine(&c)
		case cPreprocBlocks[k]:
			w.cBodyDefines(&c)
		case k == "field_declaration":
			if t := w.field(&c, "type"); t != nil {
				if b := w.field(t, "body"); b != nil {
					w.cBodyDefines(b)
				}
			}
		}
	}
}

// cDefine records a #define constant: an UPPER_CASE name with a value.
func (w *tsWalker) cDefine(d *sitter.Node) {
	if name := w.text(w.field(d, "name")); cConst.MatchString(name) &&
		strings.TrimSpace(w.text(w.field(d, "value"))) != "" {
		w.add(name, kindConstant, d)
	}
}

// cDeclName returns the identifier a declarator declares: f in f(void),
// *f(void), (*f)(int), a[3], and the typedef name in a typedef's
// declarator.
func (w *tsWalker) cDeclName(d *sitter.Node) string {
	for depth := 0; d != nil && depth < 64; depth++ {
		switch d.Kind() {
		case "identifier", "type_identifier", "field_identifier", "primitive_type":
			return w.text(d)
		case "parenthesized_declarator":
			if d.NamedChildCount() == 0 {
				return ""
			}
			d = d.NamedChild(0)
		default:
			d = w.field(d, "declarator")
		}
	}
	return ""
}
