package synth_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/synth"
)

// ops are the memories the fabrications were tried on.
var ops = []synth.Source{
	{ID: "m-1", Type: "thought", Text: "Omar approved the release on Friday. The migration failed twice and was rolled back."},
	{ID: "m-2", Type: "thought", Text: "The API runs on Kubernetes and the batch jobs run on Nomad."},
	{ID: "m-3", Type: "thought", Text: "The cache invalidates the queue when a deploy finishes. The endpoint is private."},
	{ID: "m-4", Type: "thought", Text: "payments-api: orders are stored in postgres. Backups are kept for 30 days in S3."},
	{ID: "m-5", Type: "thought", Text: "billing: retries are capped at five. The outage happened because the certificate expired."},
	{ID: "m-6", Type: "thought", Text: "Omar migrated the database to the new cluster last week."},
}

// cite cites every sentence of every source, as a model citing real
// sources would: the fabrication must be caught by what the claim says,
// not by what it cites.
func citeAll() []synth.Citation {
	var out []synth.Citation
	for _, s := range ops {
		for _, sent := range strings.SplitAfter(s.Text, ". ") {
			out = append(out, synth.Citation{SourceID: s.ID, Span: strings.TrimSpace(sent)})
		}
	}
	return out
}

// Each claim alone, citing real sources: the fabrications the issue
// found accepted are refused, their faithful twins accepted.
func TestVerifierChecksWhoDidWhat(t *testing.T) {
	v := synth.Verifier{MinSources: 1, MinCoverage: 1}
	for _, tc := range []struct {
		claim     string
		supported bool
	}{
		{"Omar approved the release on Friday.", true},
		{"Priya approved the release on Friday.", false}, // a name swapped at the start
		{"The API runs on Kubernetes.", true},
		{"The batch jobs run on Nomad.", true},
		{"The API runs on Nomad and the batch jobs on Kubernetes.", false}, // two of a kind exchanged
		{"The API runs on Nomad.", false},
		{"The cache invalidates the queue when a deploy finishes.", true},
		{"The queue invalidates the cache when a deploy finishes.", false}, // subject and object swapped
		{"The migration succeeded twice.", false},                          // an antonym
		{"The migration failed twice.", true},
		{"The endpoint is public.", false},
		{"The endpoint is private.", true},
		{"Orders are stored in dynamodb.", false}, // a lower-case product substituted
		{"Orders are stored in postgres.", true},
		{"Backups are kept for 30 days in S3, encrypted with a customer-managed key.", false}, // a quote with an invented tail
		{"Backups are kept for 30 days in S3.", true},
		{"The database was migrated by Omar to the new cluster.", true}, // the passive undone
		{"Omar was migrated by the database.", false},
		{"The certificate expired because the outage happened.", false}, // cause and effect reversed
		{"The outage happened because the certificate expired.", true},
		{"billing: retries are capped at five.", true},
		{"payments-api: retries are capped at five.", false}, // moved under another label
	} {
		res := v.Check(context.Background(), synth.Draft{Answer: tc.claim, Sources: citeAll()}, ops)
		if len(res.Claims) != 1 {
			t.Errorf("%q: %d claims", tc.claim, len(res.Claims))
			continue
		}
		if c := res.Claims[0]; c.Supported != tc.supported {
			t.Errorf("%q: supported %v, want %v (score %.2f, %s)", tc.claim, c.Supported, tc.supported, c.Score, c.Reason)
		}
	}
}

// More of who did what, on memories written for the check: the people,
// places, times and things of one memory exchanged with another's, or
// given to the wrong one.
func TestVerifierRefusesMovedDetails(t *testing.T) {
	src := []synth.Source{
		{ID: "a", Text: "Maria volunteers at the homeless shelter every Sunday. She donated her old car to it last month."},
		{ID: "b", Text: "John: We went to a homeless shelter to give out food and supplies. We also organized a toy drive for kids in need."},
		{ID: "c", Text: "The release was delayed because the tests failed. Omar approved the hotfix on Monday."},
		{ID: "d", Text: "Priya moved from Berlin to Lisbon in 2021. She works remotely for a bank in Zurich."},
		{ID: "e", Text: "The backup job runs at 02:00 and copies the database to S3. The restore script reads from Glacier."},
		{ID: "f", Text: "Lena: My sister lives in Oslo and my brother lives in Bergen. I visit them every summer."},
	}
	var cites []synth.Citation
	for _, s := range src {
		cites = append(cites, synth.Citation{SourceID: s.ID, Span: s.Text[:20]})
	}
	for _, claim := range []string{
		"John volunteers at the homeless shelter every Sunday.",
		"John and Maria volunteered at the homeless shelter.",
		"Maria donated her new car to the shelter last month.",
		"The tests failed because the release was delayed.",
		"Omar rejected the hotfix on Monday.",
		"Omar reviewed the hotfix on Monday.",
		"Omar approved the release on Monday.",
		"Priya moved from Lisbon to Berlin in 2021.",
		"Priya works remotely for a bank in Berlin.",
		"She works for a bank in Lisbon.",
		"The backup job copies the database to Glacier.",
		"The restore script reads from S3.",
		"The backup job runs at 03:00.",
		"Lena's brother lives in Oslo.",
		"Lena's sister lives in Bergen.",
		"Lena visits them every winter.",
		"Maria donated her old car to John last month.",
		"We organized a toy drive for the shelter.",
		"John organized a food drive for kids in need.",
		"Priya moved to Zurich in 2021.",
		"The hotfix was approved by Priya on Monday.",
		"The database copies the backup job to S3.",
	} {
		res := synth.Verifier{MinSources: 1, MinCoverage: 1}.Check(context.Background(), synth.Draft{Answer: claim, Sources: cites}, src)
		if len(res.Claims) == 1 && res.Claims[0].Supported {
			t.Errorf("accepted %q", claim)
		}
	}
}

