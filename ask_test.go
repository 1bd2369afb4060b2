package cairn_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/graph"
	"github.com/cairnhq/cairn/maintain"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
	"github.com/cairnhq/cairn/sqlite"
	"github.com/cairnhq/cairn/synth"
)

// The tests below follow the Testing Plan of the inner_voice seed (001),
// one per item, then its other promises and bad input. They use the hash
// embedder, under which texts are similar when they share words.

// askEngine opens an engine with the inner voice enabled, its archive in
// a temporary folder, and five thoughts about clock drift and the
// auth-service, plus two unrelated ones.
func askEngine(t *testing.T, opts *cairn.Options) (*cairn.Engine, []memory.Thought) {
	t.Helper()
	if opts == nil {
		opts = &cairn.Options{}
	}
	if opts.Maintenance == nil {
		opts.Maintenance = &maintain.Config{RetentionDays: 30, ArchiveDir: filepath.Join(t.TempDir(), "archive"), Format: "parquet"}
	}
	eng := openVoice(t, opts)
	return eng, seedAsk(t, eng)
}

// seedAsk writes askEngine's thoughts and returns the five about clock
// drift.
func seedAsk(t *testing.T, eng *cairn.Engine) []memory.Thought {
	t.Helper()
	var ts []memory.Thought
	for _, text := range []string{
		"Clock drift breaks session token expiry because the auth-service depends on NTP.",
		"Clock drift breaks session token expiry on the auth hosts; Alice owns auth-service.",
		"Session token expiry and clock drift: the auth-service uses Redis for session tokens.",
		"Clock drift breaks session token expiry when NTP is down.",
		"Session token expiry checks tolerate five seconds of clock drift now.",
	} {
		ts = append(ts, think(t, eng, cairn.ThinkRequest{Content: text, Origin: memory.OriginHuman, ScopeIDs: memory.Scope{RepoID: "/src/auth"}}))
	}
	think(t, eng, cairn.ThinkRequest{Content: "The billing team prefers invoices in euros."})
	think(t, eng, cairn.ThinkRequest{Content: "Lunch is at noon on Fridays."})
	return ts
}

const askQuestion = "why does clock drift break session token expiry on the auth-service?"

func ask(t *testing.T, eng *cairn.Engine, req cairn.AskRequest) cairn.AskResult {
	t.Helper()
	res, err := eng.Ask(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func sourceIDs(res cairn.AskResult) []string {
	var ids []string
	for _, s := range res.Sources {
		ids = append(ids, s.ThoughtID)
	}
	return ids
}

// Testing Plan 1: seed 5 thoughts; inner_voice with top_k=3 gives a
// synthesized answer and 3 sources.
func TestAskPlan1AnswerAndThreeSources(t *testing.T) {
	eng, seeded := askEngine(t, nil)
	res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3)})
	if res.SynthesizedAnswer == "" || len(res.Sources) != 3 {
		t.Fatalf("answer %q with %d sources; want an answer and 3", res.SynthesizedAnswer, len(res.Sources))
	}
	var seededIDs []string
	for _, th := range seeded {
		seededIDs = append(seededIDs, th.ID)
	}
	for i, s := range res.Sources {
		if !slices.Contains(seededIDs, s.ThoughtID) || s.Similarity < 0.5 || s.Excerpt == "" || s.TrustTier != "green" {
			t.Fatalf("source %+v", s)
		}
		if i > 0 && s.Similarity > res.Sources[i-1].Similarity {
			t.Fatal("sources are not ordered by similarity")
		}
	}
	// Every sentence of the answer is cited: a source and a span of its text.
	if res.Synthesizer != "extractive" || len(res.Sentences) == 0 {
		t.Fatalf("synthesizer %q, %d sentences", res.Synthesizer, len(res.Sentences))
	}
	var texts []string
	for _, s := range res.Sentences {
		c := s.Spans[0]
		th, err := eng.Thought(ctx, c.SourceID)
		if err != nil || !slices.Contains(sourceIDs(res), c.SourceID) {
			t.Fatalf("citation of %s: %v", c.SourceID, err)
		}
		span := string([]rune(th.Content)[c.Start:c.End])
		if s.Text != span && s.Text != span+"." {
			t.Fatalf("sentence %q cites %q", s.Text, span)
		}
		texts = append(texts, s.Text)
	}
	if res.SynthesizedAnswer != strings.Join(texts, " ") {
		t.Fatalf("the answer is not its sentences: %q", res.SynthesizedAnswer)
	}
	if d := res.Diagnostics; d.TopK != 3 || d.SimThresh != 0.5 || d.NoResults || d.Embedder == "" {
		t.Fatalf("diagnostics %+v", d)
	}
}

// Testing Plan 2: with save=true the summary thought exists with
// is_summary=true and summary_of holding the source ids.
func TestAskPlan2SavesASummaryThought(t *testing.T) {
	// One supporting source is enough here, so that an answer from the
	// summary alone is not refused.
	eng, _ := askEngine(t, &cairn.Options{Verifier: &synth.Verifier{MinSources: 1}})
	res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Save: ptr(true)})
	if res.SavedThoughtID == "" {
		t.Fatalf("no thought saved: %+v", res.Diagnostics)
	}
	th, err := eng.Thought(ctx, res.SavedThoughtID)
	if err != nil {
		t.Fatal(err)
	}
	if !th.IsSummary || !slices.Equal(th.SummaryOf, sourceIDs(res)) || th.Pipeline != "inner_voice" || th.Content != res.SynthesizedAnswer ||
		th.Status != "active" || th.Origin != memory.OriginTool || th.IsPrivate || th.Scope.RepoID != "/src/auth" {
		t.Fatalf("saved thought %+v", th)
	}
	// It is embedded like any thought: inner_voice_retrieve finds it.
	found := voice(t, eng, retrieve.InnerVoiceRequest{Query: res.SynthesizedAnswer, Mix: ptr(0.0), TopK: ptr(10)})
	if !slices.ContainsFunc(found.Snippets, func(s retrieve.Snippet) bool { return s.ID == th.ID && s.Score > 0.99 }) {
		t.Fatalf("the saved thought is not retrievable by meaning: %+v", found.Snippets)
	}
	// Asking again does not save the same answer twice when it repeats a
	// source word for word: the summary is now a source itself.
	again := ask(t, eng, cairn.AskRequest{Content: res.SynthesizedAnswer, TopK: ptr(1)})
	if again.SavedThoughtID != "" || !strings.Contains(again.Diagnostics.SaveSkipped, "thought "+th.ID) {
		t.Fatalf("a repeated answer was saved again: %+v", again)
	}
}

