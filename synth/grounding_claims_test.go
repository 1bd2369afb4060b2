package synth_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/cairnhq/cairn/embed/glove"
	"github.com/cairnhq/cairn/synth"
)

// testdata/grounding/claims.txt: labelled answers over sources nobody
// here wrote (LoCoMo turns, Debian changelog entries, READMEs of Go
// modules). Its format is described at the top of the file.

// labelled is one sentence of a fixture answer.
type labelled struct {
	text  string
	label string // ok, bad, meta or label
	class string
	by    []string // the sources that support an ok claim
}

// claimsCase is one answer of claims.txt with its context.
type claimsCase struct {
	id, scenario string
	half         string // tune or test
	sources      []synth.Source
	draft        synth.Draft
	sentences    []labelled
	expect       string // accept or refuse, as written
	// second: the answer is of the second batch, labelled after the
	// verifier was first tuned (claims.txt's "# The second batch").
	second bool
	// third: the answer is of the third batch (claims.txt's "# The third
	// batch"), a held-out set labelled and committed before the verifier
	// was run on it: its half is "held-out", and nothing tunes on it.
	third bool
}

// groundingHalf puts an answer in the tune or the test half by the first
// byte of the SHA-256 of its id. It was fixed before the verifier was
// tuned on the tune half.
func groundingHalf(id string) string {
	if sha256.Sum256([]byte(id))[0]%2 == 0 {
		return "tune"
	}
	return "test"
}

func loadClaims(t testing.TB) []claimsCase {
	t.Helper()
	f, err := os.Open("testdata/grounding/claims.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := map[string][]string{}
	var cases []claimsCase
	var context []string
	var scenario, lastSource string
	var cur *claimsCase
	second, third := false, false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("claims.txt:%d: %s", line, fmt.Sprintf(format, args...))
	}
	resolve := func(ref string) string {
		var found []string
		for _, id := range context {
			if id == ref || strings.HasSuffix(id, ref) {
				found = append(found, id)
			}
		}
		if len(found) != 1 {
			fail("ref %q matches %v in scenario %s", ref, found, scenario)
		}
		return found[0]
	}
	for sc.Scan() {
		line++
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "# The second batch"):
			second = true
		case strings.HasPrefix(l, "# The third batch"):
			second, third = false, true
		case l == "" || strings.HasPrefix(l, "#"):
		case l == ">" || strings.HasPrefix(l, "> "):
			if lastSource == "" {
				fail("text outside a source")
			}
			lines[lastSource] = append(lines[lastSource], strings.TrimPrefix(strings.TrimPrefix(l, ">"), " "))
		case strings.HasPrefix(l, "source "):
			id, _, _ := strings.Cut(strings.TrimPrefix(l, "source "), " | ")
			if _, dup := lines[id]; dup {
				fail("source %s twice", id)
			}
			lines[id], lastSource = []string{}, id
		case strings.HasPrefix(l, "scenario "):
			name, refs, _ := strings.Cut(strings.TrimPrefix(l, "scenario "), ": ")
			scenario, context, lastSource = name, strings.Fields(refs), ""
			for _, id := range context {
				if _, ok := lines[id]; !ok {
					fail("scenario %s: unknown source %s", name, id)
				}
			}
		case strings.HasPrefix(l, "answer "):
			id := strings.TrimPrefix(l, "answer ")
			half := groundingHalf(id)
			if third {
				half = "held-out"
			}
			cases = append(cases, claimsCase{id: id, scenario: scenario, half: half, second: second, third: third,
				draft: synth.Draft{Sources: []synth.Citation{}}})
			cur = &cases[len(cases)-1]
			for i, sid := range context {
				cur.sources = append(cur.sources, synth.Source{ID: sid, Type: "memory", Text: strings.Join(lines[sid], "\n"), Relevance: 1 - float64(i)/20})
			}
		case cur == nil:
			fail("%q outside an answer", l)
		case strings.HasPrefix(l, "cite "):
			ref, span, ok := strings.Cut(strings.TrimPrefix(l, "cite "), " | ")
			if !ok {
				fail("a citation without a span")
			}
			cur.draft.Sources = append(cur.draft.Sources, synth.Citation{SourceID: resolve(ref), Span: span})
		case strings.HasPrefix(l, "expect "):
			cur.expect = strings.TrimPrefix(l, "expect ")
		default:
			head, text, ok := strings.Cut(l, " | ")
			if !ok {
				fail("unknown line %q", l)
			}
			f := strings.Fields(head)
			s := labelled{label: f[0], text: text}
			switch {
			case s.label == "ok" && len(f) == 3:
				s.class = f[1]
				for _, r := range strings.Split(f[2], ",") {
					s.by = append(s.by, resolve(r))
				}
			case s.label == "bad" && len(f) == 2:
				s.class = f[1]
			case (s.label == "meta" || s.label == "label") && len(f) == 1:
				s.class = s.label
			default:
				fail("bad sentence head %q", head)
			}
			cur.sentences = append(cur.sentences, s)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for i := range cases {
		cases[i].draft.Answer = renderAnswer(cases[i].sentences)
	}
	return cases
}

