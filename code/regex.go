package code

import (
	"bytes"
	"strings"
)

// The regex fallback reads a file line by line: each line (its first
// rxMaxMatch bytes, so huge lines cost nothing extra) is tried against the
// declaration patterns of its language, unless it starts inside a string
// or a block comment. Ends come from the one-pass scan in regex_scan.go:
// matched braces (and the header rules of rxScan.blockEnd) for the
// languages with braces, indentation for Python and for brace-less
// declarations of unknown languages. Classes, impls, traits and modules
// open containers, so that "Class.method" names come only from lines
// directly inside a container's body. Everything is linear in the size of
// the file, apart from a binary search per declaration.

// rxMaxMatch is how much of a line the patterns look at.
const rxMaxMatch = 1024

const (
	rxID   = `[\p{L}_][\p{L}\p{N}_]*`
	rxJSID = `[\p{L}_$][\p{L}\p{N}_$]*`
)

// rxResolve runs the fallback for a language ("" for the generic patterns).
func rxResolve(lang string, lines *srcLines) []Symbol {
	sc := scanSource(lang, lines)
	sc.lang = lang
	switch lang {
	case langGo:
		return rxGo(sc)
	case langPython:
		return rxPython(sc)
	case langJavaScript, langTypeScript:
		return rxJS(sc, lang == langTypeScript)
	case langRust:
		return rxRust(sc)
	case langJava:
		return rxJava(sc)
	case langC:
		return rxC(sc)
	default:
		return rxGeneric(sc)
	}
}

// text returns line l for matching: without its '\r', at most rxMaxMatch
// bytes, and nil when the line starts inside a string or block comment.
func (sc *rxScan) text(l int) []byte {
	if sc.inside[l] {
		return nil
	}
	b := sc.lines.line(l)
	if len(b) > rxMaxMatch {
		b = b[:rxMaxMatch]
	}
	for len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}

// trimmed is text without leading white space.
func (sc *rxScan) trimmed(l int) []byte {
	return trimSpaceBytes(sc.text(l))
}

// symbol builds a symbol from its declaration line l to end, moving the
// start up over leading comments.
func (sc *rxScan) symbol(name, kind string, l, end int) Symbol {
	return Symbol{Name: name, Kind: kind, StartLine: sc.lines.withLeadingComments(sc.lang, l), EndLine: max(end, l)}
}

// rxContainer is an open class, interface, impl, trait or module body.
type rxContainer struct {
	prefix string // "Class." or "mod.Class."
	role   int
	body   int // brace depth of the lines directly inside
	end    int // last line
	name   string
}

// Container roles.
const (
	roleClass     = iota // members are methods
	roleInterface        // Java interfaces: fields are constants
	roleEnum             // Java enums
	roleImpl             // Rust impl and trait: fns are methods
	roleModule           // Rust mod: items keep their kind
)

// rxNest tracks the open containers while the lines go by.
type rxNest struct{ stack []rxContainer }

// at returns the container whose body line l (of brace depth d) is
// directly inside, or nil; top reports a top-level line (outside every
// container at depth 0).
func (n *rxNest) at(l, d int) (c *rxContainer, top bool) {
	for len(n.stack) > 0 && n.stack[len(n.stack)-1].end < l {
		n.stack = n.stack[:len(n.stack)-1]
	}
	if k := len(n.stack); k > 0 && n.stack[k-1].body == d {
		return &n.stack[k-1], false
	}
	return nil, d == 0
}

// open pushes a container declared on line l, ending at end, when it has a
// body.
func (n *rxNest) open(sc *rxScan, prefix, name string, role, l, end int, body bool) {
	if body && end > l {
		n.stack = append(n.stack, rxContainer{prefix: prefix + name + ".", name: name, role: role, body: sc.depth[l] + 1, end: end})
	}
}

// prefixOf is the name prefix of a container ("" for none).
func prefixOf(c *rxContainer) string {
	if c == nil {
		return ""
	}
	return c.prefix
}

// ---- Go

