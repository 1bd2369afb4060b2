package postgres

// porterStem is FTS5's Porter stemmer (fts5_tokenize.c, SQLite, public
// domain), on the folded bytes of one token: tokens shorter than 3 bytes
// or longer than 64 pass through. It works on bytes, as SQLite's does
// (a non-ASCII byte is a consonant). It may rewrite tok in place and
// returns the stem.
func porterStem(tok []byte) []byte {
	if len(tok) > 64 || len(tok) < 3 {
		return tok
	}
	// Rules may lengthen the word by a byte ("at" → "ate").
	b := make([]byte, len(tok), len(tok)+4)
	copy(b, tok)
	n := len(b)
	b = b[:cap(b)]
	n = porterStep1A(b, n)
	if m, ok := porterStep1B(b, n); ok {
		n = m
		if m, ok := porterStep1B2(b, n); ok {
			n = m
		} else {
			c := at(b, n-1)
			if !porterIsVowel(c, false) && c != 'l' && c != 's' && c != 'z' && c == at(b, n-2) {
				n--
			} else if porterMEq1(b[:n]) && porterOstar(b[:n]) {
				b[n] = 'e'
				n++
			}
		}
	} else {
		n = m
	}
	// Step 1C.
	if at(b, n-1) == 'y' && porterVowel(b[:n-1]) {
		b[n-1] = 'i'
	}
	n = porterStep(b, n, step2, porterMGt0)
	n = porterStep(b, n, step3, porterMGt0)
	n = porterStep4(b, n)
	// Step 5a.
	if at(b, n-1) == 'e' {
		if porterMGt1(b[:n-1]) || porterMEq1(b[:n-1]) && !porterOstar(b[:n-1]) {
			n--
		}
	}
	// Step 5b.
	if n > 1 && at(b, n-1) == 'l' && at(b, n-2) == 'l' && porterMGt1(b[:n-1]) {
		n--
	}
	return b[:n]
}

// at is b[i], or 0 out of range (SQLite reads a byte before the buffer
// there; no rule matches either way in practice).
func at(b []byte, i int) byte {
	if i < 0 || i >= len(b) {
		return 0
	}
	return b[i]
}

func porterIsVowel(c byte, yIsVowel bool) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || yIsVowel && c == 'y'
}

// porterGobbleVC skips a vowel run then a consonant: the length of the
// first VC of stem, or 0 when it has none.
func porterGobbleVC(stem []byte, prevCons bool) int {
	cons := prevCons
	i := 0
	for ; i < len(stem); i++ {
		cons = !porterIsVowel(stem[i], cons)
		if !cons {
			break
		}
	}
	for i++; i < len(stem); i++ {
		cons = !porterIsVowel(stem[i], cons)
		if cons {
			return i + 1
		}
	}
	return 0
}

func porterMGt0(stem []byte) bool { return porterGobbleVC(stem, false) != 0 }

func porterMGt1(stem []byte) bool {
	n := porterGobbleVC(stem, false)
	return n != 0 && porterGobbleVC(stem[n:], true) != 0
}

func porterMEq1(stem []byte) bool {
	n := porterGobbleVC(stem, false)
	return n != 0 && porterGobbleVC(stem[n:], true) == 0
}

// porterOstar is the *o condition: the stem ends consonant-vowel-consonant
// and the last is not w, x or y.
func porterOstar(stem []byte) bool {
	last := at(stem, len(stem)-1)
	if last == 'w' || last == 'x' || last == 'y' {
		return false
	}
	mask, cons := 0, false
	for _, c := range stem {
		cons = !porterIsVowel(c, cons)
		mask <<= 1
		if cons {
			mask++
		}
	}
	return mask&7 == 5
}

// porterVowel is the *v* condition: the stem holds a vowel.
func porterVowel(stem []byte) bool {
	for i, c := range stem {
		if porterIsVowel(c, i > 0) {
			return true
		}
	}
	return false
}

