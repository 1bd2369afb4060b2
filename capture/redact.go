package capture

import (
	"math"
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

// rule finds one kind of secret. The regular expression's group named
// "secret" (or, without one, the whole match) is what is replaced.
type rule struct {
	kind string
	pat  string
	// re is compiled from pat the first time text could match it (most
	// hooks never need most rules: a process started for one hook call
	// should not compile them all).
	re func() *regexp.Regexp
	// keep, when set, vetoes a match (a look-alike the pattern cannot
	// tell apart by itself).
	keep func(secret string) bool
	// keepQuoted, when set, vetoes a match of a group named "quoted..."
	// instead of keep.
	keepQuoted func(secret string) bool
}

// secretGroups are the names of the groups that hold what a rule
// replaces: the first that matched is the secret (a rule may find it in
// several places, and a regular expression names a group once).
var secretGroups = []string{"secret", "secret2", "quoted", "quoted2"}

// The rules, most specific first: a provider's key is named as such
// rather than as a high-entropy token.
var rules = compileLazily([]rule{
	{kind: "private-key", pat: `-----BEGIN[A-Z ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?(-----END[A-Z ]*PRIVATE KEY( BLOCK)?-----|$)`},
	{kind: "aws-key", pat: `\b(?P<secret>(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z2-7]{16})\b`},
	{kind: "github-token", pat: `\b(?P<secret>(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{40,255}))`},
	{kind: "gitlab-token", pat: `\b(?P<secret>glpat-[A-Za-z0-9_-]{20,})`},
	{kind: "anthropic-key", pat: `\b(?P<secret>sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{20,})`},
	{kind: "openai-key", pat: `\b(?P<secret>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|sk-[A-Za-z0-9]{48})\b`},
	{kind: "stripe-key", pat: `\b(?P<secret>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,})`},
	{kind: "slack-token", pat: `\b(?P<secret>xox[abposr]-[A-Za-z0-9-]{10,})`},
	{kind: "slack-webhook", pat: `(?P<secret>https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,})`},
	{kind: "google-api-key", pat: `\b(?P<secret>AIza[0-9A-Za-z_-]{35})`},
	{kind: "google-oauth-secret", pat: `\b(?P<secret>GOCSPX-[A-Za-z0-9_-]{28})`},
	{kind: "npm-token", pat: `\b(?P<secret>npm_[A-Za-z0-9]{36})\b`},
	{kind: "pypi-token", pat: `\b(?P<secret>pypi-AgE[A-Za-z0-9_-]{50,})`},
	{kind: "huggingface-token", pat: `\b(?P<secret>hf_[A-Za-z0-9]{34,})\b`},
	{kind: "sendgrid-key", pat: `\b(?P<secret>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})`},
	{kind: "twilio-key", pat: `\b(?P<secret>SK[0-9a-f]{32})\b`},
	{kind: "digitalocean-token", pat: `\b(?P<secret>do[por]_v1_[a-f0-9]{64})\b`},
	{kind: "shopify-token", pat: `\b(?P<secret>shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})\b`},
	{kind: "databricks-token", pat: `\b(?P<secret>dapi[a-f0-9]{32})\b`},
	{kind: "azure-key", pat: `(?i)(?:AccountKey|SharedAccessKey)=(?P<secret>[A-Za-z0-9+/]{20,}={0,2})`},
	{kind: "jwt", pat: `\b(?P<secret>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})`},
	{kind: "url-password", pat: `\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@'"]*:(?P<secret>[^\s@/'"]{3,})@[^\s/'"]`,
		keep: func(s string) bool { return isPlaceholder(s) || strings.HasPrefix(s, "$") }},
	{kind: "auth-header", pat: `(?i)\b(?:authorization|proxy-authorization)["']?\s*[:=]\s*["']?(?:bearer|basic|token|digest)\s+(?P<secret>[A-Za-z0-9._~+/=-]{8,})`,
		keep: isPlaceholder},
	{kind: "bearer-token", pat: `(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/-]{20,}=*)`,
		keep: isPlaceholder},
	// Passwords given to a command: curl -u user:password, --password X.
	{kind: "cli-password", pat: `(?:\bcurl\b[^\n|;&]*?\s(?:-u|--user)(?:\s+|=)?["']?[^\s:"'\[\]]+:(?P<secret>[^\s"']{3,})|(?:^|\s)--pass(?:word|wd)?(?:=|\s+)["']?(?P<secret2>[^\s"']{3,}))`,
		keep: isPlaceholder},
	// KEY=value, key: value, "key": "value", ?key=value. A quoted value is
	// a string literal, taken whole (a passphrase has spaces); an unquoted
	// one may be a variable or a call, which assignmentLookAlike tells.
	{kind: "secret-assignment", pat: `(?im)(?:^|[\s,;{(?&])["']?(?:export\s+)?[A-Za-z0-9_.-]*(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API[_-]?KEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|AUTH[_-]?KEY|CLIENT[_-]?SECRET|CREDENTIALS?|_PWD|SESSION[_-]?KEY|SIGNING[_-]?KEY|ENCRYPTION[_-]?KEY)[A-Za-z0-9_]*["']?\s*(?:=|:)\s*(?:"(?P<quoted>[^"\n]{6,})"|'(?P<quoted2>[^'\n]{6,})'|["']?(?P<secret>[^\s"',;]{6,}))`,
		keep: assignmentLookAlike, keepQuoted: quotedLookAlike},
})

func compileLazily(rs []rule) []rule {
	for i := range rs {
		rs[i].re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(rs[i].pat) })
	}
	return rs
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
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
		c == '+' || c == '/' || c == '_' || c == '=' || c == '-'
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