var (
	rxGoFunc     = lazy(`^func\s+(` + rxID + `)\s*[\[(]`)
	rxGoMethod   = lazy(`^func\s*\(([^)]*)\)\s*(` + rxID + `)\s*[\[(]`)
	rxGoType     = lazy(`^type\s+(` + rxID + `)(?:\[[^\]]*\])?\s*=?\s*(interface\b)?`)
	rxGoConst    = lazy(`^const\s+(` + rxID + `(?:\s*,\s*` + rxID + `)*)`)
	rxGoGroup    = lazy(`^(const|type)\s*\(\s*(?://.*)?$`)
	rxGoSpecCon  = lazy(`^(` + rxID + `(?:\s*,\s*` + rxID + `)*)`)
	rxGoSpecType = lazy(`^(` + rxID + `)(?:\[[^\]]*\])?\s*=?\s*(interface\b)?`)
	rxIDList     = lazy(rxID)
)

func rxGo(sc *rxScan) []Symbol {
	var out []Symbol
	n := sc.lines.count()
	group := "" // "const" or "type" inside a parenthesised group
	groupParen := 0
	for l := 1; l <= n; l++ {
		t := sc.text(l)
		if t == nil || sc.depth[l] != 0 {
			continue
		}
		if group != "" {
			tt := trimSpaceBytes(t)
			switch {
			case len(tt) > 0 && tt[0] == ')':
				group = ""
			case sc.parenStart[l] != groupParen:
				// inside a spec's own parentheses
			case group == "const":
				if m := rxGoSpecCon.FindSubmatch(tt); m != nil {
					end, _ := sc.blockEnd(l)
					for _, name := range rxIDList.FindAll(m[1], -1) {
						if string(name) != "_" {
							out = append(out, sc.symbol(string(name), kindConstant, l, end))
						}
					}
				}
			default:
				if m := rxGoSpecType.FindSubmatch(tt); m != nil {
					end, _ := sc.blockEnd(l)
					out = append(out, sc.symbol(string(m[1]), goTypeKind(m[2]), l, end))
				}
			}
			continue
		}
		if m := rxGoGroup.FindSubmatch(t); m != nil {
			group, groupParen = string(m[1]), sc.parenEnd[l]
			continue
		}
		if m := rxGoFunc.FindSubmatch(t); m != nil {
			end, _ := sc.blockEnd(l)
			out = append(out, sc.symbol(string(m[1]), kindFunction, l, end))
		} else if m := rxGoMethod.FindSubmatch(t); m != nil {
			if recv := goRecvText(string(m[1])); recv != "" {
				end, _ := sc.blockEnd(l)
				out = append(out, sc.symbol(recv+"."+string(m[2]), kindMethod, l, end))
			}
		} else if m := rxGoType.FindSubmatch(t); m != nil {
			end, _ := sc.blockEnd(l)
			out = append(out, sc.symbol(string(m[1]), goTypeKind(m[2]), l, end))
		} else if m := rxGoConst.FindSubmatch(t); m != nil {
			end, _ := sc.blockEnd(l)
			for _, name := range rxIDList.FindAll(m[1], -1) {
				if string(name) != "_" {
					out = append(out, sc.symbol(string(name), kindConstant, l, end))
				}
			}
		}
	}
	return out
}

func goTypeKind(iface []byte) string {
	if len(iface) > 0 {
		return kindInterface
	}
	return kindType
}

// goRecvText returns the type name of a receiver written "r *T[K]".
func goRecvText(s string) string {
	if i := strings.IndexByte(s, '['); i >= 0 {
		s = s[:i]
	}
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	name := strings.TrimLeft(f[len(f)-1], "*")
	if !rxIDList.MatchString(name) || rxIDList.FindString(name) != name {
		return ""
	}
	return name
}

// ---- Python

var (
	rxPyDef   = lazy(`^(?:async\s+)?def\s+(` + rxID + `)\s*[(\[]`)
	rxPyClass = lazy(`^class\s+(` + rxID + `)\s*[:(\[]`)
	rxPyConst = lazy(`^(_*[A-Z][A-Z0-9_]*)\s*(?::[^=]*)?=(?:[^=]|$)`)
)

