package code

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	ts "github.com/cairnhq/cairn/internal/treesitter"
)

// astResolver returns the tree-sitter parser for a dialect other than Go,
// or nil for a dialect it does not know. The parser is safe for
// concurrent use.
func astResolver(dialect string) astParser {
	var (
		grammar ts.Language
		walk    func(w *tsWalker, root ts.Node)
		lang    = dialect
	)
	switch dialect {
	case langPython:
		grammar, walk = ts.Python, (*tsWalker).python
	case langJavaScript:
		grammar, walk = ts.JavaScript, (*tsWalker).javascript
	case langTypeScript:
		grammar, walk = ts.TypeScript, (*tsWalker).javascript
	case dialectTSX:
		grammar, walk, lang = ts.TSX, (*tsWalker).javascript, langTypeScript
	case langRust:
		grammar, walk = ts.Rust, (*tsWalker).rust
	case langJava:
		grammar, walk = ts.Java, (*tsWalker).java
	case langC:
		grammar, walk = ts.C, (*tsWalker).c
	default:
		return nil
	}
	return func(lines *srcLines) ([]Symbol, string, error) {
		return tsParse(lines, lang, grammar, walk)
	}
}

// tsParse parses a file with a grammar and walks its tree. A tree with
// syntax errors (ERROR or MISSING nodes) is used when the errors are sound
// (see partialTree) and it finds every name the regex fallback finds: the
// entities come with a warning saying where the errors are. Otherwise the
// errors are an error, so that Resolve falls back to the regex patterns.
func tsParse(lines *srcLines, lang string, grammar ts.Language, walk func(*tsWalker, ts.Node)) ([]Symbol, string, error) {
	// Error recovery gets no budget: a parse stops the first time every
	// parse stack is in error (tree-sitter checks every 100 operations),
	// as recovery costs far more per operation than parsing. Files whose
	// errors stay local still give a partial tree; allowing 2,000
	// operations and a quarter per byte more gave 7% more such files among
	// the C headers that have errors, for 56% more CPU time (see
	// docs/BENCHMARKS.md).
	tree, err := ts.Parse(grammar, lines.src, ts.Options{})
	if err != nil {
		var stopped *ts.StoppedError
		if errors.As(err, &stopped) {
			return nil, "", fmt.Errorf("syntax error at or before line %d", lines.lineOf(stopped.Offset))
		}
		return nil, "", err
	}
	root := tree.Root()
	w := &tsWalker{lines: lines, lang: lang, tree: tree, entities: map[ts.Node]string{}}
	walk(w, root)
	if !root.HasError() {
		return w.out, "", nil
	}
	errs, err := w.partialTree(root)
	if err != nil {
		return nil, "", err
	}
	// Error recovery can also leave declarations where the walkers do not
	// look (a block it opened and never closed): the partial tree must
	// find every name the regex fallback finds.
	found := make(map[string]bool, len(w.out))
	for _, s := range w.out {
		found[s.Name] = true
	}
	for _, s := range rxResolve(lang, lines) {
		if !found[s.Name] && validSymbol(s.Name) {
			return nil, "", tsSyntaxError(lines, root)
		}
	}
	return w.out, errs, nil
}

// tsBodies are the node kinds of function bodies: the walkers never read
// inside them, so a syntax error there leaves every entity found intact,
// as long as it hides no declaration (see partialTree).
var tsBodies = map[string]bool{
	"block":              true, // Python, Rust, Java
	"statement_block":    true, // JavaScript, TypeScript
	"constructor_body":   true, // Java
	"compound_statement": true, // C
}

// tsClosers are the tokens whose absence (a MISSING node) moves where
// blocks end, and so the lines of the entities holding them.
var tsClosers = map[string]bool{"}": true, ")": true, "]": true, "#endif": true}

