package capture

import (
	"strings"
)

// How strongly a name says its value is a credential.
const (
	nameNone = iota
	// nameWeak: a name ending in KEY, AUTH, PAT, SALT or PSK. The value
	// is a credential only when it looks generated (MASTER_KEY=9f3a…,
	// BASIC_AUTH=admin:…), not when it is a word (SMTP_AUTH=login).
	nameWeak
	// nameStrong: a name holding PASSWORD, SECRET, TOKEN, API_KEY,
	// CREDENTIALS and the like.
	nameStrong
)

// strongWords make a name strong wherever they stand in it.
var strongWords = []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "api_key", "api-key",
	"accesskey", "access_key", "access-key", "privatekey", "private_key", "private-key", "authkey", "auth_key", "auth-key",
	"credential", "sessionkey", "session_key", "signingkey", "signing_key", "encryptionkey", "encryption_key",
	"mnemonic", "seed_phrase", "seedphrase", "storepass", "keypass", "session"}

// weakWords make a name weak when they end it.
var weakWords = []string{"key", "auth", "pat", "salt"}

// publicKeyWords name keys that are not secrets (a table's sort key, a
// publishable key): a weak word after one of them is not a credential.
var publicKeyWords = []string{"public", "publishable", "primary", "foreign", "partition", "sort", "cache", "idempotency",
	"row", "hash", "range", "object", "s3", "file", "anon", "site", "ssh", "gpg", "pgp", "kms", "dedup", "lookup",
	"group", "unique", "composite", "map", "dict", "cursor", "index", "shard", "sharding", "routing", "storage_account", "foreign_"}

// metaSuffixes end names that describe a credential rather than hold it:
// TOKEN_URL, SECRET_NAME, PASSWORD_MIN_LENGTH, CSRF_TOKEN_HEADER.
var metaSuffixes = []string{"url", "uri", "path", "file", "dir", "header", "name", "type", "ttl", "expiry", "expires",
	"expiration", "length", "len", "count", "limit", "size", "enabled", "disabled", "prefix", "suffix", "endpoint",
	"host", "port", "user", "username", "ref", "arn", "version", "mode", "format", "algorithm", "alg", "audience",
	"issuer", "scope", "scopes", "region", "timeout", "interval", "lifetime", "seconds", "secs", "minutes", "hours",
	"days", "max", "min", "policy", "rotation", "required", "manager", "store", "provider", "strategy", "field",
	"column", "param", "label", "hint", "location", "source", "method", "class", "hash", "hasher", "hashers",
	"fallbacks", "reset", "validator", "validators", "pattern", "regex", "chars", "bucket", "budget", "id", "ids"}

// nameStrength says how strongly name (as written, and in lower case)
// names a credential.
func nameStrength(name, lower string) int {
	if lower == "" {
		return nameNone
	}
	lower = strings.ToLower(lower)
	if !containsAny(lower, assignmentWords...) {
		return nameNone
	}
	for _, suf := range metaSuffixes {
		if len(lower) > len(suf) && strings.HasSuffix(lower, suf) {
			c := lower[len(lower)-len(suf)-1]
			camel := name[len(name)-len(suf)] >= 'A' && name[len(name)-len(suf)] <= 'Z'
			if c == '_' || c == '-' || c == '.' || camel {
				return nameNone
			}
		}
	}
	// Tokens that page through results or resume a stream.
	if containsAny(lower, "page_token", "pagetoken", "page-token", "continuation", "resume_token", "resumetoken", "sync_token", "synctoken", "next_token", "nexttoken", "cursor") {
		return nameNone
	}
	for _, w := range strongWords {
		if strings.Contains(lower, w) {
			return nameStrong
		}
	}
	// pwd and pass as a name or its last part: PWD=, DB_PASS=.
	for _, w := range []string{"pwd", "pass", "psk"} {
		if endsWithWord(name, lower, w) {
			return nameStrong
		}
	}
	for _, w := range weakWords {
		if !endsWithWord(name, lower, w) {
			continue
		}
		rest := strings.TrimRight(lower[:len(lower)-len(w)], "_-.")
		for _, p := range publicKeyWords {
			if strings.HasSuffix(rest, p) {
				return nameNone
			}
		}
		return nameWeak
	}
	return nameNone
}

