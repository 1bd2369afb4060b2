package graph_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/cairnhq/cairn/graph"
	"github.com/cairnhq/cairn/memory"
)

// fixtureThought is one labelled thought of testdata/kg_extraction.
type fixtureThought struct {
	ID       string     `json:"id"`
	Split    string     `json:"split"`
	Stratum  string     `json:"stratum"`
	Text     string     `json:"text"`
	Entities [][]string `json:"entities"`
	Edges    [][]string `json:"edges"`
}

func loadFixture(t testing.TB) []fixtureThought {
	t.Helper()
	return loadFixtureFile(t, "../testdata/kg_extraction/thoughts.jsonl")
}

func loadFixtureFile(t testing.TB, path string) []fixtureThought {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fixtureThought
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ft fixtureThought
		if err := json.Unmarshal(sc.Bytes(), &ft); err != nil {
			t.Fatal(err)
		}
		out = append(out, ft)
	}
	return out
}

// score counts true positives, staged items and gold items.
type score struct{ tp, staged, gold int }

func (s score) precision() float64 {
	if s.staged == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.staged)
}

func (s score) recall() float64 {
	if s.gold == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.gold)
}

// Quality is what staging keeps from the fixture, scored against its
// labels: precision and recall of the staged candidates.
type Quality struct {
	Entities, Edges score
	// TypeRight counts true-positive entities whose type matches the
	// label's.
	TypeRight int
	// BelowConfidence, OverCap and Invalid are what the staging plans
	// left out; Duplicates what staging skipped as already pending.
	BelowConfidence, OverCap, Invalid, Duplicates int
	Errors                                        []string
}

// The staging options inner_voice uses by default (cairn.DefaultMaxNodes,
// DefaultMaxEdges; confidence_min is the measured threshold).
const (
	defaultMaxNodes = 30
	defaultMaxEdges = 60
)

// stage stages texts as one inner_voice call does with stage_kg:
// Extract, then Plan with the threshold and the default caps, then the
// store's deduplication. Each call stages into an empty graph of its own
// (its labels are its own), so what the store skips is a candidate whose
// key an earlier one of the same call holds, as StageCandidates skips a
// key already pending.
func stage(texts []graph.Text, min float64, q *Quality) []memory.KGCandidate {
	n := 0
	plan := graph.Plan(graph.Extract(texts), graph.StageOptions{
		MinConfidence: min, MaxNodes: defaultMaxNodes, MaxEdges: defaultMaxEdges,
		NewID: func(prefix string) string { n++; return fmt.Sprintf("%s_%d", prefix, n) }})
	q.BelowConfidence += plan.BelowConfidence
	q.OverCap += plan.OverCap
	q.Invalid += plan.Invalid
	var staged []memory.KGCandidate
	pending := map[string]bool{}
	for _, c := range plan.Candidates {
		k := string(c.Kind) + " " + c.Key()
		if pending[k] {
			q.Duplicates++
			continue
		}
		pending[k] = true
		staged = append(staged, c)
	}
	return staged
}

// measure scores what staging keeps at confidence min, thought by
// thought, for one split ("" for all).
func measure(fx []fixtureThought, split string, min float64) Quality {
	var q Quality
	for _, ft := range fx {
		if split != "" && ft.Split != split {
			continue
		}
		score1(&q, ft, stage([]graph.Text{{ID: ft.ID, Content: ft.Text}}, min, &q))
	}
	slices.Sort(q.Errors)
	return q
}