// Asking the same question again does not save the same summary again in
// another order: an answer whose every sentence is a sentence of one
// thought among its sources (an earlier summary) is not saved; and so the
// question keeps being answered, instead of the summaries crowding the
// other sources out until the answer rests on one and is refused.
func TestAskAgainDoesNotPileUpSummaries(t *testing.T) {
	eng, _ := askEngine(t, nil)
	first := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3)})
	if first.SavedThoughtID == "" || first.Refused {
		t.Fatalf("first answer: %+v", first.Diagnostics)
	}
	for i := range 3 {
		res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3)})
		if res.Refused || res.SynthesizedAnswer == "" {
			t.Fatalf("asking again (%d) was refused: %s", i+1, res.Grounding.Notes)
		}
		if res.SavedThoughtID != "" || !strings.Contains(res.Diagnostics.SaveSkipped, first.SavedThoughtID) {
			t.Fatalf("asking again (%d) saved %q (skipped: %q); the answer repeats %s", i+1, res.SavedThoughtID,
				res.Diagnostics.SaveSkipped, first.SavedThoughtID)
		}
	}
}

// A saved summary does not compete with the thoughts it summarises (the
// echo chamber the grounded specification warns of): when the summary and
// thoughts of its summary_of are among the candidates, the summary is left
// out, its place filled further down the ranking, and the answer rests on
// the originals, answered as before. A summary whose originals are gone
// is a source again.
func TestAskLeavesOutSummariesOfItsSources(t *testing.T) {
	eng, _ := askEngine(t, nil)
	before := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(2), Save: ptr(false)})
	if before.Refused {
		t.Fatalf("before any summary: %s", before.Grounding.Notes)
	}
	saved := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3)})
	summary := saved.SavedThoughtID
	if summary == "" {
		t.Fatal("no summary saved")
	}
	// The summary is the closest match to the question now.
	found := voice(t, eng, retrieve.InnerVoiceRequest{Query: askQuestion, Mix: ptr(0.0), TopK: ptr(2)})
	if len(found.Snippets) == 0 || !slices.ContainsFunc(found.Snippets, func(s retrieve.Snippet) bool { return s.ID == summary }) {
		t.Fatalf("the summary is not among the best matches: %+v", found.Snippets)
	}
	after := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(2), Save: ptr(false)})
	if after.Refused || after.SynthesizedAnswer == "" || len(after.Sources) != 2 || slices.Contains(sourceIDs(after), summary) {
		t.Fatalf("after the summary %s was saved: refused %v (%s), sources %v", summary, after.Refused, after.Grounding.Notes, sourceIDs(after))
	}
	if !slices.Equal(sourceIDs(after), sourceIDs(before)) || after.SynthesizedAnswer != before.SynthesizedAnswer {
		t.Fatalf("the answer changed: %v %q, before %v %q", sourceIDs(after), after.SynthesizedAnswer, sourceIDs(before), before.SynthesizedAnswer)
	}
	if !slices.Equal(after.Diagnostics.SummariesLeftOut, []string{summary}) ||
		!strings.Contains(strings.Join(after.Diagnostics.Notes, " "), summary+" (summarises ") {
		t.Fatalf("diagnostics %+v", after.Diagnostics)
	}
	cited := map[string]bool{}
	for _, c := range after.Grounding.Sources {
		cited[c.SourceID] = true
	}
	if len(cited) < 2 || cited[summary] || after.Grounding.CoverageRatio != 1 {
		t.Fatalf("the answer rests on %v (coverage %v)", cited, after.Grounding.CoverageRatio)
	}
	// Its originals marked for removal (no longer retrieved), the summary
	// is a source again.
	th, err := eng.Thought(ctx, summary)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Maintenance(ctx, cairn.MaintenanceRequest{Subcommand: cairn.OpMarkRemoval, ThoughtIDs: th.SummaryOf}); err != nil {
		t.Fatal(err)
	}
	alone := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(2), Save: ptr(false)})
	if !slices.Contains(sourceIDs(alone), summary) || len(alone.Diagnostics.SummariesLeftOut) != 0 {
		t.Fatalf("with its originals gone: sources %v, left out %v", sourceIDs(alone), alone.Diagnostics.SummariesLeftOut)
	}
}

// Testing Plan 3: with stage_kg=true candidates are staged with their
// source_thought_id.
func TestAskPlan3StagesCandidates(t *testing.T) {
	eng, _ := askEngine(t, nil)
	res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(5), StageKG: true, Save: ptr(false)})
	if res.Staged.PendingEntities == 0 || res.Staged.PendingRelationships == 0 {
		t.Fatalf("staged %+v", res.Staged)
	}
	list, err := eng.Candidates(ctx, cairn.CandidatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Candidates) != res.Staged.PendingEntities+res.Staged.PendingRelationships {
		t.Fatalf("%d candidates listed; staged %+v", len(list.Candidates), res.Staged)
	}
	names := map[string]bool{}
	for _, c := range list.Candidates {
		if !slices.Contains(sourceIDs(res), c.SourceThoughtID) || c.Status != "pending" || c.Confidence < 0.6 || !slices.Contains(res.Staged.CandidateIDs, c.ID) {
			t.Fatalf("candidate %+v", c)
		}
		names[strings.ToLower(c.Name+c.SourceName+"|"+c.Relation+"|"+c.TargetName)] = true
	}
	for _, want := range []string{"auth-service||", "ntp||", "redis||", "auth-service|depends_on|ntp", "auth-service|uses|redis"} {
		if !names[want] {
			t.Errorf("no candidate %q among %v", want, names)
		}
	}
	// Nothing reaches the graph before moderation.
	if ents, _ := eng.Entities(ctx, cairn.EntitiesRequest{}); len(ents.Entities) != 0 {
		t.Fatalf("staging wrote entities: %+v", ents.Entities)
	}
	// Staging again stages nothing new: the candidates are pending.
	again := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(5), StageKG: true, Save: ptr(false)})
	if again.Staged.PendingEntities != 0 || again.Staged.Skipped == 0 {
		t.Fatalf("second staging %+v", again.Staged)
	}
	// The caps and the threshold bound what is staged.
	eng2, _ := askEngine(t, nil)
	capped := ask(t, eng2, cairn.AskRequest{Content: askQuestion, StageKG: true, Save: ptr(false), MaxNodes: ptr(1), MaxEdges: ptr(0)})
	if capped.Staged.PendingEntities != 1 || capped.Staged.PendingRelationships != 0 || capped.Staged.OverCap == 0 {
		t.Fatalf("capped staging %+v", capped.Staged)
	}
	strict := ask(t, eng2, cairn.AskRequest{Content: askQuestion, StageKG: true, Save: ptr(false), ConfidenceMin: ptr(1.0)})
	if strict.Staged.PendingEntities != 0 || strict.Staged.BelowConfidence == 0 {
		t.Fatalf("staging at confidence 1 %+v", strict.Staged)
	}
}