func rxPython(sc *rxScan) []Symbol {
	var out []Symbol
	ends := sc.indentEnds(true)
	type frame struct {
		indent int
		class  string // "" for a def
	}
	var stack []frame
	n := sc.lines.count()
	for l := 1; l <= n; l++ {
		t := sc.text(l)
		if t == nil || sc.commentOnly[l] || sc.joined[l] || sc.parenStart[l] != 0 || sc.depth[l] != 0 || sc.indent[l] < 0 {
			continue // not the start of a statement
		}
		// A statement closes the blocks opened at its indentation or
		// deeper ("if x:" in a class body closes the method above it).
		ind := sc.indent[l]
		for len(stack) > 0 && stack[len(stack)-1].indent >= ind {
			stack = stack[:len(stack)-1]
		}
		tt := trimSpaceBytes(t)
		def := rxPyDef.FindSubmatch(tt)
		class := rxPyClass.FindSubmatch(tt)
		if def == nil && class == nil {
			if ind == 0 {
				if m := rxPyConst.FindSubmatch(tt); m != nil {
					out = append(out, sc.symbol(string(m[1]), kindConstant, l, ends[l]))
				}
			}
			continue
		}
		inDef := false
		prefix := ""
		for _, f := range stack {
			if f.class == "" {
				inDef = true
			}
			prefix = f.class
		}
		if def != nil {
			name := string(def[1])
			switch {
			case inDef:
			case prefix != "":
				out = append(out, sc.symbol(prefix+"."+name, kindMethod, l, ends[l]))
			default:
				out = append(out, sc.symbol(name, kindFunction, l, ends[l]))
			}
			stack = append(stack, frame{indent: ind})
			continue
		}
		name := string(class[1])
		if prefix != "" {
			name = prefix + "." + name
		}
		if inDef {
			stack = append(stack, frame{indent: ind}) // a local class: its methods are local too
			continue
		}
		out = append(out, sc.symbol(name, kindClass, l, ends[l]))
		stack = append(stack, frame{indent: ind, class: name})
	}
	return out
}

// ---- JavaScript and TypeScript

var (
	rxJSFunc     = lazy(`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\b\s*\*?\s*(` + rxJSID + `)`)
	rxJSClass    = lazy(`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\s+(` + rxJSID + `)`)
	rxJSArrow    = lazy(`^(?:export\s+)?(?:const|let|var)\s+(` + rxJSID + `)\s*(?::[^=]+)?=\s*(?:async\b\s*)?(?:function\b|(?:\([^)]*\)|` + rxJSID + `)\s*(?::[^=]+)?=>)`)
	rxJSConst    = lazy(`^(?:export\s+)?(?:declare\s+)?const\s+(_*[A-Z][A-Z0-9_$]*)\s*(?::[^=]+)?=`)
	rxTSIface    = lazy(`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?interface\s+(` + rxJSID + `)`)
	rxTSType     = lazy(`^(?:export\s+)?(?:declare\s+)?type\s+(` + rxJSID + `)\s*(?:<.*>)?\s*=`)
	rxTSEnum     = lazy(`^(?:export\s+)?(?:declare\s+)?(?:const\s+)?enum\s+(` + rxJSID + `)`)
	rxJSMods     = `(?:(?:public|private|protected|static|readonly|abstract|override|async|declare|get|set|accessor)\s+)*`
	rxJSMethod   = lazy(`^` + rxJSMods + `\*?\s*(` + rxJSID + `)\s*[?!]?\s*(?:<[^>]*>)?\s*\(`)
	rxJSAbstract = lazy(`^` + rxJSMods + `\babstract\s`)
	rxJSField    = lazy(`^` + rxJSMods + `(` + rxJSID + `)\s*[?!]?\s*(?::[^=]+)?=\s*(?:async\b\s*)?(?:function\b|(?:\([^)]*\)|` + rxJSID + `)\s*(?::[^=]+)?=>)`)
)

// rxJSKeywords are words that look like a method name before '(' but are
// not.
var rxJSKeywords = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "catch": true,
	"return": true, "function": true, "new": true, "typeof": true, "await": true, "yield": true, "with": true,
	"do": true, "else": true, "throw": true, "delete": true, "void": true, "super": true}

