package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// A --dir that does not exist yet is made; one that cannot be (a file
// stands in its way) is the caller's mistake, said as such.
func TestWorkDir(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "not", "yet")
	dir, err := workDir(parent, "cairn-scale-")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != parent {
		t.Fatalf("working directory %s is not in %s", dir, parent)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("working directory %s: %v", dir, err)
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = workDir(filepath.Join(file, "sub"), "cairn-scale-")
	if memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("--dir under a file: %v (code %s), want invalid_params", err, memory.CodeOf(err))
	}
}