// score1 scores the candidates staged from a labelled thought (or the
// thoughts of one call, labels merged).
func score1(q *Quality, ft fixtureThought, staged []memory.KGCandidate) {
	gold := map[string]bool{}
	goldType := map[string]string{}
	for _, e := range ft.Entities {
		gold[memory.NameKey(e[0])] = true
		goldType[memory.NameKey(e[0])] = e[1]
	}
	q.Entities.gold += len(gold)
	goldEdges := map[string]bool{}
	for _, g := range ft.Edges {
		goldEdges[memory.EdgeKey(g[0], g[1], g[2])] = true
	}
	q.Edges.gold += len(goldEdges)
	for _, c := range staged {
		var rule string
		_ = json.Unmarshal(c.Data, &struct {
			Rule *string `json:"rule"`
		}{&rule})
		switch c.Kind {
		case memory.CandidateEntity:
			q.Entities.staged++
			if k := c.Key(); gold[k] {
				q.Entities.tp++
				if goldType[k] == c.EntityType {
					q.TypeRight++
				}
				delete(gold, k)
			} else {
				q.Errors = append(q.Errors, fmt.Sprintf("%s: junk entity %q (%s %.2f)", ft.ID, c.Name, rule, c.Confidence))
			}
		case memory.CandidateEdge:
			q.Edges.staged++
			if k := c.Key(); goldEdges[k] {
				q.Edges.tp++
				delete(goldEdges, k)
			} else {
				q.Errors = append(q.Errors, fmt.Sprintf("%s: wrong edge %q (%s %.2f)", ft.ID, k, rule, c.Confidence))
			}
		}
	}
	for k := range gold {
		q.Errors = append(q.Errors, fmt.Sprintf("%s: missed entity %q", ft.ID, k))
	}
	for k := range goldEdges {
		q.Errors = append(q.Errors, fmt.Sprintf("%s: missed edge %q", ft.ID, k))
	}
}

// measureCalls scores what staging keeps when the thoughts of a split
// come as the sources of inner_voice calls, size at a time (its default
// top_k is 5): one extraction over the call's sources (a name mentioned
// in several gains confidence), one plan under the caps, the store's
// deduplication, scored against the labels of the call's thoughts
// together.
func measureCalls(fx []fixtureThought, split string, conf float64, size int) Quality {
	var q Quality
	var part []fixtureThought
	for _, ft := range fx {
		if split == "" || ft.Split == split {
			part = append(part, ft)
		}
	}
	for len(part) > 0 {
		call := part[:min(size, len(part))]
		part = part[len(call):]
		merged := fixtureThought{ID: call[0].ID + "…" + call[len(call)-1].ID}
		var texts []graph.Text
		for _, ft := range call {
			texts = append(texts, graph.Text{ID: ft.ID, Content: ft.Text})
			merged.Entities = append(merged.Entities, ft.Entities...)
			merged.Edges = append(merged.Edges, ft.Edges...)
		}
		score1(&q, merged, stage(texts, conf, &q))
	}
	slices.Sort(q.Errors)
	return q
}