// Testing Plan 4: with auto_mark_removal=true the sources have status
// removal.
func TestAskPlan4MarksSourcesForRemoval(t *testing.T) {
	eng, _ := askEngine(t, nil)
	res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), StageKG: true, AutoMarkRemoval: ptr(true)})
	if res.MarkedForRemoval != 3 {
		t.Fatalf("marked %d; want 3", res.MarkedForRemoval)
	}
	for _, id := range sourceIDs(res) {
		th, err := eng.Thought(ctx, id)
		if err != nil || th.Status != "removal" {
			t.Fatalf("source %s: %+v %v", id, th, err)
		}
	}
	// The summary is not marked, and the marked sources are listed for the
	// removal lifecycle with their mark time.
	if th, _ := eng.Thought(ctx, res.SavedThoughtID); th.Status != "active" {
		t.Fatalf("the summary was marked: %+v", th)
	}
	m, err := eng.Maintenance(ctx, cairn.MaintenanceRequest{Subcommand: "list_removal_candidates"})
	if err != nil || len(*m.Candidates) != 3 || (*m.Candidates)[0].MarkedAt == "" {
		t.Fatalf("removal candidates %+v %v", m, err)
	}
	// Without staging, auto_mark_removal marks nothing and says so.
	eng2, _ := askEngine(t, nil)
	res = ask(t, eng2, cairn.AskRequest{Content: askQuestion, AutoMarkRemoval: ptr(true)})
	if res.MarkedForRemoval != 0 || len(res.Diagnostics.Notes) == 0 {
		t.Fatalf("auto_mark_removal without stage_kg: %+v", res)
	}
	// SURR_AUTO_MARK_REMOVAL sets the default.
	eng3, _ := askEngine(t, &cairn.Options{Ask: &synth.AskConfig{TopK: 2, SimThresh: 0.5, DBLimit: 500, AutoMarkRemoval: true}})
	res = ask(t, eng3, cairn.AskRequest{Content: askQuestion, StageKG: true})
	if len(res.Sources) != 2 || res.MarkedForRemoval != 2 {
		t.Fatalf("with the defaults from the configuration: %d sources, %d marked", len(res.Sources), res.MarkedForRemoval)
	}
}

// auto_mark_removal marks only the sources whose knowledge was staged: a
// thought nothing was extracted from stays active, a thought whose
// candidate is pending already counts as staged, and nothing is marked
// when the answer is refused. A note says how many were marked and why
// the others were not.
func TestAskAutoMarkOnlyMarksWhatWasStaged(t *testing.T) {
	marked := func(t *testing.T, eng *cairn.Engine, ids []string) map[string]bool {
		t.Helper()
		out := map[string]bool{}
		for _, id := range ids {
			th, err := eng.Thought(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			out[id] = th.Status == memory.StatusRemoval
		}
		return out
	}
	// contributors are the thoughts among ids that state what a
	// candidate holds: their own extraction has its key (an item two
	// thoughts state is one candidate, quoting one of them).
	contributors := func(t *testing.T, eng *cairn.Engine, ids []string) map[string]bool {
		t.Helper()
		list, err := eng.Candidates(ctx, cairn.CandidatesRequest{Status: "all"})
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]bool{}
		for _, c := range list.Candidates {
			keys[string(c.Kind)+" "+c.Key()] = true
		}
		out := map[string]bool{}
		for _, id := range ids {
			th, err := eng.Thought(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			x := graph.Extract([]graph.Text{{ID: id, Content: th.Content}})
			for _, e := range x.Entities {
				out[id] = out[id] || keys[string(memory.CandidateEntity)+" "+memory.NameKey(e.Name)]
			}
			for _, g := range x.Edges {
				out[id] = out[id] || keys[string(memory.CandidateEdge)+" "+memory.EdgeKey(g.Source, g.Relation, g.Target)]
			}
			if !out[id] {
				delete(out, id)
			}
		}
		return out
	}
	eng, _ := askEngine(t, nil)
	plain := think(t, eng, cairn.ThinkRequest{Content: "why does clock drift break session token expiry? clock drift breaks session token expiry.", Origin: memory.OriginHuman})
	res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(6), SimThresh: ptr(0.3), StageKG: true, AutoMarkRemoval: ptr(true), Save: ptr(false)})
	ids := sourceIDs(res)
	if !slices.Contains(ids, plain.ID) || res.Refused {
		t.Fatalf("sources %v (refused %v); want %s among them", ids, res.Refused, plain.ID)
	}
	got, staged := marked(t, eng, ids), contributors(t, eng, ids)
	if got[plain.ID] || res.MarkedForRemoval != len(staged) || res.MarkedForRemoval == 0 {
		t.Fatalf("marked %v (%d); candidates came from %v", got, res.MarkedForRemoval, staged)
	}
	for id, m := range got {
		if m != staged[id] {
			t.Errorf("thought %s marked %v, a candidate's source %v", id, m, staged[id])
		}
	}
	note := strings.Join(res.Diagnostics.Notes, " | ")
	if !strings.Contains(note, fmt.Sprintf("marked %d of %d", res.MarkedForRemoval, len(ids))) ||
		!regexp.MustCompile(`left active: [^(]*`+plain.ID+`[^(]*\(nothing was extracted`).MatchString(note) {
		t.Fatalf("notes %q", note)
	}

	// Candidates pending already (staged by an earlier call) count: their
	// sources are marked, though this call stages nothing new.
	eng2, _ := askEngine(t, nil)
	first := ask(t, eng2, cairn.AskRequest{Content: askQuestion, TopK: ptr(5), StageKG: true, Save: ptr(false)})
	again := ask(t, eng2, cairn.AskRequest{Content: askQuestion, TopK: ptr(5), StageKG: true, AutoMarkRemoval: ptr(true), Save: ptr(false)})
	if first.Staged.PendingEntities == 0 || again.Staged.PendingEntities+again.Staged.PendingRelationships != 0 {
		t.Fatalf("staged %+v, then %+v", first.Staged, again.Staged)
	}
	if staged := contributors(t, eng2, sourceIDs(again)); again.MarkedForRemoval != len(staged) {
		t.Fatalf("marked %d; candidates pending from %d thoughts", again.MarkedForRemoval, len(staged))
	}

	// A refused answer marks nothing.
	eng3, _ := askEngine(t, &cairn.Options{Verifier: &synth.Verifier{MinSources: 10}})
	refused := ask(t, eng3, cairn.AskRequest{Content: askQuestion, TopK: ptr(5), StageKG: true, AutoMarkRemoval: ptr(true)})
	if !refused.Refused || refused.MarkedForRemoval != 0 || refused.Staged.PendingEntities == 0 {
		t.Fatalf("refused %v, marked %d, staged %+v", refused.Refused, refused.MarkedForRemoval, refused.Staged)
	}
	for id, m := range marked(t, eng3, sourceIDs(refused)) {
		if m {
			t.Fatalf("thought %s was marked though the answer was refused", id)
		}
	}
	if !strings.Contains(strings.Join(refused.Diagnostics.Notes, " "), "the answer was refused") {
		t.Fatalf("notes %q", refused.Diagnostics.Notes)
	}
}