// Comparisons, passives with their agents, relative clauses and lists:
// the fabrications are refused, the faithful claims accepted.
func TestVerifierReadsStructure(t *testing.T) {
	src := []synth.Source{
		{ID: "a", Text: "The new scheduler is faster than the old one. It was written by Ana in 2022."},
		{ID: "b", Text: "Tom: I sold my bike to Ben last week. He paid 300 euros for it."},
		{ID: "c", Text: "The payments team owns the ledger service. The search team owns the indexer."},
		{ID: "d", Text: "Kafka replaced RabbitMQ as the message bus in March. The migration took two weeks."},
		{ID: "e", Text: "Sara is the manager of Ivan. Ivan mentors the interns."},
		{ID: "f", Text: "The API gateway forwards requests to the auth service, which checks the token."},
		{ID: "g", Text: "Rust, Go and Python are used in the backend. The frontend is written in TypeScript."},
	}
	var cites []synth.Citation
	for _, s := range src {
		cites = append(cites, synth.Citation{SourceID: s.ID, Span: s.Text[:15]})
	}
	bad := []string{
		"The old scheduler is faster than the new one.",
		"The new scheduler was written by Ana in 2021.",
		"Ana wrote the old scheduler.",
		"Ben sold his bike to Tom last week.",
		"Tom paid 300 euros for the bike.",
		"Tom sold his car to Ben last week.",
		"The search team owns the ledger service.",
		"The payments team owns the indexer.",
		"RabbitMQ replaced Kafka as the message bus in March.",
		"The migration took two months.",
		"Ivan is the manager of Sara.",
		"Sara mentors the interns.",
		"The auth service forwards requests to the API gateway.",
		"The API gateway checks the token.",
		"The frontend is written in Go.",
		"Rust, Go and TypeScript are used in the backend.",
		"The backend is written in TypeScript.",
	}
	good := []string{
		"The new scheduler is faster than the old one.",
		"Ana wrote the new scheduler in 2022.",
		"Tom sold his bike to Ben last week.",
		"The payments team owns the ledger service and the search team owns the indexer.",
		"Kafka replaced RabbitMQ as the message bus in March.",
		"Ivan mentors the interns.",
		"The auth service checks the token.",
		"Go and Python are used in the backend.",
	}
	v := synth.Verifier{MinSources: 1, MinCoverage: 1}
	for _, claim := range bad {
		res := v.Check(context.Background(), synth.Draft{Answer: claim, Sources: cites}, src)
		if len(res.Claims) == 1 && res.Claims[0].Supported {
			t.Errorf("accepted %q", claim)
		}
	}
	for _, claim := range good {
		res := v.Check(context.Background(), synth.Draft{Answer: claim, Sources: cites}, src)
		if len(res.Claims) != 1 || !res.Claims[0].Supported {
			t.Errorf("refused %q (%+v)", claim, res.Claims)
		}
	}
}

// A claim may rest on two or three sentences of a source in a row, the
// others adding only a preposition's object to the sentence that says
// who did what; a cause may be said with "caused by"; what a source only
// wants or plans is not done.
func TestVerifierReadsAcrossSentences(t *testing.T) {
	src := []synth.Source{
		{ID: "h", Text: "Dave: I attended a car show last weekend. It was like a paradise! They had so many classic cars on display."},
		{ID: "i", Text: "The outage was caused by an expired certificate. The fix took an hour."},
		{ID: "j", Text: "Nina: I want to open a bakery next year. I've been baking bread since I was a kid."},
	}
	var cites []synth.Citation
	for _, s := range src {
		cites = append(cites, synth.Citation{SourceID: s.ID, Span: s.Text[:15]})
	}
	for _, tc := range []struct {
		claim     string
		supported bool
	}{
		{"Dave attended a car show with many classic cars.", true},
		{"Dave attended a car show last weekend.", true},
		{"Dave attended a classic car show.", false}, // "classic" is said of the cars, in another sentence
		{"An expired certificate caused the outage.", true},
		{"The outage caused an expired certificate.", false},
		{"The certificate expired because of the outage.", false},
		{"The fix took an hour.", true},
		{"The outage took an hour.", false},
		{"Nina wants to open a bakery next year.", true},
		{"Nina plans to open a bakery next year.", true},
		{"Nina opened a bakery.", false},
		{"Nina has opened a bakery.", false},
		{"Nina is opening a bakery next year.", false},
		{"Nina has been baking bread since she was a kid.", true},
		{"Nina has been baking cakes since she was a kid.", false},
	} {
		res := synth.Verifier{MinSources: 1, MinCoverage: 1}.Check(context.Background(), synth.Draft{Answer: tc.claim, Sources: cites}, src)
		if len(res.Claims) != 1 {
			t.Errorf("%q: %d claims", tc.claim, len(res.Claims))
			continue
		}
		if c := res.Claims[0]; c.Supported != tc.supported {
			t.Errorf("%q: supported %v, want %v (%s)", tc.claim, c.Supported, tc.supported, c.Reason)
		}
	}
}

