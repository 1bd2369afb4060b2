package postgres

// This file splits text into the tokens SQLite's FTS5 indexes with the
// tokenizer the SQLite store declares, 'porter unicode61': unicode61
// (token characters are the Unicode categories L*, N* and Co, folded to
// lower case with simple diacritics removed) followed by the Porter
// stemmer. It follows fts5_tokenize.c and fts5_unicode2.c (SQLite, public
// domain) step for step, on the same tables (fts5tables.go), so both
// stores index and query the same terms.

// fts5Fold is an entry of the case folding table: Code starts a range of
// Range code points folded by adding fts5FoldOff[Flags>>1] (every other
// one when Flags&1).
type fts5Fold struct {
	Code  uint16
	Flags uint8
	Range uint8
}

// fts5TokenCategories are the categories of 'L* N* Co' (and 0: code
// points the tables do not name), as sqlite3Fts5UnicodeCatParse numbers
// them.
var fts5TokenCategories = func() (a [32]bool) {
	for _, c := range []int{0, 5, 6, 7, 8, 9, 30, 13, 14, 15, 31} {
		a[c] = true
	}
	return a
}()

// fts5ASCII says which ASCII bytes are token characters.
var fts5ASCII = func() (a [128]bool) {
	i, t := 0, 0
	for i < 128 {
		tok := fts5TokenCategories[fts5UnicodeData[t]&0x1f]
		n := int(fts5UnicodeData[t]>>5) + i
		for ; i < 128 && i < n; i++ {
			a[i] = tok
		}
		t++
	}
	a[0] = false
	return a
}()

// fts5Category is sqlite3Fts5UnicodeCategory.
func fts5Category(c uint32) int {
	if c >= 1<<20 {
		return 0
	}
	lo, hi := int(fts5UnicodeBlock[c>>16]), int(fts5UnicodeBlock[1+c>>16])
	key := uint16(c & 0xffff)
	res := -1
	for hi > lo {
		t := (hi + lo) / 2
		if key >= fts5UnicodeMap[t] {
			res, lo = t, t+1
		} else {
			hi = t
		}
	}
	if res < 0 {
		return 0
	}
	if int(key) >= int(fts5UnicodeMap[res])+int(fts5UnicodeData[res]>>5) {
		return 0
	}
	ret := int(fts5UnicodeData[res] & 0x1f)
	if ret != 30 {
		return ret
	}
	if (key-fts5UnicodeMap[res])&1 != 0 {
		return 5
	}
	return 9
}

func fts5IsAlnum(c uint32) bool { return fts5TokenCategories[fts5Category(c)] }

// fts5IsDiacritic is sqlite3Fts5UnicodeIsdiacritic.
func fts5IsDiacritic(c uint32) bool {
	const mask0, mask1 = 0x08029FDF, 0x000361F8
	if c < 768 || c > 817 {
		return false
	}
	if c < 768+32 {
		return mask0&(1<<(c-768)) != 0
	}
	return mask1&(1<<(c-768-32)) != 0
}

// fts5RemoveDiacritic is fts5_remove_diacritic with bComplex = 0
// (remove_diacritics=1, unicode61's default).
func fts5RemoveDiacritic(c uint32) uint32 {
	key := c<<3 | 7
	res := 0
	lo, hi := 0, len(fts5DiaKey)-1
	for hi >= lo {
		t := (hi + lo) / 2
		if key >= uint32(fts5DiaKey[t]) {
			res, lo = t, t+1
		} else {
			hi = t - 1
		}
	}
	if fts5DiaChar[res]&0x80 != 0 {
		return c
	}
	if c > uint32(fts5DiaKey[res]>>3)+uint32(fts5DiaKey[res]&7) {
		return c
	}
	return uint32(fts5DiaChar[res] & 0x7f)
}

