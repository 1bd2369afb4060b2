package capture

import (
	"slices"
	"strings"
)

// Byte classes, for the bodies of tokens and for the scanners.
const (
	cUpper uint16 = 1 << iota
	cLower
	cDigit
	cDash
	cUnder
	cDot
	cPlus
	cSlash
	cEq
	cTilde
	cDollar
	cColon
	cPercent

	cAlnum = cUpper | cLower | cDigit
	cB64u  = cAlnum | cDash | cUnder
	cB64   = cAlnum | cPlus | cSlash | cEq
)

// byteClass is each byte's class.
var byteClass = func() (t [256]uint16) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = cUpper
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = cLower
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = cDigit
	}
	for c, k := range map[byte]uint16{'-': cDash, '_': cUnder, '.': cDot, '+': cPlus, '/': cSlash, '=': cEq, '~': cTilde, '$': cDollar, ':': cColon, '%': cPercent} {
		t[c] = k
	}
	return t
}()

// byteSet is a set of bytes.
type byteSet [4]uint64

func (s *byteSet) add(c byte)      { s[c>>6] |= 1 << (c & 63) }
func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }

func isWordByte(c byte) bool { return byteClass[c]&(cAlnum|cUnder) != 0 }

// tokenRule finds a token by its provider's literal prefix and what
// follows it: body bytes of the given classes, at least min of them (at
// most max, when set). exact refuses a longer run (the format has a fixed
// length, and a longer token is something else); check, when set, tests
// the body's structure.
type tokenRule struct {
	kind     string
	prefix   string
	body     uint16
	min, max int
	exact    bool
	check    func(body string) bool
}

// hexLower says s is lowercase hex; hexBoth, hex of either case.
func hexLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func hexBoth(s string) bool { return hexLower(strings.ToLower(s)) }

// mixed says s holds an upper-case letter, a lower-case one and a digit,
// as generated tokens of that alphabet do.
func mixed(s string) bool {
	var k uint16
	for i := 0; i < len(s); i++ {
		k |= byteClass[s[i]]
	}
	return k&cUpper != 0 && k&cLower != 0 && k&cDigit != 0
}

// isUUID says s is a UUID (8-4-4-4-12 hex digits).
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !hexBoth(s[i : i+1]) {
				return false
			}
		}
	}
	return true
}

