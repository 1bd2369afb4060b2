package postgres

import (
	"fmt"
	"strings"
)

// This file parses FTS5 query syntax (the "fts" syntax of memory.TextQuery)
// as SQLite's fts5_expr.c and fts5parse.y do: the same tokens, grammar,
// precedence (NOT binds tighter than AND, AND tighter than OR, a run of
// phrases is an implicit AND tighter than all three), the same treatment
// of phrases that hold no token, and the same refusals with the same
// reasons, so a query means on PostgreSQL what it means on SQLite.

// ftsOp is the type of a query node.
type ftsOp int

const (
	opNear ftsOp = iota // a NEAR group or a single phrase ("STRING" in FTS5)
	opAnd
	opOr
	opNot
	opEOF // a phrase without tokens: matches nothing
)

// ftsTerm is one token of a phrase: a stemmed term, or a prefix of terms.
type ftsTerm struct {
	text   string
	prefix bool
}

// ftsPhrase is a sequence of terms that must appear in order.
type ftsPhrase struct {
	terms []ftsTerm
	// first is the ^ marker: the phrase must start the text.
	first bool
	// idx is the phrase's number in the query (FTS5's phrase order,
	// which bm25 sums over).
	idx int
}

// ftsNode is a node of a parsed query.
type ftsNode struct {
	op      ftsOp
	phrases []*ftsPhrase // opNear
	near    int          // opNear with more than one phrase: the NEAR distance
	kids    []*ftsNode   // opAnd, opOr (two or more); opNot (exactly two)
	// none is a column filter that excludes the only column: the node
	// matches nothing.
	none bool
	// height is the node's depth (0 for a leaf), as FTS5 counts it.
	height int
}

// ftsQuery is a parsed query with its phrases in FTS5's order.
type ftsQuery struct {
	root    *ftsNode
	phrases []*ftsPhrase
}

// ftsSyntaxError is a query FTS5 refuses, with FTS5's reason.
type ftsSyntaxError struct{ reason string }

func (e *ftsSyntaxError) Error() string { return e.reason }

// Token kinds of the query lexer.
type ftsTok int

const (
	tkEOF ftsTok = iota
	tkString
	tkOr
	tkAnd
	tkNot
	tkLP
	tkRP
	tkLCP
	tkRCP
	tkColon
	tkComma
	tkPlus
	tkStar
	tkMinus
	tkCaret
)

type ftsToken struct {
	kind ftsTok
	text string // the raw text (quotes included for a quoted string)
}

// ftsMaxDepth is SQLITE_FTS5_MAX_EXPR_DEPTH.
const ftsMaxDepth = 256

// ftsDefaultNear is FTS5_DEFAULT_NEARDIST.
const ftsDefaultNear = 10

// ftsSingle are the one-character tokens.
var ftsSingle = map[byte]ftsTok{'(': tkLP, ')': tkRP, '{': tkLCP, '}': tkRCP, ':': tkColon, ',': tkComma,
	'+': tkPlus, '*': tkStar, '-': tkMinus, '^': tkCaret}