// endsWithWord says name ends with the word w (lower case): the whole
// name, after a separator, or as a capitalised part (masterKey).
func endsWithWord(name, lower, w string) bool {
	if !strings.HasSuffix(lower, w) {
		return false
	}
	if len(lower) == len(w) {
		return true
	}
	c := lower[len(lower)-len(w)-1]
	first := name[len(name)-len(w)]
	return c == '_' || c == '-' || c == '.' || first >= 'A' && first <= 'Z' && name[len(name)-len(w)-1] >= 'a' && name[len(name)-len(w)-1] <= 'z'
}

// assignmentWords are what a name of any strength holds, in lower case:
// a text without one has no assignment to look at.
var assignmentWords = []string{"pass", "secret", "token", "key", "cred", "pwd", "auth", "pat", "salt", "psk", "mnemonic", "phrase", "session"}

// credentialWordAt says text[i:] starts with one of assignmentWords, in
// any case: the words' first two letters are tested first.
func credentialWordAt(text string, i int) bool {
	c, d := text[i]|0x20, text[i+1]|0x20
	switch c {
	case 'p':
		if d != 'a' && d != 'w' && d != 's' && d != 'h' {
			return false
		}
	case 's':
		if d != 'e' && d != 'a' {
			return false
		}
	case 't':
		if d != 'o' {
			return false
		}
	case 'k':
		if d != 'e' {
			return false
		}
	case 'c':
		if d != 'r' {
			return false
		}
	case 'a':
		if d != 'u' {
			return false
		}
	case 'm':
		if d != 'n' {
			return false
		}
	default:
		return false
	}
	for _, w := range assignmentWords {
		if w[0] == c && len(text)-i >= len(w) && strings.EqualFold(text[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

// assignments finds NAME=value, NAME: value, "name": "value",
// ['name'] = 'value' and NAME := value whose name names a credential
// (nameStrength) and whose value is one (valueIsSecret).
func assignments(text, lower string, fs *findings, holder secretHolder) {
	for p := 0; p < len(text); p++ {
		c := text[p]
		if c != '=' && c != ':' {
			continue
		}
		sepEnd, ok := separator(text, p)
		if !ok {
			continue
		}
		start, end, query, ok := nameBefore(text, p)
		if !ok {
			continue
		}
		s := nameStrength(text[start:end], lower[start:end])
		if s == nameNone {
			continue
		}
		a, b, quoted := valueAfter(text, sepEnd, query, start > 0 && text[start-1] == '(')
		if a < b && valueIsSecret(text[a:b], quoted, s, holder) {
			fs.add("secret-assignment", a, b)
		}
		p = max(p, sepEnd-1)
	}
}

// separator says text[p] ('=' or ':') assigns, and returns where it
// ends: not ==, !=, <=, >=, ::, nor a URL's ://; := and => assign.
func separator(text string, p int) (int, bool) {
	c := text[p]
	if p > 0 && strings.IndexByte("=!<>:", text[p-1]) >= 0 {
		return 0, false
	}
	if p+1 < len(text) {
		switch n := text[p+1]; {
		case c == '=' && n == '=', c == ':' && n == ':', c == ':' && n == '/':
			return 0, false
		case c == ':' && n == '=', c == '=' && n == '>':
			return p + 2, true
		}
	}
	return p + 1, true
}

// nameBefore finds the name assigned at text[p]: blanks, an optional
// closing quote and bracket (['name'] =), then name characters; before
// the name, the start of the text or a character that can stand there.
// query says the name follows ? or & (a URL's query).
func nameBefore(text string, p int) (start, end int, query, ok bool) {
	j := p - 1
	for j >= 0 && (text[j] == ' ' || text[j] == '\t') {
		j--
	}
	bracket := j >= 0 && text[j] == ']'
	if bracket {
		j--
	}
	quote := byte(0)
	if j >= 0 && (text[j] == '"' || text[j] == '\'' || text[j] == '`') {
		quote = text[j]
		j--
	}
	end = j + 1
	for j >= 0 && isNameByte(text[j]) {
		j--
	}
	start = j + 1
	if start == end {
		return 0, 0, false, false
	}
	if quote != 0 {
		if j < 0 || text[j] != quote {
			return 0, 0, false, false
		}
		j--
	}
	if bracket {
		if j < 0 || text[j] != '[' {
			return 0, 0, false, false
		}
		return start, end, false, true
	}
	if j < 0 {
		return start, end, false, true
	}
	switch c := text[j]; c {
	case ' ', '\t', '\n', '\r', ',', ';', '{', '(', '"', '\'', '[', '<', '|', '$', '@', '=':
		return start, end, false, true
	case '?', '&':
		return start, end, true, true
	case ':':
		// PowerShell's $env:NAME.
		return start, end, false, j >= 3 && strings.EqualFold(text[j-3:j], "env")
	}
	return 0, 0, false, false
}

func isNameByte(c byte) bool {
	return byteClass[c]&(cAlnum|cUnder|cDash|cDot) != 0
}

// valueAfter finds the value assigned from text[p]: after blanks on the
// same line, a quoted string (taken whole, to its closing quote on the
// line) or a run up to a blank or one of "',; (and & or # in a URL's
// query).
func valueAfter(text string, p int, query, paren bool) (a, b int, quoted bool) {
	for p < len(text) && (text[p] == ' ' || text[p] == '\t') {
		p++
	}
	if p >= len(text) {
		return 0, 0, false
	}
	if q := text[p]; q == '"' || q == '\'' || q == '`' {
		if i := strings.IndexByte(text[p+1:], q); i >= 0 && !strings.Contains(text[p+1:p+1+i], "\n") {
			return p + 1, p + 1 + i, true
		}
		p++
	}
	e := p
	for e < len(text) {
		c := text[e]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == ',' || c == ';' || query && (c == '&' || c == '#') {
			break
		}
		e++
	}
	if paren && e > p && text[e-1] == ')' {
		e--
	}
	return p, e, false
}

// valueIsSecret says an assigned value is a credential: not empty, a
// placeholder, a word a setting takes, a number, a URL, a path, a
// reference to code or base64 of ordinary text; unquoted, not a
// variable's or member's name or a call; for a weak name, generated
// looking.
func valueIsSecret(v string, quoted bool, strength int, holder secretHolder) bool {
	if len(v) < 6 || strings.TrimSpace(v) == "" || isPlaceholder(v) || commonValue(v) || isNumber(v) || isURL(v) || pathLike(v) {
		return false
	}
	if quoted {
		if lowerIdent(v) && containsAny(v, "password", "passwd", "secret", "token", "key", "bearer", "basic", "auth", "cred") {
			return false
		}
	} else if lowerIdent(v) || capitalWord(v) || memberAccess(v) || codeCall(v) || headerName(v) {
		return false
	}
	if len(v) >= 16 && encodesPlainData(v, holder) {
		return false
	}
	if strength == nameWeak {
		return generatedLooking(v)
	}
	return true
}

// generatedLooking says v looks generated: long enough, letters and
// digits, many distinct characters, and not a bare UUID (an
// idempotency key, a request id).
func generatedLooking(v string) bool {
	if len(v) < 12 || isUUID(v) {
		return false
	}
	var k uint16
	var seen [256]bool
	distinct := 0
	for i := 0; i < len(v); i++ {
		k |= byteClass[v[i]]
		if !seen[v[i]] {
			seen[v[i]] = true
			distinct++
		}
	}
	return k&cDigit != 0 && k&(cUpper|cLower) != 0 && distinct >= 8
}

// isPlaceholder says a matched value is a stand-in, not a secret:
// ${VAR}, $VAR, <token>, xxx, ***, "changeme", a marker, a value cut
// short for display (sk-...) and the like.
func isPlaceholder(s string) bool {
	l := strings.ToLower(strings.Trim(s, `"'`))
	switch {
	case variableRef(l), strings.HasPrefix(l, "<") && (strings.HasSuffix(l, ">") || len(l) > 1 && l[1] >= 'a' && l[1] <= 'z'),
		strings.HasPrefix(l, "{{"), strings.HasPrefix(l, "%("), strings.HasPrefix(l, "[redacted"),
		strings.Contains(l, "..."), strings.Contains(l, "…"):
		return true
	}
	if strings.Trim(l, "x*.-_•") == "" {
		return true
	}
	switch l {
	case "password", "passwd", "pass", "secret", "token", "pwd", "apikey", "api_key", "api-key", "<secret>":
		return true
	}
	for _, p := range []string{"changeme", "placeholder", "your_", "your-", "yourpass", "yoursecret", "yourtoken", "example", "redacted", "dummy",
		"process.env", "os.environ", "getenv", "env(", "replace_me", "replace-me", "replaceme", "fixme", "todo_", "xxxx"} {
		if strings.Contains(l, p) {
			return true
		}
	}
	return false
}

// variableRef says l refers to a variable or a command's output:
// $VAR, ${VAR}, $(cmd), %VAR%, %(name)s.
func variableRef(l string) bool {
	if len(l) < 2 {
		return false
	}
	switch c := l[1]; l[0] {
	case '$':
		return c == '{' || c == '(' || c == '_' || c >= 'a' && c <= 'z'
	case '%':
		return c == '(' || c == '{' || strings.Count(l, "%") >= 2 && lowerIdent(strings.Trim(l, "%"))
	}
	return false
}

// commonValue says v is a word settings take, not a secret.
func commonValue(v string) bool {
	switch strings.ToLower(strings.Trim(v, `"'`)) {
	case "true", "false", "null", "none", "nil", "undefined", "required", "optional", "string", "number", "boolean", "bytes",
		"yes", "no", "on", "off", "enabled", "disabled", "empty", "unset", "default", "n/a", "bearer", "basic", "digest",
		"oauth", "oauth2", "jwt", "hmac", "login", "plain", "cram-md5", "str", "int", "bool", "any", "object", "buffer",
		"uint8array", "secretstr", "char[]", "[]byte", "securestring", "sensitive", "include", "same-origin", "omit":
		return true
	}
	return false
}

// isNumber says v is a number, maybe with a unit (86400, 4096, 15m, 1.5).
func isNumber(v string) bool {
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.' || v[i] == '_') {
		i++
	}
	return i > 0 && len(v)-i <= 3 && lowerIdent(v[i:]+"x")
}

// isURL says v is a URL without credentials (those are url-password's).
func isURL(v string) bool {
	i := strings.Index(v, "://")
	if i <= 0 {
		return false
	}
	for _, c := range v[:i] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-') {
			return false
		}
	}
	rest := v[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	return !strings.Contains(rest, "@")
}

// pathLike says v is a path or a name of lowercase segments:
// /run/secrets/app, ~/.ssh/id_rsa, prod/db/credentials, alias/app.
func pathLike(v string) bool {
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") ||
		len(v) > 2 && v[1] == ':' && v[2] == '\\' {
		// Unless its parts are random: a key that starts with '/'.
		for _, seg := range strings.FieldsFunc(v, func(r rune) bool { return r == '/' || r == '\\' }) {
			if len(seg) > 16 && caseChangeRate(seg) >= 0.25 || strings.ContainsAny(seg, "+=") {
				return false
			}
		}
		return true
	}
	if !strings.Contains(v, "/") {
		return false
	}
	for _, seg := range strings.Split(v, "/") {
		for i := 0; i < len(seg); i++ {
			if c := seg[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
				return false
			}
		}
	}
	return true
}

// lowerIdent says v is a bare lowercase name: password = secret_key.
func lowerIdent(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= 'a' && c <= 'z' || c == '_') {
			return false
		}
	}
	return true
}

