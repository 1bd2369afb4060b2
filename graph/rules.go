package graph

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

var ambiguousTech = set(`go make node bun vault helm spark lambda rails cargo celery consul envoy jaeger flink locust honeycomb okta nats`)

// identParts splits a kebab- or snake-case identifier into its words.
func identParts(w string) []string {
	return strings.FieldsFunc(strings.ToLower(w), func(r rune) bool { return r == '-' || r == '_' })
}

// wordRule classifies one word token on its own: the rule, the entity
// type and the confidence ("" when the word is no entity by itself).
func (x *extractor) wordRule(t token, initial bool) (rule, typ string, conf float64) {
	w := t.text
	lw := strings.ToLower(w)
	switch {
	case t.cmd:
		if rule, typ, conf := codeRule(w); rule != "" {
			return "command", typ, conf
		}
		return "", "", 0
	case t.code:
		return codeRule(w)
	case !t.word || t.flag || utf8.RuneCountInString(w) < 2 || isNumeric(w) || isValue(lw) || isReference(w) ||
		numTypeRE.MatchString(w) || hashRE.MatchString(w) || pronouns[lw] || calendar[lw] || genericAcronyms[lw] || units[w] ||
		codeJargon[lw] && !isCapitalised(w):
		return "", "", 0
	case cveRE.MatchString(w):
		return "cve", "vulnerability", confCode
	}
	if canon, ok := knownTech[lw]; ok && (isCapitalised(w) || hasInnerCapital(canon) || !ambiguousTech[lw] && !commonWords[lw]) {
		if !initial || !commonWords[lw] {
			return "known", "technology", confKnown
		}
	}
	switch {
	case isSum(w):
		return "", "", 0
	case strings.Contains(w, "/"):
		return pathRule(w)
	case isFileName(w):
		return "path", "file", confIdent
	case strings.Contains(w, "-") && versionDotsOnly(w):
		return identRule(w) // a version inside a package's name: libglib2.0-tests, gir1.2-gtk-3.0
	case strings.Contains(w, "."):
		return dottedRule(w)
	case strings.ContainsAny(w, "-_"):
		return identRule(w)
	}
	return plainRule(w, lw, initial)
}

// versionDotsOnly reports a word whose every '.' stands between two
// digits, as in a version: perl-modules-5.22, libglib2.0-tests.
func versionDotsOnly(w string) bool {
	for k := 0; k < len(w); k++ {
		if w[k] == '.' && (k == 0 || k+1 == len(w) || !isDigitByte(w[k-1]) || !isDigitByte(w[k+1])) {
			return false
		}
	}
	return true
}

func isDigitByte(b byte) bool { return b >= '0' && b <= '9' }

// isSum reports words joined by '+' that are no name: a sum of ordinary
// words or types (sign+digits+decimal, paren+float64), not C++ or
// libstdc++.
func isSum(w string) bool {
	parts := strings.Split(w, "+")
	if len(parts) < 3 {
		return false
	}
	words := 0
	for _, p := range parts {
		if isCommon(p) || numTypeRE.MatchString(p) || len(p) == 1 {
			words++
		}
	}
	return words*2 > len(parts)
}

// codeRule classifies a `backticked` span: an identifier or a path, not
// markup, code or a shell snippet (which hold spaces or operators).
func codeRule(w string) (rule, typ string, conf float64) {
	if utf8.RuneCountInString(w) < 2 || strings.ContainsAny(w, " \t") || len(w) > 120 || strings.ContainsAny(w, "<>{}()[];=\"'$|&*!?,\\#") ||
		!hasLetters([]string{w}) {
		return "", "", 0
	}
	if strings.HasPrefix(w, "-") {
		return "", "", 0 // `-race`, `--verbose`: a command-line flag
	}
	if codeJargon[w] || numTypeRE.MatchString(w) || len(w) > 2 && w[1] == '.' && w[0] >= 'a' && w[0] <= 'z' {
		return "", "", 0 // `nil`, `ctx`, `float32`, `g.String()`: words and examples of code
	}
	if r, ok := rank(w); ok && r < commonRank && !isKnownName(strings.ToLower(w)) {
		return "code", "component", confCodeWord // `double`, `metric`: a word in code type
	}
	if strings.Contains(w, "/") || strings.Contains(w, ".") {
		if rule, _, _ := pathRule(w); rule == "" && !strings.Contains(w, ".") {
			if strings.ToLower(w) == w && !wordAlternatives(strings.Split(w, "/")) {
				return "code", "component", confCode // a package's path: `go/types`
			}
			return "", "", 0 // alternatives: `Create/Connect`
		}
		return "code", "file", confCode
	}
	return "code", "component", confCode
}

var (
	cveRE = regexp.MustCompile(`^(?i:cve)-\d{4}-\d{4,}$`)
	// A value with its unit or an ordinal: 64kb, 150mb, 10ms, 2x, 1st.
	valueRE = regexp.MustCompile(`^\d+(?:\.\d+)?(?:[a-z]{1,3}|[a-z]{1,2}/s)$`)
	// Numeric types and one-letter names with digits: uint16, float32,
	// m1, x2 (no entities).
	numTypeRE = regexp.MustCompile(`^(?:u?int|float|complex|i|u|f)(?:8|16|32|64|128)$|^[a-z]\d$`)
	// A commit hash: hexadecimal, seven characters or more, with a digit.
	hashRE = regexp.MustCompile(`^[0-9a-f]*[0-9][0-9a-f]*$`)
	// A macro, constant or environment variable: upper case and '_'.
	macroRE = regexp.MustCompile(`^_?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$`)
)

