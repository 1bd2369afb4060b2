package capture

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// lazyRE compiles a regular expression the first time it is used.
func lazyRE(pat string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pat) })
}

// Redaction marks what replaced a secret: "[REDACTED:" + kind + "]".
const redactedPrefix = "[REDACTED:"

// Marker returns the visible text that replaces a secret of the given kind.
func Marker(kind string) string { return redactedPrefix + kind + "]" }

// Finding is one secret the redactor replaced.
type Finding struct {
	Kind string `json:"kind"`
	// Start and End are byte offsets of the secret in the original text.
	Start int `json:"start"`
	End   int `json:"end"`
}

// Redactor replaces secrets in text with visible markers
// ("[REDACTED:aws-key]"). The zero value is ready to use; a nil
// *Redactor leaves text alone.
type Redactor struct {
	// NoEntropy turns off the high-entropy rule (keys of unknown
	// providers), leaving the named rules.
	NoEntropy bool
}

// findings collects what the rules find. A span that overlaps one
// already found joins it (the earlier rule names the kind), so that a
// secret two rules see in part is replaced whole. A span that overlaps a
// marker already in the text is not a secret: what a marker replaced is
// gone, and a rule that reads the marker as a value or a password would
// redact it again.
type findings struct {
	list    []Finding
	markers [][2]int
}

// markersIn finds the markers in text.
func markersIn(text string) [][2]int {
	var markers [][2]int
	for from := 0; ; {
		i := strings.Index(text[from:], redactedPrefix)
		if i < 0 {
			break
		}
		i += from
		j := strings.IndexByte(text[i:], ']')
		if j < 0 {
			break
		}
		markers = append(markers, [2]int{i, i + j + 1})
		from = i + j + 1
	}
	return markers
}

// overlapsMarker says [a, b) overlaps a marker already in the text.
func (fs *findings) overlapsMarker(a, b int) bool {
	for _, m := range fs.markers {
		if a < m[1] && m[0] < b {
			return true
		}
	}
	return false
}

func (fs *findings) add(kind string, a, b int) {
	if a >= b || fs.overlapsMarker(a, b) {
		return
	}
	for i := 0; i < len(fs.list); i++ {
		f := &fs.list[i]
		if a < f.End && f.Start < b {
			f.Start, f.End = min(f.Start, a), max(f.End, b)
			// The grown span may now reach others: fold them in.
			for j := len(fs.list) - 1; j >= 0; j-- {
				g := fs.list[j]
				if j != i && g.Start < f.End && f.Start < g.End {
					f.Start, f.End = min(f.Start, g.Start), max(f.End, g.End)
					fs.list = slices.Delete(fs.list, j, j+1)
					if j < i {
						i--
						f = &fs.list[i]
					}
				}
			}
			return
		}
	}
	fs.list = append(fs.list, Finding{Kind: kind, Start: a, End: b})
}

// taken says some finding overlaps [a, b).
func (fs *findings) taken(a, b int) bool {
	for _, f := range fs.list {
		if a < f.End && f.Start < b {
			return true
		}
	}
	return false
}

// Redact returns text with every secret replaced by its marker, and what
// it replaced. Text without secrets comes back unchanged (the same
// string). Markers are never redacted again, so redacting twice changes
// nothing more.
func (r *Redactor) Redact(text string) (string, []Finding) {
	if r == nil || text == "" {
		return text, nil
	}
	fs := r.find(text)
	if len(fs) == 0 {
		return text, nil
	}
	slices.SortFunc(fs, func(x, y Finding) int { return x.Start - y.Start })
	var sb strings.Builder
	last := 0
	for _, f := range fs {
		sb.WriteString(text[last:f.Start])
		sb.WriteString(Marker(f.Kind))
		last = f.End
	}
	sb.WriteString(text[last:])
	return sb.String(), fs
}

// find runs the rules over text, most specific first: a private key's
// block, then tokens whose format names their provider, then secrets
// named by where they stand (URLs, headers, command flags, assignments,
// prose), then what looks random.
func (r *Redactor) find(text string) []Finding {
	sv := surveyText(text)
	var found findings
	fs := &found
	if sv.present.has('[') {
		found.markers = markersIn(text)
	}
	present := &sv.present
	if sv.mayContain("PRIVATE KEY") && strings.Contains(text, "PRIVATE KEY") {
		for _, m := range privateKeyRE().FindAllStringIndex(text, -1) {
			fs.add("private-key", m[0], m[1])
		}
	}
	scanTokens(text, fs)
	for i := range rules {
		if rules[i].ready(text, &sv) {
			rules[i].apply(text, fs)
		}
	}
	if sv.credentialWord {
		lower := sv.lowerText()
		if present.has('=') || present.has(':') {
			assignments(text, lower, fs, r)
		}
		prose(text, lower, fs)
	}
	awsSecretsNearKeyIDs(text, fs)
	if !r.NoEntropy && sv.longest >= 32 {
		highEntropy(text, fs, r)
	}
	return found.list
}

