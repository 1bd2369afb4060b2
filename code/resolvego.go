package code

import (
	"go/ast"
	"go/parser"
	"go/token"
)

// goSymbols resolves a Go file with go/parser: functions, methods
// ("Recv.Method", the receiver's type name without pointer or type
// parameters), types (interfaces apart) and constants. A declaration
// starts at its doc comment. A constant in a parenthesised block covers
// its own spec (with the spec's doc comment), not the whole block; a
// constant or type declared alone covers its whole declaration. Blank
// names ("_") are skipped.
func goSymbols(lines *srcLines) ([]Symbol, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", lines.src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	tf := fset.File(f.Pos())
	span := func(from, to token.Pos) (int, int) {
		start := tf.Offset(from)
		return lines.lineOf(start), lines.endLineOf(start, tf.Offset(to))
	}
	var out []Symbol
	add := func(name, kind string, doc *ast.CommentGroup, from, to token.Pos) {
		if name == "" || name == "_" {
			return
		}
		if doc != nil && doc.Pos() < from {
			from = doc.Pos()
		}
		s, e := span(from, to)
		out = append(out, Symbol{Name: name, Kind: kind, StartLine: s, EndLine: e})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				add(d.Name.Name, kindFunction, d.Doc, d.Pos(), d.End())
				continue
			}
			if recv := goRecvName(d.Recv.List[0].Type); recv != "" {
				add(recv+"."+d.Name.Name, kindMethod, d.Doc, d.Pos(), d.End())
			}
		case *ast.GenDecl:
			if d.Tok != token.TYPE && d.Tok != token.CONST {
				continue
			}
			grouped := d.Lparen.IsValid()
			for _, spec := range d.Specs {
				doc, from, to := d.Doc, d.Pos(), d.End()
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					if grouped {
						doc, from, to = spec.Doc, spec.Pos(), spec.End()
					}
					kind := kindType
					if _, ok := spec.Type.(*ast.InterfaceType); ok {
						kind = kindInterface
					}
					add(spec.Name.Name, kind, doc, from, to)
				case *ast.ValueSpec:
					if grouped {
						doc, from, to = spec.Doc, spec.Pos(), spec.End()
					}
					for _, n := range spec.Names {
						add(n.Name, kindConstant, doc, from, to)
					}
				}
			}
		}
	}
	return out, nil
}

// goRecvName returns the type name of a receiver: T for T, *T, T[K], *T[K, V]
// and parenthesised forms.
func goRecvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}
