package capture

import (
	"regexp"
	"strings"
	"sync"
)

// privateKeyRE is a PEM private key's block, to its END line or, cut
// short, to the end of the text.
var privateKeyRE = lazyRE(`-----BEGIN[A-Z ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?(-----END[A-Z ]*PRIVATE KEY( BLOCK)?-----|$)`)

// rule finds one kind of secret by where it stands. The regular
// expression's first group named "secret..." that matched (or, without
// one, the whole match) is what is replaced.
type rule struct {
	kind string
	pat  string
	// re is compiled from pat the first time text could match it (most
	// hooks never need most rules: a process started for one hook call
	// should not compile them all).
	re func() *regexp.Regexp
	// needs are bytes every match holds: a text without one of them is
	// not looked at.
	needs string
	// quick is a cheap test that the rule could match at all, so most
	// text never runs most regular expressions: what every match must
	// contain (the survey has the text in lower case, for the rules that
	// ignore case).
	quick func(text string, sv *survey) bool
	// accept, when set, decides whether a match is a secret; otherwise
	// every match is, but placeholders.
	accept func(m match) bool
}

// match is one match of a rule's regular expression.
type match struct {
	text string
	idx  []int
	re   *regexp.Regexp
}

// group returns the named group's text, and whether it matched.
func (m match) group(name string) (string, bool) {
	i := m.re.SubexpIndex(name)
	if i < 0 || m.idx[2*i] < 0 {
		return "", false
	}
	return m.text[m.idx[2*i]:m.idx[2*i+1]], true
}

// secret is the span the match replaces.
func (m match) secret() (int, int) {
	for i, name := range m.re.SubexpNames() {
		if strings.HasPrefix(name, "secret") && m.idx[2*i] >= 0 {
			return m.idx[2*i], m.idx[2*i+1]
		}
	}
	return m.idx[0], m.idx[1]
}

// ready says text holds the bytes the rule needs and passes its quick
// test.
func (ru *rule) ready(text string, sv *survey) bool {
	for i := 0; i < len(ru.needs); i++ {
		if !sv.present.has(ru.needs[i]) {
			return false
		}
	}
	return ru.quick(text, sv)
}

func (ru rule) apply(text string, fs *findings) {
	re := ru.re()
	for _, idx := range re.FindAllStringSubmatchIndex(text, -1) {
		// A match that reads a marker as text (its ':' as a field's
		// end, its name as a value) is no match.
		if fs.overlapsMarker(idx[0], idx[1]) {
			continue
		}
		m := match{text: text, idx: idx, re: re}
		a, b := m.secret()
		if ru.accept != nil {
			if !ru.accept(m) {
				continue
			}
		} else if isPlaceholder(text[a:b]) {
			continue
		}
		fs.add(ru.kind, a, b)
	}
}

// contains is a quick test: text holds sub (its pairs of letters first,
// from the survey).
func contains(sub string) func(text string, sv *survey) bool {
	return func(text string, sv *survey) bool { return sv.mayContain(sub) && strings.Contains(text, sub) }
}

// containsFold is a quick test: text holds sub in any case.
func containsFold(sub string) func(text string, sv *survey) bool {
	return func(_ string, sv *survey) bool { return sv.mayContain(sub) && strings.Contains(sv.foldText(), sub) }
}

// cliPat finds passwords given to a command: curl -u user:password,
// --password X and other flags naming a credential, mysql -pX, sshpass
// -p X, redis-cli -a X, openssl's pass:X, keytool's -storepass X,
// smbclient -U user%X, docker/helm login -p X, az login -p X, ldapsearch
// -w X, rabbitmqctl add_user NAME X, htpasswd -b FILE NAME X.
const cliPat = `(?:\bcurl\b[^\n|;&]*?\s(?:-u|--user)(?:\s+|=)?["']?[^\s:"'\[\]]+:(?P<secret>[^\s"']{3,})` +
	`|\b(?:mysql|mysqldump|mysqladmin|mysqlsh|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump)\b[^\n|;&]*?\s-p(?P<secret3>[^\s"'-][^\s"']*)` +
	`|\bsshpass\s+-p\s*["']?(?P<secret4>[^\s"']+)` +
	`|\bredis-cli\b[^\n|;&]*?\s-a\s+["']?(?P<secret5>[^\s"']+)` +
	`|-pass(?:in|out)?\s+["']?pass:(?P<secret6>[^\s"']+)` +
	`|\s-(?:src|dest|new)?(?:store|key)pass\s+["']?(?P<secret7>[^\s"']+)` +
	`|\bsmbclient\b[^\n|;&]*?\s-U\s+[^\s%]+%(?P<secret8>[^\s"']+)` +
	`|\b(?:docker|podman|nerdctl|buildah|skopeo|helm|oras)\b[^\n|;&]*?\blogin\b[^\n|;&]*?\s-p\s+["']?(?P<secret9>[^\s"']+)` +
	`|\baz\s+login\b[^\n|;&]*?\s-p\s+["']?(?P<secret10>[^\s"']+)` +
	`|\bldap[a-z]*\b[^\n|;&]*?\s-w\s+["']?(?P<secret11>[^\s"']+)` +
	`|\brabbitmqctl\s+(?:add_user|change_password)\s+\S+\s+["']?(?P<secret12>[^\s"']+)` +
	`|\bhtpasswd\s+-[a-zA-Z]*b[a-zA-Z]*\s+\S+\s+\S+\s+["']?(?P<secret13>[^\s"']+))`

