// Package isotest is the isolation model the faces' tests share: a random
// store written through the engine (observations, capsules with summaries,
// pins, thoughts private or not, some marked for removal, some forgotten,
// forgotten observations), random questions of every kind that reads it
// (retrieve with either provider, inner_voice_retrieve, thoughts_list,
// inner_voice), and the checks every answer must pass: nothing outside the
// requested scope, no private thought without include_private, no thought
// marked for removal or forgotten, no forgotten observation (a pin on one
// only with includeRedacted), and no word that only a forgotten record or
// a private thought holds.
//
// Each face's test (the engine, HTTP and MCP in the root package, the
// command line in cmd/cairn, each on SQLite and PostgreSQL) asks the same
// questions its own way and hands the JSON answer to the checks.
package isotest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// The tools a Question asks.
const (
	ToolRetrieve   = "retrieve"
	ToolInnerVoice = "inner_voice_retrieve"
	ToolThoughts   = "thoughts_list"
	ToolAsk        = "inner_voice"
)

// Words are the words the store's texts are made of.
var Words = []string{"deploy", "token", "schema", "cache", "retry", "parser", "login", "billing",
	"staging", "migration", "timeout", "webhook", "invoice", "postgres", "redis", "queue"}

// Store is what a random store holds, as the tests' oracle.
type Store struct {
	Obs       map[string]memory.Observation
	Forgotten map[string]bool
	Thoughts  map[string]memory.Thought
	// Removed holds thoughts marked for removal or forgotten.
	Removed map[string]bool
	// Erased are words only forgotten observations and thoughts held:
	// never in any answer. Private are words only private thoughts hold:
	// in an answer only when private thoughts were asked for.
	Erased, Private map[string]bool
}

// Scope is a random scope, each key set three times in four.
func Scope(rng *rand.Rand) memory.Scope {
	pick := func(prefix string, n int) string {
		if rng.IntN(4) == 0 {
			return ""
		}
		return fmt.Sprintf("%s%d", prefix, rng.IntN(n))
	}
	return memory.Scope{SessionID: pick("s", 4), RepoID: pick("r", 3), AgentID: pick("a", 2), UserID: pick("u", 2)}
}

// Text is 4 to 9 random words, and extra.
func Text(rng *rand.Rand, extra string) string {
	var ws []string
	for range 4 + rng.IntN(6) {
		ws = append(ws, Words[rng.IntN(len(Words))])
	}
	if extra != "" {
		ws = append(ws, extra)
	}
	return strings.Join(ws, " ")
}

// Within reports whether a record's scope r meets the request's s: every
// key s gives must match exactly.
func Within(r, s memory.Scope) bool {
	return (s.SessionID == "" || r.SessionID == s.SessionID) && (s.RepoID == "" || r.RepoID == s.RepoID) &&
		(s.AgentID == "" || r.AgentID == s.AgentID) && (s.UserID == "" || r.UserID == s.UserID)
}