// tokenRules are the token formats whose prefix names their provider,
// from the providers' public descriptions of them.
var tokenRules = []tokenRule{
	// Amazon: access key ids.
	{kind: "aws-key", prefix: "AKIA", body: cUpper | cDigit, min: 16, max: 16, exact: true, check: base32ish},
	{kind: "aws-key", prefix: "ASIA", body: cUpper | cDigit, min: 16, max: 16, exact: true, check: base32ish},
	{kind: "aws-key", prefix: "ABIA", body: cUpper | cDigit, min: 16, max: 16, exact: true, check: base32ish},
	{kind: "aws-key", prefix: "ACCA", body: cUpper | cDigit, min: 16, max: 16, exact: true, check: base32ish},
	{kind: "aws-key", prefix: "AGPA", body: cUpper | cDigit, min: 16, max: 16, exact: true, check: base32ish},
	{kind: "aws-key", prefix: "AIDA", body: cUpper | cDigit, min: 16, max: 16, exact: true, check: base32ish},
	{kind: "aws-key", prefix: "AROA", body: cUpper | cDigit, min: 16, max: 16, exact: true, check: base32ish},
	{kind: "aws-key", prefix: "AIPA", body: cUpper | cDigit, min: 16, max: 16, exact: true, check: base32ish},
	{kind: "aws-key", prefix: "ANPA", body: cUpper | cDigit, min: 16, max: 16, exact: true, check: base32ish},
	{kind: "aws-key", prefix: "ANVA", body: cUpper | cDigit, min: 16, max: 16, exact: true, check: base32ish},
	{kind: "aws-key", prefix: "APKA", body: cUpper | cDigit, min: 16, max: 16, exact: true, check: base32ish},
	// GitHub and GitLab.
	{kind: "github-token", prefix: "ghp_", body: cAlnum, min: 36, max: 255},
	{kind: "github-token", prefix: "gho_", body: cAlnum, min: 36, max: 255},
	{kind: "github-token", prefix: "ghu_", body: cAlnum, min: 36, max: 255},
	{kind: "github-token", prefix: "ghs_", body: cAlnum, min: 36, max: 255},
	{kind: "github-token", prefix: "ghr_", body: cAlnum, min: 36, max: 255},
	{kind: "github-token", prefix: "github_pat_", body: cAlnum | cUnder, min: 40, max: 255},
	{kind: "gitlab-token", prefix: "glpat-", body: cB64u | cDot, min: 20},
	{kind: "gitlab-token", prefix: "gldt-", body: cB64u, min: 20},
	{kind: "gitlab-token", prefix: "glrt-", body: cB64u | cDot, min: 20},
	{kind: "gitlab-token", prefix: "glrtr-", body: cB64u, min: 20},
	{kind: "gitlab-token", prefix: "glptt-", body: cB64u, min: 20},
	{kind: "gitlab-token", prefix: "glft-", body: cB64u, min: 20},
	{kind: "gitlab-token", prefix: "glsoat-", body: cB64u, min: 20},
	{kind: "gitlab-token", prefix: "glcbt-", body: cB64u, min: 20},
	{kind: "gitlab-token", prefix: "gloas-", body: cB64u, min: 20},
	{kind: "gitlab-token", prefix: "glimt-", body: cB64u, min: 20},
	{kind: "gitlab-token", prefix: "glagent-", body: cB64u, min: 20},
	{kind: "gitlab-token", prefix: "glffct-", body: cB64u, min: 20},
	{kind: "gitlab-token", prefix: "GR1348941", body: cB64u, min: 20},
	// Model providers.
	{kind: "anthropic-key", prefix: "sk-ant-", body: cB64u, min: 30},
	{kind: "openai-key", prefix: "sk-proj-", body: cB64u, min: 40},
	{kind: "openai-key", prefix: "sk-svcacct-", body: cB64u, min: 40},
	{kind: "openai-key", prefix: "sk-admin-", body: cB64u, min: 40},
	{kind: "openai-key", prefix: "sk-", body: cB64u, min: 20, check: func(b string) bool {
		return strings.Contains(b, "T3BlbkFJ") || len(b) == 48 && !strings.ContainsAny(b, "-_")
	}},
	// Other providers' "sk-" keys: long, random.
	{kind: "api-key", prefix: "sk-", body: cAlnum, min: 32, check: func(b string) bool { return mixedOrHex(b) }},
	{kind: "huggingface-token", prefix: "hf_", body: cAlnum, min: 34, exact: false},
	{kind: "huggingface-token", prefix: "api_org_", body: cAlnum, min: 30},
	{kind: "groq-key", prefix: "gsk_", body: cAlnum, min: 48},
	{kind: "replicate-token", prefix: "r8_", body: cAlnum, min: 30},
	{kind: "perplexity-key", prefix: "pplx-", body: cAlnum, min: 40},
	{kind: "xai-key", prefix: "xai-", body: cAlnum, min: 60},
	// Payments.
	{kind: "stripe-key", prefix: "sk_live_", body: cAlnum, min: 20},
	{kind: "stripe-key", prefix: "sk_test_", body: cAlnum, min: 20},
	{kind: "stripe-key", prefix: "rk_live_", body: cAlnum, min: 20},
	{kind: "stripe-key", prefix: "rk_test_", body: cAlnum, min: 20},
	{kind: "stripe-key", prefix: "whsec_", body: cAlnum, min: 24},
	{kind: "square-token", prefix: "EAAA", body: cB64u, min: 60},
	{kind: "square-token", prefix: "sq0atp-", body: cB64u, min: 22},
	{kind: "square-token", prefix: "sq0csp-", body: cB64u, min: 40},
	{kind: "braintree-token", prefix: "access_token$production$", body: cLower | cDigit | cDollar, min: 40},
	{kind: "braintree-token", prefix: "access_token$sandbox$", body: cLower | cDigit | cDollar, min: 40},
	{kind: "shopify-token", prefix: "shpat_", body: cAlnum, min: 32, max: 32, exact: true, check: hexBoth},
	{kind: "shopify-token", prefix: "shpca_", body: cAlnum, min: 32, max: 32, exact: true, check: hexBoth},
	{kind: "shopify-token", prefix: "shppa_", body: cAlnum, min: 32, max: 32, exact: true, check: hexBoth},
	{kind: "shopify-token", prefix: "shpss_", body: cAlnum, min: 32, max: 32, exact: true, check: hexBoth},
	{kind: "flutterwave-key", prefix: "FLWSECK-", body: cAlnum | cDash, min: 32},
	{kind: "flutterwave-key", prefix: "FLWSECK_TEST-", body: cAlnum | cDash, min: 32},
	{kind: "shippo-token", prefix: "shippo_live_", body: cAlnum, min: 40, max: 40, exact: true, check: hexLower},
	{kind: "shippo-token", prefix: "shippo_test_", body: cAlnum, min: 40, max: 40, exact: true, check: hexLower},
	{kind: "easypost-key", prefix: "EZAK", body: cAlnum, min: 50},
	{kind: "easypost-key", prefix: "EZTK", body: cAlnum, min: 50},
	// Messaging.
	{kind: "slack-token", prefix: "xoxe.xoxp-", body: cB64u, min: 10},
	{kind: "slack-token", prefix: "xoxe.xoxb-", body: cB64u, min: 10},
	{kind: "slack-token", prefix: "xoxb-", body: cB64u, min: 10},
	{kind: "slack-token", prefix: "xoxp-", body: cB64u, min: 10},
	{kind: "slack-token", prefix: "xoxa-", body: cB64u, min: 10},
	{kind: "slack-token", prefix: "xoxo-", body: cB64u, min: 10},
	{kind: "slack-token", prefix: "xoxs-", body: cB64u, min: 10},
	{kind: "slack-token", prefix: "xoxr-", body: cB64u, min: 10},
	{kind: "slack-token", prefix: "xoxe-", body: cB64u, min: 10},
	{kind: "slack-token", prefix: "xapp-", body: cB64u, min: 20},
	{kind: "slack-webhook", prefix: "https://hooks.slack.com/services/", body: cB64u | cSlash, min: 20},
	{kind: "slack-webhook", prefix: "https://hooks.slack.com/workflows/", body: cB64u | cSlash, min: 20},
	{kind: "discord-webhook", prefix: "https://discord.com/api/webhooks/", body: cB64u | cSlash, min: 60},
	{kind: "discord-webhook", prefix: "https://discordapp.com/api/webhooks/", body: cB64u | cSlash, min: 60},
	{kind: "sendgrid-key", prefix: "SG.", body: cB64u | cDot, min: 60, check: func(b string) bool {
		p := strings.Split(b, ".")
		return len(p) == 2 && len(p[0]) >= 16 && len(p[1]) >= 30
	}},
	{kind: "twilio-key", prefix: "SK", body: cAlnum, min: 32, max: 32, exact: true, check: hexLower},
	{kind: "mailgun-key", prefix: "key-", body: cAlnum, min: 32, max: 32, exact: true, check: hexLower},
	// Cloud and infrastructure.
	{kind: "google-api-key", prefix: "AIza", body: cB64u, min: 35, max: 35},
	{kind: "google-oauth-secret", prefix: "GOCSPX-", body: cB64u, min: 28, max: 28},
	{kind: "google-oauth-token", prefix: "ya29.", body: cB64u | cDot, min: 30},
	{kind: "google-oauth-token", prefix: "1//0", body: cB64u, min: 40},
	{kind: "alibaba-key", prefix: "LTAI", body: cAlnum, min: 12, max: 30, exact: true, check: mixedish},
	{kind: "digitalocean-token", prefix: "dop_v1_", body: cAlnum, min: 64, max: 64, exact: true, check: hexLower},
	{kind: "digitalocean-token", prefix: "doo_v1_", body: cAlnum, min: 64, max: 64, exact: true, check: hexLower},
	{kind: "digitalocean-token", prefix: "dor_v1_", body: cAlnum, min: 64, max: 64, exact: true, check: hexLower},
	{kind: "vault-token", prefix: "hvs.", body: cB64u, min: 24},
	{kind: "vault-token", prefix: "hvb.", body: cB64u, min: 24},
	{kind: "vault-token", prefix: "hvr.", body: cB64u, min: 24},
	{kind: "vault-token", prefix: "s.", body: cAlnum, min: 24, max: 24, exact: true, check: mixed},
	{kind: "heroku-key", prefix: "HRKU-", body: cB64u, min: 40},
	{kind: "cloudflare-token", prefix: "cfut_", body: cAlnum, min: 40},
	{kind: "cloudflare-token", prefix: "cfat_", body: cAlnum, min: 40},
	{kind: "cloudflare-token", prefix: "cfk_", body: cAlnum, min: 40},
	{kind: "cloudflare-token", prefix: "v1.0-", body: cAlnum | cDash, min: 150},
	{kind: "flyio-token", prefix: "fm2_", body: cB64 | cUnder | cDash, min: 50},
	{kind: "flyio-token", prefix: "fo1_", body: cB64u, min: 40},
	{kind: "databricks-token", prefix: "dapi", body: cAlnum, min: 32, max: 32, exact: true, check: hexLower},
	{kind: "supabase-token", prefix: "sbp_", body: cAlnum, min: 40, check: hexLower},
	{kind: "planetscale-token", prefix: "pscale_tkn_", body: cB64u, min: 32},
	{kind: "planetscale-token", prefix: "pscale_pw_", body: cB64u, min: 32},
	{kind: "planetscale-token", prefix: "pscale_oauth_", body: cB64u, min: 32},
	{kind: "netlify-token", prefix: "nfp_", body: cAlnum, min: 32},
	{kind: "render-key", prefix: "rnd_", body: cAlnum, min: 32},
	{kind: "doppler-token", prefix: "dp.st.", body: cB64u | cDot, min: 40},
	{kind: "doppler-token", prefix: "dp.pt.", body: cB64u, min: 40},
	{kind: "doppler-token", prefix: "dp.ct.", body: cB64u, min: 40},
	{kind: "doppler-token", prefix: "dp.sa.", body: cB64u, min: 40},
	{kind: "onepassword-token", prefix: "ops_eyJ", body: cB64 | cDash | cUnder, min: 100},
	{kind: "age-key", prefix: "AGE-SECRET-KEY-1", body: cUpper | cDigit, min: 50},
	{kind: "dynatrace-token", prefix: "dt0c01.", body: cUpper | cDigit | cDot, min: 80},
	{kind: "newrelic-key", prefix: "NRAK-", body: cUpper | cDigit, min: 27, max: 27, exact: true},
	{kind: "sentry-token", prefix: "sntrys_", body: cB64 | cUnder | cDash, min: 40},
	{kind: "sentry-token", prefix: "sntryu_", body: cAlnum, min: 64, max: 64, exact: true, check: hexLower},
	{kind: "grafana-token", prefix: "glsa_", body: cAlnum | cUnder, min: 40},
	{kind: "grafana-token", prefix: "glc_", body: cB64, min: 50},
	{kind: "sonar-token", prefix: "squ_", body: cAlnum, min: 40, max: 40, exact: true, check: hexLower},
	{kind: "sonar-token", prefix: "sqp_", body: cAlnum, min: 40, max: 40, exact: true, check: hexLower},
	{kind: "sonar-token", prefix: "sqa_", body: cAlnum, min: 40, max: 40, exact: true, check: hexLower},
	{kind: "postman-key", prefix: "PMAK-", body: cAlnum | cDash, min: 50},
	{kind: "pulumi-token", prefix: "pul-", body: cAlnum, min: 40, max: 40, exact: true, check: hexLower},
	{kind: "jfrog-token", prefix: "AKCp", body: cAlnum, min: 60},
	{kind: "jfrog-token", prefix: "cmVmdGtuOjAx", body: cAlnum, min: 40},
	{kind: "contentful-token", prefix: "CFPAT-", body: cB64u, min: 40},
	{kind: "hubspot-token", prefix: "pat-na1-", body: cAlnum | cDash, min: 36},
	{kind: "hubspot-token", prefix: "pat-eu1-", body: cAlnum | cDash, min: 36},
	{kind: "airtable-token", prefix: "pat", body: cAlnum | cDot, min: 79, check: func(b string) bool {
		i := strings.IndexByte(b, '.')
		return i == 14 && len(b) >= 79 && hexLower(b[15:]) && mixed(b[:14])
	}},
	{kind: "linear-key", prefix: "lin_api_", body: cAlnum, min: 40},
	{kind: "notion-token", prefix: "secret_", body: cAlnum, min: 43, max: 43, exact: true, check: mixed},
	{kind: "notion-token", prefix: "ntn_", body: cAlnum, min: 40},
	{kind: "atlassian-token", prefix: "ATATT3", body: cB64u | cEq, min: 100},
	{kind: "atlassian-token", prefix: "ATBB", body: cAlnum, min: 28, check: mixed},
	{kind: "docker-token", prefix: "dckr_pat_", body: cB64u, min: 20},
	{kind: "docker-token", prefix: "dckr_oat_", body: cB64u, min: 20},
	{kind: "npm-token", prefix: "npm_", body: cAlnum, min: 36, max: 36, exact: true},
	{kind: "pypi-token", prefix: "pypi-AgE", body: cB64u, min: 50},
	{kind: "rubygems-key", prefix: "rubygems_", body: cAlnum, min: 48, max: 48, exact: true, check: hexLower},
	{kind: "nuget-key", prefix: "oy2", body: cLower | cDigit, min: 43, max: 43, exact: true},
	{kind: "clojars-token", prefix: "CLOJARS_", body: cAlnum, min: 60, check: hexLower},
	{kind: "buildkite-token", prefix: "bkua_", body: cAlnum, min: 40, max: 40, exact: true, check: hexLower},
	{kind: "circleci-token", prefix: "CCIPAT_", body: cAlnum | cUnder, min: 40},
	{kind: "prefect-key", prefix: "pnu_", body: cAlnum, min: 36, max: 36, exact: true},
	{kind: "readme-key", prefix: "rdme_", body: cAlnum, min: 60},
	{kind: "adafruit-key", prefix: "aio_", body: cAlnum, min: 28, max: 28, exact: true},
	{kind: "typeform-token", prefix: "tfp_", body: cAlnum | cUnder, min: 40},
	{kind: "intercom-token", prefix: "dG9rOj", body: cB64, min: 30},
	{kind: "mapbox-token", prefix: "sk.eyJ", body: cB64u | cDot, min: 60},
	{kind: "launchdarkly-key", prefix: "api-", body: cAlnum | cDash, min: 36, max: 36, exact: true, check: isUUID},
	{kind: "launchdarkly-key", prefix: "sdk-", body: cAlnum | cDash, min: 36, max: 36, exact: true, check: isUUID},
	{kind: "firebase-key", prefix: "AAAA", body: cB64u | cColon, min: 100, check: func(b string) bool { return strings.Contains(b, ":APA91b") }},
	{kind: "twitter-token", prefix: "AAAAAAAAAAAAAAAAAAAA", body: cAlnum | cPercent, min: 40, check: mixedish},
	{kind: "facebook-token", prefix: "EAA", body: cAlnum, min: 90, check: mixed},
	// JSON web tokens: three base64url parts, the first two JSON objects.
	{kind: "jwt", prefix: "eyJ", body: cB64u | cDot, min: 24, check: jwtShape},
}

