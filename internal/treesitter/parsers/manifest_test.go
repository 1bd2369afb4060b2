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
// in this repository) and every output have the checksums MANIFEST gives.
// Editing generated code by hand, or the script without regenerating,
// fails here.
func TestManifestMatchesFiles(t *testing.T) {
	f, err := os.Open("MANIFEST")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	root := filepath.Join("..", "..", "..")
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
	// The runtime, the seven grammars and wasm2go; the script and cairn.c;
	// the code, the data and the licences.
	for kind, want := range map[string]int{"module": 8, "script": 2, "output": 3, "input": 13} {
		if seen[kind] != want {
			t.Errorf("MANIFEST has %d %s lines, want %d", seen[kind], kind, want)
		}
	}
}