func rxJS(sc *rxScan, ts bool) []Symbol {
	var out []Symbol
	var nest rxNest
	n := sc.lines.count()
	for l := 1; l <= n; l++ {
		t := sc.trimmed(l)
		if len(t) == 0 {
			continue
		}
		c, top := nest.at(l, sc.depth[l])
		if c != nil {
			m, field := rxJSMethod.FindSubmatch(t), false
			if m == nil {
				m, field = rxJSField.FindSubmatch(t), true
			}
			if m != nil && !rxJSKeywords[string(m[1])] {
				end, body := sc.blockEnd(l)
				if !body && !field && !rxJSAbstract.Match(t) {
					continue // an overload or a declared signature: not an entity
				}
				out = append(out, sc.symbol(c.prefix+string(m[1]), kindMethod, l, end))
			}
			continue
		}
		if !top {
			continue
		}
		if m := rxJSClass.FindSubmatch(t); m != nil {
			end, body := sc.blockEnd(l)
			out = append(out, sc.symbol(string(m[1]), kindClass, l, end))
			nest.open(sc, "", string(m[1]), roleClass, l, end, body)
		} else if m := rxJSFunc.FindSubmatch(t); m != nil {
			if end, body := sc.blockEnd(l); body {
				out = append(out, sc.symbol(string(m[1]), kindFunction, l, end))
			}
		} else if m := rxJSArrow.FindSubmatch(t); m != nil {
			end, _ := sc.blockEnd(l)
			out = append(out, sc.symbol(string(m[1]), kindFunction, l, end))
		} else if m := rxJSConst.FindSubmatch(t); m != nil {
			end, _ := sc.blockEnd(l)
			out = append(out, sc.symbol(string(m[1]), kindConstant, l, end))
		} else if !ts {
			continue
		} else if m := rxTSIface.FindSubmatch(t); m != nil {
			end, _ := sc.blockEnd(l)
			out = append(out, sc.symbol(string(m[1]), kindInterface, l, end))
		} else if m := rxTSType.FindSubmatch(t); m != nil {
			end, _ := sc.blockEnd(l)
			out = append(out, sc.symbol(string(m[1]), kindType, l, end))
		} else if m := rxTSEnum.FindSubmatch(t); m != nil {
			end, _ := sc.blockEnd(l)
			out = append(out, sc.symbol(string(m[1]), kindType, l, end))
		}
	}
	return out
}

// ---- Rust

const rxRustVis = `(?:pub(?:\s*\([^)]*\))?\s+)?`

var (
	rxRustFn     = lazy(`^` + rxRustVis + `(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+(?:"[^"]*"\s+)?)?fn\s+(?:r#)?(` + rxID + `)`)
	rxRustType   = lazy(`^` + rxRustVis + `(?:struct|enum|union|type)\s+(?:r#)?(` + rxID + `)`)
	rxRustTrait  = lazy(`^` + rxRustVis + `(?:unsafe\s+)?(?:auto\s+)?trait\s+(?:r#)?(` + rxID + `)`)
	rxRustImpl   = lazy(`^(?:unsafe\s+)?impl\b(.*)`)
	rxRustMod    = lazy(`^` + rxRustVis + `mod\s+(?:r#)?(` + rxID + `)\s*\{`)
	rxRustConst  = lazy(`^` + rxRustVis + `(?:const|static)\s+(?:mut\s+)?(?:r#)?(` + rxID + `)\s*:`)
	rxRustTypeID = lazy(`(?:r#)?(` + rxID + `)\s*$`)
)