// base32ish says an AWS key id's body is in base32's alphabet.
func base32ish(b string) bool { return !strings.ContainsAny(b, "0189") }

// mixedish says s holds letters of both cases and a digit, or letters
// and digits in a long run: the alphabet of a generated key.
func mixedish(s string) bool {
	var k uint16
	for i := 0; i < len(s); i++ {
		k |= byteClass[s[i]]
	}
	return k&cDigit != 0 && (k&cUpper != 0 && k&cLower != 0 || len(s) >= 20 && k&(cUpper|cLower) != 0)
}

// mixedOrHex says s is a generated key: mixed, or long hex.
func mixedOrHex(s string) bool { return mixed(s) || len(s) >= 32 && hexBoth(s) }

// jwtShape says body (after "eyJ") has a JSON web token's parts.
func jwtShape(body string) bool {
	body = strings.TrimRight(body, ".")
	p := strings.Split(body, ".")
	return len(p) >= 3 && len(p[0]) >= 8 && strings.HasPrefix(p[1], "eyJ") && len(p[1]) >= 11 && len(p[2]) >= 8
}

// tokenIndex holds, for each byte, the token rules whose prefix starts
// with it, longest prefix first; tokenSecond, the bytes their prefixes
// go on with.
var tokenIndex, tokenSecond = func() (idx [256][]int, second [256]byteSet) {
	for i, t := range tokenRules {
		idx[t.prefix[0]] = append(idx[t.prefix[0]], i)
		second[t.prefix[0]].add(t.prefix[1])
	}
	for b := range idx {
		slices.SortStableFunc(idx[b], func(x, y int) int { return len(tokenRules[y].prefix) - len(tokenRules[x].prefix) })
	}
	return idx, second
}()

