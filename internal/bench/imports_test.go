package bench

import (
	"bufio"
	"encoding/json"
	"io"
	"testing"
)

// The generated import body is exactly the size asked for, and every line
// of it is an observation a server accepts.
func TestImportBodyIsExactAndValid(t *testing.T) {
	for _, size := range []int64{300, 4095, 1 << 20, 1<<20 + 77} {
		var n int64
		sc := bufio.NewScanner(io.TeeReader(newImportBody(3, size), counter{&n}))
		sc.Buffer(nil, 1<<20)
		lines := 0
		for sc.Scan() {
			var o struct{ Kind, Content string }
			if err := json.Unmarshal(sc.Bytes(), &o); err != nil || o.Kind != "message" || o.Content == "" {
				t.Fatalf("size %d, line %d: %q (%v)", size, lines+1, sc.Text(), err)
			}
			lines++
		}
		if n != size || lines == 0 {
			t.Fatalf("size %d: %d bytes, %d lines", size, n, lines)
		}
	}
}

type counter struct{ n *int64 }

func (c counter) Write(p []byte) (int, error) { *c.n += int64(len(p)); return len(p), nil }