// renderAnswer joins an answer's sentences: by a space, a label on a line
// of its own, a list item ("- ...") on a line of its own.
func renderAnswer(sents []labelled) string {
	var b strings.Builder
	for i, s := range sents {
		prev := ""
		if i > 0 {
			prev = sents[i-1].text
		}
		switch {
		case i == 0:
		case sents[i-1].label == "label", s.label == "label", strings.HasPrefix(s.text, "- "), strings.HasPrefix(prev, "- "):
			b.WriteByte('\n')
		default:
			b.WriteByte(' ')
		}
		b.WriteString(s.text)
	}
	return b.String()
}

// wantRefused is the contract's decision from the labels: refuse below
// 60% supported claims or with fewer than 2 sources supporting them.
func (c claimsCase) wantRefused() bool {
	claims, ok := 0, 0
	srcs := map[string]bool{}
	for _, s := range c.sentences {
		switch s.label {
		case "ok":
			claims++
			ok++
			for _, b := range s.by {
				srcs[b] = true
			}
		case "bad":
			claims++
		}
	}
	return claims == 0 || float64(ok)/float64(claims) < synth.DefaultMinCoverage || len(srcs) < synth.DefaultMinSources
}

// claimFigures are a verifier's figures on a set of fixture answers.
type claimFigures struct {
	answers, faithful, fabricated     int
	faithfulAccepted, fabricatedTaken int // claims judged supported
	notClaims, notClaimsTaken         int // meta and label sentences, and those counted as claims
	refuseTP, refuseFP, refuseFN      int
	acceptTN                          int
	// badOnly are answers made only of fabricated claims; badOnlyRefused
	// how many of them were refused.
	badOnly, badOnlyRefused int
	byClass                 map[string][2]int // class -> {judged supported, claims}
	misses                  []string
}

func (f claimFigures) refusalPrecision() float64 { return ratio(f.refuseTP, f.refuseTP+f.refuseFP) }
func (f claimFigures) refusalRecall() float64    { return ratio(f.refuseTP, f.refuseTP+f.refuseFN) }
func (f claimFigures) fabricatedRate() float64   { return ratio(f.fabricatedTaken, f.fabricated) }
func (f claimFigures) faithfulRate() float64     { return ratio(f.faithfulAccepted, f.faithful) }

// claimPrecision is the share of claims judged supported that were
// faithful; claimRecall the share of faithful claims judged supported.
func (f claimFigures) claimPrecision() float64 {
	return ratio(f.faithfulAccepted, f.faithfulAccepted+f.fabricatedTaken)
}

var markerText = regexp.MustCompile(`\[[^\]]*\]`)

// pairKey is a sentence as its claim's text reads, for pairing: without
// markers, punctuation, case and spacing.
func pairKey(s string) string {
	s = markerText.ReplaceAllString(s, " ")
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}

