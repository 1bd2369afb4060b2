package capture_test

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/capture"
)

type secretCase struct {
	Kind   string `json:"kind"`
	Secret string `json:"secret"`
	Text   string `json:"text"`
}

func loadSecrets(t testing.TB) []secretCase {
	t.Helper()
	f, err := os.Open("testdata/redaction/secrets.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []secretCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c secretCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

func loadLookalikes(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/redaction/lookalikes.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		out = append(out, l)
	}
	return out
}

func TestRedactionCorpus(t *testing.T) {
	var r capture.Redactor
	secrets, looks := loadSecrets(t), loadLookalikes(t)
	if len(secrets) < 100 || len(looks) < 100 {
		t.Fatalf("corpus too small: %d secrets, %d look-alikes", len(secrets), len(looks))
	}
	caught, named := 0, 0
	for _, c := range secrets {
		got, found := r.Redact(c.Text)
		if strings.Contains(got, c.Secret) || len(found) == 0 {
			t.Errorf("missed %s: %q -> %q", c.Kind, c.Text, got)
			continue
		}
		// A secret of several words (a passphrase) must go whole: none of
		// its words may stay, unless the text has it elsewhere.
		rest := strings.Replace(c.Text, c.Secret, "", 1)
		if kept := slices.DeleteFunc(strings.Fields(c.Secret), func(w string) bool {
			return len(w) < 4 || strings.Contains(rest, w) || !strings.Contains(got, w)
		}); len(kept) > 0 {
			t.Errorf("partly kept %s: %q -> %q (still holds %q)", c.Kind, c.Text, got, kept)
			continue
		}
		caught++
		if strings.Contains(got, capture.Marker(c.Kind)) {
			named++
		} else {
			t.Logf("caught %s as another kind: %q", c.Kind, got)
		}
	}
	fp := 0
	for _, l := range looks {
		if got, _ := r.Redact(l); got != l {
			fp++
			t.Errorf("look-alike changed: %q -> %q", l, got)
		}
	}
	t.Logf("recall %d/%d (named right %d), false positives %d/%d", caught, len(secrets), named, fp, len(looks))
}

// FuzzRedact: redaction never panics, is idempotent, and keeps the text
// around what it replaces.
func FuzzRedact(f *testing.F) {
	for _, c := range loadSecrets(f) {
		f.Add(c.Text)
	}
	for _, l := range loadLookalikes(f)[:40] {
		f.Add(l)
	}
	for _, name := range []string{"secrets.jsonl", "lookalikes.jsonl"} {
		for _, c := range loadFormatCases(f, name) {
			f.Add(c.Text)
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		var r capture.Redactor
		once, found := r.Redact(text)
		twice, again := r.Redact(once)
		if twice != once || len(again) != 0 {
			t.Fatalf("not idempotent: %q -> %q -> %q", text, once, twice)
		}
		if len(found) == 0 && once != text {
			t.Fatalf("changed without a finding: %q -> %q", text, once)
		}
		for _, fd := range found {
			if fd.Start < 0 || fd.End > len(text) || fd.Start >= fd.End {
				t.Fatalf("finding %+v out of %d bytes", fd, len(text))
			}
		}
	})
}

// TestRedactsWhatAnOutsideProbeMissed: the misses an outside corpus found
// (HashiCorp Vault tokens, whose dot broke the match; quoted and unquoted
// values holding ( ) ^ * # % ! @ = +, as Django's SECRET_KEY does;
// variables named *_AUTH; an AWS secret access key next to its key id in
// free text), each wholly removed.
func TestRedactsWhatAnOutsideProbeMissed(t *testing.T) {
	const vault = "hvs.CAESIKq3-Zt_9xQe-Lm2_Vb7-Nc4_Wd8-Yf1_Gh5-Jk0_Pr6-St3_Uv9-Xy2"
	const django = "django-insecure-k9^(x#2@m!w=+z*8%q)t$4&b_r(7v)e^n#1!c@5=y+u*0%p"
	const awsSecret = "Qx7/Tm2kLp9/Zr4vWn8/Hc3yBd6Fg1sJe5AuKo0R"
	cases := []struct {
		text    string
		secrets []string
	}{
		{"vault login " + vault, []string{vault}},
		{"Success! token is " + vault + " (renewable)", []string{vault}},
		{"curl -H 'X-Vault-Token: " + vault + "' https://vault:8200/v1/kv/app", []string{vault}},
		{"SECRET_KEY = '" + django + "'", []string{django}},
		{`SECRET_KEY = "` + django + `"`, []string{django}},
		{"SECRET_KEY=" + django, []string{django}},
		{"    'PASSWORD': 'p(a)s^s*w#o%r!d@=+x',", []string{"p(a)s^s*w#o%r!d@=+x"}},
		{"BASIC_AUTH=admin:Tr0ub4dor-and-3", []string{"Tr0ub4dor-and-3"}},
		{"export REGISTRY_AUTH=Y2k6aHVudGVyMmh1bnRlcjJodW50ZXIy", []string{"Y2k6aHVudGVyMmh1bnRlcjJodW50ZXIy"}},
		{"PROXY_AUTH='svc:W9x!k2Lm#8pQ'", []string{"W9x!k2Lm#8pQ"}},
		{"using AKIAZ2KQ7TNMH4VYXB3D and secret " + awsSecret + " for the upload", []string{"AKIAZ2KQ7TNMH4VYXB3D", awsSecret}},
		{"Access key ID,Secret access key\nAKIAZ2KQ7TNMH4VYXB3D," + awsSecret, []string{"AKIAZ2KQ7TNMH4VYXB3D", awsSecret}},
	}
	var r capture.Redactor
	for _, c := range cases {
		got, found := r.Redact(c.text)
		if !removed(formatCase{Text: c.text, Secrets: c.secrets}, found) {
			t.Errorf("not wholly removed: %q -> %q", c.text, got)
		}
	}
	// What stays: *_AUTH naming a method, not holding a credential; the
	// AWS documentation's example pair.
	for _, text := range []string{"SMTP_AUTH=login", "DISABLE_AUTH=true", "AUTH_TYPE=oauth2",
		"using AKIAIOSFODNN7EXAMPLE and secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"} {
		if got, _ := r.Redact(text); got != text {
			t.Errorf("changed: %q -> %q", text, got)
		}
	}
}

// Right after a credential's name, a word is taken for the credential
// only when it looks generated; after "is" or ":", any credential-like
// word is.
func TestProseTakesGeneratedWordsAfterAName(t *testing.T) {
	var r capture.Redactor
	for _, c := range []struct {
		text string
		kept bool
	}{
		{"rotated the webhook secret zqsummarysecret7", true},
		{"the webhook key zqclosedsecret7 leaked", true},
		{"rotated the webhook secret zq7summary3secret", false},
		{"new access token P@ssw0rd649! (valid 1h)", false},
		{"the webhook secret is zqsummarysecret7", false},
	} {
		got, _ := r.Redact(c.text)
		if (got == c.text) != c.kept {
			t.Errorf("%q -> %q (kept: want %v)", c.text, got, c.kept)
		}
	}
}