// isPlaceholder says a matched value is a stand-in, not a secret:
// ${VAR}, $VAR, <token>, xxx, ***, "changeme" and the like.
func isPlaceholder(s string) bool {
	l := strings.ToLower(strings.Trim(s, `"'`))
	switch {
	case strings.HasPrefix(l, "$"), strings.HasPrefix(l, "<") && strings.HasSuffix(l, ">"),
		strings.HasPrefix(l, "{{"), strings.HasPrefix(l, "%"), strings.HasPrefix(l, "[redacted"):
		return true
	}
	if strings.Trim(l, "x*.-_•") == "" {
		return true
	}
	for _, p := range []string{"changeme", "placeholder", "your_", "your-", "example", "redacted", "dummy", "<", "process.env", "os.environ", "getenv", "env("} {
		if strings.Contains(l, p) {
			return true
		}
	}
	return false
}

// assignmentLookAlike vetoes KEY=value matches that are not values:
// references to variables or code, booleans, sizes, placeholders.
func assignmentLookAlike(s string) bool {
	if isPlaceholder(s) {
		return true
	}
	l := strings.ToLower(s)
	switch l {
	case "true", "false", "null", "none", "nil", "undefined", "required", "optional", "string", "number", "boolean", "bytes":
		return true
	}
	// A call or a member access (os.Getenv(...), config.token, args.password).
	if strings.ContainsAny(s, "()[]") {
		return true
	}
	return memberAccess().MatchString(l) || identifier().MatchString(s) || digits().MatchString(s) ||
		headerName().MatchString(s) || pathLike().MatchString(s)
}

// quotedLookAlike vetoes quoted values that are not secrets: the
// placeholders, words and names assignmentLookAlike knows, except that a
// quoted lowercase word is a string, so a password, unless it names a
// kind of credential ("bearer", "access_token", "password").
func quotedLookAlike(s string) bool {
	if strings.TrimSpace(s) == "" {
		return true
	}
	if identifier().MatchString(s) {
		for _, w := range []string{"password", "passwd", "secret", "token", "key", "bearer", "basic", "auth", "cred"} {
			if strings.Contains(s, w) {
				return true
			}
		}
		return false
	}
	return assignmentLookAlike(s)
}