// Build writes a random store through eng.
func Build(t testing.TB, eng *cairn.Engine, rng *rand.Rand) *Store {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	st := &Store{Obs: map[string]memory.Observation{}, Forgotten: map[string]bool{}, Thoughts: map[string]memory.Thought{},
		Removed: map[string]bool{}, Erased: map[string]bool{}, Private: map[string]bool{}}
	var ids []string
	for i := range 60 + rng.IntN(60) {
		o, err := eng.Log(ctx, cairn.LogRequest{Kind: "message", Content: Text(rng, ""), ScopeIDs: Scope(rng)})
		must(err)
		st.Obs[o.ID] = o
		ids = append(ids, o.ID)
		if i%9 == 4 {
			// A capsule with a summary, in a scope of its own.
			c, err := eng.OpenCapsule(ctx, cairn.OpenCapsuleRequest{Type: "session", Intent: Text(rng, ""), ScopeIDs: Scope(rng)})
			must(err)
			_, err = eng.Log(ctx, cairn.LogRequest{Kind: "message", Content: Text(rng, ""), CapsuleID: c.ID, ScopeIDs: c.Scope})
			must(err)
			_, err = eng.CloseCapsule(ctx, cairn.CloseCapsuleRequest{CapsuleID: c.ID, Summary: &cairn.SummaryInput{Content: Text(rng, "")}})
			must(err)
		}
	}
	// Forget some observations, each holding a secret word of its own.
	for i := range 8 {
		secret := fmt.Sprintf("zqsecret%dx%d", rng.IntN(1000), i)
		o, err := eng.Log(ctx, cairn.LogRequest{Kind: "message", Content: Text(rng, secret), ScopeIDs: Scope(rng)})
		must(err)
		if i%2 == 0 {
			// A pin on it, which may be returned only with includeRedacted.
			_, err := eng.Pin(ctx, cairn.PinRequest{TargetType: memory.TargetObservation, TargetID: o.ID})
			must(err)
		}
		_, err = eng.Forget(ctx, o.ID)
		must(err)
		st.Forgotten[o.ID] = true
		st.Erased[secret] = true
	}
	for range 6 {
		id, scope := ids[rng.IntN(len(ids))], Scope(rng)
		_, err := eng.Pin(ctx, cairn.PinRequest{TargetType: memory.TargetObservation, TargetID: id, ScopeIDs: &scope})
		must(err)
	}
	for i := range 30 {
		private := rng.IntN(3) == 0
		extra := ""
		if private {
			extra = fmt.Sprintf("zqprivate%dx%d", rng.IntN(1000), i)
			st.Private[extra] = true
		}
		th, err := eng.Think(ctx, cairn.ThinkRequest{Content: Text(rng, extra), IsPrivate: private, ScopeIDs: Scope(rng)})
		must(err)
		st.Thoughts[th.ID] = th
		switch rng.IntN(6) {
		case 0:
			// Marked for removal: never retrieved, its text kept.
			th, err = eng.MarkThought(ctx, cairn.MarkThoughtRequest{ThoughtID: th.ID, Status: memory.StatusRemoval})
			must(err)
			st.Removed[th.ID] = true
		case 1:
			marker := fmt.Sprintf("zqforgot%dx%d", rng.IntN(1000), i)
			th, err = eng.Think(ctx, cairn.ThinkRequest{Content: Text(rng, marker), IsPrivate: rng.IntN(3) == 0, ScopeIDs: Scope(rng)})
			must(err)
			th, err = eng.ForgetThought(ctx, th.ID)
			must(err)
			st.Erased[marker] = true
			st.Removed[th.ID] = true
		}
		st.Thoughts[th.ID] = th
	}
	return st
}

// query is a random question, asking now and then for secrets by their
// words.
func (st *Store) query(rng *rand.Rand) string {
	q := Text(rng, "")
	if rng.IntN(2) == 0 {
		for _, m := range []map[string]bool{st.Erased, st.Private} {
			for s := range m {
				if rng.IntN(3) == 0 {
					q += " " + s
				}
			}
		}
	}
	return q
}

// Question is one random question for each tool.
type Question struct {
	Retrieve   cairn.RetrieveRequest
	InnerVoice retrieve.InnerVoiceRequest
	Thoughts   cairn.ThoughtsRequest
	// Ask writes nothing: no saved thought, no session.
	Ask cairn.AskRequest
}

// Question draws the next question.
func (st *Store) Question(rng *rand.Rand) Question {
	var q Question
	scope := Scope(rng)
	if rng.IntN(5) == 0 {
		scope = memory.Scope{}
	}
	n := 1000
	q.Retrieve = cairn.RetrieveRequest{Query: st.query(rng), ScopeIDs: scope, MaxCandidates: &n, IncludeRedacted: rng.IntN(3) == 0,
		Provider: []string{retrieve.HybridName, retrieve.LocalFTSName}[rng.IntN(2)]}
	topK := 50
	q.InnerVoice = retrieve.InnerVoiceRequest{Query: st.query(rng), TopK: &topK, IncludePrivate: rng.IntN(3) == 0}
	q.Thoughts = cairn.ThoughtsRequest{ScopeIDs: Scope(rng), IncludePrivate: rng.IntN(2) == 0, Limit: 1000}
	askK, thresh, save := 5+rng.IntN(20), []float64{0, 0.2, 0.4}[rng.IntN(3)], false
	q.Ask = cairn.AskRequest{Content: st.query(rng), TopK: &askK, SimThresh: &thresh, Save: &save, Mode: "none", IncludePrivate: rng.IntN(3) == 0}
	return q
}