// What staging keeps from the labelled fixture (Extract, then Plan at
// confidence_min 0.6 with inner_voice's default caps, then the store's
// deduplication) is held as a floor: a change that stages more junk or
// finds less fails here. docs/BENCHMARKS.md reports the figures.
func TestExtractorQuality(t *testing.T) {
	fx := loadFixture(t)
	if len(fx) < 60 {
		t.Fatalf("the fixture has %d thoughts; want at least 60", len(fx))
	}
	all := measure(fx, "", 0.6)
	for _, split := range []string{"dev", "test", ""} {
		q := measure(fx, split, 0.6)
		name := split
		if name == "" {
			name = "all"
		}
		t.Logf("%-4s entities P %.3f R %.3f (%d/%d staged, %d gold, types right %d)  edges P %.3f R %.3f (%d/%d staged, %d gold)", name,
			q.Entities.precision(), q.Entities.recall(), q.Entities.tp, q.Entities.staged, q.Entities.gold, q.TypeRight,
			q.Edges.precision(), q.Edges.recall(), q.Edges.tp, q.Edges.staged, q.Edges.gold)
		t.Logf("%-4s left out: %d below confidence_min, %d over the caps, %d invalid, %d duplicates", name,
			q.BelowConfidence, q.OverCap, q.Invalid, q.Duplicates)
	}
	calls := measureCalls(fx, "", 0.6, 5)
	for _, split := range []string{"dev", "test", ""} {
		q := measureCalls(fx, split, 0.6, 5)
		name := split
		if name == "" {
			name = "all"
		}
		t.Logf("%-4s in calls of 5 sources: entities P %.3f R %.3f (%d/%d staged, %d gold)  edges P %.3f R %.3f (%d/%d staged, %d gold); %d duplicates skipped, %d over the caps",
			name, q.Entities.precision(), q.Entities.recall(), q.Entities.tp, q.Entities.staged, q.Entities.gold,
			q.Edges.precision(), q.Edges.recall(), q.Edges.tp, q.Edges.staged, q.Edges.gold, q.Duplicates, q.OverCap)
	}
	if testing.Verbose() {
		t.Logf("errors:\n%s", strings.Join(all.Errors, "\n"))
	}
	// For context: a naive baseline that stages every capitalised word
	// (what heuristic extractors that stage "The" or "Sources:" do).
	var base score
	for _, ft := range fx {
		gold := map[string]bool{}
		for _, e := range ft.Entities {
			gold[memory.NameKey(e[0])] = true
		}
		base.gold += len(gold)
		seen := map[string]bool{}
		for _, w := range strings.Fields(ft.Text) {
			w = strings.Trim(w, ".,;!?()\"'`")
			if w == "" || !unicode.IsUpper([]rune(w)[0]) || seen[strings.ToLower(w)] {
				continue
			}
			seen[strings.ToLower(w)] = true
			base.staged++
			if gold[strings.ToLower(strings.TrimSuffix(w, ":"))] {
				base.tp++
			}
		}
	}
	t.Logf("baseline (every capitalised word) entities P %.3f R %.3f (%d/%d staged)", base.precision(), base.recall(), base.tp, base.staged)
	held := measure(fx, "test", 0.6)
	// The held-out precision of edges means something only over enough
	// staged edges: with fewer than 10, one error moves it by more than 0.1.
	if held.Edges.staged < 10 {
		t.Errorf("the held-out part stages %d edges; it needs at least 10 for its edge precision to mean something", held.Edges.staged)
	}
	// The target is precision 0.85 on the held-out part and in calls; on
	// the whole fixture the figures may not fall below those measured
	// before the extractor was changed for real text (entities P 0.988
	// R 0.975, edges P 0.971 R 0.680), nor edge recall below what the
	// syntax of relations now finds (0.760).
	floors := []struct {
		what string
		got  float64
		min  float64
	}{
		{"entity precision", all.Entities.precision(), 0.987},
		{"edge precision", all.Edges.precision(), 0.971},
		{"held-out entity precision", held.Entities.precision(), 0.85},
		{"held-out edge precision", held.Edges.precision(), 0.85},
		{"entity precision in calls of 5", calls.Entities.precision(), 0.85},
		{"edge precision in calls of 5", calls.Edges.precision(), 0.85},
		{"entity recall", all.Entities.recall(), 0.975},
		{"edge recall", all.Edges.recall(), 0.75},
	}
	for _, f := range floors {
		if f.got < f.min {
			t.Errorf("%s %.3f is below its floor %.2f", f.what, f.got, f.min)
		}
	}
}

