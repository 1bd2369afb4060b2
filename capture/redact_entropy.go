package capture

import (
	"bytes"
	"encoding/base64"
	"math"
	"strings"
	"unicode/utf8"
)

// highEntropy finds keys of unknown providers and random passwords: runs
// of 32 or more of the characters keys are written with that look
// generated (randomLooking), with the dot-joined parts around them
// (hvs.…, a bot token's three parts). It looks around what the named
// rules found, not through it: the rest of a token a rule took part of
// is a token of its own, as it is when the text is redacted again and the
// marker stands there (redacting twice changes nothing more). The bodies
// of public PEM blocks (certificates, public keys) are not looked at.
func highEntropy(text string, fs *findings, holder secretHolder) {
	masked := maskFindings(text, fs.list)
	if strings.Contains(masked, "-----BEGIN ") {
		masked = maskPublicPEM(masked)
	}
	for _, m := range longTokens(masked) {
		for _, seg := range tokenParts(masked, m[0], m[1]) {
			entropyCandidate(masked, seg[0], seg[1], fs, holder)
		}
	}
}

// tokenParts splits a run at each '=' that a value follows (name=value):
// the parts of 32 characters or more, without the '=' padding that ends
// them (a part is judged the same whether its '=' ends the run or a
// value follows it).
func tokenParts(text string, a, b int) [][2]int {
	var out [][2]int
	start := a
	for k := a; k <= b; k++ {
		if k < b && !(text[k] == '=' && k+1 < b && text[k+1] != '=') {
			continue
		}
		if end := start + len(strings.TrimRight(text[start:k], "=")); end-start >= 32 {
			out = append(out, [2]int{start, end})
		}
		start = k + 1
	}
	return out
}

// entropyCandidate adds text[a:b] if it looks generated and is none of
// the random-looking things printed on purpose.
func entropyCandidate(text string, a, b int, fs *findings, holder secretHolder) {
	if b-a == 52 && azureDevOpsPAT(text[a:b]) {
		fs.add("azure-devops-token", a, b)
		return
	}
	if !randomLooking(text, a, b) || inURLPath(text, a, b) || namedPublic(text, a) || encodesPlainData(text[a:b], holder) {
		return
	}
	a, b = extendDots(text, a, b)
	// The padding that ends the token goes with it.
	e := b
	for e < len(text) && text[e] == '=' {
		e++
	}
	if e == len(text) || !isTokenByte(text[e]) {
		b = e
	}
	fs.add("high-entropy", a, b)
}

// namedPublic says the token at text[a] is the value of a name that
// says it is not a secret: a page token, a cursor, a public key, an id,
// a hash ("nextPageToken": "…", public_key = …).
func namedPublic(text string, a int) bool {
	p := a
	if p > 0 && (text[p-1] == '"' || text[p-1] == '\'') {
		p--
	}
	for p > 0 && (text[p-1] == ' ' || text[p-1] == '\t') {
		p--
	}
	if p == 0 || text[p-1] != '=' && text[p-1] != ':' {
		return false
	}
	start, end, _, ok := nameBefore(text, p-1)
	if !ok {
		return false
	}
	name := text[start:end]
	lower := strings.ToLower(name)
	if containsAny(lower, "page_token", "pagetoken", "page-token", "continuation", "resume_token", "resumetoken", "sync_token", "synctoken", "next_token", "nexttoken", "cursor", "public", "publishable") {
		return true
	}
	for _, suf := range []string{"id", "ids", "hash", "digest", "checksum", "etag", "fingerprint", "integrity", "sha", "sha1", "sha256", "sha512", "md5", "rev", "revision", "commit", "nonce"} {
		if endsWithWord(name, lower, suf) {
			return true
		}
	}
	return false
}

// azureDevOpsPAT says tok has the shape of an Azure DevOps personal
// access token: 52 characters of lower-case base32, with digits.
func azureDevOpsPAT(tok string) bool {
	digits := 0
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case c >= '2' && c <= '7':
			digits++
		case c < 'a' || c > 'z':
			return false
		}
	}
	return digits >= 4
}

