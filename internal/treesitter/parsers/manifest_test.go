package parsers

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The committed generated files are those scripts/gen-treesitter.sh wrote
// from its recorded inputs: the script itself and cairn.c (the inputs kept
// in this repository) and every output have the checksums MANIFEST gives,
// and MANIFEST names the modules the script pins, at the same versions and
// hashes. Editing generated code or MANIFEST by hand, or the script
// without regenerating, fails here.
func TestManifestMatchesFiles(t *testing.T) {
	f, err := os.Open("MANIFEST")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	root := filepath.Join("..", "..", "..")
	pinned := scriptModules(t, filepath.Join(root, "scripts", "gen-treesitter.sh"))
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.SplitN(line, " ", 3)
		if len(fields) != 3 {
			t.Fatalf("MANIFEST line %q: want kind, checksum, name", line)
		}
		kind, sum, name := fields[0], fields[1], fields[2]
		seen[kind]++
		var path string
		switch kind {
		case "module":
			if pinned[name] != sum {
				t.Errorf("MANIFEST pins %s at %s, scripts/gen-treesitter.sh at %q: run the script", name, sum, pinned[name])
			}
			delete(pinned, name)
			continue
		case "script":
			path = filepath.Join(root, filepath.FromSlash(name))
		case "output":
			path = name
		default:
			continue // inputs outside the repository: pinned by the script
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got := sha256.Sum256(data)
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s has SHA-256 %x, MANIFEST says %s: run scripts/gen-treesitter.sh", name, got, sum)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for name := range pinned {
		t.Errorf("scripts/gen-treesitter.sh pins %s, which MANIFEST lacks: run the script", name)
	}
	// The runtime, the seven grammars and wasm2go; the script and cairn.c;
	// the code, the data and the licences.
	for kind, want := range map[string]int{"module": 8, "script": 2, "output": 3, "input": 13} {
		if seen[kind] != want {
			t.Errorf("MANIFEST has %d %s lines, want %d", seen[kind], kind, want)
		}
	}
}

// scriptModules reads the modules gen-treesitter.sh pins (its lines
// "path version hash" inside modules=( ... )), as path@version to hash.
func scriptModules(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "\nmodules=(\n")
	block, _, ok2 := strings.Cut(rest, "\n)\n")
	if !ok || !ok2 {
		t.Fatalf("%s: no modules=( ... ) block", path)
	}
	pinned := map[string]string{}
	for _, line := range strings.Split(block, "\n") {
		f := strings.Fields(strings.Trim(strings.TrimSpace(line), `"`))
		if len(f) != 3 {
			t.Fatalf("%s: module line %q: want path, version, hash", path, line)
		}
		pinned[f[0]+"@"+f[1]] = f[2]
	}
	return pinned
}