// capitalWord says v is one capitalised word (Bearer).
func capitalWord(v string) bool {
	return len(v) > 1 && v[0] >= 'A' && v[0] <= 'Z' && lowerIdent(v[1:])
}

// memberAccess says v is a member of a variable: settings.DB_PASSWORD,
// config.token, os.environ: dotted parts that are words (letters and
// underscores, digits only at the end).
func memberAccess(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) < 2 || !(v[0] >= 'a' && v[0] <= 'z' || v[0] == '_') {
		return false
	}
	for _, p := range parts {
		if !wordPart(p) {
			return false
		}
	}
	return true
}

// wordPart is letters and underscores, maybe ending in digits.
func wordPart(p string) bool {
	i := 0
	for i < len(p) && (p[i] >= 'a' && p[i] <= 'z' || p[i] >= 'A' && p[i] <= 'Z' || p[i] == '_') {
		i++
	}
	if i == 0 {
		return false
	}
	for i < len(p) && p[i] >= '0' && p[i] <= '9' {
		i++
	}
	return i == len(p)
}

// codeCall says v starts as a call or an index of a name:
// os.Getenv(, config["api_key"], Optional[str].
func codeCall(v string) bool {
	i := 0
	for i < len(v) && (byteClass[v[i]]&(cAlnum|cUnder|cDot|cDollar|cColon) != 0) {
		i++
	}
	return i > 0 && i < len(v) && (v[i] == '(' || v[i] == '[') && !(v[0] >= '0' && v[0] <= '9')
}

// headerName says v is the name of an HTTP header: X-CSRF-Token.
func headerName(v string) bool {
	if !strings.HasPrefix(v, "X-") {
		return false
	}
	for _, p := range strings.Split(v[2:], "-") {
		if p == "" || !wordPart(p) {
			return false
		}
	}
	return true
}