// scanTokens finds the tokens of tokenRules in one pass over text: at
// each start of a word whose byte begins some rule's prefix, the rules
// are tried longest prefix first.
func scanTokens(text string, fs *findings) {
	for i := 0; i+1 < len(text); i++ {
		if i > 0 && isWordByte(text[i-1]) || !tokenSecond[text[i]].has(text[i+1]) {
			continue
		}
		cands := tokenIndex[text[i]]
		for _, ri := range cands {
			t := &tokenRules[ri]
			if !strings.HasPrefix(text[i:], t.prefix) {
				continue
			}
			if end, ok := t.match(text, i+len(t.prefix)); ok {
				fs.add(t.kind, i, end)
				i = end - 1
				break
			}
		}
	}
}

// match says the rule's body starts at text[j:] and returns where the
// token ends.
func (t *tokenRule) match(text string, j int) (int, bool) {
	k := j
	limit := len(text)
	if t.max > 0 {
		limit = min(limit, j+t.max+1)
	}
	for k < limit && byteClass[text[k]]&t.body != 0 {
		k++
	}
	n := k - j
	if n < t.min {
		return 0, false
	}
	if t.max > 0 && n > t.max {
		if t.exact {
			return 0, false
		}
		k, n = j+t.max, t.max
	}
	if t.exact && k < len(text) && isWordByte(text[k]) {
		return 0, false
	}
	body := text[j:k]
	// A sentence's full stop is not part of a token.
	for t.body&cDot != 0 && strings.HasSuffix(body, ".") {
		body, k = body[:len(body)-1], k-1
	}
	if len(body) < t.min || placeholderBody(body) {
		return 0, false
	}
	if t.check != nil && !t.check(body) {
		return 0, false
	}
	return k, true
}

// placeholderBody says a token's body stands in for one: it says so
// (EXAMPLE, your-token, xxxx) or repeats a few characters, where a
// generated token draws from its whole alphabet.
func placeholderBody(body string) bool {
	l := strings.ToLower(body)
	if containsAny(l, "example", "your", "xxxx", "placeholder", "redacted", "dummy", "0000000000", "1234567890") {
		return true
	}
	var seen [256]bool
	distinct := 0
	for i := 0; i < len(body); i++ {
		if !seen[body[i]] {
			seen[body[i]] = true
			distinct++
		}
	}
	return len(body) >= 16 && distinct < 6
}
