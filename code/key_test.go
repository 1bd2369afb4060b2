package code_test

import (
	"strings"
	"testing"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

func TestParseKey(t *testing.T) {
	for _, tc := range []struct {
		key       string
		path, sym string
		wantErr   string // a part of the error message; "" for success
	}{
		{key: "server.go::Server.Serve", path: "server.go", sym: "Server.Serve"},
		{key: "auth/token.go::ValidateToken", path: "auth/token.go", sym: "ValidateToken"},
		{key: "cache.py::Cache.get", path: "cache.py", sym: "Cache.get"},
		{key: "a/b.rs::geometry.Point.dist", path: "a/b.rs", sym: "geometry.Point.dist"},
		{key: "ui/list.js::$", path: "ui/list.js", sym: "$"},
		{key: "ui/list.js::jQuery$.fn_1", path: "ui/list.js", sym: "jQuery$.fn_1"},
		{key: "déjà/vu.py::Café.naïve", path: "déjà/vu.py", sym: "Café.naïve"},
		// The key splits at its last "::": a path may hold "::", a symbol never.
		{key: "a::b/x.go::T.M", path: "a::b/x.go", sym: "T.M"},
		{key: "std::io/x.rs::read", path: "std::io/x.rs", sym: "read"},
		{key: "ab:::F", path: "ab:", sym: "F"},
		{key: "a:::F", wantErr: "absolute"}, // the path is the drive "a:"
		// Missing parts.
		{key: "", wantErr: "has no"},
		{key: "x.go", wantErr: "has no"},
		{key: "x.go:F", wantErr: "has no"},
		{key: "x.go::", wantErr: "empty symbol"},
		{key: "::F", wantErr: "empty path"},
		{key: "::", wantErr: "empty path"},
		// Bad symbols.
		{key: "x.go::a..b", wantErr: "symbol"},
		{key: "x.go::.a", wantErr: "symbol"},
		{key: "x.go::a.", wantErr: "symbol"},
		{key: "x.go::#priv", wantErr: "symbol"},
		{key: "x.go::a b", wantErr: "symbol"},
		{key: "x.go::a-b", wantErr: "symbol"},
		{key: "x.go::f()", wantErr: "symbol"},
		{key: "x.go::a\xffb", wantErr: "symbol"},
		// Absolute paths and drive letters.
		{key: "/etc/x.go::F", wantErr: "absolute"},
		{key: "/x.go::F", wantErr: "absolute"},
		{key: "C:/src/x.go::F", wantErr: "absolute"},
		{key: "c:/x.go::F", wantErr: "absolute"},
		{key: "C:::F", wantErr: "absolute"},
		{key: `C:\src\x.go::F`, wantErr: "backslash"},
		{key: `src\x.go::F`, wantErr: "backslash"},
		// "C:x.go" is a relative file name on the systems cairn indexes, not a drive.
		{key: "C:x.go::F", path: "C:x.go", sym: "F"},
		// Unclean or escaping paths.
		{key: "../x.go::F", wantErr: `".."`},
		{key: "a/../../x.go::F", wantErr: `".."`},
		{key: "./x.go::F", wantErr: "not clean"},
		{key: "a//x.go::F", wantErr: "not clean"},
		{key: "a/::F", wantErr: "not clean"},
		{key: ".::F", wantErr: "not clean"},
		{key: "a\x00.go::F", wantErr: "NUL"},
		{key: "a\xff.go::F", wantErr: "UTF-8"},
	} {
		p, sym, err := code.ParseKey(tc.key)
		if tc.wantErr != "" {
			if err == nil {
				t.Errorf("ParseKey(%q) = %q, %q; want an error with %q", tc.key, p, sym, tc.wantErr)
				continue
			}
			if memory.CodeOf(err) != memory.CodeInvalidParams || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseKey(%q): %v (code %s); want invalid_params with %q", tc.key, err, memory.CodeOf(err), tc.wantErr)
			}
			if p != "" || sym != "" {
				t.Errorf("ParseKey(%q) returned %q, %q with its error", tc.key, p, sym)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseKey(%q): %v", tc.key, err)
			continue
		}
		if p != tc.path || sym != tc.sym {
			t.Errorf("ParseKey(%q) = %q, %q; want %q, %q", tc.key, p, sym, tc.path, tc.sym)
		}
		if back := code.Key(p, sym); back != tc.key {
			t.Errorf("Key(ParseKey(%q)) = %q", tc.key, back)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	for _, tc := range []struct{ path, sym string }{
		{"x.go", "F"},
		{"net/http/server.go", "Server.Serve"},
		{"a::b/c::d.py", "Outer.Inner.method"},
		{"x.go:", "T"},
		{"C:x.go", "F"},
		{"src/lib.rs", "module.Type.CONST"},
	} {
		key := code.Key(tc.path, tc.sym)
		p, sym, err := code.ParseKey(key)
		if err != nil || p != tc.path || sym != tc.sym {
			t.Errorf("ParseKey(Key(%q, %q)) = %q, %q, %v", tc.path, tc.sym, p, sym, err)
		}
	}
	// Key does not validate; ParseKey refuses what Key built from bad parts.
	for _, tc := range []struct{ path, sym string }{
		{"/abs.go", "F"},
		{"x.go", ""},
		{"", "F"},
		{"x.go", "a-b"},
	} {
		if p, sym, err := code.ParseKey(code.Key(tc.path, tc.sym)); err == nil {
			t.Errorf("ParseKey(Key(%q, %q)) = %q, %q; want an error", tc.path, tc.sym, p, sym)
		}
	}
	// A symbol holding "::" does not survive: the key splits at its last "::".
	if p, sym, err := code.ParseKey(code.Key("x.go", "a::b")); err != nil || p != "x.go::a" || sym != "b" {
		t.Errorf("ParseKey(Key(x.go, a::b)) = %q, %q, %v; want x.go::a, b", p, sym, err)
	}
}