func rxRust(sc *rxScan) []Symbol {
	var out []Symbol
	var nest rxNest
	n := sc.lines.count()
	for l := 1; l <= n; l++ {
		t := sc.trimmed(l)
		if len(t) == 0 {
			continue
		}
		c, top := nest.at(l, sc.depth[l])
		if !top && c == nil {
			continue
		}
		inImpl := c != nil && c.role == roleImpl
		prefix := prefixOf(c)
		switch {
		case rxRustFn.Match(t):
			m := rxRustFn.FindSubmatch(t)
			end, _ := sc.blockEnd(l)
			kind := kindFunction
			if inImpl {
				kind = kindMethod
			}
			out = append(out, sc.symbol(prefix+string(m[1]), kind, l, end))
		case rxRustConst.Match(t):
			m := rxRustConst.FindSubmatch(t)
			end, _ := sc.blockEnd(l)
			out = append(out, sc.symbol(prefix+string(m[1]), kindConstant, l, end))
		case inImpl:
		case rxRustType.Match(t):
			m := rxRustType.FindSubmatch(t)
			end, _ := sc.blockEnd(l)
			out = append(out, sc.symbol(prefix+string(m[1]), kindType, l, end))
		case rxRustTrait.Match(t):
			m := rxRustTrait.FindSubmatch(t)
			end, body := sc.blockEnd(l)
			out = append(out, sc.symbol(prefix+string(m[1]), kindInterface, l, end))
			nest.open(sc, prefix, string(m[1]), roleImpl, l, end, body)
		case rxRustMod.Match(t):
			m := rxRustMod.FindSubmatch(t)
			end, body := sc.blockEnd(l)
			nest.open(sc, prefix, string(m[1]), roleModule, l, end, body)
		case rxRustImpl.Match(t):
			m := rxRustImpl.FindSubmatch(t)
			if name := rustImplType(string(m[1])); name != "" {
				end, body := sc.blockEnd(l)
				nest.open(sc, prefix, name, roleImpl, l, end, body)
			}
		}
	}
	return out
}

// rustImplType returns the self type's name from the rest of an impl line
// ("<T: Clone> Trait<T> for path::Foo<T> where ... {" gives "Foo").
func rustImplType(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "<") {
		s = s[skipAngles(s):]
	}
	// The self type follows " for " at angle depth 0, else it is all.
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			depth++
		case '>':
			if depth > 0 {
				depth--
			}
		case 'f':
			if depth == 0 && i > 0 && isBlankByte(s[i-1]) && strings.HasPrefix(s[i:], "for") &&
				i+3 < len(s) && isBlankByte(s[i+3]) {
				s = s[i+3:]
				i = len(s)
			}
		}
	}
	s = strings.TrimSpace(s)
	for _, cut := range []string{"{", " where", "<"} {
		if i := strings.Index(s, cut); i >= 0 {
			s = s[:i]
		}
	}
	s = strings.TrimLeft(strings.TrimSpace(s), "&!")
	s = strings.TrimPrefix(s, "mut ")
	s = strings.TrimPrefix(s, "dyn ")
	if i := strings.LastIndex(s, "::"); i >= 0 {
		s = s[i+2:]
	}
	m := rxRustTypeID.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return ""
	}
	return m[1]
}

