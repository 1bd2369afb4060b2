package treesitter

import (
	"errors"
	"testing"
)

// FuzzParse parses any bytes with every grammar, with and without room
// for error recovery: Parse never panics, gives a well-formed tree or a
// StoppedError inside the file, and gives the same again.
func FuzzParse(f *testing.F) {
	for _, tc := range samples {
		f.Add([]byte(tc.src))
	}
	for _, s := range []string{
		"", "\x00", "def f(:\n", "function f( {\n", "int f( { return 1; }\n", "fn f() {\n",
		"class A { void m() { int x = ; } }\n", "{{{{((((\n}}}}))))\n", "\xff\xfe\x00def \xc3(\n",
		"`${`${`", "'''\n\"\"\"", "#if X\nstruct s {\n#else\n}\n#endif\n", "impl<T where {",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, lang := range Languages {
			for _, opts := range []Options{{}, {MaxErrorOps: 2000 + len(src)/4}} {
				tree, err := Parse(lang, src, opts)
				again, err2 := Parse(lang, src, opts)
				var stopped *StoppedError
				switch {
				case errors.As(err, &stopped):
					if stopped.Offset < 0 || stopped.Offset > len(src) {
						t.Fatalf("%s: stopped at byte %d of %d", lang, stopped.Offset, len(src))
					}
					if err2 == nil || err2.Error() != err.Error() {
						t.Fatalf("%s: %v, then %v", lang, err, err2)
					}
				case err != nil:
					t.Fatalf("%s: %v", lang, err)
				default:
					checkTree(t, tree, len(src))
					if err2 != nil || outline(again.Root()) != outline(tree.Root()) {
						t.Fatalf("%s: a second parse differs (%v)", lang, err2)
					}
				}
			}
		}
	})
}