func isBareword(c byte) bool {
	return c >= 0x80 || c == 0x1a || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isFTSSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// lexFTS splits a query into tokens.
func lexFTS(s string) ([]ftsToken, error) {
	var out []ftsToken
	i := 0
	for {
		for i < len(s) && isFTSSpace(s[i]) {
			i++
		}
		if i >= len(s) || s[i] == 0 {
			return append(out, ftsToken{kind: tkEOF}), nil
		}
		c := s[i]
		if k, ok := ftsSingle[c]; ok {
			out = append(out, ftsToken{kind: k, text: s[i : i+1]})
			i++
			continue
		}
		if c == '"' {
			j := i + 1
			for {
				if j >= len(s) || s[j] == 0 {
					return nil, &ftsSyntaxError{"unterminated string"}
				}
				if s[j] == '"' {
					j++
					if j >= len(s) || s[j] != '"' {
						break
					}
				}
				j++
			}
			out = append(out, ftsToken{kind: tkString, text: s[i:j]})
			i = j
			continue
		}
		if !isBareword(c) {
			return nil, &ftsSyntaxError{fmt.Sprintf("fts5: syntax error near %q", s[i:i+1])}
		}
		j := i + 1
		for j < len(s) && isBareword(s[j]) {
			j++
		}
		t := ftsToken{kind: tkString, text: s[i:j]}
		switch t.text {
		case "OR":
			t.kind = tkOr
		case "NOT":
			t.kind = tkNot
		case "AND":
			t.kind = tkAnd
		}
		out = append(out, t)
		i = j
	}
}

// dequote turns a quoted string's text into its content.
func dequote(s string) string {
	if len(s) >= 2 && s[0] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return s
}

type ftsParser struct {
	toks    []ftsToken
	pos     int
	phrases []*ftsPhrase
}

// parseFTS parses an FTS5 query. An error is an *ftsSyntaxError.
func parseFTS(s string) (*ftsQuery, error) {
	toks, err := lexFTS(s)
	if err != nil {
		return nil, err
	}
	p := &ftsParser{toks: toks}
	root, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tkEOF {
		return nil, p.syntax(t)
	}
	for i, ph := range p.phrases {
		ph.idx = i
	}
	return &ftsQuery{root: root, phrases: p.phrases}, nil
}

func (p *ftsParser) peek() ftsToken  { return p.toks[p.pos] }
func (p *ftsParser) peek2() ftsToken { return p.toks[min(p.pos+1, len(p.toks)-1)] }
func (p *ftsParser) next() ftsToken {
	t := p.toks[p.pos]
	p.pos = min(p.pos+1, len(p.toks)-1)
	return t
}
func (p *ftsParser) syntax(t ftsToken) error {
	return &ftsSyntaxError{fmt.Sprintf("fts5: syntax error near %q", t.text)}
}

func (p *ftsParser) binary(op ftsOp, left, right *ftsNode) (*ftsNode, error) {
	n := &ftsNode{op: op}
	for _, k := range []*ftsNode{left, right} {
		if op != opNot && k.op == op {
			n.kids = append(n.kids, k.kids...)
		} else {
			n.kids = append(n.kids, k)
		}
	}
	for _, k := range n.kids {
		n.height = max(n.height, k.height+1)
	}
	if n.height > ftsMaxDepth {
		return nil, &ftsSyntaxError{fmt.Sprintf("fts5 expression tree is too large (maximum depth %d)", ftsMaxDepth)}
	}
	return n, nil
}

func (p *ftsParser) parseOr() (*ftsNode, error) {
	left, err := p.parseAnd()
	for err == nil && p.peek().kind == tkOr {
		p.next()
		var right *ftsNode
		if right, err = p.parseAnd(); err == nil {
			left, err = p.binary(opOr, left, right)
		}
	}
	return left, err
}

func (p *ftsParser) parseAnd() (*ftsNode, error) {
	left, err := p.parseNot()
	for err == nil && p.peek().kind == tkAnd {
		p.next()
		var right *ftsNode
		if right, err = p.parseNot(); err == nil {
			left, err = p.binary(opAnd, left, right)
		}
	}
	return left, err
}

func (p *ftsParser) parseNot() (*ftsNode, error) {
	left, err := p.parsePrimary()
	for err == nil && p.peek().kind == tkNot {
		p.next()
		var right *ftsNode
		if right, err = p.parsePrimary(); err == nil {
			left, err = p.binary(opNot, left, right)
		}
	}
	return left, err
}

// parsePrimary reads "( expr )", "colset : ( expr )" or a run of
// (column-filtered) NEAR groups and phrases.
func (p *ftsParser) parsePrimary() (*ftsNode, error) {
	switch t := p.peek(); {
	case t.kind == tkLP:
		p.next()
		n, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if r := p.next(); r.kind != tkRP {
			return nil, p.syntax(r)
		}
		return n, nil
	case p.startsColset():
		none, err := p.parseColset()
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tkColon {
			return nil, p.syntax(c)
		}
		if p.peek().kind == tkLP {
			p.next()
			n, err := p.parseOr()
			if err != nil {
				return nil, err
			}
			if r := p.next(); r.kind != tkRP {
				return nil, p.syntax(r)
			}
			if none {
				n.markNone()
			}
			return n, nil
		}
		n, err := p.parseNearset()
		if err != nil {
			return nil, err
		}
		n.none = n.none || none
		return p.parseExprList(n)
	case t.kind == tkString || t.kind == tkCaret:
		n, err := p.parseNearset()
		if err != nil {
			return nil, err
		}
		return p.parseExprList(n)
	default:
		return nil, p.syntax(t)
	}
}

// markNone makes every NEAR group under n match nothing (a column filter
// that excludes the only column).
func (n *ftsNode) markNone() {
	if n.op == opNear || n.op == opEOF {
		n.none = true
	}
	for _, k := range n.kids {
		k.markNone()
	}
}

// startsColset reports whether a column filter starts here: "-", "{", or a
// string followed by ":".
func (p *ftsParser) startsColset() bool {
	t := p.peek()
	return t.kind == tkMinus || t.kind == tkLCP || t.kind == tkString && p.peek2().kind == tkColon
}

// parseColset reads a column filter and reports whether it excludes the
// only column ("content").
func (p *ftsParser) parseColset() (none bool, err error) {
	invert := false
	if p.peek().kind == tkMinus {
		p.next()
		invert = true
	}
	var names []string
	if p.peek().kind == tkLCP {
		p.next()
		for p.peek().kind == tkString {
			names = append(names, p.next().text)
		}
		if len(names) == 0 {
			return false, p.syntax(p.peek())
		}
		if r := p.next(); r.kind != tkRCP {
			return false, p.syntax(r)
		}
	} else {
		t := p.next()
		if t.kind != tkString {
			return false, p.syntax(t)
		}
		names = []string{t.text}
	}
	for _, n := range names {
		if !strings.EqualFold(dequote(n), "content") {
			return false, &ftsSyntaxError{"no such column: " + dequote(n)}
		}
	}
	return invert, nil
}

// parseExprList reads the phrases and NEAR groups that follow first,
// joined by an implicit AND. A phrase without tokens drops out of the
// run (and out of the query's phrases), as FTS5's implicit AND does.
func (p *ftsParser) parseExprList(first *ftsNode) (*ftsNode, error) {
	left := first
	for {
		t := p.peek()
		if !(t.kind == tkString || t.kind == tkCaret || p.startsColset()) {
			return left, nil
		}
		var right *ftsNode
		var err error
		if p.startsColset() {
			none, err := p.parseColset()
			if err != nil {
				return nil, err
			}
			if c := p.next(); c.kind != tkColon {
				return nil, p.syntax(c)
			}
			if right, err = p.parseNearset(); err != nil {
				return nil, err
			}
			right.none = right.none || none
		} else if right, err = p.parseNearset(); err != nil {
			return nil, err
		}
		left, err = p.implicitAnd(left, right)
		if err != nil {
			return nil, err
		}
	}
}

// implicitAnd is sqlite3Fts5ParseImplicitAnd.
func (p *ftsParser) implicitAnd(left, right *ftsNode) (*ftsNode, error) {
	prev := left
	if left.op == opAnd {
		prev = left.kids[len(left.kids)-1]
	}
	switch {
	case right.op == opEOF:
		p.phrases = p.phrases[:len(p.phrases)-1]
		return left, nil
	case prev.op == opEOF:
		// The empty phrase before right leaves the query's phrases.
		i := len(p.phrases) - 1 - len(right.phrases)
		p.phrases = append(p.phrases[:i], p.phrases[i+1:]...)
		if prev == left {
			return right, nil
		}
		left.kids[len(left.kids)-1] = right
		return left, nil
	}
	return p.binary(opAnd, left, right)
}

// parseNearset reads a phrase, "^phrase", or NEAR(phrase ... [, N]).
func (p *ftsParser) parseNearset() (*ftsNode, error) {
	t := p.peek()
	if t.kind == tkCaret {
		p.next()
		ph, err := p.parsePhrase()
		if err != nil {
			return nil, err
		}
		if len(ph.terms) > 0 {
			ph.first = true
		}
		return p.nearNode([]*ftsPhrase{ph}, 0), nil
	}
	if t.kind == tkString && p.peek2().kind == tkLP {
		p.next()
		p.next()
		if t.text != "NEAR" {
			return nil, &ftsSyntaxError{fmt.Sprintf("fts5: syntax error near %q", t.text)}
		}
		var group []*ftsPhrase
		for p.peek().kind == tkString {
			ph, err := p.parsePhrase()
			if err != nil {
				return nil, err
			}
			group = p.addToNear(group, ph)
		}
		if len(group) == 0 {
			return nil, p.syntax(p.peek())
		}
		dist := ftsDefaultNear
		if p.peek().kind == tkComma {
			p.next()
			d := p.next()
			if d.kind != tkString {
				return nil, p.syntax(d)
			}
			n := 0
			for i := 0; i < len(d.text); i++ {
				c := d.text[i]
				if c < '0' || c > '9' {
					return nil, &ftsSyntaxError{fmt.Sprintf("expected integer, got %q", d.text)}
				}
				if n < 214748363 {
					n = n*10 + int(c-'0')
				}
			}
			dist = n
		}
		if r := p.next(); r.kind != tkRP {
			return nil, p.syntax(r)
		}
		return p.nearNode(group, dist), nil
	}
	ph, err := p.parsePhrase()
	if err != nil {
		return nil, err
	}
	return p.nearNode([]*ftsPhrase{ph}, 0), nil
}

// addToNear is sqlite3Fts5ParseNearset: a phrase without tokens does not
// join a group that has another phrase.
func (p *ftsParser) addToNear(group []*ftsPhrase, ph *ftsPhrase) []*ftsPhrase {
	if len(group) > 0 {
		last := group[len(group)-1]
		switch {
		case len(ph.terms) == 0:
			p.phrases = p.phrases[:len(p.phrases)-1]
			return group
		case len(last.terms) == 0:
			p.phrases = append(p.phrases[:len(p.phrases)-2], ph)
			group = group[:len(group)-1]
		}
	}
	return append(group, ph)
}

func (p *ftsParser) nearNode(group []*ftsPhrase, dist int) *ftsNode {
	n := &ftsNode{op: opNear, phrases: group, near: dist}
	for _, ph := range group {
		if len(ph.terms) == 0 {
			n.op = opEOF
		}
	}
	return n
}

// parsePhrase reads STRING [*] { + STRING [*] }.
func (p *ftsParser) parsePhrase() (*ftsPhrase, error) {
	ph := &ftsPhrase{}
	p.phrases = append(p.phrases, ph)
	for {
		t := p.next()
		if t.kind != tkString {
			return nil, p.syntax(t)
		}
		prefix := false
		if p.peek().kind == tkStar {
			p.next()
			prefix = true
		}
		fts5Tokens(dequote(t.text), func(tok []byte) { ph.terms = append(ph.terms, ftsTerm{text: string(tok)}) })
		// As sqlite3Fts5ParseTerm: the star (or its absence) marks the
		// phrase's last term so far, even one an earlier string gave.
		if len(ph.terms) > 0 {
			ph.terms[len(ph.terms)-1].prefix = prefix
		}
		if p.peek().kind != tkPlus {
			return ph, nil
		}
		p.next()
	}
}
