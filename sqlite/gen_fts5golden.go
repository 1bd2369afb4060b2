//go:build ignore

// This program writes ../postgres/testdata/fts5_tokens.json: how SQLite's
// FTS5 'porter unicode61' tokenizer (the one this package's full-text
// tables declare) splits, folds and stems a set of texts, for the
// PostgreSQL store's test that its own tokenizer agrees. It lives here
// because this package is the only one that imports the SQLite driver.
//
//	go run gen_fts5golden.go
package main

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	_ "modernc.org/sqlite"
)

// Golden is the file's layout; the PostgreSQL store's test reads it.
type Golden struct {
	Source string `json:"source"`
	Texts  []struct {
		Text   string   `json:"text"`
		Tokens []string `json:"tokens"`
	} `json:"texts"`
	// CodePoints: every code point from From to To (surrogates left out),
	// each written as "x<c>y <c> Q<c> ", the texts cut when longer than
	// Chunk bytes; Digests are the SHA-256 of each text's tokens joined by
	// newlines.
	CodePoints struct {
		From, To, Chunk int
		Digests         []string
	} `json:"codePoints"`
}

func main() {
	db, err := sql.Open("sqlite", ":memory:")
	check(err)
	db.SetMaxOpenConns(1)
	_, err = db.Exec("CREATE VIRTUAL TABLE f USING fts5(content, tokenize='porter unicode61'); CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')")
	check(err)
	tokens := func(s string) []string {
		_, err := db.Exec("DELETE FROM f")
		check(err)
		_, err = db.Exec("INSERT INTO f(rowid, content) VALUES (1, ?)", s)
		check(err)
		rows, err := db.Query("SELECT term FROM v ORDER BY offset")
		check(err)
		defer rows.Close()
		out := []string{}
		for rows.Next() {
			var t string
			check(rows.Scan(&t))
			out = append(out, t)
		}
		return out
	}
	var g Golden
	var version string
	check(db.QueryRow("SELECT sqlite_version()").Scan(&version))
	g.Source = "SQLite " + version + " FTS5, tokenize='porter unicode61' (sqlite/gen_fts5golden.go)"
	var words []string
	stems := strings.Fields(`rel cond valen hesit digit conform radic differ vil analog vietnam predic oper feud decis hope callous
		formal sensit sensib trip electr good reviv allow infer airlin gyroscop adjust defens irrit replac depend adopt homolog commun
		activ angular effect bowdler prob r cea contro ro gener oscill agen ab y yy bey sky trouble fizz hopp tann fall hiss fil fail
		happ agr plaster bl motor s conflat siz x ow ox oy wy fy by`)
	suffixes := strings.Fields(`ational tional enci anci izer logi bli alli entli eli ousli ization ation ator alism iveness fulness
		ousness aliti iviti biliti icate ative alize iciti ical ful ness al ance ence er ic able ible ant ement ment ent ion sion tion
		ou ism ate iti ous ive ize ed ing eed ies sses s y e ll at bl iz`)
	for _, st := range stems {
		for _, su := range suffixes {
			words = append(words, st+su)
		}
	}
	words = append(words, strings.Fields(`caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated
		troubled sized hopping tanned falling hissing fizzed failing filing happy sky Café naïve Über Ångström façade jalapeño Ærø
		straße İstanbul ǅemal Ǆemal Ελληνικά Москва 日本語 中文 한국어 ﬁnance 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 e`+"\u0301"+`clair cafe`+"\u0301"+`
		zero`+"\u200b"+`width 2023 v1.2.3 x86_64 user@example.com well-being don't C++ it's Nate's AT&T R&D foo_bar
		supercalifragilisticexpialidocious-and-then-some-more-letters-to-pass-sixty-four-bytes 🎨 🚀rocket i İ ı ß ẞ Ω µ ﬀ Ⅻ ① ² ½ aed ied`)...)
	for i := 0; i < len(words); i += 100 {
		text := strings.Join(words[i:min(len(words), i+100)], " ")
		g.Texts = append(g.Texts, struct {
			Text   string   `json:"text"`
			Tokens []string `json:"tokens"`
		}{text, tokens(text)})
	}
	g.CodePoints.From, g.CodePoints.To, g.CodePoints.Chunk = 0x80, 0x30000, 4000
	var b strings.Builder
	flush := func() {
		sum := sha256.Sum256([]byte(strings.Join(tokens(b.String()), "\n")))
		g.CodePoints.Digests = append(g.CodePoints.Digests, hex.EncodeToString(sum[:8]))
		b.Reset()
	}
	for c := rune(g.CodePoints.From); c < rune(g.CodePoints.To); c++ {
		if c >= 0xd800 && c < 0xe000 {
			continue
		}
		fmt.Fprintf(&b, "x%cy %c Q%c ", c, c, c)
		if b.Len() > g.CodePoints.Chunk {
			flush()
		}
	}
	flush()
	out, err := json.MarshalIndent(g, "", " ")
	check(err)
	check(os.WriteFile("../postgres/testdata/fts5_tokens.json", append(out, '\n'), 0o644))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen_fts5golden:", err)
		os.Exit(1)
	}
}