// cliQuick says text holds what some alternative of cliPat needs.
func cliQuick(text string, sv *survey) bool {
	has := func(s string) bool { return sv.mayContain(s) && strings.Contains(text, s) }
	return has("curl") && has("-u") ||
		(has("mysql") || has("mariadb")) && has("-p") ||
		has("sshpass") || has("smbclient") || has("rabbitmqctl") || has("htpasswd") || has("storepass") || has("keypass") ||
		has("redis-cli") && has("-a") ||
		has("pass:") && has("-pass") ||
		has("login") && has("-p") ||
		has("ldap") && has("-w")
}

// acceptCLI takes a command's password: for --flags, only flags naming a
// credential and not a file, a type or standard input.
func acceptCLI(m match) bool {
	a, b := m.secret()
	v := m.text[a:b]
	if isPlaceholder(v) || strings.HasPrefix(v, "-") || strings.HasPrefix(v, "<") {
		return false
	}
	flag, ok := m.group("flag")
	if !ok {
		return true
	}
	name := strings.TrimLeft(flag, "-")
	if !containsAny(name, credentialFlagWords...) {
		return false
	}
	for _, suf := range []string{"-stdin", "-file", "-path", "-env", "-dir", "-type", "-url", "-header", "-id", "-name", "-cmd", "-command", "-helper", "-method", "-mode", "-length", "-ttl", "-scope", "-host", "-port", "-user", "-username"} {
		if strings.HasSuffix(name, suf) {
			return false
		}
	}
	return !commonValue(v) && !pathLike(v) && !isURL(v)
}

// credentialFlagWords are what a command-line flag naming a credential
// holds.
var credentialFlagWords = []string{"pass", "token", "secret", "api-key", "apikey", "auth", "credential", "account-key", "access-key", "private-key", "client-key"}

// credentialFlag says text has a flag (-name or --name after a blank or
// at the start) whose name holds one of credentialFlagWords.
func credentialFlag(text string, _ *survey) bool {
	for i := 0; i < len(text); i++ {
		d := strings.IndexByte(text[i:], '-')
		if d < 0 {
			return false
		}
		i += d
		if i > 0 && strings.IndexByte(" \t\n\r\f\v", text[i-1]) < 0 {
			continue
		}
		j := i + 1
		if j < len(text) && text[j] == '-' {
			j++
		}
		k := j
		for k < len(text) && (text[k] >= 'a' && text[k] <= 'z' || text[k] == '-') {
			k++
		}
		if k > j && containsAny(text[j:k], credentialFlagWords...) {
			return true
		}
		i = k - 1
	}
	return false
}