var (
	// memberAccess is settings.DATABASE_PASSWORD, config.token.
	memberAccess = lazyRE(`^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)+$`)
	// identifier is a bare lowercase name: password = secret_key.
	identifier = lazyRE(`^[a-z_]+$`)
	// digits are a number: TOKEN_TTL_SECONDS=86400.
	digits = lazyRE(`^[0-9]+[a-z]{0,2}$`)
	// headerName is the name of a header: CSRF_TOKEN_HEADER=X-CSRF-Token.
	headerName = lazyRE(`^X-[A-Za-z]+(-[A-Za-z]+)*$`)
	// pathLike is a path or a name with lowercase segments:
	// SECRETS_PATH=/run/secrets/app, secret_name: prod/db/credentials.
	pathLike = lazyRE(`^([~.]?/)?[a-z0-9_.-]+(/[a-z0-9_.-]*)+$|^[~.]?/`)
)

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

// Redact returns text with every secret replaced by its marker, and what
// it replaced. Text without secrets comes back unchanged (the same
// string). Markers are never redacted again, so redacting twice changes
// nothing more.
func (r *Redactor) Redact(text string) (string, []Finding) {
	if r == nil || text == "" {
		return text, nil
	}
	var found []Finding
	taken := func(a, b int) bool {
		for _, f := range found {
			if a < f.End && f.Start < b {
				return true
			}
		}
		return false
	}
	lower := asciiLower(text)
	for _, ru := range rules {
		if !ru.quick(text, lower) {
			continue
		}
		re := ru.re()
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			a, b, group := m[0], m[1], ""
			for _, name := range secretGroups {
				if i := re.SubexpIndex(name); i > 0 && m[2*i] >= 0 {
					a, b, group = m[2*i], m[2*i+1], name
					break
				}
			}
			keep := ru.keep
			if strings.HasPrefix(group, "quoted") && ru.keepQuoted != nil {
				keep = ru.keepQuoted
			}
			if keep != nil && keep(text[a:b]) {
				continue
			}
			if taken(a, b) {
				continue
			}
			found = append(found, Finding{Kind: ru.kind, Start: a, End: b})
		}
	}
	if !r.NoEntropy {
		// Tokens are looked for around what the named rules found, not
		// through it: the rest of a token a rule took part of is a token
		// of its own, as it is when the text is redacted again and the
		// marker stands there (redacting twice changes nothing more).
		masked := maskFindings(text, found)
		for _, m := range longTokens(masked) {
			a, b := m[0], m[1]
			if taken(a, b) || !randomLooking(masked, a, b) {
				continue
			}
			found = append(found, Finding{Kind: "high-entropy", Start: a, End: b})
		}
	}
	if len(found) == 0 {
		return text, nil
	}
	slices.SortFunc(found, func(x, y Finding) int { return x.Start - y.Start })
	var sb strings.Builder
	last := 0
	for _, f := range found {
		sb.WriteString(text[last:f.Start])
		sb.WriteString(Marker(f.Kind))
		last = f.End
	}
	sb.WriteString(text[last:])
	return sb.String(), found
}

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