// skipAngles returns the index just past the '>' closing the '<' at s[0].
func skipAngles(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			depth++
		case '>':
			if i > 0 && s[i-1] == '-' {
				continue // "->" inside Fn(A) -> B bounds
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// ---- Java

const (
	rxJavaAnn = `(?:@[\p{L}_][\p{L}\p{N}_.]*(?:\([^)]*\))?\s*)*`
	rxJavaID  = `[\p{L}_$][\p{L}\p{N}_$]*`
)

var (
	rxJavaType   = lazy(`^` + rxJavaAnn + `(?:(?:public|protected|private|static|final|abstract|sealed|non-sealed|strictfp)\s+)*(class|interface|enum|record|@\s*interface)\s+(` + rxJavaID + `)`)
	rxJavaMethod = lazy(`^` + rxJavaAnn + `(?:(?:public|protected|private|static|final|abstract|synchronized|native|default|strictfp)\s+)*(?:<[^>]*>\s*)?((?:[\p{L}_$][\p{L}\p{N}_$.]*(?:\s*<.*>)?(?:\s*\[\s*\])*\s+)?)(` + rxJavaID + `)\s*\(`)
	rxJavaField  = lazy(`^` + rxJavaAnn + `((?:(?:public|protected|private|static|final|transient|volatile)\s+)*)[\p{L}_$][\p{L}\p{N}_$.]*(?:\s*<.*>)?(?:\s*\[\s*\])*\s+(` + rxJavaID + `)\s*(?:=|;|\[)`)
)

// rxJavaKeywords are statement words that the method pattern could take
// for a return type or a name.
var rxJavaKeywords = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "catch": true,
	"return": true, "new": true, "throw": true, "else": true, "try": true, "do": true, "super": true,
	"this": true, "synchronized": true, "case": true, "assert": true}

func rxJava(sc *rxScan) []Symbol {
	var out []Symbol
	var nest rxNest
	n := sc.lines.count()
	for l := 1; l <= n; l++ {
		t := sc.trimmed(l)
		if len(t) == 0 {
			continue
		}
		c, top := nest.at(l, sc.depth[l])
		if !top && c == nil {
			continue
		}
		prefix := prefixOf(c)
		if m := rxJavaType.FindSubmatch(t); m != nil {
			kind, role := kindClass, roleClass
			switch string(m[1][:1]) {
			case "i", "@":
				kind, role = kindInterface, roleInterface
			case "e":
				kind, role = kindType, roleEnum
			}
			end, body := sc.blockEnd(l)
			out = append(out, sc.symbol(prefix+string(m[2]), kind, l, end))
			nest.open(sc, prefix, string(m[2]), role, l, end, body)
			continue
		}
		if c == nil {
			continue
		}
		if m := rxJavaMethod.FindSubmatch(t); m != nil {
			typ := strings.TrimSpace(string(m[1]))
			name := string(m[2])
			ctor := typ == "" && name == c.name
			if (typ != "" || ctor) && !rxJavaKeywords[name] && !rxJavaKeywords[typ] {
				end, _ := sc.blockEnd(l)
				out = append(out, sc.symbol(prefix+name, kindMethod, l, end))
			}
			continue
		}
		if m := rxJavaField.FindSubmatch(t); m != nil {
			mods := " " + string(m[1])
			if c.role == roleInterface || strings.Contains(mods, " static") && strings.Contains(mods, " final") {
				end, _ := sc.blockEnd(l)
				out = append(out, sc.symbol(prefix+string(m[2]), kindConstant, l, end))
			}
		}
	}
	return out
}

// ---- C

var (
	rxCDefine  = lazy(`^#\s*define\s+(_*[A-Z][A-Z0-9_]*)[ \t]+\S`)
	rxCTag     = lazy(`^(?:typedef\s+)?(?:struct|union|enum)\s+(` + rxID + `)\s*(?:\{.*)?$`)
	rxCTypedef = lazy(`^typedef\b`)
	rxCFunc    = lazy(`^(?:[\p{L}_][\p{L}\p{N}_]*[\s*]+)*?\**(` + rxID + `)\s*\(`)
	rxCFnPtr   = lazy(`\(\s*\*\s*(` + rxID + `)\s*\)`)
	rxCLastID  = lazy(`(` + rxID + `)\s*(?:\[[^\]]*\]\s*)*;`)
	rxCClose   = lazy(`\}\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?(?:\*\s*)?(` + rxID + `)`)
)

// rxCKeywords are words the function pattern could take for a name.
var rxCKeywords = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "return": true,
	"sizeof": true, "typedef": true, "do": true, "else": true, "case": true, "goto": true, "defined": true,
	"_Static_assert": true, "static_assert": true, "__attribute__": true, "alignof": true, "_Alignof": true,
	// type words, as in "void (*signal(int, void (*)(int)))(int) {"
	"void": true, "char": true, "short": true, "int": true, "long": true, "float": true, "double": true,
	"signed": true, "unsigned": true, "const": true, "volatile": true, "static": true, "extern": true,
	"inline": true, "register": true, "struct": true, "union": true, "enum": true, "_Bool": true, "bool": true}