// Tally counts what the answers held, so that a test can tell the
// properties were exercised.
type Tally struct {
	ScopedCandidates, PrivateSnippets, RedactedPins, AskSources, PrivateAskSources int
}

// Exercised fails t when the answers held too little for the properties
// to mean anything.
func (tl Tally) Exercised(t testing.TB) {
	t.Helper()
	if tl.ScopedCandidates == 0 || tl.PrivateSnippets == 0 || tl.RedactedPins == 0 || tl.AskSources == 0 || tl.PrivateAskSources == 0 {
		t.Fatalf("the answers held %+v: the properties were not exercised", tl)
	}
	t.Logf("checked %+v", tl)
}

func decode[T any](t testing.TB, what string, raw []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: decoding %s: %v", what, Short(raw), err)
	}
	return v
}

// noWords fails when raw holds an erased word, or a private word and
// private thoughts were not asked for.
func (st *Store) noWords(t testing.TB, what string, raw []byte, privateAsked bool) {
	t.Helper()
	for s := range st.Erased {
		if bytes.Contains(raw, []byte(s)) {
			t.Fatalf("%s: the answer holds %q, written only in a forgotten record", what, s)
		}
	}
	if privateAsked {
		return
	}
	for s := range st.Private {
		if bytes.Contains(raw, []byte(s)) {
			t.Fatalf("%s: the answer holds %q, written only in a private thought", what, s)
		}
	}
}

// CheckRetrieve checks one retrieve answer.
func (st *Store) CheckRetrieve(t testing.TB, what string, req cairn.RetrieveRequest, raw []byte, tl *Tally) {
	t.Helper()
	what += " (retrieve, " + req.Provider + ")"
	res := decode[cairn.RetrieveResult](t, what, raw)
	for _, p := range res.Pins {
		if !Within(p.Pin.Scope, req.ScopeIDs) {
			t.Fatalf("%s: pin %s of scope %+v answers scope %+v", what, p.Pin.ID, p.Pin.Scope, req.ScopeIDs)
		}
		if o := p.Target.Observation; o != nil && st.Forgotten[o.ID] {
			if !req.IncludeRedacted {
				t.Fatalf("%s: the pin on forgotten %s came back without includeRedacted", what, o.ID)
			}
			tl.RedactedPins++
		}
	}
	if s := res.CurrentSummary; s != nil && !Within(s.Scope, req.ScopeIDs) {
		t.Fatalf("%s: current summary %s of scope %+v answers scope %+v", what, s.ID, s.Scope, req.ScopeIDs)
	}
	for _, c := range res.Candidates {
		switch {
		case c.Entity.Observation != nil:
			o := c.Entity.Observation
			if !Within(o.Scope, req.ScopeIDs) {
				t.Fatalf("%s: observation %s of scope %+v answers scope %+v", what, o.ID, o.Scope, req.ScopeIDs)
			}
			if st.Forgotten[o.ID] {
				t.Fatalf("%s: forgotten observation %s is a candidate", what, o.ID)
			}
		case c.Entity.Summary != nil:
			if s := c.Entity.Summary; !Within(s.Scope, req.ScopeIDs) {
				t.Fatalf("%s: summary %s of scope %+v answers scope %+v", what, s.ID, s.Scope, req.ScopeIDs)
			}
		}
	}
	if req.ScopeIDs != (memory.Scope{}) {
		tl.ScopedCandidates += len(res.Candidates)
	}
	// Provenance echoes the question (which may ask for a secret); the
	// records returned must not hold one.
	recs, _ := json.Marshal([]any{res.Pins, res.CurrentSummary, res.Candidates})
	st.noWords(t, what, recs, false)
}