// scoreClaims checks every case of the half ("" for all) with v and
// scores claims and refusals against the labels.
func scoreClaims(t testing.TB, v synth.Verifier, cases []claimsCase, half string) claimFigures {
	t.Helper()
	f := claimFigures{byClass: map[string][2]int{}}
	for _, c := range cases {
		if half != "" && c.half != half {
			continue
		}
		f.answers++
		verdict := v.Check(context.Background(), c.draft, c.sources)
		refused, want := verdict.Response.Refused, c.wantRefused()
		switch {
		case refused && want:
			f.refuseTP++
		case refused:
			f.refuseFP++
		case want:
			f.refuseFN++
		default:
			f.acceptTN++
		}
		if refused != want {
			f.misses = append(f.misses, fmt.Sprintf("%s: refused %v, want %v (coverage %.2f; %s)", c.id, refused, want,
				verdict.Response.CoverageRatio, verdict.Response.Notes))
		}
		onlyBad := !slices.ContainsFunc(c.sentences, func(s labelled) bool { return s.label == "ok" })
		if onlyBad {
			f.badOnly++
			if refused {
				f.badOnlyRefused++
			}
		}
		// Pair claims with sentences in order: a claim is its sentence's
		// text, or part of it (a sentence the verifier split in two is
		// supported when both parts are), or (when the verifier did not
		// split two sentences) holds several sentences, which share its
		// verdict.
		next, covering := 0, false
		for _, s := range c.sentences {
			var check *synth.ClaimCheck
			for next < len(verdict.Claims) {
				ck, sk := pairKey(verdict.Claims[next].Text), pairKey(s.text)
				if ck != "" && strings.Contains(sk, ck) {
					check, covering = &verdict.Claims[next], false
					next++
					for next < len(verdict.Claims) && pairKey(verdict.Claims[next].Text) != "" && strings.Contains(sk, pairKey(verdict.Claims[next].Text)) {
						if !verdict.Claims[next].Supported {
							check = &verdict.Claims[next]
						}
						next++
					}
					break
				}
				if sk != "" && strings.Contains(ck, sk) {
					check, covering = &verdict.Claims[next], true
					break
				}
				if !covering {
					break
				}
				next, covering = next+1, false
			}
			supported := check != nil && check.Supported
			switch s.label {
			case "meta", "label":
				f.notClaims++
				if check != nil {
					f.notClaimsTaken++
					f.misses = append(f.misses, fmt.Sprintf("%s: %q is no claim but was taken for one", c.id, s.text))
				}
				continue
			case "ok":
				f.faithful++
				if supported {
					f.faithfulAccepted++
				} else {
					why := ""
					if check != nil {
						why = check.Reason
					}
					f.misses = append(f.misses, fmt.Sprintf("%s: faithful %s claim refused: %q (%s)", c.id, s.class, s.text, why))
				}
			case "bad":
				f.fabricated++
				if supported {
					f.fabricatedTaken++
					f.misses = append(f.misses, fmt.Sprintf("%s: fabricated %s claim accepted: %q", c.id, s.class, s.text))
				}
			}
			k := s.label + "/" + s.class
			n := f.byClass[k]
			if supported {
				n[0]++
			}
			n[1]++
			f.byClass[k] = n
		}
		if covering {
			next++
		}
		if next != len(verdict.Claims) {
			t.Fatalf("%s: claim %q pairs with no sentence", c.id, verdict.Claims[next].Text)
		}
	}
	return f
}

func (f claimFigures) String() string {
	var classes []string
	for k, n := range f.byClass {
		classes = append(classes, fmt.Sprintf("%s %d/%d", k, n[0], n[1]))
	}
	sort.Strings(classes)
	return fmt.Sprintf("%d answers; faithful claims accepted %d/%d (%.3f); fabricated claims accepted %d/%d (%.3f); claim precision %.3f; "+
		"no-claim sentences taken for claims %d/%d; refusal precision %.3f recall %.3f (TP %d FP %d FN %d TN %d); "+
		"answers of fabricated claims only refused %d/%d\n  by class: %s",
		f.answers, f.faithfulAccepted, f.faithful, f.faithfulRate(), f.fabricatedTaken, f.fabricated, f.fabricatedRate(), f.claimPrecision(),
		f.notClaimsTaken, f.notClaims, f.refusalPrecision(), f.refusalRecall(), f.refuseTP, f.refuseFP, f.refuseFN, f.acceptTN,
		f.badOnlyRefused, f.badOnly, strings.Join(classes, ", "))
}