// rules are the secrets found by regular expression, in the order they
// are tried.
var rules = compileLazily([]rule{
	{kind: "azure-key", needs: "=", pat: `(?i)(?:AccountKey|SharedAccessKey)=(?P<secret>[A-Za-z0-9+/]{20,}={0,2})`, quick: containsFold("key=")},
	{kind: "azure-key", needs: "~", pat: `(?:^|[^A-Za-z0-9_~.-])(?P<secret>[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?:$|[^A-Za-z0-9_~.-])`, quick: contains("Q~")},
	{kind: "telegram-token", needs: ":", pat: `(?:\bbot|\b)(?P<secret>[0-9]{8,10}:AA[A-Za-z0-9_-]{30,})`, quick: contains(":AA")},
	{kind: "terraform-token", needs: ".", pat: `\b(?P<secret>[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,})`, quick: contains(".atlasv1.")},
	{kind: "teams-webhook", needs: ":/.", pat: `(?P<secret>https://[A-Za-z0-9.-]*webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]{60,})`, quick: contains("webhook.office.com")},
	{kind: "mailchimp-key", needs: "-", pat: `\b(?P<secret>[0-9a-f]{32}-us[0-9]{1,2})\b`, quick: contains("-us")},
	{kind: "newrelic-key", pat: `\b(?P<secret>[a-f0-9]{36}NRAL)\b`, quick: contains("NRAL")},
	{kind: "url-signature", needs: "=", pat: `(?i)[?&](?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token|x-amz-credential)=(?P<secret>[A-Za-z0-9%+/=_.-]{16,})`,
		quick: func(_ string, sv *survey) bool {
			return containsAny(sv.foldText(), "sig=", "signature=", "security-token=", "credential=")
		}},
	// scheme://user:password@host; the user may hold '@' (an e-mail
	// address), and the password runs to the last '@' before the host.
	{kind: "url-password", needs: ":/@", pat: `\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/'"]*:(?P<secret>[^\s/'"]{3,})@[^\s/'"@]`, quick: contains("://"),
		accept: func(m match) bool {
			a, b := m.secret()
			s := m.text[a:b]
			return !isPlaceholder(s) && !strings.HasPrefix(s, "$")
		}},
	{kind: "auth-header", pat: `(?i)\b(?:authorization|proxy-authorization)["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|bot|ssws)\s+|key=)(?P<secret>[A-Za-z0-9._~+/=:%-]{8,})`,
		quick: containsFold("authorization")},
	{kind: "bearer-token", pat: `(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/-]{20,}=*)`, quick: containsFold("bearer")},
	{kind: "cli-password", pat: cliPat, accept: acceptCLI,
		quick: cliQuick},
	{kind: "cli-password", needs: "-", pat: `(?:^|\s)(?P<flag>--?[a-z-]*(?:pass|token|secret|api-key|apikey|auth|credential|account-key|access-key|private-key|client-key)[a-z-]*)(?:=|\s+)["']?(?P<secret>[^\s"']{3,})`,
		accept: acceptCLI, quick: credentialFlag},
	{kind: "pgpass", needs: ":", pat: `(?m)^[^\s:#]+:(?:[0-9]+|\*):[^\s:]+:[^\s:]+:(?P<secret>\S{3,})$`,
		quick: func(text string, _ *survey) bool { return strings.Count(text, ":") >= 4 }},
	{kind: "bundler-credentials", needs: "_=", pat: `\bBUNDLE_[A-Z0-9_]+__[A-Z0-9_]+=["']?(?P<secret>[^\s"':]+:[^\s"']+)`, quick: contains("BUNDLE_")},
	// PHP's define('DB_PASSWORD', '...') and .NET's <add key="ApiKey"
	// value="..." />: a name and a quoted value.
	{kind: "secret-assignment", needs: "(,", pat: `(?i)\bdefine\(\s*['"](?P<name>[A-Za-z0-9_]+)['"]\s*,\s*['"](?P<secret>[^'"\n]+)['"]`,
		quick: containsFold("define("), accept: acceptNamed},
	{kind: "secret-assignment", needs: "<=", pat: `(?i)<add\s+key=["'](?P<name>[^"'\n]+)["']\s+value=["'](?P<secret>[^"'\n]+)["']`,
		quick: containsFold("<add "), accept: acceptNamed},
	// <password>...</password>.
	{kind: "secret-assignment", needs: "<>/", pat: `<(?P<name>[A-Za-z][A-Za-z0-9_.:-]*)>(?P<secret>[^<>\n]+)</(?P<end>[A-Za-z][A-Za-z0-9_.:-]*)>`,
		quick: contains("</"), accept: func(m match) bool {
			name, _ := m.group("name")
			end, _ := m.group("end")
			return name == end && acceptNamed(m)
		}},
})

// acceptNamed takes a match whose group "name" names a credential and
// whose quoted value holds one.
func acceptNamed(m match) bool {
	name, _ := m.group("name")
	a, b := m.secret()
	s := nameStrength(name, name)
	return s != nameNone && valueIsSecret(m.text[a:b], true, s, nil)
}

func compileLazily(rs []rule) []rule {
	for i := range rs {
		rs[i].re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(rs[i].pat) })
		if rs[i].quick == nil {
			rs[i].quick = func(string, *survey) bool { return true }
		}
	}
	return rs
}