// What naive heuristic extractors stage ("The", "This", "Sources:") is never
// staged: sentence-initial capitals of ordinary words, markdown labels,
// pronouns, dates, numbers, generic acronyms, hyphenated adjectives.
func TestExtractorNeverStagesJunk(t *testing.T) {
	texts := []string{
		"The build failed again. This means the cache is stale.",
		"Sources: the wiki, the runbook and a chat.\nNotes: none.",
		"## Summary\n- It works.\n- They said so.\n* However, we should check.",
		"Yesterday we deployed v2.3.1 at 14:00 on Monday, January 5th, 2026.",
		"Note: the API returns JSON over HTTP; the URL is in the README.",
		"A long-running, rate-limited, read-only, well-known, follow-up fix.",
		"Therefore, Everything, Nothing, Once, Lesson, Important: none of these.",
		"**Decision**: keep it. _Why_: because. > Quote: fine.",
		"1. First\n2. Second\n3. Third",
		"I think we're done; you can go now. TODO: nothing.",
		"Q3 revenue grew 12% and p99 latency fell to 80 ms (see PR 412).",
		"e.g. this, i.e. that, etc.",
		// Real text: languages, units and values, hashes, references,
		// words of code, flags, a licence in capitals.
		"Update Chinese, Spanish and German translations.",
		"Compressing 64 KB at 3.0 GHz runs at 150MB/s on 32-bit hosts.",
		"[1139e5b] Use `nil` instead of `ctx` (see #1234, LP: #56789).",
		"Configure using --disable-fft and -h.",
		"IN NO EVENT SHALL THE AUTHORS BE LIABLE FOR ANY CLAIM.",
		// Examples, values and phrases of real text: placeholder paths,
		// media types, protocol versions, a phrase in title case, words in
		// capitals, hyphenated adjectives, sums, an acronym's expansion.
		"Copy /path/to/file as application/json over HTTP/1.1.",
		"Fix a Use After Free; log at ERROR or WARNING level.",
		"A big-endian, pydoc-style, quoted-printable value of sign+digits+decimal bytes.",
		"ELF: Executable and Linking Format, a format of binaries.",
		// Alternatives of words, flags in backticks, a setting's value, a
		// charset, an instruction's verb.
		"It encrypts/decrypts data; pass `-race` or `--verbose`.",
		"Restrict the symbols as arch=linux-any, in utf-8.",
		"Switch to the new layout.",
	}
	// Markup and code snippets in backticks are not names.
	for _, text := range []string{"The page showed `<script>alert(1)</script>` as text.", "Run `rm -rf /tmp/x && ls` first.",
		"Set `FOO=bar` and call `f(x)`; then `a[0]`."} {
		for _, e := range graph.Extract([]graph.Text{{ID: "t", Content: text}}).Entities {
			t.Errorf("%q: staged %q from a code snippet (%s %.2f)", text, e.Name, e.Rule, e.Confidence)
		}
	}
	junk := []string{"the", "this", "sources", "sources:", "notes", "it", "they", "however", "yesterday", "monday", "january",
		"api", "json", "http", "url", "long-running", "rate-limited", "read-only", "well-known", "follow-up", "therefore",
		"everything", "nothing", "once", "lesson", "important", "decision", "why", "quote", "first", "second", "third",
		"i", "we", "you", "todo", "q3", "p99", "pr", "e.g", "i.e", "etc", "2026", "14:00", "v2.3.1", "12%", "80", "412",
		"chinese", "spanish", "german", "kb", "ghz", "150mb/s", "32-bit", "1139e5b", "nil", "ctx", "1234", "lp", "disable-fft", "h",
		"configure", "in", "no", "event", "shall", "authors", "liable", "claim",
		"/path/to/file", "application/json", "http/1.1", "use after free", "after free", "error", "warning", "big-endian", "pydoc-style",
		"quoted-printable", "sign+digits+decimal", "executable and linking format", "linking format", "executable",
		"encrypts/decrypts", "-race", "race", "--verbose", "verbose", "linux-any", "utf-8", "switch"}
	for _, text := range texts {
		x := graph.Extract([]graph.Text{{ID: "t", Content: text}})
		for _, e := range x.Entities {
			if e.Confidence >= 0.6 && slices.Contains(junk, memory.NameKey(e.Name)) {
				t.Errorf("%q: staged junk entity %q (%s %.2f)", text, e.Name, e.Rule, e.Confidence)
			}
		}
		for _, g := range x.Edges {
			if g.Confidence >= 0.6 {
				t.Errorf("%q: staged an edge %+v", text, g)
			}
		}
	}
}