// The fixture is sound: at least 300 claims in 80 answers, both halves
// hold every class, every citation quotes its source, and every answer's
// written decision is the one its labels give.
func TestClaimsFixtureIsSound(t *testing.T) {
	cases := loadClaims(t)
	claims := 0
	classes := map[string]map[string]bool{"tune": {}, "test": {}, "held-out": {}}
	halves := map[string]int{}
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	for _, c := range cases {
		halves[c.half]++
		if c.expect != "accept" && c.expect != "refuse" {
			t.Errorf("%s: expect %q", c.id, c.expect)
		}
		if (c.expect == "refuse") != c.wantRefused() {
			t.Errorf("%s: written %s, but its labels say refused=%v", c.id, c.expect, c.wantRefused())
		}
		for _, cite := range c.draft.Sources {
			i := slices.IndexFunc(c.sources, func(s synth.Source) bool { return s.ID == cite.SourceID })
			if i < 0 || !strings.Contains(norm(c.sources[i].Text), norm(cite.Span)) {
				t.Errorf("%s: the span %q does not occur in %s", c.id, cite.Span, cite.SourceID)
			}
		}
		for _, s := range c.sentences {
			if s.label == "ok" || s.label == "bad" {
				claims++
				classes[c.half][s.label+"/"+s.class] = true
			}
			for _, b := range s.by {
				if !slices.ContainsFunc(c.draft.Sources, func(ct synth.Citation) bool { return ct.SourceID == b }) {
					t.Errorf("%s: %q rests on %s, which the answer does not cite", c.id, s.text, b)
				}
			}
		}
	}
	if len(cases) < 80 || claims < 300 {
		t.Fatalf("%d answers, %d claims; the fixture needs 80 and 300", len(cases), claims)
	}
	all := map[string]bool{}
	for _, h := range classes {
		for k := range h {
			all[k] = true
		}
	}
	for k := range all {
		for h, in := range classes {
			if !in[k] && (h == "held-out" || !strings.HasPrefix(k, "bad/negation") && !strings.HasPrefix(k, "bad/invented")) {
				t.Errorf("the %s half has no %s claim", h, k)
			}
		}
	}
	t.Logf("%d answers (tune %d, test %d, held out %d), %d claims, classes %d", len(cases), halves["tune"], halves["test"], halves["held-out"],
		claims, len(all))
}

// The verifier on the labelled claims, each half apart; run with -v for
// the figures and every miss. The test half is held to the issue's
// targets where the verifier meets them (every answer made only of
// fabrications refused; refusal recall 0.95) and, where it does not, to
// the figures measured when tuning ended, so a change that makes it worse
// fails (docs/BENCHMARKS.md, "Grounding verifier"; the targets are
// fabricated claims accepted at most 2%, faithful claims at least 85%,
// refusal precision 0.95).
func TestGroundingClaims(t *testing.T) {
	cases := loadClaims(t)
	var test claimFigures
	for _, half := range []string{"tune", "test"} {
		f := scoreClaims(t, synth.Verifier{}, cases, half)
		t.Logf("%s half: %v", half, f)
		for _, second := range []bool{false, true} {
			batch := slices.DeleteFunc(slices.Clone(cases), func(c claimsCase) bool { return c.second != second })
			t.Logf("%s half, %s batch: %v", half, map[bool]string{false: "first", true: "second"}[second], scoreClaims(t, synth.Verifier{}, batch, half))
		}
		// The test half's misses are shown only when asked for: the
		// verifier is tuned on the tune half.
		if half == "tune" || os.Getenv("CAIRN_GROUNDING_TEST_MISSES") != "" {
			for _, m := range f.misses {
				t.Logf("  %s miss: %s", half, m)
			}
		}
		test = f
	}
	if test.badOnlyRefused != test.badOnly || test.badOnly == 0 {
		t.Errorf("answers made only of fabricated claims: %d of %d refused, want all", test.badOnlyRefused, test.badOnly)
	}
	for _, c := range []struct {
		name      string
		got, want float64
		atMost    bool
	}{
		{"fabricated claims accepted", test.fabricatedRate(), 4.0 / 126, true},
		{"faithful claims accepted", test.faithfulRate(), 0.65, false},
		{"refusal recall", test.refusalRecall(), 0.95, false},
		{"refusal precision", test.refusalPrecision(), 0.58, false},
	} {
		if c.atMost && c.got > c.want+1e-9 || !c.atMost && c.got < c.want-1e-9 {
			t.Errorf("test half: %s %.3f, floor %.3f", c.name, c.got, c.want)
		}
	}
}