// partialTree decides whether a tree with syntax errors can be used, and
// describes the errors ("syntax errors at lines 3 and 9"). The errors are
// sound when every ERROR node is either inside the body of a function or
// method the walker found or outside every entity, and the regex fallback
// finds no declaration on its lines (error recovery can swallow
// definitions into an ERROR node, where the walkers do not look); and no
// MISSING node is a closing bracket. Anything else is an error describing
// the first problem, for the regex fallback's warning.
func (w *tsWalker) partialTree(root ts.Node) (string, error) {
	var lines []int
	var bad error
	var visit func(n ts.Node)
	visit = func(n ts.Node) {
		for c := n.FirstChild(); !c.IsNull() && bad == nil; c = c.NextSibling() {
			switch {
			case c.IsError() || c.IsMissing():
				line := w.lines.lineOf(c.StartByte())
				lines = append(lines, line)
				if !w.soundError(c) {
					bad = tsSyntaxError(w.lines, c)
				}
			case c.HasError():
				visit(c)
			}
		}
	}
	visit(root)
	if bad != nil {
		return "", bad
	}
	if len(lines) == 0 { // only the root is in error
		return "", tsSyntaxError(w.lines, root)
	}
	return describeLines(lines), nil
}

// soundError reports whether the ERROR or MISSING node e leaves every
// entity intact (see partialTree).
func (w *tsWalker) soundError(e ts.Node) bool {
	if e.IsMissing() {
		return !tsClosers[e.Kind()]
	}
	inBody := false
	for a := e.Parent(); !a.IsNull(); a = a.Parent() {
		if tsBodies[a.Kind()] {
			inBody = true
		}
		if kind, ok := w.entities[a]; ok {
			if !inBody || kind != kindFunction && kind != kindMethod {
				return false // among the members the walker reads, or in a declaration's header
			}
			break
		}
	}
	from := w.lines.lineOf(e.StartByte())
	to := w.lines.endLineOf(e.StartByte(), e.EndByte())
	snippet := newSrcLines([]byte(w.lines.text(from, to)))
	return len(rxResolve(w.lang, snippet)) == 0
}