// Extract is deterministic, reports each entity once, and every edge
// joins two of its entities.
func TestExtractIsDeterministicAndConsistent(t *testing.T) {
	fx := loadFixture(t)
	var texts []graph.Text
	for _, ft := range fx {
		texts = append(texts, graph.Text{ID: ft.ID, Content: ft.Text})
	}
	a, b := graph.Extract(texts), graph.Extract(texts)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatal("two runs over the same texts differ")
	}
	names := map[string]bool{}
	for _, e := range a.Entities {
		k := memory.NameKey(e.Name)
		if names[k] {
			t.Errorf("entity %q reported twice", e.Name)
		}
		names[k] = true
		if e.Mentions < 1 || e.SourceID == "" || e.Confidence <= 0 || e.Confidence > 1 {
			t.Errorf("entity %+v", e)
		}
	}
	for _, g := range a.Edges {
		if !names[memory.NameKey(g.Source)] || !names[memory.NameKey(g.Target)] {
			t.Errorf("edge %+v names an entity the extraction does not hold", g)
		}
	}
	// Mentions across texts raise confidence: Kafka appears in several.
	for _, e := range a.Entities {
		if e.Name == "Kafka" && (e.Mentions < 3 || e.Confidence <= 0.8) {
			t.Errorf("Kafka: %+v", e)
		}
	}
}

func FuzzExtract(f *testing.F) {
	for _, s := range []string{"The auth-service depends on NTP.", "Sources:\n- `a/b.go`", "Alice owns X and maintains Y",
		"replaced A with B", "It calls payments-api.", "migrated from Jenkins to GitHub Actions", "`", "a-", "-a", "'s", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		x := graph.Extract([]graph.Text{{ID: "t", Content: text}})
		for _, e := range x.Entities {
			if e.Name == "" || e.Confidence < 0 || e.Confidence > 1 || strings.TrimSpace(e.Name) != e.Name {
				t.Fatalf("entity %+v from %q", e, text)
			}
		}
		for _, g := range x.Edges {
			if g.Source == "" || g.Target == "" || g.Relation == "" || g.Confidence < 0 || g.Confidence > 1 {
				t.Fatalf("edge %+v from %q", g, text)
			}
		}
	})
}

// BenchmarkExtract extracts from the 87 thoughts of the fixture at once,
// as one inner_voice call with that many sources would.
func BenchmarkExtract(b *testing.B) {
	fx := loadFixture(b)
	var texts []graph.Text
	for _, ft := range fx {
		texts = append(texts, graph.Text{ID: ft.ID, Content: ft.Text})
	}
	for b.Loop() {
		graph.Extract(texts)
	}
}

// Every source that mentions an entity or states an edge is named, not
// only the one whose mention was the most confident: a thought whose
// knowledge another thought also holds still holds it.
func TestExtractNamesEverySource(t *testing.T) {
	x := graph.Extract([]graph.Text{
		{ID: "a", Content: "The billing-service uses PostgreSQL for invoices."},
		{ID: "b", Content: "Kafka is fine. billing-service uses PostgreSQL too."},
		{ID: "c", Content: "Nothing to see here."},
	})
	for _, e := range x.Entities {
		want := []string{"a", "b"}
		if e.Name == "Kafka" {
			want = []string{"b"}
		}
		if !slices.Equal(e.SourceIDs, want) || !slices.Contains(e.SourceIDs, e.SourceID) {
			t.Errorf("%s: source ids %v (source %s), want %v", e.Name, e.SourceIDs, e.SourceID, want)
		}
	}
	if len(x.Edges) != 1 || !slices.Equal(x.Edges[0].SourceIDs, []string{"a", "b"}) {
		t.Errorf("edges %+v: want billing-service uses PostgreSQL from a and b", x.Edges)
	}
}