// flakyStore fails the failAt-th write inner_voice makes (0: none).
type flakyStore struct {
	*sqlite.DB
	mu             sync.Mutex
	writes, failAt int
	failed         string
}

func (s *flakyStore) arm(failAt int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes, s.failAt, s.failed = 0, failAt, ""
}

func (s *flakyStore) disarm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAt = 0
}

func (s *flakyStore) write(op string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failAt == 0 {
		return nil
	}
	s.writes++
	if s.writes != s.failAt {
		return nil
	}
	s.failed = op
	return memory.Errorf(memory.CodeDBError, "the disk is full (injected, writing %s)", op)
}

func (s *flakyStore) AddThought(ctx context.Context, th memory.Thought) (memory.Thought, error) {
	if err := s.write("a thought"); err != nil {
		return memory.Thought{}, err
	}
	return s.DB.AddThought(ctx, th)
}

func (s *flakyStore) StageCandidates(ctx context.Context, cs []memory.KGCandidate) (memory.StageResult, error) {
	if err := s.write("candidates"); err != nil {
		return memory.StageResult{}, err
	}
	return s.DB.StageCandidates(ctx, cs)
}

func (s *flakyStore) MarkRemoval(ctx context.Context, ids []string, at int64) (int, error) {
	if err := s.write("marks"); err != nil {
		return 0, err
	}
	return s.DB.MarkRemoval(ctx, ids, at)
}

func (s *flakyStore) CreateVoiceSession(ctx context.Context, v memory.InnerVoiceSession) (memory.InnerVoiceSession, error) {
	if err := s.write("a session"); err != nil {
		return memory.InnerVoiceSession{}, err
	}
	return s.DB.CreateVoiceSession(ctx, v)
}

func (s *flakyStore) OpenVoiceSession(ctx context.Context, v memory.InnerVoiceSession, since int64) (memory.InnerVoiceSession, bool, error) {
	if err := s.write("a session"); err != nil {
		return memory.InnerVoiceSession{}, false, err
	}
	return s.DB.OpenVoiceSession(ctx, v, since)
}

func (s *flakyStore) AddVoiceExchange(ctx context.Context, x memory.InnerVoiceExchange) (memory.InnerVoiceExchange, memory.InnerVoiceSession, error) {
	if err := s.write("an exchange"); err != nil {
		return memory.InnerVoiceExchange{}, memory.InnerVoiceSession{}, err
	}
	return s.DB.AddVoiceExchange(ctx, x)
}

// A storage error part way through inner_voice leaves nothing a retry
// would duplicate: whichever write fails, a call that fails has saved no
// summary, and retrying it saves exactly one and stages each candidate
// once; a failure of a best-effort step (marking, the session) is a note.
func TestAskStorageFailureLeavesNothingToDuplicate(t *testing.T) {
	req := cairn.AskRequest{Content: askQuestion, TopK: ptr(3), StageKG: true, AutoMarkRemoval: ptr(true)}
	for failAt := 1; failAt <= 6; failAt++ {
		var flaky *flakyStore
		opts := &cairn.Options{Embedder: embed.Hash{Dim: 256}, InnerVoice: voiceOn(), Now: func() time.Time { return time.UnixMilli(1_750_000_000_000) },
			Maintenance: &maintain.Config{RetentionDays: 30, ArchiveDir: filepath.Join(t.TempDir(), "archive"), Format: "parquet"}}
		eng, err := cairn.OpenWrapped(filepath.Join(t.TempDir(), "cairn.db"), opts, func(db *sqlite.DB) memory.Store {
			flaky = &flakyStore{DB: db}
			return flaky
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { eng.Close() })
		seedAsk(t, eng)
		st, _ := eng.Stats(ctx)
		seeded := st.Thoughts
		flaky.arm(failAt)
		res, err := eng.Ask(ctx, req)
		flaky.disarm()
		thoughts := func() int {
			st, err := eng.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return st.Thoughts
		}
		if err != nil {
			if memory.CodeOf(err) != memory.CodeDBError {
				t.Fatalf("failing write %d (%s): %v", failAt, flaky.failed, err)
			}
			if n := thoughts(); n != seeded {
				t.Fatalf("failing write %d (%s): the call failed, and %d thoughts were saved", failAt, flaky.failed, n-seeded)
			}
			if res, err = eng.Ask(ctx, req); err != nil {
				t.Fatalf("retry after failing write %d: %v", failAt, err)
			}
		} else if flaky.failed != "" && !slices.ContainsFunc(res.Diagnostics.Notes, func(n string) bool {
			return strings.Contains(n, "failed") || strings.Contains(n, "not recorded")
		}) {
			t.Fatalf("failing write %d (%s) left no note: %q", failAt, flaky.failed, res.Diagnostics.Notes)
		}
		if n := thoughts(); n != seeded+1 || res.SavedThoughtID == "" {
			t.Fatalf("failing write %d (%s): %d summaries saved (this call: %q)", failAt, flaky.failed, n-seeded, res.SavedThoughtID)
		}
		list, err := eng.Candidates(ctx, cairn.CandidatesRequest{Status: "all", Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]bool{}
		for _, c := range list.Candidates {
			if keys[c.Key()] {
				t.Fatalf("failing write %d (%s): candidate %q staged twice", failAt, flaky.failed, c.Key())
			}
			keys[c.Key()] = true
		}
		if len(keys) == 0 || (flaky.failed != "marks" && res.MarkedForRemoval == 0) {
			t.Fatalf("failing write %d (%s): %d candidates, %d marked", failAt, flaky.failed, len(keys), res.MarkedForRemoval)
		}
	}
}

// fileSums hashes the database's files (the main file and its
// write-ahead log).
func fileSums(t *testing.T, path string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = sha256.Sum256(b)
	}
	return out
}

// save=false writes nothing: the database's files are byte for byte the
// same after the call (no thought, and no session exchange unless a mode
// asks for one).
func TestAskWithoutSaveLeavesTheDatabaseUnchanged(t *testing.T) {
	eng, _ := askEngine(t, nil)
	// Let the retrieval index catch up first: its files live beside the
	// database, not in it.
	ask(t, eng, cairn.AskRequest{Content: "warm up", Save: ptr(false), Mode: "none"})
	before := fileSums(t, eng.Path())
	stats, _ := eng.Stats(ctx)
	for range 3 {
		res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(5), Save: ptr(false)})
		if res.SynthesizedAnswer == "" || res.SavedThoughtID != "" {
			t.Fatalf("answer %+v", res)
		}
	}
	// auto_mark_removal without stage_kg writes nothing either.
	ask(t, eng, cairn.AskRequest{Content: askQuestion, Save: ptr(false), AutoMarkRemoval: ptr(true)})
	after := fileSums(t, eng.Path())
	if len(before) == 0 || !mapsEqual(before, after) {
		t.Fatalf("inner_voice with save=false changed the database's files")
	}
	if st, _ := eng.Stats(ctx); st.Thoughts != stats.Thoughts {
		t.Fatalf("thoughts %d → %d", stats.Thoughts, st.Thoughts)
	}
}