func hasSuffix(b []byte, n int, s string) bool {
	return n > len(s) && string(b[n-len(s):n]) == s
}

func porterStep1A(b []byte, n int) int {
	if at(b, n-1) != 's' {
		return n
	}
	if at(b, n-2) == 'e' {
		if n > 4 && b[n-4] == 's' && b[n-3] == 's' || n > 3 && b[n-3] == 'i' {
			return n - 2
		}
		return n - 1
	}
	if at(b, n-2) != 's' {
		return n - 1
	}
	return n
}

// porterStep1B returns the new length and whether "ed" or "ing" went.
func porterStep1B(b []byte, n int) (int, bool) {
	switch at(b, n-2) {
	case 'e':
		if hasSuffix(b, n, "eed") {
			if porterMGt0(b[:n-3]) {
				copy(b[n-3:], "ee")
				return n - 1, false
			}
		} else if hasSuffix(b, n, "ed") {
			if porterVowel(b[:n-2]) {
				return n - 2, true
			}
		}
	case 'n':
		if hasSuffix(b, n, "ing") {
			if porterVowel(b[:n-3]) {
				return n - 3, true
			}
		}
	}
	return n, false
}

func porterStep1B2(b []byte, n int) (int, bool) {
	for _, r := range [][2]string{{"at", "ate"}, {"bl", "ble"}, {"iz", "ize"}} {
		if at(b, n-2) == r[0][0] && hasSuffix(b, n, r[0]) {
			copy(b[n-2:], r[1])
			return n + 1, true
		}
	}
	return n, false
}

// rule replaces a suffix.
type rule struct{ from, to string }

// step2 and step3 are the rules of Porter's steps 2 and 3 in SQLite's
// order, grouped by the word's penultimate byte: within a group the first
// suffix that matches decides, whether or not its condition holds.
var step2 = map[byte][]rule{
	'a': {{"ational", "ate"}, {"tional", "tion"}},
	'c': {{"enci", "ence"}, {"anci", "ance"}},
	'e': {{"izer", "ize"}},
	'g': {{"logi", "log"}},
	'l': {{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"}},
	'o': {{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}},
	's': {{"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"}},
	't': {{"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"}},
}

var step3 = map[byte][]rule{
	'a': {{"ical", "ic"}},
	's': {{"ness", ""}},
	't': {{"icate", "ic"}, {"iciti", "ic"}},
	'u': {{"ful", ""}},
	'v': {{"ative", ""}},
	'z': {{"alize", "al"}},
}

func porterStep(b []byte, n int, rules map[byte][]rule, cond func([]byte) bool) int {
	for _, r := range rules[at(b, n-2)] {
		if !hasSuffix(b, n, r.from) {
			continue
		}
		stem := n - len(r.from)
		if cond(b[:stem]) {
			copy(b[stem:], r.to)
			return stem + len(r.to)
		}
		return n
	}
	return n
}

// step4 removes a suffix when m > 1 ("ion" also needs s or t before it).
var step4 = map[byte][]string{
	'a': {"al"},
	'c': {"ance", "ence"},
	'e': {"er"},
	'i': {"ic"},
	'l': {"able", "ible"},
	'n': {"ant", "ement", "ment", "ent"},
	'o': {"ion", "ou"},
	's': {"ism"},
	't': {"ate", "iti"},
	'u': {"ous"},
	'v': {"ive"},
	'z': {"ize"},
}

func porterStep4(b []byte, n int) int {
	for _, suf := range step4[at(b, n-2)] {
		if !hasSuffix(b, n, suf) {
			continue
		}
		stem := b[:n-len(suf)]
		ok := porterMGt1(stem)
		if suf == "ion" {
			last := at(stem, len(stem)-1)
			ok = (last == 's' || last == 't') && ok
		}
		if ok {
			return len(stem)
		}
		return n
	}
	return n
}