func isValue(lw string) bool { return valueRE.MatchString(lw) }

// isReference reports an issue or bug reference (ITS#9126, gtk#4947).
func isReference(w string) bool {
	k := strings.LastIndexByte(w, '#')
	return k >= 0 && k+1 < len(w) && isNumeric(w[k+1:])
}

// pathRule classifies a word holding '/': a path or a module (a file
// when it starts with '/' or ends in a file extension), unless its parts
// are alternatives (I/O, and/or, read/write, Create/Connect).
func pathRule(w string) (rule, typ string, conf float64) {
	if strings.HasPrefix(w, "/") && isPlaceholderPath(w) {
		return "", "", 0 // /path/to/file, /prefix/file: an example
	}
	if strings.HasPrefix(w, "/") || isFileName(w) {
		return "path", "file", confIdent
	}
	parts := strings.Split(w, "/")
	short, common, capital := true, true, true
	for _, p := range parts {
		short = short && (utf8.RuneCountInString(p) < 2 || isNumeric(p))
		common = common && (isCommon(p) || codeJargon[strings.ToLower(p)])
		capital = capital && isCapitalised(p) && !strings.ContainsAny(p, ".-_")
	}
	if short || common || capital || wordAlternatives(parts) || genericAcronyms[strings.ToLower(parts[0])] || isCapitalised(parts[0]) && isCommon(parts[0]) ||
		len(parts) == 2 && mediaTypes[parts[0]] {
		return "", "", 0 // alternatives, a protocol's version (HTTP/1.1), a media type (application/json)
	}
	if strings.Contains(parts[0], ".") {
		return "path", "technology", confIdent // a module: go.uber.org/atomic
	}
	return "path", "file", confIdent
}

// wordAlternatives reports two English words written as alternatives,
// sharing a stem or an ending: encrypts/decrypts, patch/unpatch.
func wordAlternatives(parts []string) bool {
	if len(parts) != 2 {
		return false
	}
	a, b := strings.ToLower(parts[0]), strings.ToLower(parts[1])
	for _, p := range []string{a, b} {
		if len(p) < 3 || strings.ContainsFunc(p, func(r rune) bool { return !unicode.IsLetter(r) }) {
			return false
		}
	}
	if !isKnownWord(a) && !isKnownWord(b) {
		return false
	}
	shared := 0
	for shared < min(len(a), len(b)) && a[len(a)-1-shared] == b[len(b)-1-shared] {
		shared++
	}
	return shared >= 3 || strings.Contains(a, b) || strings.Contains(b, a)
}

// isPlaceholderPath reports an absolute path of ordinary English words
// only (/path/to/file, /prefix): an example, where real paths hold names
// (/usr/include, /etc/localtime).
func isPlaceholderPath(w string) bool {
	parts := strings.FieldsFunc(w, func(r rune) bool { return r == '/' })
	for _, p := range parts {
		if !isCommon(p) || codeJargon[strings.ToLower(p)] || strings.ContainsAny(p, ".-_") {
			return false
		}
	}
	return len(parts) > 0
}

// mediaTypes are the top-level media types: "application/json" is a value.
var mediaTypes = set(`application text image audio video multipart font message model`)

// fileExtRE ends the names of files: source, build, packaging, data and
// documentation files, shared libraries and manual pages.
var fileExtRE = regexp.MustCompile(`[\p{L}\d]\.(?i:go|py|js|ts|tsx|jsx|rs|java|kt|rb|c|h|cc|cpp|hpp|cs|sh|bash|zsh|yaml|yml|json|toml|md|rst|txt|sql|proto|cfg|ini|conf|env|lock|mod|sum|patch|diff|dpatch|pc|la|a|o|in|ac|am|mk|cmake|vim|el|pl|pm|t|xml|html|css|svg|png|gz|xz|bz2|zip|tar|deb|symbols|install|postinst|postrm|preinst|prerm|service|socket|timer|typelib|desktop|csv|log|rev|news|s|asm|so(?:\.\d+)*|[1-9])$`)

// isFileName reports a file's name: a known extension after a name (a
// manual page's section after a letter: ssh.1, not HTTP/1.1).
func isFileName(w string) bool {
	loc := fileExtRE.FindStringIndex(w)
	if loc == nil {
		return false
	}
	ext := w[loc[0]+2:]
	return !(isDigits(ext) && len(ext) == 1 && loc[0] >= 0 && w[loc[0]] >= '0' && w[loc[0]] <= '9')
}

// dottedRule classifies a word holding '.' that is no file name: a
// selector of code (ResultReader.Read, ulid.Make) when a part is
// capitalised; lower-case dotted names are fields and abbreviations
// (orders.customer_id, e.g).
func dottedRule(w string) (rule, typ string, conf float64) {
	parts := strings.Split(w, ".")
	for _, p := range parts {
		if p != "" && (isCapitalised(p) || hasInnerCapital(p)) {
			return "selector", "component", confCamel
		}
	}
	if isReceiverSelector(parts) {
		return "selector", "component", confIdent
	}
	if isModulePath(parts) {
		return "module", "component", confRareLow // email.header: a name when a noun says so ("the email.header class")
	}
	return "", "", 0
}