func mapsEqual(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestAskBadInputChangesNothing(t *testing.T) {
	eng, _ := askEngine(t, nil)
	ask(t, eng, cairn.AskRequest{Content: "warm up", Save: ptr(false)})
	before := fileSums(t, eng.Path())
	for _, tc := range []struct {
		name string
		req  cairn.AskRequest
		code memory.Code
	}{
		{"empty content", cairn.AskRequest{}, memory.CodeInvalidParams},
		{"blank content", cairn.AskRequest{Content: " \n\t "}, memory.CodeInvalidParams},
		{"NUL in content", cairn.AskRequest{Content: "a\x00b"}, memory.CodeInvalidParams},
		{"huge content", cairn.AskRequest{Content: strings.Repeat("a", 70<<10)}, memory.CodeInvalidParams},
		{"sim_thresh above 1", cairn.AskRequest{Content: "q", SimThresh: ptr(1.5)}, memory.CodeInvalidParams},
		{"sim_thresh negative", cairn.AskRequest{Content: "q", SimThresh: ptr(-0.1)}, memory.CodeInvalidParams},
		{"sim_thresh NaN", cairn.AskRequest{Content: "q", SimThresh: ptr(math.NaN())}, memory.CodeInvalidParams},
		{"confidence_min above 1", cairn.AskRequest{Content: "q", ConfidenceMin: ptr(2.0), StageKG: true}, memory.CodeInvalidParams},
		{"max_nodes negative", cairn.AskRequest{Content: "q", MaxNodes: ptr(-1), StageKG: true}, memory.CodeInvalidParams},
		{"max_edges too many", cairn.AskRequest{Content: "q", MaxEdges: ptr(5000), StageKG: true}, memory.CodeInvalidParams},
		{"bad tag", cairn.AskRequest{Content: "q", IncludeTags: []string{""}}, memory.CodeInvalidParams},
	} {
		_, err := eng.Ask(ctx, tc.req)
		if memory.CodeOf(err) != tc.code {
			t.Errorf("%s: %v; want %s", tc.name, err, tc.code)
		}
	}
	// Unknown and mistyped fields are refused by the tool's decoder.
	for _, args := range []string{`{"content":"q","bogus":1}`, `{"content":5}`, `{"content":"q","top_k":"3"}`, `{"content":"q","save":"no"}`} {
		if _, err := eng.CallJSON(ctx, "inner_voice", []byte(args)); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%s: %v; want invalid_params", args, err)
		}
	}
	if after := fileSums(t, eng.Path()); !mapsEqual(before, after) {
		t.Fatal("refused calls changed the database's files")
	}
	// top_k out of range is clamped, as the specification says, and
	// reported.
	res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(0), Save: ptr(false)})
	if len(res.Sources) != 1 || !slices.Contains(res.Diagnostics.Clamped, "top_k 0 → 1") {
		t.Fatalf("top_k 0: %d sources, clamped %v", len(res.Sources), res.Diagnostics.Clamped)
	}
	res = ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(99), Save: ptr(false)})
	if res.Diagnostics.TopK != 50 || !slices.Contains(res.Diagnostics.Clamped, "top_k 99 → 50") {
		t.Fatalf("top_k 99: %+v", res.Diagnostics)
	}
	// Disabled: feature_disabled, nothing written.
	off := openAt(t, filepath.Join(t.TempDir(), "off.db"), &cairn.Options{Embedder: embed.Hash{Dim: 64}})
	if _, err := off.Ask(ctx, cairn.AskRequest{Content: "q"}); memory.CodeOf(err) != memory.CodeFeatureDisabled ||
		!strings.Contains(err.Error(), "SURR_ENABLE_INNER_VOICE") {
		t.Fatalf("disabled inner voice: %v", err)
	}
}

// Nothing similar enough: an empty answer, no thought saved, and the
// reason.
func TestAskWithNothingAboveTheThreshold(t *testing.T) {
	eng, _ := askEngine(t, nil)
	res := ask(t, eng, cairn.AskRequest{Content: "quantum chromodynamics lattice gauge", SimThresh: ptr(0.9)})
	if res.SynthesizedAnswer != "" || res.SavedThoughtID != "" || len(res.Sources) != 0 || !res.Diagnostics.NoResults ||
		res.Diagnostics.Reason == "" || res.Diagnostics.SaveSkipped == "" {
		t.Fatalf("answer from nothing: %+v", res)
	}
	empty := openVoice(t, nil)
	res = ask(t, empty, cairn.AskRequest{Content: askQuestion})
	if res.Diagnostics.Reason != "no_thoughts" {
		t.Fatalf("empty database: %+v", res.Diagnostics)
	}
	// sim_thresh is a hard threshold: the inner voice's adaptive floor does
	// not let less similar thoughts in.
	for _, s := range ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(50), SimThresh: ptr(0.6), Save: ptr(false)}).Sources {
		if s.Similarity < 0.6 {
			t.Fatalf("source below sim_thresh: %+v", s)
		}
	}
}