func rxC(sc *rxScan) []Symbol {
	var out []Symbol
	n := sc.lines.count()
	for l := 1; l <= n; l++ {
		t := sc.text(l)
		if len(t) == 0 {
			continue
		}
		if tt := trimSpaceBytes(t); len(tt) > 0 && tt[0] == '#' {
			// A preprocessor line and its continuations: a constant, or
			// nothing (a macro body is not declarations).
			end := l
			for end < n && strings.HasSuffix(strings.TrimRight(string(sc.lines.line(end)), " \t\r"), `\`) {
				end++
			}
			if m := rxCDefine.FindSubmatch(tt); m != nil && cDefineHasValue(tt[len(m[0])-1:]) {
				out = append(out, sc.symbol(string(m[1]), kindConstant, l, end))
			}
			l = end
			continue
		}
		if sc.depth[l] != 0 || isBlankByte(t[0]) {
			continue
		}
		if m := rxCTag.FindSubmatch(t); m != nil {
			if end, body := sc.blockEnd(l); body {
				out = append(out, sc.symbol(string(m[1]), kindType, l, end))
			}
		}
		if rxCTypedef.Match(t) {
			end, _ := sc.blockEnd(l)
			if name := cTypedefName(sc, l, end); name != "" {
				out = append(out, sc.symbol(name, kindType, l, end))
			}
			continue
		}
		if rxCTag.Match(t) {
			continue
		}
		if m := rxCFunc.FindSubmatch(t); m != nil && !rxCKeywords[string(m[1])] {
			if end, body := sc.blockEnd(l); body {
				out = append(out, sc.symbol(string(m[1]), kindFunction, l, end))
			}
		}
	}
	return out
}

// cDefineHasValue reports whether the rest of a #define line holds
// something besides comments.
func cDefineHasValue(rest []byte) bool {
	for {
		rest = trimSpaceBytes(rest)
		switch {
		case len(rest) == 0 || hasAt(rest, 0, "//"):
			return false
		case hasAt(rest, 0, "/*"):
			i := bytes.Index(rest[2:], []byte("*/"))
			if i < 0 {
				return false
			}
			rest = rest[2+i+2:]
		default:
			return true
		}
	}
}

// cTypedefName finds the name a typedef on lines l..end declares.
func cTypedefName(sc *rxScan, l, end int) string {
	first := sc.text(l)
	if m := rxCFnPtr.FindSubmatch(first); m != nil {
		return string(m[1])
	}
	// The statement's last line: the one with the ';' after the body.
	for e := end; e <= min(end+2, sc.lines.count()); e++ {
		t := sc.text(e)
		if e > l {
			if m := rxCClose.FindSubmatch(t); m != nil {
				return string(m[1])
			}
		}
		if i := bytes.LastIndexByte(t, '}'); i >= 0 {
			t = t[i:]
		}
		if all := rxCLastID.FindAllSubmatch(t, -1); all != nil {
			return string(all[len(all)-1][1])
		}
	}
	return ""
}

// ---- unknown languages

var (
	rxGenFunc  = lazy(`^(?:(?:export|public|private|protected|static|async|pub|local)\s+)*(?:def|function|func|fn|sub|proc|procedure|fun)\s+(` + rxJSID + `)`)
	rxGenClass = lazy(`^(?:(?:export|public|private|protected|abstract|pub)\s+)*(class|struct|record|interface|trait|module|object)\s+(` + rxJSID + `)`)
)

// rxGeneric finds functions and classes in a language it does not know:
// the declaration ends at its braces when it has a body in braces, else
// by indentation.
func rxGeneric(sc *rxScan) []Symbol {
	var out []Symbol
	var ends []int
	n := sc.lines.count()
	for l := 1; l <= n; l++ {
		t := sc.trimmed(l)
		if len(t) == 0 {
			continue
		}
		name, kind := "", ""
		if m := rxGenFunc.FindSubmatch(t); m != nil {
			name, kind = string(m[1]), kindFunction
		} else if m := rxGenClass.FindSubmatch(t); m != nil {
			name, kind = string(m[2]), kindClass
			switch string(m[1]) {
			case "struct", "record":
				kind = kindType
			case "interface", "trait":
				kind = kindInterface
			}
		} else {
			continue
		}
		end, body := sc.blockEnd(l)
		if !body {
			if ends == nil {
				ends = sc.indentEnds(false)
			}
			end = ends[l]
		}
		out = append(out, sc.symbol(name, kind, l, end))
	}
	return out
}