// The verifier on the third batch, held out whole: labelled and
// committed before the verifier was first run on it, and read once when
// tuning on the tune half had ended (docs/BENCHMARKS.md, "Grounding
// verifier"). Its figures are floors, so a change that makes it worse
// fails; its misses are shown only when asked for
// (CAIRN_GROUNDING_TEST_MISSES=1), since nothing may be tuned on it.
func TestGroundingClaimsHeldOut(t *testing.T) {
	f := scoreClaims(t, synth.Verifier{}, loadClaims(t), "held-out")
	t.Logf("held-out batch: %v", f)
	if os.Getenv("CAIRN_GROUNDING_TEST_MISSES") != "" {
		for _, m := range f.misses {
			t.Logf("  held-out miss: %s", m)
		}
	}
	if f.answers == 0 {
		t.Fatal("no held-out answers")
	}
	if f.badOnlyRefused != f.badOnly || f.badOnly == 0 {
		t.Errorf("answers made only of fabricated claims: %d of %d refused, want all", f.badOnlyRefused, f.badOnly)
	}
	// Measured at the one read (far from the targets: fabricated claims
	// accepted at most 2%, faithful at least 85%, refusal precision 0.95).
	for _, c := range []struct {
		name      string
		got, want float64
		atMost    bool
	}{
		{"fabricated claims accepted", f.fabricatedRate(), 5.0 / 54, true},
		{"faithful claims accepted", f.faithfulRate(), 37.0 / 78, false},
		{"refusal recall", f.refusalRecall(), 0.95, false},
		{"refusal precision", f.refusalPrecision(), 0.39, false},
	} {
		if c.atMost && c.got > c.want+1e-9 || !c.atMost && c.got < c.want-1e-9 {
			t.Errorf("held-out batch: %s %.3f, floor %.3f", c.name, c.got, c.want)
		}
	}
}

// The threshold and synonym-rank sweep on the tune half (run with
// CAIRN_GROUNDING_SWEEP=1 -v).
func TestGroundingClaimsSweep(t *testing.T) {
	if os.Getenv("CAIRN_GROUNDING_SWEEP") == "" {
		t.Skip("set CAIRN_GROUNDING_SWEEP=1 to sweep the verifier's settings on the tune half")
	}
	cases := loadClaims(t)
	for _, rank := range []int{-1, 1, 2, 3, 5} {
		for _, th := range []float64{1, 0.85, 0.75, 0.67, 0.6} {
			f := scoreClaims(t, synth.Verifier{Threshold: th, SynonymRank: rank}, cases, "tune")
			t.Logf("rank %2d threshold %.2f: faithful %.3f fabricated %.3f refusal P %.3f R %.3f", rank, th, f.faithfulRate(), f.fabricatedRate(),
				f.refusalPrecision(), f.refusalRecall())
		}
	}
}

// Whether the built-in GloVe vectors could tell a paraphrase's word from
// a substituted one (run with CAIRN_GROUNDING_SWEEP=1 -v): the cosines of
// words faithful claims of the tune half use for their sources' words,
// against those of the substitutions its fabrications make.
func TestGroundingSynonymCosines(t *testing.T) {
	if os.Getenv("CAIRN_GROUNDING_SWEEP") == "" {
		t.Skip("set CAIRN_GROUNDING_SWEEP=1 to measure word similarities")
	}
	v, err := glove.Load()
	if err != nil {
		t.Fatal(err)
	}
	cos := func(a, b string) string {
		x, y := v.WordIDs(a, nil), v.WordIDs(b, nil)
		if len(x) == 0 || len(y) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", v.WordCosine(x[0], y[0]))
	}
	for _, p := range [][2]string{{"attended", "went"}, {"visited", "went"}, {"relies", "rely"}, {"shows", "examples"}, {"contributed", "thanks"},
		{"express", "spit"}, {"adds", "new"}, {"pets", "cats"}, {"family", "we"}} {
		t.Logf("faithful     %-12s %-12s %s", p[0], p[1], cos(p[0], p[1]))
	}
	for _, p := range [][2]string{{"yoga", "pottery"}, {"surrogacy", "adoption"}, {"coffee", "clothing"}, {"almond", "coconut"}, {"clothing", "gear"},
		{"alpine", "scratch"}, {"hot", "aerial"}, {"cat", "dog"}, {"late", "early"}, {"weaker", "stronger"}, {"monday", "tuesday"}, {"london", "california"}} {
		t.Logf("substitution %-12s %-12s %s", p[0], p[1], cos(p[0], p[1]))
	}
}