// SURR_DB_LIMIT is an upper bound on the candidates retrieval compares.
func TestAskDBLimitBoundsCandidates(t *testing.T) {
	eng, _ := askEngine(t, &cairn.Options{Ask: &synth.AskConfig{TopK: 5, SimThresh: 0.1, DBLimit: 2}})
	res := ask(t, eng, cairn.AskRequest{Content: askQuestion, Save: ptr(false)})
	if res.Diagnostics.ThoughtCandidates != 2 || len(res.Sources) > 2 || len(res.Sources) == 0 {
		t.Fatalf("with SURR_DB_LIMIT=2: %d candidates, %d sources", res.Diagnostics.ThoughtCandidates, len(res.Sources))
	}
}

// Private thoughts stay out unless asked for, and an answer drawn from
// one is private.
func TestAskPrivacy(t *testing.T) {
	eng := openVoice(t, nil)
	secret := think(t, eng, cairn.ThinkRequest{Content: "The vault unseal key rotation happens on the first Monday.", IsPrivate: true})
	res := ask(t, eng, cairn.AskRequest{Content: "when does the vault unseal key rotation happen?"})
	if len(res.Sources) != 0 || res.SavedThoughtID != "" {
		t.Fatalf("a private thought answered: %+v", res)
	}
	res = ask(t, eng, cairn.AskRequest{Content: "when does the vault unseal key rotation happen?", IncludePrivate: true, Save: ptr(true)})
	if len(res.Sources) != 1 || res.Sources[0].ThoughtID != secret.ID {
		t.Fatalf("include_private: %+v", res.Sources)
	}
	// The answer repeats the one source: not saved; with a second source
	// it is, and private.
	think(t, eng, cairn.ThinkRequest{Content: "Vault unseal key rotation is announced in the ops channel.", IsPrivate: false})
	res = ask(t, eng, cairn.AskRequest{Content: "when is the vault unseal key rotation?", IncludePrivate: true, SimThresh: ptr(0.3)})
	if res.SavedThoughtID == "" {
		t.Fatalf("no summary saved: %+v", res)
	}
	if th, _ := eng.Thought(ctx, res.SavedThoughtID); !th.IsPrivate {
		t.Fatalf("a summary of a private thought is public: %+v", th)
	}
}

// The tool's results are the engine's, over the one tool table.
func TestAskOverTheToolTable(t *testing.T) {
	eng, _ := askEngine(t, nil)
	direct := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3), Save: ptr(false), Mode: "none"})
	out, err := eng.CallJSON(ctx, "inner_voice", []byte(`{"content":"`+askQuestion+`","top_k":3,"save":false,"mode":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(direct)
	b, _ := json.Marshal(out)
	// latency_ms may differ between the two calls.
	strip := func(s []byte) string {
		var m map[string]any
		json.Unmarshal(s, &m)
		delete(m["diagnostics"].(map[string]any), "latency_ms")
		delete(m["provenance"].(map[string]any), "latency_ms")
		r, _ := json.Marshal(m)
		return string(r)
	}
	if strip(a) != strip(b) {
		t.Fatalf("engine and tool differ:\n%s\n%s", a, b)
	}
	for _, key := range []string{`"synthesized_answer"`, `"sources"`, `"thought_id"`, `"similarity"`, `"excerpt"`, `"staged"`,
		`"pending_entities"`, `"pending_relationships"`, `"marked_for_removal"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("the result lacks the specification's %s", key)
		}
	}
}

func TestAskConfigFromSettings(t *testing.T) {
	s, err := cairn.SettingsFromEnv(env("SURR_TOP_K", "80", "SURR_SIM_THRESH", "0.3", "SURR_DB_LIMIT", "20", "SURR_AUTO_MARK_REMOVAL", "1",
		"SURR_RETENTION_DAYS", "7", "SURR_ARCHIVE_FORMAT", "jsonl", "SURR_ARCHIVE_DIR", "/tmp/cairn-archive"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Ask != (synth.AskConfig{TopK: 50, SimThresh: 0.3, DBLimit: 20, AutoMarkRemoval: true}) {
		t.Fatalf("ask settings %+v", s.Ask)
	}
	if s.Maintenance.RetentionDays != 7 || s.Maintenance.Format != "jsonl" || s.Maintenance.ArchiveDir != "/tmp/cairn-archive" {
		t.Fatalf("maintenance settings %+v", s.Maintenance)
	}
	if !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "SURR_TOP_K=80") }) {
		t.Fatalf("no warning for the clamped SURR_TOP_K: %v", s.Warnings)
	}
	d, err := cairn.SettingsFromEnv(env())
	if err != nil || d.Ask != synth.DefaultAskConfig() || d.Maintenance.RetentionDays != 30 || d.Maintenance.Format != "parquet" ||
		!strings.HasSuffix(d.Maintenance.ArchiveDir, "archive") {
		t.Fatalf("default settings %+v %+v %v", d.Ask, d.Maintenance, err)
	}
	if _, err := cairn.SettingsFromEnv(env("SURR_ARCHIVE_FORMAT", "xml")); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("an unknown archive format: %v", err)
	}
}

// A Go program that sets one field of Options.Ask gets the defaults for
// the others, and values out of bounds are brought within them: top_k
// is never 0.
func TestAskConfigZeroFieldsAreDefaults(t *testing.T) {
	eng, _ := askEngine(t, &cairn.Options{Ask: &synth.AskConfig{AutoMarkRemoval: true, SimThresh: 0.5}})
	res := ask(t, eng, cairn.AskRequest{Content: askQuestion, Save: ptr(false)})
	if res.Diagnostics.TopK != synth.DefaultTopK || res.Refused || len(res.Sources) < 2 {
		t.Fatalf("with Options.Ask{AutoMarkRemoval: true}: top_k %d, %d sources, refused %v", res.Diagnostics.TopK, len(res.Sources), res.Refused)
	}
	big, _ := askEngine(t, &cairn.Options{Ask: &synth.AskConfig{TopK: 500, SimThresh: math.NaN(), DBLimit: -1}})
	res = ask(t, big, cairn.AskRequest{Content: askQuestion, Save: ptr(false)})
	if res.Diagnostics.TopK != synth.MaxTopK || res.Diagnostics.SimThresh != synth.DefaultSimThresh {
		t.Fatalf("with Options.Ask{TopK: 500, SimThresh: NaN}: %+v", res.Diagnostics)
	}
}