// quick is a cheap test that the rule could match at all, so most text
// never runs most regular expressions: what every match must contain
// (lower is text in lower case, for the rules that ignore case). A rule
// without one runs on every text.
func (ru rule) quick(text, lower string) bool {
	switch ru.kind {
	case "private-key":
		return strings.Contains(text, "PRIVATE KEY")
	case "aws-key":
		return containsAny(text, "AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "APKA")
	case "github-token":
		return containsAny(text, "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")
	case "gitlab-token":
		return strings.Contains(text, "glpat-")
	case "anthropic-key":
		return strings.Contains(text, "sk-ant-")
	case "openai-key":
		return strings.Contains(text, "sk-")
	case "stripe-key":
		return strings.Contains(text, "k_live_") || strings.Contains(text, "k_test_")
	case "slack-token":
		return strings.Contains(text, "xox")
	case "slack-webhook":
		return strings.Contains(text, "hooks.slack.com")
	case "google-api-key":
		return strings.Contains(text, "AIza")
	case "google-oauth-secret":
		return strings.Contains(text, "GOCSPX-")
	case "npm-token":
		return strings.Contains(text, "npm_")
	case "pypi-token":
		return strings.Contains(text, "pypi-")
	case "huggingface-token":
		return strings.Contains(text, "hf_")
	case "sendgrid-key":
		return strings.Contains(text, "SG.")
	case "digitalocean-token":
		return strings.Contains(text, "_v1_")
	case "shopify-token":
		return strings.Contains(text, "shp")
	case "databricks-token":
		return strings.Contains(text, "dapi")
	case "jwt":
		return strings.Contains(text, "eyJ")
	case "url-password":
		return strings.Contains(text, "://")
	case "cli-password":
		return strings.Contains(text, "curl") || strings.Contains(text, "--pass")
	case "azure-key":
		return strings.Contains(lower, "key=")
	case "twilio-key":
		return strings.Contains(text, "SK")
	case "auth-header":
		return strings.Contains(lower, "authorization")
	case "bearer-token":
		return strings.Contains(lower, "bearer")
	case "secret-assignment":
		return strings.ContainsAny(text, "=:") && assignmentQuick(lower)
	}
	return true
}

// assignmentQuick says lower could hold a secret assignment: one of the
// rule's keywords, then what the pattern lets stand between it and the
// assignment (more letters, digits or '_', a quote, blanks), then '=' or
// ':'. The pattern itself backtracks from every separator in the text; a
// text that only mentions a key or a token, as most do, never runs it.
func assignmentQuick(lower string) bool {
	for _, kw := range []string{"pass", "secret", "token", "key", "credential", "pwd"} {
		for from := 0; ; {
			i := strings.Index(lower[from:], kw)
			if i < 0 {
				break
			}
			j := from + i + len(kw)
			for j < len(lower) && (lower[j] >= 'a' && lower[j] <= 'z' || lower[j] >= '0' && lower[j] <= '9' || lower[j] == '_') {
				j++
			}
			if j < len(lower) && (lower[j] == '"' || lower[j] == '\'') {
				j++
			}
			for j < len(lower) && strings.IndexByte(" \t\n\f\r", lower[j]) >= 0 {
				j++
			}
			if j < len(lower) && (lower[j] == '=' || lower[j] == ':') {
				return true
			}
			from += i + 1
		}
	}
	return false
}

// randomLooking says the token text[a:b] looks generated rather than
// written: long, mixing upper case, lower case and digits, with high
// character entropy, and not a hash a tool prints on purpose (a go.sum or
// package-lock integrity value, a base64 blob in a data URL).
func randomLooking(text string, a, b int) bool {
	tok := text[a:b]
	// Part of a longer run of base64 (an embedded file): not a token.
	if a > 0 && isB64(text[a-1]) || b < len(text) && isB64(text[b]) {
		return false
	}
	prefix := strings.ToLower(text[max(0, a-24):a])
	for _, p := range []string{"h1:", "sha256-", "sha384-", "sha512-", "sha1-", "base64,", "sha256:", "ssh-ed25519 ", "ssh-rsa ", "ssh-dss ", "nistp256 ", "nistp384 ", "nistp521 "} {
		if strings.HasSuffix(prefix, p) || strings.HasPrefix(tok, p) {
			return false
		}
	}
	// Paths and identifiers: several '/' or '_' or '-' separated words.
	if strings.Count(tok, "/") >= 2 || strings.Count(tok, "_")+strings.Count(tok, "-") >= 3 {
		return false
	}
	var upper, lower, digit int
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case c >= 'A' && c <= 'Z':
			upper++
		case c >= 'a' && c <= 'z':
			lower++
		case c >= '0' && c <= '9':
			digit++
		}
	}
	if upper < 2 || lower < 2 || digit < 2 {
		return false // hex digests, ULIDs, words
	}
	// Words change case at their boundaries only
	// (CamelCaseIdentifiersThatGoOn); random text changes case about
	// every other letter.
	if caseChangeRate(tok) < 0.25 {
		return false
	}
	return entropy(tok) >= 4.3
}

func isB64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/'
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

// Kinds lists the kinds of secret the redactor names, in rule order.
func Kinds() []string {
	out := make([]string, 0, len(rules)+1)
	for _, r := range rules {
		out = append(out, r.kind)
	}
	return append(out, "high-entropy")
}