// thought checks a thought an answer drew on.
func (st *Store) thought(t testing.TB, what, id string, privateAsked bool) (private bool) {
	t.Helper()
	th, ok := st.Thoughts[id]
	if !ok {
		t.Fatalf("%s: %s is no thought of the store", what, id)
	}
	if th.IsPrivate && !privateAsked {
		t.Fatalf("%s: private thought %s without include_private", what, id)
	}
	if st.Removed[id] {
		t.Fatalf("%s: thought %s, marked for removal or forgotten, was retrieved", what, id)
	}
	return th.IsPrivate
}

// CheckInnerVoice checks one inner_voice_retrieve answer.
func (st *Store) CheckInnerVoice(t testing.TB, what string, req retrieve.InnerVoiceRequest, raw []byte, tl *Tally) {
	t.Helper()
	what += " (inner_voice_retrieve)"
	res := decode[retrieve.InnerVoiceResult](t, what, raw)
	for _, s := range res.Snippets {
		if st.thought(t, what, s.ID, req.IncludePrivate) {
			tl.PrivateSnippets++
		}
	}
	snips, _ := json.Marshal(res.Snippets)
	st.noWords(t, what, snips, req.IncludePrivate)
}

// CheckThoughts checks one thoughts_list answer against the oracle: every
// thought of the scope the filter allows is listed, and no other.
func (st *Store) CheckThoughts(t testing.TB, what string, req cairn.ThoughtsRequest, raw []byte) {
	t.Helper()
	what += " (thoughts_list)"
	res := decode[cairn.ThoughtList](t, what, raw)
	for _, th := range res.Thoughts {
		if th.IsPrivate && !req.IncludePrivate {
			t.Fatalf("%s: private thought %s without include_private", what, th.ID)
		}
		if !Within(th.Scope, req.ScopeIDs) {
			t.Fatalf("%s: thought %s of scope %+v answers scope %+v", what, th.ID, th.Scope, req.ScopeIDs)
		}
	}
	want := 0
	for _, th := range st.Thoughts {
		if Within(th.Scope, req.ScopeIDs) && (!th.IsPrivate || req.IncludePrivate) {
			want++
		}
	}
	if len(res.Thoughts) != want {
		t.Fatalf("%s: thoughts lists %d, the store holds %d in scope %+v (private %v)", what, len(res.Thoughts), want, req.ScopeIDs, req.IncludePrivate)
	}
	st.noWords(t, what, raw, req.IncludePrivate)
}

// CheckAsk checks one inner_voice answer: its sources, the records its
// sentences and grounding cite, and its text.
func (st *Store) CheckAsk(t testing.TB, what string, req cairn.AskRequest, raw []byte, tl *Tally) {
	t.Helper()
	what += " (inner_voice)"
	res := decode[cairn.AskResult](t, what, raw)
	if res.SavedThoughtID != "" || res.Session != nil {
		t.Fatalf("%s: an answer asked to write nothing saved %q, session %+v", what, res.SavedThoughtID, res.Session)
	}
	for _, s := range res.Sources {
		if s.SourceType != "thought" {
			t.Fatalf("%s: source %s of type %s: the store holds only thoughts to answer from", what, s.SourceID, s.SourceType)
		}
		if st.thought(t, what, s.SourceID, req.IncludePrivate) {
			tl.PrivateAskSources++
		}
		tl.AskSources++
	}
	for _, s := range res.Sentences {
		for _, c := range s.Spans {
			st.thought(t, what, c.SourceID, req.IncludePrivate)
		}
	}
	for _, c := range res.Grounding.Sources {
		st.thought(t, what, c.SourceID, req.IncludePrivate)
	}
	// The answer, never the question (which may ask for a secret).
	ans, _ := json.Marshal([]any{res.SynthesizedAnswer, res.Sources, res.Sentences, res.Grounding})
	st.noWords(t, what, ans, req.IncludePrivate)
}

// SameJSON compares two JSON documents as values, leaving out the
// measured latencies (latency_ms, at any depth) that differ between any
// two calls.
func SameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	dropLatency(x)
	dropLatency(y)
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func dropLatency(v any) {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "latency_ms")
		for _, e := range v {
			dropLatency(e)
		}
	case []any:
		for _, e := range v {
			dropLatency(e)
		}
	}
}

// Short cuts a JSON answer for a failure message.
func Short(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}