// Another synthesiser plugs in through Options.Synthesizer: it gets the
// question and the sources' whole texts, best first; its answer goes
// through the grounding verifier like the extractive one, so an answer
// its citations do not support is refused; a refusal saves nothing.
func TestAskWithAnotherSynthesizer(t *testing.T) {
	var got []synth.Source
	behaviour := "grounded"
	fn := synth.Func(func(_ context.Context, q string, src []synth.Source) (synth.Answer, error) {
		got = src
		switch behaviour {
		case "refuse":
			return synth.Answer{Name: "test", Refused: true, Notes: "too little support", Sentences: []synth.Sentence{}}, nil
		case "ungrounded":
			return synth.Answer{Name: "test", Text: "An answer of its own.", Sentences: []synth.Sentence{
				{Text: "An answer of its own.", Spans: []synth.Span{{SourceID: src[0].ID, Start: 0, End: 5}}}}}, nil
		}
		// The first sentence of each of the first two sources, cited.
		var ans synth.Answer
		ans.Name = "test"
		for _, s := range src[:2] {
			end := strings.Index(s.Text, ".") + 1
			sent := s.Text[:end]
			ans.Sentences = append(ans.Sentences, synth.Sentence{Text: sent, Spans: []synth.Span{{SourceID: s.ID, Start: 0, End: len([]rune(sent))}}})
			ans.Text = strings.TrimSpace(ans.Text + " " + sent)
		}
		return ans, nil
	})
	eng, seeded := askEngine(t, &cairn.Options{Synthesizer: fn})
	res := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3)})
	if res.Synthesizer != "test" || res.Refused || res.Grounding.CoverageRatio != 1 || res.SavedThoughtID == "" || len(got) != 3 {
		t.Fatalf("answer %+v from %d sources", res, len(got))
	}
	if got[0].Type != "thought" || got[0].Relevance < got[1].Relevance || !slices.ContainsFunc(seeded, func(th memory.Thought) bool { return th.Content == got[0].Text }) {
		t.Fatalf("sources handed over %+v", got)
	}
	behaviour = "ungrounded"
	res = ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3)})
	if !res.Refused || res.SynthesizedAnswer != "" || res.SavedThoughtID != "" || !res.Grounding.Refused ||
		res.Grounding.Answer != synth.RefusalText || !strings.Contains(res.Grounding.Notes, "Required sources 2") {
		t.Fatalf("an ungrounded answer: %+v", res)
	}
	behaviour = "refuse"
	res = ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(3)})
	if !res.Refused || res.SynthesizedAnswer != "" || res.SavedThoughtID != "" || !strings.Contains(res.Diagnostics.SaveSkipped, "refused") ||
		res.Grounding.Notes != "too little support" {
		t.Fatalf("refusal %+v", res)
	}
}

// With the embedder down, inner_voice answers from words rather than
// failing: the SURR_DB_LIMIT most recent thoughts (and graph records)
// the filters allow are scored by the question's words, the result says
// degraded, and the answer is grounded and saved (its vector pending).
// A matching thought older than the pool is not found; private and
// removed ones are left out as always. inner_voice_retrieve still fails
// with embedder_unavailable.
func TestAskAnswersByWordsWhenTheEmbedderIsDown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	var mu sync.Mutex
	tick := time.UnixMilli(1_700_000_000_000)
	clock := func() time.Time { // a second per reading: every thought is newer than the last
		mu.Lock()
		defer mu.Unlock()
		tick = tick.Add(time.Second)
		return tick
	}
	ask := &synth.AskConfig{TopK: 5, SimThresh: 0.5, DBLimit: 4}
	up := openAt(t, path, &cairn.Options{Embedder: embed.Hash{Dim: 64}, InnerVoice: voiceOn(), Now: clock, Ask: ask})
	oldest := think(t, up, cairn.ThinkRequest{Content: "The albatross migration script timed out on the replica."})
	b := think(t, up, cairn.ThinkRequest{Content: "The albatross migration needs a longer statement timeout."})
	c := think(t, up, cairn.ThinkRequest{Content: "The albatross migration finished once the timeout was raised to 900 seconds."})
	think(t, up, cairn.ThinkRequest{Content: "Albatross migration timeout credentials rotate weekly.", IsPrivate: true})
	think(t, up, cairn.ThinkRequest{Content: "Lunch is at noon on Fridays."})
	removed := think(t, up, cairn.ThinkRequest{Content: "The albatross migration timeout rollback plan."})
	if _, err := up.MarkThought(ctx, cairn.MarkThoughtRequest{ThoughtID: removed.ID, Status: memory.StatusRemoval}); err != nil {
		t.Fatal(err)
	}
	think(t, up, cairn.ThinkRequest{Content: "Deploys happen on Tuesdays."})
	up.Close()

	down := openAt(t, path, &cairn.Options{Embedder: failing{embed.Hash{Dim: 64}}, InnerVoice: voiceOn(), Now: clock, Ask: ask})
	if _, err := down.InnerVoice(ctx, retrieve.InnerVoiceRequest{Query: "albatross migration timeout"}); memory.CodeOf(err) != memory.CodeEmbedderUnavailable {
		t.Fatalf("inner_voice_retrieve: %v; want embedder_unavailable", err)
	}
	res, err := down.Ask(ctx, cairn.AskRequest{Content: "albatross migration timeout"})
	if err != nil {
		t.Fatalf("inner_voice with the embedder down: %v; want an answer from words", err)
	}
	d := res.Diagnostics
	if d.Degraded != string(memory.CodeEmbedderUnavailable) || d.WordPool != 4 {
		t.Fatalf("diagnostics %+v; want degraded embedder_unavailable over a pool of the 4 most recent thoughts", d)
	}
	var got []string
	for _, s := range res.Sources {
		got = append(got, s.ThoughtID)
		if s.Similarity < 0.5 || s.Similarity > 1 {
			t.Errorf("source %s scored %v by words; want within [sim_thresh, 1]", s.ThoughtID, s.Similarity)
		}
	}
	slices.Sort(got)
	want := []string{b.ID, c.ID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("sources %v; want the two matching thoughts in the pool %v (not %s, older than the pool, nor the private or removed ones)", got, want, oldest.ID)
	}
	if res.Refused || res.SynthesizedAnswer == "" || res.Grounding.CoverageRatio != 1 || res.SavedThoughtID == "" {
		t.Fatalf("answer %q refused %v coverage %v saved %q; want a grounded, saved answer", res.SynthesizedAnswer, res.Refused,
			res.Grounding.CoverageRatio, res.SavedThoughtID)
	}
	if !slices.ContainsFunc(d.Notes, func(n string) bool { return strings.Contains(n, "found by words") }) {
		t.Errorf("notes %q; want one saying the sources were found by words", d.Notes)
	}
	if vs := vectorStatus(t, down); vs.Pending != 1 {
		t.Errorf("vectors %+v; want the saved answer stored and pending", vs)
	}
	// The same over the tool table, as MCP, HTTP and the CLI call it.
	out, err := down.CallJSON(ctx, "inner_voice", []byte(`{"content":"albatross migration timeout","save":false}`))
	if err != nil {
		t.Fatalf("inner_voice over the tool table: %v", err)
	}
	j, _ := json.Marshal(out)
	if !strings.Contains(string(j), `"degraded":"embedder_unavailable"`) || strings.Contains(string(j), "secret-host") {
		t.Errorf("tool result %s; want degraded embedder_unavailable and nothing of the embedder's error", j)
	}
	// A question none of the pool's words answer: no sources, no error.
	res, err = down.Ask(ctx, cairn.AskRequest{Content: "kubernetes autoscaler", Save: new(false)})
	if err != nil || len(res.Sources) != 0 || !res.Diagnostics.NoResults || res.Diagnostics.Degraded == "" {
		t.Fatalf("a question no word answers: %+v %v; want no sources, degraded", res.Diagnostics, err)
	}
}