// The verifier on the tune half alone, for tuning (run with
// CAIRN_GROUNDING_TUNE=1 -v): its figures, those of its two folds (a
// second hash of the answer id, to see whether a change holds on the
// fold it was not made for), and its misses. The test half is not read.
func TestGroundingClaimsTune(t *testing.T) {
	if os.Getenv("CAIRN_GROUNDING_TUNE") == "" {
		t.Skip("set CAIRN_GROUNDING_TUNE=1 to see the tune half's figures and misses")
	}
	var tune []claimsCase
	for _, c := range loadClaims(t) {
		if c.half == "tune" {
			tune = append(tune, c)
		}
	}
	f := scoreClaims(t, synth.Verifier{}, tune, "tune")
	t.Logf("tune half: %v", f)
	for _, fold := range []string{"A", "B"} {
		var in []claimsCase
		for _, c := range tune {
			if tuneFold(c.id) == fold {
				in = append(in, c)
			}
		}
		t.Logf("fold %s: %v", fold, scoreClaims(t, synth.Verifier{}, in, "tune"))
	}
	for _, second := range []bool{false, true} {
		var in []claimsCase
		for _, c := range tune {
			if c.second == second {
				in = append(in, c)
			}
		}
		t.Logf("second batch %v: %v", second, scoreClaims(t, synth.Verifier{}, in, "tune"))
	}
	for _, m := range f.misses {
		t.Logf("  miss: %s", m)
	}
}

// tuneFold puts a tune-half answer in fold A or B by the second byte of
// the SHA-256 of its id.
func tuneFold(id string) string {
	if sha256.Sum256([]byte(id))[1]%2 == 0 {
		return "A"
	}
	return "B"
}

// perturbWord is a word as the perturbations see one.
var perturbWord = regexp.MustCompile(`[A-Za-z][A-Za-z-]*`)

// perturbStop are words too common to exchange.
var perturbStop = strings.Fields(`the and that this with from have has had was were are for not but its their they them she her his him you your our about into over than then when what which while will would could should been being some more most very just also only like after before because there here other such each every many much made make went said says`)

// perturbContent are the lower-case words of four letters or more that
// are not too common.
func perturbContent(s string) []string {
	var out []string
	for _, w := range perturbWord.FindAllString(s, -1) {
		if len(w) >= 4 && !slices.Contains(perturbStop, strings.ToLower(w)) && strings.ToLower(w) == w {
			out = append(out, w)
		}
	}
	return out
}

// perturbNames are the capitalised words after the first.
func perturbNames(s string) []string {
	var out []string
	for i, w := range perturbWord.FindAllStringIndex(s, -1) {
		x := s[w[0]:w[1]]
		if i > 0 && len(x) >= 3 && x[0] >= 'A' && x[0] <= 'Z' && strings.ToLower(x[1:]) == x[1:] {
			out = append(out, x)
		}
	}
	return out
}

// replaceFirstWord replaces the first whole-word occurrence of old.
func replaceFirstWord(s, old, new string) string {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(old) + `\b`)
	done := false
	return re.ReplaceAllStringFunc(s, func(m string) string {
		if done {
			return m
		}
		done = true
		return new
	})
}

