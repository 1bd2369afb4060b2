package cairn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// The tests below follow the Tests and Acceptance sections of the
// inner_voice.retrieve seed, one or more per bullet. They use the hash
// embedder, under which texts are similar exactly when they share words.

func voiceOn() *retrieve.InnerVoiceConfig {
	c := retrieve.DefaultInnerVoiceConfig()
	c.Enabled = true
	return &c
}

func openVoice(t *testing.T, opts *cairn.Options) *cairn.Engine {
	t.Helper()
	if opts == nil {
		opts = &cairn.Options{}
	}
	if opts.Embedder == nil {
		opts.Embedder = embed.Hash{Dim: 256}
	}
	if opts.InnerVoice == nil {
		opts.InnerVoice = voiceOn()
	}
	return openAt(t, filepath.Join(t.TempDir(), "cairn.db"), opts)
}

func think(t *testing.T, eng *cairn.Engine, req cairn.ThinkRequest) memory.Thought {
	t.Helper()
	th, err := eng.Think(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func entity(t *testing.T, eng *cairn.Engine, name, typ string) memory.KGEntity {
	t.Helper()
	ent, err := eng.CreateEntity(ctx, cairn.EntityRequest{Name: name, Type: typ})
	if err != nil {
		t.Fatal(err)
	}
	return ent
}

func observe(t *testing.T, eng *cairn.Engine, entityID, text string) memory.KGObservation {
	t.Helper()
	o, err := eng.Observe(ctx, cairn.ObserveRequest{EntityID: entityID, Content: text})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func voice(t *testing.T, eng *cairn.Engine, req retrieve.InnerVoiceRequest) retrieve.InnerVoiceResult {
	t.Helper()
	res, err := eng.InnerVoice(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func bySource(res retrieve.InnerVoiceResult) map[string]int {
	m := map[string]int{}
	for _, s := range res.Snippets {
		m[s.SourceType]++
	}
	return m
}

// seedBoth writes n thoughts and n knowledge-graph observations that all
// mention the federation.
func seedBoth(t *testing.T, eng *cairn.Engine, thoughts, facts int) {
	t.Helper()
	for i := range thoughts {
		think(t, eng, cairn.ThinkRequest{Content: fmt.Sprintf("federation coordination note %d", i), Origin: memory.OriginHuman})
	}
	if facts == 0 {
		return
	}
	ent := entity(t, eng, "gateway", "service")
	for i := range facts {
		observe(t, eng, ent.ID, fmt.Sprintf("federation coordination fact %d", i))
	}
}

func TestInnerVoiceIsOffByDefault(t *testing.T) {
	eng := openAt(t, filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{Embedder: embed.Hash{Dim: 64}})
	think(t, eng, cairn.ThinkRequest{Content: "the federation failed"})
	_, err := eng.InnerVoice(ctx, retrieve.InnerVoiceRequest{Query: "federation"})
	if memory.CodeOf(err) != memory.CodeFeatureDisabled || !strings.Contains(err.Error(), "SURR_ENABLE_INNER_VOICE") {
		t.Fatalf("want feature_disabled naming the gate, got %v", err)
	}
	s, err := cairn.SettingsFromEnv(env())
	if err != nil || s.InnerVoice.Enabled {
		t.Fatalf("default settings enable the inner voice: %+v %v", s.InnerVoice, err)
	}
	for _, v := range []string{"0", "true", "yes", " 2"} {
		s, _ := cairn.SettingsFromEnv(env("SURR_ENABLE_INNER_VOICE", v))
		if s.InnerVoice.Enabled {
			t.Errorf("SURR_ENABLE_INNER_VOICE=%q enables it; only 1 should", v)
		}
	}
	s, _ = cairn.SettingsFromEnv(env("SURR_ENABLE_INNER_VOICE", "1"))
	if !s.InnerVoice.Enabled {
		t.Error("SURR_ENABLE_INNER_VOICE=1 does not enable it")
	}
}

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestInnerVoiceMixAllocation(t *testing.T) {
	eng := openVoice(t, nil)
	seedBoth(t, eng, 10, 10)
	res := voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation coordination", TopK: ptr(10), Mix: ptr(0.6)})
	got := bySource(res)
	if got["thought"] != 4 || got["kg_observation"]+got["kg_entity"] != 6 {
		t.Fatalf("mix 0.6, top_k 10: want 6 KG / 4 thoughts, got %v", got)
	}
	d := res.Diagnostics
	if d.KGSlots != 6 || d.ThoughtSlots != 4 || d.KReq != 10 || d.KRet != 10 {
		t.Fatalf("diagnostics %+v", d)
	}
	for i := 1; i < len(res.Snippets); i++ {
		if res.Snippets[i].Score > res.Snippets[i-1].Score {
			t.Fatalf("not re-ranked by score: %v then %v", res.Snippets[i-1].Score, res.Snippets[i].Score)
		}
	}
	// The extremes: thoughts only, KG only.
	if got := bySource(voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation coordination", Mix: ptr(0.0)})); got["thought"] != 10 || len(got) != 1 {
		t.Errorf("mix 0: want thoughts only, got %v", got)
	}
	if got := bySource(voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation coordination", Mix: ptr(1.0)})); got["thought"] != 0 {
		t.Errorf("mix 1: want KG only, got %v", got)
	}
	// At least one per source when both have hits and 0 < mix < 1.
	got = bySource(voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation coordination", TopK: ptr(10), Mix: ptr(0.97)}))
	if got["thought"] != 1 {
		t.Errorf("mix 0.97: want the one guaranteed thought, got %v", got)
	}
	got = bySource(voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation coordination", TopK: ptr(10), Mix: ptr(0.02)}))
	if got["thought"] != 9 {
		t.Errorf("mix 0.02: want 9 thoughts and the one guaranteed KG snippet, got %v", got)
	}
}

func TestInnerVoiceBackfillsAnUnderflowingSource(t *testing.T) {
	eng := openVoice(t, nil)
	seedBoth(t, eng, 10, 2)
	res := voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation coordination", TopK: ptr(10), Mix: ptr(0.6)})
	got := bySource(res)
	// Two observations and the entity "gateway (service)", which does not
	// match: the KG has 2 hits for 6 slots, so thoughts fill the rest.
	if got["kg_observation"] != 2 || got["thought"] != 8 || res.Diagnostics.KRet != 10 {
		t.Fatalf("want 2 KG + 8 thoughts backfilled, got %v (%+v)", got, res.Diagnostics)
	}
	// And the other way round.
	eng = openVoice(t, nil)
	seedBoth(t, eng, 1, 12)
	got = bySource(voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation coordination", TopK: ptr(10), Mix: ptr(0.2)}))
	if got["thought"] != 1 || got["kg_observation"] != 9 {
		t.Fatalf("want 1 thought + 9 KG backfilled, got %v", got)
	}
}

func TestInnerVoicePrivacyAndTags(t *testing.T) {
	eng := openVoice(t, nil)
	think(t, eng, cairn.ThinkRequest{Content: "federation secret plan", IsPrivate: true, Tags: []string{"plans"}})
	think(t, eng, cairn.ThinkRequest{Content: "federation public plan", Tags: []string{"plans", "ops"}})
	think(t, eng, cairn.ThinkRequest{Content: "federation draft plan", Tags: []string{"draft"}})
	texts := func(res retrieve.InnerVoiceResult) []string {
		var out []string
		for _, s := range res.Snippets {
			out = append(out, s.Text)
		}
		slices.Sort(out)
		return out
	}
	res := voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation plan"})
	if got := texts(res); !slices.Equal(got, []string{"federation draft plan", "federation public plan"}) || res.Diagnostics.PrivateExcluded != 1 {
		t.Fatalf("private thought not excluded by default: %v %+v", got, res.Diagnostics)
	}
	res = voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation plan", IncludePrivate: true})
	if got := texts(res); len(got) != 3 {
		t.Fatalf("include_private: want all three, got %v", got)
	}
	res = voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation plan", IncludePrivate: true, IncludeTags: []string{"plans"}})
	if got := texts(res); !slices.Equal(got, []string{"federation public plan", "federation secret plan"}) {
		t.Fatalf("include_tags plans: %v", got)
	}
	res = voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation plan", IncludePrivate: true, ExcludeTags: []string{"ops", "draft"}})
	if got := texts(res); !slices.Equal(got, []string{"federation secret plan"}) {
		t.Fatalf("exclude_tags ops, draft: %v", got)
	}
	// Exclusion wins over inclusion.
	res = voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation plan", IncludeTags: []string{"plans"}, ExcludeTags: []string{"ops"}})
	if got := texts(res); len(got) != 0 || !res.Diagnostics.NoResults {
		t.Fatalf("include plans but exclude ops (private left out): %v", got)
	}
	// A tag nothing carries is reported, and matches nothing.
	res = voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation plan", IncludeTags: []string{"nosuchtag"}})
	if len(res.Snippets) != 0 || !slices.Equal(res.Diagnostics.UnknownTags, []string{"nosuchtag"}) {
		t.Fatalf("unknown tag: %+v", res.Diagnostics)
	}
	// A malformed tag is an error.
	if _, err := eng.InnerVoice(ctx, retrieve.InnerVoiceRequest{Query: "federation", ExcludeTags: []string{"bad\x00tag"}}); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Fatalf("control character in a tag: %v", err)
	}
}

func TestInnerVoiceDedupesAcrossTables(t *testing.T) {
	eng := openVoice(t, nil)
	th := think(t, eng, cairn.ThinkRequest{Content: "The Federation  retries every  failed handoff."})
	think(t, eng, cairn.ThinkRequest{Content: "the federation retries every failed handoff.\u200b"})
	ent := entity(t, eng, "handoff", "process")
	o := observe(t, eng, ent.ID, "federation retries every failed handoff")
	res := voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation retries failed handoff", Mix: ptr(0.5)})
	hashes := map[string]int{}
	for _, s := range res.Snippets {
		hashes[s.ContentHash]++
	}
	for h, n := range hashes {
		if n > 1 {
			t.Fatalf("content hash %s returned %d times: %+v", h, n, res.Snippets)
		}
	}
	// The two thoughts differ only in case, spacing and a zero-width
	// space: one of them is dropped.
	if res.Diagnostics.Deduped < 1 {
		t.Fatalf("nothing deduped: %+v", res.Diagnostics)
	}
	var sawThought bool
	for _, s := range res.Snippets {
		sawThought = sawThought || s.SourceType == "thought"
		if s.ID == o.ID && s.Table != "kg_observations" {
			t.Fatalf("observation in table %q", s.Table)
		}
	}
	if !sawThought {
		t.Fatalf("the thought was dropped instead of its duplicate: %+v", res.Snippets)
	}
	_ = th
}

// A thought and a fact stating the same thing, as an agent records them
// with think and kg_observe, come back once: as the fact, the curated
// (green) copy, whose content hash is its statement's, not its
// entity-prefixed text's.
func TestInnerVoiceDedupesThoughtAndFact(t *testing.T) {
	for _, tc := range []struct{ thought, fact string }{
		{"billing-service uses PostgreSQL 15", "billing-service uses PostgreSQL 15"},
		{"billing-service uses PostgreSQL 15.", "Billing-service  uses PostgreSQL 15."},
		// The fact leaves the subject to its entity.
		{"billing-service uses PostgreSQL 15", "uses PostgreSQL 15"},
	} {
		eng := openVoice(t, nil)
		th := think(t, eng, cairn.ThinkRequest{Content: tc.thought, Origin: memory.OriginModel})
		ent := entity(t, eng, "billing-service", "service")
		fact := observe(t, eng, ent.ID, tc.fact)
		other := think(t, eng, cairn.ThinkRequest{Content: "billing-service retries failed card payments twice"})
		res := voice(t, eng, retrieve.InnerVoiceRequest{Query: "which PostgreSQL version does billing-service use", Mix: ptr(0.5), Floor: ptr(0.01)})
		var ids []string
		for _, s := range res.Snippets {
			ids = append(ids, s.ID)
		}
		if slices.Contains(ids, th.ID) || !slices.Contains(ids, fact.ID) || !slices.Contains(ids, other.ID) || res.Diagnostics.Deduped != 1 {
			t.Errorf("thought %q, fact %q: want the fact %s and the other thought, one deduped; got %v, deduped %d",
				tc.thought, tc.fact, fact.ID, ids, res.Diagnostics.Deduped)
		}
	}
}

func TestInnerVoiceCapsTextOnSentences(t *testing.T) {
	eng := openVoice(t, nil)
	var b strings.Builder
	for i := 0; b.Len() < 3000; i++ {
		fmt.Fprintf(&b, "Federation sentence number %d describes one more failure in some detail. ", i)
	}
	long := b.String()
	think(t, eng, cairn.ThinkRequest{Content: long})
	think(t, eng, cairn.ThinkRequest{Content: "federation " + strings.Repeat("x", 2000)})
	think(t, eng, cairn.ThinkRequest{Content: "Federation is short."})
	res := voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation failure detail", Floor: ptr(0.01)})
	if len(res.Snippets) != 3 {
		t.Fatalf("want 3 snippets, got %d", len(res.Snippets))
	}
	for _, s := range res.Snippets {
		if n := utf8.RuneCountInString(s.Text); n > 800 {
			t.Fatalf("snippet of %d chars", n)
		}
		switch {
		case strings.HasPrefix(s.Text, "Federation sentence"):
			if !strings.HasSuffix(s.Text, "detail.") || len(s.Text) < 600 {
				t.Fatalf("not cut on the last sentence boundary before 800: %d chars, ends %q", len(s.Text), s.Text[len(s.Text)-20:])
			}
			if s.SpanStart != 0 || s.SpanEnd != len(s.Text) || long[s.SpanStart:s.SpanEnd] != s.Text {
				t.Fatalf("span %d..%d does not locate the snippet", s.SpanStart, s.SpanEnd)
			}
		case strings.HasPrefix(s.Text, "federation x"):
			if utf8.RuneCountInString(s.Text) != 800 {
				t.Fatalf("no boundary: want a hard cut at 800, got %d", utf8.RuneCountInString(s.Text))
			}
		default:
			if s.Text != "Federation is short." || s.SpanEnd != len(s.Text) {
				t.Fatalf("short text changed: %+v", s)
			}
		}
	}
}

func TestInnerVoiceEmptyResults(t *testing.T) {
	eng := openVoice(t, nil)
	res := voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation"})
	if len(res.Snippets) != 0 || !res.Diagnostics.NoResults || res.Diagnostics.Reason != "no_candidates" {
		t.Fatalf("empty database: %+v", res)
	}
	seedBoth(t, eng, 3, 3)
	res = voice(t, eng, retrieve.InnerVoiceRequest{Query: "unrelated words entirely"})
	if len(res.Snippets) != 0 || !res.Diagnostics.NoResults || res.Diagnostics.Reason != "floor_excluded_all" {
		t.Fatalf("nothing similar: %+v", res)
	}
	if res.Diagnostics.FloorUsed > 0.15+1e-9 || res.Diagnostics.ThoughtCandidates == 0 {
		t.Fatalf("the floor was not lowered to min_floor before giving up: %+v", res.Diagnostics)
	}
	b, _ := json.Marshal(res)
	if !bytes.Contains(b, []byte(`"snippets":[]`)) || !bytes.Contains(b, []byte(`"no_results":true`)) {
		t.Fatalf("empty result JSON: %s", b)
	}
}

func TestInnerVoiceAdaptiveFloor(t *testing.T) {
	eng := openVoice(t, nil)
	// Thoughts match the query well, the KG weakly: a high floor keeps
	// the thoughts and is lowered until the KG has a hit too.
	think(t, eng, cairn.ThinkRequest{Content: "federation coordination failures"})
	ent := entity(t, eng, "ledger", "service")
	observe(t, eng, ent.ID, "coordination of many unrelated small things across teams")
	res := voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation coordination failures", Floor: ptr(0.9)})
	got := bySource(res)
	d := res.Diagnostics
	if got["thought"] != 1 || got["kg_observation"] != 1 {
		t.Fatalf("want a hit from each source, got %v (%+v)", got, d)
	}
	if !(d.FloorUsed < 0.9 && d.FloorUsed >= 0.15) || d.FloorRequested != 0.9 {
		t.Fatalf("floor not adapted: %+v", d)
	}
	for _, s := range res.Snippets {
		if s.Score < d.FloorUsed {
			t.Fatalf("snippet below floor_used: %+v", s)
		}
	}
}

// failing is an embedder that is down.
type failing struct{ embed.Hash }

func (failing) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("connection refused (secret-host:1234)")
}

func TestInnerVoiceEmbedderFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	eng := openAt(t, path, &cairn.Options{Embedder: embed.Hash{Dim: 64}, InnerVoice: voiceOn()})
	seedBoth(t, eng, 2, 2)
	eng.Close()
	down := openAt(t, path, &cairn.Options{Embedder: failing{embed.Hash{Dim: 64}}, InnerVoice: voiceOn()})
	_, err := down.InnerVoice(ctx, retrieve.InnerVoiceRequest{Query: "federation"})
	if memory.CodeOf(err) != memory.CodeEmbedderUnavailable {
		t.Fatalf("want embedder_unavailable, got %v", err)
	}
	if strings.Contains(memory.Public(err).Message, "secret-host") {
		t.Fatalf("error leaks the upstream detail: %v", memory.Public(err).Message)
	}
	// No fallback: the same failure every time, never a result.
	for range 3 {
		if res, err := down.InnerVoice(ctx, retrieve.InnerVoiceRequest{Query: "federation"}); err == nil {
			t.Fatalf("a result without the embedder: %+v", res)
		}
	}
}

func TestInnerVoiceDimensionSafety(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	old := openAt(t, path, &cairn.Options{Embedder: embed.Hash{Dim: 64}, InnerVoice: voiceOn()})
	seedBoth(t, old, 4, 4)
	old.Close()
	// A new embedder of another dimension: the 64-d rows are never
	// compared with 96-d queries; they are excluded and counted.
	eng := openAt(t, path, &cairn.Options{Embedder: embed.Hash{Dim: 96}, InnerVoice: voiceOn()})
	think(t, eng, cairn.ThinkRequest{Content: "federation coordination in the new space"})
	res := voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation coordination"})
	if len(res.Snippets) != 1 || res.Snippets[0].Text != "federation coordination in the new space" {
		t.Fatalf("want only the record of the active space, got %+v", res.Snippets)
	}
	d := res.Diagnostics
	if d.Dim != 96 || d.Provider != "hash" || d.DimExcluded != 4+1+4 {
		t.Fatalf("diagnostics: want dim 96 and 9 rows excluded (4 thoughts, 1 entity, 4 observations), got %+v", d)
	}
	// Re-embedding brings them into the active space.
	if _, err := eng.Reembed(ctx, cairn.ReembedRequest{}, nil); err != nil {
		t.Fatal(err)
	}
	res = voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation coordination", TopK: ptr(20)})
	if len(res.Snippets) != 9 || res.Diagnostics.DimExcluded != 0 {
		t.Fatalf("after reembed: %d snippets, %+v", len(res.Snippets), res.Diagnostics)
	}
}

func TestInnerVoiceOutputSchemaIsExact(t *testing.T) {
	eng := openVoice(t, nil)
	think(t, eng, cairn.ThinkRequest{Content: "federation handoff by a person", Origin: memory.OriginHuman})
	think(t, eng, cairn.ThinkRequest{Content: "federation handoff by a tool", Origin: memory.OriginTool})
	think(t, eng, cairn.ThinkRequest{Content: "federation handoff by a model", Origin: memory.OriginModel})
	think(t, eng, cairn.ThinkRequest{Content: "federation handoff as logged", Origin: memory.OriginLogged})
	ent := entity(t, eng, "federation handoff", "process")
	observe(t, eng, ent.ID, "handoff runs nightly")
	res := voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation handoff", Mix: ptr(0.5), Floor: ptr(0.2)})
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Snippets    []map[string]any `json:"snippets"`
		Diagnostics map[string]any   `json:"diagnostics"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	want := []string{"content_hash", "created_at", "id", "origin", "score", "source_type", "span_end", "span_start", "table", "text", "trust_tier"}
	tiers := map[string]string{}
	for _, s := range raw.Snippets {
		if keys := slices.Sorted(maps.Keys(s)); !slices.Equal(keys, want) {
			t.Fatalf("snippet keys %v, want %v", keys, want)
		}
		tiers[s["source_type"].(string)+"/"+s["origin"].(string)] = s["trust_tier"].(string)
		if _, err := time.Parse(time.RFC3339, s["created_at"].(string)); err != nil {
			t.Fatalf("created_at: %v", err)
		}
		if h := s["content_hash"].(string); len(h) != 64 {
			t.Fatalf("content_hash %q is not a blake3 hex digest", h)
		}
	}
	wantTiers := map[string]string{"thought/human": "green", "thought/logged": "green", "thought/tool": "amber", "thought/model": "red"}
	for k, v := range wantTiers {
		if tiers[k] != v {
			t.Errorf("%s: tier %q, want %q (all: %v)", k, tiers[k], v, tiers)
		}
	}
	for k, v := range tiers {
		if strings.HasPrefix(k, "kg_") && v != "green" {
			t.Errorf("%s: KG tier %q, want green", k, v)
		}
	}
	for _, k := range []string{"provider", "model", "dim", "k_req", "k_ret", "kg_candidates", "thought_candidates", "floor_used", "latency_ms"} {
		if _, ok := raw.Diagnostics[k]; !ok {
			t.Errorf("diagnostics lack %q: %v", k, raw.Diagnostics)
		}
	}
	if _, ok := raw.Diagnostics["no_results"]; ok {
		t.Errorf("no_results set on a non-empty result")
	}
}

func TestInnerVoiceBounds(t *testing.T) {
	eng := openVoice(t, nil)
	seedBoth(t, eng, 60, 0)
	for _, q := range []string{"", "   \n\t "} {
		if _, err := eng.InnerVoice(ctx, retrieve.InnerVoiceRequest{Query: q}); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("query %q: %v", q, err)
		}
	}
	res := voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation", TopK: ptr(500)})
	if res.Diagnostics.KReq != 50 || len(res.Snippets) != 50 || len(res.Diagnostics.Clamped) != 1 {
		t.Fatalf("top_k 500: want clamped to 50, got k_req %d, %d snippets, clamped %v", res.Diagnostics.KReq, len(res.Snippets), res.Diagnostics.Clamped)
	}
	res = voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation", TopK: ptr(0)})
	if res.Diagnostics.KReq != 1 || len(res.Snippets) != 1 {
		t.Fatalf("top_k 0: want 1, got %+v", res.Diagnostics)
	}
	res = voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation", Mix: ptr(-2.0), Floor: ptr(7.0)})
	if res.Diagnostics.Mix != 0 || res.Diagnostics.FloorRequested != 1 || len(res.Diagnostics.Clamped) != 2 {
		t.Fatalf("mix -2, floor 7: %+v", res.Diagnostics)
	}
	if _, err := eng.InnerVoice(ctx, retrieve.InnerVoiceRequest{Query: "federation", Mix: ptr(math.NaN())}); memory.CodeOf(err) != memory.CodeInvalidParams {
		t.Errorf("mix NaN: %v", err)
	}
	// The candidate cap: min(3 × top_k, MAX_CANDIDATES_PER_SOURCE).
	res = voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation", TopK: ptr(5)})
	if res.Diagnostics.ThoughtCandidates != 15 || res.Diagnostics.CandidatesPerSrc != 15 {
		t.Fatalf("top_k 5: want 15 candidates, got %+v", res.Diagnostics)
	}
	c := voiceOn()
	c.MaxCandidatesPerSource = 20
	capped := openVoice(t, &cairn.Options{InnerVoice: c})
	seedBoth(t, capped, 60, 0)
	res = voice(t, capped, retrieve.InnerVoiceRequest{Query: "federation", TopK: ptr(10)})
	if res.Diagnostics.ThoughtCandidates != 20 {
		t.Fatalf("cap 20: %+v", res.Diagnostics)
	}
}

func TestInnerVoiceConfigValidation(t *testing.T) {
	cases := []struct {
		env  []string
		want func(retrieve.InnerVoiceConfig) bool
	}{
		{[]string{"SURR_INNER_VOICE_MIX", "1.7"}, func(c retrieve.InnerVoiceConfig) bool { return c.Mix == 1 }},
		{[]string{"SURR_INNER_VOICE_MIX", "-0.5"}, func(c retrieve.InnerVoiceConfig) bool { return c.Mix == 0 }},
		{[]string{"SURR_INNER_VOICE_TOPK_DEFAULT", "0"}, func(c retrieve.InnerVoiceConfig) bool { return c.TopKDefault == 1 }},
		{[]string{"SURR_INNER_VOICE_TOPK_DEFAULT", "99"}, func(c retrieve.InnerVoiceConfig) bool { return c.TopKDefault == 50 }},
		{[]string{"SURR_INNER_VOICE_MIN_FLOOR", "0"}, func(c retrieve.InnerVoiceConfig) bool { return c.MinFloor == 0.15 }},
		{[]string{"SURR_INNER_VOICE_MIN_FLOOR", "1.5"}, func(c retrieve.InnerVoiceConfig) bool { return c.MinFloor == 0.15 }},
		{[]string{"SURR_INNER_VOICE_MIN_FLOOR", "abc"}, func(c retrieve.InnerVoiceConfig) bool { return c.MinFloor == 0.15 }},
		{[]string{"SURR_INNER_VOICE_TOPK_DEFAULT", "40", "SURR_INNER_VOICE_MAX_CANDIDATES_PER_SOURCE", "10"},
			func(c retrieve.InnerVoiceConfig) bool { return c.MaxCandidatesPerSource == 150 }},
		{[]string{"SURR_INNER_VOICE_TOPK_DEFAULT", "50", "SURR_INNER_VOICE_MAX_CANDIDATES_PER_SOURCE", "30"},
			func(c retrieve.InnerVoiceConfig) bool { return c.MaxCandidatesPerSource == 150 }},
	}
	for _, tc := range cases {
		s, err := cairn.SettingsFromEnv(env(tc.env...))
		if err != nil {
			t.Fatalf("%v: %v", tc.env, err)
		}
		if !tc.want(s.InnerVoice) || len(s.Warnings) == 0 {
			t.Errorf("%v: got %+v, warnings %v", tc.env, s.InnerVoice, s.Warnings)
		}
	}
	s, err := cairn.SettingsFromEnv(env("SURR_INNER_VOICE_MIX", "0.3", "SURR_INNER_VOICE_TOPK_DEFAULT", "7",
		"SURR_INNER_VOICE_MIN_FLOOR", "0.1", "SURR_INNER_VOICE_MAX_CANDIDATES_PER_SOURCE", "40"))
	if err != nil || len(s.Warnings) != 0 {
		t.Fatalf("valid settings warned: %v %v", s.Warnings, err)
	}
	if c := s.InnerVoice; c.Mix != 0.3 || c.TopKDefault != 7 || c.MinFloor != 0.1 || c.MaxCandidatesPerSource != 40 {
		t.Fatalf("valid settings not taken: %+v", c)
	}
}

func TestInnerVoiceLogsNoContent(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	eng := openVoice(t, &cairn.Options{Logger: logger})
	think(t, eng, cairn.ThinkRequest{Content: "federation topsecretword"})
	buf.Reset()
	voice(t, eng, retrieve.InnerVoiceRequest{Query: "federation querysecretword"})
	out := buf.String()
	if !strings.Contains(out, `"k_req"`) || !strings.Contains(out, `"latency_ms"`) {
		t.Fatalf("no metrics logged: %s", out)
	}
	if strings.Contains(out, "topsecretword") || strings.Contains(out, "querysecretword") {
		t.Fatalf("content in the logs: %s", out)
	}
	buf.Reset()
	quiet := openVoice(t, &cairn.Options{Logger: logger, NoLog: true})
	think(t, quiet, cairn.ThinkRequest{Content: "federation topsecretword"})
	buf.Reset()
	voice(t, quiet, retrieve.InnerVoiceRequest{Query: "federation"})
	if buf.Len() != 0 {
		t.Fatalf("MCP_NO_LOG: logged %s", buf.String())
	}
	if calls, _ := quiet.InnerVoiceCounters(); calls != 1 {
		t.Fatalf("counters: %d calls", calls)
	}
}