// diagnostics.below_threshold counts the top_k most similar records that
// scored under sim_thresh (none of which is a source), and
// diagnostics.deduped names each record deduplication left out with the
// copy kept: a thought whose fact the graph holds, when the context draws
// on both pools; with context thoughts the thought itself is the source.
func TestAskDiagnosticsCountWhatTheyName(t *testing.T) {
	eng, _ := askEngine(t, nil)
	const k = 4
	all := ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(k), SimThresh: ptr(0.0), Save: ptr(false), Mode: "none"})
	if len(all.Sources) != k || all.Diagnostics.BelowThreshold != 0 {
		t.Fatalf("sim_thresh 0: %d sources, below_threshold %d", len(all.Sources), all.Diagnostics.BelowThreshold)
	}
	sims := make([]float64, k)
	for i, s := range all.Sources {
		sims[i] = s.Similarity
	}
	slices.Sort(sims)
	for _, thresh := range []float64{sims[0], (sims[0] + sims[1]) / 2, (sims[1] + sims[2]) / 2, sims[k-1] + 0.001} {
		want := 0
		for _, s := range sims {
			if s < thresh {
				want++
			}
		}
		res, err := eng.Ask(ctx, cairn.AskRequest{Content: askQuestion, TopK: ptr(k), SimThresh: ptr(thresh), Save: ptr(false), Mode: "none"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Diagnostics.BelowThreshold != want || len(res.Sources) != k-want {
			t.Errorf("sim_thresh %.4f: below_threshold %d, %d sources; want %d under it of the top %d (similarities %v)",
				thresh, res.Diagnostics.BelowThreshold, len(res.Sources), want, k, sims)
		}
	}

	const fact = "The billing-service uses PostgreSQL 15 for invoices."
	th := think(t, eng, cairn.ThinkRequest{Content: fact, Origin: memory.OriginHuman})
	obs := observe(t, eng, entity(t, eng, "billing-service", "service").ID, fact)
	q := "what database does the billing-service use for invoices?"
	for _, tc := range []struct {
		context string
		deduped []retrieve.DedupedItem
		source  string
	}{
		{"kg+thoughts", []retrieve.DedupedItem{{Table: "thoughts", ID: th.ID, KeptTable: "kg_observations", KeptID: obs.ID}}, obs.ID},
		{"thoughts", nil, th.ID},
	} {
		res := ask(t, eng, cairn.AskRequest{Content: q, Context: tc.context, SimThresh: ptr(0.2), Save: ptr(false), Mode: "none"})
		if !slices.Equal(res.Diagnostics.Deduped, tc.deduped) || !slices.ContainsFunc(res.Sources, func(s cairn.AskSource) bool { return s.SourceID == tc.source }) {
			t.Errorf("context %s: deduped %+v, sources %v; want deduped %+v and %s among the sources", tc.context, res.Diagnostics.Deduped, res.Sources, tc.deduped, tc.source)
		}
	}
}

// auto_mark_removal marks every source thought that states what was
// staged, a thought whose entities and edge merged into another
// thought's candidates included, and leaves active a source nothing was
// extracted from.
func TestAskAutoMarkMarksEveryContributingSource(t *testing.T) {
	eng := openVoice(t, nil)
	var ids []string
	for _, text := range []string{
		"The auth-service uses Redis for session tokens.",
		"Session tokens: the auth-service uses Redis.",
		"Alice owns the auth-service, which uses Redis for session tokens.",
		"session tokens expire after an hour and are renewed on use.",
	} {
		ids = append(ids, think(t, eng, cairn.ThinkRequest{Content: text, Origin: memory.OriginHuman}).ID)
	}
	res := ask(t, eng, cairn.AskRequest{Content: "what does the auth-service use for session tokens?", TopK: ptr(5), SimThresh: ptr(0.2),
		StageKG: true, AutoMarkRemoval: ptr(true), Save: ptr(false), Mode: "none"})
	list, err := eng.Candidates(ctx, cairn.CandidatesRequest{Status: "all"})
	if err != nil {
		t.Fatal(err)
	}
	quoted := map[string]bool{}
	for _, c := range list.Candidates {
		quoted[c.SourceThoughtID] = true
	}
	if quoted[ids[1]] {
		t.Fatalf("the second thought has a candidate of its own; the test needs its items merged into the first's: %+v", list.Candidates)
	}
	for i, want := range []bool{true, true, true, false} {
		if !slices.Contains(sourceIDs(res), ids[i]) {
			t.Fatalf("thought %d is not a source: %v", i, sourceIDs(res))
		}
		th, err := eng.Thought(ctx, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		if got := th.Status == memory.StatusRemoval; got != want {
			t.Errorf("thought %d (%s) marked %v; want %v (notes %v)", i, ids[i], got, want, res.Diagnostics.Notes)
		}
	}
	if res.MarkedForRemoval != 3 {
		t.Errorf("marked_for_removal %d; want 3", res.MarkedForRemoval)
	}
}