// The tune half's faithful claims made unfaithful by rote, to see how
// far a change lets fabrications through where the tune half's own
// fabricated claims are too few to tell (run with CAIRN_GROUNDING_TUNE=1
// -v; CAIRN_GROUNDING_TEST_MISSES=1 lists those accepted): the first and
// last lower-case content words exchanged, the last replaced by a word of
// a source the answer does not cite, the middle one by another word of a
// cited source, an invented tail added, a capitalised name replaced by
// another of the scenario. Most are fabrications, some are word salad,
// a few may still be true; the counts compare versions, they are no
// error rate. The test half is not read.
func TestGroundingClaimsPerturbed(t *testing.T) {
	if os.Getenv("CAIRN_GROUNDING_TUNE") == "" {
		t.Skip("set CAIRN_GROUNDING_TUNE=1 to check the tune half's claims made unfaithful")
	}
	cases := loadClaims(t)
	v := synth.Verifier{}
	counts := map[string][2]int{}
	var accepted []string
	for _, c := range cases {
		if c.half != "tune" {
			continue
		}
		cited, other := "", ""
		for _, s := range c.sources {
			if slices.ContainsFunc(c.draft.Sources, func(ct synth.Citation) bool { return ct.SourceID == s.ID }) {
				cited += " " + s.Text
			} else {
				other += " " + s.Text
			}
		}
		lowCited := strings.ToLower(cited)
		for _, s := range c.sentences {
			if s.label != "ok" {
				continue
			}
			text := strings.TrimSpace(s.text)
			content := perturbContent(text)
			var variants [][2]string
			if len(content) >= 2 {
				a, b := content[0], content[len(content)-1]
				if a != b {
					x := replaceFirstWord(text, a, "\x00")
					x = replaceFirstWord(x, b, a)
					x = strings.Replace(x, "\x00", b, 1)
					variants = append(variants, [2]string{"swap", x})
				}
			}
			for _, w := range perturbContent(other) {
				if !strings.Contains(lowCited, strings.ToLower(w)) && len(content) > 0 {
					variants = append(variants, [2]string{"moved", replaceFirstWord(text, content[len(content)-1], w)})
					break
				}
			}
			for _, w := range perturbContent(cited) {
				if len(content) > 0 && !strings.Contains(strings.ToLower(text), strings.ToLower(w)) && !slices.Contains(content, w) {
					variants = append(variants, [2]string{"exchanged", replaceFirstWord(text, content[len(content)/2], w)})
					break
				}
			}
			base := strings.TrimRight(text, ".!")
			variants = append(variants, [2]string{"tail", base + " at the community pool."}, [2]string{"tail2", base + ", encrypted with a customer-managed key."},
				[2]string{"tail3", base + " for the second time."})
			allNames := perturbNames(other + " " + cited)
			for _, n := range perturbNames(" " + text) {
				for _, m := range allNames {
					if m != n && !strings.Contains(text, m) {
						variants = append(variants, [2]string{"name", replaceFirstWord(text, n, m)})
						break
					}
				}
				break
			}
			for _, vr := range variants {
				if vr[1] == text {
					continue
				}
				d := synth.Draft{Answer: vr[1], Sources: c.draft.Sources}
				verdict := v.Check(context.Background(), d, c.sources)
				ok := len(verdict.Claims) > 0 && !slices.ContainsFunc(verdict.Claims, func(ck synth.ClaimCheck) bool { return !ck.Supported })
				n := counts[vr[0]]
				n[1]++
				if ok {
					n[0]++
					accepted = append(accepted, fmt.Sprintf("%s %s: %q (from %q)", c.id, vr[0], vr[1], text))
				}
				counts[vr[0]] = n
			}
		}
	}
	tot := [2]int{}
	var parts []string
	for _, k := range []string{"swap", "moved", "exchanged", "tail", "tail2", "tail3", "name"} {
		parts = append(parts, fmt.Sprintf("%s %d/%d", k, counts[k][0], counts[k][1]))
		tot[0] += counts[k][0]
		tot[1] += counts[k][1]
	}
	t.Logf("tune half made unfaithful: accepted %d/%d: %s", tot[0], tot[1], strings.Join(parts, ", "))
	if os.Getenv("CAIRN_GROUNDING_TEST_MISSES") != "" {
		for _, a := range accepted {
			t.Logf("  accepted: %s", a)
		}
	}
}
