// Package corpus generates realistic agent memory from a seed, for
// benchmarks: observations of every kind with plausible lengths, grouped in
// sessions across repositories, over a vocabulary with a long tail, and
// natural-language questions about them. The same seed gives the same
// memory.
package corpus

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// Generator produces memory. It is not safe for concurrent use.
type Generator struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
	// Repos and SessionLen shape the scopes: observations are spread over
	// Repos repositories in sessions of about SessionLen observations.
	Repos      int
	SessionLen int
	// Start is the first timestamp (Unix ms); observations are a minute apart.
	Start int64

	n       int
	session int
}

// New returns a generator for seed.
func New(seed uint64) *Generator {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := &Generator{rng: rng, Repos: 20, SessionLen: 60, Start: 1_700_000_000_000}
	g.vocab = buildVocab(rng)
	// Zipf over the vocabulary: a few words are everywhere, most are rare.
	g.zipf = rand.NewZipf(rng, 1.07, 2, uint64(len(g.vocab)-1))
	return g
}

// buildVocab is the common words followed by a long tail of identifiers.
func buildVocab(rng *rand.Rand) []string {
	v := strings.Fields(commonWords)
	syll := strings.Fields(syllables)
	seen := map[string]bool{}
	for _, w := range v {
		seen[w] = true
	}
	for len(v) < 40000 {
		n := 2 + rng.IntN(3)
		var b strings.Builder
		for range n {
			b.WriteString(syll[rng.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			v = append(v, w)
		}
	}
	return v
}

func (g *Generator) word() string { return g.vocab[g.zipf.Uint64()] }

func (g *Generator) words(min, max int) string {
	n := min + g.rng.IntN(max-min+1)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = g.word()
	}
	return strings.Join(parts, " ")
}

func (g *Generator) ident() string {
	a, b := g.word(), g.word()
	if len(b) > 0 {
		b = strings.ToUpper(b[:1]) + b[1:]
	}
	return a + b
}

func (g *Generator) path() string {
	return fmt.Sprintf("internal/%s/%s.go", g.word(), g.word())
}

// Scope returns the scope of the i-th observation.
func (g *Generator) scope(i int) memory.Scope {
	sess := i / g.SessionLen
	return memory.Scope{
		SessionID: fmt.Sprintf("sess-%06d", sess),
		RepoID:    fmt.Sprintf("github.com/acme/repo%02d", sess%g.Repos),
		AgentID:   fmt.Sprintf("agent-%d", sess%3),
	}
}

// Observation returns the next observation.
func (g *Generator) Observation() memory.Observation {
	i := g.n
	g.n++
	k := memory.Kinds[g.rng.IntN(len(memory.Kinds))]
	var text string
	switch k {
	case memory.KindToolCall:
		text = fmt.Sprintf("grep -rn %s %s -> %d matches: %s", g.ident(), g.path(), 1+g.rng.IntN(40), g.words(4, 20))
	case memory.KindCommand:
		text = fmt.Sprintf("go test ./internal/%s/... -> %s %s", g.word(), []string{"ok", "FAIL", "ok", "panic"}[g.rng.IntN(4)], g.words(2, 12))
	case memory.KindFileDiff:
		text = fmt.Sprintf("%s: %s\n+ func %s(%s) error {\n+ \t%s\n", g.path(), g.words(6, 20), g.ident(), g.word(), g.words(6, 30))
	case memory.KindError:
		text = fmt.Sprintf("error: %s: %s failed: %s", g.ident(), g.word(), g.words(5, 25))
	case memory.KindMessage:
		who := []string{"user", "assistant"}[g.rng.IntN(2)]
		text = fmt.Sprintf("%s: %s.", who, g.words(8, 60))
	default:
		text = fmt.Sprintf("node %s %s: %s", g.ident(), strings.TrimPrefix(string(k), "node_"), g.words(3, 25))
	}
	prov, _ := json.Marshal(map[string]any{"seq": i, "tool": string(k)})
	return memory.Observation{
		ID: fmt.Sprintf("obs-%08d", i), Kind: k, Content: text, Provenance: prov,
		TS: g.Start + int64(i)*60_000, Scope: g.scope(i),
	}
}

// Observations returns the next n observations.
func (g *Generator) Observations(n int) []memory.Observation {
	out := make([]memory.Observation, n)
	for i := range out {
		out[i] = g.Observation()
	}
	return out
}

// Question returns a natural-language question about o, built from a few
// of its rarer words wrapped in question words, and the scope a user would
// ask it in (o's repository).
func (g *Generator) Question(o memory.Observation) (string, memory.Scope) {
	var rare []string
	for _, w := range strings.FieldsFunc(o.Content, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') }) {
		w = strings.ToLower(w)
		if len(w) > 5 && !strings.Contains(commonWords, " "+w+" ") {
			rare = append(rare, w)
		}
	}
	g.rng.Shuffle(len(rare), func(i, j int) { rare[i], rare[j] = rare[j], rare[i] })
	if len(rare) > 3 {
		rare = rare[:3]
	}
	lead := []string{"what did we find about", "why did the", "when was", "how did we fix the", "where is the"}[g.rng.IntN(5)]
	return fmt.Sprintf("%s %s %s?", lead, strings.Join(rare, " "), g.word()), memory.Scope{RepoID: o.Scope.RepoID}
}

const syllables = `ka lo mi ne ru ta shi po ven dor lex qua bri sto mar fen tal gor pix zen wol cra dun
hel jor kip lum nov orb pyr quil ros sed tur umb vix wex yar zol ber cam dov`

// commonWords are frequent English and programming words, most frequent
// first; the generator's Zipf draw favours the start of the list.
const commonWords = ` the to and of a in is it that for on with this we be as at by not from or but
are have was can if will do all so an test file error config function return value user request
server database cache query token session build deploy change code fix bug issue log time run
handler service client api data type field table index update add remove check call new old
retry timeout failed passed memory context result response status version module package path
import export struct method interface string number list map key id name message event queue
job worker thread lock mutex channel stream buffer read write open close start stop load save
parse format encode decode hash sign verify auth login password permission role admin policy
rule limit rate budget cost price payment charge invoice order cart checkout customer account
email notify alert metric trace span debug warn info panic crash restart scale node cluster
region zone network port host dns tls cert proxy route path header body json yaml schema table
column row migration backup restore snapshot replica primary leader follower vote commit merge
branch rebase review approve reject comment issue ticket sprint release tag rollback hotfix
refactor rename extract inline cleanup lint format vet race leak profile benchmark latency `

// Words returns between min and max words drawn from the vocabulary (the
// same Zipf draw observations use), joined by spaces. Calling it advances
// the generator, so later observations differ from a run that did not.
func (g *Generator) Words(min, max int) string { return g.words(min, max) }

// Ident returns a camel-case identifier made of two vocabulary words.
func (g *Generator) Ident() string { return g.ident() }

// Path returns a Go source path made of vocabulary words.
func (g *Generator) Path() string { return g.path() }