// A candidate quoting a private thought says so in its data; one quoting
// a public thought does not.
func TestPlanMarksCandidatesFromPrivateThoughts(t *testing.T) {
	x := graph.Extract([]graph.Text{
		{ID: "secret", Content: "Alice owns the payroll-service."},
		{ID: "public", Content: "The ledger-api depends on Redis."},
	})
	n := 0
	plan := graph.Plan(x, graph.StageOptions{MinConfidence: 0.6, MaxNodes: 30, MaxEdges: 60, Private: map[string]bool{"secret": true},
		NewID: func(p string) string { n++; return fmt.Sprintf("%s_%d", p, n) }})
	if len(plan.Candidates) < 4 {
		t.Fatalf("plan %+v: want the entities and edges of both thoughts", plan)
	}
	for _, c := range plan.Candidates {
		var data struct {
			Private  bool   `json:"private"`
			Sentence string `json:"sentence"`
		}
		if err := json.Unmarshal(c.Data, &data); err != nil {
			t.Fatal(err)
		}
		if want := c.SourceThoughtID == "secret"; data.Private != want {
			t.Errorf("%s %q from %s: private %v, want %v (%s)", c.Kind, c.Key(), c.SourceThoughtID, data.Private, want, c.Data)
		}
	}
}

// The rules for real text find what they are for: names of code in the
// forms documentation writes them, standards by number, and the
// relations of change logs and doc comments (each case is a pattern, not
// a sentence of the fixtures).
func TestExtractorReadsRealTextPatterns(t *testing.T) {
	cases := []struct {
		text     string
		entities []string
		edges    []string // "source relation target"
	}{
		{"Set the buffer_size option and call _flush.", []string{"buffer_size", "_flush"}, nil},
		{"The handler's __init__ reads self.output_dir and sys.argv.", []string{"__init__", "self.output_dir", "sys.argv"}, nil},
		{"Encode it as RFC 4648 says, in C++ or C code.", []string{"RFC 4648", "C++", "C"}, nil},
		{"This adds first(), next() and reset() to the class.", []string{"first", "next", "reset"}, nil},
		{"Avoid printf(\"%s\", NULL) and read ssh(1).", []string{"printf", "ssh"}, nil},
		{"Run `meson test` and `npm run build` on .NET with ./configure.", []string{"meson", "npm", ".NET", "./configure"}, nil},
		{"The XML-RPC server dispatches calls.", []string{"XML-RPC"}, nil},
		{"Drop libfoo-dev, use libbar-dev instead.", []string{"libfoo-dev", "libbar-dev"}, []string{"libbar-dev replaces libfoo-dev"}},
		{"Replace Build-Depends on python-gdbm and python-lxml with python3-gdbm and python3-lxml.", nil,
			[]string{"python3-gdbm replaces python-gdbm", "python3-lxml replaces python-lxml"}},
		{"EncodeUint8 is replaced with EncodeUint.", nil, []string{"EncodeUint replaces EncodeUint8"}},
		{"Add Breaks+Replaces: frob-dev on frob-utils", nil, []string{"frob-utils replaces frob-dev"}},
		{"Return the version of MSVC that was used to build Python.", nil, []string{"Python built_with MSVC"}},
		{"The wazero module needs Go 1.21 or newer.", nil, []string{"wazero depends_on Go"}},
		{"Package fnv implements FNV-1 and FNV-1a, hash functions created by Glenn Fowler and Phong Vo.", nil,
			[]string{"Glenn Fowler created FNV-1", "Phong Vo created FNV-1a"}},
		{"Added support for nvidia-settings to use NVML.", nil, []string{"nvidia-settings uses NVML"}},
		{"NewSingleHostReverseProxy returns a ReverseProxy using the Director function.", nil, []string{"ReverseProxy uses Director"}},
		{"cpuinit sets up feature flags and calls internal/cpu.Initialize.", nil, []string{"cpuinit calls internal/cpu.Initialize"}},
		// Names of packages and code as change logs and READMEs write them.
		{"Make libglib2.0-tests depend on xdg-desktop-portal and gir1.2-gtk-3.0.", []string{"libglib2.0-tests", "xdg-desktop-portal",
			"gir1.2-gtk-3.0"}, []string{"libglib2.0-tests depends_on xdg-desktop-portal"}},
		{"Replace dh-autoreconf with dh-python and python-mock with python3-mock.", []string{"dh-python", "python-mock"},
			[]string{"dh-python replaces dh-autoreconf", "python3-mock replaces python-mock"}},
		{"The ./configure script does indeed invoke pkg-config.", nil, []string{"./configure calls pkg-config"}},
		{"s2: integrate with `go/types` and the go/build package.", []string{"s2", "go/types", "go/build"}, nil},
		{"Make passwd recommend sensible-utils because vipw uses sensible-editor.", nil, []string{"vipw uses sensible-editor"}},
		// Verb patterns: replacements, passives, adverbs inside a phrase,
		// objects named by the noun phrase they open.
		{"Drop python-gobject in favour of python3-gi.", nil, []string{"python3-gi replaces python-gobject"}},
		{"The Frobnicate method is deprecated in favor of FrobnicateContext.", nil, []string{"FrobnicateContext replaces Frobnicate"}},
		{"Use libpcre2 rather than libpcre3.", nil, []string{"libpcre2 replaces libpcre3"}},
		{"Use debhelper-compat in debian/control instead of debian/compat.", nil, []string{"debhelper-compat replaces debian/compat"}},
		{"ioutil.ReadAll is now deprecated, please use io.ReadAll.", nil, []string{"io.ReadAll replaces ioutil.ReadAll"}},
		{"Switch from python-nose to python3-pytest.", nil, []string{"python3-pytest replaces python-nose"}},
		{"Port from GTK2 to GTK3.", nil, []string{"GTK3 replaces GTK2"}},
		{"libfoo1 is superseded by libfoo2.", nil, []string{"libfoo2 replaces libfoo1"}},
		{"It implements LZW as used by the GIF and TIFF formats.", nil, []string{"GIF uses LZW", "TIFF uses LZW"}},
		{"CVE-2024-1234 was fixed by Jane Doe.", nil, []string{"Jane Doe fixed CVE-2024-1234"}},
		{"Jane Doe is the author of Frobber and the maintainer of Zapp.", nil, []string{"Jane Doe created Frobber"}},
		{"Frobber is a part of GNOME.", nil, []string{"Frobber part_of GNOME"}},
		{"PgBouncer relies heavily on libevent and is now using OpenSSL.", nil,
			[]string{"PgBouncer depends_on libevent", "PgBouncer uses OpenSSL"}},
		{"Frobber uses either Zstd or Brotli.", nil, []string{"Frobber uses Zstd", "Frobber uses Brotli"}},
		{"machVMInfo uses the mach_vm_region region system call to add entries.", nil, []string{"machVMInfo uses mach_vm_region"}},
		{"Totem, which is maintained by the GNOME project, uses GStreamer.", nil, []string{"GNOME maintains Totem", "Totem uses GStreamer"}},
	}
	for _, c := range cases {
		x := graph.Extract([]graph.Text{{ID: "t", Content: c.text}})
		staged := map[string]bool{}
		for _, e := range x.Entities {
			if e.Confidence >= 0.6 {
				staged[memory.NameKey(e.Name)] = true
			}
		}
		for _, want := range c.entities {
			if !staged[memory.NameKey(want)] {
				t.Errorf("%q: %q not staged (entities %+v)", c.text, want, x.Entities)
			}
		}
		edges := map[string]bool{}
		for _, g := range x.Edges {
			if g.Confidence >= 0.6 {
				edges[memory.EdgeKey(g.Source, g.Relation, g.Target)] = true
			}
		}
		for _, want := range c.edges {
			f := strings.Fields(want)
			src, rel, dst := strings.Join(f[:len(f)-2], " "), f[len(f)-2], f[len(f)-1]
			if i := slices.Index(f, rel); i > 0 {
				src, dst = strings.Join(f[:i], " "), strings.Join(f[i+1:], " ")
			}
			if !edges[memory.EdgeKey(src, rel, dst)] {
				t.Errorf("%q: edge %q not staged (edges %+v)", c.text, want, x.Edges)
			}
		}
	}
}