// describeLines says where syntax errors are: "syntax error at line 3",
// "syntax errors at lines 3 and 9", "syntax errors at lines 3, 9, 12 and
// 4 more".
func describeLines(lines []int) string {
	lines = slices.Compact(lines)
	if len(lines) == 1 {
		return fmt.Sprintf("syntax error at line %d", lines[0])
	}
	shown := lines[:min(len(lines), 3)]
	var b strings.Builder
	b.WriteString("syntax errors at lines ")
	for i, l := range shown {
		switch {
		case i == 0:
		case i == len(shown)-1 && len(shown) == len(lines):
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		fmt.Fprint(&b, l)
	}
	if more := len(lines) - len(shown); more > 0 {
		fmt.Fprintf(&b, " and %d more", more)
	}
	return b.String()
}

// tsSyntaxError describes the first ERROR or MISSING node of a tree.
func tsSyntaxError(lines *srcLines, n ts.Node) error {
	for depth := 0; depth < 1000; depth++ {
		if n.IsError() || n.IsMissing() {
			break
		}
		var next ts.Node
		for c := n.FirstChild(); !c.IsNull(); c = c.NextSibling() {
			if c.HasError() || c.IsError() || c.IsMissing() {
				next = c
				break
			}
		}
		if next.IsNull() {
			break
		}
		n = next
	}
	line := lines.lineOf(n.StartByte())
	if n.IsMissing() {
		return fmt.Errorf("syntax error at line %d: missing %s", line, n.Kind())
	}
	return fmt.Errorf("syntax error at line %d", line)
}

// tsWalker collects the symbols of one tree.
type tsWalker struct {
	lines    *srcLines
	lang     string
	tree     *ts.Tree
	out      []Symbol
	entities map[ts.Node]string // the node of each symbol, with its kind
}

// field returns n's child in the named field, or the null node.
func (w *tsWalker) field(n ts.Node, name string) ts.Node {
	return n.ChildByField(w.tree.FieldID(name))
}

// children returns n's named children.
func (w *tsWalker) children(n ts.Node) []ts.Node {
	return n.NamedChildren()
}

// text returns the source text of n ("" for the null node).
func (w *tsWalker) text(n ts.Node) string {
	if n.IsNull() {
		return ""
	}
	s, e := n.StartByte(), n.EndByte()
	if s < 0 || e > len(w.lines.src) || s > e {
		return ""
	}
	return string(w.lines.src[s:e])
}

// add records a symbol whose declaration is the node span: it starts at
// the comments, attributes and decorators directly above span and ends on
// span's last line.
func (w *tsWalker) add(name, kind string, span ts.Node) {
	if name == "" || span.IsNull() {
		return
	}
	w.entities[span] = kind
	start := span.StartByte()
	startLine := w.leadingStart(span, w.lines.lineOf(start))
	endLine := w.lines.endLineOf(start, span.EndByte())
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
func (w *tsWalker) leadingStart(n ts.Node, line int) int {
	for p := n.PrevNamedSibling(); !p.IsNull() && tsLeadingKinds[p.Kind()]; p = p.PrevNamedSibling() {
		ps := p.StartByte()
		if w.lines.endLineOf(ps, p.EndByte()) < line-1 {
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
var pyConst = lazy(`^_*[A-Z][A-Z0-9_]*$`)

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
func (w *tsWalker) python(root ts.Node) {
	w.pyScope(root, "", true)
}

// pyScope resolves the statements of a module (top) or class body (prefix
// "Class.").
func (w *tsWalker) pyScope(n ts.Node, prefix string, top bool) {
	for _, c := range w.children(n) {
		switch c.Kind() {
		case "decorated_definition":
			w.pyDef(w.field(c, "definition"), c, prefix)
		case "function_definition", "class_definition":
			w.pyDef(c, c, prefix)
		case "expression_statement":
			if !top {
				continue
			}
			for _, a := range w.children(c) {
				if a.Kind() != "assignment" {
					continue
				}
				left := w.field(a, "left")
				if !left.IsNull() && left.Kind() == "identifier" && !w.field(a, "right").IsNull() &&
					pyConst.MatchString(w.text(left)) {
					w.add(w.text(left), kindConstant, c)
				}
			}
		case "type_alias_statement":
			if top {
				w.add(w.text(firstIdentifier(w.field(c, "left"))), kindType, c)
			}
		default:
			if pyNested[c.Kind()] {
				w.pyScope(c, prefix, false)
			}
		}
	}
}

// firstIdentifier returns the first identifier at or under n, following
// first named children: Alias in "type Alias[T] = ...".
func firstIdentifier(n ts.Node) ts.Node {
	for depth := 0; !n.IsNull() && depth < 32; depth++ {
		if n.Kind() == "identifier" {
			return n
		}
		n = n.FirstNamedChild()
	}
	return ts.Node{}
}

// pyDef records a function or class definition d, declared by span (d or
// its decorated_definition).
func (w *tsWalker) pyDef(d, span ts.Node, prefix string) {
	if d.IsNull() {
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
var jsConst = lazy(`^_*[A-Z][A-Z0-9_$]*$`)

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
func (w *tsWalker) javascript(root ts.Node) {
	for _, c := range w.children(root) {
		switch c.Kind() {
		case "export_statement":
			w.jsDecl(w.field(c, "declaration"), c)
		default:
			w.jsDecl(c, c)
		}
	}
}

// jsDecl records a top-level declaration d, spanning span (d, or the
// export or declare statement around it).
func (w *tsWalker) jsDecl(d, span ts.Node) {
	if d.IsNull() {
		return
	}
	name := w.text(w.field(d, "name"))
	switch d.Kind() {
	case "ambient_declaration": // export declare class X {}
		for _, a := range w.children(d) {
			w.jsDecl(a, span)
		}
	case "function_declaration", "generator_function_declaration":
		if !w.field(d, "body").IsNull() {
			w.add(name, kindFunction, span)
		}
	case "expression_statement": // module.exports = class Name { ... }
		for _, a := range w.children(d) {
			if a.Kind() == "assignment_expression" {
				if r := w.field(a, "right"); r.Kind() == "class" {
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
		isConst := d.FirstChild().Kind() == "const"
		for _, v := range w.children(d) {
			if v.Kind() != "variable_declarator" {
				continue
			}
			id, value := w.field(v, "name"), w.field(v, "value")
			if id.Kind() != "identifier" || value.IsNull() {
				continue
			}
			for value.Kind() == "parenthesized_expression" && value.NamedChildCount() == 1 {
				value = value.FirstNamedChild() // const f = ((a) => a)
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
func (w *tsWalker) jsClassBody(body ts.Node, prefix string) {
	for _, m := range w.children(body) {
		switch m.Kind() {
		case "method_definition", "abstract_method_signature":
			w.add(prefix+w.text(w.field(m, "name")), kindMethod, m)
		case "field_definition", "public_field_definition":
			name := w.field(m, "name")
			if name.IsNull() {
				name = w.field(m, "property") // JavaScript's field_definition
			}
			if v := w.field(m, "value"); jsFuncValues[v.Kind()] {
				w.add(prefix+w.text(name), kindMethod, m)
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
func (w *tsWalker) rust(root ts.Node) {
	w.rustItems(root, "", rustTop)
}

func (w *tsWalker) rustItems(n ts.Node, prefix string, role rustRole) {
	inImpl := role == rustImpl || role == rustTrait
	for _, c := range w.children(n) {
		name := rustName(w.text(w.field(c, "name")))
		switch c.Kind() {
		case "function_item":
			kind := kindFunction
			if inImpl {
				kind = kindMethod
			}
			w.add(prefix+name, kind, c)
		case "function_signature_item":
			if role == rustTrait {
				w.add(prefix+name, kindMethod, c)
			}
		case "const_item", "static_item":
			w.add(prefix+name, kindConstant, c)
		case "struct_item", "enum_item", "union_item", "type_item":
			if !inImpl {
				w.add(prefix+name, kindType, c)
			}
		case "trait_item":
			if !inImpl && name != "" {
				w.add(prefix+name, kindInterface, c)
				w.rustItems(w.field(c, "body"), prefix+name+".", rustTrait)
			}
		case "impl_item":
			if name := w.rustImplName(w.field(c, "type")); !inImpl && name != "" {
				w.rustItems(w.field(c, "body"), prefix+name+".", rustImpl)
			}
		case "mod_item":
			if !inImpl && name != "" {
				w.rustItems(w.field(c, "body"), prefix+name+".", rustMod)
			}
		}
	}
}

// rustName drops the raw-identifier prefix: r#type is type.
func rustName(s string) string { return strings.TrimPrefix(s, "r#") }

// rustImplName returns the name of an impl's self type: Foo for Foo,
// Foo<T>, a::b::Foo, &mut Foo and dyn Foo; "" for types without one
// (tuples, arrays, slices, function pointers).
func (w *tsWalker) rustImplName(t ts.Node) string {
	for depth := 0; !t.IsNull() && depth < 32; depth++ {
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
func (w *tsWalker) java(root ts.Node) {
	w.javaMembers(root, "", javaClass, true)
}

func (w *tsWalker) javaMembers(n ts.Node, prefix string, role javaRole, top bool) {
	for _, c := range w.children(n) {
		name := w.text(w.field(c, "name"))
		switch c.Kind() {
		case "class_declaration", "record_declaration", "interface_declaration",
			"annotation_type_declaration", "enum_declaration":
			w.javaType(c, prefix, name)
		case "method_declaration", "constructor_declaration", "compact_constructor_declaration",
			"annotation_type_element_declaration":
			if !top {
				w.add(prefix+name, kindMethod, c)
			}
		case "field_declaration", "constant_declaration":
			if top || role != javaInterface && c.Kind() == "field_declaration" && !w.javaStaticFinal(c) {
				continue
			}
			for _, d := range w.children(c) {
				if d.Kind() == "variable_declarator" {
					w.add(prefix+w.text(w.field(d, "name")), kindConstant, c)
				}
			}
		case "enum_body_declarations":
			w.javaMembers(c, prefix, role, top)
		}
	}
}

// javaType records a type declaration and its members.
func (w *tsWalker) javaType(c ts.Node, prefix, name string) {
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
func (w *tsWalker) javaStaticFinal(f ts.Node) bool {
	var static, final bool
	for _, c := range w.children(f) {
		if c.Kind() != "modifiers" {
			continue
		}
		for k := c.FirstChild(); !k.IsNull(); k = k.NextSibling() {
			switch k.Kind() {
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
var cConst = lazy(`^_*[A-Z][A-Z0-9_]*$`)

// cPreprocBlocks are the conditional-compilation blocks whose contents
// are top-level too.
var cPreprocBlocks = map[string]bool{
	"preproc_if": true, "preproc_ifdef": true, "preproc_else": true, "preproc_elif": true, "preproc_elifdef": true,
}

// c resolves a translation unit: function definitions (not prototypes),
// struct, union and enum tags defined with a body, typedef names (type),
// and #define constants (UPPER_CASE, with a value, not function-like),
// including those inside #if/#ifdef blocks.
func (w *tsWalker) c(root ts.Node) {
	for _, c := range w.children(root) {
		switch c.Kind() {
		case "function_definition":
			w.add(w.cDeclName(w.field(c, "declarator")), kindFunction, c)
		case "struct_specifier", "union_specifier", "enum_specifier":
			w.cTag(c, c)
		case "declaration":
			w.cTag(w.field(c, "type"), c)
		case "type_definition":
			w.cTag(w.field(c, "type"), c)
			for _, d := range c.ChildrenByField(w.tree.FieldID("declarator")) {
				w.add(w.cDeclName(d), kindType, c)
			}
		case "preproc_def":
			w.cDefine(c)
		default:
			if cPreprocBlocks[c.Kind()] {
				w.c(c)
			}
		}
	}
}

// cTag records a struct, union or enum specifier that has both a name and
// a body, spanning span.
func (w *tsWalker) cTag(t, span ts.Node) {
	if t.IsNull() {
		return
	}
	switch t.Kind() {
	case "struct_specifier", "union_specifier", "enum_specifier":
		if body := w.field(t, "body"); !body.IsNull() {
			w.add(w.text(w.field(t, "name")), kindType, span)
			w.cBodyDefines(body)
		}
	}
}

// cBodyDefines records the #define constants inside a struct, union or
// enum body (flag values next to their field), nested bodies included.
func (w *tsWalker) cBodyDefines(body ts.Node) {
	for _, c := range w.children(body) {
		switch k := c.Kind(); {
		case k == "preproc_def":
			w.cDefine(c)
		case cPreprocBlocks[k]:
			w.cBodyDefines(c)
		case k == "field_declaration":
			if t := w.field(c, "type"); !t.IsNull() {
				if b := w.field(t, "body"); !b.IsNull() {
					w.cBodyDefines(b)
				}
			}
		}
	}
}

// cDefine records a #define constant: an UPPER_CASE name with a value.
func (w *tsWalker) cDefine(d ts.Node) {
	if name := w.text(w.field(d, "name")); cConst.MatchString(name) &&
		strings.TrimSpace(w.text(w.field(d, "value"))) != "" {
		w.add(name, kindConstant, d)
	}
}

// cDeclName returns the identifier a declarator declares: f in f(void),
// *f(void), (*f)(int), a[3], and the typedef name in a typedef's
// declarator.
func (w *tsWalker) cDeclName(d ts.Node) string {
	for depth := 0; !d.IsNull() && depth < 64; depth++ {
		switch d.Kind() {
		case "identifier", "type_identifier", "field_identifier", "primitive_type":
			return w.text(d)
		case "parenthesized_declarator":
			d = d.FirstNamedChild()
		default:
			d = w.field(d, "declarator")
		}
	}
	return ""
}
