package capture

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// texts are the redaction corpus's secrets and look-alikes, with texts
// that spell the rules' keywords in the letters Go's case folding maps
// onto ASCII ones.
func texts(t *testing.T) []string {
	t.Helper()
	var out []string
	f, err := os.Open("testdata/redaction/secrets.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c.Text)
	}
	b, err := os.ReadFile("testdata/redaction/lookalikes.txt")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, strings.Split(string(b), "\n")...)
	for _, name := range []string{"secrets.jsonl", "lookalikes.jsonl"} {
		f, err := os.Open("testdata/redaction/formats/" + name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var c struct{ Text string }
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatal(err)
			}
			out = append(out, c.Text)
		}
		f.Close()
	}
	return append(out,
		"DB_PAſſWORD=hunter2hunter2", "api_\u212aey: 0123456789abcdef", "AccountKey=\u212a"+strings.Repeat("A", 30),
		"x-api-KEY: 9f8e7d6c5b4a", "PROXY-AUTHORIZATION: Basic dXNlcjpwYXNz", "BEARER abcdefghijklmnopqrstuvwxyz012345")
}

// A rule's quick test passes every text its pattern matches: skipping a
// pattern never skips a secret.
func TestQuickTestsNeverSkipAMatch(t *testing.T) {
	cases := texts(t)
	// Texts assembled from the pieces the patterns are made of, in every
	// order: keywords in any case, what may stand between a keyword and
	// its value, separators and values.
	pieces := []string{"PASSWORD", "passwd", "Secret", "TOKEN", "api_key", "API-KEY", "access", "Key", "credentials",
		"_PWD", "session", "\u212aey", "pa\u017f\u017f", "export ", "x", "_1", ".", "-", "\"", "'", " ", "\t", "\n",
		"=", ":", ": ", "= ", "hunter2hunter2", "s3cr3tValue", "${VAR}", "AKIA", "sk-", "bearer ", "://u:p@h", ","}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		cases = append(cases, b.String())
	}
	for _, text := range cases {
		for _, ru := range rules {
			sv := surveyText(text)
			if ru.re().MatchString(text) && !ru.ready(text, &sv) {
				t.Errorf("%s matches %q, but its quick test skips it", ru.kind, text)
			}
		}
	}
}

// longTokens finds what the regular expression it stands for finds.
func TestLongTokensAsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`[A-Za-z0-9+/_=-]{32,}`)
	cases := texts(t)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := "aZ09+/_=- .\n:é"
	for range 2000 {
		b := make([]byte, rng.IntN(200))
		for i := range b {
			if rng.IntN(10) == 0 {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[i] = "abcXYZ0189"[rng.IntN(10)]
			}
		}
		cases = append(cases, string(b))
	}
	for _, text := range cases {
		var want [][2]int
		for _, m := range re.FindAllStringIndex(text, -1) {
			want = append(want, [2]int{m[0], m[1]})
		}
		if got := longTokens(text); !slices.Equal(got, want) {
			t.Fatalf("longTokens(%q) = %v; the regexp finds %v", text, got, want)
		}
	}
}

// BenchmarkRedact redacts texts as agents write them, most with no secret.
func BenchmarkRedact(b *testing.B) {
	texts := []string{
		"go test ./... failed: TestCheckout expected 200, got 401 (session expired)",
		"Refactored the retry loop in internal/queue/worker.go to back off exponentially; the flaky test passes 50 times in a row now.",
		"Decided to keep the token bucket at 100 requests per minute per key until the billing team confirms the new limits.",
		strings.Repeat("The deploy pipeline retries twice, then pages the on-call engineer. ", 8),
	}
	var r Redactor
	for b.Loop() {
		for _, t := range texts {
			r.Redact(t)
		}
	}
}

// Every word that names a credential passes the quick test of the
// assignment and prose rules: a strong word, a weak one, a prose word.
func TestCredentialWordsPassTheGate(t *testing.T) {
	words := append(append(append([]string{}, strongWords...), weakWords...), proseWords...)
	words = append(words, "pwd", "pass", "psk")
	for _, w := range words {
		for _, text := range []string{w, strings.ToUpper(w), "x_" + w + "=1"} {
			if sv := surveyText(text + "  "); !sv.credentialWord {
				t.Errorf("%q does not pass the gate", text)
			}
		}
	}
}