// fts5FoldRune is sqlite3Fts5UnicodeFold with remove_diacritics=1.
func fts5FoldRune(c uint32) uint32 {
	if c < 128 {
		if 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	if c < 65536 {
		ret := c
		lo, hi, res := 0, len(fts5FoldEntry)-1, -1
		for hi >= lo {
			t := (hi + lo) / 2
			if int(c)-int(fts5FoldEntry[t].Code) >= 0 {
				res, lo = t, t+1
			} else {
				hi = t - 1
			}
		}
		if res >= 0 {
			p := fts5FoldEntry[res]
			if c < uint32(p.Code)+uint32(p.Range) && 0 == 1&uint32(p.Flags)&(uint32(p.Code)^c) {
				ret = (c + uint32(fts5FoldOff[p.Flags>>1])) & 0xffff
			}
		}
		return fts5RemoveDiacritic(ret)
	}
	if c >= 66560 && c < 66600 {
		return c + 40
	}
	return c
}

// readUTF8 decodes one character at s[i] as SQLite's READ_UTF8 does: a
// leading byte takes every continuation byte after it, and an overlong,
// surrogate or non-character result reads as U+FFFD.
func readUTF8(s string, i int) (uint32, int) {
	c := uint32(s[i])
	i++
	if c >= 0xc0 {
		switch {
		case c < 0xe0:
			c &= 0x1f
		case c < 0xf0:
			c &= 0x0f
		case c < 0xf8:
			c &= 0x07
		case c < 0xfc:
			c &= 0x03
		case c < 0xfe:
			c &= 0x01
		default:
			c = 0
		}
		for i < len(s) && s[i]&0xc0 == 0x80 {
			c = c<<6 + uint32(s[i]&0x3f)
			i++
		}
		if c < 0x80 || c&0xfffff800 == 0xd800 || c&0xfffffffe == 0xfffe {
			c = 0xfffd
		}
	}
	return c, i
}

func appendUTF8(b []byte, c uint32) []byte {
	switch {
	case c < 0x80:
		return append(b, byte(c))
	case c < 0x800:
		return append(b, 0xc0+byte(c>>6&0x1f), 0x80+byte(c&0x3f))
	case c < 0x10000:
		return append(b, 0xe0+byte(c>>12&0x0f), 0x80+byte(c>>6&0x3f), 0x80+byte(c&0x3f))
	}
	return append(b, 0xf0+byte(c>>18&0x07), 0x80+byte(c>>12&0x3f), 0x80+byte(c>>6&0x3f), 0x80+byte(c&0x3f))
}

// fts5Tokens calls fn with each token of text, stemmed, in order. The
// byte slice is reused between calls.
func fts5Tokens(text string, fn func(tok []byte)) {
	var buf []byte
	i := 0
	for {
		buf = buf[:0]
		// Skip separators up to the first token character.
		started := false
		for i < len(text) && !started {
			if text[i] >= 0x80 {
				c, next := readUTF8(text, i)
				i = next
				if fts5IsAlnum(c) {
					if f := fts5FoldRune(c); f != 0 {
						buf = appendUTF8(buf, f)
					}
					started = true
				}
				continue
			}
			if fts5ASCII[text[i]] {
				started = true
				break
			}
			i++
		}
		if !started {
			return
		}
		// Gather token characters, folding them.
		for i < len(text) {
			b := text[i]
			if b >= 0x80 {
				c, next := readUTF8(text, i)
				if !fts5IsAlnum(c) && !fts5IsDiacritic(c) {
					break
				}
				i = next
				if f := fts5FoldRune(c); f != 0 {
					buf = appendUTF8(buf, f)
				}
				continue
			}
			if !fts5ASCII[b] {
				break
			}
			if 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
			buf = append(buf, b)
			i++
		}
		fn(porterStem(buf))
	}
}

// fts5Terms returns text's tokens as strings.
func fts5Terms(text string) []string {
	var out []string
	fts5Tokens(text, func(t []byte) { out = append(out, string(t)) })
	return out
}