// secretHolder says whether text holds a secret: base64 of ordinary text
// is a secret only if the text it encodes holds one.
type secretHolder interface {
	holdsSecret(text string) bool
}

func (r *Redactor) holdsSecret(text string) bool {
	_, found := (&Redactor{NoEntropy: r.NoEntropy}).Redact(text)
	return len(found) > 0
}

// survey is what one pass over a text finds, so that most texts skip
// most of the redactor: the bytes it holds, its longest run of the bytes
// keys are written with (the high-entropy rule's candidates are 32 or
// more), and whether it holds a word a credential's name holds
// (assignmentWords, in any case).
type survey struct {
	present        byteSet
	longest        int
	credentialWord bool
	// pairs holds the pairs of adjacent bytes (letters in lower case),
	// hashed onto 1,024 bits: a literal one of whose pairs is missing is
	// not in the text.
	pairs [16]uint64
	// text, and once asked for, the text in lower case (lower: ASCII
	// letters only, offsets kept; fold: with ſ and K too, for the rules
	// that ignore case as Go's regular expressions do).
	text        string
	lower, fold string
	lowered     bool
}

func (sv *survey) lowerText() string {
	if !sv.lowered {
		sv.lower, sv.fold, sv.lowered = lowerASCII(sv.text), "", true
		sv.fold = sv.lower
		// ſ and K (0xC5 0xBF, 0xE2 0x84 0xAA) fold onto s and k.
		if (sv.present.has(0xC5) || sv.present.has(0xE2)) && strings.ContainsAny(sv.text, "\u017f\u212a") {
			sv.fold = asciiLower(sv.text)
		}
	}
	return sv.lower
}

func (sv *survey) foldText() string {
	sv.lowerText()
	return sv.fold
}

func pairBit(a, b byte) uint { return (uint(foldTable[a])*131 + uint(foldTable[b])) & 1023 }

// foldTable maps ASCII letters to lower case and every other byte to
// itself; credentialFirst marks the first letters of assignmentWords, in
// either case.
var foldTable, credentialFirst = func() (fold [256]byte, first [256]bool) {
	for i := range fold {
		fold[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			fold[i] = byte(i) + 'a' - 'A'
		}
	}
	for _, w := range assignmentWords {
		first[w[0]], first[w[0]-'a'+'A'] = true, true
	}
	return fold, first
}()

// mayContain says text may hold lit, in any case: every pair of its
// bytes is in the text (always, when the text holds ſ or K, which fold
// onto s and k).
func (sv *survey) mayContain(lit string) bool {
	if sv.present.has(0xC5) || sv.present.has(0xE2) {
		return true
	}
	for i := 0; i+1 < len(lit); i++ {
		if p := pairBit(lit[i], lit[i+1]); sv.pairs[p>>6]&(1<<(p&63)) == 0 {
			return false
		}
	}
	return true
}

func surveyText(text string) survey {
	sv := survey{text: text}
	run := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		sv.present.add(c)
		if i > 0 {
			p := pairBit(text[i-1], c)
			sv.pairs[p>>6] |= 1 << (p & 63)
		}
		if isTokenByte(c) {
			run++
			sv.longest = max(sv.longest, run)
		} else {
			run = 0
		}
		if credentialFirst[c] && !sv.credentialWord && i+2 < len(text) && credentialWordAt(text, i) {
			sv.credentialWord = true
		}
	}
	return sv
}

// Kinds lists the kinds of secret the redactor names.
func Kinds() []string {
	var out []string
	seen := map[string]bool{}
	addKind := func(k string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	addKind("private-key")
	for _, t := range tokenRules {
		addKind(t.kind)
	}
	for _, ru := range rules {
		addKind(ru.kind)
	}
	for _, k := range []string{"secret-assignment", "prose-secret", "aws-key", "high-entropy"} {
		addKind(k)
	}
	return out
}

// asciiLower is text with ASCII letters in lower case, for the quick
// tests of rules that match regardless of case (their patterns' keywords
// are ASCII). The two other letters that Go's (?i) folds onto ASCII ones,
// the long s (ſ) and the Kelvin sign (K), become s and k: a quick test
// must pass whatever the pattern would match.
func asciiLower(text string) string {
	if strings.ContainsAny(text, "\u017f\u212a") {
		text = strings.NewReplacer("\u017f", "s", "\u212a", "k").Replace(text)
	}
	return lowerASCII(text)
}

// lowerASCII is text with ASCII letters in lower case and every other
// byte as it is: offsets in it are offsets in text.
func lowerASCII(text string) string {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c >= 'A' && c <= 'Z' {
			b := []byte(text)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return text
}

// containsAny reports whether s holds any of subs.
func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