// isModulePath reports a dotted name of code in lower case (email.header,
// urllib.request), which only a noun after it tells from a table's column.
func isModulePath(parts []string) bool {
	if len(parts) < 2 || topLevelDomains[parts[len(parts)-1]] {
		return false
	}
	for _, p := range parts {
		if utf8.RuneCountInString(p) < 2 || !isIdentPart(p) {
			return false
		}
	}
	return true
}

// isReceiverSelector reports a selector of code in lower case whose first
// part is short, as receivers and the standard modules are (c.rwc,
// sys.argv, self.output_dir, io.open): not an abbreviation (e.g, i.e), a
// domain (example.com), nor a table's column (orders.customer_id).
func isReceiverSelector(parts []string) bool {
	if len(parts) < 2 || utf8.RuneCountInString(parts[0]) > 4 || topLevelDomains[parts[len(parts)-1]] {
		return false
	}
	long := false
	for _, p := range parts {
		if p == "" || !isIdentPart(p) {
			return false
		}
		long = long || utf8.RuneCountInString(p) > 2
	}
	return long
}

// isIdentPart reports a part of a name of code: letters, digits and '_',
// opening with a letter or '_'.
func isIdentPart(p string) bool {
	for i, r := range p {
		if !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// topLevelDomains end domain names, which are no names of code.
var topLevelDomains = set(`com org net io dev edu gov info biz co uk de fr jp cn ru eu us ca au app ai me sh ly`)

// adjPrefixes open hyphenated adjectives and compounds: non-degenerate,
// pre-dependency, mid-stream, per-arch.
var adjPrefixes = set(`non pre post mid per multi sub self co anti semi cross re un inter over under well half de dis ex pseudo`)

// adjSuffixes end hyphenated adjectives: binNMU-safe, pydoc-style,
// architecture-specific.
var adjSuffixes = set(`safe style like based aware specific friendly compatible free only wide level ready proof oriented related endian`)

// identRule classifies a kebab- or snake-case word: an identifier of a
// service or component (auth-service, libxfixes-dev, dh-exec), or no
// entity when it is a phrase of ordinary words (error-prone, wake-up,
// denial-of-service), an adjective (rate-limited, 32-bit) or a flag.
func identRule(w string) (rule, typ string, conf float64) {
	parts := identParts(w)
	if len(parts) >= 2 && macroRE.MatchString(w) {
		return "macro", "component", confIdent // HAVE_CONFIG_H, AUTOPKGTEST_TMP
	}
	if genericAcronyms[parts[0]] && isDigits(parts[len(parts)-1]) && !strings.Contains(w, "_") {
		return "", "", 0 // UTF-8, utf-8: a generic name and a number
	}
	if allUpper(w) {
		return "acronym", "technology", confAcronym // XML-RPC, NV-CONTROL, FNV-1, DEP-8
	}
	if isSnake(w, parts) {
		return "snake", "component", confIdent // suffix_map, _fields, __init__, execute_after_
	}
	if len(parts) < 2 || isCapitalised(w) && !hasInnerCapital(w) {
		return "", "", 0
	}
	last := parts[len(parts)-1]
	if strings.HasSuffix(last, "ed") || strings.HasSuffix(last, "ing") || adjPrefixes[parts[0]] || adjSuffixes[last] || isDigits(parts[0]) {
		// rate-limited, short-lived, non-degenerate, 32-bit: adjectives.
		return "", "", 0
	}
	common, function, short := true, false, true
	if len(parts) == 2 && adjectiveRE.MatchString(last) && (isKnownWord(last) || isKnownWord(adjectiveRE.ReplaceAllString(last, ""))) {
		// IEEE754-compatible, runtime-internal: adjectives (a longer
		// name ends in a noun of the same ending: xdg-desktop-portal).
		return "", "", 0
	}
	for _, p := range parts {
		common = common && (commonWords[p] || codeJargon[p] || isNumeric(p) || isIdentWord(p))
		function = function || functionWords[p]
		short = short && len(p) < 2
	}
	switch {
	case short || !hasLetters(parts):
		return "", "", 0
	case common && function && len(parts) <= 3:
		return "", "", 0 // a phrase: denial-of-service, copy-on-write
	case componentSuffixes[last] && !compoundHeads[parts[0]]:
		return "ident", "service", confIdent
	case common && len(parts) == 2 && slices.ContainsFunc(parts, func(p string) bool { return isKnownName(p) && !ambiguousTech[p] }) && !isKnownWord(w):
		return "ident", "component", confIdent // python-mock, dh-python: a package named after its language
	case common && len(parts) == 2 && !isAgentNoun(last) && !isAbbreviation(parts[0]):
		return "", "", 0 // ordinary words: error-prone, wake-up, cherry-pick
	case common:
		// fraud-detector, superfluous-file-pattern: a name, unless a noun
		// follows (mentions decides).
		return "identCommon", "component", confIdent
	}
	return "ident", "component", confIdent
}

// isAbbreviation reports the first part of an identifier that is a word of code
// English seldom writes, no ordinary word: pkg (pkg-config), dh (dh-make).
func isAbbreviation(p string) bool {
	return !commonWords[p] && !isCommon(p) && !isNumeric(p) && len(p) <= 4
}

// allUpper reports a kebab word of capitals and numbers that opens with
// capitals: XML-RPC, NV-CONTROL, FNV-1.
func allUpper(w string) bool {
	parts := strings.Split(w, "-")
	for _, p := range parts {
		if !isUpperWord(p) && !isDigits(p) {
			return false
		}
	}
	return len(parts) > 1 && isUpperWord(parts[0])
}

// isSnake reports a name of code written with underscores, which English
// prose never joins words with: snake case (suffix_map, execute_after_),
// a private name (_fields) or a Python special name (__init__); not
// emphasis (_Why_) nor a kebab-case word.
func isSnake(w string, parts []string) bool {
	if strings.Contains(w, "-") || !hasLetters(parts) {
		return false
	}
	inner := strings.Trim(w, "_")
	switch {
	case strings.HasPrefix(w, "__") && strings.HasSuffix(w, "__"):
		return len(parts) >= 1 && !strings.Contains(inner, "__")
	case strings.HasSuffix(w, "_") && strings.HasPrefix(w, "_"):
		return false // _emphasis_
	case strings.HasPrefix(w, "_"):
		return true
	}
	return strings.Contains(inner, "_") && len(parts) >= 2
}

// adjectiveRE ends adjectives: compatible, internal, dangerous, useful.
var adjectiveRE = regexp.MustCompile(`(?:ible|able|al|ous|ful|less|ive)$`)

// isIdentWord reports an English word of identifiers (ranked within
// identCommonRank), or an inflection of one (dependencies).
func isIdentWord(p string) bool {
	if r, ok := rank(p); ok && r < identCommonRank {
		return true
	}
	for _, suf := range []string{"ies", "es", "s", "ed", "ing"} {
		if base, ok := strings.CutSuffix(p, suf); ok && len(base) >= 3 {
			if suf == "ies" {
				base += "y"
			}
			if r, ok := rank(base); ok && r < identCommonRank {
				return true
			}
		}
	}
	return false
}

// identCommonRank bounds the ordinary words of identifiers: a part ranked
// below it is an English word (null 22,797, dh 22,561), above it a name
// (sphinx 35,086, x11 68,684).
const identCommonRank = 30000

// functionWords join the words of a phrase.
var functionWords = set(`of to in on at by for from with the a an and or vs via into onto per as than after before without within`)

// plainRule classifies a word of letters and digits only.
func plainRule(w, lw string, initial bool) (rule, typ string, conf float64) {
	switch {
	case len(w) > 2 && strings.HasSuffix(w, "s") && isAcronym(w[:len(w)-1]):
		if genericAcronyms[lw[:len(lw)-1]] {
			return "", "", 0 // SDKs, APIs
		}
		return "acronyms", "technology", confAcronym // ULIDs: the plural of a name
	case hasInnerCapital(w):
		return "camel", "technology", confCamel
	case isUpperWord(w) && isCapsWord(lw):
		return "", "", 0 // OR, IT, ERROR, WARNING: a word in capitals
	case isAcronym(w):
		return "acronym", "technology", confAcronym
	case isCapitalised(w) && !initial:
		// Capitalised inside a sentence: a name, even when the word is
		// common otherwise (Go, Vault).
		return "cap", "concept", confCap
	case isCapitalised(w) && !commonWords[lw] && !interjections[lw]:
		return "initial", "concept", confInitialLow
	case isCapitalised(w):
		return "", "", 0
	case hasDigit(w) && unicode.IsLetter([]rune(w)[0]) && !isIndexed(lw):
		return "alnum", "technology", confAlnum // amd64, wine64, python2
	case isLatin(w) && !hasDigit(w) && !strings.ContainsAny(w, "'’") && !interjections[lw] && !isKnownWord(lw) && !isCompound(lw) &&
		utf8.RuneCountInString(w) >= 3 && !isVerbForm(lw):
		return "rare", "technology", confRare // lintian, zstd, debhelper
	}
	return "", "", 0
}

// capsWordRank bounds the ordinary words that a word in capitals spells
// (ERROR 3,858, AD 2,798): rarer words in capitals are acronyms that
// name something (GCC 13,623, RSA 18,790).
const capsWordRank = 5000

// isCapsWord reports an ordinary English word written in capitals.
func isCapsWord(lw string) bool {
	r, ok := rank(lw)
	return ok && r < capsWordRank
}

// isVerbForm reports a word ending as verbs do (-ing, -ed) on a stem of
// four letters or more: "unmarshaling" is a verb of jargon, not a name.
func isVerbForm(lw string) bool {
	for _, suf := range []string{"ing", "ed"} {
		if base, ok := strings.CutSuffix(lw, suf); ok && len(base) >= 4 {
			return true
		}
	}
	return false
}

// isIndexed reports an ordinary word with an index, a variable's name:
// line0, line1.
func isIndexed(lw string) bool {
	base := strings.TrimRight(lw, "01")
	return len(base) == len(lw)-1 && isCommon(base)
}

// isPluralOfWord reports a plural (or third person) of an ordinary word.
func isPluralOfWord(lw string) bool {
	base, ok := strings.CutSuffix(lw, "s")
	return ok && len(base) >= 3 && (isKnownWord(base) || isCompound(base)) && !isKnownName(lw)
}

// isKnownName reports a well-known technology.
func isKnownName(lw string) bool { _, ok := knownTech[lw]; return ok }

// isCompound reports a word made of two ordinary words (workaround,
// filename, goroutines, icecream): jargon, not a name.
func isCompound(lw string) bool {
	for k := 2; k <= len(lw)-2; k++ {
		a, b := lw[:k], lw[k:]
		if (len(a) >= 3 && isVeryCommon(a) || len(a) == 2 && commonWords[a]) && len(b) >= 4 && isVeryCommon(b) {
			return true
		}
	}
	return false
}

func hasLetters(parts []string) bool {
	for _, p := range parts {
		for _, r := range p {
			if unicode.IsLetter(r) {
				return true
			}
		}
	}
	return false
}

// isAgentNoun reports a noun of what does something (detector,
// scheduler, dashboard): a compound of ordinary words ending in one names
// a component (fraud-detector).
func isAgentNoun(w string) bool {
	return len(w) >= 5 && (strings.HasSuffix(w, "er") || strings.HasSuffix(w, "or")) || componentSuffixes[w] || componentNouns[w]
}

// componentNouns end names of components besides componentSuffixes.
var componentNouns = set(`dashboard board bot tool kit hub box console monitor site`)

// interjections open a line of conversation, before a name ("Hey Gina").
var interjections = set(`hey hi hello dear thanks thank congrats congratulations oh wow yeah yes ok okay well`)

// isLatin reports a word of Latin letters and digits.
func isLatin(w string) bool {
	for _, r := range w {
		if r > unicode.MaxLatin1 && !unicode.Is(unicode.Latin, r) {
			return false
		}
	}
	return true
}

// isVeryCommon reports a word among the 10,000 most frequent (lin and
// tian, names, are rarer: "lintian" is no compound).
func isVeryCommon(w string) bool {
	r, ok := rank(w)
	return commonWords[w] || ok && r < 10000
}

func hasDigit(w string) bool { return strings.ContainsAny(w, "0123456789") }

// mentionAt reads the mention starting at token i, if one does: its span
// and name, type, confidence and rule.
func (x *extractor) mentionAt(toks []token, i int, loud bool) (m mention, typ string, conf float64, rule string, ok bool) {
	// A word opens the sentence, or a part of it after a label's colon,
	// a dash or a parenthesis.
	initial := opensSentence(toks, i) || i > 0 && (toks[i-1].text == ":" || toks[i-1].text == "-" || toks[i-1].text == "(")
	if m, ok := standardAt(toks, i); ok {
		return m, "technology", confKnown, "standard", true
	}
	if m, ok := languageCAt(toks, i); ok {
		return m, "technology", confKnown, "known", true
	}
	if m, ok := callAt(toks, i); ok {
		return m, "component", confIdent, "call", true
	}
	if m, ok := docNameAt(toks, i); ok {
		return m, "component", confIdent, "docname", true
	}
	rule, typ, conf = x.wordRule(toks[i], initial)
	if rule == "" && toks[i].word && !toks[i].flag && i+1 < len(toks) && toks[i+1].word && namingNouns[toks[i+1].lower] &&
		strings.Contains(toks[i].text, "/") && toks[i].lower == toks[i].text && !wordAlternatives(strings.Split(toks[i].text, "/")) {
		rule, typ, conf = "path", "component", confIdent // "the go/build package", "path/filepath package"
	}
	if rule == "" && initial && i == 0 && len(toks) > 2 && toks[1].text == ":" && numTypeRE.MatchString(toks[i].text) && toks[i].word {
		rule, typ, conf = "alnum", "technology", confAlnum // "s2: Fix ...": the label of a change entry
	}
	if rule == "" || !inContext(toks, i, rule, initial, loud) || articles[toks[i].lower] {
		return m, "", 0, "", false // an article in capitals is no part of the title after it: "read The Cobra User Guide"
	}
	if rule == "module" && i+1 < len(toks) && toks[i+1].word && namingNouns[toks[i+1].lower] {
		conf = confIdent // "the email.header class", "urllib.request module"
	}
	if rule == "rare" && !rareCue(toks, i, initial) {
		conf = confRareLow
	}
	if (rule == "rare" || rule == "alnum") && inCode(toks, i) || (rule == "cap" || rule == "camel" || rule == "initial") && inIndex(toks, i) {
		return m, "", 0, "", false // a variable in code quoted in prose: "&allgs[0]", "stddev = 1"
	}
	j := runEnd(toks, i, rule)
	if first := toks[i].lower; rule == "initial" && j-i > 1 && isCommon(first) && !x.capsSeen[first] &&
		(personScore(first) < notPersonScore || isPluralOfWord(first)) {
		// An ordinary word opening the sentence before a name is no part
		// of it ("Increase Meson", "Declare Rules-Requires-Root"); a
		// first name is ("Chen Wei", "Paul Smith").
		return m, "", 0, "", false
	}
	name := joinWords(toks[i:j])
	if rule == "acronyms" {
		name = strings.TrimSuffix(name, "s")
	}
	if j-i > 1 && !(rule == "acronym" && isDigits(toks[j-1].text)) {
		last := toks[j-1].lower
		first := toks[i].lower
		switch {
		case orgSuffixes[last]:
			typ, conf = "organization", confMultiCap
		case first == "project":
			typ, conf = "project", confMultiCap
		case rule == "known" || rule == "camel":
			conf = max(conf, confMultiCap)
		case isTitlePhrase(toks[i:j], initial):
			// "Use After Free", "Life Of A Write": a phrase in title case;
			// none of its words starts a mention.
			return mention{s: i, e: j}, "", 0, "", false
		default:
			conf = confMultiCap
		}
		rule = "multicap"
	}
	if rule == "initial" && j == i+1 && i == 0 && relationStarts[toks[i].lower] {
		return m, "", 0, "", false // a verb of relation opening an instruction: "Switch from X to Y"
	}
	if rule == "initial" {
		conf = x.initialConfidence(toks, i, j, strings.ToLower(name))
	}
	if rule == "cap" && j == i+1 && i > 0 && articles[toks[i-1].lower] && isCommon(name) &&
		(toks[i].poss || j == len(toks) || !isCommonNoun(toks[j].text)) {
		// "The Client calls", "the Proxy's handler": a role, capitalised
		// (where "the Temporal docs" names what the docs are of).
		conf = confCapRole
	}
	if rule == "cap" && j == i+1 && isLanguageOrNation(strings.ToLower(name)) {
		return m, "", 0, "", false // a language or a nationality: "Spanish translations"
	}
	if typ == "concept" && j < len(toks) && toks[j].word && humanVerbs[toks[j].lower] && j-i <= 2 && rule != "known" {
		typ = "person"
	}
	if typ == "concept" && i > 0 && toks[i-1].word && personCue[toks[i-1].lower] {
		typ = "person"
	}
	return mention{s: i, e: j, name: name}, typ, conf, rule, true
}

// opensSentence reports a token with no word before it but a leading
// bracketed reference ("[a4c337b] Make sure ...").
func opensSentence(toks []token, i int) bool {
	start := 0
	if len(toks) > 0 && toks[0].text == "[" {
		for k := 1; k < len(toks) && k <= 4; k++ {
			if toks[k].text == "]" {
				start = k + 1
				break
			}
		}
	}
	return start <= i && !slices.ContainsFunc(toks[start:i], func(t token) bool { return t.word || t.code })
}

// callAt reads a function written as a call with no arguments at token
// i: "first(), next() and last()", "release() calls" (a word the rules
// would take for English otherwise).
func callAt(toks []token, i int) (mention, bool) {
	t := toks[i]
	if !t.word || t.flag || i+2 >= len(toks) || toks[i+1].text != "(" || toks[i+1].spaced || !hasLetters([]string{t.text}) ||
		pronouns[t.lower] || utf8.RuneCountInString(t.text) < 2 {
		return mention{}, false
	}
	lw := t.lower
	empty := toks[i+2].text == ")"
	manual := i+3 < len(toks) && toks[i+2].word && len(toks[i+2].text) == 1 && isDigits(toks[i+2].text) && toks[i+3].text == ")"
	// With arguments, a word English does not know: printf("%s"),
	// setlocale(LC_ALL); a manual page: ssh(1).
	args := !isKnownWord(lw) && !codeJargon[lw] && utf8.RuneCountInString(lw) >= 3 && isLatin(lw) && !isCapitalised(t.text)
	if !empty && !manual && !args {
		return mention{}, false
	}
	return mention{s: i, e: i + 1, name: t.text}, true
}

// docNameAt reads the name a doc comment of code opens with: a word in
// lower case, or an ordinary word capitalised, before "returns" or
// "reports" ("at returns the i'th digit", "All returns an iterator").
func docNameAt(toks []token, i int) (mention, bool) {
	if i != 0 || len(toks) < 3 || !toks[0].word || !toks[1].word || toks[1].text != "returns" && toks[1].text != "reports" {
		return mention{}, false
	}
	lw := toks[0].lower
	if pronouns[lw] || determiners[lw] || articles[lw] || !hasLetters([]string{lw}) || isNumeric(lw) {
		return mention{}, false
	}
	return mention{s: 0, e: 1, name: toks[0].text}, true
}

// standardBodies publish standards named by a number: RFC 4648, ISO
// 8601, IEEE 754, PEP 8.
var standardBodies = set(`RFC ISO IEEE IEC ECMA PEP FIPS ANSI`)

// standardAt reads a standard's name at token i: a standards body in
// capitals and a number.
func standardAt(toks []token, i int) (mention, bool) {
	if i+1 >= len(toks) || !toks[i].word || !standardBodies[toks[i].text] || !toks[i+1].word || !isDigits(toks[i+1].text) {
		return mention{}, false
	}
	return mention{s: i, e: i + 2, name: toks[i].text + " " + toks[i+1].text}, true
}

// languageCAt reads the C language at token i: "C" or "C++" before a
// noun (C code, a C thread, C/C++ modules), where a single capital alone
// is a placeholder (type T, option F).
func languageCAt(toks []token, i int) (mention, bool) {
	t := toks[i]
	if !t.word || t.text != "C" && t.text != "C++" || i+1 >= len(toks) {
		return mention{}, false
	}
	n := toks[i+1]
	if n.text == "/" && i+2 < len(toks) && toks[i+2].text == "C++" || n.word && isCommonNoun(n.text) && !isPluralOfWord(strings.ToLower(n.text)) ||
		t.text == "C++" && (n.word || n.text == ")" || n.text == ",") {
		return mention{s: i, e: i + 1, name: t.text}, true
	}
	return mention{}, false
}

// inContext checks a word's rule against its neighbours: a label inside
// a line ("> Quote: fine"), a common word capitalised after punctuation
// (a list's style), a field's name ("the Homepage field"), a unit after a
// number ("3.0 GHz"), capitals in a shouting sentence (a licence's
// "IN NO EVENT SHALL"), a phrase of ordinary words before a noun ("a
// dead-letter queue") are no mentions.
func inContext(toks []token, i int, rule string, initial, loud bool) bool {
	w := toks[i].text
	lw := strings.ToLower(w)
	next := ""
	if i+1 < len(toks) {
		next = toks[i+1].lower
	}
	capsRule := rule == "cap" || rule == "initial" || rule == "acronym" || rule == "acronyms"
	switch {
	case capsRule && next == ":":
		return false
	case rule == "cap" && commonWords[lw] && !toks[i-1].word:
		return false
	case (rule == "cap" || rule == "initial") && fieldNouns[next]:
		return false
	case (rule == "cap" || rule == "initial") && isPluralOfWord(lw) && !(i+1 < len(toks) && toks[i+1].word && isCapitalised(toks[i+1].text)):
		return false // Writers, Breaks, Files: ordinary words (but "Frans Pop")
	case i > 0 && toks[i-1].word && isNumeric(toks[i-1].text) && utf8.RuneCountInString(w) <= 4 && rule != "known" && rule != "code":
		return false
	case i > 1 && toks[i-1].text == "=" && !toks[i-1].spaced && toks[i-2].word && !toks[i].spaced && rule != "code":
		return false // a setting's value: arch=linux-any, PassCredentials=yes
	case loud && capsRule && strings.ToUpper(w) == w:
		return false
	case rule == "identCommon" && i+1 < len(toks) && toks[i+1].word && isCommonNoun(toks[i+1].text):
		return false
	}
	return true
}

// runEnd extends a mention over a run of capitalised words (Chen Wei,
// Acme Corp, GitHub Actions, Grafana Loki); a version or number after a
// name is left out, except a standard's number (IEEE 754, RFC 4648).
func runEnd(toks []token, i int, rule string) int {
	j := i + 1
	if rule == "cap" || rule == "initial" || rule == "known" || rule == "camel" || rule == "acronym" {
		for j < len(toks) && j-i < 4 && continuesRun(toks[j].text, rule) && !(isUpperWord(toks[j-1].text) && isUpperWord(toks[j].text)) {
			j++
		}
		if j-i >= 2 && j < len(toks) && modelNumberRE.MatchString(toks[j].text) {
			j++ // "Intel Xeon Platinum 8252C"
		}
	}
	if rule == "acronym" && j == i+1 && j < len(toks) && toks[j].word && len(toks[j].text) >= 3 && isDigits(toks[j].text) {
		j++
	}
	return j
}

// modelNumberRE matches a product's model number: digits and capitals
// (8252C, 5950X), not a plain number.
var modelNumberRE = regexp.MustCompile(`^\d+[A-Z]+\d*$`)

// isUpperWord reports a word in capitals (and digits): SVR4, UNIX, DC.
// Two side by side are two names ("SVR4 UNIX", "AD DC LDAP").
func isUpperWord(w string) bool {
	letters := false
	for _, r := range w {
		switch {
		case unicode.IsUpper(r):
			letters = true
		case !unicode.IsDigit(r):
			return false
		}
	}
	return letters && len(w) >= 2
}

// isTitlePhrase reports a run of capitalised words that capitalises a
// function word too (but for one opening the sentence): a phrase in title
// case (Use After Free, Life Of A Write), where names leave them in lower
// case (Lord of the Rings).
func isTitlePhrase(ts []token, initial bool) bool {
	for k, t := range ts {
		if functionWords[t.lower] && (k > 0 || !initial) {
			return true
		}
	}
	return false
}

// notPersonScore bounds the personScore of ordinary words (verbs and
// nouns opening a sentence) from below names.
const notPersonScore = 0.3

// continuesRun reports whether word w goes on a run of capitalised
// words whose first word was found by rule: not a number, a path, a
// month, a generic acronym, a hyphenated word ("Declare
// Rules-Requires-Root"), nor an acronym after a technology's name ("Go
// MCP": two names side by side).
func continuesRun(w, rule string) bool {
	lw := strings.ToLower(w)
	return isCapitalised(w) && !isNumeric(w) && !strings.ContainsAny(w, "/-") && !calendar[lw] && !genericAcronyms[lw] && !pronouns[lw] &&
		!genericAcronyms[strings.TrimSuffix(lw, "s")] && !((rule == "known" || rule == "camel") && isAcronym(w))
}

// initialConfidence is the confidence of a capitalised word opening a
// sentence: a name when it is capitalised inside a sentence too, when
// English does not know it (Emscripten), when a verb follows it ("Alice
// owns"), or when a list of names goes on ("Alice and Marco paired").
func (x *extractor) initialConfidence(toks []token, i, j int, lw string) float64 {
	switch {
	case x.capsSeen[lw]:
		return confCap
	case j == i+1 && !isKnownWord(lw) && !isCompound(lw) && verbFollows(toks, j):
		return confInitial // a word English does not know, before its verb: "Emscripten supports"
	case j < len(toks) && toks[j].word && (humanVerbs[toks[j].lower] || relationStarts[toks[j].lower]) &&
		toks[j].lower != "using":
		return confInitial
	case j+1 < len(toks) && toks[j].text == "," && toks[j+1].word && (toks[j+1].lower == "which" || toks[j+1].lower == "who"):
		return confInitial // the subject of a relative clause: "Totem, which is maintained by"
	case j+1 < len(toks) && (toks[j].text == "and" || toks[j].text == ",") && toks[j+1].word && isCapitalised(toks[j+1].text) &&
		!commonWords[toks[j+1].lower]:
		return confInitial
	}
	return confInitialLow
}

// inCode reports a word right among operators of code: after '&' or
// before '=', '[' or '(' with nothing between.
func inCode(toks []token, i int) bool {
	if i > 0 && toks[i-1].text == "&" || i > 1 && toks[i-1].text == "(" && !toks[i-1].spaced && toks[i-2].word {
		return true // &allgs, len(allgs), fr(nodeadkeys)
	}
	if i+1 >= len(toks) {
		return false
	}
	switch toks[i+1].text {
	case "=", "[":
		return true
	case "(": // a call, not a manual page: tempfile(1)
		return !(i+2 < len(toks) && toks[i+2].word && isDigits(toks[i+2].text))
	}
	return false
}

// inIndex reports a word of an index or a type's arguments written as
// code: "Set[K comparable]", "make(Set[String])" (where a link to a name
// in a doc comment, " [Reader]", opens after a space).
func inIndex(toks []token, i int) bool {
	return i+1 < len(toks) && toks[i+1].text == "[" && !toks[i+1].spaced ||
		i > 1 && toks[i-1].text == "[" && !toks[i-1].spaced && (toks[i-2].word || toks[i-2].code)
}

// verbFollows reports a verb, or the end of a clause, at token j: what
// follows a name opening a sentence ("Emscripten only supports", "Tern
// is"), where an instruction's verb is followed by its object
// ("Relicense the code", "Refactor parser").
func verbFollows(toks []token, j int) bool {
	for j < len(toks) && toks[j].word && (fillers[toks[j].lower] && !copulas[toks[j].lower] || isAdverb(toks[j].lower)) {
		j++
	}
	if j >= len(toks) || !toks[j].word {
		return j >= len(toks) || toks[j].text == "," || toks[j].text == ":" || toks[j].text == "'"
	}
	lw := toks[j].lower
	if copulas[lw] || humanVerbs[lw] || relationStarts[lw] || fillers[lw] {
		return true
	}
	base, ok := strings.CutSuffix(lw, "s")
	return ok && len(base) >= 3 && isKnownWord(base) && !isCapitalised(toks[j].text) && !determiners[lw]
}

// isShouting reports a sentence written mostly in capitals (a licence's
// "IN NO EVENT SHALL THE AUTHORS ..."): its capitals are no acronyms.
func isShouting(toks []token) bool {
	words, upper := 0, 0
	for _, t := range toks {
		if !t.word || utf8.RuneCountInString(t.text) < 2 || !hasLetters([]string{t.text}) {
			continue
		}
		words++
		if strings.ToUpper(t.text) == t.text {
			upper++
		}
	}
	return words >= 4 && upper*5 >= words*3
}

// fieldNouns after a capitalised word make it the name of a field or an
// element of a form, not an entity ("the Homepage field").
var fieldNouns = set(`field fields section stanza header headers entry tag key attribute property parameter button menu tab column`)

// rareCue reports a place where a name stands, for a lower-case word
// English does not know: opening the sentence (sentences open with a
// capital), in a list, after a preposition or a verb of use, or before a
// noun that says what a name is ("the zstd package").
func rareCue(toks []token, i int, initial bool) bool {
	if initial {
		return true
	}
	if j := i + 1; j < len(toks) && (toks[j].word && classNouns[toks[j].lower] || toks[j].text == ":") {
		return true
	}
	if j := i + 1; j < len(toks) && toks[j].word && genericAcronyms[toks[j].lower] {
		return false // it qualifies a generic acronym: "iterator API"
	}
	if j := i + 1; j < len(toks) && toks[j].word && relationStarts[toks[j].lower] && strings.HasSuffix(toks[j].lower, "s") && !copulas[toks[j].lower] {
		return true // the subject of a verb of relation: "vipw uses", "libfoo depends on"
	}
	for k := max(0, i-3); k < i; k++ {
		for _, r := range relationsByFirst[toks[k].lower] {
			if end, ok := r.match(toks, k); ok && end == i && len(r.words) > 1 {
				return true // the object of a phrase of relation: "switched from autotools", "depends on"
			}
		}
	}
	p := toks[i-1].lower
	switch {
	case p == "," || p == "and" || p == "or":
		// In a list, when the next item is no ordinary word.
		return !listOfWords(toks, i)
	case toks[i-1].word:
		// After a verb of use or change, or the noun that says what a name
		// is ("package textproto").
		return nameCues[p] || relationStarts[p] || classNouns[p]
	}
	return false
}

// isCommonNoun reports a lower-case ordinary word (not a function word,
// a verb of relation or a clause word), such as a noun a word qualifies.
func isCommonNoun(w string) bool {
	lw := strings.ToLower(w)
	return !isCapitalised(w) && isKnownWord(lw) && !functionWords[lw] && !relationStarts[lw] && !clauseBreaks[lw] && !fillers[lw] &&
		!negations[lw] && !strings.HasSuffix(lw, "ly")
}

// listOfWords reports a list whose item after toks[i] is an ordinary
// word ("structs, maps, slices").
func listOfWords(toks []token, i int) bool {
	for j := i + 1; j < len(toks) && j <= i+3; j++ {
		if toks[j].word && toks[j].text != "and" && toks[j].text != "or" {
			return isCommon(toks[j].text) && !isCapitalised(toks[j].text)
		}
	}
	return false
}

// classNouns say what kind of named thing comes before them.
var classNouns = set(`package packages library libraries tool tools command commands module modules binary binaries driver drivers
plugin plugins program programs crate crates daemon format protocol utility script project repository port target
architecture arch build function method type interface struct variable option field file files backend frontend`)

// nameCues come before a name: prepositions and verbs of use and change.
var nameCues = set(`on from using use uses of by in for via into against than like including such
replace replaces replaced support supports require requires requiring call calls called run runs
build builds install installs enable enables disable disables drop drops add adds bump bumps fix fixes update updates
upgrade upgrades port ports`)

func isDigits(w string) bool {
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return w != ""
}

// personCue words before a name say it is a person ("with Bob").
var personCue = set(`with ask asked by thanks told`)