// A modifier goes with the noun it modifies in the source, the source's
// verb is the claim's, and a word the sources use as a name is a name at
// the start of a claim too.
func TestVerifierReadsNounPhrases(t *testing.T) {
	src := []synth.Source{
		{ID: "a", Text: "Caroline: I went to a LGBTQ support group yesterday and it was so powerful."},
		{ID: "b", Text: "John: My old area was hit by a nasty flood last week."},
		{ID: "c", Text: "tar (1.34+dfsg-1.2+deb12u1) bookworm; urgency=medium\n\n  * Fix handling of extended header prefixes (CVE-2023-39804)\n\n" +
			" -- Salvatore Bonaccorso <carnil@debian.org>  Sat, 20 Jan 2024 10:27:07 +0100"},
		{ID: "d", Text: "James: I've been playing my favourite game called Apex Legends with my team."},
		{ID: "e", Text: "John: Nice one, James! I bought a new laptop with a huge screen."},
	}
	var cites []synth.Citation
	for _, s := range src {
		cites = append(cites, synth.Citation{SourceID: s.ID, Span: s.Text[:12]})
	}
	for _, tc := range []struct {
		claim     string
		supported bool
	}{
		{"Caroline went to a LGBTQ support group yesterday.", true},
		{"Caroline went to a LGBTQ powerful group yesterday.", false}, // "powerful" said of the visit, not of the group
		{"John's old area was hit by a nasty flood last week.", true},
		{"John's old week was hit by a nasty flood last area.", false},
		{"tar 1.34+dfsg-1.2+deb12u1 fixes the extended header prefix handling.", true}, // "handling of ... prefixes"
		{"John bought a new laptop with a huge screen.", true},
		{"John bought a huge laptop with a new screen.", false},
		{"James plays his favourite game Apex Legends with his team.", true}, // "James" opens the claim, and is a name
		{"Salvatore Bonaccorso fixed the bookworm header.", false},           // a word of the entry's heading is not what it fixes
		{"John bought a new laptop.", true},
		{"John laptop a new bought.", false}, // the source's verb stands as a noun, the claim has none
	} {
		res := synth.Verifier{MinSources: 1, MinCoverage: 1}.Check(context.Background(), synth.Draft{Answer: tc.claim, Sources: cites}, src)
		if got := len(res.Claims) == 1 && res.Claims[0].Supported; got != tc.supported {
			t.Errorf("%q: supported %v, want %v (%+v)", tc.claim, got, tc.supported, res.Claims)
		}
	}
}

// A light verb that heads no clause ("using") may be left out by the
// source, an adverb WordNet does not know ("canonically") is no noun, and
// a noun may stand for its adjective ("diet" for "dietary").
func TestVerifierLightVerbsAndAdverbs(t *testing.T) {
	src := []synth.Source{
		{ID: "a", Text: "The examples cover hybrid search with Ollama (Reciprocal Rank Fusion)."},
		{ID: "b", Text: "ULID: Canonically encoded as a 26 character string"},
		{ID: "c", Text: "Evan: I made some dietary changes, like cutting down on sugary snacks."},
	}
	cites := []synth.Citation{{SourceID: "a", Span: "hybrid search with Ollama"}, {SourceID: "b", Span: "Canonically encoded"},
		{SourceID: "c", Span: "I made some dietary changes"}}
	for claim, want := range map[string]bool{
		"One example does hybrid search with Ollama using Reciprocal Rank Fusion.":     true,
		"One example does hybrid search with Ollama replacing Reciprocal Rank Fusion.": false, // "replacing" is no light verb
		"A ULID is canonically encoded as a 26 character string.":                      true,
	} {
		res := synth.Verifier{MinSources: 1, MinCoverage: 1}.Check(context.Background(), synth.Draft{Answer: claim, Sources: cites}, src)
		if got := len(res.Claims) == 1 && res.Claims[0].Supported; got != want {
			t.Errorf("%q: supported %v, want %v (%+v)", claim, got, want, res.Claims)
		}
	}
}