// inURLPath says the token text[a:b] reaches into the path of a URL
// (after its host, before its query): where identifiers stand (a
// document's, a file's), while credentials stand in the user part or the
// query.
func inURLPath(text string, a, b int) bool {
	i := a
	for i > 0 && a-i < 2048 && strings.IndexByte(" \t\n\r\"'<>()", text[i-1]) < 0 {
		i--
	}
	// The URL may start in the token itself (scheme://host/…).
	s := strings.Index(text[i:b], "://")
	if s < 0 || i+s < a && strings.ContainsAny(text[i+s:a], "?#@") {
		return false
	}
	host := i + s + 3
	slash := strings.IndexByte(text[host:b], '/')
	return slash >= 0 && !strings.ContainsAny(text[host:host+slash], "@")
}

// longTokens finds the candidates of the high-entropy rule (an unknown
// provider's key or a random password): every run of 32 or more of the
// characters keys are written with, [A-Za-z0-9+/_=-], as start and end
// offsets. It is what the regular expression `[A-Za-z0-9+/_=-]{32,}`
// finds, without running one over every text written.
func longTokens(text string) [][2]int {
	var out [][2]int
	start := -1
	for i := 0; i <= len(text); i++ {
		if i < len(text) && isTokenByte(text[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= 32 {
			out = append(out, [2]int{start, i})
		}
		start = -1
	}
	return out
}

func isTokenByte(c byte) bool {
	return byteClass[c]&(cAlnum|cPlus|cSlash|cUnder|cEq|cDash) != 0
}

func isB64(c byte) bool { return byteClass[c]&(cAlnum|cPlus|cSlash) != 0 }

// maskFindings returns text with every finding's bytes replaced by ']',
// the byte a marker ends with, which no token holds: offsets stay those
// of text.
func maskFindings(text string, found []Finding) string {
	if len(found) == 0 {
		return text
	}
	b := []byte(text)
	for _, f := range found {
		for i := f.Start; i < f.End; i++ {
			b[i] = ']'
		}
	}
	return string(b)
}

// maskPublicPEM returns text with the bodies of PEM blocks that are not
// private keys (certificates, public keys, signatures) replaced by ']'.
func maskPublicPEM(text string) string {
	b := []byte(text)
	for from := 0; ; {
		i := strings.Index(text[from:], "-----BEGIN ")
		if i < 0 {
			break
		}
		i += from
		j := strings.Index(text[i+11:], "-----")
		if j < 0 {
			break
		}
		label := text[i+11 : i+11+j]
		bodyStart := i + 11 + j + 5
		end := strings.Index(text[bodyStart:], "-----END "+label+"-----")
		bodyEnd := len(text)
		if end >= 0 {
			bodyEnd = bodyStart + end
		}
		if !strings.Contains(label, "PRIVATE") && !strings.ContainsAny(label, "\n") {
			for k := bodyStart; k < bodyEnd; k++ {
				if b[k] != '\n' {
					b[k] = ']'
				}
			}
		}
		from = bodyStart
	}
	return string(b)
}

// extendDots widens text[a:b] over the dot-joined parts next to it:
// hvs.CAESI…, dp.pt.…, the three parts of a bot token. A part is taken
// whole or not at all: one that runs on into '+', '/' or '=' is a token
// of its own, judged on its own (as it is once this one is a marker).
func extendDots(text string, a, b int) (int, int) {
	isPart := func(c byte) bool { return byteClass[c]&cB64u != 0 }
	for a >= 2 && text[a-1] == '.' && isPart(text[a-2]) {
		i := a - 1
		for i > 0 && isPart(text[i-1]) {
			i--
		}
		if i > 0 && isTokenByte(text[i-1]) {
			break
		}
		a = i
	}
	for b+1 < len(text) && text[b] == '.' && isPart(text[b+1]) {
		j := b + 1
		for j < len(text) && isPart(text[j]) {
			j++
		}
		if j < len(text) && isTokenByte(text[j]) {
			break
		}
		b = j
	}
	return a, b
}

// notSecretBefore are what comes just before tokens that are printed on
// purpose: hashes (go.sum's h1:, npm's sha512-), SSH public keys, S3's
// request ids, a JSON web key's public numbers.
var notSecretBefore = []string{"h1:", "sha256-", "sha384-", "sha512-", "sha1-", "base64,", "sha256:", "ssh-ed25519 ", "ssh-rsa ",
	"ssh-dss ", "nistp256 ", "nistp384 ", "nistp521 ", "x-amz-id-2: ", "x-amz-cf-id: ", "content-md5: ", `"n": "`, `"n":"`,
	`"x5c": ["`, `"x5c":["`, `"x": "`, `"y": "`}

// notSecretPrefixes start tokens that are public: Stripe's publishable
// keys, the ids of API objects (requests, messages, tool calls, Stripe's
// customers and events).
var notSecretPrefixes = []string{"pk_live_", "pk_test_", "sha256-", "sha384-", "sha512-", "chatcmpl-", "msg_", "toolu_", "req_",
	"resp_", "run_", "thread_", "asst_", "call_", "evt_", "cus_", "pi_", "ch_", "sub_", "price_", "prod_", "in_", "cs_test_", "cs_live_", "file-", "batch_"}

// hashSchemes are what a password hash's word holds ($2b$12$…,
// $argon2id$…): a hash printed, not a secret.
var hashSchemes = []string{"$2a$", "$2b$", "$2y$", "$argon2", "$6$", "$5$", "$y$", "$1$", "pbkdf2_", "{ssha}", "{sha}", "bcrypt$", "scrypt$"}

// randomLooking says the token text[a:b] looks generated rather than
// written: long, mixing upper case, lower case and digits, with high
// character entropy, not made of words (a path, an identifier), and not
// a hash a tool prints on purpose or base64 of a file or of ordinary
// text.
func randomLooking(text string, a, b int) bool {
	tok := text[a:b]
	// Part of a longer run of base64 (an embedded file): not a token.
	if a > 0 && isB64(text[a-1]) || b < len(text) && isB64(text[b]) {
		return false
	}
	prefix := strings.ToLower(text[max(0, a-24):a])
	for _, p := range notSecretBefore {
		if strings.HasSuffix(prefix, p) || strings.HasPrefix(tok, p) {
			return false
		}
	}
	for _, p := range notSecretPrefixes {
		if strings.HasPrefix(tok, p) {
			return false
		}
	}
	if word := wordBefore(text, a); word != "" && containsAny(strings.ToLower(word), hashSchemes...) {
		return false
	}
	if strings.Contains(tok, "EXAMPLE") || hexBoth(strings.TrimPrefix(tok, "0x")) || ipfsCID(tok) {
		return false
	}
	var upper, lower, digit int
	for i := 0; i < len(tok); i++ {
		switch byteClass[tok[i]] {
		case cUpper:
			upper++
		case cLower:
			lower++
		case cDigit:
			digit++
		}
	}
	if upper < 2 || lower < 2 || digit < 2 {
		return false // hex digests, ULIDs, words
	}
	// Words change case at their boundaries only
	// (CamelCaseIdentifiersThatGoOn); random text changes case about
	// every other letter.
	return caseChangeRate(tok) >= 0.25 && entropy(tok) >= 4.3 && !madeOfWords(tok)
}

// ipfsCID says tok is an IPFS content id (version 0): Qm and 44
// characters of base58.
func ipfsCID(tok string) bool {
	return len(tok) == 46 && strings.HasPrefix(tok, "Qm") && !strings.ContainsAny(tok, "0OIl+/_=-")
}

// wordBefore is the text from the last blank or quote before a, up to a
// (at most 160 bytes): the start of the word a token ends.
func wordBefore(text string, a int) string {
	i := a
	for i > 0 && a-i < 160 && strings.IndexByte(" \t\n\"'", text[i-1]) < 0 {
		i--
	}
	return text[i:a]
}

// madeOfWords says tok is words joined by '/', '_', '-' or '.': a path
// or an identifier. Generated tokens hold those characters too, between
// random parts.
func madeOfWords(tok string) bool {
	parts := strings.FieldsFunc(tok, func(r rune) bool { return r == '/' || r == '_' || r == '-' || r == '+' || r == '=' })
	if len(parts) < 3 {
		return false
	}
	words, long := 0, 0
	for _, p := range parts {
		if len(p) < 4 {
			continue
		}
		long++
		if wordLike(p) {
			words++
		}
	}
	return long > 0 && 2*words >= long
}

// wordLike says p is written: lower case (maybe with digits at its end),
// Capitalised, ALL CAPS, or digits.
func wordLike(p string) bool {
	if lowerIdent(strings.TrimRight(p, "0123456789")) || capitalWord(p) {
		return true
	}
	allUpper, allDigit := true, true
	for i := 0; i < len(p); i++ {
		allUpper = allUpper && p[i] >= 'A' && p[i] <= 'Z'
		allDigit = allDigit && p[i] >= '0' && p[i] <= '9'
	}
	return allUpper || allDigit
}

// fileMagic are how the files that turn up base64-encoded in JSON begin.
var fileMagic = [][]byte{{0x89, 'P', 'N', 'G'}, {0xff, 0xd8, 0xff}, []byte("GIF8"), []byte("%PDF"), {0x1f, 0x8b}, []byte("PK\x03\x04"),
	[]byte("\x00asm"), []byte("RIFF"), []byte("wOFF"), []byte("wOF2"), []byte("\x7fELF"), []byte("<svg"), []byte("<?xml"), {0, 0, 1, 0}}

// encodesPlainData says tok is base64 of a file (its first bytes are a
// file format's) or of ordinary text (printable, with blanks, JSON or a
// URL in it) in which holder finds no secret (without a holder,
// text is not taken as plain).
func encodesPlainData(tok string, holder secretHolder) bool {
	data, ok := decodeBase64(tok)
	if !ok || len(data) < 16 {
		return false
	}
	for _, m := range fileMagic {
		if bytes.HasPrefix(data, m) {
			return true
		}
	}
	if holder == nil || !utf8.Valid(data) {
		return false
	}
	printable := 0
	for _, c := range data {
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' || c == '\r' || c >= 0x80 {
			printable++
		}
	}
	if printable < len(data) {
		return false
	}
	s := string(data)
	if !strings.ContainsAny(s, " \n") && !strings.HasPrefix(s, "{") && !strings.HasPrefix(s, "[") && !strings.Contains(s, "://") {
		return false
	}
	return !holder.holdsSecret(s)
}

// decodeBase64 decodes tok as standard or URL-safe base64, padded or
// not.
func decodeBase64(tok string) ([]byte, bool) {
	raw := strings.TrimRight(tok, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(raw, "-_") {
		if strings.ContainsAny(raw, "+/") {
			return nil, false
		}
		enc = base64.RawURLEncoding
	}
	data, err := enc.DecodeString(raw)
	return data, err == nil
}

// caseChangeRate is the share of adjacent letter pairs whose case
// differs.
func caseChangeRate(s string) float64 {
	pairs, changes := 0, 0
	for i := 1; i < len(s); i++ {
		a, b := s[i-1], s[i]
		la, ua := a >= 'a' && a <= 'z', a >= 'A' && a <= 'Z'
		lb, ub := b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z'
		if (la || ua) && (lb || ub) {
			pairs++
			if la != lb {
				changes++
			}
		}
	}
	if pairs == 0 {
		return 0
	}
	return float64(changes) / float64(pairs)
}

// entropy is the Shannon entropy of s's bytes, in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h, n := 0.0, float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// awsSecretsNearKeyIDs finds AWS secret access keys standing near their
// access key id (using AKIA… and secret wJalr…/…, a CSV of both): 40
// characters of base64's alphabet within 200 bytes of an aws-key
// finding, mixing cases and digits. Alone, such a key reads as a path.
func awsSecretsNearKeyIDs(text string, fs *findings) {
	var ids []Finding
	for _, f := range fs.list {
		if f.Kind == "aws-key" && f.End-f.Start == 20 {
			ids = append(ids, f)
		}
	}
	for _, f := range ids {
		lo, hi := max(0, f.Start-200), min(len(text), f.End+200)
		for i := lo; i < hi; i++ {
			if !isB64(text[i]) || i > 0 && (isB64(text[i-1]) || text[i-1] == '=') {
				continue
			}
			j := i
			for j < len(text) && isB64(text[j]) {
				j++
			}
			if j-i == 40 && (j == len(text) || !isWordByte(text[j]) && text[j] != '=') {
				if k := text[i:j]; mixed(k) && !strings.Contains(k, "EXAMPLE") && !fs.taken(i, j) {
					fs.add("aws-key", i, j)
				}
			}
			i = j
		}
	}
}
