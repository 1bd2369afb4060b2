package postgres

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestTokensAgreeWithFTS5 checks the tokenizer against what SQLite's FTS5
// 'porter unicode61' made of the same texts (testdata/fts5_tokens.json,
// written by sqlite/gen_fts5golden.go): thousands of words through every
// rule of the Porter stemmer, and every code point up to U+2FFFF at the
// start, inside and on its own in a token (categories, case folding,
// diacritics).
func TestTokensAgreeWithFTS5(t *testing.T) {
	b, err := os.ReadFile("testdata/fts5_tokens.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Texts []struct {
			Text   string   `json:"text"`
			Tokens []string `json:"tokens"`
		} `json:"texts"`
		CodePoints struct {
			From, To, Chunk int
			Digests         []string
		} `json:"codePoints"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	words := 0
	for _, tx := range g.Texts {
		got := fts5Terms(tx.Text)
		words += len(got)
		if slices.Equal(got, tx.Tokens) {
			continue
		}
		for i := range min(len(got), len(tx.Tokens)) {
			if got[i] != tx.Tokens[i] {
				t.Errorf("token %d of %q...: FTS5 %q, cairn %q", i, tx.Text[:20], tx.Tokens[i], got[i])
				break
			}
		}
		if len(got) != len(tx.Tokens) {
			t.Errorf("%q...: FTS5 %d tokens, cairn %d", tx.Text[:20], len(tx.Tokens), len(got))
		}
	}
	var sb strings.Builder
	var digests []string
	flush := func() {
		sum := sha256.Sum256([]byte(strings.Join(fts5Terms(sb.String()), "\n")))
		digests = append(digests, hex.EncodeToString(sum[:8]))
		sb.Reset()
	}
	cp := g.CodePoints
	for c := rune(cp.From); c < rune(cp.To); c++ {
		if c >= 0xd800 && c < 0xe000 {
			continue
		}
		fmt.Fprintf(&sb, "x%cy %c Q%c ", c, c, c)
		if sb.Len() > cp.Chunk {
			first := c
			flush()
			if i := len(digests) - 1; i >= len(cp.Digests) || digests[i] != cp.Digests[i] {
				t.Errorf("the text of code points up to %U splits differently", first)
			}
		}
	}
	flush()
	if len(digests) != len(cp.Digests) || digests[len(digests)-1] != cp.Digests[len(cp.Digests)-1] {
		t.Errorf("%d code point texts; the golden file has %d, or the last differs", len(digests), len(cp.Digests))
	}
	if words < 4000 || len(digests) < 500 {
		t.Fatalf("the golden file holds too little (%d words, %d code point texts)", words, len(digests))
	}
}
